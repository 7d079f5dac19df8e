//! A panic inside a background job stops writes with an error instead of hanging the writers
//! and `flush()` callers that wait for that job.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bloomkv::env::{Env, FileLock, RandomAccessFile, StdEnv, WritableFile};
use bloomkv::{Db, Error, Options, Result};

/// The real file system, except that creating a table file panics while `armed`.
#[derive(Debug)]
struct PanickyEnv {
    armed: AtomicBool,
}

impl Env for PanickyEnv {
    fn create_writable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        if self.armed.load(Ordering::SeqCst) && path.extension().is_some_and(|e| e == "sst") {
            panic!("injected panic creating {}", path.display());
        }
        StdEnv.create_writable(path)
    }
    fn open_appendable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        StdEnv.open_appendable(path)
    }
    fn open_random_access(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        StdEnv.open_random_access(path)
    }
    fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
        StdEnv.read_all(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        StdEnv.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> Result<()> {
        StdEnv.remove_file(path)
    }
    fn truncate(&self, path: &Path, len: u64) -> Result<()> {
        StdEnv.truncate(path, len)
    }
    fn create_dir_all(&self, path: &Path) -> Result<()> {
        StdEnv.create_dir_all(path)
    }
    fn list_dir(&self, path: &Path) -> Result<Vec<String>> {
        StdEnv.list_dir(path)
    }
    fn sync_dir(&self, path: &Path) -> Result<()> {
        StdEnv.sync_dir(path)
    }
    fn file_size(&self, path: &Path) -> Result<u64> {
        StdEnv.file_size(path)
    }
    fn exists(&self, path: &Path) -> bool {
        StdEnv.exists(path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        StdEnv.is_dir(path)
    }
    fn lock_file(&self, path: &Path) -> Result<FileLock> {
        StdEnv.lock_file(path)
    }
}

#[test]
fn panicking_flush_stops_writes_keeps_reads_and_recovers_on_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let env = Arc::new(PanickyEnv {
        armed: AtomicBool::new(false),
    });
    let opts = Options {
        env: env.clone(),
        ..Default::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    db.put("a", "1").unwrap();
    env.armed.store(true, Ordering::SeqCst);
    let err = db.flush().unwrap_err();
    assert!(
        matches!(err, Error::WritesStopped(ref why) if why.contains("panicked")),
        "{err}"
    );
    assert!(matches!(db.put("b", "2"), Err(Error::WritesStopped(_))));
    assert_eq!(db.get("a").unwrap(), Some(b"1".to_vec()));
    drop(db);
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(db.get("a").unwrap(), Some(b"1".to_vec()));
}
