//! The LOCK file's lock where there are no POSIX record locks: the standard library's file
//! lock (`LockFileEx` on Windows), which belongs to the open file, so two holders in one
//! process exclude each other as two processes do.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::Path;

use super::Mode;
use crate::error::{Error, LockHolder, Result};

/// A lock held through its own open file; closing the file releases it.
#[derive(Debug)]
pub(super) struct Held {
    _file: File,
}

/// Takes the lock on `path` as `mode` asks, or says who holds it ([`Error::Locked`]).
pub(super) fn lock(path: &Path, mode: Mode) -> Result<Held> {
    let file = match mode {
        Mode::Exclusive => OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path),
        Mode::Shared => File::open(path),
    }
    .map_err(|e| Error::io(path, e))?;
    let taken = match mode {
        Mode::Exclusive => file.try_lock(),
        Mode::Shared => file.try_lock_shared(),
    };
    match taken {
        Ok(()) => {
            if mode == Mode::Exclusive {
                // Who holds it, for the error the next opener gets (docs/FORMAT.md, LOCK).
                // Advisory only: a failure to write it changes nothing else.
                let _ = file.set_len(0).and_then(|()| {
                    (&file).write_all(format!("{}\n", std::process::id()).as_bytes())
                });
            }
            Ok(Held { _file: file })
        }
        Err(fs::TryLockError::WouldBlock) => {
            let holder = match mode {
                Mode::Shared => LockHolder::Writer,
                // If a shared lock can be had (and is let go at once), only shared holders,
                // i.e. read-only openers, are there; else a writer.
                Mode::Exclusive => match File::open(path).map(|probe| probe.try_lock_shared()) {
                    Ok(Ok(())) => LockHolder::ReadOnly,
                    _ => LockHolder::Writer,
                },
            };
            Err(super::locked(path, holder, Vec::new()))
        }
        Err(fs::TryLockError::Error(e)) => Err(Error::io(path, e)),
    }
}
