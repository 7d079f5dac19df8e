//! Compaction filters (RocksDB's `CompactionFilter`): a user hook that compactions consult to
//! drop or rewrite entries nobody needs any more, without a read or a write from the user: an
//! expired key, or a member of a collection whose owner was deleted or re-created under a
//! newer version.
//!
//! A filter must never change an answer a reader is entitled to, so the engine consults it
//! only where that cannot happen (see [`CompactionFilter`]); what a filter decides must stay
//! true for every later state of the database (an entry that is garbage now is garbage
//! forever: expiry times and collection versions only move forward).

use std::any::Any;

use crate::error::Result;

/// What a compaction does with an entry its [`CompactionFilter`] was asked about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompactionDecision {
    /// Keep the entry as it is.
    Keep,
    /// Drop the entry: the key reads as absent from then on. Where a deeper level may hold an
    /// older version of the key, the entry is replaced by a tombstone (so that version does
    /// not come back); otherwise it simply goes.
    Remove,
    /// Keep the entry with this value instead.
    ChangeValue(Vec<u8>),
}

/// A hook that compactions consult for entries, to drop or rewrite them
/// ([`crate::Options::compaction_filter`]; RocksDB's `CompactionFilter`).
///
/// **When it is consulted.** Only for an entry that every reader sees the same way: the
/// newest version of its key among the compaction's inputs, a put (never a tombstone), older
/// than every live snapshot, and not deleted by a range delete. Older versions a snapshot
/// still reads, tombstones and range deletes are never shown to it, so no snapshot's answer
/// changes; after a [`CompactionDecision::Remove`] no older version comes back. Only
/// compactions consult it: not flushes (they run while writers wait for room, and a
/// flushed entry meets the filter at its first compaction, usually within a few flushes),
/// not tables moved down a level unchanged, not re-filter rewrites. Data no compaction
/// touches is not filtered: [`crate::Db::compact_range`] rewrites a range down to its
/// bottom level and so filters all of it.
///
/// **What it may rely on.** [`CompactionFilterContext::get`] reads the database as it was
/// when the compaction started (at its oldest live snapshot, if one is older), and that state
/// stays readable for the whole compaction. A decision must hold for that state and every
/// later one; the engine guarantees every reader reads that state or a later one.
///
/// Several compactions may call one filter at once, from different threads. A panic in the
/// filter fails the compaction, which stops writes like any background failure.
///
/// # Examples
/// A filter that drops entries whose value starts with an expiry time (seconds, big-endian)
/// that has passed, and caches per compaction how many it dropped:
///
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use std::sync::Arc;
/// use bloomkv::{CompactionDecision, CompactionFilter, CompactionFilterContext, Db, Options};
///
/// #[derive(Debug)]
/// struct Expiry {
///     now: u64,
/// }
///
/// impl CompactionFilter for Expiry {
///     fn name(&self) -> &str {
///         "expiry"
///     }
///     fn filter(
///         &self,
///         ctx: &mut CompactionFilterContext<'_>,
///         _key: &[u8],
///         value: &[u8],
///     ) -> CompactionDecision {
///         let Some(at) = value.get(..8).and_then(|b| b.try_into().ok()) else {
///             return CompactionDecision::Keep;
///         };
///         if u64::from_be_bytes(at) <= self.now {
///             *ctx.job_state::<u64>() += 1;
///             CompactionDecision::Remove
///         } else {
///             CompactionDecision::Keep
///         }
///     }
/// }
///
/// let dir = tempfile::tempdir()?;
/// let opts = Options {
///     compaction_filter: Some(Arc::new(Expiry { now: 1_000 })),
///     ..Options::default()
/// };
/// let db = Db::open(dir.path(), opts)?;
/// db.put("old", 500u64.to_be_bytes())?;
/// db.put("new", 5_000u64.to_be_bytes())?;
/// db.compact()?;
/// assert_eq!(db.get("old")?, None);
/// assert!(db.get("new")?.is_some());
/// # Ok(())
/// # }
/// ```
pub trait CompactionFilter: Send + Sync + std::fmt::Debug {
    /// A name for logs and error messages.
    fn name(&self) -> &str;

    /// Decides what the compaction writing tables of `ctx.output_level()` does with the entry
    /// `key` = `value` (see the trait's documentation for which entries it is asked about).
    fn filter(
        &self,
        ctx: &mut CompactionFilterContext<'_>,
        key: &[u8],
        value: &[u8],
    ) -> CompactionDecision;
}

/// How a context reads the database: the value of a key, at the compaction's snapshot.
type ReadFn<'a> = dyn Fn(&[u8]) -> Result<Option<Vec<u8>>> + 'a;

/// What a [`CompactionFilter`] gets besides the entry: the compaction's output level, reads
/// of the database as of the compaction's start, and state of its own for the length of one
/// compaction.
pub struct CompactionFilterContext<'a> {
    output_level: usize,
    reader: &'a ReadFn<'a>,
    state: Option<Box<dyn Any + Send>>,
}

impl std::fmt::Debug for CompactionFilterContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompactionFilterContext")
            .field("output_level", &self.output_level)
            .finish_non_exhaustive()
    }
}

impl<'a> CompactionFilterContext<'a> {
    /// A context for a compaction into `output_level` whose reads go to `reader`. The engine
    /// makes one per compaction; this is for testing a filter on its own.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::CompactionFilterContext;
    ///
    /// let reader = |key: &[u8]| Ok((key == b"meta").then(|| b"v2".to_vec()));
    /// let ctx = CompactionFilterContext::new(3, &reader);
    /// assert_eq!(ctx.output_level(), 3);
    /// assert_eq!(ctx.get("meta").unwrap(), Some(b"v2".to_vec()));
    /// ```
    pub fn new(output_level: usize, reader: &'a ReadFn<'a>) -> CompactionFilterContext<'a> {
        CompactionFilterContext {
            output_level,
            reader,
            state: None,
        }
    }

    /// The level the compaction writes its tables to (1 and deeper).
    pub fn output_level(&self) -> usize {
        self.output_level
    }

    /// The value `key` had when the compaction started (as `Snapshot::get` at that moment,
    /// or at the oldest live snapshot if one is older): the same state for every call of one
    /// compaction, however writes go on meanwhile. It reads like any lookup (memtables,
    /// tables, filters, block cache).
    ///
    /// # Errors
    /// As for [`crate::Db::get`]; a filter that cannot read what it needs should answer
    /// [`CompactionDecision::Keep`].
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        (self.reader)(key.as_ref())
    }

    /// State the filter keeps for the length of one compaction, created with `T::default()`
    /// on first use (or when asked for another type). The entries of one compaction come in
    /// key order, so a filter can remember what it looked up for the last key (the metadata
    /// of the collection whose members follow) instead of reading it again for each entry.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::CompactionFilterContext;
    ///
    /// let reader = |_: &[u8]| Ok(None);
    /// let mut ctx = CompactionFilterContext::new(1, &reader);
    /// ctx.job_state::<Vec<u8>>().extend_from_slice(b"owner-7");
    /// assert_eq!(ctx.job_state::<Vec<u8>>(), b"owner-7");
    /// ```
    pub fn job_state<T: Default + Send + 'static>(&mut self) -> &mut T {
        if !self.state.as_ref().is_some_and(|s| s.is::<T>()) {
            self.state = Some(Box::new(T::default()));
        }
        match self.state.as_mut().and_then(|s| s.downcast_mut::<T>()) {
            Some(t) => t,
            None => unreachable!("job_state holds the type it was just given"),
        }
    }
}
