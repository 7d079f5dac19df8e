//! `appendfsync everysec` without touching the engine: an [`Env`] that opens write-ahead-log
//! files itself and keeps a second handle on each, so a background thread can `fdatasync` the
//! logs once a second while writers go on appending (no writer lock is held during the sync).
//!
//! Everything else is delegated to the engine's [`StdEnv`].

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use bloomkv::Result;
use bloomkv::env::{Env, FileLock, RandomAccessFile, StdEnv, WritableFile};
use parking_lot::Mutex;

/// The real file system, with a registry of the open WAL files for [`WalSyncEnv::sync_logs`].
#[derive(Debug, Default)]
pub struct WalSyncEnv {
    inner: StdEnv,
    logs: Mutex<Vec<Weak<File>>>,
    sync_on_close: bool,
    syncs: AtomicU64,
}

impl WalSyncEnv {
    /// A new env with no log registered.
    pub fn new() -> WalSyncEnv {
        WalSyncEnv::default()
    }

    /// A new env that also syncs each WAL file when the engine closes it (when it moves on
    /// to a new WAL): with `everysec`, the last second of writes of a retired WAL would
    /// otherwise wait for its memtable's flush to become durable.
    pub fn syncing_on_close() -> WalSyncEnv {
        WalSyncEnv {
            sync_on_close: true,
            ..WalSyncEnv::default()
        }
    }

    /// Forces every WAL file still open for writing to stable storage (`fdatasync`). Data a
    /// write has handed to the OS before this call is durable when it returns.
    ///
    /// # Errors
    /// The first sync error met (the other logs are still synced).
    pub fn sync_logs(&self) -> std::io::Result<()> {
        let files: Vec<Arc<File>> = {
            let mut logs = self.logs.lock();
            logs.retain(|w| w.strong_count() > 0);
            logs.iter().filter_map(Weak::upgrade).collect()
        };
        let mut first_err = None;
        for f in &files {
            if let Err(e) = f.sync_data() {
                first_err.get_or_insert(e);
            }
        }
        if !files.is_empty() {
            self.syncs.fetch_add(1, Ordering::Relaxed);
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Calls of [`WalSyncEnv::sync_logs`] that synced at least one WAL file.
    pub fn syncs(&self) -> u64 {
        self.syncs.load(Ordering::Relaxed)
    }

    fn is_log(path: &Path) -> bool {
        path.extension().is_some_and(|e| e == "log")
    }

    fn track(&self, file: File, path: &Path, len: u64) -> Box<dyn WritableFile> {
        let file = Arc::new(file);
        self.logs.lock().push(Arc::downgrade(&file));
        Box::new(LogFile {
            out: BufWriter::with_capacity(64 * 1024, Shared(file)),
            path: path.to_path_buf(),
            len,
            sync_on_close: self.sync_on_close,
        })
    }
}

/// A shared file handle that writes through `&File`.
struct Shared(Arc<File>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        (&*self.0).write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

struct LogFile {
    out: BufWriter<Shared>,
    path: std::path::PathBuf,
    len: u64,
    sync_on_close: bool,
}

impl Drop for LogFile {
    fn drop(&mut self) {
        if self.sync_on_close {
            // Best effort: the engine has already flushed what it acknowledged; a failed
            // sync here leaves the file as durable as `no` would.
            let _ = self.out.flush();
            let _ = self.out.get_ref().0.sync_data();
        }
    }
}

impl WritableFile for LogFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.out
            .write_all(data)
            .map_err(|e| bloomkv::Error::io(&self.path, e))?;
        self.len += data.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.out
            .flush()
            .map_err(|e| bloomkv::Error::io(&self.path, e))
    }

    fn sync(&mut self) -> Result<()> {
        self.flush()?;
        self.out
            .get_ref()
            .0
            .sync_data()
            .map_err(|e| bloomkv::Error::io(&self.path, e))
    }

    fn len(&self) -> u64 {
        self.len
    }
}

impl Env for WalSyncEnv {
    fn create_writable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        if !Self::is_log(path) {
            return self.inner.create_writable(path);
        }
        let file = File::create(path).map_err(|e| bloomkv::Error::io(path, e))?;
        Ok(self.track(file, path, 0))
    }

    fn open_appendable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        if !Self::is_log(path) {
            return self.inner.open_appendable(path);
        }
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| bloomkv::Error::io(path, e))?;
        let len = file
            .metadata()
            .map_err(|e| bloomkv::Error::io(path, e))?
            .len();
        Ok(self.track(file, path, len))
    }

    fn open_random_access(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.inner.open_random_access(path)
    }
    fn open_mapped(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.inner.open_mapped(path)
    }
    fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
        self.inner.read_all(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        self.inner.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> Result<()> {
        self.inner.remove_file(path)
    }
    fn truncate(&self, path: &Path, len: u64) -> Result<()> {
        self.inner.truncate(path, len)
    }
    fn create_dir_all(&self, path: &Path) -> Result<()> {
        self.inner.create_dir_all(path)
    }
    fn list_dir(&self, path: &Path) -> Result<Vec<String>> {
        self.inner.list_dir(path)
    }
    fn sync_dir(&self, path: &Path) -> Result<()> {
        self.inner.sync_dir(path)
    }
    fn file_size(&self, path: &Path) -> Result<u64> {
        self.inner.file_size(path)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        self.inner.is_dir(path)
    }
    fn lock_file(&self, path: &Path) -> Result<FileLock> {
        self.inner.lock_file(path)
    }
    fn lock_file_shared(&self, path: &Path) -> Result<FileLock> {
        self.inner.lock_file_shared(path)
    }
    fn hard_link(&self, from: &Path, to: &Path) -> Result<()> {
        self.inner.hard_link(from, to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_are_tracked_and_synced_others_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let env = WalSyncEnv::new();
        let mut log = env.create_writable(&dir.path().join("000001.log")).unwrap();
        let _table = env.create_writable(&dir.path().join("000002.sst")).unwrap();
        log.append(b"abc").unwrap();
        log.flush().unwrap();
        env.sync_logs().unwrap();
        assert_eq!(env.logs.lock().len(), 1);
        drop(log);
        env.sync_logs().unwrap();
        assert!(env.logs.lock().is_empty());
        assert_eq!(
            std::fs::read(dir.path().join("000001.log")).unwrap(),
            b"abc"
        );
    }
}
