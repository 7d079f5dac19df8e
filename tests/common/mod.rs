//! The integration tests' kit, shared by every test binary (`tests/<layer>/main.rs` includes
//! it): the one seeded random-number generator, the model harness (a database checked
//! against a `BTreeMap`), W1-shaped keys and values, small options, a file system without
//! fsyncs, the fault env's set-up, the gate that holds background jobs, tests re-run in a
//! process of their own, and directory listings.

#![expect(dead_code, reason = "each test crate uses a part of this module")]

pub mod fault;
pub mod gate;
mod process;
mod rng;

use std::collections::{BTreeMap, BTreeSet};
use std::ops::RangeBounds;
use std::path::Path;
use std::sync::Arc;

use bloomkv::env::{Env, EnvWrapper, StdEnv, WritableFile};
use bloomkv::{Compression, Db, Options, Snapshot, WriteBatch};

#[expect(unused_imports, reason = "each test crate uses a part of this module")]
pub use process::{child_test_args, is_alone, run_alone};
pub use rng::{Rng, mix};

/// What a database should hold: key -> value.
pub type Map = BTreeMap<Vec<u8>, Vec<u8>>;

/// The model harness: a database in a temporary directory and a `BTreeMap` of what it should
/// hold, changed together; snapshots are kept with the map as it was when they were taken.
/// Every `check_*` asserts the database agrees with the model.
pub struct Model {
    dir: tempfile::TempDir,
    options: Options,
    /// The database under test (`None` only inside `reopen`).
    db: Option<Db>,
    /// What it should hold.
    pub map: Map,
    snaps: Vec<(Snapshot, Map)>,
}

impl Model {
    /// Opens a fresh database in a new temporary directory.
    pub fn open(options: Options) -> Model {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), options.clone()).unwrap();
        Model {
            dir,
            options,
            db: Some(db),
            map: Map::new(),
            snaps: Vec::new(),
        }
    }

    /// The database under test.
    pub fn db(&self) -> &Db {
        self.db.as_ref().unwrap()
    }

    /// Writes `key = value` to both.
    pub fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.db().put(&key, &value).unwrap();
        self.map.insert(key, value);
    }

    /// Deletes `key` from both.
    pub fn delete(&mut self, key: Vec<u8>) {
        self.db().delete(&key).unwrap();
        self.map.remove(&key);
    }

    /// Applies `ops` (a value to put, `None` to delete) as one atomic batch.
    pub fn write(&mut self, ops: Vec<(Vec<u8>, Option<Vec<u8>>)>) {
        let mut batch = WriteBatch::new();
        for (k, v) in ops {
            match v {
                Some(v) => {
                    batch.put(&k, &v);
                    self.map.insert(k, v);
                }
                None => {
                    batch.delete(&k);
                    self.map.remove(&k);
                }
            }
        }
        self.db().write(batch).unwrap();
    }

    /// `get(key)` agrees with the model.
    pub fn check_get(&self, key: &[u8]) {
        assert_eq!(
            self.db().get(key).unwrap().as_ref(),
            self.map.get(key),
            "key {}",
            String::from_utf8_lossy(key)
        );
    }

    /// A scan of `range` agrees with the model.
    pub fn check_scan(&self, range: impl RangeBounds<Vec<u8>> + bloomkv::KeyRange + Clone) {
        let got: Vec<_> = self
            .db()
            .scan(range.clone())
            .map(|kv| kv.unwrap())
            .collect();
        let want: Vec<_> = self
            .map
            .range(range)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        assert_eq!(got, want);
    }

    /// A full scan, and a `get` of every key in `keys`, agree with the model.
    pub fn check_all(&self, keys: impl IntoIterator<Item = Vec<u8>>) {
        self.check_scan(..);
        for k in keys {
            self.check_get(&k);
        }
    }

    /// Takes a snapshot, unless `max` are already held.
    pub fn snapshot(&mut self, max: usize) {
        if self.snaps.len() < max {
            self.snaps.push((self.db().snapshot(), self.map.clone()));
        }
    }

    /// Every held snapshot scans as the model did when it was taken; then they are released.
    pub fn check_snapshots(&mut self) {
        for (snap, m) in &self.snaps {
            let got: Vec<_> = snap.scan(..).map(|kv| kv.unwrap()).collect();
            let want: Vec<_> = m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            assert_eq!(got, want);
        }
        self.snaps.clear();
    }

    /// Every held snapshot still reads each key it saw with `get`; then they are released.
    pub fn check_snapshot_gets(&mut self) {
        for (snap, m) in &self.snaps {
            for (k, v) in m {
                assert_eq!(snap.get(k).unwrap().as_ref(), Some(v));
            }
        }
        self.snaps.clear();
    }

    /// Closes the database (releasing snapshots) and opens it again with the same options.
    pub fn reopen(&mut self) {
        let options = self.options.clone();
        self.reopen_with(options);
    }

    /// Closes the database and opens it again with `options` (kept for later reopens).
    pub fn reopen_with(&mut self, options: Options) {
        self.options = options;
        self.snaps.clear();
        // The old handle is closed (and its lock released) before the new open.
        self.db = None;
        self.db = Some(Db::open(self.dir.path(), self.options.clone()).unwrap());
    }

    /// The options the database is open with.
    pub fn options(&self) -> &Options {
        &self.options
    }
}

/// W1 shape: a 16-byte key (hex of a scattered number).
pub fn w1_key(i: u64) -> Vec<u8> {
    format!("{:016x}", mix(i)).into_bytes()
}

/// A key of the same shape that no `w1_key(i)` for small `i` produces (odd last digit never
/// collides: the `a` prefix is outside hex digits).
pub fn absent_key(i: u64) -> Vec<u8> {
    format!("{:015x}z", mix(i ^ 0x5555_5555) >> 4).into_bytes()
}

/// W1 shape: a 100-byte value that says which key and which generation wrote it.
pub fn w1_value(i: u64, generation: u32) -> Vec<u8> {
    let mut v = format!("{i:012}-{generation:04}-").into_bytes();
    v.resize(100, b'a' + (i % 26) as u8);
    v
}

/// Small options so that a few hundred thousand keys spread over several levels. Blocks are
/// stored raw: the tests built on these assert tree shapes in stored bytes, and the test
/// values compress well.
pub fn small_options() -> Options {
    Options {
        compression: Compression::None,
        memtable_bytes: 256 << 10,
        target_file_bytes: 256 << 10,
        max_bytes_for_level_base: 1 << 20,
        level_size_multiplier: 4,
        level0_compaction_trigger: 4,
        level0_stop_writes: 12,
        env: NoSyncEnv::shared(),
        ..Default::default()
    }
}

/// File numbers of the `.sst` files in `dir`.
pub fn sst_files(dir: &Path) -> BTreeSet<u64> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".sst").map(|n| n.parse::<u64>().unwrap())
        })
        .collect()
}

/// Everything `db` holds, by a full scan.
pub fn contents(db: &Db) -> Map {
    db.scan(..).map(|kv| kv.unwrap()).collect()
}

/// The table files in the database's directory are exactly the tables its current version
/// holds (no orphan left by a flush or compaction; none missing), once compactions are done.
pub fn check_no_orphans(db: &Db) {
    db.wait_for_compactions().unwrap();
    let live: BTreeSet<u64> = db.stats().tables.iter().map(|t| t.file_number).collect();
    assert_eq!(
        sst_files(db.path()),
        live,
        "table files on disk vs the version"
    );
}

/// Paths of the `.sst` files in `dir`, sorted (oldest table first).
pub fn sst_paths(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sst"))
        .collect();
    v.sort();
    v
}

/// Swaps the contents of files `a` and `b` (by renames).
pub fn swap_files(a: &Path, b: &Path) {
    let tmp = a.with_extension("swap");
    std::fs::rename(a, &tmp).unwrap();
    std::fs::rename(b, a).unwrap();
    std::fs::rename(&tmp, b).unwrap();
}

/// A closed database of two level-0 tables over the same 100 keys: the older says "first",
/// the newer "second" (so a table read in the other's place gives a visibly wrong answer).
pub fn two_versions_in_two_tables() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    for value in [&b"first"[..], b"second"] {
        for i in 0..100u32 {
            db.put(format!("a{i:03}"), value).unwrap();
        }
        db.flush().unwrap();
    }
    drop(db);
    assert_eq!(sst_paths(dir.path()).len(), 2);
    dir
}

/// The real file system without fsyncs: these tests check logic, not power-cut durability
/// (the crash tests kill processes, which fsync does not matter for), and an fsync per
/// flush and manifest edit would make them slow on a busy disk.
#[derive(Debug)]
pub struct NoSyncEnv {
    /// Whether `hard_link` links (else it is unsupported, as in an env without links).
    links: bool,
}

struct NoSyncFile(Box<dyn WritableFile>);

impl WritableFile for NoSyncFile {
    fn append(&mut self, data: &[u8]) -> bloomkv::Result<()> {
        self.0.append(data)
    }
    fn flush(&mut self) -> bloomkv::Result<()> {
        self.0.flush()
    }
    fn sync(&mut self) -> bloomkv::Result<()> {
        self.0.flush()
    }
    fn len(&self) -> u64 {
        self.0.len()
    }
}

impl NoSyncEnv {
    /// A shared handle.
    pub fn shared() -> Arc<dyn Env> {
        Arc::new(NoSyncEnv { links: true })
    }

    /// A shared handle whose `hard_link` is unsupported (`Env`'s default), so callers copy.
    pub fn without_hard_links() -> Arc<dyn Env> {
        Arc::new(NoSyncEnv { links: false })
    }
}

impl EnvWrapper for NoSyncEnv {
    fn target(&self) -> &dyn Env {
        &StdEnv
    }
    fn create_writable(&self, path: &Path) -> bloomkv::Result<Box<dyn WritableFile>> {
        Ok(Box::new(NoSyncFile(StdEnv.create_writable(path)?)))
    }
    fn open_appendable(&self, path: &Path) -> bloomkv::Result<Box<dyn WritableFile>> {
        Ok(Box::new(NoSyncFile(StdEnv.open_appendable(path)?)))
    }
    fn sync_dir(&self, _path: &Path) -> bloomkv::Result<()> {
        Ok(())
    }
    fn hard_link(&self, from: &Path, to: &Path) -> bloomkv::Result<()> {
        if !self.links {
            return Err(bloomkv::Error::Io {
                path: Some(to.to_path_buf()),
                source: std::io::ErrorKind::Unsupported.into(),
            });
        }
        StdEnv.hard_link(from, to)
    }
}

/// Every entry of `dir` with its size and modification time: equal before and after means
/// nothing in it was created, removed, written or truncated.
pub fn dir_state(dir: &Path) -> BTreeMap<String, (u64, std::time::SystemTime)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let meta = e.metadata().unwrap();
            (
                e.file_name().into_string().unwrap(),
                (meta.len(), meta.modified().unwrap()),
            )
        })
        .collect()
}

/// Copies the files of `from` into `to` (created if missing), all but the LOCK: the
/// directory as a process that died now would leave it, also for a database still open in
/// `from`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() && entry.file_name() != "LOCK" {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}
