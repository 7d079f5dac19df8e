//! Shared helpers for the compaction tests: W1-shaped keys and values, small options, and
//! directory listings.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::Path;

use bloomkv::Options;

/// A bijective 64-bit mix (splitmix64's finalizer), so distinct `i` give distinct keys in a
/// scattered order.
pub fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
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

/// Small options so that a few hundred thousand keys spread over several levels.
pub fn small_options() -> Options {
    Options {
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

/// The real file system without fsyncs: these tests check logic, not power-cut durability
/// (the crash tests kill processes, which fsync does not matter for), and an fsync per
/// flush and manifest edit would make them slow on a busy disk.
#[derive(Debug)]
pub struct NoSyncEnv(bloomkv::env::StdEnv);

struct NoSyncFile(Box<dyn bloomkv::env::WritableFile>);

impl bloomkv::env::WritableFile for NoSyncFile {
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
    pub fn shared() -> std::sync::Arc<dyn bloomkv::env::Env> {
        std::sync::Arc::new(NoSyncEnv(bloomkv::env::StdEnv))
    }
}

impl bloomkv::env::Env for NoSyncEnv {
    fn create_writable(&self, path: &Path) -> bloomkv::Result<Box<dyn bloomkv::env::WritableFile>> {
        Ok(Box::new(NoSyncFile(self.0.create_writable(path)?)))
    }
    fn open_appendable(&self, path: &Path) -> bloomkv::Result<Box<dyn bloomkv::env::WritableFile>> {
        Ok(Box::new(NoSyncFile(self.0.open_appendable(path)?)))
    }
    fn open_random_access(
        &self,
        path: &Path,
    ) -> bloomkv::Result<std::sync::Arc<dyn bloomkv::env::RandomAccessFile>> {
        self.0.open_random_access(path)
    }
    fn read_all(&self, path: &Path) -> bloomkv::Result<Vec<u8>> {
        self.0.read_all(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> bloomkv::Result<()> {
        self.0.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> bloomkv::Result<()> {
        self.0.remove_file(path)
    }
    fn truncate(&self, path: &Path, len: u64) -> bloomkv::Result<()> {
        self.0.truncate(path, len)
    }
    fn create_dir_all(&self, path: &Path) -> bloomkv::Result<()> {
        self.0.create_dir_all(path)
    }
    fn list_dir(&self, path: &Path) -> bloomkv::Result<Vec<String>> {
        self.0.list_dir(path)
    }
    fn sync_dir(&self, _path: &Path) -> bloomkv::Result<()> {
        Ok(())
    }
    fn file_size(&self, path: &Path) -> bloomkv::Result<u64> {
        self.0.file_size(path)
    }
    fn exists(&self, path: &Path) -> bool {
        self.0.exists(path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        self.0.is_dir(path)
    }
    fn lock_file(&self, path: &Path) -> bloomkv::Result<bloomkv::env::FileLock> {
        self.0.lock_file(path)
    }
}
