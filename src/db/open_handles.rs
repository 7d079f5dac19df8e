//! The databases this process holds the lock of, and why, so that when an open fails on a
//! lock this very process holds, the error can say what keeps it: a `Db` handle, a
//! `Snapshot` (which keeps its `Db` open until it is dropped), or an open, a close or a repair
//! under way in another thread.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use super::handle::Handle;
use crate::error::Error;

static OPEN: Mutex<Vec<(PathBuf, Weak<Handle>)>> = Mutex::new(Vec::new());

/// What this process is doing with a database whose lock it holds while no handle of it is
/// open.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Activity {
    /// `Db::open` or `Db::open_read_only` has taken the lock and not returned yet.
    Opening,
    /// The last handle was dropped: its background threads are being stopped and its files
    /// closed; the lock goes last.
    Closing,
    /// `repair` runs.
    Repairing,
}

static BUSY: Mutex<Vec<(u64, PathBuf, Activity)>> = Mutex::new(Vec::new());

/// An [`Activity`] under way, recorded until this is dropped.
#[derive(Debug)]
pub(super) struct Busy {
    id: u64,
}

impl Drop for Busy {
    fn drop(&mut self) {
        BUSY.lock().retain(|(id, _, _)| *id != self.id);
    }
}

/// Records that `what` is under way on `dir` until the returned marker is dropped.
pub(super) fn busy(dir: &Path, what: Activity) -> Busy {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    BUSY.lock().push((id, canonical(dir), what));
    Busy { id }
}

fn canonical(dir: &Path) -> PathBuf {
    std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())
}

/// Records `handle`, just opened on `dir` with a lock.
pub(super) fn register(dir: &Path, handle: &Arc<Handle>) {
    let mut open = OPEN.lock();
    open.retain(|(_, h)| h.strong_count() > 0);
    open.push((canonical(dir), Arc::downgrade(handle)));
}

/// `e`, and if it is a lock on `dir` this process holds, what holds it here. The caller's
/// own [`Busy`] marker, if it had one, must be gone.
pub(super) fn explain(dir: &Path, e: Error) -> Error {
    let Error::Locked(conflict) = e else {
        return e;
    };
    if !conflict.pids.contains(&std::process::id()) {
        return Error::Locked(conflict);
    }
    let dir = canonical(dir);
    let handles: Vec<Arc<Handle>> = OPEN
        .lock()
        .iter()
        .filter(|(d, _)| *d == dir)
        .filter_map(|(_, h)| h.upgrade())
        .collect();
    let mut parts = Vec::new();
    for h in &handles {
        // Every Snapshot holds one clone of its Db's handle; `upgrade` made one more.
        let snapshots: usize = h.inner.snapshots.lock().values().sum();
        let dbs = Arc::strong_count(h).saturating_sub(1 + snapshots);
        if dbs > 0 {
            parts.push(plural(dbs, "Db handle", "Db handles"));
        }
        if snapshots > 0 {
            parts.push(format!(
                "{} (a Snapshot keeps its Db open until it is dropped)",
                plural(snapshots, "Snapshot", "Snapshots")
            ));
        }
    }
    let mut under_way: Vec<Activity> = BUSY
        .lock()
        .iter()
        .filter(|(_, d, _)| *d == dir)
        .map(|(_, _, what)| *what)
        .collect();
    under_way.sort_unstable();
    under_way.dedup();
    let what = if !parts.is_empty() {
        format!(
            "it is still open through {}; drop them before opening the database again (or \
             share a clone of the open Db)",
            parts.join(" and ")
        )
    } else if !under_way.is_empty() {
        let doing: Vec<&str> = under_way
            .iter()
            .map(|what| match what {
                Activity::Opening => {
                    "another thread is opening it (one Db per database and process: share a \
                     clone of it)"
                }
                Activity::Closing => {
                    "its last handle was dropped and it is closing in another thread (the \
                     lock goes once its background work has stopped and its files are \
                     closed)"
                }
                Activity::Repairing => "another thread is repairing it",
            })
            .collect();
        doing.join("; ")
    } else {
        "no Db, Snapshot, open, close or repair of it is under way here: a lock taken \
         through Env::lock_file holds it, or its holder let go of it just now"
            .to_string()
    };
    Error::Locked(conflict.with_in_process(what))
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{Env, StdEnv};
    use crate::{Db, Options};

    fn locked_here(dir: &Path) -> Error {
        Error::Locked(
            crate::LockConflict::new(dir, crate::LockHolder::Writer)
                .with_pids(vec![std::process::id()]),
        )
    }

    #[test]
    fn an_activity_under_way_is_named_until_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        for (what, says) in [
            (Activity::Opening, "another thread is opening it"),
            (Activity::Closing, "it is closing in another thread"),
            (Activity::Repairing, "another thread is repairing it"),
        ] {
            let marker = busy(dir.path(), what);
            let text = explain(dir.path(), locked_here(dir.path())).to_string();
            assert!(text.contains(says), "{text}");
            drop(marker);
            let text = explain(dir.path(), locked_here(dir.path())).to_string();
            assert!(!text.contains(says), "{text}");
        }
    }

    #[test]
    fn a_lock_taken_through_the_env_is_named_when_nothing_else_is() {
        let dir = tempfile::tempdir().unwrap();
        let lock = StdEnv.lock_file(&dir.path().join("LOCK")).unwrap();
        let text = Db::open(dir.path(), Options::default())
            .err()
            .unwrap()
            .to_string();
        assert!(text.contains("which is this process"), "{text}");
        assert!(text.contains("Env::lock_file"), "{text}");
        drop(lock);
        drop(Db::open(dir.path(), Options::default()).unwrap());
    }
}
