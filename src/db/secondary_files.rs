//! The env a secondary reads through: the real one, except that every table of a version the
//! secondary uses is opened once, when the version is read from the MANIFEST, and that
//! descriptor (or memory map) serves every later open of the table's path.
//!
//! The writer deletes a table once its compactions no longer need it, with no regard for
//! secondaries, which it cannot see. On Unix an open descriptor keeps the file's data alive
//! after the name is gone, so a table opened before the writer deleted it reads on, whole and
//! unchanged; the table cache may close and reopen its reader as often as it likes, since
//! the reopen is served from the descriptor held here, never from the name. A descriptor is
//! let go once no version holding its table is alive (the last iterator or snapshot reading
//! it dropped it) and the secondary has caught up past it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use crate::env::{Env, EnvWrapper, RandomAccessFile};
use crate::error::Result;
use crate::db::table_cache::TableCache;
use crate::db::version::TableFile;

/// One held table: its open file, and the table files (of live versions) reading it.
#[derive(Debug)]
struct Held {
    number: u64,
    file: Arc<dyn RandomAccessFile>,
    users: Vec<Weak<TableFile>>,
}

/// See the module documentation.
#[derive(Debug)]
pub(super) struct HeldFiles {
    inner: Arc<dyn Env>,
    /// Open tables through memory maps ([`crate::Options::mmap_reads`]).
    mmap_reads: bool,
    held: Mutex<HashMap<PathBuf, Held>>,
}

impl HeldFiles {
    pub(super) fn new(inner: Arc<dyn Env>, mmap_reads: bool) -> HeldFiles {
        HeldFiles {
            inner,
            mmap_reads,
            held: Mutex::new(HashMap::new()),
        }
    }

    /// Opens the file of `table` (at `path`) unless it is held already, and records `table`
    /// as one of its users.
    ///
    /// # Errors
    /// Opening the file: an [`crate::Error::Io`] of kind `NotFound` when the writer deleted
    /// it before this secondary got to it.
    pub(super) fn hold(&self, table: &Arc<TableFile>, path: &Path) -> Result<()> {
        let mut held = self.held.lock();
        if let Some(h) = held.get_mut(path) {
            if !h
                .users
                .iter()
                .any(|w| std::ptr::eq(w.as_ptr(), Arc::as_ptr(table)))
            {
                h.users.push(Arc::downgrade(table));
            }
            return Ok(());
        }
        // Opened under the lock: a catch-up holds at most a few new tables at once, and
        // nothing else takes this lock for long.
        let file = if self.mmap_reads {
            self.inner.open_mapped(path)?
        } else {
            self.inner.open_random_access(path)?
        };
        held.insert(
            path.to_path_buf(),
            Held {
                number: table.meta.number,
                file,
                users: vec![Arc::downgrade(table)],
            },
        );
        Ok(())
    }

    /// Lets go of every file no live table file uses any more, and of the table cache's
    /// reader of it. Returns how many files were let go.
    pub(super) fn release_unused(&self, cache: &TableCache) -> usize {
        let mut released = Vec::new();
        self.held.lock().retain(|_, h| {
            h.users.retain(|w| w.strong_count() > 0);
            if h.users.is_empty() {
                released.push(h.number);
                false
            } else {
                true
            }
        });
        for &number in &released {
            cache.evict(number);
        }
        released.len()
    }

    /// Files held right now.
    pub(super) fn len(&self) -> usize {
        self.held.lock().len()
    }

    fn held(&self, path: &Path) -> Option<Arc<dyn RandomAccessFile>> {
        self.held.lock().get(path).map(|h| Arc::clone(&h.file))
    }
}

// Only opening a table changes; every other call goes to the real env.
impl EnvWrapper for HeldFiles {
    fn target(&self) -> &dyn Env {
        self.inner.as_ref()
    }

    fn open_random_access(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        match self.held(path) {
            Some(file) => Ok(file),
            None => self.inner.open_random_access(path),
        }
    }

    fn open_mapped(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        match self.held(path) {
            Some(file) => Ok(file),
            None => self.inner.open_mapped(path),
        }
    }
}
