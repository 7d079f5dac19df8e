//! The user-facing scan: turns a stream of internal entries into the user's view at a snapshot.

use std::any::Any;
use std::iter::FusedIterator;
use std::ops::Bound;

use crate::error::Result;
use crate::iter::InternalIterator;
use crate::key::{self, KIND_SEEK, Kind, SeqNo};

/// Ascending `(key, value)` pairs of every user key in a range whose newest version at a
/// snapshot is a put.
///
/// Returned by [`Db::scan`](crate::Db::scan) and [`Snapshot::scan`](crate::Snapshot::scan).
/// It reads a merged stream of every memtable's and table's entries and hides versions newer than the snapshot, older versions of a
/// key it already decided on, and deleted keys. It positions lazily on the first `next` and
/// reads at most one entry past the end bound. After yielding an error it ends (it is fused).
pub struct DbIter {
    // Field order matters: `inner` drops before `keep_alive`, which may own what `inner`
    // reads from (e.g. a version reference keeping table files alive).
    inner: Box<dyn InternalIterator>,
    snapshot: SeqNo,
    start: Bound<Vec<u8>>,
    end: Bound<Vec<u8>>,
    started: bool,
    done: bool,
    /// A user key whose remaining entries are to be skipped: the key last yielded or found
    /// deleted, or an excluded start key.
    skip: Option<Vec<u8>>,
    keep_alive: Option<Box<dyn Any + Send>>,
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
                inner,
                snapshot: snapshot.min(key::MAX_SEQ),
                start,
                end,
                started: false,
                done: false,
                skip: None,
                keep_alive: None,
            }
        }
    }

    internal_item! {
        /// Keeps `guard` alive until this iterator is dropped (after the inner iterator).
        #[must_use]
        fn with_keep_alive(mut self, guard: Box<dyn Any + Send>) -> DbIter {
            self.keep_alive = Some(guard);
            self
        }
    }

    /// Positions the inner iterator at the first entry that may be in range.
    fn position(&mut self) -> Result<()> {
        match &self.start {
            Bound::Included(k) => self.inner.seek(&key::encode(k, self.snapshot, KIND_SEEK)),
            Bound::Excluded(k) => {
                // Sequence 0 with the lowest kind is the last possible entry of `k`; at most
                // that one entry of `k` follows, and `skip` drops it.
                let target = key::encode(k, 0, Kind::Delete);
                self.skip = Some(k.clone());
                self.inner.seek(&target)
            }
            Bound::Unbounded => self.inner.seek_to_first(),
        }
    }

    fn past_end(&self, user_key: &[u8]) -> bool {
        match &self.end {
            Bound::Included(e) => user_key > e.as_slice(),
            Bound::Excluded(e) => user_key >= e.as_slice(),
            Bound::Unbounded => false,
        }
    }

    /// The next visible pair, `None` at the end.
    fn step(&mut self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        if !self.started {
            self.started = true;
            self.position()?;
        }
        while self.inner.valid() {
            let parsed = key::parse(self.inner.key())?;
            // The end check comes first so that nothing past the first out-of-range entry
            // is read.
            if self.past_end(parsed.user_key) {
                return Ok(None);
            }
            if self.skip.as_deref() == Some(parsed.user_key) || parsed.seq > self.snapshot {
                self.inner.next()?;
                continue;
            }
            // Entries of a user key come newest first, so this is the newest visible version.
            let skip = self.skip.get_or_insert_with(Vec::new);
            skip.clear();
            skip.extend_from_slice(parsed.user_key);
            match parsed.kind {
                Kind::Put => {
                    // Leave `inner` on this entry: the next call skips the rest of this key,
                    // so no entry past the end bound is read before the caller asks.
                    return Ok(Some((skip.clone(), self.inner.value().to_vec())));
                }
                Kind::Delete => self.inner.next()?,
            }
        }
        Ok(None)
    }
}

impl Iterator for DbIter {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.step() {
            Ok(Some(pair)) => Some(Ok(pair)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl FusedIterator for DbIter {}

impl std::fmt::Debug for DbIter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbIter")
            .field("snapshot", &self.snapshot)
            .field("started", &self.started)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}
