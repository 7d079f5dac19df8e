//! The memtable's skip list: nodes in an [`Arena`], found by lock-free readers while one
//! writer at a time links new ones.
//!
//! A node is a run of words:
//! ```text
//! +--------+----------------------+-----------------+---------+----------------+
//! | header | next[0..height]      | user key words  | trailer | value words    |
//! +--------+----------------------+-----------------+---------+----------------+
//! header = height << 60 | user key length << 32 | value length
//! ```
//! The user key is packed big-endian into words, the last one padded with zero bytes, so keys
//! compare a word at a time: the first differing word orders them (a zero pad against a real
//! byte of a longer key can only differ where that byte is not zero, and then the longer key
//! is the larger), and when all shared words are equal the shorter key is a prefix of the
//! longer. The trailer is the internal key's `seq << 8 | kind` (ordered descending, as in
//! [`crate::util::key::compare`]). The value is packed the same way.
//!
//! Publication: the writer fills a node completely with relaxed stores, then links it level by
//! level, bottom up, each link a release store of its address; readers load links with
//! acquire, so a node reachable to them is complete. Nodes are never changed after that
//! except for their links, and never freed before the arena is, so a reader may stand on any
//! node it reached for as long as it holds the list. Re-adding an internal key links a new
//! node in the old one's place (same height, same successors); the old one stays readable
//! and still leads to the rest of the list.

use std::cmp::Ordering;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering as AtomicOrdering};

use parking_lot::Mutex;

use super::arena::{Addr, Arena, Cursor, NULL};

/// The tallest tower. With a quarter of the nodes reaching each next level, searches stay
/// logarithmic up to 4^12 (16 million) entries, ten times what a 64 MiB memtable of the
/// smallest entries holds; beyond, only the top level grows longer.
pub(super) const MAX_HEIGHT: usize = 12;

/// Longest user key a node can record (28 bits of its header): 256 MiB.
pub(super) const MAX_KEY_LEN: usize = (1 << 28) - 1;

/// Longest value a node can record (32 bits of its header): 4 GiB.
pub(super) const MAX_VALUE_LEN: usize = u32::MAX as usize;

/// Words that hold `len` bytes.
fn words_for(len: usize) -> usize {
    len.div_ceil(8)
}

/// `bytes` packed big-endian into words, the last padded with zero bytes.
fn pack(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes.chunks(8).map(|c| {
        let mut w = [0u8; 8];
        w[..c.len()].copy_from_slice(c);
        u64::from_be_bytes(w)
    })
}

/// `len` bytes unpacked from `words` (as [`pack`] packed them), appended to `out`.
fn unpack_into(words: &[AtomicU64], len: usize, out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + words.len() * 8, 0);
    for (dst, w) in out[start..].chunks_exact_mut(8).zip(words) {
        dst.copy_from_slice(&w.load(AtomicOrdering::Relaxed).to_be_bytes());
    }
    out.truncate(start + len);
}

/// A search key: a user key packed as nodes pack theirs, and a trailer.
pub(super) struct Probe<'a> {
    words: &'a [u64],
    len: usize,
    trailer: u64,
}

impl Probe<'_> {
    /// Calls `f` with the probe for `user_key` and `trailer`, packed on the stack when the key
    /// is short (most are), so a lookup allocates nothing.
    pub(super) fn with<R>(user_key: &[u8], trailer: u64, f: impl FnOnce(&Probe<'_>) -> R) -> R {
        const INLINE: usize = 8;
        let n = words_for(user_key.len());
        if n <= INLINE {
            let mut buf = [0u64; INLINE];
            for (d, w) in buf.iter_mut().zip(pack(user_key)) {
                *d = w;
            }
            f(&Probe {
                words: &buf[..n],
                len: user_key.len(),
                trailer,
            })
        } else {
            let buf: Vec<u64> = pack(user_key).collect();
            f(&Probe {
                words: &buf,
                len: user_key.len(),
                trailer,
            })
        }
    }

    /// The probe for `user_key` and `trailer` packed into `buf` (reused by iterators).
    pub(super) fn in_buf<'a>(buf: &'a mut Vec<u64>, user_key: &[u8], trailer: u64) -> Probe<'a> {
        buf.clear();
        buf.extend(pack(user_key));
        Probe {
            words: buf,
            len: user_key.len(),
            trailer,
        }
    }
}

/// A node's words, read through its header.
#[derive(Clone, Copy)]
pub(super) struct Node<'a> {
    /// Exactly the node's words.
    words: &'a [AtomicU64],
    height: usize,
    key_len: usize,
    value_len: usize,
}

impl<'a> Node<'a> {
    /// Levels this node is linked in.
    #[cfg(test)]
    pub(super) fn height(&self) -> usize {
        self.height
    }

    fn key_start(&self) -> usize {
        1 + self.height
    }

    fn trailer_at(&self) -> usize {
        self.key_start() + words_for(self.key_len)
    }

    fn next(&self, level: usize) -> Addr {
        self.words[1 + level].load(AtomicOrdering::Acquire)
    }

    fn link(&self, level: usize) -> &'a AtomicU64 {
        &self.words[1 + level]
    }

    pub(super) fn trailer(&self) -> u64 {
        self.words[self.trailer_at()].load(AtomicOrdering::Relaxed)
    }

    /// This node's user key against the probe's.
    fn cmp_user_key(&self, p: &Probe<'_>) -> Ordering {
        let key = &self.words[self.key_start()..self.trailer_at()];
        for (w, pw) in key.iter().zip(p.words) {
            match w.load(AtomicOrdering::Relaxed).cmp(pw) {
                Ordering::Equal => {}
                o => return o,
            }
        }
        self.key_len.cmp(&p.len)
    }

    /// This node's internal key against the probe: user key ascending, trailer descending.
    pub(super) fn cmp(&self, p: &Probe<'_>) -> Ordering {
        self.cmp_user_key(p)
            .then_with(|| p.trailer.cmp(&self.trailer()))
    }

    /// Whether this node's user key is the probe's.
    pub(super) fn user_key_is(&self, p: &Probe<'_>) -> bool {
        self.key_len == p.len && self.cmp_user_key(p) == Ordering::Equal
    }

    /// Appends the user key to `out`.
    pub(super) fn user_key_into(&self, out: &mut Vec<u8>) {
        let words = &self.words[self.key_start()..self.trailer_at()];
        unpack_into(words, self.key_len, out);
    }

    /// Appends the internal key (user key, then the trailer little-endian) to `out`.
    pub(super) fn internal_key_into(&self, out: &mut Vec<u8>) {
        self.user_key_into(out);
        out.extend_from_slice(&self.trailer().to_le_bytes());
    }

    /// Appends the value to `out`.
    pub(super) fn value_into(&self, out: &mut Vec<u8>) {
        let start = self.trailer_at() + 1;
        unpack_into(&self.words[start..], self.value_len, out);
    }
}

/// What only the writer touches: the arena's cursor and the height generator.
struct Writer {
    cursor: Cursor,
    /// xorshift64* state; never 0.
    rng: u64,
}

impl Writer {
    /// A random height: 1, then one more level with probability 1/4 each, up to
    /// [`MAX_HEIGHT`]. Pairs of low bits of one random word are the coin flips.
    fn random_height(&mut self) -> usize {
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
        // A stop bit after MAX_HEIGHT - 1 pairs caps the height.
        let zero_pairs = (r | 1 << (2 * (MAX_HEIGHT - 1))).trailing_zeros() / 2;
        1 + zero_pairs as usize
    }
}

/// The skip list. `Send + Sync`: readers need `&self` only; [`SkipList::insert`] takes the
/// writer lock, so concurrent inserts are safe (the `Db` never makes them: its writes are
/// serialized before they reach the memtable, so the lock is never contended there).
pub(super) struct SkipList {
    arena: Arena,
    /// The head node: a tower of [`MAX_HEIGHT`] links and an empty key, never compared.
    head: Addr,
    /// Levels in use (at least 1). Read relaxed: a reader that sees a new height before the
    /// head's new links finds them null and goes down, as if it had seen the old height.
    height: AtomicUsize,
    writer: Mutex<Writer>,
}

impl SkipList {
    pub(super) fn new() -> SkipList {
        let (arena, mut cursor) = Arena::new();
        let head = arena.alloc(&mut cursor, node_words(MAX_HEIGHT, 0, 0));
        // Zeroed words are a header of height 0 and null links; only the height is set.
        arena.words_from(head)[0].store(header(MAX_HEIGHT, 0, 0), AtomicOrdering::Relaxed);
        SkipList {
            arena,
            head,
            height: AtomicUsize::new(1),
            writer: Mutex::new(Writer {
                cursor,
                rng: 0x9E37_79B9_7F4A_7C15,
            }),
        }
    }

    /// The node at `addr` (not [`NULL`]).
    #[inline]
    pub(super) fn node(&self, addr: Addr) -> Node<'_> {
        let words = self.arena.words_from(addr);
        let h = words[0].load(AtomicOrdering::Relaxed);
        let height = (h >> 60) as usize;
        let key_len = ((h >> 32) & MAX_KEY_LEN as u64) as usize;
        let value_len = (h & u32::MAX as u64) as usize;
        Node {
            words: &words[..node_words(height, key_len, value_len)],
            height,
            key_len,
            value_len,
        }
    }

    /// The first node, or [`NULL`] when the list is empty.
    pub(super) fn first(&self) -> Addr {
        self.node(self.head).next(0)
    }

    /// The node after `addr`, or [`NULL`].
    pub(super) fn next(&self, addr: Addr) -> Addr {
        self.node(addr).next(0)
    }

    /// The last node before the probe and the first at or after it, at level 0: the head for
    /// "none before", [`NULL`] for "none after". With `prev`, also the last node before the
    /// probe at every level (what an insert links after).
    fn find(&self, p: &Probe<'_>, mut prev: Option<&mut [Addr; MAX_HEIGHT]>) -> (Addr, Addr) {
        let mut x = self.head;
        let mut x_node = self.node(x);
        // The last node found at or after the probe: after a step down it is often the next
        // node again, and needs no second comparison.
        let mut known_ge = NULL;
        let mut level = self.height.load(AtomicOrdering::Relaxed).max(1) - 1;
        loop {
            let next = x_node.next(level);
            if next != NULL && next != known_ge {
                let next_node = self.node(next);
                if next_node.cmp(p) == Ordering::Less {
                    x = next;
                    x_node = next_node;
                    continue;
                }
                known_ge = next;
            }
            if let Some(prev) = prev.as_deref_mut() {
                prev[level] = x;
            }
            if level == 0 {
                return (x, next);
            }
            level -= 1;
        }
    }

    /// The first node at or after the probe, or [`NULL`].
    pub(super) fn seek_ge(&self, p: &Probe<'_>) -> Addr {
        self.find(p, None).1
    }

    /// The last node before the probe, or [`NULL`].
    pub(super) fn seek_lt(&self, p: &Probe<'_>) -> Addr {
        let (before, _) = self.find(p, None);
        if before == self.head { NULL } else { before }
    }

    /// The last node at or before the probe, or [`NULL`].
    pub(super) fn seek_le(&self, p: &Probe<'_>) -> Addr {
        match self.find(p, None) {
            (_, at) if at != NULL && self.node(at).cmp(p) == Ordering::Equal => at,
            (before, _) if before == self.head => NULL,
            (before, _) => before,
        }
    }

    /// The last node, or [`NULL`].
    pub(super) fn last(&self) -> Addr {
        let mut x = self.head;
        let mut level = self.height.load(AtomicOrdering::Relaxed).max(1) - 1;
        loop {
            let next = self.node(x).next(level);
            if next != NULL {
                x = next;
            } else if level == 0 {
                return if x == self.head { NULL } else { x };
            } else {
                level -= 1;
            }
        }
    }

    /// Adds `user_key` with `trailer` and `value`. Returns false when that internal key was
    /// there already: then its value is replaced.
    ///
    /// # Panics
    /// When `user_key` is longer than [`MAX_KEY_LEN`] or `value` than [`MAX_VALUE_LEN`].
    pub(super) fn insert(&self, user_key: &[u8], trailer: u64, value: &[u8]) -> bool {
        assert!(
            user_key.len() <= MAX_KEY_LEN && value.len() <= MAX_VALUE_LEN,
            "memtable entry too large: key of {} bytes, value of {}",
            user_key.len(),
            value.len()
        );
        let mut w = self.writer.lock();
        Probe::with(user_key, trailer, |p| {
            let mut prev = [self.head; MAX_HEIGHT];
            let (_, at) = self.find(p, Some(&mut prev));
            let old = (at != NULL)
                .then(|| self.node(at))
                .filter(|n| n.cmp(p) == Ordering::Equal);
            // A replacement takes the old node's height and successors.
            let height = match old {
                Some(old) => old.height,
                None => w.random_height(),
            };
            let cur = self.height.load(AtomicOrdering::Relaxed);
            if height > cur {
                // `prev` holds the head above the old height already.
                self.height.store(height, AtomicOrdering::Relaxed);
            }
            let words = node_words(height, user_key.len(), value.len());
            let addr = self.arena.alloc(&mut w.cursor, words);
            let node = &self.arena.words_from(addr)[..words];
            node[0].store(
                header(height, user_key.len(), value.len()),
                AtomicOrdering::Relaxed,
            );
            for (level, link) in node[1..=height].iter().enumerate() {
                let succ = match old {
                    Some(old) => old.next(level),
                    None => self.node(prev[level]).next(level),
                };
                link.store(succ, AtomicOrdering::Relaxed);
            }
            let key_words = words_for(user_key.len());
            let key_at = 1 + height;
            for (dst, v) in node[key_at..].iter().zip(pack(user_key)) {
                dst.store(v, AtomicOrdering::Relaxed);
            }
            node[key_at + key_words].store(trailer, AtomicOrdering::Relaxed);
            for (dst, v) in node[key_at + key_words + 1..].iter().zip(pack(value)) {
                dst.store(v, AtomicOrdering::Relaxed);
            }
            // Publish, bottom up: a node is in level 0 before any level above leads to it.
            for (level, &before) in prev.iter().enumerate().take(height) {
                self.node(before)
                    .link(level)
                    .store(addr, AtomicOrdering::Release);
            }
            old.is_none()
        })
    }

    /// Bytes of arena allocated so far (chunks, used or not).
    #[cfg(test)]
    pub(super) fn allocated_bytes(&self) -> u64 {
        self.writer.lock().cursor.allocated_bytes()
    }

    /// Arena chunks allocated so far.
    #[cfg(test)]
    pub(super) fn chunks(&self) -> usize {
        self.writer.lock().cursor.chunks()
    }
}

/// A node's header word.
fn header(height: usize, key_len: usize, value_len: usize) -> u64 {
    (height as u64) << 60 | (key_len as u64) << 32 | value_len as u64
}

/// Words of a node.
fn node_words(height: usize, key_len: usize, value_len: usize) -> usize {
    1 + height + words_for(key_len) + 1 + words_for(value_len)
}
