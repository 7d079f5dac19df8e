//! An [`Env`] wrapper that injects file-system failures, for reliability tests.
//!
//! [`FaultEnv`] is an [`EnvWrapper`] over another `Env` and consults a shared
//! [`FaultController`], which can make the Nth write, fsync, directory fsync, rename, truncate,
//! file creation, read, directory listing or removal fail with EIO or ENOSPC (of any file, or
//! of the file of a given name), or make a write short (part of the buffer reaches the file,
//! then the call fails). It also remembers, per file, how many bytes were synced and
//! which creations and renames a directory fsync has made durable, so
//! [`FaultController::crash`] can turn the directory into what a power cut would leave:
//! every file cut back to its synced length, un-synced creations gone, un-synced renames
//! undone.
//!
//! Compiled with the `fault-injection` cargo feature (and in the library's own tests).
//!
//! ```
//! # #[cfg(feature = "fault-injection")]
//! # fn main() -> bloomkv::Result<()> {
//! use bloomkv::env::fault::{FaultEnv, FaultKind, FaultOp};
//! let dir = tempfile::tempdir()?;
//! let (env, faults) = FaultEnv::wrap(bloomkv::env::StdEnv::shared());
//! let db = bloomkv::Db::open(dir.path(), bloomkv::Options { env, ..Default::default() })?;
//! faults.fail_nth(FaultOp::Write, 1, FaultKind::NoSpace);
//! assert!(db.put("k", "v").is_err());
//! assert!(db.put("k2", "v").is_err()); // writes stay stopped
//! assert_eq!(faults.injected(), 1);
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "fault-injection"))]
//! # fn main() {}
//! ```

mod controller;
mod files;
#[cfg(test)]
mod tests;

pub use controller::FaultController;

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use crate::env::{Env, EnvWrapper, RandomAccessFile, WritableFile};
use crate::error::{Error, Result};
use controller::PendingRename;
use files::{FaultReadable, FaultWritable};

/// A kind of file-system call that can be made to fail.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::env::StdEnv;
/// use bloomkv::env::fault::{FaultEnv, FaultKind, FaultOp};
/// let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
/// let dir = tempfile::tempdir()?;
/// let db = bloomkv::Db::open(dir.path(), bloomkv::Options { env, ..Default::default() })?;
/// ctl.fail_nth(FaultOp::Write, 1, FaultKind::Eio);
/// assert!(db.put("k", "v").is_err()); // the WAL append failed
/// assert_eq!(ctl.injected(), 1);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FaultOp {
    /// [`WritableFile::append`].
    Write,
    /// [`WritableFile::sync`], and a call of a [`WritableFile::sync_handle`].
    Sync,
    /// [`Env::sync_dir`].
    SyncDir,
    /// [`Env::rename`].
    Rename,
    /// [`Env::create_writable`], and [`Env::hard_link`] (a new name is a creation).
    Create,
    /// [`Env::truncate`].
    Truncate,
    /// [`Env::read_all`]; opening a file for reading ([`Env::open_random_access`],
    /// [`Env::open_mapped`]); and each [`RandomAccessFile::read_at`] of a file so opened
    /// (bytes a reader uses in place from a memory map are not calls, and cannot fail).
    Read,
    /// [`Env::list_dir`].
    List,
    /// [`Env::remove_file`] and [`Env::remove_dir`].
    Remove,
}

impl FaultOp {
    /// How many operations there are (the size of the call counters).
    const COUNT: usize = 9;

    fn index(self) -> usize {
        self as usize
    }
}

/// How an injected failure looks to the caller.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::env::StdEnv;
/// use bloomkv::env::fault::{FaultEnv, FaultKind, FaultOp};
/// let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
/// let dir = tempfile::tempdir()?;
/// let db = bloomkv::Db::open(dir.path(), bloomkv::Options { env, ..Default::default() })?;
/// ctl.fail_nth(FaultOp::Write, 1, FaultKind::NoSpace);
/// let err = db.put("k", "v").unwrap_err();
/// assert!(err.to_string().contains("No space left"), "{err}");
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// `EIO` (errno 5).
    Eio,
    /// `ENOSPC` (errno 28).
    NoSpace,
    /// For writes: half the buffer reaches the file, then the call fails with `ENOSPC`.
    /// For other operations the same as `NoSpace`.
    ShortWrite,
}

impl FaultKind {
    fn error(self, path: &Path) -> Error {
        let errno = match self {
            FaultKind::Eio => 5,
            FaultKind::NoSpace | FaultKind::ShortWrite => 28,
        };
        #[cfg(unix)]
        let source = io::Error::from_raw_os_error(errno);
        #[cfg(not(unix))]
        let source = io::Error::other(format!("injected fault (errno {errno})"));
        Error::io(path, source)
    }
}

/// A planned failure, for [`FaultController::add`]: the `n`th call of an operation from now
/// fails, optionally only counting calls on a file of a given name, optionally with every
/// later such call too.
///
/// # Examples
/// ```
/// use bloomkv::env::fault::{Fault, FaultKind, FaultOp};
/// // The second removal of a file named CURRENT, and every one after it.
/// let fault = Fault::nth(FaultOp::Remove, 2, FaultKind::Eio).on_file("CURRENT").and_later();
/// # let _ = fault;
/// ```
#[derive(Clone, Debug)]
pub struct Fault {
    op: FaultOp,
    n: u64,
    kind: FaultKind,
    sticky: bool,
    file: Option<String>,
}

impl Fault {
    /// The `n`th call of `op` from now (1 = the next one; 0 counts as 1) fails with `kind`.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::env::fault::{Fault, FaultKind, FaultOp};
    /// let next_listing = Fault::nth(FaultOp::List, 1, FaultKind::Eio);
    /// # let _ = next_listing;
    /// ```
    pub fn nth(op: FaultOp, n: u64, kind: FaultKind) -> Fault {
        Fault {
            op,
            n,
            kind,
            sticky: false,
            file: None,
        }
    }

    /// Every call after the `n`th fails too (a disk that stays broken).
    ///
    /// # Examples
    /// ```
    /// use bloomkv::env::fault::{Fault, FaultKind, FaultOp};
    /// let full_disk = Fault::nth(FaultOp::Write, 1, FaultKind::NoSpace).and_later();
    /// # let _ = full_disk;
    /// ```
    pub fn and_later(mut self) -> Fault {
        self.sticky = true;
        self
    }

    /// Only calls on a file whose name (the last component of its path) is `name` count
    /// and fail; for a rename, the name it is renamed from.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::env::fault::{Fault, FaultKind, FaultOp};
    /// let unreadable_current = Fault::nth(FaultOp::Read, 1, FaultKind::Eio).on_file("CURRENT");
    /// # let _ = unreadable_current;
    /// ```
    pub fn on_file(mut self, name: impl Into<String>) -> Fault {
        self.file = Some(name.into());
        self
    }
}

/// An [`Env`] that forwards to another and injects the failures its [`FaultController`]
/// plans.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::env::StdEnv;
/// use bloomkv::env::fault::{FaultEnv, FaultKind, FaultOp};
/// let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
/// let dir = tempfile::tempdir()?;
/// ctl.fail_nth(FaultOp::Create, 1, FaultKind::Eio);
/// assert!(bloomkv::Db::open(dir.path(), bloomkv::Options { env, ..Default::default() }).is_err());
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct FaultEnv {
    inner: Arc<dyn Env>,
    ctl: Arc<FaultController>,
}

impl FaultEnv {
    /// Wraps `inner`; returns the env to put in `Options::env` and its controller.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::env::StdEnv;
    /// use bloomkv::env::fault::FaultEnv;
    /// let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
    /// let opts = bloomkv::Options { env, ..Default::default() };
    /// assert_eq!(ctl.injected(), 0);
    /// # let _ = opts;
    /// ```
    pub fn wrap(inner: Arc<dyn Env>) -> (Arc<dyn Env>, Arc<FaultController>) {
        let ctl = Arc::new(FaultController::default());
        let env = Arc::new(FaultEnv {
            inner,
            ctl: Arc::clone(&ctl),
        });
        (env, ctl)
    }

    /// Fails with the planned error if this call of `op` on `path` is to fail.
    fn check(&self, op: FaultOp, path: &Path) -> Result<()> {
        match self.ctl.check(op, path) {
            Some(kind) => Err(kind.error(path)),
            None => Ok(()),
        }
    }

    fn readable(&self, file: Arc<dyn RandomAccessFile>) -> Arc<dyn RandomAccessFile> {
        Arc::new(FaultReadable {
            inner: file,
            ctl: Arc::clone(&self.ctl),
        })
    }
}

// Calls that neither fail nor change what a crash leaves (create_dir_all, file_size, exists,
// is_dir, the locks) are forwarded by `EnvWrapper`'s defaults.
impl EnvWrapper for FaultEnv {
    fn target(&self) -> &dyn Env {
        self.inner.as_ref()
    }

    fn create_writable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.check(FaultOp::Create, path)?;
        let inner = self.inner.create_writable(path)?;
        self.ctl.created(path);
        Ok(Box::new(FaultWritable {
            inner,
            path: path.to_path_buf(),
            ctl: Arc::clone(&self.ctl),
            flushed: Arc::default(),
        }))
    }

    fn open_appendable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let inner = self.inner.open_appendable(path)?;
        self.ctl.synced(path, inner.len());
        let flushed = Arc::new(AtomicU64::new(inner.len()));
        Ok(Box::new(FaultWritable {
            inner,
            path: path.to_path_buf(),
            ctl: Arc::clone(&self.ctl),
            flushed,
        }))
    }

    fn open_random_access(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.check(FaultOp::Read, path)?;
        Ok(self.readable(self.inner.open_random_access(path)?))
    }

    fn open_mapped(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.check(FaultOp::Read, path)?;
        Ok(self.readable(self.inner.open_mapped(path)?))
    }

    fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
        self.check(FaultOp::Read, path)?;
        self.inner.read_all(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        self.check(FaultOp::Rename, from)?;
        // Only small files (CURRENT) are renamed over; keep what `to` held so a crash can
        // bring it back.
        let old_contents = if self.inner.exists(to) {
            let mut bytes = self.inner.read_all(to)?;
            // What a crash brings back is only what was synced of the old file.
            if let Some(&len) = self.ctl.state.lock().synced_len.get(to) {
                bytes.truncate(len as usize);
            }
            Some(bytes)
        } else {
            None
        };
        self.inner.rename(from, to)?;
        let mut st = self.ctl.state.lock();
        let len = st.synced_len.remove(from);
        st.unsynced_creates.remove(from);
        if let Some(len) = len {
            st.synced_len.insert(to.to_path_buf(), len);
        }
        st.unsynced_renames.push(PendingRename {
            to: to.to_path_buf(),
            old_contents,
        });
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        self.check(FaultOp::Remove, path)?;
        self.inner.remove_file(path)?;
        let mut st = self.ctl.state.lock();
        st.synced_len.remove(path);
        st.unsynced_creates.remove(path);
        Ok(())
    }

    fn remove_dir(&self, path: &Path) -> Result<()> {
        self.check(FaultOp::Remove, path)?;
        self.inner.remove_dir(path)
    }

    fn truncate(&self, path: &Path, len: u64) -> Result<()> {
        self.check(FaultOp::Truncate, path)?;
        self.inner.truncate(path, len)?;
        self.ctl.synced(path, len);
        Ok(())
    }

    fn list_dir(&self, path: &Path) -> Result<Vec<String>> {
        self.check(FaultOp::List, path)?;
        self.inner.list_dir(path)
    }

    fn sync_dir(&self, path: &Path) -> Result<()> {
        self.check(FaultOp::SyncDir, path)?;
        if !self.ctl.simulated_sync() {
            self.inner.sync_dir(path)?;
        }
        let mut st = self.ctl.state.lock();
        st.unsynced_creates.retain(|p| p.parent() != Some(path));
        st.unsynced_renames.retain(|r| r.to.parent() != Some(path));
        Ok(())
    }

    /// A new name is a creation: it fails as [`FaultOp::Create`] does, and a crash before its
    /// directory is synced takes the name away (the data is the source's, synced or not).
    fn hard_link(&self, from: &Path, to: &Path) -> Result<()> {
        self.check(FaultOp::Create, to)?;
        self.inner.hard_link(from, to)?;
        let mut st = self.ctl.state.lock();
        let len = st.synced_len.get(from).copied();
        if let Some(len) = len {
            st.synced_len.insert(to.to_path_buf(), len);
        }
        st.unsynced_creates.insert(to.to_path_buf());
        Ok(())
    }
}
