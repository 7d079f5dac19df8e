//! Atomic write batches.
//!
//! A [`WriteBatch`] collects puts and deletes that the `Db` applies all together or not at
//! all: the whole batch is one write-ahead-log record, and its operations get consecutive
//! sequence numbers. The batch keeps its operations already encoded in the WAL payload format
//! (see `docs/FORMAT.md`, "WriteBatch payload"), so writing it to the log copies no data:
//!
//! ```text
//! sequence: u64 LE | count: u32 LE | op * count
//! op = kind: u8 | varint key length | key | (Put only) varint value length | value
//!    | kind 2 (range delete): varint start length | start | varint end length | end
//! ```

use std::fmt;

use crate::util::coding::{Decoder, put_length_prefixed};
use crate::error::{Error, Result};
use crate::util::key::{self, Kind, SeqNo};
use crate::db::memtable::MemTable;
use crate::options::{MAX_BATCH_BYTES, MAX_KEY_BYTES, MAX_VALUE_BYTES};

/// What one operation of a batch does. The tags of puts and deletes are their internal-key
/// kinds; a range delete (tag 2) has no internal-key kind: it becomes a range tombstone.
/// DO NOT CHANGE THESE VALUES: they are on disk (in the WAL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// Tag 1: set a key.
    Put,
    /// Tag 0: delete a key.
    Delete,
    /// Tag 2: delete every key in `[start, end)`.
    RangeDelete,
}

/// The WAL tag of a range delete.
const TAG_RANGE_DELETE: u8 = 2;

impl OpKind {
    fn from_tag(tag: u8, at: usize) -> Result<OpKind> {
        match tag {
            TAG_RANGE_DELETE => Ok(OpKind::RangeDelete),
            t => match Kind::try_from(t).map_err(|e| e.located_rel(at))? {
                Kind::Put => Ok(OpKind::Put),
                Kind::Delete => Ok(OpKind::Delete),
            },
        }
    }
}

/// Bytes of the payload header: sequence (8) and count (4).
pub const HEADER_LEN: usize = 12;

const COUNT_OFFSET: usize = 8;

/// A group of puts and deletes applied atomically by `Db::write`.
///
/// ```
/// let mut batch = bloomkv::WriteBatch::new();
/// batch.put(b"apple", b"red");
/// batch.delete("pear");
/// assert_eq!(batch.len(), 2);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct WriteBatch {
    /// The encoded payload, header included; the count field is kept up to date.
    rep: Vec<u8>,
    /// Number of operations (may exceed `u32::MAX` only in theory; `validate` rejects that).
    count: usize,
}

impl Default for WriteBatch {
    fn default() -> Self {
        WriteBatch::new()
    }
}

impl fmt::Debug for WriteBatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Not the bytes: a batch may hold hundreds of MiB.
        f.debug_struct("WriteBatch")
            .field("sequence", &self.sequence())
            .field("ops", &self.count)
            .field("payload_bytes", &self.rep.len())
            .finish()
    }
}

impl WriteBatch {
    /// An empty batch.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::WriteBatch;
    ///
    /// let batch = WriteBatch::new();
    /// assert!(batch.is_empty());
    /// ```
    pub fn new() -> WriteBatch {
        WriteBatch {
            rep: vec![0; HEADER_LEN],
            count: 0,
        }
    }

    /// An empty batch with room for `bytes` of operations without growing: a writer that
    /// knows its operations' sizes ([`WriteBatch::op_bytes`]) saves the buffer's regrowth,
    /// which costs more than the memtable insert's allocations for small batches.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::WriteBatch;
    ///
    /// let mut batch = WriteBatch::with_capacity(WriteBatch::op_bytes(b"k", Some(b"v")));
    /// batch.put(b"k", b"v");
    /// assert_eq!(batch.len(), 1);
    /// ```
    pub fn with_capacity(bytes: usize) -> WriteBatch {
        let mut rep = Vec::with_capacity(HEADER_LEN + bytes);
        rep.resize(HEADER_LEN, 0);
        WriteBatch { rep, count: 0 }
    }

    /// The encoded size of one put of `key` and `value` (or, with no value, one delete).
    pub fn op_bytes(key: &[u8], value: Option<&[u8]>) -> usize {
        let prefixed = |len: usize| crate::util::coding::varint_len(len as u64) + len;
        1 + prefixed(key.len()) + value.map_or(0, |v| prefixed(v.len()))
    }

    /// Adds "set `key` to `value`".
    ///
    /// # Examples
    /// ```
    /// let mut batch = bloomkv::WriteBatch::new();
    /// batch.put(b"k", b"v");
    /// batch.put("k", "later puts of the same key win");
    /// assert_eq!(batch.len(), 2);
    /// ```
    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) {
        self.rep.push(Kind::Put as u8);
        put_length_prefixed(&mut self.rep, key.as_ref());
        put_length_prefixed(&mut self.rep, value.as_ref());
        self.set_count(self.count + 1);
    }

    /// Adds "delete `key`" (a no-op for the store if the key is absent).
    ///
    /// # Examples
    /// ```
    /// let mut batch = bloomkv::WriteBatch::new();
    /// batch.put("k", "v");
    /// batch.delete("k");
    /// assert_eq!(batch.len(), 2);
    /// ```
    pub fn delete(&mut self, key: impl AsRef<[u8]>) {
        self.rep.push(Kind::Delete as u8);
        put_length_prefixed(&mut self.rep, key.as_ref());
        self.set_count(self.count + 1);
    }

    /// Adds "delete every key `k` with `start <= k < end`" (a range delete). It hides the
    /// keys' versions written before it, in memtables and every level; later puts in the
    /// range are visible again. See [`crate::Db::delete_range`] for the rules on the bounds
    /// (checked by [`WriteBatch::validate`] and when the batch is written); `start == end`
    /// is an empty range and adds nothing.
    ///
    /// # Examples
    /// ```
    /// let mut batch = bloomkv::WriteBatch::new();
    /// batch.delete_range("user:100", "user:200");
    /// batch.put("user:150", "written after the range delete, so it stays");
    /// assert_eq!(batch.len(), 2);
    /// ```
    pub fn delete_range(&mut self, start: impl AsRef<[u8]>, end: impl AsRef<[u8]>) {
        let (start, end) = (start.as_ref(), end.as_ref());
        if start == end {
            return; // an empty range deletes nothing
        }
        self.rep.push(TAG_RANGE_DELETE);
        put_length_prefixed(&mut self.rep, start);
        put_length_prefixed(&mut self.rep, end);
        self.set_count(self.count + 1);
    }

    /// Number of operations.
    ///
    /// # Examples
    /// ```
    /// let mut batch = bloomkv::WriteBatch::new();
    /// batch.put("a", "1");
    /// batch.delete("b");
    /// assert_eq!(batch.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when the batch holds no operation.
    ///
    /// # Examples
    /// ```
    /// let mut batch = bloomkv::WriteBatch::new();
    /// assert!(batch.is_empty());
    /// batch.delete("k");
    /// assert!(!batch.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Removes every operation (the sequence number is reset too).
    ///
    /// # Examples
    /// ```
    /// let mut batch = bloomkv::WriteBatch::new();
    /// batch.put("k", "v");
    /// batch.clear();
    /// assert!(batch.is_empty());
    /// ```
    pub fn clear(&mut self) {
        self.rep.clear();
        self.rep.resize(HEADER_LEN, 0);
        self.count = 0;
    }

    /// Size of the encoded batch in bytes (the WAL record payload).
    ///
    /// # Examples
    /// ```
    /// let mut batch = bloomkv::WriteBatch::new();
    /// let empty = batch.approximate_size();
    /// batch.put("key", "value");
    /// assert!(batch.approximate_size() >= empty + "key".len() + "value".len());
    /// ```
    pub fn approximate_size(&self) -> usize {
        self.rep.len()
    }

    /// Checks the batch against the documented limits.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if a key is longer than [`MAX_KEY_BYTES`], a value longer
    /// than [`MAX_VALUE_BYTES`], a range delete's start is not below its end, the batch
    /// holds more than `u32::MAX` operations, or it is larger than [`MAX_BATCH_BYTES`] (the
    /// most one WAL record may hold); the message names the operation index and the sizes.
    ///
    /// # Examples
    /// ```
    /// let mut batch = bloomkv::WriteBatch::new();
    /// batch.put("k", "v");
    /// assert!(batch.validate().is_ok());
    /// batch.put(vec![0u8; bloomkv::MAX_KEY_BYTES + 1], "v");
    /// assert!(matches!(batch.validate(), Err(bloomkv::Error::InvalidArgument(_))));
    /// ```
    pub fn validate(&self) -> Result<()> {
        if self.rep.len() > MAX_BATCH_BYTES {
            return Err(Error::InvalidArgument(format!(
                "write batch of {} bytes exceeds the limit of {MAX_BATCH_BYTES} bytes (one WAL \
                 record); split it into several batches",
                self.rep.len()
            )));
        }
        if u32::try_from(self.count).is_err() {
            return Err(Error::InvalidArgument(format!(
                "write batch has {} operations; at most {} are allowed",
                self.count,
                u32::MAX
            )));
        }
        for (i, (kind, k, v)) in self.ops().enumerate() {
            let op = match kind {
                OpKind::Put => "put",
                OpKind::Delete => "delete",
                OpKind::RangeDelete => "delete_range",
            };
            if kind == OpKind::RangeDelete {
                if k.len() > MAX_KEY_BYTES || v.len() > MAX_KEY_BYTES {
                    return Err(Error::InvalidArgument(format!(
                        "{op} #{i} of the batch: a bound of {} bytes exceeds the key limit of {MAX_KEY_BYTES}",
                        k.len().max(v.len())
                    )));
                }
                if k >= v {
                    return Err(Error::InvalidArgument(format!(
                        "{op} #{i} of the batch: start {k:?} is not below end {v:?} (the range is empty or inverted)"
                    )));
                }
                continue;
            }
            if k.len() > MAX_KEY_BYTES {
                return Err(Error::InvalidArgument(format!(
                    "{op} #{i} of the batch: key of {} bytes exceeds the limit of {MAX_KEY_BYTES}",
                    k.len()
                )));
            }
            if v.len() > MAX_VALUE_BYTES {
                return Err(Error::InvalidArgument(format!(
                    "{op} #{i} of the batch: value of {} bytes exceeds the limit of {MAX_VALUE_BYTES}",
                    v.len()
                )));
            }
        }
        Ok(())
    }

    internal_item! {
        /// Sets the sequence number of the first operation (internal: the `Db` does this).
        fn set_sequence(&mut self, seq: SeqNo) {
            self.rep[..COUNT_OFFSET].copy_from_slice(&seq.to_le_bytes());
        }
    }

    internal_item! {
        /// The sequence number of the first operation; operation `i` gets `sequence() + i`.
        fn sequence(&self) -> SeqNo {
            let mut b = [0u8; 8];
            b.copy_from_slice(&self.rep[..COUNT_OFFSET]);
            u64::from_le_bytes(b)
        }
    }

    internal_item! {
        /// The exact bytes to write as one WAL record (see `docs/FORMAT.md`).
        fn payload(&self) -> &[u8] {
            &self.rep
        }
    }

    internal_item! {
        /// Decodes and fully validates a payload read back from the WAL.
        ///
        /// # Errors
        /// [`Error::Corruption`] (offset relative to `bytes`; use [`Error::located`] to name the
        /// file) if the header is short, an operation has an unknown kind, a length runs past the
        /// end, a key or value exceeds the size limits, there are fewer or more operations than
        /// the count says, or the sequence numbers would pass [`key::MAX_SEQ`].
        fn from_payload(bytes: &[u8]) -> Result<WriteBatch> {
            let mut d = Decoder::new(bytes);
            if bytes.len() < HEADER_LEN {
                return Err(Error::corrupt_bytes(
                    0,
                    format!(
                        "write batch of {} bytes is shorter than its {HEADER_LEN}-byte header",
                        bytes.len()
                    ),
                ));
            }
            let seq = d.u64_le()?;
            let count = d.u32_le()?;
            for i in 0..count {
                let op_start = d.position();
                let kind = OpKind::from_tag(d.u8()?, op_start)?;
                match kind {
                    OpKind::Put => {
                        take_field(&mut d, i, "key", MAX_KEY_BYTES)?;
                        take_field(&mut d, i, "value", MAX_VALUE_BYTES)?;
                    }
                    OpKind::Delete => {
                        take_field(&mut d, i, "key", MAX_KEY_BYTES)?;
                    }
                    OpKind::RangeDelete => {
                        let start = take_field(&mut d, i, "range start", MAX_KEY_BYTES)?;
                        let end = take_field(&mut d, i, "range end", MAX_KEY_BYTES)?;
                        if start >= end {
                            return Err(Error::corrupt_bytes(
                                op_start as u64,
                                format!("op {i}: range delete with start not below end"),
                            ));
                        }
                    }
                }
                if d.is_empty() && i + 1 < count {
                    return Err(Error::corrupt_bytes(
                        d.position() as u64,
                        format!(
                            "write batch header says {count} operations but the payload ends after {}",
                            i + 1
                        ),
                    ));
                }
            }
            if !d.is_empty() {
                return Err(Error::corrupt_bytes(
                    d.position() as u64,
                    format!(
                        "{} trailing bytes after the {count} operations of the write batch",
                        d.remaining().len()
                    ),
                ));
            }
            if count > 0 && (seq > key::MAX_SEQ || key::MAX_SEQ - seq < u64::from(count) - 1) {
                return Err(Error::corrupt_bytes(
                    0,
                    format!(
                        "write batch sequence {seq} with {count} operations passes the largest sequence number"
                    ),
                ));
            }
            Ok(WriteBatch {
                rep: bytes.to_vec(),
                count: count as usize,
            })
        }
    }

    /// Appends the operations of `other` after this batch's, as if they had been added here.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::WriteBatch;
    ///
    /// let mut first = WriteBatch::new();
    /// first.put("a", "1");
    /// let mut second = WriteBatch::new();
    /// second.delete("b");
    /// first.append(&second);
    /// assert_eq!(first.len(), 2);
    /// ```
    pub fn append(&mut self, other: &WriteBatch) {
        self.rep.extend_from_slice(&other.rep[HEADER_LEN..]);
        self.set_count(self.count + other.count);
    }

    internal_item! {
        /// The operations in order, as `(kind, key, value)`; the value is empty for a delete,
        /// and for a range delete the key is its start and the value its end.
        ///
        /// The payload is trusted (built by this type or checked by [`WriteBatch::from_payload`]).
        fn ops(&self) -> impl Iterator<Item = (OpKind, &[u8], &[u8])> {
            let mut d = Decoder::new(&self.rep[HEADER_LEN..]);
            std::iter::from_fn(move || {
                if d.is_empty() {
                    return None;
                }
                let kind = OpKind::from_tag(d.u8().ok()?, 0).ok()?;
                let k = d.length_prefixed().ok()?;
                let v: &[u8] = match kind {
                    OpKind::Put | OpKind::RangeDelete => d.length_prefixed().ok()?,
                    OpKind::Delete => &[],
                };
                Some((kind, k, v))
            })
        }
    }

    internal_item! {
        /// Adds every operation to `mem`; operation `i` gets sequence `sequence() + i`.
        fn insert_into(&self, mem: &MemTable) {
            let base = self.sequence();
            for (i, (kind, k, v)) in self.ops().enumerate() {
                let seq = base + i as u64;
                match kind {
                    OpKind::Put => mem.add(seq, Kind::Put, k, v),
                    OpKind::Delete => mem.add(seq, Kind::Delete, k, v),
                    OpKind::RangeDelete => mem.add_range_delete(seq, k, v),
                }
            }
        }
    }

    fn set_count(&mut self, count: usize) {
        self.count = count;
        // Saturates past u32::MAX; `validate` refuses such a batch before it is written.
        let c = u32::try_from(count).unwrap_or(u32::MAX);
        self.rep[COUNT_OFFSET..HEADER_LEN].copy_from_slice(&c.to_le_bytes());
    }
}

/// Takes one length-prefixed field of op `i`, checking the declared length against `limit`
/// and the bytes left before touching them; errors point at the length varint.
fn take_field<'a>(d: &mut Decoder<'a>, i: u32, what: &str, limit: usize) -> Result<&'a [u8]> {
    let at = d.position();
    let len = d.varint64()?;
    let left = d.remaining().len();
    if len > limit as u64 {
        return Err(Error::corrupt_bytes(
            at as u64,
            format!("op {i}: {what} length {len} exceeds the limit of {limit} bytes"),
        ));
    }
    if len > left as u64 {
        return Err(Error::corrupt_bytes(
            at as u64,
            format!("op {i}: {what} length {len} runs past the end ({left} bytes left)"),
        ));
    }
    d.bytes(len as usize)
}

#[cfg(test)]
mod tests;
