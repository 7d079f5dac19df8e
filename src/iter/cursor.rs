//! The user-level cursor: a seekable, bidirectional view of the live keys at one snapshot.
//!
//! A [`Cursor`] walks an [`InternalIterator`] (usually a merging iterator over both memtables
//! and every level) and shows, for each user key, only its newest version visible at the
//! snapshot, hiding deleted keys.
//!
//! Going forward the inner iterator sits on the entry the cursor shows (so the value is not
//! copied). Going backward it sits just before every entry of the key shown (the last entry of
//! a smaller user key), because the newest version of a key is only known once all of its
//! older versions have been passed; the key and value are then copied out. A change of
//! direction re-places the inner iterator on the other side of the current key.

use std::any::Any;
use std::ops::Bound;

use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::util::key::{self, KIND_SEEK, Kind, MAX_SEQ, SeqNo};
use crate::range_del::RangeDelView;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    Forward,
    Reverse,
}

/// A cursor over the live `(key, value)` pairs of a database at one snapshot, with the
/// LevelDB/RocksDB iterator contract: position it with a seek, check [`Cursor::valid`], read
/// [`Cursor::key`] and [`Cursor::value`], move with [`Cursor::next`] and [`Cursor::prev`] (in
/// any mix), and see [`Cursor::status`] for the error that made it invalid, if any.
///
/// Made by [`crate::Db::cursor`] and [`crate::Snapshot::cursor`]. It reads a fixed version of
/// the database: writes, flushes and compactions after it was made are invisible to it.
/// A new cursor is unpositioned (invalid) until the first seek.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::{Db, Options, ReadOptions};
///
/// let dir = tempfile::tempdir()?;
/// let db = Db::open(dir.path(), Options::default())?;
/// for k in ["a", "c", "e"] {
///     db.put(k, k.to_uppercase())?;
/// }
/// let mut c = db.cursor(&ReadOptions::default());
/// c.seek("b")?; // first key >= "b"
/// assert_eq!(c.key(), b"c");
/// c.prev()?;
/// assert_eq!((c.key(), c.value()), (&b"a"[..], &b"A"[..]));
/// c.seek_for_prev("d")?; // last key <= "d"
/// assert_eq!(c.key(), b"c");
/// c.seek_to_last()?;
/// c.next()?;
/// assert!(!c.valid());
/// c.status()?;
/// # Ok(())
/// # }
/// ```
pub struct Cursor {
    // Field order matters: `inner` drops before `keep_alive`, which may own what `inner`
    // reads from.
    inner: Box<dyn InternalIterator>,
    snapshot: SeqNo,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    direction: Direction,
    valid: bool,
    /// The current user key when valid; while looking for the next key, the key whose
    /// remaining entries are skipped.
    key: Vec<u8>,
    /// The current value while walking backward (forward it is read from `inner`).
    value: Vec<u8>,
    status: Option<Error>,
    /// Range tombstones of every source: a version they cover is hidden like a deleted one.
    range_dels: RangeDelView,
    /// An error met while gathering the range tombstones: every positioning call fails with it.
    broken: Option<Error>,
    keep_alive: Option<Box<dyn Any + Send>>,
}

impl Cursor {
    /// A cursor over `inner` (sorted by [`key::compare`]) at `snapshot`, limited to user keys
    /// within `lower` and `upper`. It is unpositioned until a seek. (Engine-internal: a
    /// cursor comes from [`crate::Db::cursor`] or [`crate::Snapshot::cursor`].)
    pub(crate) fn new(
        inner: Box<dyn InternalIterator>,
        snapshot: SeqNo,
        lower: Bound<Vec<u8>>,
        upper: Bound<Vec<u8>>,
    ) -> Cursor {
        Cursor {
            inner,
            snapshot: snapshot.min(MAX_SEQ),
            lower,
            upper,
            direction: Direction::Forward,
            valid: false,
            key: Vec::new(),
            value: Vec::new(),
            status: None,
            range_dels: RangeDelView::default(),
            broken: None,
            keep_alive: None,
        }
    }

    /// Hides what the range tombstones `range_dels` cover; an error gathering them makes
    /// every positioning call fail with it.
    #[must_use]
    pub(crate) fn with_range_dels(mut self, range_dels: Result<RangeDelView>) -> Cursor {
        match range_dels {
            Ok(r) => self.range_dels = r,
            Err(e) => self.broken = Some(e),
        }
        self
    }

    /// Keeps `guard` alive until this cursor is dropped (after the inner iterator).
    #[must_use]
    pub(crate) fn with_keep_alive(mut self, guard: Box<dyn Any + Send>) -> Cursor {
        self.keep_alive = Some(guard);
        self
    }

    /// The sequence number the cursor reads at.
    pub fn sequence(&self) -> SeqNo {
        self.snapshot
    }

    /// Whether the cursor is at an entry.
    pub fn valid(&self) -> bool {
        self.valid
    }

    /// The current key; empty when not [`Cursor::valid`].
    pub fn key(&self) -> &[u8] {
        if self.valid { &self.key } else { &[] }
    }

    /// The current value; empty when not [`Cursor::valid`].
    pub fn value(&self) -> &[u8] {
        match (self.valid, self.direction) {
            (false, _) => &[],
            (true, Direction::Forward) => self.inner.value(),
            (true, Direction::Reverse) => &self.value,
        }
    }

    /// The current key and value as owned vectors, or `None` when not valid.
    pub fn entry(&self) -> Option<(Vec<u8>, Vec<u8>)> {
        self.valid
            .then(|| (self.key().to_vec(), self.value().to_vec()))
    }

    /// `Ok` unless the last positioning call failed; then the error it returned (the cursor
    /// is invalid until the next seek).
    ///
    /// # Errors
    /// A copy of the error the failing call returned.
    pub fn status(&self) -> Result<()> {
        match &self.status {
            None => Ok(()),
            Some(e) => Err(e.duplicate()),
        }
    }

    /// Positions at the first key (at or after the lower bound, if any).
    ///
    /// # Errors
    /// Corruption or I/O errors from the files read; the cursor is then invalid.
    pub fn seek_to_first(&mut self) -> Result<()> {
        self.run(|c| c.first())
    }

    /// Positions at the last key (at or before the upper bound, if any).
    ///
    /// # Errors
    /// As for [`Cursor::seek_to_first`].
    pub fn seek_to_last(&mut self) -> Result<()> {
        self.run(|c| c.last())
    }

    /// Positions at the first key `>= target`.
    ///
    /// # Errors
    /// As for [`Cursor::seek_to_first`].
    pub fn seek(&mut self, target: impl AsRef<[u8]>) -> Result<()> {
        let target = target.as_ref();
        self.run(|c| {
            if !c.above_lower(target) {
                return c.first();
            }
            c.inner.seek(&key::encode(target, c.snapshot, KIND_SEEK))?;
            c.find_next(false)
        })
    }

    /// Positions at the last key `<= target`.
    ///
    /// # Errors
    /// As for [`Cursor::seek_to_first`].
    pub fn seek_for_prev(&mut self, target: impl AsRef<[u8]>) -> Result<()> {
        let target = target.as_ref();
        self.run(|c| {
            if !c.below_upper(target) {
                return c.last();
            }
            // Sequence 0 with the lowest kind sorts after every entry of `target`.
            c.inner
                .seek_for_prev(&key::encode(target, 0, Kind::Delete))?;
            c.find_prev()
        })
    }

    /// Moves to the next key; the cursor becomes invalid after the last one. Does nothing
    /// when the cursor is not valid.
    ///
    /// # Errors
    /// As for [`Cursor::seek_to_first`].
    #[expect(
        clippy::should_implement_trait,
        reason = "the LevelDB/RocksDB cursor contract: next moves, key/value read; \
                  Db::iter is the std Iterator"
    )]
    pub fn next(&mut self) -> Result<()> {
        if !self.valid {
            return Ok(());
        }
        self.run(|c| {
            match c.direction {
                // `inner` is on the current key's entry; `key` holds the key to skip.
                Direction::Forward => c.inner.next()?,
                // `inner` is just before the current key's entries (or nowhere, when they
                // are the very first entries).
                Direction::Reverse => {
                    if c.inner.valid() {
                        c.inner.next()?;
                    } else {
                        c.inner.seek_to_first()?;
                    }
                }
            }
            c.find_next(true)
        })
    }

    /// Moves to the previous key; the cursor becomes invalid before the first one. Does
    /// nothing when the cursor is not valid.
    ///
    /// # Errors
    /// As for [`Cursor::seek_to_first`].
    pub fn prev(&mut self) -> Result<()> {
        if !self.valid {
            return Ok(());
        }
        self.run(|c| {
            if c.direction == Direction::Forward {
                // Step back past every entry of the current key (including versions newer
                // than the snapshot, which sort before the one shown).
                loop {
                    c.inner.prev()?;
                    if !c.inner.valid() || key::user_key(c.inner.key()) < c.key.as_slice() {
                        break;
                    }
                }
            }
            c.find_prev()
        })
    }

    /// Positions at the first key `> target` (used by the double-ended scan).
    pub(crate) fn seek_after(&mut self, target: &[u8]) -> Result<()> {
        self.run(|c| {
            if !c.above_lower(target) {
                return c.first();
            }
            c.inner.seek(&key::encode(target, 0, Kind::Delete))?;
            c.key.clear();
            c.key.extend_from_slice(target);
            c.find_next(true)
        })
    }

    /// Positions at the last key `< target` (used by the double-ended scan).
    pub(crate) fn seek_before(&mut self, target: &[u8]) -> Result<()> {
        self.run(|c| {
            if !c.below_upper(target) {
                return c.last();
            }
            c.before_all_of(target)?;
            c.find_prev()
        })
    }

    /// Runs one positioning step, keeping the status and validity in line with its outcome.
    fn run(&mut self, step: impl FnOnce(&mut Cursor) -> Result<()>) -> Result<()> {
        self.status = None;
        let outcome = match &self.broken {
            Some(e) => Err(e.duplicate()),
            None => step(self),
        };
        match outcome {
            Ok(()) => Ok(()),
            Err(e) => {
                self.valid = false;
                self.status = Some(e.duplicate());
                Err(e)
            }
        }
    }

    fn first(&mut self) -> Result<()> {
        match &self.lower {
            Bound::Unbounded => {
                self.inner.seek_to_first()?;
                self.find_next(false)
            }
            Bound::Included(k) => {
                let target = key::encode(k, self.snapshot, KIND_SEEK);
                self.inner.seek(&target)?;
                self.find_next(false)
            }
            Bound::Excluded(k) => {
                // Sequence 0 with the lowest kind is the last possible entry of `k`: at most
                // that one entry of `k` follows, and the skip drops it.
                let target = key::encode(k, 0, Kind::Delete);
                self.key.clear();
                self.key.extend_from_slice(k);
                self.inner.seek(&target)?;
                self.find_next(true)
            }
        }
    }

    fn last(&mut self) -> Result<()> {
        match &self.upper {
            Bound::Unbounded => self.inner.seek_to_last()?,
            Bound::Included(k) => {
                let target = key::encode(k, 0, Kind::Delete);
                self.inner.seek_for_prev(&target)?;
            }
            Bound::Excluded(k) => {
                let k = k.clone();
                self.before_all_of(&k)?;
            }
        }
        self.find_prev()
    }

    /// Places `inner` on the last entry whose user key is `< user_key`.
    fn before_all_of(&mut self, user_key: &[u8]) -> Result<()> {
        self.inner
            .seek_for_prev(&key::encode(user_key, MAX_SEQ, KIND_SEEK))?;
        // Only an entry at the very largest sequence number could still be of `user_key`.
        while self.inner.valid() && key::user_key(self.inner.key()) >= user_key {
            self.inner.prev()?;
        }
        Ok(())
    }

    /// Whether a range tombstone visible at the snapshot hides the version of `user_key` at
    /// `seq`.
    fn range_deleted(&self, user_key: &[u8], seq: SeqNo) -> bool {
        !self.range_dels.is_empty() && self.range_dels.covers(user_key, seq, self.snapshot)
    }

    /// Whether `user_key` is within the lower bound.
    fn above_lower(&self, user_key: &[u8]) -> bool {
        match &self.lower {
            Bound::Included(l) => user_key >= l.as_slice(),
            Bound::Excluded(l) => user_key > l.as_slice(),
            Bound::Unbounded => true,
        }
    }

    /// Whether `user_key` is within the upper bound.
    fn below_upper(&self, user_key: &[u8]) -> bool {
        match &self.upper {
            Bound::Included(u) => user_key <= u.as_slice(),
            Bound::Excluded(u) => user_key < u.as_slice(),
            Bound::Unbounded => true,
        }
    }

    /// From `inner`'s position forward, finds the newest visible version of the next live
    /// user key and stops on it. With `skipping`, entries of user keys `<= self.key` are
    /// passed over first.
    fn find_next(&mut self, mut skipping: bool) -> Result<()> {
        self.direction = Direction::Forward;
        self.valid = false;
        while self.inner.valid() {
            let parsed = key::parse(self.inner.key())?;
            // The bound check comes first so that nothing past the first out-of-range entry
            // is read.
            if !self.below_upper(parsed.user_key) {
                return Ok(());
            }
            if parsed.seq <= self.snapshot && !(skipping && parsed.user_key <= self.key.as_slice())
            {
                // Entries of a user key come newest first: this is its newest visible one.
                self.key.clear();
                self.key.extend_from_slice(parsed.user_key);
                if parsed.kind == Kind::Put && !self.range_deleted(parsed.user_key, parsed.seq) {
                    self.valid = true;
                    return Ok(());
                }
                skipping = true;
            }
            self.inner.next()?;
        }
        Ok(())
    }

    /// From `inner`'s position backward, finds the previous live user key: walks back over
    /// all its entries (oldest first) so the last visible one seen is its newest, and stops
    /// on the last entry of the key before it.
    fn find_prev(&mut self) -> Result<()> {
        self.direction = Direction::Reverse;
        self.valid = false;
        let mut live = false;
        while self.inner.valid() {
            let parsed = key::parse(self.inner.key())?;
            if !self.above_lower(parsed.user_key) {
                break;
            }
            if parsed.seq <= self.snapshot {
                if live && parsed.user_key < self.key.as_slice() {
                    // Past every entry of the key found.
                    break;
                }
                self.key.clear();
                self.key.extend_from_slice(parsed.user_key);
                live = parsed.kind == Kind::Put && !self.range_deleted(parsed.user_key, parsed.seq);
                self.value.clear();
                if live {
                    self.value.extend_from_slice(self.inner.value());
                }
            }
            self.inner.prev()?;
        }
        self.valid = live;
        Ok(())
    }
}

impl std::fmt::Debug for Cursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cursor")
            .field("snapshot", &self.snapshot)
            .field("valid", &self.valid)
            .field("key", &self.key())
            .finish_non_exhaustive()
    }
}
