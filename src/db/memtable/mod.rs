//! The in-memory table of recent writes.
//!
//! A [`MemTable`] is a skip list of internal keys (see [`crate::util::key`]) in
//! [`key::compare`] order whose nodes live in an arena the memtable owns (`arena.rs`, the
//! list in `skiplist.rs`). Readers never take a lock, so a `get` or a scan is never blocked
//! by a writer; writers take a lock inside the list, which the `Db` never contends (it
//! serializes writers itself, since sequence numbers must be assigned in order anyway).
//!
//! Why an arena: a memtable is written once, read for a while and dropped whole, so its
//! entries need no allocation or freeing of their own. Each entry is one run of words
//! carved from big chunks (header, tower of links, key, trailer, value), about
//! [`ENTRY_OVERHEAD_BYTES`] beyond its key and value, where an allocation per entry and a
//! separately allocated skip-list node would cost over 100: more entries fit in a memtable of a given
//! budget (larger flushes), a fill spends no time in malloc and free, and dropping a memtable
//! frees a few chunks. The words are atomics, so all of this is safe Rust; keys are packed
//! into words big-endian, so a search compares them a word at a time.
//!
//! The chunks never move and nodes are never freed before the memtable is, so a
//! [`MemTableIter`] can own an `Arc<MemTable>`, be `'static`, and walk the links directly,
//! copying the current key and value into buffers of its own.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering as AtomicOrdering};

use arc_swap::ArcSwapOption;
use std::sync::{Arc, Mutex};

use crate::error::Result;
use crate::iter::InternalIterator;
use crate::range_del::{Fragments, RangeTombstone};
use crate::util::key::{self, KIND_SEEK, Kind, SeqNo, TRAILER_LEN};

mod arena;
mod key_filter;
mod skiplist;
use arena::{Addr, NULL};
use key_filter::KeyFilter;
use skiplist::{Probe, SkipList};

/// Bytes counted per entry by [`MemTable::approximate_bytes`] on top of the user key and value.
///
/// Where it comes from (see `skiplist.rs` for the node layout): the header word (height and
/// lengths, 8 bytes), the trailer of the internal key (8), a tower of on average 4/3 links
/// (a quarter of the nodes reach each next level: 10.7), and the zero padding of the key's and
/// the value's last words (3.5 each on average: 7), about 34; and the part of the newest arena
/// chunk not used yet (the newest chunk is 1/32 to 1/16 of the arena, half used on average:
/// about 2 per entry of 60-odd bytes). Measured with glibc on x86-64 (keys of 8 to 15 bytes,
/// values of 16 to 23, 400k entries): 35.7 resident bytes per entry beyond key and value (see
/// the ignored test `entry_overhead_estimate_matches_resident_memory`).
pub const ENTRY_OVERHEAD_BYTES: usize = 36;

/// The user key and trailer of an encoded internal key. One shorter than a trailer (never
/// made by the `Db`) reads as an empty user key with a zero trailer, as [`key::compare`]
/// reads it.
fn split_internal_key(ikey: &[u8]) -> (&[u8], u64) {
    let user_key = key::user_key(ikey);
    let mut trailer = [0u8; TRAILER_LEN];
    if let Some(t) = ikey.get(user_key.len()..).filter(|t| t.len() == TRAILER_LEN) {
        trailer.copy_from_slice(t);
    }
    (user_key, u64::from_le_bytes(trailer))
}

/// The sorted in-memory table of recent writes, shared as `Arc<MemTable>`.
///
/// `Send + Sync`: any number of threads may read (`get`, `iter`) while one thread adds.
pub struct MemTable {
    list: SkipList,
    /// The user keys added (point entries and tombstones), so that a lookup of a key this
    /// memtable lacks skips the search; `None` for a memtable made without a byte budget.
    keys: Option<KeyFilter>,
    bytes: AtomicUsize,
    entries: AtomicUsize,
    /// Range tombstones, beside the skip list (they cover keys, not one key), as added.
    range_dels: Mutex<Vec<RangeTombstone>>,
    /// Their fragmented form, read without a lock; rebuilt on the first read after an add
    /// (`range_dels_stale`). Looked at only when `range_del_count` is non-zero, so a memtable
    /// without range tombstones costs readers one atomic load.
    range_fragments: ArcSwapOption<Fragments>,
    range_dels_stale: AtomicBool,
    range_del_count: AtomicUsize,
}

impl Default for MemTable {
    fn default() -> Self {
        MemTable::new()
    }
}

impl std::fmt::Debug for MemTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemTable")
            .field("entries", &self.len())
            .field("approximate_bytes", &self.approximate_bytes())
            .finish()
    }
}

impl MemTable {
    /// An empty memtable, without a key filter (every lookup searches the skip list).
    pub fn new() -> MemTable {
        MemTable::with_budget(0)
    }

    /// An empty memtable that expects to hold about `memtable_bytes` (as
    /// [`MemTable::approximate_bytes`] counts them: the `Db` switches at
    /// `Options::memtable_bytes`), with a key filter of about 1% of that, so lookups of keys
    /// it lacks skip the skip list. It may hold more; lookups then skip less often.
    pub fn with_budget(memtable_bytes: usize) -> MemTable {
        MemTable {
            list: SkipList::new(),
            keys: KeyFilter::for_budget(memtable_bytes),
            bytes: AtomicUsize::new(0),
            entries: AtomicUsize::new(0),
            range_dels: Mutex::new(Vec::new()),
            range_fragments: ArcSwapOption::empty(),
            range_dels_stale: AtomicBool::new(false),
            range_del_count: AtomicUsize::new(0),
        }
    }

    /// Adds a range tombstone: `[start, end)` deleted at `seq`.
    pub fn add_range_delete(&self, seq: SeqNo, start: &[u8], end: &[u8]) {
        let mut list = self
            .range_dels
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        list.push(RangeTombstone {
            start: start.to_vec(),
            end: end.to_vec(),
            seq,
        });
        // Set under the lock, so a rebuild (also under it) cannot miss this tombstone.
        self.range_dels_stale.store(true, AtomicOrdering::Release);
        self.range_del_count.fetch_add(1, AtomicOrdering::Release);
        drop(list);
        self.bytes.fetch_add(
            start.len() + end.len() + ENTRY_OVERHEAD_BYTES,
            AtomicOrdering::Relaxed,
        );
    }

    /// Number of range tombstones added.
    pub fn range_delete_count(&self) -> usize {
        self.range_del_count.load(AtomicOrdering::Acquire)
    }

    /// The range tombstones, cut into disjoint pieces; `None` when there are none.
    pub fn range_fragments(&self) -> Option<Arc<Fragments>> {
        if self.range_delete_count() == 0 {
            return None;
        }
        if !self.range_dels_stale.load(AtomicOrdering::Acquire) {
            return self.range_fragments.load_full();
        }
        let list = self
            .range_dels
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if self.range_dels_stale.load(AtomicOrdering::Acquire) {
            self.range_fragments
                .store(Some(Arc::new(Fragments::build(&list))));
            self.range_dels_stale.store(false, AtomicOrdering::Release);
        }
        self.range_fragments.load_full()
    }

    /// Adds one version of `user_key`.
    ///
    /// Every `(user_key, seq, kind)` should be added at most once (the `Db`'s sequence numbers
    /// guarantee it); adding the same internal key again replaces its value and does not
    /// change [`MemTable::len`]. `seq` must be at most [`key::MAX_SEQ`].
    ///
    /// # Panics
    /// When `user_key` is longer than 256 MiB or `value` than 4 GiB (what an arena node's
    /// header records; the `Db` refuses keys over [`crate::MAX_KEY_BYTES`] and values over
    /// [`crate::MAX_VALUE_BYTES`] long before).
    pub fn add(&self, seq: SeqNo, kind: Kind, user_key: &[u8], value: &[u8]) {
        self.add_hashed(seq, kind, user_key, crate::filter::hash_key(user_key), value);
    }

    /// [`MemTable::add`] for a caller that has hashed `user_key` already (`hash` is
    /// [`crate::filter::hash_key`] of it). Panics as [`MemTable::add`] does.
    pub fn add_hashed(&self, seq: SeqNo, kind: Kind, user_key: &[u8], hash: u64, value: &[u8]) {
        // Before the entry goes in: a reader that can see the entry sees its bits.
        if let Some(f) = &self.keys {
            f.add(hash);
        }
        if self.list.insert(user_key, key::pack_trailer(seq, kind), value) {
            self.entries.fetch_add(1, AtomicOrdering::Relaxed);
        }
        self.bytes.fetch_add(
            user_key.len() + value.len() + ENTRY_OVERHEAD_BYTES,
            AtomicOrdering::Relaxed,
        );
    }

    /// The newest version of `user_key` with sequence number `<= snapshot`.
    ///
    /// Returns `Some((Kind::Put, value))`, `Some((Kind::Delete, vec![]))` for a tombstone or
    /// a covering range tombstone newer than any version here (the key is deleted as of
    /// `snapshot`: older tables must not be consulted), or `None` when this memtable holds no
    /// version visible at `snapshot`.
    pub fn get(&self, user_key: &[u8], snapshot: SeqNo) -> Option<(Kind, Vec<u8>)> {
        self.get_hashed(user_key, crate::filter::hash_key(user_key), snapshot)
    }

    /// [`MemTable::get`] for a caller that has hashed `user_key` already (`hash` is
    /// [`crate::filter::hash_key`] of it).
    pub fn get_hashed(
        &self,
        user_key: &[u8],
        hash: u64,
        snapshot: SeqNo,
    ) -> Option<(Kind, Vec<u8>)> {
        let covered = self.covering_range_delete(user_key, snapshot);
        // An empty memtable (common right after a switch or a reopen) answers from its count,
        // without touching the filter's words.
        let point = match &self.keys {
            _ if self.entries.load(AtomicOrdering::Relaxed) == 0 => None,
            Some(f) if !f.may_contain(hash) => None,
            _ => self.get_point(user_key, snapshot),
        };
        match (point, covered) {
            (Some((seq, kind, value)), t) if t.is_none_or(|t| t < seq) => Some((kind, value)),
            (_, Some(_)) => Some((Kind::Delete, Vec::new())),
            (_, None) => None,
        }
    }

    /// The newest range tombstone covering `user_key` visible at `snapshot`: its sequence
    /// number. Borrows the fragments (no reference count) unless they need a rebuild.
    fn covering_range_delete(&self, user_key: &[u8], snapshot: SeqNo) -> Option<SeqNo> {
        if self.range_delete_count() == 0 {
            return None;
        }
        if self.range_dels_stale.load(AtomicOrdering::Acquire) {
            return self.range_fragments()?.covering_seq(user_key, snapshot);
        }
        self.range_fragments
            .load()
            .as_ref()?
            .covering_seq(user_key, snapshot)
    }

    /// The newest point entry of `user_key` visible at `snapshot`, ignoring range tombstones.
    fn get_point(&self, user_key: &[u8], snapshot: SeqNo) -> Option<(SeqNo, Kind, Vec<u8>)> {
        let trailer = key::pack_trailer(snapshot.min(key::MAX_SEQ), KIND_SEEK);
        Probe::with(user_key, trailer, |p| {
            let found = self.list.seek_ge(p);
            if found == NULL {
                return None;
            }
            let node = self.list.node(found);
            if !node.user_key_is(p) {
                return None;
            }
            let trailer = node.trailer();
            match Kind::try_from((trailer & 0xff) as u8).ok()? {
                Kind::Put => {
                    let mut value = Vec::new();
                    node.value_into(&mut value);
                    Some((trailer >> 8, Kind::Put, value))
                }
                Kind::Delete => Some((trailer >> 8, Kind::Delete, Vec::new())),
            }
        })
    }

    /// Approximate memory used: user key and value bytes plus [`ENTRY_OVERHEAD_BYTES`] per
    /// add. This is what the `Db` compares with `Options::memtable_bytes`.
    pub fn approximate_bytes(&self) -> usize {
        self.bytes.load(AtomicOrdering::Relaxed)
    }

    /// Number of entries (versions, including tombstones).
    pub fn len(&self) -> usize {
        self.entries.load(AtomicOrdering::Relaxed)
    }

    /// True when nothing has been added (no entry, no range tombstone).
    pub fn is_empty(&self) -> bool {
        self.len() == 0 && self.range_delete_count() == 0
    }

    /// A cursor over all entries in internal-key order; unpositioned until a seek.
    ///
    /// It owns a clone of the `Arc`, so it may outlive the caller's handle. See
    /// [`MemTableIter`] for what it sees of concurrent adds.
    pub fn iter(self: &Arc<Self>) -> MemTableIter {
        MemTableIter {
            mem: Arc::clone(self),
            node: NULL,
            key: Vec::new(),
            value: Vec::new(),
            probe: Vec::new(),
        }
    }
}

/// An [`InternalIterator`] over a [`MemTable`].
///
/// Concurrent adds: after a seek it yields every entry that was in the table at that moment
/// and sorts at or after the target, in strictly increasing internal-key order, each once.
/// Entries added later may or may not be yielded (one linked after the current entry before
/// the iterator moves on is; `next` follows the links as they are then). Backwards, `prev`
/// searches for the entry before the current one, so it may find entries added since. Since
/// the `Db` reads at a snapshot sequence number, later adds (with newer sequence numbers) are
/// invisible to it either way.
pub struct MemTableIter {
    mem: Arc<MemTable>,
    /// The current node, or [`NULL`] when not positioned.
    node: Addr,
    /// The current node's internal key and value, copied out of the arena.
    key: Vec<u8>,
    value: Vec<u8>,
    /// Reused for the packed key of a search.
    probe: Vec<u64>,
}

impl MemTableIter {
    /// Makes `node` the current one and copies its key and value.
    fn land(&mut self, node: Addr) {
        self.node = node;
        self.key.clear();
        self.value.clear();
        if node != NULL {
            let n = self.mem.list.node(node);
            n.internal_key_into(&mut self.key);
            n.value_into(&mut self.value);
        }
    }
}

impl InternalIterator for MemTableIter {
    fn seek_to_first(&mut self) -> Result<()> {
        let first = self.mem.list.first();
        self.land(first);
        Ok(())
    }

    fn seek(&mut self, target: &[u8]) -> Result<()> {
        let (user_key, trailer) = split_internal_key(target);
        let p = Probe::in_buf(&mut self.probe, user_key, trailer);
        let found = self.mem.list.seek_ge(&p);
        self.land(found);
        Ok(())
    }

    fn next(&mut self) -> Result<()> {
        if self.node != NULL {
            let next = self.mem.list.next(self.node);
            self.land(next);
        }
        Ok(())
    }

    fn seek_to_last(&mut self) -> Result<()> {
        let last = self.mem.list.last();
        self.land(last);
        Ok(())
    }

    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        let (user_key, trailer) = split_internal_key(target);
        let p = Probe::in_buf(&mut self.probe, user_key, trailer);
        let found = self.mem.list.seek_le(&p);
        self.land(found);
        Ok(())
    }

    fn prev(&mut self) -> Result<()> {
        if self.node != NULL {
            let (user_key, trailer) = split_internal_key(&self.key);
            let p = Probe::in_buf(&mut self.probe, user_key, trailer);
            let before = self.mem.list.seek_lt(&p);
            self.land(before);
        }
        Ok(())
    }

    fn valid(&self) -> bool {
        self.node != NULL
    }

    fn key(&self) -> &[u8] {
        &self.key
    }

    fn value(&self) -> &[u8] {
        &self.value
    }
}

#[cfg(test)]
mod tests;
