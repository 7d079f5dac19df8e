//! The user-facing scan: turns a stream of internal entries into the user's view at a snapshot,
//! from either end.

use std::any::Any;
use std::iter::FusedIterator;
use std::ops::Bound;

use crate::error::Result;
use crate::iter::InternalIterator;
use crate::iter::cursor::Cursor;
use crate::util::key::SeqNo;

/// The `(key, value)` pairs of every user key in a range whose newest version at a snapshot
/// is a put, ascending from the front and descending from the back.
///
/// Returned by [`Db::scan`](crate::Db::scan) and [`Snapshot::scan`](crate::Snapshot::scan);
/// it reads a merged stream of every memtable's and table's entries through a [`Cursor`]. It
/// hides versions newer than the snapshot,
/// older versions of a key it already decided on, and deleted keys. It positions lazily on the
/// first `next` (or `next_back`) and reads at most one entry past the end bound going forward.
///
/// It is a [`DoubleEndedIterator`]: `.rev()` walks the range backward, and `next` and
/// `next_back` may be mixed; the two ends meet in the middle without yielding a key twice.
/// Switching between the ends re-seeks the one cursor it holds. After yielding an error it
/// ends (it is fused).
pub struct DbIter {
    cursor: Cursor,
    /// Which end the cursor sits at: the key it is on was the last one yielded from there.
    at: Option<End>,
    /// The last key yielded from the front, recorded when the cursor leaves the front.
    front: Option<Vec<u8>>,
    /// The last key yielded from the back, recorded when the cursor leaves the back.
    back: Option<Vec<u8>>,
    done: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Front,
    Back,
}

impl DbIter {
    internal_item! {
        /// A scan of `inner` at `snapshot` over user keys within `start` and `end`.
        fn new(
            inner: Box<dyn InternalIterator>,
            snapshot: SeqNo,
            start: Bound<Vec<u8>>,
            end: Bound<Vec<u8>>,
        ) -> DbIter {
            DbIter {
                cursor: Cursor::new(inner, snapshot, start, end),
                at: None,
                front: None,
                back: None,
                done: false,
            }
        }
    }

    /// Hides what the range tombstones cover (see [`Cursor::with_range_dels`]).
    #[must_use]
    pub(crate) fn with_range_dels(
        mut self,
        range_dels: Result<crate::range_del::RangeDelView>,
    ) -> DbIter {
        self.cursor = self.cursor.with_range_dels(range_dels);
        self
    }

    internal_item! {
        /// Keeps `guard` alive until this iterator is dropped (after the inner iterator).
        #[must_use]
        fn with_keep_alive(mut self, guard: Box<dyn Any + Send>) -> DbIter {
            self.cursor = self.cursor.with_keep_alive(guard);
            self
        }
    }

    /// Moves the cursor to the next pair from `end`, re-seeking if it sits at the other end.
    fn position(&mut self, end: End) -> Result<()> {
        if self.at == Some(end) {
            return match end {
                End::Front => self.cursor.next(),
                End::Back => self.cursor.prev(),
            };
        }
        // Record where the other end stopped: the cursor is on its last key.
        if self.cursor.valid() {
            let other = match end {
                End::Front => &mut self.back,
                End::Back => &mut self.front,
            };
            *other = Some(self.cursor.key().to_vec());
        }
        self.at = Some(end);
        match (end, &self.front, &self.back) {
            (End::Front, Some(f), _) => {
                let f = f.clone();
                self.cursor.seek_after(&f)
            }
            (End::Front, None, _) => self.cursor.seek_to_first(),
            (End::Back, _, Some(b)) => {
                let b = b.clone();
                self.cursor.seek_before(&b)
            }
            (End::Back, _, None) => self.cursor.seek_to_last(),
        }
    }

    fn step(&mut self, end: End) -> Option<Result<(Vec<u8>, Vec<u8>)>> {
        if self.done {
            return None;
        }
        if let Err(e) = self.position(end) {
            self.done = true;
            return Some(Err(e));
        }
        let key = self.cursor.key();
        let met = !self.cursor.valid()
            || match end {
                End::Front => self.back.as_deref().is_some_and(|b| key >= b),
                End::Back => self.front.as_deref().is_some_and(|f| key <= f),
            };
        if met {
            self.done = true;
            return None;
        }
        Some(Ok((key.to_vec(), self.cursor.value().to_vec())))
    }
}

impl Iterator for DbIter {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.step(End::Front)
    }
}

impl DoubleEndedIterator for DbIter {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.step(End::Back)
    }
}

impl FusedIterator for DbIter {}

impl std::fmt::Debug for DbIter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbIter")
            .field("snapshot", &self.cursor.sequence())
            .field("at", &self.at)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}
