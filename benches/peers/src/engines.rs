//! The engines under test behind one trait: bloomkv, fjall and (with `--features rocksdb`)
//! RocksDB, each configured with its defaults except for the block cache size and, where
//! asked, the filters' bits per key.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// How long `settle` waits for a peer's background work before giving up on it.
const SETTLE_LIMIT: Duration = Duration::from_secs(1800);

/// What the workloads need from an engine.
pub trait Engine {
    fn name(&self) -> &'static str;
    /// The engine's directory (for its size on disk and page-cache eviction).
    fn dir(&self) -> &Path;
    fn put(&mut self, k: &[u8], v: &[u8]) -> Res<()>;
    fn get(&mut self, k: &[u8]) -> Res<Option<Vec<u8>>>;
    /// Reads up to `n` keys from `start` on; returns how many.
    fn scan(&mut self, start: &[u8], n: u64) -> Res<u64>;
    /// Flush and wait for background work.
    fn settle(&mut self) -> Res<()>;
    /// Close the database (its files are complete and synced when this returns).
    fn close(&mut self);
    /// Open it again after `close`.
    fn open(&mut self) -> Res<()>;
    /// Where the engine's written bytes went (per level, for write amplification), as the
    /// engine reports it; `None` where it has no such report.
    fn write_breakdown(&self) -> Option<String> {
        None
    }
    /// Close and open again.
    fn reopen(&mut self) -> Res<()> {
        self.close();
        self.open()
    }
}

pub struct Bloomkv {
    dir: PathBuf,
    opts: bloomkv::Options,
    db: Option<bloomkv::Db>,
}

impl Bloomkv {
    pub fn new(dir: PathBuf, opts: bloomkv::Options) -> Res<Self> {
        let db = Some(bloomkv::Db::open(&dir, opts.clone())?);
        Ok(Bloomkv { dir, opts, db })
    }
    fn db(&self) -> Res<&bloomkv::Db> {
        self.db.as_ref().ok_or_else(|| "closed".into())
    }
}

impl Engine for Bloomkv {
    fn name(&self) -> &'static str {
        "bloomkv"
    }
    fn dir(&self) -> &Path {
        &self.dir
    }
    fn put(&mut self, k: &[u8], v: &[u8]) -> Res<()> {
        Ok(self.db()?.put(k, v)?)
    }
    fn get(&mut self, k: &[u8]) -> Res<Option<Vec<u8>>> {
        Ok(self.db()?.get(k)?)
    }
    fn scan(&mut self, start: &[u8], n: u64) -> Res<u64> {
        let mut c = 0;
        for kv in self.db()?.scan(start..).take(n as usize) {
            kv?;
            c += 1;
        }
        Ok(c)
    }
    fn settle(&mut self) -> Res<()> {
        let db = self.db()?;
        db.flush()?;
        Ok(db.wait_for_compactions()?)
    }
    fn write_breakdown(&self) -> Option<String> {
        let s = self.db.as_ref()?.stats();
        let mib = |b: u64| b as f64 / 1048576.0;
        let mut out = format!(
            "user {:.0} MiB; WAL {:.0} MiB; flush {:.0} MiB; re-filter {:.0} MiB; \
             trivial moves {} ({:.0} MiB)\n",
            mib(s.user_bytes_written),
            mib(s.wal_bytes_written),
            mib(s.flush_bytes_written),
            mib(s.refilter_bytes_written),
            s.trivial_moves,
            mib(s.trivial_move_bytes),
        );
        for (l, ls) in s.levels.iter().enumerate() {
            if ls.compactions > 0 || ls.files > 0 {
                out += &format!(
                    "  L{l}: {} tables {:.0} MiB; {} compactions into it read {:.0} MiB, wrote {:.0} MiB\n",
                    ls.files,
                    mib(ls.bytes),
                    ls.compactions,
                    mib(ls.compaction_bytes_read),
                    mib(ls.compaction_bytes_written),
                );
            }
        }
        Some(out)
    }
    fn close(&mut self) {
        self.db = None;
    }
    fn open(&mut self) -> Res<()> {
        self.db = Some(bloomkv::Db::open(&self.dir, self.opts.clone())?);
        Ok(())
    }
}

pub struct Fjall {
    dir: PathBuf,
    cache: u64,
    /// Bloom bits per key on every level; `None`: fjall's default (0.01% FPR on L0, 10
    /// bits/key below).
    bits: Option<f32>,
    db: Option<(fjall::Database, fjall::Keyspace)>,
}

impl Fjall {
    pub fn new(dir: PathBuf, cache: u64, bits: Option<f32>) -> Res<Self> {
        let db = Some(Self::open_at(&dir, cache, bits)?);
        Ok(Fjall {
            dir,
            cache,
            bits,
            db,
        })
    }
    fn open_at(
        dir: &Path,
        cache: u64,
        bits: Option<f32>,
    ) -> Res<(fjall::Database, fjall::Keyspace)> {
        use fjall::config::{BloomConstructionPolicy, FilterPolicy, FilterPolicyEntry};
        let db = fjall::Database::builder(dir).cache_size(cache).open()?;
        let ks = db.keyspace("w1", || {
            let o = fjall::KeyspaceCreateOptions::default();
            match bits {
                Some(b) => o.filter_policy(FilterPolicy::new([FilterPolicyEntry::Bloom(
                    BloomConstructionPolicy::BitsPerKey(b),
                )])),
                None => o,
            }
        })?;
        Ok((db, ks))
    }
    fn ks(&self) -> Res<&fjall::Keyspace> {
        self.db
            .as_ref()
            .map(|d| &d.1)
            .ok_or_else(|| "closed".into())
    }
}

impl Engine for Fjall {
    fn name(&self) -> &'static str {
        "fjall"
    }
    fn dir(&self) -> &Path {
        &self.dir
    }
    fn put(&mut self, k: &[u8], v: &[u8]) -> Res<()> {
        Ok(self.ks()?.insert(k, v)?)
    }
    fn get(&mut self, k: &[u8]) -> Res<Option<Vec<u8>>> {
        Ok(self.ks()?.get(k)?.map(|v| v.to_vec()))
    }
    fn scan(&mut self, start: &[u8], n: u64) -> Res<u64> {
        let mut c = 0;
        for g in self.ks()?.range(start.to_vec()..).take(n as usize) {
            g.into_inner()?;
            c += 1;
        }
        Ok(c)
    }
    fn settle(&mut self) -> Res<()> {
        let (db, ks) = self.db.as_ref().ok_or("closed")?;
        ks.rotate_memtable_and_wait()?;
        // fjall has no "wait until compactions are idle": poll its counters.
        let t = Instant::now();
        while (db.outstanding_flushes() > 0 || db.active_compactions() > 0)
            && t.elapsed() < SETTLE_LIMIT
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }
    fn close(&mut self) {
        if let Some((db, _)) = &self.db {
            // Make the journal durable so eviction drops clean pages only.
            let _ = db.persist(fjall::PersistMode::SyncAll);
        }
        self.db = None;
    }
    fn open(&mut self) -> Res<()> {
        self.db = Some(Self::open_at(&self.dir, self.cache, self.bits)?);
        Ok(())
    }
}

#[cfg(feature = "rocksdb")]
pub struct Rocks {
    dir: PathBuf,
    cache: usize,
    bits: f64,
    /// `allow_mmap_reads`, set when bloomkv runs with `mmap_reads` too.
    mmap: bool,
    db: Option<rocksdb::DB>,
}

#[cfg(feature = "rocksdb")]
impl Rocks {
    pub fn new(dir: PathBuf, cache: usize, bits: f64, mmap: bool) -> Res<Self> {
        let db = Some(Self::open_at(&dir, cache, bits, mmap)?);
        Ok(Rocks {
            dir,
            cache,
            bits,
            mmap,
            db,
        })
    }
    fn open_at(dir: &Path, cache: usize, bits: f64, mmap: bool) -> Res<rocksdb::DB> {
        let mut o = rocksdb::Options::default();
        o.create_if_missing(true);
        o.set_allow_mmap_reads(mmap);
        let mut t = rocksdb::BlockBasedOptions::default();
        t.set_block_cache(&rocksdb::Cache::new_lru_cache(cache));
        t.set_bloom_filter(bits, false);
        o.set_block_based_table_factory(&t);
        Ok(rocksdb::DB::open(&o, dir)?)
    }
    fn db(&self) -> Res<&rocksdb::DB> {
        self.db.as_ref().ok_or_else(|| "closed".into())
    }
}

#[cfg(feature = "rocksdb")]
impl Engine for Rocks {
    fn name(&self) -> &'static str {
        "rocksdb"
    }
    fn dir(&self) -> &Path {
        &self.dir
    }
    fn put(&mut self, k: &[u8], v: &[u8]) -> Res<()> {
        Ok(self.db()?.put(k, v)?)
    }
    fn get(&mut self, k: &[u8]) -> Res<Option<Vec<u8>>> {
        Ok(self.db()?.get(k)?)
    }
    fn scan(&mut self, start: &[u8], n: u64) -> Res<u64> {
        let mode = rocksdb::IteratorMode::From(start, rocksdb::Direction::Forward);
        let mut c = 0;
        for kv in self.db()?.iterator(mode).take(n as usize) {
            kv?;
            c += 1;
        }
        Ok(c)
    }
    fn settle(&mut self) -> Res<()> {
        let db = self.db()?;
        db.flush()?;
        // Wait until background flushes and compactions are idle (not a full manual
        // compaction, which would leave RocksDB a one-level tree the others lack).
        let busy = |db: &rocksdb::DB| -> Res<bool> {
            let mut any = false;
            for p in [
                "rocksdb.num-running-compactions",
                "rocksdb.compaction-pending",
                "rocksdb.num-running-flushes",
                "rocksdb.mem-table-flush-pending",
            ] {
                any |= db.property_int_value(p)?.unwrap_or(0) > 0;
            }
            Ok(any)
        };
        let t = Instant::now();
        while busy(db)? && t.elapsed() < SETTLE_LIMIT {
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }
    fn write_breakdown(&self) -> Option<String> {
        let stats = self.db.as_ref()?.property_value("rocksdb.stats").ok()??;
        // The per-level compaction table and the cumulative WAL and flush lines.
        let keep: Vec<&str> = stats
            .lines()
            .filter(|l| {
                let t = l.trim_start();
                // "Level" (the header), "L0".."L6" and "Low" all start with 'L'.
                t.starts_with('L')
                    || t.starts_with("Sum")
                    || t.starts_with("Int")
                    || t.starts_with("Cumulative writes")
                    || t.starts_with("Cumulative WAL")
                    || t.starts_with("Flush(GB)")
                    || t.starts_with("Cumulative compaction")
            })
            .collect();
        Some(keep.join("\n"))
    }
    fn close(&mut self) {
        if let Some(db) = &self.db {
            let _ = db.flush_wal(true);
        }
        self.db = None;
    }
    fn open(&mut self) -> Res<()> {
        self.db = Some(Self::open_at(&self.dir, self.cache, self.bits, self.mmap)?);
        Ok(())
    }
}
