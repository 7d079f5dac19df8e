//! A table the writer deletes after the secondary read its name in the MANIFEST but before
//! it opened the file: the secondary reads the newer MANIFEST and opens what that names,
//! with no error and no wrong answer. With no newer MANIFEST to go to (the file is simply
//! missing), the error is an I/O error of kind `NotFound`, never a wrong answer.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

use crate::env::{Env, FileLock, RandomAccessFile, StdEnv, WritableFile};
use crate::{Db, Error, Options, Result};

/// The real file system; the first time a table is opened, the writer compacts first.
#[derive(Debug)]
struct CompactBeforeFirstOpen {
    writer: Mutex<Option<Db>>,
    fired: AtomicUsize,
}

impl Env for CompactBeforeFirstOpen {
    fn open_random_access(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        if path.extension().is_some_and(|e| e == "sst")
            && self.fired.fetch_add(1, Ordering::SeqCst) == 0
        {
            if let Some(w) = self.writer.lock().as_ref() {
                w.compact().unwrap();
            }
            assert!(!path.exists(), "the compaction kept {}", path.display());
        }
        StdEnv.open_random_access(path)
    }
    fn create_writable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        StdEnv.create_writable(path)
    }
    fn open_appendable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        StdEnv.open_appendable(path)
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
fn a_table_deleted_before_it_was_opened_sends_the_secondary_to_the_newer_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Db::open(dir.path(), Options::default()).unwrap();
    for round in 0..3 {
        for i in 0..100u32 {
            writer.put(i.to_be_bytes(), format!("{round}")).unwrap();
        }
        writer.flush().unwrap();
    }
    let env = Arc::new(CompactBeforeFirstOpen {
        writer: Mutex::new(Some(writer)),
        fired: AtomicUsize::new(0),
    });
    let opts = Options {
        env: Arc::clone(&env) as Arc<dyn Env>,
        ..Options::default()
    };
    let reader = Db::open_secondary(dir.path(), opts).unwrap();
    assert!(env.fired.load(Ordering::SeqCst) > 1);
    assert_eq!(reader.live_files().len(), 1, "not the compacted state");
    for i in 0..100u32 {
        assert_eq!(reader.get(i.to_be_bytes()).unwrap(), Some(b"2".to_vec()));
    }
    env.writer.lock().take();
}

#[test]
fn a_table_missing_for_good_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Db::open(dir.path(), Options::default()).unwrap();
    writer.put("k", "v").unwrap();
    writer.flush().unwrap();
    let table = writer.live_files()[0];
    drop(writer);
    std::fs::remove_file(dir.path().join(crate::sstable::table_file_name(table))).unwrap();
    let err = Db::open_secondary(dir.path(), Options::default()).unwrap_err();
    match &err {
        Error::Io { source, .. } => assert_eq!(source.kind(), std::io::ErrorKind::NotFound),
        other => panic!("{other}"),
    }
}
