//! The set of live tables, level by level, as one immutable snapshot ([`Version`]).
//!
//! A new `Version` is made for every change (flush, compaction) by applying a
//! [`VersionEdit`] to the current one; readers hold an `Arc<Version>` for as long as they need
//! its files. Each table is an `Arc<TableFile>`: when an edit removes a table it is marked
//! obsolete, and the file is deleted when the last version or iterator using it lets go.

use std::cmp::Ordering;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};

use crate::env::Env;
use crate::error::{Error, Result};
use crate::key;
use crate::manifest::{FileMeta, VersionEdit};
use crate::options::NUM_LEVELS;
use crate::table_cache::TableCache;

/// One live table file.
#[derive(Debug)]
pub struct TableFile {
    /// What the manifest records about it.
    pub meta: FileMeta,
    obsolete: AtomicBool,
    path: PathBuf,
    env: Arc<dyn Env>,
    cache: Arc<TableCache>,
}

impl TableFile {
    /// Wraps a table that exists at `path`.
    pub fn new(meta: FileMeta, path: PathBuf, env: Arc<dyn Env>, cache: Arc<TableCache>) -> Self {
        TableFile {
            meta,
            obsolete: AtomicBool::new(false),
            path,
            env,
            cache,
        }
    }

    /// Marks the file for deletion once nothing uses it any more. Only call this after the
    /// edit that removes it is durable in the manifest.
    pub fn mark_obsolete(&self) {
        self.obsolete.store(true, AtomicOrdering::Release);
    }

    /// The smallest user key in the table.
    pub fn smallest_user_key(&self) -> &[u8] {
        key::user_key(&self.meta.smallest)
    }

    /// The largest user key in the table.
    pub fn largest_user_key(&self) -> &[u8] {
        key::user_key(&self.meta.largest)
    }

    /// Whether `user_key` lies within the table's key range.
    pub fn covers(&self, user_key: &[u8]) -> bool {
        self.smallest_user_key() <= user_key && user_key <= self.largest_user_key()
    }
}

impl Drop for TableFile {
    fn drop(&mut self) {
        if self.obsolete.load(AtomicOrdering::Acquire) {
            self.cache.evict(self.meta.number);
            // A failure here leaves an orphan that the next open deletes.
            let _ = self.env.remove_file(&self.path);
        }
    }
}

/// The tables of every level at one moment.
///
/// Level 0 is ordered newest first (tables may overlap); deeper levels are ordered by key and
/// never overlap.
#[derive(Debug, Default, Clone)]
pub struct Version {
    /// `levels[i]` holds the tables of level `i`.
    pub levels: [Vec<Arc<TableFile>>; NUM_LEVELS],
}

impl Version {
    /// Applies `edit`, returning the new version. New tables are wrapped by `wrap`.
    ///
    /// # Errors
    /// `Corruption` if the edit removes a file that is not there, adds one twice, or leaves a
    /// level below 0 with overlapping tables.
    pub fn apply(
        &self,
        edit: &VersionEdit,
        mut wrap: impl FnMut(FileMeta) -> Arc<TableFile>,
    ) -> Result<Version> {
        let mut next = self.clone();
        // Tables the edit removes, by number: one re-added elsewhere (a trivial move) keeps
        // its `Arc<TableFile>`, so an older version still holding it and the new version
        // share one owner, and the file is deleted only when both have let go.
        let mut removed: Vec<Arc<TableFile>> = Vec::new();
        for &(level, number) in &edit.deleted_files {
            let files = next.levels.get_mut(level).ok_or_else(|| bad_level(level))?;
            let Some(i) = files.iter().position(|f| f.meta.number == number) else {
                return Err(Error::corrupt_bytes(
                    0,
                    format!("version edit deletes table {number} which is not in level {level}"),
                ));
            };
            removed.push(files.remove(i));
        }
        for (level, meta) in &edit.new_files {
            let level = *level;
            if level >= NUM_LEVELS {
                return Err(bad_level(level));
            }
            if next
                .levels
                .iter()
                .flatten()
                .any(|f| f.meta.number == meta.number)
            {
                return Err(Error::corrupt_bytes(
                    0,
                    format!("version edit adds table {} twice", meta.number),
                ));
            }
            let moved = removed
                .iter()
                .position(|f| f.meta == *meta)
                .map(|i| removed.swap_remove(i));
            next.levels[level].push(moved.unwrap_or_else(|| wrap(meta.clone())));
        }
        next.levels[0].sort_by_key(|f| std::cmp::Reverse(f.meta.number));
        for level in 1..NUM_LEVELS {
            let files = &mut next.levels[level];
            files.sort_by(|a, b| key::compare(&a.meta.smallest, &b.meta.smallest));
            for pair in files.windows(2) {
                if key::compare(&pair[0].meta.largest, &pair[1].meta.smallest) != Ordering::Less {
                    return Err(Error::corrupt_bytes(
                        0,
                        format!(
                            "tables {} and {} overlap in level {level}",
                            pair[0].meta.number, pair[1].meta.number
                        ),
                    ));
                }
            }
        }
        Ok(next)
    }

    /// Every table, all levels.
    pub fn all_files(&self) -> impl Iterator<Item = &Arc<TableFile>> {
        self.levels.iter().flatten()
    }

    /// Total bytes of the tables in `level`.
    pub fn level_bytes(&self, level: usize) -> u64 {
        self.levels[level].iter().map(|f| f.meta.size).sum()
    }

    /// The tables a point lookup of `user_key` must consult, in the order to consult them:
    /// level-0 tables whose range covers the key, newest first, then at most one table per
    /// deeper level (found by binary search on the level's key ranges).
    pub fn tables_for_get<'a>(
        &'a self,
        user_key: &'a [u8],
    ) -> impl Iterator<Item = (usize, &'a Arc<TableFile>)> + 'a {
        let l0 = self.levels[0]
            .iter()
            .filter(move |f| f.covers(user_key))
            .map(|f| (0, f));
        let deeper = (1..NUM_LEVELS).filter_map(move |level| {
            let files = &self.levels[level];
            let i = files.partition_point(|f| f.largest_user_key() < user_key);
            files
                .get(i)
                .filter(|f| f.smallest_user_key() <= user_key)
                .map(|f| (level, f))
        });
        l0.chain(deeper)
    }

    /// Whether some table of `level` (>= 1: sorted, disjoint) covers `user_key`.
    pub fn level_covers(&self, level: usize, user_key: &[u8]) -> bool {
        let files = &self.levels[level];
        if level == 0 {
            return files.iter().any(|f| f.covers(user_key));
        }
        let i = files.partition_point(|f| f.largest_user_key() < user_key);
        files
            .get(i)
            .is_some_and(|f| f.smallest_user_key() <= user_key)
    }

    /// A version edit that recreates this version from nothing (used to start a new MANIFEST).
    pub fn snapshot_edit(&self) -> VersionEdit {
        let mut edit = VersionEdit::default();
        for (level, files) in self.levels.iter().enumerate() {
            for f in files {
                edit.new_files.push((level, f.meta.clone()));
            }
        }
        edit
    }
}

fn bad_level(level: usize) -> Error {
    Error::corrupt_bytes(
        0,
        format!("version edit names level {level}; levels are 0..{NUM_LEVELS}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::StdEnv;
    use crate::key::Kind;
    use crate::sstable::ReadCounters;

    fn meta(number: u64, lo: &[u8], hi: &[u8]) -> FileMeta {
        FileMeta {
            number,
            size: 100,
            smallest: key::encode(lo, 1, Kind::Put),
            largest: key::encode(hi, 1, Kind::Put),
            entries: 2,
            deletions: 0,
            filter_bits_per_key: 10.0,
            filter_bytes: 4,
            expected_fpr: 0.01,
        }
    }

    /// Regression: a trivial move used to wrap the moved table in a second `TableFile`, so
    /// when the moved copy was later compacted away its file was deleted while an older
    /// version (a long-running scan) still listed it under the first, never-obsolete owner.
    #[test]
    fn trivial_move_keeps_one_owner_so_old_versions_keep_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let env: Arc<dyn Env> = Arc::new(StdEnv);
        let cache = Arc::new(TableCache::new(
            Arc::clone(&env),
            dir.path().to_path_buf(),
            10,
            None,
            Arc::new(ReadCounters::default()),
        ));
        let path = dir.path().join("000005.sst");
        std::fs::write(&path, b"table bytes").unwrap();
        let wrap = |m: FileMeta| {
            Arc::new(TableFile::new(
                m,
                path.clone(),
                Arc::clone(&env),
                Arc::clone(&cache),
            ))
        };
        let mut add = VersionEdit::default();
        add.new_files.push((1, meta(5, b"a", b"m")));
        let v0 = Version::default().apply(&add, wrap).unwrap();

        let mut mv = VersionEdit::default();
        mv.deleted_files.push((1, 5));
        mv.new_files.push((2, meta(5, b"a", b"m")));
        let v1 = v0.apply(&mv, wrap).unwrap();
        assert!(v1.levels[1].is_empty());
        assert!(Arc::ptr_eq(&v0.levels[1][0], &v1.levels[2][0]));

        let mut gone = VersionEdit::default();
        gone.deleted_files.push((2, 5));
        let v2 = v1.apply(&gone, wrap).unwrap();
        v1.levels[2][0].mark_obsolete();
        drop(v1);
        drop(v2);
        assert!(path.exists(), "v0 still lists the table");
        drop(v0);
        assert!(!path.exists(), "the last owner deletes the obsolete table");
    }
}
