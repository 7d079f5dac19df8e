//! The advisory lock on a database's `LOCK` file ([`FileLock`]): exclusive for a writer,
//! shared by read-only openers (docs/FORMAT.md, `LOCK`).
//!
//! On unix it is a POSIX record lock, which belongs to the process and which no child
//! process inherits (posix.rs); elsewhere the standard library's file lock.

#[cfg(not(unix))]
mod portable;
#[cfg(unix)]
mod posix;

#[cfg(not(unix))]
use portable as imp;
#[cfg(unix)]
use posix as imp;

use std::path::{Path, PathBuf};

use crate::error::{Error, LockConflict, LockHolder, Result};

/// An advisory lock on a file (exclusive, or shared with other shared holders), released on
/// drop.
///
/// On unix the lock belongs to the process (a POSIX record lock), so a child process never
/// holds it, not even between its `fork` and `exec`. The process keeps one descriptor of the
/// file while it holds the lock; it must not open the file in any other way meanwhile, since
/// closing any descriptor of a file drops the process's record locks on it.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::env::{Env, StdEnv};
/// let dir = tempfile::tempdir()?;
/// let lock = StdEnv.lock_file(&dir.path().join("LOCK"))?;
/// assert!(StdEnv.lock_file(&dir.path().join("LOCK")).is_err()); // held
/// drop(lock); // released
/// StdEnv.lock_file(&dir.path().join("LOCK"))?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct FileLock {
    _held: imp::Held,
    path: PathBuf,
}

impl FileLock {
    /// The locked file.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::env::{Env, StdEnv};
    /// let dir = tempfile::tempdir()?;
    /// let lock = StdEnv.lock_file(&dir.path().join("LOCK"))?;
    /// assert_eq!(lock.path(), dir.path().join("LOCK"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// How a lock is wanted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// By a writer, alone; the file is created if missing and gets the writer's process id.
    Exclusive,
    /// By a reader, beside other readers; the file must exist, and is opened for reading only.
    Shared,
}

/// [`crate::env::Env::lock_file`] on the real file system.
pub(super) fn exclusive(path: &Path) -> Result<FileLock> {
    take(path, Mode::Exclusive)
}

/// [`crate::env::Env::lock_file_shared`] on the real file system.
pub(super) fn shared(path: &Path) -> Result<FileLock> {
    take(path, Mode::Shared)
}

fn take(path: &Path, mode: Mode) -> Result<FileLock> {
    Ok(FileLock {
        _held: imp::lock(path, mode)?,
        path: path.to_path_buf(),
    })
}

/// The error for a lock at `lock_path` (a database's LOCK file) held by `holder`, whose
/// process ids are `pids` (empty when unknown): for a writer whose id the system did not
/// give, the one in the file, which each writer writes there when it takes the lock.
fn locked(lock_path: &Path, holder: LockHolder, mut pids: Vec<u32>) -> Error {
    if pids.is_empty() && holder == LockHolder::Writer {
        pids.extend(pid_in_file(lock_path));
    }
    pids.sort_unstable();
    pids.dedup();
    Error::Locked(
        LockConflict::new(lock_path.parent().unwrap_or(lock_path), holder).with_pids(pids),
    )
}

/// The process id a writer wrote into the LOCK file. Read only when this process holds no
/// lock on the file (on unix, closing the descriptor read through would drop it).
fn pid_in_file(lock_path: &Path) -> Option<u32> {
    std::fs::read_to_string(lock_path)
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
}
