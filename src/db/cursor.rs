//! Seekable and double-ended reads: [`ReadOptions`], [`Db::cursor`], [`Db::iter`],
//! [`Db::range`], [`Db::prefix`] and their [`Snapshot`] counterparts.

use std::ops::Bound;

use super::prefix::prefix_range;
use super::database::Db;
use super::key_range::KeyRange;
use super::snapshot::Snapshot;
use crate::iter::cursor::Cursor;
use crate::iter::db_iter::DbIter;
use crate::util::key::SeqNo;

/// Options of a read through a cursor ([`Db::cursor`]).
///
/// The default reads the latest state of the whole key space.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// # let dir = tempfile::tempdir()?;
/// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
/// use bloomkv::ReadOptions;
///
/// db.put("a", "1")?;
/// let snap = db.snapshot();
/// db.put("a", "2")?;
/// let opts = ReadOptions { snapshot: Some(&snap), ..ReadOptions::default() };
/// let mut c = db.cursor(&opts);
/// c.seek_to_first()?;
/// assert_eq!(c.value(), b"1");
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct ReadOptions<'a> {
    /// Read the state as of this snapshot (of the same database); `None` reads the state as
    /// of the call that makes the cursor.
    pub snapshot: Option<&'a Snapshot>,
    /// The cursor shows only keys `>=` this one (RocksDB's `iterate_lower_bound`).
    pub lower_bound: Option<Vec<u8>>,
    /// The cursor shows only keys `<` this one (RocksDB's `iterate_upper_bound`): a forward
    /// walk stops at the first entry at or past it instead of reading on.
    pub upper_bound: Option<Vec<u8>>,
    /// The cursor shows only keys starting with this prefix (within the bounds above, if
    /// any), and leaves out the tables that hold none of them: those outside the prefix's
    /// key range and, when [`crate::Options::prefix_extractor`] cuts exactly this prefix,
    /// those whose prefix filter rules it out, as [`Db::prefix`] does.
    pub prefix: Option<Vec<u8>>,
}

impl<'a> ReadOptions<'a> {
    /// The default options: latest state, no bounds.
    pub fn new() -> ReadOptions<'a> {
        ReadOptions::default()
    }

    /// Reads as of `snapshot`.
    #[must_use]
    pub fn with_snapshot(mut self, snapshot: &'a Snapshot) -> ReadOptions<'a> {
        self.snapshot = Some(snapshot);
        self
    }

    /// Shows only keys `>= key`.
    #[must_use]
    pub fn with_lower_bound(mut self, key: impl AsRef<[u8]>) -> ReadOptions<'a> {
        self.lower_bound = Some(key.as_ref().to_vec());
        self
    }

    /// Shows only keys `< key`.
    #[must_use]
    pub fn with_upper_bound(mut self, key: impl AsRef<[u8]>) -> ReadOptions<'a> {
        self.upper_bound = Some(key.as_ref().to_vec());
        self
    }

    /// Shows only keys starting with `prefix`, skipping the tables that hold none.
    #[must_use]
    pub fn with_prefix(mut self, prefix: impl AsRef<[u8]>) -> ReadOptions<'a> {
        self.prefix = Some(prefix.as_ref().to_vec());
        self
    }

    /// The key range the cursor shows: the bounds, narrowed to the prefix's keys.
    fn bounds(&self) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
        let mut lower = self.lower_bound.clone();
        let mut upper = self.upper_bound.clone();
        if let Some(p) = &self.prefix {
            // Inclusive lower and exclusive upper bounds both, so the larger lower and the
            // smaller upper bound are the tighter ones.
            if lower.as_ref().is_none_or(|l| l < p) {
                lower = Some(p.clone());
            }
            if let (_, Bound::Excluded(end)) = prefix_range(p)
                && upper.as_ref().is_none_or(|u| *u > end)
            {
                upper = Some(end);
            }
        }
        (
            lower.map_or(Bound::Unbounded, Bound::Included),
            upper.map_or(Bound::Unbounded, Bound::Excluded),
        )
    }
}

impl Db {
    fn cursor_at(&self, seq: SeqNo, opts: &ReadOptions<'_>) -> Cursor {
        let (lower, upper) = opts.bounds();
        let (merged, view) = match &opts.prefix {
            Some(p) => self.inner().prefix_iter(p),
            None => self.inner().internal_iter(),
        };
        let range_dels = super::read::range_del_view(&view);
        let seq = view.read_seq(seq);
        Cursor::new(Box::new(merged), seq, lower, upper)
            .with_range_dels(range_dels)
            .with_keep_alive(Box::new(view))
    }

    /// A [`Cursor`] over the live keys: seek to a key, walk forward and backward.
    ///
    /// It reads the version of the database current at this call (memtables and tables),
    /// at `opts.snapshot` if given, else at the latest write; later writes are invisible to
    /// it. It starts unpositioned: call a seek first.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// use bloomkv::ReadOptions;
    ///
    /// for k in ["apple", "banana", "cherry"] { db.put(k, "fruit")?; }
    /// let mut c = db.cursor(&ReadOptions::default());
    /// let mut backward = Vec::new();
    /// c.seek_to_last()?;
    /// while c.valid() {
    ///     backward.push(c.key().to_vec());
    ///     c.prev()?;
    /// }
    /// assert_eq!(backward, [b"cherry".to_vec(), b"banana".to_vec(), b"apple".to_vec()]);
    /// c.status()?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn cursor(&self, opts: &ReadOptions<'_>) -> Cursor {
        match opts.snapshot {
            Some(snap) => snap.db.cursor_at(snap.seq, opts),
            None => self.cursor_at(self.inner().visible_seq(), opts),
        }
    }

    /// Every live entry, ascending; `.rev()` for descending. Same as `db.scan(..)`.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// for k in ["a", "b", "c"] { db.put(k, "v")?; }
    /// let keys: Vec<Vec<u8>> = db.iter().rev().map(|kv| kv.map(|(k, _)| k)).collect::<Result<_, _>>()?;
    /// assert_eq!(keys, [b"c".to_vec(), b"b".to_vec(), b"a".to_vec()]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn iter(&self) -> DbIter {
        self.scan(..)
    }

    /// The live entries in `range`; the same as [`Db::scan`]. The iterator is double-ended:
    /// `.rev()` walks the range from its end, and `next`/`next_back` may be mixed.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// for k in ["a", "b", "c", "d"] { db.put(k, "v")?; }
    /// let mut it = db.range("a"..="c");
    /// assert_eq!(it.next().transpose()?.map(|(k, _)| k), Some(b"a".to_vec()));
    /// assert_eq!(it.next_back().transpose()?.map(|(k, _)| k), Some(b"c".to_vec()));
    /// assert_eq!(it.next().transpose()?.map(|(k, _)| k), Some(b"b".to_vec()));
    /// assert!(it.next_back().is_none());
    /// # Ok(())
    /// # }
    /// ```
    pub fn range(&self, range: impl KeyRange) -> DbIter {
        self.scan(range)
    }

    /// Every live entry whose key starts with `prefix`, ascending (double-ended: `.rev()`
    /// for descending). An empty prefix is every key.
    ///
    /// It reads the key range the prefix spans. With [`crate::Options::prefix_extractor`]
    /// set and `prefix` exactly a prefix the extractor cuts (`extractor.prefix(p) == p`),
    /// tables whose prefix filter rules the prefix out are skipped without reading any of
    /// their data blocks; [`Db::explain_prefix`] shows which.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// for k in ["user/1", "user/2", "users", "video/1"] { db.put(k, "v")?; }
    /// let keys: Vec<Vec<u8>> = db.prefix("user/").map(|kv| kv.map(|(k, _)| k)).collect::<Result<_, _>>()?;
    /// assert_eq!(keys, [b"user/1".to_vec(), b"user/2".to_vec()]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn prefix(&self, prefix: impl AsRef<[u8]>) -> DbIter {
        let inner = self.inner();
        inner.prefix_at(prefix.as_ref(), inner.visible_seq())
    }

    /// What a [`Db::prefix`] scan of `prefix` would do with each table of the current
    /// version, level 0 first: outside the prefix's key range
    /// ([`FilterVerdict::OutOfRange`](crate::sstable::FilterVerdict)), no usable prefix
    /// filter (`NoFilter`: no extractor, a prefix the extractor does not cut, or a table
    /// written under another extractor), skipped (`Absent`) or read (`MayContain`). Nothing
    /// but table indexes and filters is read.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// use std::sync::Arc;
    /// use bloomkv::filter::FixedPrefix;
    /// use bloomkv::sstable::FilterVerdict;
    ///
    /// let opts = bloomkv::Options {
    ///     prefix_extractor: Some(Arc::new(FixedPrefix::new(2))),
    ///     ..Default::default()
    /// };
    /// let db = bloomkv::Db::open(dir.path(), opts)?;
    /// db.put("aa1", "v")?;
    /// db.put("ac1", "v")?;
    /// db.flush()?;
    /// let probes = db.explain_prefix("ab");
    /// assert_eq!(probes.len(), 1);
    /// assert_eq!(probes[0].verdict, FilterVerdict::Absent);
    /// # Ok(())
    /// # }
    /// ```
    pub fn explain_prefix(&self, prefix: impl AsRef<[u8]>) -> Vec<super::read::TableProbe> {
        self.inner().explain_prefix(prefix.as_ref())
    }
}

impl Snapshot {
    /// A [`Cursor`] over the keys as they were when the snapshot was taken.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// db.put("k", "old")?;
    /// let snap = db.snapshot();
    /// db.delete("k")?;
    /// let mut c = snap.cursor();
    /// c.seek("k")?;
    /// assert_eq!(c.value(), b"old");
    /// # Ok(())
    /// # }
    /// ```
    pub fn cursor(&self) -> Cursor {
        self.db.cursor_at(self.seq, &ReadOptions::default())
    }

    /// Every entry as of the snapshot, ascending (double-ended, like [`Db::iter`]).
    pub fn iter(&self) -> DbIter {
        self.scan(..)
    }

    /// The entries in `range` as of the snapshot (double-ended, like [`Db::range`]).
    pub fn range(&self, range: impl KeyRange) -> DbIter {
        self.scan(range)
    }

    /// The entries whose key starts with `prefix` as of the snapshot (like [`Db::prefix`]).
    pub fn prefix(&self, prefix: impl AsRef<[u8]>) -> DbIter {
        self.db.inner().prefix_at(prefix.as_ref(), self.seq)
    }
}

#[cfg(test)]
mod tests {
    use super::super::prefix::prefix_range;
    use std::ops::Bound;

    #[test]
    fn a_prefix_spans_up_to_its_successor() {
        let r = |p: &[u8]| prefix_range(p);
        assert_eq!(
            r(b"ab"),
            (
                Bound::Included(b"ab".to_vec()),
                Bound::Excluded(b"ac".to_vec())
            )
        );
        assert_eq!(
            r(b"a\xff\xff"),
            (
                Bound::Included(b"a\xff\xff".to_vec()),
                Bound::Excluded(b"b".to_vec())
            )
        );
        assert_eq!(r(b"\xff"), (Bound::Included(vec![0xff]), Bound::Unbounded));
        assert_eq!(r(b""), (Bound::Included(vec![]), Bound::Unbounded));
    }
}
