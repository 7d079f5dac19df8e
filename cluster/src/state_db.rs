//! Generations of the state-machine database and the pointer file naming the live one.
//!
//! `sm/POINTER` names the live generation directory (`gen-NNNNNN`). A snapshot install
//! builds the next generation beside it, switches the pointer atomically (temp file, fsync,
//! rename, fsync of the directory) and then swaps the handle readers load; readers still on
//! the old generation finish there, and its directory is removed when the last of them
//! drops it. A crash at any point leaves the pointer naming a whole generation, and startup
//! removes every other one.

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bloomkv::env::Env;
use bloomkv::{Db, Options};

use crate::error::{Error, Result};
use crate::fsutil::{self, DirGuard};

const POINTER: &str = "POINTER";
const GEN_PREFIX: &str = "gen-";

/// A read handle on the state-machine database as it is now: it dereferences to the
/// [`Db`]. Holding it keeps that database open (and its files on disk) even if a snapshot
/// install replaces it meanwhile; take a fresh one for each read.
///
/// # Examples
/// ```no_run
/// # async fn f(node: &bloomkv_cluster::Node) -> Result<(), Box<dyn std::error::Error>> {
/// node.linearizable_read_barrier().await?;
/// let value = node.state_db().get(b"k")?; // `StateDb` derefs to `bloomkv::Db`
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct StateDb(pub(crate) Arc<Generation>);

impl Deref for StateDb {
    type Target = Db;
    fn deref(&self) -> &Db {
        &self.0.db
    }
}

impl std::fmt::Debug for StateDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("StateDb")
            .field(&self.0.cleanup.path())
            .finish()
    }
}

/// One generation: its database, then (dropped after it: fields drop in order) the
/// directory removal that runs once the generation is retired and unused.
pub(crate) struct Generation {
    pub(crate) db: Db,
    cleanup: DirGuard,
}

impl Generation {
    /// Marks the generation replaced: its directory goes when the last handle drops.
    pub(crate) fn retire(&self) {
        self.cleanup.retire();
    }
}

/// The `sm/` directory: creates, opens and points to generations.
pub(crate) struct Generations {
    dir: PathBuf,
    env: Arc<dyn Env>,
    options: Options,
    next: AtomicU64,
}

fn gen_number(name: &str) -> Option<u64> {
    let digits = name.strip_prefix(GEN_PREFIX)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

impl Generations {
    /// `options` are the state database's (its `sync_writes` is turned off: the log is the
    /// durable record, see the crate docs).
    pub(crate) fn new(dir: PathBuf, options: Options) -> Generations {
        let env = Arc::clone(&options.env);
        Generations {
            dir,
            env,
            options: Options {
                sync_writes: false,
                ..options
            },
            next: AtomicU64::new(1),
        }
    }

    fn path_of(&self, n: u64) -> PathBuf {
        self.dir.join(format!("{GEN_PREFIX}{n:06}"))
    }

    fn open_db(&self, path: &Path) -> Result<Db> {
        Db::open(path, self.options.clone()).map_err(|e| {
            Error::db(
                format!("opening the state-machine database {}", path.display()),
                e,
            )
        })
    }

    fn wrap(&self, db: Db, dir: PathBuf) -> Generation {
        Generation {
            db,
            cleanup: DirGuard::new(dir, Arc::clone(&self.env), false),
        }
    }

    /// Opens the live generation, creating the first one in a new directory, and removes
    /// every other generation (left by a crash during an install).
    pub(crate) fn open_live(&self) -> Result<Generation> {
        let env = self.env.as_ref();
        let storage = |e| Error::db(format!("reading {}", self.dir.display()), e);
        env.create_dir_all(&self.dir).map_err(storage)?;
        let pointer = self.dir.join(POINTER);
        let live = if env.exists(&pointer) {
            let bytes = env.read_all(&pointer).map_err(storage)?;
            let text = String::from_utf8_lossy(&bytes);
            let n = gen_number(text.trim_end_matches('\n')).ok_or_else(|| {
                Error::Storage(format!(
                    "{} is damaged: {:?} names no generation",
                    pointer.display(),
                    text
                ))
            })?;
            if !env.is_dir(&self.path_of(n)) {
                return Err(Error::Storage(format!(
                    "{} names {}, which is missing",
                    pointer.display(),
                    self.path_of(n).display()
                )));
            }
            Some(n)
        } else {
            None
        };
        let mut highest = live.unwrap_or(0);
        for name in env.list_dir(&self.dir).map_err(storage)? {
            if let Some(n) = gen_number(&name) {
                highest = highest.max(n);
                if Some(n) != live {
                    fsutil::remove_tree(env, &self.dir.join(&name)).map_err(storage)?;
                }
            }
        }
        self.next.store(highest + 1, Ordering::Relaxed);
        match live {
            Some(n) => {
                let path = self.path_of(n);
                let db = self.open_db(&path)?;
                Ok(self.wrap(db, path))
            }
            None => {
                let n = self.next.fetch_add(1, Ordering::Relaxed);
                let path = self.path_of(n);
                let db = self.open_db(&path)?;
                let g = self.wrap(db, path);
                self.point_to(&g)?;
                Ok(g)
            }
        }
    }

    /// Builds a new generation holding the database in `snapshot_dir` (a checkpoint, read
    /// only: tables are hard-linked, the rest rewritten) and opens it. It is not live until
    /// [`Generations::point_to`].
    pub(crate) fn create_from(&self, snapshot_dir: &Path) -> Result<Generation> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let path = self.path_of(n);
        fsutil::remove_tree(self.env.as_ref(), &path)
            .map_err(|e| Error::db("removing a stale generation", e))?;
        let src = Db::open_read_only(snapshot_dir, self.options.clone())
            .map_err(|e| Error::db(format!("opening snapshot {}", snapshot_dir.display()), e))?;
        src.checkpoint(&path).map_err(|e| {
            Error::db(
                format!(
                    "copying snapshot {} into {}",
                    snapshot_dir.display(),
                    path.display()
                ),
                e,
            )
        })?;
        drop(src);
        let db = self.open_db(&path)?;
        Ok(self.wrap(db, path))
    }

    /// Makes `g` the live generation on disk (atomic, durable when it returns).
    pub(crate) fn point_to(&self, g: &Generation) -> Result<()> {
        let name = g
            .cleanup
            .path()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        fsutil::replace_atomically(
            self.env.as_ref(),
            &self.dir.join(POINTER),
            format!("{name}\n").as_bytes(),
        )
        .map_err(|e| Error::db("switching the state-machine pointer file", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_generation_survives_reopen_and_strays_go() {
        let dir = tempfile::tempdir().unwrap();
        let gens = Generations::new(dir.path().join("sm"), Options::default());
        let g = gens.open_live().unwrap();
        g.db.put("k", "v").unwrap();
        let snap = dir.path().join("snap");
        g.db.checkpoint(&snap).unwrap();
        let g2 = gens.create_from(&snap).unwrap();
        gens.point_to(&g2).unwrap();
        g.retire();
        let old_dir = g.cleanup.path().to_path_buf();
        drop(g);
        assert!(
            !old_dir.exists(),
            "a retired generation is removed when dropped"
        );
        g2.db.put("k2", "v2").unwrap();
        g2.db.sync_wal().unwrap();
        drop(g2);
        // A stray generation from a crashed install is removed at open.
        std::fs::create_dir_all(dir.path().join("sm/gen-000099")).unwrap();
        let gens = Generations::new(dir.path().join("sm"), Options::default());
        let g3 = gens.open_live().unwrap();
        assert_eq!(g3.db.get("k").unwrap(), Some(b"v".to_vec()));
        assert_eq!(g3.db.get("k2").unwrap(), Some(b"v2".to_vec()));
        assert!(!dir.path().join("sm/gen-000099").exists());
    }

    #[test]
    fn damaged_pointer_is_a_typed_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sm")).unwrap();
        std::fs::write(dir.path().join("sm/POINTER"), b"garbage").unwrap();
        let gens = Generations::new(dir.path().join("sm"), Options::default());
        let e = gens.open_live().err().unwrap();
        assert!(matches!(e, Error::Storage(_)), "{e}");
        std::fs::write(dir.path().join("sm/POINTER"), b"gen-000005\n").unwrap();
        let e = gens.open_live().err().unwrap();
        assert!(e.to_string().contains("missing"), "{e}");
    }
}
