//! The set of live tables, level by level, as one immutable snapshot ([`Version`]).
//!
//! A new `Version` is made for every change (flush, compaction) by applying a
//! [`VersionEdit`] to the current one; readers hold an `Arc<Version>` for as long as they need
//! its files. Each table is an `Arc<TableFile>`: when an edit removes a table it is marked
//! obsolete, and the file is deleted when the last version or iterator using it lets go.

pub(crate) mod level_iter;

use std::cmp::Ordering;
use std::ops::Deref;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::{Arc, OnceLock};

use crate::env::Env;
use crate::error::{Error, Result};
use crate::util::key;
use crate::db::manifest::{FileMeta, VersionEdit};
use crate::options::NUM_LEVELS;
use crate::sstable::Table;
use crate::db::table_cache::TableCache;

/// One live table file.
#[derive(Debug)]
pub struct TableFile {
    /// What the manifest records about it.
    pub meta: FileMeta,
    obsolete: AtomicBool,
    path: PathBuf,
    env: Arc<dyn Env>,
    cache: Arc<TableCache>,
    /// The open reader, once opened, while the table cache's pin budget lasts: then every
    /// lookup reaches it through this field alone.
    pinned: OnceLock<Arc<Table>>,
}

/// A table reader borrowed from its [`TableFile`] (pinned) or shared from the table cache.
pub enum TableRef<'a> {
    /// Held by the table file for as long as the file is live.
    Pinned(&'a Arc<Table>),
    /// Held by the table cache's LRU (and by this reference).
    Shared(Arc<Table>),
}

impl Deref for TableRef<'_> {
    type Target = Arc<Table>;
    fn deref(&self) -> &Arc<Table> {
        match self {
            TableRef::Pinned(t) => t,
            TableRef::Shared(t) => t,
        }
    }
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
            pinned: OnceLock::new(),
        }
    }

    /// The table's reader, opening the file on first use.
    ///
    /// # Errors
    /// I/O errors and corruption found while opening the file.
    pub fn reader(&self) -> Result<TableRef<'_>> {
        match self.pinned.get() {
            Some(t) => Ok(TableRef::Pinned(t)),
            None => self.open_reader(),
        }
    }

    #[cold]
    fn open_reader(&self) -> Result<TableRef<'_>> {
        let number = self.meta.number;
        match self.cache.pin(number)? {
            Some(table) => {
                if let Err(e) = self.check_identity(&table) {
                    self.cache.unpin();
                    return Err(e);
                }
                let mut ours = false;
                let kept = self.pinned.get_or_init(|| {
                    ours = true;
                    table
                });
                if !ours {
                    // Another thread pinned it first; its reader is the one kept.
                    self.cache.unpin();
                }
                Ok(TableRef::Pinned(kept))
            }
            None => {
                let table = self.cache.get(number)?;
                self.check_identity(&table)?;
                Ok(TableRef::Shared(table))
            }
        }
    }

    /// Whether the file opened is the table the MANIFEST names: its recorded file number
    /// (when it has one), size and key range must match the MANIFEST's record, or a table
    /// copied or renamed over this one would answer for it.
    pub(crate) fn check_identity(&self, table: &crate::sstable::Table) -> Result<()> {
        let props = table.properties();
        let m = &self.meta;
        let why = if props.file_number.is_some_and(|n| n != m.number) {
            format!(
                "the table records file number {}, but the MANIFEST names it {}",
                props.file_number.unwrap_or(0),
                m.number
            )
        } else if props.file_size != m.size {
            format!(
                "the file is {} bytes, but the MANIFEST records {}",
                props.file_size, m.size
            )
        } else if props.smallest_key != m.smallest || props.largest_key != m.largest {
            "its key range differs from the MANIFEST's record".to_string()
        } else {
            return Ok(());
        };
        Err(crate::error::Error::corruption(table.path(), 0, why))
    }

    /// Opens the file with a reader of its own, outside the table cache (no block cache, no
    /// filter: a compaction or re-filter reads each block once, and its reads are not
    /// lookups), checked like every reader the cache opens: a compaction reading a table
    /// swapped in under this one's name would otherwise merge the wrong data into new tables
    /// and make it durable.
    ///
    /// # Errors
    /// I/O errors and corruption found while opening, including [`Error::Corruption`] naming
    /// the file when it is not the table the MANIFEST names.
    pub(crate) fn open_uncached(&self, counters: &Arc<crate::sstable::ReadCounters>) -> Result<Table> {
        let table = Table::open(
            self.env.open_random_access(&self.path)?,
            crate::sstable::TableReadOptions {
                file_number: self.meta.number,
                filter: None,
                cache: None,
                counters: Arc::clone(counters),
            },
        )?;
        self.check_identity(&table)?;
        Ok(table)
    }

    /// The reader if one is open right now (pinned or in the table cache); never opens.
    pub fn open_reader_now(&self) -> Option<Arc<Table>> {
        self.pinned
            .get()
            .cloned()
            .or_else(|| self.cache.peek(self.meta.number))
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
        // Close a pinned reader first, so the file is no longer open when it is removed
        // (which matters where open files cannot be deleted).
        if self.pinned.take().is_some() {
            self.cache.unpin();
        }
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
    /// `levels[i]` holds the tables of level `i`. Private, like `bounds`, so the two cannot
    /// disagree: a version changes only through [`Version::apply`].
    levels: [Vec<Arc<TableFile>>; NUM_LEVELS],
    /// `bounds[i]`: the key ranges of `levels[i]`, laid out for point lookups.
    bounds: [LevelBounds; NUM_LEVELS],
}

/// The first eight bytes of a key as a big-endian number (zero-padded): `a <= b` implies
/// `key_prefix(a) <= key_prefix(b)`, so comparing prefixes decides most comparisons of whole
/// keys, and only equal prefixes need the keys themselves.
fn key_prefix(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = key.len().min(8);
    b[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(b)
}

/// The prefixes of one level's smallest and largest user keys, in the level's order, in two
/// contiguous arrays: a lookup binary-searches a few hundred bytes instead of chasing a
/// pointer to each table's key (that chase was a third of an absent get's time).
#[derive(Debug, Default, Clone)]
struct LevelBounds {
    smallest: Vec<u64>,
    largest: Vec<u64>,
}

impl LevelBounds {
    fn of(files: &[Arc<TableFile>]) -> LevelBounds {
        LevelBounds {
            smallest: files
                .iter()
                .map(|f| key_prefix(f.smallest_user_key()))
                .collect(),
            largest: files
                .iter()
                .map(|f| key_prefix(f.largest_user_key()))
                .collect(),
        }
    }

    /// Whether `files[i]` (described by this) covers `user_key`, whose prefix is `p`.
    #[inline]
    fn covers(&self, files: &[Arc<TableFile>], i: usize, user_key: &[u8], p: u64) -> bool {
        let lo = self.smallest[i];
        let hi = self.largest[i];
        if lo < p && hi > p {
            return true;
        }
        if lo > p || hi < p {
            return false;
        }
        Self::covers_tied(&files[i], user_key, lo == p, hi == p)
    }

    /// [`LevelBounds::covers`] when the key's prefix ties with a bound's: compare whole keys.
    #[cold]
    fn covers_tied(file: &TableFile, user_key: &[u8], lo_tied: bool, hi_tied: bool) -> bool {
        (!lo_tied || file.smallest_user_key() <= user_key)
            && (!hi_tied || user_key <= file.largest_user_key())
    }

    /// In a sorted, disjoint level: the index of the first table whose largest user key is
    /// `>= user_key` (prefix `p`).
    fn first_not_below(&self, files: &[Arc<TableFile>], user_key: &[u8], p: u64) -> usize {
        let i = self.largest.partition_point(|&hi| hi < p);
        // Tables whose largest key shares the prefix (keys with a common 8-byte prefix can
        // make that a whole level): binary search on their whole keys.
        let tied = self.largest[i..].partition_point(|&hi| hi == p);
        i + files[i..i + tied].partition_point(|f| f.largest_user_key() < user_key)
    }

    /// In a sorted, disjoint level: the table covering `user_key`, if any.
    #[inline]
    fn find(&self, files: &[Arc<TableFile>], user_key: &[u8], p: u64) -> Option<usize> {
        let i = self.largest.partition_point(|&hi| hi < p);
        let hi = *self.largest.get(i)?;
        if hi > p {
            // No largest key shares the prefix, so table `i` is the first whose largest key
            // is above `user_key` (those before it end below the prefix): the only candidate.
            let lo = self.smallest[i];
            return match lo.cmp(&p) {
                Ordering::Less => Some(i),
                Ordering::Greater => None,
                Ordering::Equal => (files[i].smallest_user_key() <= user_key).then_some(i),
            };
        }
        self.find_tied(files, user_key, p)
    }

    /// [`LevelBounds::find`] when some table's largest key shares the key's prefix.
    #[cold]
    fn find_tied(&self, files: &[Arc<TableFile>], user_key: &[u8], p: u64) -> Option<usize> {
        let i = self.first_not_below(files, user_key, p);
        (i < files.len() && self.covers(files, i, user_key, p)).then_some(i)
    }
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
        for (bounds, files) in next.bounds.iter_mut().zip(&next.levels) {
            *bounds = LevelBounds::of(files);
        }
        Ok(next)
    }

    /// The tables of every level: `levels()[i]` holds level `i`'s. Level 0 is newest first,
    /// deeper levels are in key order.
    pub fn levels(&self) -> &[Vec<Arc<TableFile>>; NUM_LEVELS] {
        &self.levels
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
        let p = key_prefix(user_key);
        let (l0, l0_bounds) = (&self.levels[0], &self.bounds[0]);
        let l0 = (0..l0.len())
            .filter(move |&i| l0_bounds.covers(l0, i, user_key, p))
            .map(move |i| (0, &l0[i]));
        let deeper = (1..NUM_LEVELS).filter_map(move |level| {
            let files = &self.levels[level];
            if files.is_empty() {
                // Most levels of most trees: skip the search's set-up.
                return None;
            }
            self.bounds[level]
                .find(files, user_key, p)
                .map(|i| (level, &files[i]))
        });
        l0.chain(deeper)
    }

    /// Whether some table of `level` (>= 1: sorted, disjoint) covers `user_key`.
    pub fn level_covers(&self, level: usize, user_key: &[u8]) -> bool {
        let files = &self.levels[level];
        let bounds = &self.bounds[level];
        let p = key_prefix(user_key);
        if level == 0 {
            return (0..files.len()).any(|i| bounds.covers(files, i, user_key, p));
        }
        bounds.find(files, user_key, p).is_some()
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
    use crate::util::key::Kind;
    use crate::sstable::ReadCounters;

    /// The real file system and a table cache of `capacity` readers for `dir`.
    fn env_and_cache(dir: &std::path::Path, capacity: usize) -> (Arc<dyn Env>, Arc<TableCache>) {
        let env: Arc<dyn Env> = Arc::new(StdEnv);
        let cache = Arc::new(TableCache::new(
            Arc::clone(&env),
            dir.to_path_buf(),
            capacity,
            None,
            Arc::new(ReadCounters::default()),
        ));
        (env, cache)
    }

    /// Wraps a manifest record as a table file at its usual path in `dir`.
    fn wrapper<'a>(
        dir: &'a std::path::Path,
        env: &'a Arc<dyn Env>,
        cache: &'a Arc<TableCache>,
    ) -> impl Fn(FileMeta) -> Arc<TableFile> + Copy + 'a {
        move |m: FileMeta| {
            let path = crate::util::filename::table_path(dir, m.number);
            Arc::new(TableFile::new(m, path, Arc::clone(env), Arc::clone(cache)))
        }
    }

    /// Writes table `number` of `keys` (each its own value) at its usual path in `dir`: its
    /// file, with the MANIFEST record that matches it (the reader checks it).
    fn write_table(
        dir: &std::path::Path,
        env: &Arc<dyn Env>,
        cache: &Arc<TableCache>,
        number: u64,
        keys: &[&[u8]],
    ) -> TableFile {
        use crate::sstable::{TableBuildOptions, TableBuilder};
        let path = crate::util::filename::table_path(dir, number);
        let mut b = TableBuilder::new(
            env.create_writable(&path).unwrap(),
            path.clone(),
            TableBuildOptions::default(),
        );
        for k in keys {
            b.add(&key::encode(k, 1, Kind::Put), k).unwrap();
        }
        let props = b.finish().unwrap();
        let mut m = meta(number, b"", b"");
        m.size = props.file_size;
        m.smallest = props.smallest_key.clone();
        m.largest = props.largest_key.clone();
        TableFile::new(m, path, Arc::clone(env), Arc::clone(cache))
    }

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
            range_deletions: 0,
        }
    }

    /// Regression: a trivial move used to wrap the moved table in a second `TableFile`, so
    /// when the moved copy was later compacted away its file was deleted while an older
    /// version (a long-running scan) still listed it under the first, never-obsolete owner.
    #[test]
    fn trivial_move_keeps_one_owner_so_old_versions_keep_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let (env, cache) = env_and_cache(dir.path(), 10);
        let path = dir.path().join("000005.sst");
        std::fs::write(&path, b"table bytes").unwrap();
        let wrap = wrapper(dir.path(), &env, &cache);
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

    fn naive_tables_for_get(v: &Version, user_key: &[u8]) -> Vec<(usize, u64)> {
        let mut out = Vec::new();
        for (level, files) in v.levels.iter().enumerate() {
            for f in files {
                if f.covers(user_key) {
                    out.push((level, f.meta.number));
                    if level > 0 {
                        break;
                    }
                }
            }
        }
        out
    }

    /// The prefix-based level search must agree with comparing whole keys, including keys
    /// shorter than the prefix, keys sharing their first eight bytes, and range ends.
    #[test]
    fn level_bounds_agree_with_whole_key_comparison() {
        let dir = tempfile::tempdir().unwrap();
        let (env, cache) = env_and_cache(dir.path(), 10);
        let wrap = wrapper(dir.path(), &env, &cache);
        // Level 1: ranges sharing an 8-byte prefix, and short keys. Level 0: overlapping.
        let ranges: [(usize, &[u8], &[u8]); 8] = [
            (1, b"a", b"abcdefgh0"),
            (1, b"abcdefgh1", b"abcdefgh5"),
            (1, b"abcdefgh7", b"abcdefgi"),
            (1, b"b", b"b"),
            (1, b"c\x00", b"zz"),
            (2, b"", b"m"),
            (0, b"abcdefgh3", b"q"),
            (0, b"a", b"abcdefgh4"),
        ];
        let mut edit = VersionEdit::default();
        for (i, (level, lo, hi)) in ranges.iter().enumerate() {
            edit.new_files.push((*level, meta(i as u64 + 1, lo, hi)));
        }
        let v = Version::default().apply(&edit, wrap).unwrap();
        let probes: [&[u8]; 16] = [
            b"",
            b"a",
            b"abc",
            b"abcdefgh",
            b"abcdefgh0",
            b"abcdefgh00",
            b"abcdefgh3",
            b"abcdefgh6",
            b"abcdefgh7",
            b"abcdefgi",
            b"abcdefgi\x00",
            b"b",
            b"b\x00",
            b"c",
            b"m",
            b"zzz",
        ];
        for k in probes {
            let fast: Vec<(usize, u64)> = v
                .tables_for_get(k)
                .map(|(l, f)| (l, f.meta.number))
                .collect();
            assert_eq!(fast, naive_tables_for_get(&v, k), "key {:?}", k);
            for level in 0..NUM_LEVELS {
                let naive = v.levels[level].iter().any(|f| f.covers(k));
                assert_eq!(v.level_covers(level, k), naive, "level {level} key {k:?}");
            }
        }
    }

    /// Random levels of keys from a two-letter alphabet, so that 8-byte prefixes tie often
    /// on both bounds and keys are often shorter than a prefix: the fast paths of the level
    /// search must agree with comparing whole keys.
    #[test]
    fn level_search_agrees_on_random_tied_keys() {
        let dir = tempfile::tempdir().unwrap();
        let (env, cache) = env_and_cache(dir.path(), 10);
        let wrap = wrapper(dir.path(), &env, &cache);
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = move || {
            state = crate::filter::layout::mix64(state.wrapping_add(0x9e37_79b9_7f4a_7c15));
            state
        };
        let mut key = |len_max: u64| -> Vec<u8> {
            let len = 6 + next() % len_max;
            (0..len).map(|_| b"ab"[(next() % 2) as usize]).collect()
        };
        for round in 0..50 {
            let mut keys: Vec<Vec<u8>> = (0..24).map(|_| key(6)).collect();
            keys.sort();
            keys.dedup();
            let mut edit = VersionEdit::default();
            let mut number = 1;
            // Disjoint tables of level 1 over consecutive pairs, gaps between them.
            for pair in keys.chunks(3) {
                if pair.len() >= 2 {
                    edit.new_files.push((1, meta(number, &pair[0], &pair[1])));
                    number += 1;
                }
            }
            edit.new_files.push((0, meta(number, &keys[1], &keys[keys.len() - 2])));
            let v = Version::default().apply(&edit, wrap).unwrap();
            for _ in 0..200 {
                let k = key(6);
                let fast: Vec<(usize, u64)> = v
                    .tables_for_get(&k)
                    .map(|(l, f)| (l, f.meta.number))
                    .collect();
                assert_eq!(fast, naive_tables_for_get(&v, &k), "round {round} key {k:?}");
            }
        }
    }

    /// A reader pinned by its table file holds a pin slot until the file is dropped, and an
    /// obsolete table's file is removed after its reader is closed.
    #[test]
    fn pinned_reader_lives_and_dies_with_its_table_file() {
        let dir = tempfile::tempdir().unwrap();
        let (env, cache) = env_and_cache(dir.path(), 8);
        let file = write_table(dir.path(), &env, &cache, 7, &[b"k"]);
        let path = file.path.clone();
        assert!(file.open_reader_now().is_none());
        assert!(matches!(file.reader().unwrap(), TableRef::Pinned(_)));
        assert!(matches!(file.reader().unwrap(), TableRef::Pinned(_)));
        assert_eq!(cache.pinned(), 1);
        assert!(file.open_reader_now().is_some());
        file.mark_obsolete();
        drop(file);
        assert_eq!(cache.pinned(), 0);
        assert!(!path.exists());
    }

    /// A level read as a compaction reads it (`LevelIter::uncached`) yields what a read
    /// through the table cache yields, with readers of its own: the cache opens nothing, no
    /// file pins a reader, and the data blocks read count in the compaction's counters.
    #[test]
    fn level_iter_reads_a_level_with_or_without_the_table_cache() {
        use crate::db::version::level_iter::LevelIter;
        use crate::iter::InternalIterator;
        let dir = tempfile::tempdir().unwrap();
        let (env, cache) = env_and_cache(dir.path(), 8);
        let all: Vec<Vec<u8>> = (0..9).map(|i| format!("k{i}").into_bytes()).collect();
        // Three tables of three keys each: k0-k2, k3-k5, k6-k8.
        let files: Vec<Arc<TableFile>> = (0..3u64)
            .map(|t| {
                let keys: Vec<&[u8]> = all[t as usize * 3..][..3].iter().map(|k| &k[..]).collect();
                Arc::new(write_table(dir.path(), &env, &cache, t + 1, &keys))
            })
            .collect();
        let read = |it: &mut LevelIter| {
            let mut keys = Vec::new();
            it.seek_to_first().unwrap();
            while it.valid() {
                keys.push(key::user_key(it.key()).to_vec());
                it.next().unwrap();
            }
            keys
        };

        let counters = Arc::new(ReadCounters::default());
        let mut uncached = LevelIter::uncached(files.clone(), &counters);
        assert_eq!(read(&mut uncached), all);
        uncached.seek(&key::encode(b"k4", key::MAX_SEQ, Kind::Put)).unwrap();
        assert_eq!(key::user_key(uncached.key()), b"k4");
        assert_eq!(cache.len(), 0);
        assert_eq!(cache.pinned(), 0);
        assert!(files.iter().all(|f| f.open_reader_now().is_none()));
        assert!(counters.snapshot().data_blocks_read >= 3);

        let mut cached = LevelIter::new(files.clone());
        assert_eq!(read(&mut cached), all);
        assert!(files.iter().all(|f| f.open_reader_now().is_some()));
    }

    /// Keys sharing their first eight bytes (`user:000...`) tie on every prefix of a level:
    /// the search must still find the right table (by a binary search over the tie).
    #[test]
    fn level_search_with_a_shared_eight_byte_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let (env, cache) = env_and_cache(dir.path(), 10);
        let wrap = wrapper(dir.path(), &env, &cache);
        let mut edit = VersionEdit::default();
        let key = |i: u64| format!("user:000{i:08}");
        for t in 0..200u64 {
            let (lo, hi) = (key(t * 10), key(t * 10 + 5));
            edit.new_files
                .push((1, meta(t + 1, lo.as_bytes(), hi.as_bytes())));
        }
        let v = Version::default().apply(&edit, wrap).unwrap();
        for i in 0..2000u64 {
            let k = key(i);
            let fast: Vec<(usize, u64)> = v
                .tables_for_get(k.as_bytes())
                .map(|(l, f)| (l, f.meta.number))
                .collect();
            assert_eq!(fast, naive_tables_for_get(&v, k.as_bytes()), "key {k}");
            let expected = (i % 10 <= 5).then_some((1, i / 10 + 1));
            assert_eq!(fast.first().copied(), expected, "key {k}");
        }
    }
}
