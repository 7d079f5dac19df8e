//! [`EnvWrapper`]: an [`Env`] built on another, forwarding every call it does not change.

use std::fmt::Debug;
use std::path::Path;
use std::sync::Arc;

use crate::env::{Env, FileLock, RandomAccessFile, WritableFile};
use crate::error::Result;

/// An [`Env`] that wraps another (its [`target`](EnvWrapper::target)) and forwards every call
/// to it unless it overrides that call, like RocksDB's `EnvWrapper`.
///
/// Every type implementing `EnvWrapper` is an [`Env`] (a blanket implementation forwards
/// each `Env` method to the `EnvWrapper` method of the same name). Write a wrapper this way
/// rather than implementing `Env` by hand: a method that `Env` gains later is then forwarded
/// to the target instead of silently taking `Env`'s default (which, for a method such as
/// [`Env::remove_dir`], acts on the real file system even when the target is another env).
///
/// Both traits have methods of the same names: on a value whose type is a wrapper, with
/// both traits in scope, call through the one meant (`Env::read_all(&w, path)`), or use the
/// wrapper as an `Arc<dyn Env>` (as `Options::env` holds it).
///
/// # Examples
/// An env that counts the files the engine removes, and changes nothing else:
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use std::path::Path;
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use bloomkv::env::{Env, EnvWrapper, StdEnv};
///
/// #[derive(Debug)]
/// struct CountRemovals {
///     target: Arc<dyn Env>,
///     removed: AtomicU64,
/// }
///
/// impl EnvWrapper for CountRemovals {
///     fn target(&self) -> &dyn Env {
///         self.target.as_ref()
///     }
///     fn remove_file(&self, path: &Path) -> bloomkv::Result<()> {
///         self.removed.fetch_add(1, Ordering::Relaxed);
///         self.target.remove_file(path)
///     }
/// }
///
/// let env = Arc::new(CountRemovals { target: StdEnv::shared(), removed: AtomicU64::new(0) });
/// let dir = tempfile::tempdir()?;
/// let options = bloomkv::Options { env: env.clone(), ..Default::default() };
/// let db = bloomkv::Db::open(dir.path(), options.clone())?;
/// db.put("k", "v")?;
/// drop(db);
/// let db = bloomkv::Db::open(dir.path(), options)?; // replaces the WAL and MANIFEST
/// assert_eq!(db.get("k")?, Some(b"v".to_vec()));
/// assert!(env.removed.load(Ordering::Relaxed) > 0); // the old ones went through the wrapper
/// # Ok(())
/// # }
/// ```
pub trait EnvWrapper: Send + Sync + Debug {
    /// The env every call not overridden goes to.
    fn target(&self) -> &dyn Env;

    /// [`Env::create_writable`], forwarded by default.
    ///
    /// # Errors
    /// As the target's.
    fn create_writable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.target().create_writable(path)
    }
    /// [`Env::open_appendable`], forwarded by default.
    ///
    /// # Errors
    /// As the target's.
    fn open_appendable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.target().open_appendable(path)
    }
    /// [`Env::open_random_access`], forwarded by default.
    ///
    /// # Errors
    /// As the target's.
    fn open_random_access(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.target().open_random_access(path)
    }
    /// [`Env::open_mapped`], forwarded by default.
    ///
    /// # Errors
    /// As the target's.
    fn open_mapped(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.target().open_mapped(path)
    }
    /// [`Env::read_all`], forwarded by default.
    ///
    /// # Errors
    /// As the target's.
    fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
        self.target().read_all(path)
    }
    /// [`Env::rename`], forwarded by default.
    ///
    /// # Errors
    /// As the target's.
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        self.target().rename(from, to)
    }
    /// [`Env::remove_file`], forwarded by default.
    ///
    /// # Errors
    /// As the target's.
    fn remove_file(&self, path: &Path) -> Result<()> {
        self.target().remove_file(path)
    }
    /// [`Env::truncate`], forwarded by default.
    ///
    /// # Errors
    /// As the target's.
    fn truncate(&self, path: &Path, len: u64) -> Result<()> {
        self.target().truncate(path, len)
    }
    /// [`Env::create_dir_all`], forwarded by default.
    ///
    /// # Errors
    /// As the target's.
    fn create_dir_all(&self, path: &Path) -> Result<()> {
        self.target().create_dir_all(path)
    }
    /// [`Env::remove_dir`], forwarded by default.
    ///
    /// # Errors
    /// As the target's.
    fn remove_dir(&self, path: &Path) -> Result<()> {
        self.target().remove_dir(path)
    }
    /// [`Env::list_dir`], forwarded by default.
    ///
    /// # Errors
    /// As the target's.
    fn list_dir(&self, path: &Path) -> Result<Vec<String>> {
        self.target().list_dir(path)
    }
    /// [`Env::sync_dir`], forwarded by default.
    ///
    /// # Errors
    /// As the target's.
    fn sync_dir(&self, path: &Path) -> Result<()> {
        self.target().sync_dir(path)
    }
    /// [`Env::file_size`], forwarded by default.
    ///
    /// # Errors
    /// As the target's.
    fn file_size(&self, path: &Path) -> Result<u64> {
        self.target().file_size(path)
    }
    /// [`Env::exists`], forwarded by default.
    fn exists(&self, path: &Path) -> bool {
        self.target().exists(path)
    }
    /// [`Env::is_dir`], forwarded by default.
    fn is_dir(&self, path: &Path) -> bool {
        self.target().is_dir(path)
    }
    /// [`Env::lock_file`], forwarded by default.
    ///
    /// # Errors
    /// As the target's.
    fn lock_file(&self, path: &Path) -> Result<FileLock> {
        self.target().lock_file(path)
    }
    /// [`Env::lock_file_shared`], forwarded by default.
    ///
    /// # Errors
    /// As the target's.
    fn lock_file_shared(&self, path: &Path) -> Result<FileLock> {
        self.target().lock_file_shared(path)
    }
    /// [`Env::hard_link`], forwarded by default.
    ///
    /// # Errors
    /// As the target's.
    fn hard_link(&self, from: &Path, to: &Path) -> Result<()> {
        self.target().hard_link(from, to)
    }
}

// IMPORTANT: every `Env` method is listed here, those with a default in `Env` too (a missing
// one would take `Env`'s default instead of the wrapper's); a method added to `Env` gets its
// forwarding default in `EnvWrapper` and its line here.
impl<W: EnvWrapper> Env for W {
    fn create_writable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        EnvWrapper::create_writable(self, path)
    }
    fn open_appendable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        EnvWrapper::open_appendable(self, path)
    }
    fn open_random_access(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        EnvWrapper::open_random_access(self, path)
    }
    fn open_mapped(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        EnvWrapper::open_mapped(self, path)
    }
    fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
        EnvWrapper::read_all(self, path)
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        EnvWrapper::rename(self, from, to)
    }
    fn remove_file(&self, path: &Path) -> Result<()> {
        EnvWrapper::remove_file(self, path)
    }
    fn truncate(&self, path: &Path, len: u64) -> Result<()> {
        EnvWrapper::truncate(self, path, len)
    }
    fn create_dir_all(&self, path: &Path) -> Result<()> {
        EnvWrapper::create_dir_all(self, path)
    }
    fn remove_dir(&self, path: &Path) -> Result<()> {
        EnvWrapper::remove_dir(self, path)
    }
    fn list_dir(&self, path: &Path) -> Result<Vec<String>> {
        EnvWrapper::list_dir(self, path)
    }
    fn sync_dir(&self, path: &Path) -> Result<()> {
        EnvWrapper::sync_dir(self, path)
    }
    fn file_size(&self, path: &Path) -> Result<u64> {
        EnvWrapper::file_size(self, path)
    }
    fn exists(&self, path: &Path) -> bool {
        EnvWrapper::exists(self, path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        EnvWrapper::is_dir(self, path)
    }
    fn lock_file(&self, path: &Path) -> Result<FileLock> {
        EnvWrapper::lock_file(self, path)
    }
    fn lock_file_shared(&self, path: &Path) -> Result<FileLock> {
        EnvWrapper::lock_file_shared(self, path)
    }
    fn hard_link(&self, from: &Path, to: &Path) -> Result<()> {
        EnvWrapper::hard_link(self, from, to)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use parking_lot::Mutex;

    use super::*;
    use crate::env::{MemWritableFile, StdEnv};
    use crate::error::Error;

    /// An env that records which of its methods were called and does nothing real (files
    /// are in memory, links and locks fail with a marker error).
    #[derive(Debug, Default)]
    struct Recorder(Mutex<BTreeMap<&'static str, u32>>);

    impl Recorder {
        fn note(&self, method: &'static str) {
            *self.0.lock().entry(method).or_default() += 1;
        }
        fn refused(&self, method: &'static str, path: &Path) -> Error {
            self.note(method);
            Error::io(path, std::io::Error::other("recorded"))
        }
    }

    impl Env for Recorder {
        fn create_writable(&self, _: &Path) -> Result<Box<dyn WritableFile>> {
            self.note("create_writable");
            Ok(Box::new(MemWritableFile::new()))
        }
        fn open_appendable(&self, _: &Path) -> Result<Box<dyn WritableFile>> {
            self.note("open_appendable");
            Ok(Box::new(MemWritableFile::new()))
        }
        fn open_random_access(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
            self.note("open_random_access");
            Ok(Arc::new(crate::env::MemRandomAccessFile::new(vec![], path)))
        }
        fn open_mapped(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
            self.note("open_mapped");
            Ok(Arc::new(crate::env::MemRandomAccessFile::new(vec![], path)))
        }
        fn read_all(&self, _: &Path) -> Result<Vec<u8>> {
            self.note("read_all");
            Ok(vec![])
        }
        fn rename(&self, _: &Path, _: &Path) -> Result<()> {
            self.note("rename");
            Ok(())
        }
        fn remove_file(&self, _: &Path) -> Result<()> {
            self.note("remove_file");
            Ok(())
        }
        fn truncate(&self, _: &Path, _: u64) -> Result<()> {
            self.note("truncate");
            Ok(())
        }
        fn create_dir_all(&self, _: &Path) -> Result<()> {
            self.note("create_dir_all");
            Ok(())
        }
        fn remove_dir(&self, _: &Path) -> Result<()> {
            self.note("remove_dir");
            Ok(())
        }
        fn list_dir(&self, _: &Path) -> Result<Vec<String>> {
            self.note("list_dir");
            Ok(vec![])
        }
        fn sync_dir(&self, _: &Path) -> Result<()> {
            self.note("sync_dir");
            Ok(())
        }
        fn file_size(&self, _: &Path) -> Result<u64> {
            self.note("file_size");
            Ok(0)
        }
        fn exists(&self, _: &Path) -> bool {
            self.note("exists");
            true
        }
        fn is_dir(&self, _: &Path) -> bool {
            self.note("is_dir");
            true
        }
        fn lock_file(&self, path: &Path) -> Result<FileLock> {
            Err(self.refused("lock_file", path))
        }
        fn lock_file_shared(&self, path: &Path) -> Result<FileLock> {
            Err(self.refused("lock_file_shared", path))
        }
        fn hard_link(&self, _: &Path, to: &Path) -> Result<()> {
            Err(self.refused("hard_link", to))
        }
    }

    /// A wrapper that overrides nothing.
    #[derive(Debug)]
    struct Forward(Recorder);

    impl EnvWrapper for Forward {
        fn target(&self) -> &dyn Env {
            &self.0
        }
    }

    /// A wrapper that overrides nothing sends each call to its target, once.
    #[test]
    fn every_method_reaches_the_target_once() {
        let wrapper = Forward(Recorder::default());
        {
            let env: &dyn Env = &wrapper;
            let p = PathBuf::from("/nowhere/x");
            let _ = env.create_writable(&p);
            let _ = env.open_appendable(&p);
            let _ = env.open_random_access(&p);
            let _ = env.open_mapped(&p);
            let _ = env.read_all(&p);
            let _ = env.rename(&p, &p);
            let _ = env.remove_file(&p);
            let _ = env.truncate(&p, 0);
            let _ = env.create_dir_all(&p);
            let _ = env.remove_dir(&p);
            let _ = env.list_dir(&p);
            let _ = env.sync_dir(&p);
            let _ = env.file_size(&p);
            let _ = env.exists(&p);
            let _ = env.is_dir(&p);
            // The recorder refuses these with its own error: StdEnv, or `Env`'s defaults,
            // would fail differently (NotFound, Unsupported).
            for e in [
                env.lock_file(&p).unwrap_err(),
                env.lock_file_shared(&p).unwrap_err(),
                env.hard_link(&p, &p).unwrap_err(),
            ] {
                assert!(e.to_string().contains("recorded"), "{e}");
            }
        }
        let calls = wrapper.0.0.lock();
        assert_eq!(calls.len(), 18, "{calls:?}");
        assert!(calls.values().all(|&n| n == 1), "{calls:?}");
    }

    /// An override replaces only its own method.
    #[derive(Debug)]
    struct NoDirs;

    impl EnvWrapper for NoDirs {
        fn target(&self) -> &dyn Env {
            &StdEnv
        }
        fn create_dir_all(&self, path: &Path) -> Result<()> {
            Err(Error::io(path, std::io::ErrorKind::PermissionDenied.into()))
        }
    }

    #[test]
    fn an_override_changes_its_call_only() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let env: &dyn Env = &NoDirs;
        assert!(env.create_dir_all(&dir.path().join("sub")).is_err());
        let mut f = env.create_writable(&dir.path().join("f"))?;
        f.append(b"x")?;
        f.sync()?;
        assert_eq!(env.read_all(&dir.path().join("f"))?, b"x");
        Ok(())
    }
}
