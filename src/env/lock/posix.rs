//! The LOCK file's lock on unix: a POSIX record lock (`fcntl` `F_SETLK` over the whole file).
//!
//! Not `flock`: a `flock` lock belongs to an open file description, and a child process gets
//! a copy of every descriptor of its parent between `fork` and `exec`; so a database closed
//! while another thread starts a program stays locked until that child has called `exec`,
//! and reopening it in that window fails with the lock held by this very process. A record
//! lock belongs to the process and no child inherits it (LevelDB and RocksDB lock this way).
//!
//! Two rules of record locks shape this module. The kernel grants a process a lock it already
//! holds, so the holders of this process are kept here ([`HELD`]): a second holder is refused
//! before the kernel is asked, unless both are shared, when the second joins the first. And
//! closing *any* descriptor of a file drops every record lock the process has on it: so a
//! locked file has one descriptor, shared by this process's holders, nothing here opens the
//! file while this process holds it (the registry is asked before anything is opened), and
//! the last holder closes it with the registry locked, before anyone here can lock it anew.

use std::fs::{File, Metadata, OpenOptions};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use parking_lot::Mutex;
use rustix::fs::{FlockOperation, fcntl_lock};
use rustix::io::Errno;
use rustix::process::{Flock, FlockType, fcntl_getlk};

use super::Mode;
use crate::error::{Error, LockHolder, Result};

/// A file's identity, the same through every path that names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    fn of(meta: &Metadata) -> FileId {
        FileId {
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }
}

/// A file this process holds a lock on.
struct Entry {
    id: FileId,
    /// The descriptor the lock was taken through.
    file: File,
    /// `None`: held exclusively; `Some(n)`: shared by `n` holders in this process.
    shared: Option<usize>,
    /// Descriptors of the file opened by a `lock` that found it held only once it had
    /// opened it (the path was renamed onto it meanwhile): closing them would release the
    /// lock, so they are closed with `file`.
    strays: Vec<File>,
}

/// Every file this process holds a lock on.
static HELD: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// One holder's share of a lock this process holds; dropping the last one releases it.
#[derive(Debug)]
pub(super) struct Held {
    id: FileId,
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut held = HELD.lock();
        let Some(at) = held.iter().position(|e| e.id == self.id) else {
            return;
        };
        if let Some(n) = held[at].shared.as_mut()
            && *n > 1
        {
            *n -= 1;
            return;
        }
        let entry = held.swap_remove(at);
        // Closing the descriptor releases the lock anyway; unlocking first says so. Both
        // happen with the registry locked, so no thread of this process has opened the file
        // for a new lock that this close would drop.
        let _ = fcntl_lock(&entry.file, FlockOperation::NonBlockingUnlock);
        drop(entry);
    }
}

/// Takes the lock on `path` as `mode` asks, or says who holds it ([`Error::Locked`]).
pub(super) fn lock(path: &Path, mode: Mode) -> Result<Held> {
    let mut held = HELD.lock();
    // Asked before anything is opened: opening and closing the file would release a lock
    // this process holds on it.
    if let Ok(meta) = std::fs::metadata(path)
        && let Some(entry) = held.iter_mut().find(|e| e.id == FileId::of(&meta))
    {
        return join(entry, path, mode);
    }
    let file = open(path, mode)?;
    let id = FileId::of(&file.metadata().map_err(|e| Error::io(path, e))?);
    if let Some(entry) = held.iter_mut().find(|e| e.id == id) {
        entry.strays.push(file);
        return join(entry, path, mode);
    }
    take(&file, path, mode)?;
    if mode == Mode::Exclusive {
        // Who holds it, for the error an opener on a system that does not say gets
        // (docs/FORMAT.md, LOCK). Advisory only: a failure to write it changes nothing else.
        let _ = file
            .set_len(0)
            .and_then(|()| (&file).write_all(format!("{}\n", std::process::id()).as_bytes()));
    }
    held.push(Entry {
        id,
        file,
        shared: (mode == Mode::Shared).then_some(1),
        strays: Vec::new(),
    });
    Ok(Held { id })
}

/// A second holder in this process of a file it holds: a shared one joins shared holders;
/// anything else is refused, naming this process.
fn join(entry: &mut Entry, path: &Path, mode: Mode) -> Result<Held> {
    match (mode, entry.shared.as_mut()) {
        (Mode::Shared, Some(n)) => {
            *n += 1;
            Ok(Held { id: entry.id })
        }
        (_, shared) => {
            let holder = match shared {
                Some(_) => LockHolder::ReadOnly,
                None => LockHolder::Writer,
            };
            Err(super::locked(path, holder, vec![std::process::id()]))
        }
    }
}

fn open(path: &Path, mode: Mode) -> Result<File> {
    let file = match mode {
        // Read and write: a write lock needs a descriptor open for writing.
        Mode::Exclusive => OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path),
        // Reading only, so that it works on a read-only file system.
        Mode::Shared => File::open(path),
    };
    file.map_err(|e| Error::io(path, e))
}

/// Takes the lock through `file`, this process holding none on it.
fn take(file: &File, path: &Path, mode: Mode) -> Result<()> {
    let (operation, kind) = match mode {
        Mode::Exclusive => (
            FlockOperation::NonBlockingLockExclusive,
            FlockType::WriteLock,
        ),
        Mode::Shared => (FlockOperation::NonBlockingLockShared, FlockType::ReadLock),
    };
    // The holder may let go between the refusal and the question who holds it: then the lock
    // is tried again.
    for _ in 0..3 {
        match fcntl_lock(file, operation) {
            Ok(()) => return Ok(()),
            Err(e) if e == Errno::AGAIN || e == Errno::ACCESS => {}
            Err(e) => return Err(Error::io(path, e.into())),
        }
        match fcntl_getlk(file, &Flock::from(kind)) {
            Ok(Some(blocking)) => return Err(conflict(path, &blocking)),
            Ok(None) => continue,
            Err(e) => return Err(Error::io(path, e.into())),
        }
    }
    Err(super::locked(path, LockHolder::Writer, Vec::new()))
}

/// The error for a lock refused because of `blocking` (as `F_GETLK` describes it): its kind
/// tells a writer from readers, and its process id names the holder. Readers may be many; on
/// Linux `/proc/locks` names them all.
fn conflict(path: &Path, blocking: &Flock) -> Error {
    let holder = match blocking.typ {
        FlockType::ReadLock => LockHolder::ReadOnly,
        _ => LockHolder::Writer,
    };
    let mut pids: Vec<u32> = blocking
        .pid
        .and_then(|p| u32::try_from(p.as_raw_nonzero().get()).ok())
        .into_iter()
        .collect();
    #[cfg(target_os = "linux")]
    if holder == LockHolder::ReadOnly {
        pids.extend(proc_locks_holders(path));
    }
    super::locked(path, holder, pids)
}

/// The pids `/proc/locks` gives for record locks on `path`'s file (waiters left out).
#[cfg(target_os = "linux")]
fn proc_locks_holders(path: &Path) -> Vec<u32> {
    let (Ok(meta), Ok(table)) = (
        std::fs::metadata(path),
        std::fs::read_to_string("/proc/locks"),
    ) else {
        return Vec::new();
    };
    let dev = meta.dev();
    // The kernel's encoding of a device number (glibc's gnu_dev_major / gnu_dev_minor).
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    let id = format!("{major:02x}:{minor:02x}:{}", meta.ino());
    table
        .lines()
        .filter(|line| !line.contains("->"))
        .filter_map(|line| {
            // "1: POSIX  ADVISORY  READ 4242 fd:01:1234 0 EOF"
            let fields: Vec<&str> = line.split_whitespace().collect();
            (fields.len() >= 6 && fields[1] == "POSIX" && fields[5] == id)
                .then(|| fields[4].parse().ok())
                .flatten()
        })
        .collect()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// How many record locks `/proc/locks` lists for this process on `path`'s file.
    fn mine(path: &Path) -> usize {
        let me = std::process::id();
        proc_locks_holders(path)
            .into_iter()
            .filter(|&p| p == me)
            .count()
    }

    #[test]
    fn shared_holders_here_share_one_lock_until_the_last_goes() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("LOCK");
        drop(lock(&path, Mode::Exclusive)?);
        assert_eq!(mine(&path), 0);
        let a = lock(&path, Mode::Shared)?;
        let b = lock(&path, Mode::Shared)?;
        assert_eq!(mine(&path), 1);
        drop(a);
        assert_eq!(mine(&path), 1, "b still holds it");
        let err = lock(&path, Mode::Exclusive).unwrap_err();
        assert!(err.to_string().contains("read-only openers"), "{err}");
        assert_eq!(mine(&path), 1, "the refusal left it in force");
        drop(b);
        assert_eq!(mine(&path), 0);
        Ok(())
    }

    #[test]
    fn a_refusal_through_another_name_of_the_file_keeps_the_lock() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("LOCK");
        let held = lock(&path, Mode::Exclusive)?;
        let hard = dir.path().join("hard");
        let soft = dir.path().join("soft");
        std::fs::hard_link(&path, &hard)?;
        std::os::unix::fs::symlink(&path, &soft)?;
        for name in [&path, &hard, &soft] {
            for mode in [Mode::Exclusive, Mode::Shared] {
                let err = lock(name, mode).unwrap_err();
                let Error::Locked(c) = &err else {
                    panic!("{err}")
                };
                assert_eq!(
                    (c.holder, c.pids.as_slice()),
                    (LockHolder::Writer, [std::process::id()].as_slice())
                );
            }
        }
        assert_eq!(mine(&path), 1, "the refusals left it in force");
        drop(held);
        assert_eq!(mine(&path), 0);
        drop(lock(&soft, Mode::Exclusive)?);
        Ok(())
    }
}
