//! Sorted string tables: immutable files of sorted internal keys with a Bloom filter block.
//! See `docs/FORMAT.md`, section "SSTable".
//!
//! [`TableBuilder`] writes a table, [`Table`] opens one and checks its footer, index,
//! properties and filter; [`block`] and [`format`](mod@format) decode the pieces, and [`internal_key`]
//! the keys tables store, for tools that inspect a table file block by block (as
//! `kvctl sst dump` does). Reads are positional, so one open table serves many threads.

pub mod block;
mod builder;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod cache;
#[cfg(not(feature = "internals"))]
pub(crate) mod cache;
pub mod compression;
pub mod format;
mod index;
mod iter;
mod multi_get;
mod properties;
mod separator;
mod table;

pub use crate::sstable::cache::BlockCache;
pub use crate::stats::metrics::{ReadCounters, ReadCountersSnapshot};
// The names of table files are the database directory's business; re-exported here for tools
// that open a table by its number.
pub use crate::util::filename::table_file_name;
pub use block::Block;
pub use builder::{
    FILTER_BLOCK_PREFIX, PREFIX_FILTER_BLOCK_PREFIX, PROPERTIES_BLOCK_NAME,
    RANGE_DELETION_BLOCK_NAME, TableBuildOptions, TableBuilder,
};
pub use compression::Compression;
pub(crate) use iter::TableIter;
pub use properties::TableProperties;
#[cfg(test)]
use table::TableGet;
pub(crate) use table::TableParts;
pub use table::{FilterVerdict, Table, TableReadOptions};

/// Internal keys, the keys a table stores: a user key followed by an 8-byte trailer packing
/// the sequence number and the kind (put or delete). Tables order them by user key ascending,
/// then sequence number descending. See `docs/FORMAT.md`, section "Internal keys".
///
/// ```
/// use bloomkv::sstable::internal_key::{self, Kind};
///
/// let ikey = internal_key::encode(b"user:1", 42, Kind::Put);
/// let parsed = internal_key::parse(&ikey)?;
/// assert_eq!((parsed.user_key, parsed.seq, parsed.kind), (&b"user:1"[..], 42, Kind::Put));
/// // Newer versions of the same user key sort first.
/// let older = internal_key::encode(b"user:1", 7, Kind::Put);
/// assert!(internal_key::compare(&ikey, &older).is_lt());
/// # Ok::<(), bloomkv::Error>(())
/// ```
pub mod internal_key {
    pub use crate::util::key::{
        KIND_SEEK, Kind, MAX_SEQ, ParsedKey, SeqNo, TRAILER_LEN, compare, encode, parse, user_key,
    };
}

/// One range tombstone of a table: `(start, end, sequence)`.
///
/// # Examples
/// ```
/// use bloomkv::sstable::{RangeDeletion, decode_range_deletions};
/// let block = [1, 1, b'a', 1, b'c', 9, 0, 0, 0, 0, 0, 0, 0];
/// let t: Vec<RangeDeletion> = decode_range_deletions(&block).unwrap();
/// assert_eq!(t[0], (b"a".to_vec(), b"c".to_vec(), 9));
/// ```
pub type RangeDeletion = (Vec<u8>, Vec<u8>, u64);

/// Decodes and checks the contents of a range-deletion block (as
/// [`format::read_block`] returns them; see `docs/FORMAT.md`, "Range-deletion block"): its
/// tombstones as `(start, end, sequence)`, each deleting the user keys in `[start, end)`
/// written at lower sequence numbers.
///
/// # Errors
/// `Corruption` at the offset within `block` of the first bad field: a count, length or
/// sequence out of range, `start >= end`, tombstones out of order, trailing bytes.
///
/// ```
/// let block = [1, 1, b'b', 1, b'd', 7, 0, 0, 0, 0, 0, 0, 0];
/// let tombstones = bloomkv::sstable::decode_range_deletions(&block)?;
/// assert_eq!(tombstones, [(b"b".to_vec(), b"d".to_vec(), 7)]);
/// # Ok::<(), bloomkv::Error>(())
/// ```
pub fn decode_range_deletions(block: &[u8]) -> crate::error::Result<Vec<RangeDeletion>> {
    Ok(crate::range_del::decode_block(block)?
        .into_iter()
        .map(|t| (t.start, t.end, t.seq))
        .collect())
}

#[cfg(test)]
mod tests;
