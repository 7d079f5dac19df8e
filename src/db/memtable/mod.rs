//! The in-memory table of recent writes.
//!
//! A [`MemTable`] is a lock-free skip list ([`crossbeam_skiplist::SkipMap`]) of internal keys
//! (see [`crate::util::key`]) in [`key::compare`] order. Readers never take a lock, so a `get` or a
//! scan is never blocked by a writer; the `Db` serializes writers itself (the skip list would
//! tolerate concurrent adds too, but sequence numbers must be assigned in order anyway).
//!
//! Each entry is stored as ONE shared allocation holding `internal key ++ value`, used as the
//! skip-list key (the skip-list value is `()`). Sharing it through an `Arc` lets
//! [`MemTableIter`] hold on to entries without copying keys or values and without borrowing
//! from the map, so the iterator can own its `Arc<MemTable>` and be `'static`.

use std::cell::Cell;
use std::cmp::Ordering;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering as AtomicOrdering};

use arc_swap::ArcSwapOption;
use std::sync::{Arc, Mutex};

use crossbeam_skiplist::SkipMap;

use crate::error::Result;
use crate::iter::InternalIterator;
use crate::util::key::{self, KIND_SEEK, Kind, SeqNo, TRAILER_LEN};
use crate::range_del::{Fragments, RangeTombstone};

mod key_filter;
use key_filter::KeyFilter;

/// Bytes counted per entry by [`MemTable::approximate_bytes`] on top of the user key and value.
///
/// Where it comes from (64-bit target): the 8-byte trailer of the internal key and the 4-byte
/// length in front of it; the skip-list node (32-byte entry handle, 8-byte reference
/// count/height word, a tower of on average 2 pointers: 56 bytes, 64 after allocator
/// rounding); the shared allocation's two 8-byte counters plus allocator header and rounding
/// (about 32). Measured with glibc on x86-64 (8-byte keys, 16-byte values, 400k entries): 109
/// resident bytes per entry beyond key and value (see the ignored test
/// `entry_overhead_estimate_matches_resident_memory`).
pub const ENTRY_OVERHEAD_BYTES: usize = 112;

/// Bytes in front of the internal key in an entry's allocation: its length, little-endian.
const LEN_BYTES: usize = 4;

/// One memtable entry: `internal key length (u32 LE) ++ internal key ++ value` in a single
/// shared allocation.
///
/// Ordered by the internal-key part only ([`key::compare`]), which is what the skip list sorts.
#[derive(Clone)]
struct MemEntry {
    /// The first 16 bytes of the user key, big-endian, zero-padded. Kept inline in the
    /// skip-list node so that most comparisons during a search do not touch (and cache-miss
    /// on) the shared allocation. Sixteen rather than eight because keys commonly share their
    /// first eight bytes (a table or type tag followed by a name such as `user:1234`), and
    /// then every comparison of a search would go to the allocation.
    prefix: [u64; 2],
    bytes: Arc<[u8]>,
}

/// See [`MemEntry::prefix`]. If two prefixes differ, the user keys compare the same way:
/// they first differ inside the first 16 bytes, either at real bytes or where the shorter
/// key is padded with 0 against a real byte of the longer one (which is then > 0, and the
/// shorter key is the smaller).
fn user_key_prefix(user_key: &[u8]) -> [u64; 2] {
    let mut p = [0u8; 16];
    let n = user_key.len().min(16);
    p[..n].copy_from_slice(&user_key[..n]);
    let (hi, lo) = p.split_at(8);
    [
        u64::from_be_bytes(hi.try_into().unwrap_or_default()),
        u64::from_be_bytes(lo.try_into().unwrap_or_default()),
    ]
}

/// Entries up to this size are assembled in a per-thread buffer and copied into their
/// allocation in one piece; bigger ones through a `Vec` of their own (two allocations, but
/// no big buffer kept per thread).
const SCRATCH_MAX: usize = 64 << 10;

thread_local! {
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// One allocation of `LEN_BYTES ++ user_key ++ trailer ++ value`. The parts are laid out in a
/// reused buffer first and the allocation copies them in one `memcpy`: filling a fresh
/// `Arc<[u8]>` any other way without `unsafe` goes byte by byte.
fn entry_bytes(user_key: &[u8], trailer: [u8; TRAILER_LEN], value: &[u8]) -> Arc<[u8]> {
    let ikey_len = user_key.len() + TRAILER_LEN;
    // Keys are at most `MAX_KEY_BYTES` (64 KiB): the length fits in 4 bytes.
    let len = u32::try_from(ikey_len).unwrap_or(u32::MAX).to_le_bytes();
    let fill = |buf: &mut Vec<u8>| {
        buf.clear();
        buf.extend_from_slice(&len);
        buf.extend_from_slice(user_key);
        buf.extend_from_slice(&trailer);
        buf.extend_from_slice(value);
    };
    let total = LEN_BYTES + ikey_len + value.len();
    if total > SCRATCH_MAX {
        let mut buf = Vec::with_capacity(total);
        fill(&mut buf);
        return Arc::from(buf);
    }
    SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut buf) => {
            fill(&mut buf);
            Arc::from(&buf[..])
        }
        // Not reentrant in practice; a second borrow on this thread builds its own.
        Err(_) => {
            let mut buf = Vec::with_capacity(total);
            fill(&mut buf);
            Arc::from(buf)
        }
    })
}

impl MemEntry {
    fn new(user_key: &[u8], seq: SeqNo, kind: Kind, value: &[u8]) -> MemEntry {
        let trailer = key::pack_trailer(seq, kind).to_le_bytes();
        MemEntry {
            prefix: user_key_prefix(user_key),
            bytes: entry_bytes(user_key, trailer, value),
        }
    }

    /// A key-only entry used as a search target: `user_key` at `seq` with `kind`.
    fn target_parts(user_key: &[u8], seq: SeqNo, kind: Kind) -> MemEntry {
        let trailer = key::pack_trailer(seq, kind).to_le_bytes();
        MemEntry {
            prefix: user_key_prefix(user_key),
            bytes: entry_bytes(user_key, trailer, &[]),
        }
    }

    /// A key-only entry used as a search target, from an encoded internal key.
    fn target(ikey: &[u8]) -> MemEntry {
        let user_key = key::user_key(ikey);
        let mut trailer = [0u8; TRAILER_LEN];
        // An internal key shorter than a trailer (never made by the `Db`) compares as an
        // empty user key with a zero trailer, as `key::compare` reads it.
        if let Some(t) = ikey.get(user_key.len()..).filter(|t| t.len() == TRAILER_LEN) {
            trailer.copy_from_slice(t);
        }
        MemEntry {
            prefix: user_key_prefix(user_key),
            bytes: entry_bytes(user_key, trailer, &[]),
        }
    }

    fn ikey_len(&self) -> usize {
        let mut len = [0u8; LEN_BYTES];
        len.copy_from_slice(&self.bytes[..LEN_BYTES]);
        u32::from_le_bytes(len) as usize
    }

    fn ikey(&self) -> &[u8] {
        &self.bytes[LEN_BYTES..LEN_BYTES + self.ikey_len()]
    }

    fn value(&self) -> &[u8] {
        &self.bytes[LEN_BYTES + self.ikey_len()..]
    }
}

impl PartialEq for MemEntry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for MemEntry {}

impl PartialOrd for MemEntry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for MemEntry {
    fn cmp(&self, other: &Self) -> Ordering {
        match self.prefix[0].cmp(&other.prefix[0]) {
            Ordering::Equal => match self.prefix[1].cmp(&other.prefix[1]) {
                Ordering::Equal => key::compare(self.ikey(), other.ikey()),
                o => o,
            },
            o => o,
        }
    }
}

/// The sorted in-memory table of recent writes, shared as `Arc<MemTable>`.
///
/// `Send + Sync`: any number of threads may read (`get`, `iter`) while one thread adds.
pub struct MemTable {
    map: SkipMap<MemEntry, ()>,
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
            map: SkipMap::new(),
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
    pub fn add(&self, seq: SeqNo, kind: Kind, user_key: &[u8], value: &[u8]) {
        self.add_hashed(seq, kind, user_key, crate::filter::hash_key(user_key), value);
    }

    /// [`MemTable::add`] for a caller that has hashed `user_key` already (`hash` is
    /// [`crate::filter::hash_key`] of it).
    pub fn add_hashed(&self, seq: SeqNo, kind: Kind, user_key: &[u8], hash: u64, value: &[u8]) {
        // Before the entry goes in: a reader that can see the entry sees its bits.
        if let Some(f) = &self.keys {
            f.add(hash);
        }
        let entry = MemEntry::new(user_key, seq, kind, value);
        let replaced = Cell::new(false);
        self.map.compare_insert(entry, (), |_| {
            replaced.set(true);
            true
        });
        if !replaced.get() {
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
        let target = MemEntry::target_parts(user_key, snapshot.min(key::MAX_SEQ), KIND_SEEK);
        let found = self.map.lower_bound(Bound::Included(&target))?;
        let entry = found.key();
        let parsed = key::parse(entry.ikey()).ok()?;
        if parsed.user_key != user_key {
            return None;
        }
        match parsed.kind {
            Kind::Put => Some((parsed.seq, Kind::Put, entry.value().to_vec())),
            Kind::Delete => Some((parsed.seq, Kind::Delete, Vec::new())),
        }
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
            buf: Vec::new(),
            pos: 0,
        }
    }
}

/// Entries fetched from the skip list per refill of a [`MemTableIter`]: amortizes the
/// O(log n) search that resumes after the last fetched key. Cheap, since fetching clones
/// `Arc`s, not bytes.
const CHUNK: usize = 64;

/// An [`InternalIterator`] over a [`MemTable`].
///
/// Concurrent adds: after a seek it yields every entry that was in the table at that moment
/// and sorts at or after the target, in strictly increasing internal-key order, each once.
/// Entries added later may or may not be yielded (those sorting after the entries already
/// fetched are; it fetches 64 entries at a time). Since the `Db` reads at a snapshot
/// sequence number, later adds (with newer sequence numbers) are invisible to it either way.
pub struct MemTableIter {
    mem: Arc<MemTable>,
    /// Fetched entries; `buf[pos]` is the current one when `pos < buf.len()`.
    buf: Vec<MemEntry>,
    pos: usize,
}

impl MemTableIter {
    /// Replaces the buffer with up to [`CHUNK`] entries starting at `bound`.
    fn fill(&mut self, bound: Bound<&MemEntry>) {
        let first = self.mem.map.lower_bound(bound);
        self.buf.clear();
        self.pos = 0;
        let mut cur = first;
        while let Some(e) = cur {
            self.buf.push(e.key().clone());
            if self.buf.len() >= CHUNK {
                break;
            }
            cur = e.next();
        }
    }

    /// Replaces the buffer with up to [`CHUNK`] entries ending at `bound` (the last entry
    /// `<= bound`, or `< bound` when excluded), positioned at the last of them.
    fn fill_back(&mut self, bound: Bound<&MemEntry>) {
        let last = self.mem.map.upper_bound(bound);
        self.buf.clear();
        let mut cur = last;
        while let Some(e) = cur {
            self.buf.push(e.key().clone());
            if self.buf.len() >= CHUNK {
                break;
            }
            cur = e.prev();
        }
        self.buf.reverse();
        self.pos = self.buf.len().saturating_sub(1);
    }
}

impl InternalIterator for MemTableIter {
    fn seek_to_first(&mut self) -> Result<()> {
        self.fill(Bound::Unbounded);
        Ok(())
    }

    fn seek(&mut self, target: &[u8]) -> Result<()> {
        let t = MemEntry::target(target);
        self.fill(Bound::Included(&t));
        Ok(())
    }

    fn next(&mut self) -> Result<()> {
        if self.pos + 1 < self.buf.len() {
            self.pos += 1;
        } else if let Some(last) = self.buf.last().cloned() {
            self.fill(Bound::Excluded(&last));
        }
        Ok(())
    }

    fn seek_to_last(&mut self) -> Result<()> {
        self.fill_back(Bound::Unbounded);
        Ok(())
    }

    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        let t = MemEntry::target(target);
        self.fill_back(Bound::Included(&t));
        Ok(())
    }

    fn prev(&mut self) -> Result<()> {
        if self.pos > 0 && self.pos < self.buf.len() {
            self.pos -= 1;
        } else if let Some(first) = self.buf.first().cloned() {
            self.fill_back(Bound::Excluded(&first));
        }
        Ok(())
    }

    fn valid(&self) -> bool {
        self.pos < self.buf.len()
    }

    fn key(&self) -> &[u8] {
        self.buf[self.pos].ikey()
    }

    fn value(&self) -> &[u8] {
        self.buf[self.pos].value()
    }
}

#[cfg(test)]
mod tests;
