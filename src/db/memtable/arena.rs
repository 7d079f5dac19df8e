//! The memory the memtable's skip list lives in: chunks of 64-bit words, handed out by a
//! bump pointer and freed all together when the memtable drops.
//!
//! Why words, and atomic ones: readers read nodes while the writer fills others in the same
//! chunk, without a lock. With every word an `AtomicU64` that is plain safe Rust (a relaxed
//! load or store is an ordinary move on the common targets), and the skip list publishes a
//! node, once written, with one release store of its address (see `skiplist.rs`).
//!
//! Why a fixed directory of chunks whose sizes grow: an address must turn into a word without
//! a lock, so the chunks are found through `OnceLock` slots that are set once and never move.
//! An address is `slot << 32 | word offset`. Chunk sizes grow with the slot number
//! (doubling every [`CHUNKS_PER_DOUBLING`] chunks), so a small memtable takes little memory
//! and a big one few chunks, while the unused tail of the newest chunk stays a small part of
//! the whole (at most about 1/16 of it).

use std::sync::OnceLock;
use std::sync::atomic::AtomicU64;

/// A word's address: `slot << 32 | offset`. Never [`NULL`] for an allocation.
pub(super) type Addr = u64;

/// The address no allocation has: word 0 of the first chunk is never handed out.
pub(super) const NULL: Addr = 0;

/// Chunk slots. With the growth below, 512 of them cover far more memory than a machine has.
const SLOTS: usize = 512;

/// Words of the first chunk (4 KiB): a memtable that stays small costs little.
const FIRST_CHUNK_WORDS: u64 = 512;

/// The regular chunk size doubles every this many chunks.
const CHUNKS_PER_DOUBLING: usize = 16;

/// Words a chunk may have at most: offsets fit in the low 32 bits of an address.
const MAX_CHUNK_WORDS: u64 = 1 << 32;

/// The size of a regular chunk in slot `slot`, in words.
fn regular_chunk_words(slot: usize) -> u64 {
    let doublings = u32::try_from(slot / CHUNKS_PER_DOUBLING).unwrap_or(u32::MAX);
    FIRST_CHUNK_WORDS
        .checked_shl(doublings)
        .filter(|&w| w <= MAX_CHUNK_WORDS)
        .unwrap_or(MAX_CHUNK_WORDS)
}

/// A zeroed chunk of `words` words.
fn new_chunk(words: u64) -> Box<[AtomicU64]> {
    let n = usize::try_from(words).unwrap_or(usize::MAX);
    (0..n).map(|_| AtomicU64::new(0)).collect()
}

/// The chunks. Reading needs only `&Arena`; allocating needs the one [`Cursor`] made with
/// it, so that exactly one party ever sets slots or hands out words.
pub(super) struct Arena {
    chunks: [OnceLock<Box<[AtomicU64]>>; SLOTS],
}

/// The allocating side of an [`Arena`]: where the next words come from.
pub(super) struct Cursor {
    /// The regular chunk being filled, and words of it used.
    slot: usize,
    used: u64,
    /// The first slot not set yet.
    next_slot: usize,
    /// Words in all chunks set so far.
    allocated_words: u64,
}

impl Arena {
    /// An arena with its first chunk, and the cursor that allocates from it.
    pub(super) fn new() -> (Arena, Cursor) {
        let arena = Arena {
            chunks: std::array::from_fn(|_| OnceLock::new()),
        };
        let _ = arena.chunks[0].set(new_chunk(FIRST_CHUNK_WORDS));
        let cursor = Cursor {
            slot: 0,
            // Word 0 stays unused, so that no allocation is at `NULL`.
            used: 1,
            next_slot: 1,
            allocated_words: FIRST_CHUNK_WORDS,
        };
        (arena, cursor)
    }

    /// The words from `addr` to the end of its chunk; empty for an address never handed out
    /// by this arena's cursor (a bug), so that indexing it panics instead of reading
    /// another node.
    #[inline]
    pub(super) fn words_from(&self, addr: Addr) -> &[AtomicU64] {
        let slot = (addr >> 32) as usize;
        let offset = (addr & 0xffff_ffff) as usize;
        match self.chunks.get(slot).and_then(OnceLock::get) {
            Some(chunk) => chunk.get(offset..).unwrap_or_default(),
            None => &[],
        }
    }

    /// `words` consecutive zeroed words, never handed out before; their address.
    ///
    /// A request that fits in the chunk being filled comes from it. A large one (over a
    /// quarter of a regular chunk) gets a chunk of its own and the chunk being filled stays
    /// current, so a large entry wastes no more than a small one. Otherwise a new regular
    /// chunk starts and the rest of the old one is left unused.
    ///
    /// # Panics
    /// When `words` is 2^32 or more (no entry the memtable accepts is that big), or when all
    /// chunk slots are used (some petabytes).
    pub(super) fn alloc(&self, cursor: &mut Cursor, words: usize) -> Addr {
        let words = words as u64;
        assert!(
            words < MAX_CHUNK_WORDS,
            "memtable arena: an allocation of {words} words"
        );
        let room = self.chunks[cursor.slot].get().map_or(0, |c| c.len() as u64);
        if cursor.used + words <= room {
            let addr = (cursor.slot as u64) << 32 | cursor.used;
            cursor.used += words;
            return addr;
        }
        let regular = regular_chunk_words(cursor.next_slot);
        let slot = cursor.next_slot;
        assert!(slot < SLOTS, "memtable arena: all {SLOTS} chunks used");
        cursor.next_slot += 1;
        if words > regular / 4 {
            self.set_chunk(cursor, slot, words);
            return (slot as u64) << 32;
        }
        self.set_chunk(cursor, slot, regular);
        cursor.slot = slot;
        cursor.used = words;
        (slot as u64) << 32
    }

    fn set_chunk(&self, cursor: &mut Cursor, slot: usize, words: u64) {
        // Only the cursor sets slots, and only the next unset one: the set cannot fail.
        let _ = self.chunks[slot].set(new_chunk(words));
        cursor.allocated_words += words;
    }
}

impl Cursor {
    /// Bytes in all chunks allocated so far.
    #[cfg(test)]
    pub(super) fn allocated_bytes(&self) -> u64 {
        self.allocated_words * 8
    }

    /// Chunks allocated so far.
    #[cfg(test)]
    pub(super) fn chunks(&self) -> usize {
        self.next_slot
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn chunk_sizes_grow_and_stay_addressable() {
        assert_eq!(regular_chunk_words(0), 512);
        assert_eq!(regular_chunk_words(CHUNKS_PER_DOUBLING - 1), 512);
        assert_eq!(regular_chunk_words(CHUNKS_PER_DOUBLING), 1024);
        assert_eq!(regular_chunk_words(SLOTS - 1), MAX_CHUNK_WORDS);
        assert_eq!(regular_chunk_words(usize::MAX), MAX_CHUNK_WORDS);
    }

    #[test]
    fn allocations_are_distinct_and_cross_chunk_boundaries() {
        let (arena, mut cursor) = Arena::new();
        let mut spans = Vec::new();
        // Sizes that do not divide the chunk, so chunks end with unused words.
        for i in 0..3000u64 {
            let words = 1 + (i % 7) as usize;
            let addr = arena.alloc(&mut cursor, words);
            assert_ne!(addr, NULL);
            let span = &arena.words_from(addr)[..words];
            for (j, w) in span.iter().enumerate() {
                assert_eq!(w.load(Ordering::Relaxed), 0, "handed out twice");
                w.store(i << 8 | j as u64 | 1 << 63, Ordering::Relaxed);
            }
            spans.push((addr, words, i));
        }
        assert!(cursor.chunks() > 2, "{} chunks", cursor.chunks());
        for (addr, words, i) in spans {
            for (j, w) in arena.words_from(addr)[..words].iter().enumerate() {
                assert_eq!(w.load(Ordering::Relaxed), i << 8 | j as u64 | 1 << 63);
            }
        }
    }

    #[test]
    fn a_large_allocation_gets_its_own_chunk_and_the_current_one_goes_on() {
        let (arena, mut cursor) = Arena::new();
        let a = arena.alloc(&mut cursor, 10);
        let big = arena.alloc(&mut cursor, 5000);
        assert_eq!(big & 0xffff_ffff, 0, "starts a chunk");
        assert_eq!(arena.words_from(big).len(), 5000, "a chunk of exactly its size");
        let b = arena.alloc(&mut cursor, 10);
        assert_eq!(b, a + 10, "the regular chunk is still being filled");
        // With the chunk nearly full, a request just over a quarter of a regular chunk that
        // does not fit is large too.
        assert_eq!(arena.alloc(&mut cursor, 400), b + 10);
        let quarter = arena.alloc(&mut cursor, 129);
        assert_eq!(arena.words_from(quarter).len(), 129);
        assert_eq!(arena.alloc(&mut cursor, 1), b + 410);
        assert_eq!(
            cursor.allocated_bytes(),
            (512 + 5000 + 129) * 8,
            "no regular chunk was started"
        );
    }

    #[test]
    fn a_request_that_does_not_fit_starts_a_new_regular_chunk() {
        let (arena, mut cursor) = Arena::new();
        let first = arena.alloc(&mut cursor, 100);
        assert_eq!(first, 1);
        for _ in 0..4 {
            arena.alloc(&mut cursor, 100);
        }
        // 501 of 512 words used: 100 more do not fit.
        let next = arena.alloc(&mut cursor, 100);
        assert_eq!(next, 1 << 32);
        assert_eq!(arena.words_from(next).len(), 512);
        assert_eq!(arena.alloc(&mut cursor, 1), (1 << 32) + 100);
    }

    #[test]
    fn unknown_addresses_read_as_empty() {
        let (arena, _cursor) = Arena::new();
        assert!(arena.words_from(7 << 32).is_empty());
        assert!(arena.words_from(1 << 20).is_empty());
        assert!(arena.words_from(u64::MAX).is_empty());
        assert_eq!(arena.words_from(NULL).len(), 512);
    }
}
