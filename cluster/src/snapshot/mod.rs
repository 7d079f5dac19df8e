//! Snapshots are checkpoints of the state-machine database.
//!
//! `snapshots/snap-<index>-<n>/` holds a checkpoint ([`Db::checkpoint`]: tables hard-linked,
//! the memtables in a fresh WAL) and its `RAFT-SNAPSHOT` metadata. A build checkpoints the
//! live database into `build-<n>.tmp`, reads the applied log id and membership from the
//! checkpoint itself (opened read-only, so they match its data exactly), writes the
//! metadata synced, renames the directory into place and fsyncs `snapshots/`. The newest
//! snapshot is kept, and any older one only while it is being sent (each holder of its
//! [`SnapshotData`] keeps its directory alive).
//!
//! Since [`Db::checkpoint`] leaves the live database's WAL durable up to the checkpoint,
//! a built snapshot also means the live state machine is durable up to it: openraft purges
//! the log up to a snapshot only after the build returns, so the log is never purged above
//! what this node's state machine holds on disk.

pub(crate) mod meta_file;
pub(crate) mod stream;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bloomkv::env::Env;
use bloomkv::{Db, Options};
use parking_lot::Mutex;

use crate::error::{Error, Result};
use crate::fsutil::{self, DirGuard};
use crate::sm_meta;
use crate::types::{SnapshotMeta, TypeConfig};

const SNAP_PREFIX: &str = "snap-";
const INCOMING_PREFIX: &str = "incoming-";

/// openraft's snapshot data: a snapshot directory on this machine, kept on disk while this
/// value lives.
pub(crate) struct SnapshotData {
    pub(crate) dir: PathBuf,
    _keep: Arc<DirGuard>,
}

impl std::fmt::Debug for SnapshotData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapshotData")
            .field("dir", &self.dir)
            .finish()
    }
}

/// One stored snapshot.
#[derive(Clone)]
pub(crate) struct Stored {
    pub(crate) meta: SnapshotMeta,
    guard: Arc<DirGuard>,
}

impl Stored {
    pub(crate) fn dir(&self) -> &Path {
        self.guard.path()
    }

    pub(crate) fn to_openraft(&self) -> openraft::Snapshot<TypeConfig> {
        openraft::Snapshot {
            meta: self.meta.clone(),
            snapshot: Box::new(SnapshotData {
                dir: self.dir().to_path_buf(),
                _keep: Arc::clone(&self.guard),
            }),
        }
    }
}

/// The `snapshots/` directory.
pub(crate) struct SnapshotStore {
    dir: PathBuf,
    env: Arc<dyn Env>,
    options: Options,
    current: Mutex<Option<Stored>>,
    next: AtomicU64,
}

fn numbered(name: &str, prefix: &str) -> Option<u64> {
    let rest = name.strip_prefix(prefix)?;
    let digits = rest.rsplit('-').next()?;
    let digits = digits.strip_suffix(".tmp").unwrap_or(digits);
    digits.parse().ok()
}

fn index_of(meta: &SnapshotMeta) -> u64 {
    meta.last_log_id.map_or(0, |l| l.index)
}

impl SnapshotStore {
    /// Opens `dir`, keeping the newest whole snapshot and removing everything else (older
    /// snapshots, builds and transfers a crash interrupted).
    pub(crate) fn open(dir: PathBuf, options: Options) -> Result<SnapshotStore> {
        let env = Arc::clone(&options.env);
        let io = |e| Error::db(format!("reading {}", dir.display()), e);
        env.create_dir_all(&dir).map_err(io)?;
        let mut best: Option<(SnapshotMeta, String)> = None;
        let mut highest = 0u64;
        let mut remove = Vec::new();
        for name in env.list_dir(&dir).map_err(io)? {
            for prefix in [SNAP_PREFIX, INCOMING_PREFIX, "build-", "install-"] {
                if let Some(n) = numbered(&name, prefix) {
                    highest = highest.max(n);
                }
            }
            if name.starts_with(SNAP_PREFIX)
                && !name.ends_with(".tmp")
                && !name.contains(".checkpoint-tmp")
            {
                match meta_file::read(env.as_ref(), &dir.join(&name)) {
                    Ok(meta) => {
                        let newer = best.as_ref().is_none_or(|(b, _)| {
                            (meta.last_log_id, &meta.snapshot_id) > (b.last_log_id, &b.snapshot_id)
                        });
                        if newer {
                            if let Some((_, old)) = best.take() {
                                remove.push(old);
                            }
                            best = Some((meta, name));
                        } else {
                            remove.push(name);
                        }
                    }
                    // A directory whose metadata is unreadable was never renamed into place
                    // whole; nothing refers to it.
                    Err(_) => remove.push(name),
                }
            } else {
                remove.push(name);
            }
        }
        for name in remove {
            let p = dir.join(&name);
            if env.is_dir(&p) {
                fsutil::remove_tree(env.as_ref(), &p).map_err(io)?;
            } else {
                env.remove_file(&p).map_err(io)?;
            }
        }
        let current = best.map(|(meta, name)| Stored {
            meta,
            guard: Arc::new(DirGuard::new(dir.join(name), Arc::clone(&env), false)),
        });
        Ok(SnapshotStore {
            dir,
            env,
            options,
            current: Mutex::new(current),
            next: AtomicU64::new(highest + 1),
        })
    }

    pub(crate) fn current(&self) -> Option<Stored> {
        self.current.lock().clone()
    }

    fn take_number(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Makes `s` the current snapshot unless a newer one already is (a build racing an
    /// install); the one not kept is removed once unused.
    fn publish(&self, s: Stored) {
        let mut cur = self.current.lock();
        match cur.as_ref() {
            Some(c) if c.meta.last_log_id > s.meta.last_log_id => s.guard.retire(),
            _ => {
                if let Some(old) = cur.replace(s) {
                    old.guard.retire();
                }
            }
        }
    }

    /// Renames a finished `tmp` directory (checkpoint + metadata) into place, durably.
    fn finish(&self, tmp: &Path, meta: SnapshotMeta, n: u64) -> Result<Stored> {
        let env = self.env.as_ref();
        meta_file::write(env, tmp, &meta)?;
        let path = self
            .dir
            .join(format!("{SNAP_PREFIX}{:020}-{n:06}", index_of(&meta)));
        env.rename(tmp, &path)
            .map_err(|e| Error::db("renaming a snapshot into place", e))?;
        env.sync_dir(&self.dir)
            .map_err(|e| Error::db("syncing the snapshot directory", e))?;
        let s = Stored {
            meta,
            guard: Arc::new(DirGuard::new(path, Arc::clone(&self.env), false)),
        };
        self.publish(s.clone());
        Ok(s)
    }

    /// Builds a snapshot of `db` (the live state-machine database). `node` names the
    /// builder in the snapshot id.
    pub(crate) fn build(&self, db: &Db, node: u64) -> Result<Stored> {
        let n = self.take_number();
        let tmp = self.dir.join(format!("build-{n:06}.tmp"));
        fsutil::remove_tree(self.env.as_ref(), &tmp)
            .map_err(|e| Error::db("removing a stale snapshot build", e))?;
        db.checkpoint(&tmp)
            .map_err(|e| Error::db("checkpointing the state machine", e))?;
        let result = (|| {
            let ro = Db::open_read_only(&tmp, self.options.clone())
                .map_err(|e| Error::db("opening a new checkpoint", e))?;
            let st = sm_meta::read(&ro)?;
            drop(ro);
            let meta = SnapshotMeta {
                last_log_id: st.applied,
                last_membership: st.membership,
                snapshot_id: format!(
                    "{}-{}-{node}-{n}",
                    st.applied.map_or(0, |l| l.leader_id.term),
                    st.applied.map_or(0, |l| l.index)
                ),
            };
            self.finish(&tmp, meta, n)
        })();
        if result.is_err() {
            let _ = fsutil::remove_tree(self.env.as_ref(), &tmp);
        }
        result
    }

    /// Stores a copy of the snapshot database in `src` (received or another node's) with
    /// `meta` as this node's current snapshot.
    pub(crate) fn adopt(&self, meta: &SnapshotMeta, src: &Path) -> Result<Stored> {
        let n = self.take_number();
        let tmp = self.dir.join(format!("install-{n:06}.tmp"));
        fsutil::remove_tree(self.env.as_ref(), &tmp)
            .map_err(|e| Error::db("removing a stale snapshot install", e))?;
        let result = (|| {
            let db = Db::open_read_only(src, self.options.clone())
                .map_err(|e| Error::db(format!("opening snapshot {}", src.display()), e))?;
            let st = sm_meta::read(&db)?;
            if st.applied != meta.last_log_id {
                return Err(Error::Storage(format!(
                    "snapshot {} holds state up to {:?} but its metadata says {:?}",
                    src.display(),
                    st.applied,
                    meta.last_log_id
                )));
            }
            db.checkpoint(&tmp)
                .map_err(|e| Error::db("copying a received snapshot", e))?;
            drop(db);
            self.finish(&tmp, meta.clone(), n)
        })();
        if result.is_err() {
            let _ = fsutil::remove_tree(self.env.as_ref(), &tmp);
        }
        result
    }

    /// A new empty directory to receive a snapshot into; removed when the returned data
    /// (and every copy of its guard) is dropped.
    pub(crate) fn incoming(&self) -> Result<SnapshotData> {
        let n = self.take_number();
        let dir = self.dir.join(format!("{INCOMING_PREFIX}{n:06}"));
        let io = |e| Error::db("creating a snapshot receive directory", e);
        fsutil::remove_tree(self.env.as_ref(), &dir).map_err(io)?;
        self.env.create_dir_all(&dir).map_err(io)?;
        Ok(SnapshotData {
            _keep: Arc::new(DirGuard::new(dir.clone(), Arc::clone(&self.env), true)),
            dir,
        })
    }
}

/// The bytes of the files directly in `dir` (a snapshot's), for the log; 0 for what
/// cannot be read.
pub(crate) fn dir_bytes(env: &dyn bloomkv::env::Env, dir: &Path) -> u64 {
    env.list_dir(dir)
        .unwrap_or_default()
        .iter()
        .map(|name| env.file_size(&dir.join(name)).unwrap_or(0))
        .sum()
}
