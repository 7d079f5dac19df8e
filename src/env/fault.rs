//! An [`Env`] wrapper that injects file-system failures, for reliability tests.
//!
//! [`FaultEnv`] forwards every call to another `Env` and consults a shared
//! [`FaultController`], which can make the Nth write, fsync, directory fsync, rename, truncate
//! or file creation fail with EIO or ENOSPC, or make a write short (part of the buffer reaches the
//! file, then the call fails). It also remembers, per file, how many bytes were synced and
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

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

use crate::env::{Env, FileLock, RandomAccessFile, SyncHandle, WritableFile};
use crate::error::{Error, Result};

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
pub enum FaultOp {
    /// [`WritableFile::append`].
    Write,
    /// [`WritableFile::sync`], and a call of a [`WritableFile::sync_handle`].
    Sync,
    /// [`Env::sync_dir`].
    SyncDir,
    /// [`Env::rename`].
    Rename,
    /// [`Env::create_writable`].
    Create,
    /// [`Env::truncate`].
    Truncate,
}

impl FaultOp {
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

#[derive(Clone, Copy, Debug)]
struct Plan {
    op: FaultOp,
    /// The call count (of `op`) at which the fault fires.
    at: u64,
    kind: FaultKind,
    /// Keep failing every later call of `op` (a full disk), not just one.
    sticky: bool,
}

/// A rename not yet made durable by a directory fsync: what `to` held before, if anything.
#[derive(Debug)]
struct PendingRename {
    to: PathBuf,
    old_contents: Option<Vec<u8>>,
}

#[derive(Debug, Default)]
struct CtlState {
    calls: [u64; 6],
    /// The failures to come; usually one, several when a test needs two calls to fail
    /// (see [`FaultController::also_fail_nth`]).
    plans: Vec<Plan>,
    injected: u64,
    /// Per tracked file: the length known to be on stable storage.
    synced_len: HashMap<PathBuf, u64>,
    unsynced_creates: HashSet<PathBuf>,
    unsynced_renames: Vec<PendingRename>,
    /// Model fsyncs without making them (see [`FaultController::set_simulated_sync`]).
    simulated_sync: bool,
    /// How long each file fsync takes on top of its own time (see
    /// [`FaultController::set_sync_delay`]).
    sync_delay: std::time::Duration,
}

/// Decides which calls fail, counts them, and models what a crash loses. Shared by a
/// [`FaultEnv`] and the test driving it.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::env::StdEnv;
/// use bloomkv::env::fault::{FaultEnv, FaultOp};
/// let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
/// let dir = tempfile::tempdir()?;
/// let db = bloomkv::Db::open(dir.path(), bloomkv::Options { env, ..Default::default() })?;
/// let before = ctl.calls(FaultOp::Write);
/// db.put("k", "v")?;
/// assert!(ctl.calls(FaultOp::Write) > before);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Default)]
pub struct FaultController {
    state: Mutex<CtlState>,
}

impl FaultController {
    /// Makes the `n`th call of `op` from now (1 = the next one) fail with `kind`.
    /// Replaces any earlier plan.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::env::StdEnv;
    /// use bloomkv::env::fault::{FaultEnv, FaultKind, FaultOp};
    /// let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
    /// let dir = tempfile::tempdir()?;
    /// let db = bloomkv::Db::open(dir.path(), bloomkv::Options { env, ..Default::default() })?;
    /// ctl.fail_nth(FaultOp::Write, 2, FaultKind::Eio); // the second append from now
    /// db.put("a", "1")?;
    /// assert!(db.put("b", "2").is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn fail_nth(&self, op: FaultOp, n: u64, kind: FaultKind) {
        self.arm(op, n, kind, false, true);
    }

    /// Like [`FaultController::fail_nth`], but every later call of `op` fails too.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::env::StdEnv;
    /// use bloomkv::env::fault::{FaultEnv, FaultKind, FaultOp};
    /// let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
    /// let dir = tempfile::tempdir()?;
    /// let db = bloomkv::Db::open(dir.path(), bloomkv::Options { env, ..Default::default() })?;
    /// ctl.fail_from_nth(FaultOp::Write, 1, FaultKind::NoSpace); // a full disk
    /// assert!(db.put("a", "1").is_err());
    /// db.resume()?; // a fresh WAL (nothing written into it yet)
    /// assert!(db.put("a", "1").is_err()); // still full
    /// ctl.clear(); // space freed
    /// db.resume()?;
    /// db.put("a", "1")?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn fail_from_nth(&self, op: FaultOp, n: u64, kind: FaultKind) {
        self.arm(op, n, kind, true, true);
    }

    /// Like [`FaultController::fail_nth`], but keeps the plans already made, so that calls of
    /// several operations fail (a WAL sync, then the truncate that would take its record
    /// back).
    ///
    /// # Examples
    /// ```
    /// use bloomkv::env::StdEnv;
    /// use bloomkv::env::fault::{FaultEnv, FaultKind, FaultOp};
    /// let (_env, ctl) = FaultEnv::wrap(StdEnv::shared());
    /// ctl.fail_nth(FaultOp::Sync, 1, FaultKind::Eio);
    /// ctl.also_fail_nth(FaultOp::Truncate, 1, FaultKind::Eio); // both plans stand
    /// ```
    pub fn also_fail_nth(&self, op: FaultOp, n: u64, kind: FaultKind) {
        self.arm(op, n, kind, false, false);
    }

    fn arm(&self, op: FaultOp, n: u64, kind: FaultKind, sticky: bool, replace: bool) {
        let mut st = self.state.lock();
        let at = st.calls[op.index()] + n.max(1);
        if replace {
            st.plans.clear();
        }
        st.plans.push(Plan {
            op,
            at,
            kind,
            sticky,
        });
    }

    /// With `true`, file and directory fsyncs are recorded for [`FaultController::crash`]
    /// but not made for real (a file sync only hands the data to the OS). The crash model
    /// does not need real fsyncs, and tests run far faster without them.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::env::StdEnv;
    /// use bloomkv::env::fault::FaultEnv;
    /// let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
    /// ctl.set_simulated_sync(true); // fast, and the crash model still knows what was synced
    /// let dir = tempfile::tempdir()?;
    /// let opts = bloomkv::Options { env: env.clone(), sync_writes: true, ..Default::default() };
    /// let db = bloomkv::Db::open(dir.path(), opts.clone())?;
    /// db.put("k", "v")?;
    /// drop(db);
    /// ctl.crash(&StdEnv)?;
    /// assert_eq!(bloomkv::Db::open(dir.path(), opts)?.get("k")?, Some(b"v".to_vec()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn set_simulated_sync(&self, on: bool) {
        self.state.lock().simulated_sync = on;
    }

    fn simulated_sync(&self) -> bool {
        self.state.lock().simulated_sync
    }

    /// Makes every file fsync (of a file or through a sync handle) take `delay` longer, as
    /// on a slow disk: with simulated syncs, concurrent writers then meet the same fsync the
    /// way they do on real hardware. Zero (the default) adds nothing.
    pub fn set_sync_delay(&self, delay: std::time::Duration) {
        self.state.lock().sync_delay = delay;
    }

    /// Sleeps for the sync delay, if one is set.
    fn delay_sync(&self) {
        let delay = self.state.lock().sync_delay;
        if !delay.is_zero() {
            std::thread::sleep(delay);
        }
    }

    /// Stops injecting failures.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::env::StdEnv;
    /// use bloomkv::env::fault::{FaultEnv, FaultKind, FaultOp};
    /// let (_env, ctl) = FaultEnv::wrap(StdEnv::shared());
    /// ctl.fail_nth(FaultOp::Rename, 1, FaultKind::Eio);
    /// ctl.clear();
    /// assert_eq!(ctl.injected(), 0);
    /// ```
    pub fn clear(&self) {
        self.state.lock().plans.clear();
    }

    /// Calls of `op` made so far.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::env::StdEnv;
    /// use bloomkv::env::fault::{FaultEnv, FaultOp};
    /// let (_env, ctl) = FaultEnv::wrap(StdEnv::shared());
    /// assert_eq!(ctl.calls(FaultOp::Create), 0);
    /// ```
    pub fn calls(&self, op: FaultOp) -> u64 {
        self.state.lock().calls[op.index()]
    }

    /// Failures injected so far.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::env::StdEnv;
    /// use bloomkv::env::fault::FaultEnv;
    /// let (_env, ctl) = FaultEnv::wrap(StdEnv::shared());
    /// assert_eq!(ctl.injected(), 0);
    /// ```
    pub fn injected(&self) -> u64 {
        self.state.lock().injected
    }

    /// Counts a call of `op` and says whether (and how) it must fail.
    fn check(&self, op: FaultOp) -> Option<FaultKind> {
        let mut st = self.state.lock();
        st.calls[op.index()] += 1;
        let n = st.calls[op.index()];
        let plan = st
            .plans
            .iter()
            .find(|p| p.op == op && (n == p.at || (p.sticky && n > p.at)))
            .copied()?;
        st.injected += 1;
        Some(plan.kind)
    }

    fn created(&self, path: &Path) {
        let mut st = self.state.lock();
        st.synced_len.insert(path.to_path_buf(), 0);
        st.unsynced_creates.insert(path.to_path_buf());
    }

    fn synced(&self, path: &Path, len: u64) {
        self.state.lock().synced_len.insert(path.to_path_buf(), len);
    }

    /// An fsync made the first `len` bytes of `path` durable; another running beside it may
    /// have recorded more already.
    fn synced_at_least(&self, path: &Path, len: u64) {
        let mut st = self.state.lock();
        if let Some(synced) = st.synced_len.get_mut(path) {
            *synced = (*synced).max(len);
        }
    }

    /// Turns the directory into what a power cut at this moment would leave: un-synced
    /// renames are undone (newest first), files created since their directory's last fsync
    /// are deleted, and every other tracked file is cut to its last synced length.
    /// Close every database using the env first. `env` is the env the [`FaultEnv`] wraps
    /// (the real files), not the [`FaultEnv`] itself, whose calls take the controller's lock
    /// that this holds.
    ///
    /// # Errors
    /// I/O errors from the underlying env while rewinding.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::env::StdEnv;
    /// use bloomkv::env::fault::FaultEnv;
    /// let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
    /// let dir = tempfile::tempdir()?;
    /// let opts = bloomkv::Options { env: env.clone(), ..Default::default() };
    /// let db = bloomkv::Db::open(dir.path(), opts.clone())?;
    /// db.put("synced", "1")?;
    /// db.sync_wal()?;
    /// db.put("unsynced", "2")?;
    /// drop(db);
    /// ctl.crash(&StdEnv)?; // a power cut now
    /// let db = bloomkv::Db::open(dir.path(), opts)?;
    /// assert_eq!(db.get("synced")?, Some(b"1".to_vec()));
    /// assert_eq!(db.get("unsynced")?, None);
    /// # Ok(())
    /// # }
    /// ```
    pub fn crash(&self, env: &dyn Env) -> Result<()> {
        let mut st = self.state.lock();
        for r in std::mem::take(&mut st.unsynced_renames).into_iter().rev() {
            match r.old_contents {
                Some(bytes) => {
                    let mut f = env.create_writable(&r.to)?;
                    f.append(&bytes)?;
                    f.sync()?;
                    st.synced_len.insert(r.to.clone(), bytes.len() as u64);
                }
                None => {
                    let _ = env.remove_file(&r.to);
                    st.synced_len.remove(&r.to);
                }
            }
        }
        for path in std::mem::take(&mut st.unsynced_creates) {
            let _ = env.remove_file(&path);
            st.synced_len.remove(&path);
        }
        for (path, &len) in &st.synced_len {
            if env.exists(path) && env.file_size(path)? > len {
                env.truncate(path, len)?;
            }
        }
        Ok(())
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
}

struct FaultWritable {
    inner: Box<dyn WritableFile>,
    path: PathBuf,
    ctl: Arc<FaultController>,
    /// Bytes handed to the OS: what an fsync through a sync handle makes durable.
    flushed: Arc<AtomicU64>,
}

impl WritableFile for FaultWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        match self.ctl.check(FaultOp::Write) {
            None => self.inner.append(data),
            Some(FaultKind::ShortWrite) => {
                // Part of the buffer reaches the file, as with a write cut by a full disk.
                self.inner.append(&data[..data.len() / 2])?;
                Err(FaultKind::ShortWrite.error(&self.path))
            }
            Some(kind) => Err(kind.error(&self.path)),
        }
    }

    fn flush(&mut self) -> Result<()> {
        self.inner.flush()?;
        self.flushed.store(self.inner.len(), Ordering::Release);
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        if let Some(kind) = self.ctl.check(FaultOp::Sync) {
            // A failed fsync may still have pushed the buffer to the OS; do that, so the
            // caller cannot rely on the bytes being absent either.
            let _ = self.inner.flush();
            return Err(kind.error(&self.path));
        }
        self.ctl.delay_sync();
        if self.ctl.simulated_sync() {
            self.inner.flush()?;
        } else {
            self.inner.sync()?;
        }
        self.flushed.store(self.inner.len(), Ordering::Release);
        // An fsync through a sync handle may have run beside this one and recorded more.
        self.ctl.synced_at_least(&self.path, self.inner.len());
        Ok(())
    }

    fn len(&self) -> u64 {
        self.inner.len()
    }

    /// Counted and failed like [`WritableFile::sync`] (as [`FaultOp::Sync`]); it makes
    /// durable what had been flushed when it started.
    fn sync_handle(&self) -> Option<SyncHandle> {
        let inner = if self.ctl.simulated_sync() {
            None
        } else {
            Some(self.inner.sync_handle()?)
        };
        let (ctl, path, flushed) = (
            Arc::clone(&self.ctl),
            self.path.clone(),
            Arc::clone(&self.flushed),
        );
        Some(Arc::new(move || {
            if let Some(kind) = ctl.check(FaultOp::Sync) {
                return Err(kind.error(&path));
            }
            let len = flushed.load(Ordering::Acquire);
            ctl.delay_sync();
            if let Some(sync) = &inner {
                sync()?;
            }
            ctl.synced_at_least(&path, len);
            Ok(())
        }))
    }
}

impl Env for FaultEnv {
    fn create_writable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        if let Some(kind) = self.ctl.check(FaultOp::Create) {
            return Err(kind.error(path));
        }
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
        self.inner.open_random_access(path)
    }

    fn open_mapped(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.inner.open_mapped(path)
    }

    fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
        self.inner.read_all(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        if let Some(kind) = self.ctl.check(FaultOp::Rename) {
            return Err(kind.error(from));
        }
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
        self.inner.remove_file(path)?;
        let mut st = self.ctl.state.lock();
        st.synced_len.remove(path);
        st.unsynced_creates.remove(path);
        Ok(())
    }

    fn truncate(&self, path: &Path, len: u64) -> Result<()> {
        if let Some(kind) = self.ctl.check(FaultOp::Truncate) {
            return Err(kind.error(path));
        }
        self.inner.truncate(path, len)?;
        self.ctl.synced(path, len);
        Ok(())
    }

    fn create_dir_all(&self, path: &Path) -> Result<()> {
        self.inner.create_dir_all(path)
    }

    fn list_dir(&self, path: &Path) -> Result<Vec<String>> {
        self.inner.list_dir(path)
    }

    fn sync_dir(&self, path: &Path) -> Result<()> {
        if let Some(kind) = self.ctl.check(FaultOp::SyncDir) {
            return Err(kind.error(path));
        }
        if !self.ctl.simulated_sync() {
            self.inner.sync_dir(path)?;
        }
        let mut st = self.ctl.state.lock();
        st.unsynced_creates.retain(|p| p.parent() != Some(path));
        st.unsynced_renames.retain(|r| r.to.parent() != Some(path));
        Ok(())
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

    /// A new name is a creation: it fails as [`FaultOp::Create`] does, and a crash before its
    /// directory is synced takes the name away (the data is the source's, synced or not).
    fn hard_link(&self, from: &Path, to: &Path) -> Result<()> {
        if let Some(kind) = self.ctl.check(FaultOp::Create) {
            return Err(kind.error(to));
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::StdEnv;

    #[test]
    fn nth_call_fails_once_and_sticky_keeps_failing() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
        let mut f = env.create_writable(&dir.path().join("a"))?;
        ctl.fail_nth(FaultOp::Write, 2, FaultKind::Eio);
        f.append(b"1")?;
        let e = f.append(b"2").unwrap_err();
        assert!(e.to_string().contains("os error 5"), "{e}");
        f.append(b"3")?;
        ctl.fail_from_nth(FaultOp::Sync, 1, FaultKind::NoSpace);
        assert!(f.sync().is_err());
        assert!(f.sync().is_err());
        assert_eq!(ctl.injected(), 3);
        Ok(())
    }

    #[test]
    fn crash_cuts_to_synced_length_and_forgets_unsynced_names() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
        let a = dir.path().join("a");
        let mut f = env.create_writable(&a)?;
        f.append(b"durable")?;
        f.sync()?;
        env.sync_dir(dir.path())?;
        f.append(b" lost")?;
        f.flush()?;
        drop(f);
        let b = dir.path().join("b");
        let mut g = env.create_writable(&b)?;
        g.append(b"never named durably")?;
        g.sync()?;
        drop(g);
        // An un-synced rename over `a` is undone by the crash.
        let t = dir.path().join("t");
        let mut h = env.create_writable(&t)?;
        h.append(b"new")?;
        h.sync()?;
        drop(h);
        env.rename(&t, &a)?;
        ctl.crash(&StdEnv)?;
        assert_eq!(std::fs::read(&a)?, b"durable");
        assert!(!b.exists());
        Ok(())
    }

    #[test]
    fn truncate_fails_as_planned_beside_another_plan() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
        let a = dir.path().join("a");
        let mut f = env.create_writable(&a)?;
        f.append(b"abcdef")?;
        f.flush()?;
        ctl.fail_nth(FaultOp::Sync, 1, FaultKind::Eio);
        ctl.also_fail_nth(FaultOp::Truncate, 1, FaultKind::NoSpace);
        assert!(f.sync().is_err());
        let e = env.truncate(&a, 3).unwrap_err();
        assert!(e.to_string().contains("os error 28"), "{e}");
        assert_eq!(
            std::fs::read(&a)?,
            b"abcdef",
            "a failed truncate cuts nothing"
        );
        env.truncate(&a, 3)?;
        assert_eq!(std::fs::read(&a)?, b"abc");
        assert_eq!(ctl.injected(), 2);
        Ok(())
    }

    #[test]
    fn short_write_leaves_a_prefix() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
        let a = dir.path().join("a");
        let mut f = env.create_writable(&a)?;
        ctl.fail_nth(FaultOp::Write, 1, FaultKind::ShortWrite);
        assert!(f.append(b"abcdef").is_err());
        f.flush()?;
        drop(f);
        assert_eq!(std::fs::read(&a)?, b"abc");
        Ok(())
    }
}
