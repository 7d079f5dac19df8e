//! The databases this process has open with a lock, so that when an open fails on a lock this
//! very process holds, the error can say what keeps it: a `Db` handle, or a `Snapshot`
//! (which keeps its `Db` open until it is dropped).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use super::handle::Handle;
use crate::error::Error;

static OPEN: Mutex<Vec<(PathBuf, Weak<Handle>)>> = Mutex::new(Vec::new());

fn canonical(dir: &Path) -> PathBuf {
    std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())
}

/// Records `handle`, just opened on `dir` with a lock.
pub(super) fn register(dir: &Path, handle: &Arc<Handle>) {
    let mut open = OPEN.lock();
    open.retain(|(_, h)| h.strong_count() > 0);
    open.push((canonical(dir), Arc::downgrade(handle)));
}

/// `e`, and if it is a lock on `dir` this process holds, what holds it here.
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
    let what = if parts.is_empty() {
        "a handle of it is still closing, or an iterator keeps one open".to_string()
    } else {
        format!("it is still open through {}", parts.join(" and "))
    };
    Error::Locked(conflict.with_in_process(what))
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
