//! Key/value blocks: the builder, the decoded block and its iterator.
//!
//! Every data, index, metaindex and properties block uses this layout (see `docs/FORMAT.md`):
//! entries `varint32 shared | varint32 non_shared | varint32 value_len | key[shared..] | value`
//! where `shared` is the prefix length taken from the previous key, then a restart array of
//! u32 LE offsets (entries stored with `shared == 0`) and a u32 LE restart count. The restart
//! array lets [`BlockIter::seek`] binary-search instead of scanning the whole block.

use std::cmp::Ordering;
use std::ops::Range;
use std::sync::Arc;

use crate::env::Mapping;
use crate::error::{Error, Result};
use crate::util::coding::{get_varint32, put_varint32};

/// How the keys of a block are ordered: internal-key order for data and index blocks,
/// bytewise for the metaindex and properties blocks.
///
/// # Examples
/// ```
/// use bloomkv::sstable::block::{KeyOrder, bytewise};
/// use bloomkv::sstable::internal_key;
/// let metaindex: KeyOrder = bytewise; // metaindex and properties blocks
/// let data: KeyOrder = internal_key::compare; // data and index blocks
/// assert!(metaindex(b"a", b"b").is_lt() && data(b"a\0\0\0\0\0\0\0\0", b"b\0\0\0\0\0\0\0\0").is_lt());
/// ```
pub type KeyOrder = fn(&[u8], &[u8]) -> Ordering;

/// Bytewise key order.
///
/// # Examples
/// ```
/// use bloomkv::sstable::block::bytewise;
/// assert!(bytewise(b"filter.x", b"properties").is_lt());
/// ```
pub fn bytewise(a: &[u8], b: &[u8]) -> Ordering {
    a.cmp(b)
}

/// Accumulates sorted entries into one block's bytes.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use std::sync::Arc;
/// use bloomkv::sstable::block::{Block, BlockBuilder, BlockIter, bytewise};
/// let mut b = BlockBuilder::new(16);
/// b.add(b"apple", b"red");
/// b.add(b"apricot", b"orange"); // shares "ap" with the key before
/// let block = Arc::new(Block::new(b.finish())?);
/// let mut it = BlockIter::new(block, bytewise);
/// it.seek(b"apr")?;
/// assert_eq!((it.key(), it.value()), (&b"apricot"[..], &b"orange"[..]));
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    restart_interval: usize,
    since_restart: usize,
    entries: usize,
    last_key: Vec<u8>,
}

impl BlockBuilder {
    /// An empty builder placing a restart point every `restart_interval` entries (at least 1).
    ///
    /// # Examples
    /// ```
    /// use bloomkv::sstable::block::BlockBuilder;
    /// let b = BlockBuilder::new(0); // taken as 1: every entry a restart point
    /// assert!(b.is_empty());
    /// ```
    pub fn new(restart_interval: usize) -> Self {
        BlockBuilder {
            buf: Vec::new(),
            restarts: vec![0],
            restart_interval: restart_interval.max(1),
            since_restart: 0,
            entries: 0,
            last_key: Vec::new(),
        }
    }

    /// Appends an entry. The caller guarantees keys arrive in increasing order and that the
    /// block stays below 4 GiB (each key and value is limited well below that by the engine).
    ///
    /// # Examples
    /// ```
    /// use bloomkv::sstable::block::BlockBuilder;
    /// let mut b = BlockBuilder::new(16);
    /// b.add(b"k1", b"v1");
    /// b.add(b"k2", b"v2");
    /// assert_eq!(b.entries(), 2);
    /// ```
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        let shared = if self.since_restart >= self.restart_interval {
            self.restarts.push(self.buf.len() as u32);
            self.since_restart = 0;
            0
        } else if self.entries == 0 {
            0
        } else {
            self.last_key
                .iter()
                .zip(key)
                .take_while(|(a, b)| a == b)
                .count()
        };
        put_varint32(&mut self.buf, shared as u32);
        put_varint32(&mut self.buf, (key.len() - shared) as u32);
        put_varint32(&mut self.buf, value.len() as u32);
        self.buf.extend_from_slice(&key[shared..]);
        self.buf.extend_from_slice(value);
        self.last_key.truncate(shared);
        self.last_key.extend_from_slice(&key[shared..]);
        self.since_restart += 1;
        self.entries += 1;
    }

    /// Entries added since the last reset.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::sstable::block::BlockBuilder;
    /// let mut b = BlockBuilder::new(16);
    /// b.add(b"k", b"v");
    /// assert_eq!(b.entries(), 1);
    /// b.finish();
    /// assert_eq!(b.entries(), 0); // reset
    /// ```
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// True when no entry was added.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::sstable::block::BlockBuilder;
    /// let mut b = BlockBuilder::new(16);
    /// assert!(b.is_empty());
    /// b.add(b"k", b"v");
    /// assert!(!b.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// The size [`BlockBuilder::finish`] would return now.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::sstable::block::BlockBuilder;
    /// let mut b = BlockBuilder::new(16);
    /// b.add(b"key", b"value");
    /// assert_eq!(b.size_estimate(), b.finish().len());
    /// ```
    pub fn size_estimate(&self) -> usize {
        self.buf.len() + 4 * self.restarts.len() + 4
    }

    /// Appends the restart array and returns the block's bytes; the builder is reset.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::sstable::block::BlockBuilder;
    /// let mut b = BlockBuilder::new(16);
    /// b.add(b"k", b"v");
    /// let bytes = b.finish();
    /// // One entry (3 header bytes, key, value), one restart offset, the restart count.
    /// assert_eq!(bytes.len(), 3 + 1 + 1 + 4 + 4);
    /// ```
    pub fn finish(&mut self) -> Vec<u8> {
        let mut out = std::mem::take(&mut self.buf);
        for r in &self.restarts {
            out.extend_from_slice(&r.to_le_bytes());
        }
        out.extend_from_slice(&(self.restarts.len() as u32).to_le_bytes());
        self.restarts = vec![0];
        self.since_restart = 0;
        self.entries = 0;
        self.last_key.clear();
        out
    }
}

/// A validated block held in memory (what the block cache stores).
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use std::sync::Arc;
/// use bloomkv::sstable::block::{Block, BlockBuilder, bytewise};
/// let mut b = BlockBuilder::new(16);
/// b.add(b"k", b"v");
/// let block = Arc::new(Block::new(b.finish())?);
/// block.verify(bytewise)?;
/// assert!(!block.is_empty());
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Block {
    data: BlockBytes,
    /// Offset of the restart array, i.e. the end of the entries.
    restarts_at: usize,
    num_restarts: usize,
}

/// Where a block's bytes are: a buffer of its own, or a range of a memory-mapped table file
/// (read in place, [`crate::Options::mmap_reads`]).
#[derive(Debug)]
enum BlockBytes {
    Owned(Vec<u8>),
    Mapped(Arc<Mapping>, Range<usize>),
}

impl Block {
    /// Checks the restart array of `data` and wraps it.
    ///
    /// # Errors
    /// Buffer-relative `Corruption` if the restart count or any restart offset is impossible.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::sstable::block::{Block, BlockBuilder};
    /// assert!(Block::new(BlockBuilder::new(16).finish()).is_ok());
    /// assert!(Block::new(vec![9, 0, 0, 0]).unwrap_err().is_corruption()); // 9 restarts in 4 bytes
    /// ```
    pub fn new(data: Vec<u8>) -> Result<Block> {
        Block::wrap(BlockBytes::Owned(data))
    }

    /// [`Block::new`] over `range` of a mapped file, without copying it.
    ///
    /// # Errors
    /// As [`Block::new`]; `Corruption` if the range is not within the mapping.
    pub(crate) fn mapped(map: Arc<Mapping>, range: Range<usize>) -> Result<Block> {
        if map.get(range.clone()).is_none() {
            return Err(Error::corrupt_bytes(
                range.start as u64,
                format!("block range {range:?} is outside the mapped file"),
            ));
        }
        Block::wrap(BlockBytes::Mapped(map, range))
    }

    fn wrap(data: BlockBytes) -> Result<Block> {
        let bytes = match &data {
            BlockBytes::Owned(v) => v.as_slice(),
            BlockBytes::Mapped(m, r) => &m[r.clone()],
        };
        let len = bytes.len();
        if len < 4 {
            return Err(Error::corrupt_bytes(
                0,
                format!("block of {len} bytes is too short for its restart count"),
            ));
        }
        let num = u32::from_le_bytes([
            bytes[len - 4],
            bytes[len - 3],
            bytes[len - 2],
            bytes[len - 1],
        ]) as usize;
        let max = (len - 4) / 4;
        if num == 0 || num > max {
            return Err(Error::corrupt_bytes(
                (len - 4) as u64,
                format!("restart count {num} impossible in a block of {len} bytes"),
            ));
        }
        let restarts_at = len - 4 - 4 * num;
        let block = Block {
            data,
            restarts_at,
            num_restarts: num,
        };
        let mut prev = None;
        for i in 0..num {
            let r = block.restart(i);
            let ok = match prev {
                None => r == 0,
                Some(p) => r > p && r < restarts_at,
            };
            if !ok {
                return Err(Error::corrupt_bytes(
                    (restarts_at + 4 * i) as u64,
                    format!("restart point {i} has impossible offset {r}"),
                ));
            }
            prev = Some(r);
        }
        Ok(block)
    }

    /// The block's bytes.
    #[inline]
    fn bytes(&self) -> &[u8] {
        match &self.data {
            BlockBytes::Owned(v) => v,
            BlockBytes::Mapped(m, r) => &m[r.clone()],
        }
    }

    fn restart(&self, i: usize) -> usize {
        let p = self.restarts_at + 4 * i;
        let b = self.bytes();
        u32::from_le_bytes([b[p], b[p + 1], b[p + 2], b[p + 3]]) as usize
    }

    /// Decodes every entry once, checking that each decodes and that keys strictly increase
    /// under `order`. Tables run this on every block read from a file, so a block that is in
    /// memory (and in the cache) is known to be well formed and sorted.
    ///
    /// # Errors
    /// Block-relative `Corruption` at the first bad entry.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use std::sync::Arc;
    /// use bloomkv::sstable::block::{Block, BlockBuilder, bytewise};
    /// let mut b = BlockBuilder::new(16);
    /// b.add(b"b", b"1");
    /// b.add(b"a", b"2"); // out of order: the builder trusts its caller
    /// let block = Arc::new(Block::new(b.finish())?);
    /// assert!(block.verify(bytewise).unwrap_err().is_corruption());
    /// # Ok(())
    /// # }
    /// ```
    pub fn verify(self: &Arc<Self>, order: KeyOrder) -> Result<()> {
        self.verify_and_find(order, None).map(|_| ())
    }

    /// [`Block::verify`], and in the same pass the first entry whose key is `>= target`
    /// (when a target is given): a point lookup that reads a block from a file gets its
    /// answer from the verifying pass instead of decoding the block a second time to seek.
    ///
    /// # Errors
    /// As [`Block::verify`]: nothing is found in a block that does not verify.
    pub(crate) fn verify_and_find(
        self: &Arc<Self>,
        order: KeyOrder,
        target: Option<&[u8]>,
    ) -> Result<Found> {
        // One pass over the entry headers, rebuilding each key from its predecessor in a
        // second buffer (one copy per entry) — this runs on every block read from a file.
        let mut found = Found::default();
        let mut looking = target.is_some();
        let it = BlockIter::new(self.clone(), order);
        let (mut prev, mut cur) = (Vec::with_capacity(64), Vec::with_capacity(64));
        let mut at = 0;
        let mut next_restart = 0;
        while at < self.restarts_at {
            let h = it.header(at)?;
            let is_restart = next_restart < self.num_restarts && self.restart(next_restart) == at;
            if (is_restart && h.shared != 0) || h.shared > prev.len() {
                return Err(Error::corrupt_bytes(
                    at as u64,
                    format!(
                        "entry shares {} bytes with a previous key of {} bytes{}",
                        h.shared,
                        prev.len(),
                        if is_restart {
                            " at a restart point"
                        } else {
                            ""
                        }
                    ),
                ));
            }
            cur.clear();
            cur.extend_from_slice(&prev[..h.shared]);
            cur.extend_from_slice(&self.bytes()[h.suffix_start..h.suffix_start + h.suffix_len]);
            if at > 0 && order(&prev, &cur) != Ordering::Less {
                return Err(Error::corrupt_bytes(
                    at as u64,
                    "keys in block are not in increasing order",
                ));
            }
            if looking && target.is_some_and(|t| order(&cur, t) != Ordering::Less) {
                looking = false;
                let value_start = h.suffix_start + h.suffix_len;
                found.entry = Some(FoundEntry {
                    key: cur.clone(),
                    value: (value_start, value_start + h.value_len),
                    offset: at,
                });
                found.previous_key = (at > 0).then(|| prev.clone());
            }
            std::mem::swap(&mut prev, &mut cur);
            next_restart += usize::from(is_restart);
            at = h.suffix_start + h.suffix_len + h.value_len;
        }
        if at != self.restarts_at || next_restart != self.num_restarts {
            return Err(Error::corrupt_bytes(
                at as u64,
                "entries do not line up with the restart array",
            ));
        }
        if looking && at > 0 {
            found.previous_key = Some(prev);
        }
        Ok(found)
    }

    /// The bytes of a value found by [`Block::verify_and_find`].
    pub(crate) fn value_at(&self, range: (usize, usize)) -> &[u8] {
        &self.bytes()[range.0..range.1]
    }

    /// The block's own buffer back, for reuse of the allocation (`None` for a mapped block).
    pub(crate) fn into_data(self) -> Option<Vec<u8>> {
        match self.data {
            BlockBytes::Owned(v) => Some(v),
            BlockBytes::Mapped(..) => None,
        }
    }

    /// Bytes held (what the block cache charges for it).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::sstable::block::{Block, BlockBuilder};
    /// let mut b = BlockBuilder::new(16);
    /// b.add(b"k", b"v");
    /// let bytes = b.finish();
    /// let len = bytes.len();
    /// assert_eq!(Block::new(bytes)?.size(), len);
    /// # Ok(())
    /// # }
    /// ```
    pub fn size(&self) -> usize {
        self.bytes().len()
    }

    /// True when the block holds no entries.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::sstable::block::{Block, BlockBuilder};
    /// assert!(Block::new(BlockBuilder::new(16).finish())?.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.restarts_at == 0
    }
}

/// What [`Block::verify_and_find`] found for its target.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// The first entry whose key is `>= target`, if any.
    pub entry: Option<FoundEntry>,
    /// The key of the entry just before that one (or of the last entry, when every key is
    /// below the target); `None` when there is no such entry in the block.
    pub previous_key: Option<Vec<u8>>,
}

/// One entry found by [`Block::verify_and_find`].
#[derive(Debug)]
pub(crate) struct FoundEntry {
    pub key: Vec<u8>,
    /// The value's byte range in the block ([`Block::value_at`]).
    pub value: (usize, usize),
    /// The entry's offset in the block.
    pub offset: usize,
}

/// One decoded entry header: where its key suffix and value are.
struct EntryHeader {
    shared: usize,
    suffix_start: usize,
    suffix_len: usize,
    value_len: usize,
}

/// A forward cursor over a [`Block`], checking order as it goes.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use std::sync::Arc;
/// use bloomkv::sstable::block::{Block, BlockBuilder, BlockIter, bytewise};
/// let mut b = BlockBuilder::new(2);
/// for k in [b"a", b"b", b"c"] {
///     b.add(k, b"v");
/// }
/// let mut it = BlockIter::new(Arc::new(Block::new(b.finish())?), bytewise);
/// let mut keys = Vec::new();
/// it.seek_to_first()?;
/// while it.valid() {
///     keys.push(it.key().to_vec());
///     it.advance()?;
/// }
/// assert_eq!(keys, [b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct BlockIter {
    block: Arc<Block>,
    order: KeyOrder,
    /// Offset of the current entry; `== restarts_at` when exhausted.
    current: usize,
    /// Offset of the entry after the current one.
    next_entry: usize,
    key: Vec<u8>,
    prev_key: Vec<u8>,
    value: (usize, usize),
    valid: bool,
    /// Entries decoded by the last backward step, see [`BackwardCache`].
    back: BackwardCache,
}

impl BlockIter {
    /// An unpositioned iterator over `block` whose keys must be increasing under `order`.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use std::sync::Arc;
    /// use bloomkv::sstable::block::{Block, BlockBuilder, BlockIter, bytewise};
    /// let it = BlockIter::new(Arc::new(Block::new(BlockBuilder::new(16).finish())?), bytewise);
    /// assert!(!it.valid()); // unpositioned
    /// # Ok(())
    /// # }
    /// ```
    pub fn new(block: Arc<Block>, order: KeyOrder) -> Self {
        let end = block.restarts_at;
        BlockIter {
            block,
            order,
            current: end,
            next_entry: end,
            key: Vec::new(),
            prev_key: Vec::new(),
            value: (0, 0),
            valid: false,
            back: BackwardCache::default(),
        }
    }

    /// Whether the iterator is at an entry.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use std::sync::Arc;
    /// use bloomkv::sstable::block::{Block, BlockBuilder, BlockIter, bytewise};
    /// let mut b = BlockBuilder::new(16);
    /// b.add(b"k", b"v");
    /// let mut it = BlockIter::new(Arc::new(Block::new(b.finish())?), bytewise);
    /// it.seek_to_first()?;
    /// assert!(it.valid());
    /// it.advance()?;
    /// assert!(!it.valid());
    /// # Ok(())
    /// # }
    /// ```
    pub fn valid(&self) -> bool {
        self.valid
    }

    /// The current key. REQUIRES: `valid()`.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use std::sync::Arc;
    /// use bloomkv::sstable::block::{Block, BlockBuilder, BlockIter, bytewise};
    /// let mut b = BlockBuilder::new(16);
    /// b.add(b"k", b"v");
    /// let mut it = BlockIter::new(Arc::new(Block::new(b.finish())?), bytewise);
    /// it.seek_to_first()?;
    /// assert_eq!(it.key(), b"k");
    /// # Ok(())
    /// # }
    /// ```
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// The current value. REQUIRES: `valid()`.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use std::sync::Arc;
    /// use bloomkv::sstable::block::{Block, BlockBuilder, BlockIter, bytewise};
    /// let mut b = BlockBuilder::new(16);
    /// b.add(b"k", b"v");
    /// let mut it = BlockIter::new(Arc::new(Block::new(b.finish())?), bytewise);
    /// it.seek_to_first()?;
    /// assert_eq!(it.value(), b"v");
    /// # Ok(())
    /// # }
    /// ```
    pub fn value(&self) -> &[u8] {
        &self.block.bytes()[self.value.0..self.value.1]
    }

    /// The key of the last entry decoded: after `next` runs off the end of the block this is
    /// still the block's last key.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use std::sync::Arc;
    /// use bloomkv::sstable::block::{Block, BlockBuilder, BlockIter, bytewise};
    /// let mut b = BlockBuilder::new(16);
    /// b.add(b"a", b"1");
    /// b.add(b"z", b"2");
    /// let mut it = BlockIter::new(Arc::new(Block::new(b.finish())?), bytewise);
    /// it.seek(b"y")?;
    /// it.advance()?; // off the end
    /// assert_eq!(it.last_key_seen(), b"z");
    /// # Ok(())
    /// # }
    /// ```
    pub fn last_key_seen(&self) -> &[u8] {
        &self.key
    }

    /// Offset within the block of the current entry (for error messages).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use std::sync::Arc;
    /// use bloomkv::sstable::block::{Block, BlockBuilder, BlockIter, bytewise};
    /// let mut b = BlockBuilder::new(16);
    /// b.add(b"a", b"1");
    /// b.add(b"b", b"2");
    /// let mut it = BlockIter::new(Arc::new(Block::new(b.finish())?), bytewise);
    /// it.seek_to_first()?;
    /// assert_eq!(it.entry_offset(), 0);
    /// it.advance()?;
    /// assert_eq!(it.entry_offset(), 5); // 3 header bytes, "a", "1"
    /// # Ok(())
    /// # }
    /// ```
    pub fn entry_offset(&self) -> usize {
        self.current
    }

    fn header(&self, at: usize) -> Result<EntryHeader> {
        let end = self.block.restarts_at;
        let fail = |e: Error| e.located_rel(at);
        let buf = &self.block.bytes()[at..end];
        // Fast path: all three lengths below 128 take one byte each (the common case).
        if let [a, b, c, ..] = *buf
            && (a | b | c) < 0x80
        {
            let (suffix_len, value_len) = (usize::from(b), usize::from(c));
            if suffix_len + value_len <= buf.len() - 3 {
                return Ok(EntryHeader {
                    shared: usize::from(a),
                    suffix_start: at + 3,
                    suffix_len,
                    value_len,
                });
            }
        }
        let (shared, n1) = get_varint32(buf).map_err(fail)?;
        let (non_shared, n2) = get_varint32(&buf[n1..]).map_err(|e| e.located_rel(at + n1))?;
        let (value_len, n3) =
            get_varint32(&buf[n1 + n2..]).map_err(|e| e.located_rel(at + n1 + n2))?;
        let head = n1 + n2 + n3;
        let body = non_shared as u64 + value_len as u64;
        if body > (buf.len() - head) as u64 {
            return Err(Error::corrupt_bytes(
                at as u64,
                format!(
                    "entry of {body} bytes runs past the entries' end ({} bytes left)",
                    buf.len() - head
                ),
            ));
        }
        Ok(EntryHeader {
            shared: shared as usize,
            suffix_start: at + head,
            suffix_len: non_shared as usize,
            value_len: value_len as usize,
        })
    }

    /// Decodes the entry at `at` on top of the current key. `restart` demands `shared == 0`.
    fn load(&mut self, at: usize, restart: bool) -> Result<()> {
        let h = match self.header(at) {
            Ok(h) => h,
            Err(e) => {
                self.valid = false;
                return Err(e);
            }
        };
        if (restart && h.shared != 0) || h.shared > self.key.len() {
            self.valid = false;
            return Err(Error::corrupt_bytes(
                at as u64,
                format!(
                    "entry shares {} bytes with a previous key of {} bytes{}",
                    h.shared,
                    if restart { 0 } else { self.key.len() },
                    if restart { " at a restart point" } else { "" }
                ),
            ));
        }
        self.key.truncate(h.shared);
        let suffix_end = h.suffix_start + h.suffix_len;
        self.key
            .extend_from_slice(&self.block.bytes()[h.suffix_start..suffix_end]);
        self.value = (suffix_end, suffix_end + h.value_len);
        self.current = at;
        self.next_entry = suffix_end + h.value_len;
        self.valid = true;
        Ok(())
    }

    /// Moves to the entry after the current one (or past the end), checking that its key
    /// sorts strictly after the current key.
    fn step(&mut self) -> Result<()> {
        self.step_checked(false)
    }

    fn step_checked(&mut self, restart: bool) -> Result<()> {
        if self.next_entry >= self.block.restarts_at {
            self.current = self.block.restarts_at;
            self.valid = false;
            return Ok(());
        }
        std::mem::swap(&mut self.key, &mut self.prev_key);
        self.key.clear();
        self.key.extend_from_slice(&self.prev_key);
        let at = self.next_entry;
        self.load(at, restart)?;
        if (self.order)(&self.prev_key, &self.key) != Ordering::Less {
            self.valid = false;
            return Err(Error::corrupt_bytes(
                at as u64,
                "keys in block are not in increasing order",
            ));
        }
        Ok(())
    }

    /// Positions at the first entry.
    ///
    /// # Errors
    /// Block-relative `Corruption` if the entry does not decode.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use std::sync::Arc;
    /// use bloomkv::sstable::block::{Block, BlockBuilder, BlockIter, bytewise};
    /// let mut b = BlockBuilder::new(16);
    /// b.add(b"a", b"1");
    /// b.add(b"b", b"2");
    /// let mut it = BlockIter::new(Arc::new(Block::new(b.finish())?), bytewise);
    /// it.seek_to_first()?;
    /// assert_eq!(it.key(), b"a");
    /// # Ok(())
    /// # }
    /// ```
    pub fn seek_to_first(&mut self) -> Result<()> {
        self.key.clear();
        if self.block.is_empty() {
            self.valid = false;
            self.current = self.block.restarts_at;
            return Ok(());
        }
        self.load(0, true)
    }

    /// Moves to the next entry. REQUIRES: `valid()`.
    ///
    /// # Errors
    /// Block-relative `Corruption` on a bad entry or keys out of order.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use std::sync::Arc;
    /// use bloomkv::sstable::block::{Block, BlockBuilder, BlockIter, bytewise};
    /// let mut b = BlockBuilder::new(16);
    /// b.add(b"a", b"1");
    /// b.add(b"b", b"2");
    /// let mut it = BlockIter::new(Arc::new(Block::new(b.finish())?), bytewise);
    /// it.seek_to_first()?;
    /// it.advance()?;
    /// assert_eq!(it.key(), b"b");
    /// # Ok(())
    /// # }
    /// ```
    pub fn advance(&mut self) -> Result<()> {
        self.step()
    }

    /// Positions at the first entry whose key is `>= target`.
    ///
    /// # Errors
    /// Block-relative `Corruption` on a bad entry or keys out of order.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use std::sync::Arc;
    /// use bloomkv::sstable::block::{Block, BlockBuilder, BlockIter, bytewise};
    /// let mut b = BlockBuilder::new(1);
    /// for k in [b"b", b"d", b"f"] {
    ///     b.add(k, b"v");
    /// }
    /// let mut it = BlockIter::new(Arc::new(Block::new(b.finish())?), bytewise);
    /// it.seek(b"c")?;
    /// assert_eq!(it.key(), b"d");
    /// it.seek(b"g")?;
    /// assert!(!it.valid());
    /// # Ok(())
    /// # }
    /// ```
    pub fn seek(&mut self, target: &[u8]) -> Result<()> {
        if self.block.is_empty() {
            self.valid = false;
            return Ok(());
        }
        // Find the last restart point whose key is < target; entries before it are all smaller.
        let (mut lo, mut hi) = (0usize, self.block.num_restarts - 1);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            self.key.clear();
            self.load(self.block.restart(mid), true)?;
            if (self.order)(&self.key, target) == Ordering::Less {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        self.key.clear();
        self.load(self.block.restart(lo), true)?;
        while self.valid && (self.order)(&self.key, target) == Ordering::Less {
            self.step()?;
        }
        Ok(())
    }
}

/// Backward movement. A block stores each key as a suffix of its predecessor, so stepping back
/// means restarting at the closest restart point before the current entry and decoding forward
/// to the entry just before it (at most one restart interval of entries).
impl BlockIter {
    /// Index of the last restart point whose offset is `< at` (0 when none is).
    fn restart_before(&self, at: usize) -> usize {
        let (mut lo, mut hi) = (0usize, self.block.num_restarts);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.block.restart(mid) < at {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo.saturating_sub(1)
    }

    /// Decodes forward from restart point `r` until the entry whose successor starts at
    /// `stop` (or, with `stop == restarts_at`, the block's last entry), remembering every
    /// entry passed so that the following `prev` calls pop them instead of decoding again.
    fn walk_to_before(&mut self, r: usize, stop: usize) -> Result<()> {
        self.back.clear();
        self.key.clear();
        self.load(self.block.restart(r), true)?;
        while self.next_entry < stop {
            self.back
                .push(&self.key, self.current, self.next_entry, self.value);
            self.step()?;
        }
        if self.next_entry != stop {
            self.valid = false;
            self.back.clear();
            return Err(Error::corrupt_bytes(
                self.current as u64,
                "entries do not line up while stepping back",
            ));
        }
        Ok(())
    }

    /// Positions at the last entry.
    ///
    /// # Errors
    /// Block-relative `Corruption` on a bad entry or keys out of order.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use std::sync::Arc;
    /// use bloomkv::sstable::block::{Block, BlockBuilder, BlockIter, bytewise};
    /// let mut b = BlockBuilder::new(16);
    /// b.add(b"a", b"1");
    /// b.add(b"b", b"2");
    /// let mut it = BlockIter::new(Arc::new(Block::new(b.finish())?), bytewise);
    /// it.seek_to_last()?;
    /// assert_eq!(it.key(), b"b");
    /// # Ok(())
    /// # }
    /// ```
    pub fn seek_to_last(&mut self) -> Result<()> {
        if self.block.is_empty() {
            self.valid = false;
            self.current = self.block.restarts_at;
            return Ok(());
        }
        let end = self.block.restarts_at;
        self.walk_to_before(self.block.num_restarts - 1, end)
    }

    /// Moves to the entry before the current one; becomes invalid before the first entry.
    /// REQUIRES: `valid()`.
    ///
    /// # Errors
    /// Block-relative `Corruption` on a bad entry or keys out of order.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use std::sync::Arc;
    /// use bloomkv::sstable::block::{Block, BlockBuilder, BlockIter, bytewise};
    /// let mut b = BlockBuilder::new(16);
    /// b.add(b"a", b"1");
    /// b.add(b"b", b"2");
    /// let mut it = BlockIter::new(Arc::new(Block::new(b.finish())?), bytewise);
    /// it.seek_to_last()?;
    /// it.prev()?;
    /// assert_eq!(it.key(), b"a");
    /// it.prev()?;
    /// assert!(!it.valid());
    /// # Ok(())
    /// # }
    /// ```
    pub fn prev(&mut self) -> Result<()> {
        let at = self.current;
        if !self.valid || at == 0 {
            self.valid = false;
            self.current = self.block.restarts_at;
            return Ok(());
        }
        if self
            .back
            .pop_before(at, &mut self.key, &mut self.value, &mut self.current)
        {
            self.next_entry = at;
            self.valid = true;
            return Ok(());
        }
        let r = self.restart_before(at);
        self.walk_to_before(r, at)
    }
}

/// The entries of one restart interval decoded by a backward step, in block order: a walk
/// backward decodes an interval once and then pops from it, instead of decoding from the
/// restart point again for every entry. Entries are recognised by their offsets (the block is
/// immutable), so forward moves and seeks need not clear it.
#[derive(Debug, Default)]
struct BackwardCache {
    /// Per entry: its offset, the offset of the entry after it, its value's range, and where
    /// its key ends in `keys`.
    entries: Vec<(usize, usize, (usize, usize), usize)>,
    keys: Vec<u8>,
}

impl BackwardCache {
    fn clear(&mut self) {
        self.entries.clear();
        self.keys.clear();
    }

    fn push(&mut self, key: &[u8], offset: usize, next: usize, value: (usize, usize)) {
        self.keys.extend_from_slice(key);
        self.entries.push((offset, next, value, self.keys.len()));
    }

    /// Pops the entry just before offset `at` into the iterator's fields, if it is cached.
    fn pop_before(
        &mut self,
        at: usize,
        key: &mut Vec<u8>,
        value: &mut (usize, usize),
        current: &mut usize,
    ) -> bool {
        match self.entries.last() {
            Some(&(offset, next, v, key_end)) if next == at => {
                self.entries.pop();
                let key_start = self.entries.last().map_or(0, |e| e.3);
                key.clear();
                key.extend_from_slice(&self.keys[key_start..key_end]);
                self.keys.truncate(key_start);
                *value = v;
                *current = offset;
                true
            }
            _ => {
                self.clear();
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(keys: &[&[u8]], interval: usize) -> Arc<Block> {
        let mut b = BlockBuilder::new(interval);
        for k in keys {
            b.add(k, &[k.len() as u8]);
        }
        Arc::new(Block::new(b.finish()).unwrap())
    }

    #[test]
    fn seek_and_scan() {
        let keys: Vec<Vec<u8>> = (0..100u32)
            .map(|i| format!("key{:04}", i * 2).into())
            .collect();
        let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
        for interval in [1, 3, 16, 1000] {
            let block = build(&refs, interval);
            let mut it = BlockIter::new(block.clone(), bytewise);
            it.seek_to_first().unwrap();
            let mut n = 0;
            while it.valid() {
                assert_eq!(it.key(), &keys[n][..]);
                it.advance().unwrap();
                n += 1;
            }
            assert_eq!(n, 100);
            for i in 0..200u32 {
                let t = format!("key{i:04}");
                it.seek(t.as_bytes()).unwrap();
                let want = i.div_ceil(2);
                if want < 100 {
                    assert_eq!(it.key(), &keys[want as usize][..]);
                } else {
                    assert!(!it.valid());
                }
            }
            it.seek(b"").unwrap();
            assert_eq!(it.key(), &keys[0][..]);
        }
    }

    #[test]
    fn empty_block_and_unsorted_detected() {
        let block = build(&[], 16);
        assert!(block.is_empty());
        let mut it = BlockIter::new(block, bytewise);
        it.seek_to_first().unwrap();
        assert!(!it.valid());
        it.seek(b"x").unwrap();
        assert!(!it.valid());

        let block = build(&[b"b", b"a"], 16);
        let mut it = BlockIter::new(block, bytewise);
        it.seek_to_first().unwrap();
        assert!(it.advance().unwrap_err().is_corruption());
    }

    #[test]
    fn rejects_bad_restarts() {
        assert!(Block::new(vec![]).is_err());
        assert!(Block::new(vec![0, 0, 0, 0]).is_err());
        assert!(Block::new(vec![9, 9, 9, 9, 0xff, 0xff, 0xff, 0x0f]).is_err());
        assert!(Block::new(vec![1, 0, 0, 0, 1, 0, 0, 0]).is_err());
    }

    /// The verifying pass finds what a seek finds: the first key `>= target`, its value, and
    /// the key before it (or the last key when every key is below the target).
    #[test]
    fn verify_and_find_agrees_with_seek() {
        let keys: Vec<Vec<u8>> = (0..100u32)
            .map(|i| format!("key{:05}", i * 2).into_bytes())
            .collect();
        let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
        let block = build(&refs, 16);
        for t in 0..205u32 {
            let target = format!("key{t:05}").into_bytes();
            let found = block.verify_and_find(bytewise, Some(&target)).unwrap();
            let mut it = BlockIter::new(block.clone(), bytewise);
            it.seek(&target).unwrap();
            match &found.entry {
                Some(e) => {
                    assert!(it.valid());
                    assert_eq!(e.key, it.key(), "target {t}");
                    assert_eq!(block.value_at(e.value), it.value());
                    assert_eq!(e.offset, it.entry_offset());
                }
                None => assert!(!it.valid(), "target {t}"),
            }
            let first_at_or_after = keys.iter().position(|k| k.as_slice() >= target.as_slice());
            let previous = match first_at_or_after {
                Some(0) => None,
                Some(i) => Some(keys[i - 1].clone()),
                None => keys.last().cloned(),
            };
            assert_eq!(found.previous_key, previous, "target {t}");
        }
        let none = block.verify_and_find(bytewise, None).unwrap();
        assert!(none.entry.is_none() && none.previous_key.is_none());
    }

    #[test]
    fn backward_matches_forward() {
        let keys: Vec<Vec<u8>> = (0..50u32)
            .map(|i| format!("key{:04}", i * 2).into())
            .collect();
        let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
        for interval in [1, 3, 16, 1000] {
            let block = build(&refs, interval);
            let mut it = BlockIter::new(block.clone(), bytewise);
            it.seek_to_last().unwrap();
            let mut n = keys.len();
            while it.valid() {
                n -= 1;
                assert_eq!(it.key(), &keys[n][..]);
                assert_eq!(it.value(), &[keys[n].len() as u8]);
                it.prev().unwrap();
            }
            assert_eq!(n, 0);
            // Direction changes: forward after back, back after forward.
            it.seek(b"key0050").unwrap();
            it.prev().unwrap();
            assert_eq!(it.key(), b"key0048");
            it.advance().unwrap();
            assert_eq!(it.key(), b"key0050");
            it.advance().unwrap();
            it.prev().unwrap();
            assert_eq!(it.key(), b"key0050");
        }
        let mut empty = BlockIter::new(build(&[], 16), bytewise);
        empty.seek_to_last().unwrap();
        assert!(!empty.valid());
    }
}
