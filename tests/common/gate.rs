//! An env that holds background jobs at a gate: opening chosen table files for reading
//! blocks until the test releases them. A compaction opens its input tables this way
//! (lookups reuse the readers the table cache opened when the tables were written), so
//! gating a table's number holds any compaction that takes it as an input.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use bloomkv::Result;
use bloomkv::env::{Env, FileLock, RandomAccessFile, WritableFile};
use parking_lot::{Condvar, Mutex};

/// The real file system (without fsyncs), with table numbers held at a gate.
#[derive(Debug, Default)]
pub struct GateEnv {
    held: Mutex<BTreeSet<u64>>,
    /// Tables numbered this or higher are held too (tables not written yet).
    held_from: Mutex<Option<u64>>,
    /// Table numbers a reader is waiting for right now.
    waiting: Mutex<BTreeSet<u64>>,
    changed: Condvar,
}

impl GateEnv {
    pub fn shared() -> Arc<GateEnv> {
        Arc::new(GateEnv::default())
    }

    /// Holds readers of tables `numbers` until [`GateEnv::release_all`].
    pub fn hold(&self, numbers: impl IntoIterator<Item = u64>) {
        self.held.lock().extend(numbers);
    }

    /// Holds readers of every table numbered above `number` (so of tables still to be
    /// written: a flush or compaction opens its output to verify it, and is held there)
    /// until [`GateEnv::release_all`].
    pub fn hold_tables_after(&self, number: u64) {
        *self.held_from.lock() = Some(number + 1);
    }

    fn is_held(&self, n: u64) -> bool {
        self.held.lock().contains(&n) || self.held_from.lock().is_some_and(|from| n >= from)
    }

    /// A guard that lets every held reader go when dropped: declared after the database, it
    /// is dropped first, so a failing assertion fails the test instead of leaving the
    /// database's drop waiting forever for a compaction held at the gate.
    pub fn release_on_drop(self: &Arc<Self>) -> ReleaseOnDrop {
        ReleaseOnDrop(Arc::clone(self))
    }

    /// Lets every held reader go.
    pub fn release_all(&self) {
        self.held.lock().clear();
        *self.held_from.lock() = None;
        let _w = self.waiting.lock();
        self.changed.notify_all();
    }

    /// Waits until some reader is held at the gate (a job has reached it), for at most
    /// `limit`; whether one is.
    pub fn wait_for_a_held_reader(&self, limit: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + limit;
        let mut waiting = self.waiting.lock();
        while waiting.is_empty() {
            if self.changed.wait_until(&mut waiting, deadline).timed_out() {
                return !waiting.is_empty();
            }
        }
        true
    }

    fn table_number(path: &Path) -> Option<u64> {
        let name = path.file_name()?.to_str()?;
        name.strip_suffix(".sst")?.parse().ok()
    }
}

/// See [`GateEnv::release_on_drop`].
pub struct ReleaseOnDrop(Arc<GateEnv>);

impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        self.0.release_all();
    }
}

impl Env for GateEnv {
    fn create_writable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        super::NoSyncEnv::shared().create_writable(path)
    }
    fn open_appendable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        super::NoSyncEnv::shared().open_appendable(path)
    }
    fn open_random_access(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        if let Some(n) = Self::table_number(path)
            && self.is_held(n)
        {
            let mut waiting = self.waiting.lock();
            waiting.insert(n);
            self.changed.notify_all();
            while self.is_held(n) {
                self.changed.wait(&mut waiting);
            }
            waiting.remove(&n);
        }
        super::NoSyncEnv::shared().open_random_access(path)
    }
    fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
        super::NoSyncEnv::shared().read_all(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        super::NoSyncEnv::shared().rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> Result<()> {
        super::NoSyncEnv::shared().remove_file(path)
    }
    fn truncate(&self, path: &Path, len: u64) -> Result<()> {
        super::NoSyncEnv::shared().truncate(path, len)
    }
    fn create_dir_all(&self, path: &Path) -> Result<()> {
        super::NoSyncEnv::shared().create_dir_all(path)
    }
    fn list_dir(&self, path: &Path) -> Result<Vec<String>> {
        super::NoSyncEnv::shared().list_dir(path)
    }
    fn sync_dir(&self, path: &Path) -> Result<()> {
        super::NoSyncEnv::shared().sync_dir(path)
    }
    fn file_size(&self, path: &Path) -> Result<u64> {
        super::NoSyncEnv::shared().file_size(path)
    }
    fn exists(&self, path: &Path) -> bool {
        super::NoSyncEnv::shared().exists(path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        super::NoSyncEnv::shared().is_dir(path)
    }
    fn lock_file(&self, path: &Path) -> Result<FileLock> {
        super::NoSyncEnv::shared().lock_file(path)
    }
}
