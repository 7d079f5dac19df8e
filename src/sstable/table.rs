//! Reading a table: open verifies the footer, metaindex, index, properties and filter; `get`
//! consults the filter before touching any data block.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::env::{Mapping, RandomAccessFile};
use crate::error::{Error, Result};
use crate::filter::FilterPolicy;
use crate::range_del::{self, Fragments};
use crate::sstable::block::{Block, BlockIter, Found, bytewise};
use crate::sstable::builder::{
    FILTER_BLOCK_PREFIX, PREFIX_FILTER_BLOCK_PREFIX, PROPERTIES_BLOCK_NAME,
    RANGE_DELETION_BLOCK_NAME,
};
use crate::sstable::cache::BlockCache;
use crate::sstable::compression::CODEC_NONE;
use crate::sstable::format::{
    BLOCK_TRAILER_LEN, BlockHandle, FOOTER_LEN, Footer, located_in_block, raw_block_in, read_block,
    read_block_with_codec,
};
use crate::sstable::index::Index;
use crate::sstable::properties::TableProperties;
use crate::stats::metrics::ReadCounters;
use crate::util::key::{self, Kind, SeqNo};

/// How to open a table.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// # use std::sync::Arc;
/// # use bloomkv::env::{Env, StdEnv};
/// # use bloomkv::filter::BloomPolicy;
/// # use bloomkv::sstable::internal_key::{self, Kind};
/// # use bloomkv::sstable::{ReadCounters, Table, TableBuildOptions, TableBuilder, TableReadOptions};
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("000007.sst");
/// # let opts = TableBuildOptions { filter: Some(Arc::new(BloomPolicy::new(10))), ..Default::default() };
/// # let mut b = TableBuilder::new(StdEnv.create_writable(&path)?, path.clone(), opts);
/// # b.add(&internal_key::encode(b"apple", 1, Kind::Put), b"red")?;
/// # b.add(&internal_key::encode(b"pear", 2, Kind::Put), b"green")?;
/// # b.finish()?;
/// # let read = TableReadOptions {
/// #     file_number: 7,
/// #     filter: Some(Arc::new(BloomPolicy::new(10))),
/// #     cache: None,
/// #     counters: Arc::new(ReadCounters::default()),
/// # };
/// # let table = Table::open(StdEnv.open_random_access(&path)?, read)?;
/// // (the table was opened with the options above)
/// assert!(table.has_filter());
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct TableReadOptions {
    /// The table's file number: names it in the block cache.
    pub file_number: u64,
    /// The filter policy to use; a filter written by a policy of another name is ignored.
    pub filter: Option<Arc<dyn FilterPolicy>>,
    /// The shared block cache, if any.
    pub cache: Option<Arc<BlockCache>>,
    /// The database-wide read counters.
    pub counters: Arc<ReadCounters>,
}

/// What a table's key-range check and filter decided for one lookup (reported per table by
/// [`Db::get_explained`](crate::Db::get_explained)).
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::sstable::FilterVerdict;
/// let dir = tempfile::tempdir()?;
/// let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
/// db.put("apple", "red")?;
/// db.put("cherry", "dark red")?;
/// db.flush()?;
/// let trace = db.get_explained("banana")?; // within the table's key range
/// assert!(matches!(trace.tables[0].verdict, FilterVerdict::Absent | FilterVerdict::MayContain));
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterVerdict {
    /// The user key lies outside the table's key range: nothing was checked or read.
    OutOfRange,
    /// The table has no usable filter (none written, another policy, or corrupt).
    NoFilter,
    /// The filter said the key is absent: no data block was read.
    Absent,
    /// The filter said the key may be present: one data block was consulted.
    MayContain,
}

/// The outcome of a point lookup in one table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableGet {
    /// What the range check and filter decided.
    pub verdict: FilterVerdict,
    /// Data blocks read from the file for this lookup (0 or 1).
    pub blocks_read: u32,
    /// Data blocks served by the block cache for this lookup (0 or 1).
    pub cache_hits: u32,
    /// The newest entry for the user key visible at the snapshot: kind, sequence number and
    /// value (empty for [`Kind::Delete`]). `None` when the table holds no such entry.
    pub entry: Option<(Kind, SeqNo, Vec<u8>)>,
    /// The filter said "may be present" and the table holds no version of the user key at
    /// all (not even one newer than the snapshot).
    pub false_positive: bool,
}

/// An open, immutable table. `Send + Sync`: share it as `Arc<Table>`.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// # use std::sync::Arc;
/// # use bloomkv::env::{Env, StdEnv};
/// # use bloomkv::filter::BloomPolicy;
/// # use bloomkv::sstable::internal_key::{self, Kind};
/// # use bloomkv::sstable::{ReadCounters, Table, TableBuildOptions, TableBuilder, TableReadOptions};
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("000007.sst");
/// # let opts = TableBuildOptions { filter: Some(Arc::new(BloomPolicy::new(10))), ..Default::default() };
/// # let mut b = TableBuilder::new(StdEnv.create_writable(&path)?, path.clone(), opts);
/// # b.add(&internal_key::encode(b"apple", 1, Kind::Put), b"red")?;
/// # b.add(&internal_key::encode(b"pear", 2, Kind::Put), b"green")?;
/// # b.finish()?;
/// # let read = TableReadOptions {
/// #     file_number: 7,
/// #     filter: Some(Arc::new(BloomPolicy::new(10))),
/// #     cache: None,
/// #     counters: Arc::new(ReadCounters::default()),
/// # };
/// # let table = Table::open(StdEnv.open_random_access(&path)?, read)?;
/// assert_eq!(table.properties().entries, 2);
/// assert!(table.has_filter());
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Table {
    file: Arc<dyn RandomAccessFile>,
    path: PathBuf,
    file_number: u64,
    /// Offset where the footer starts: no block may reach past it.
    blocks_end: u64,
    pub(crate) index: Index,
    props: TableProperties,
    filter: Option<(Arc<dyn FilterPolicy>, Vec<u8>)>,
    cache: Option<Arc<BlockCache>>,
    counters: Arc<ReadCounters>,
    filter_checks: AtomicU64,
    filter_false_positives: AtomicU64,
    /// The range tombstones of the range-deletion block, cut into pieces; `None` without.
    range_dels: Option<Arc<Fragments>>,
    /// The filter over the keys' prefixes (`props.prefix_extractor` names how they were cut).
    prefix_filter: Option<(Arc<dyn FilterPolicy>, Vec<u8>)>,
    /// The file's bytes in memory, when it is mapped: uncompressed data blocks are then read
    /// in place and bypass the block cache (the page cache already holds them).
    mapping: Option<Arc<Mapping>>,
    /// One bit per data block (by index position): set once the block has been decoded whole
    /// and found well formed and sorted ([`Block::verify`]). A block read again whose
    /// checksum still matches holds the same bytes, so it is not decoded whole again.
    verified: Box<[AtomicU64]>,
}

/// An all-clear [`Table::verified`] set for `blocks` data blocks.
fn no_block_verified(blocks: usize) -> Box<[AtomicU64]> {
    (0..blocks.div_ceil(64))
        .map(|_| AtomicU64::new(0))
        .collect()
}

/// What opening a table read and verified, everything but the file handle: the table cache
/// keeps it for a table whose reader it closed, so that reopening the table reads nothing
/// (a cold get of it then costs its data block only, not footer, index and filter again).
#[derive(Debug)]
pub(crate) struct TableParts {
    blocks_end: u64,
    index: Index,
    props: TableProperties,
    filter: Option<(Arc<dyn FilterPolicy>, Vec<u8>)>,
    range_dels: Option<Arc<Fragments>>,
    prefix_filter: Option<(Arc<dyn FilterPolicy>, Vec<u8>)>,
}

impl TableParts {
    /// Bytes of memory it holds, roughly: index entries and the filter.
    pub(crate) fn bytes(&self) -> usize {
        self.index.bytes()
            + self.filter.as_ref().map_or(0, |(_, f)| f.len())
            + self.prefix_filter.as_ref().map_or(0, |(_, f)| f.len())
    }
}

fn check_handle(h: BlockHandle, blocks_end: u64, path: &Path, at: u64, what: &str) -> Result<()> {
    if h.end_with_trailer().is_none_or(|end| end > blocks_end) {
        return Err(Error::corruption(
            path,
            at,
            format!(
                "{what} handle (offset {}, size {}) runs past the end of the blocks ({blocks_end})",
                h.offset, h.size
            ),
        ));
    }
    Ok(())
}

impl Table {
    /// What opening this table read (see [`TableParts`]), moved out of the reader.
    pub(crate) fn into_parts(self) -> TableParts {
        TableParts {
            blocks_end: self.blocks_end,
            index: self.index,
            props: self.props,
            filter: self.filter,
            range_dels: self.range_dels,
            prefix_filter: self.prefix_filter,
        }
    }

    /// As [`Table::into_parts`], copied from a reader others still hold.
    pub(crate) fn parts(&self) -> TableParts {
        TableParts {
            blocks_end: self.blocks_end,
            index: self.index.clone(),
            props: self.props.clone(),
            filter: self.filter.clone(),
            range_dels: self.range_dels.clone(),
            prefix_filter: self.prefix_filter.clone(),
        }
    }

    /// A reader of `file` from what an earlier open of the same table read, without reading
    /// anything; `None` if the file's size is not the one the parts were read from (then the
    /// table must be opened afresh).
    pub(crate) fn from_parts(
        file: Arc<dyn RandomAccessFile>,
        parts: TableParts,
        opts: TableReadOptions,
    ) -> Option<Table> {
        if file.size() != parts.props.file_size {
            return None;
        }
        Some(Table {
            path: file.path().to_path_buf(),
            file_number: opts.file_number,
            blocks_end: parts.blocks_end,
            mapping: file.mapping(),
            verified: no_block_verified(parts.index.len()),
            index: parts.index,
            props: parts.props,
            filter: parts.filter,
            range_dels: parts.range_dels,
            prefix_filter: parts.prefix_filter,
            cache: opts.cache,
            counters: opts.counters,
            file,
            filter_checks: AtomicU64::new(0),
            filter_false_positives: AtomicU64::new(0),
        })
    }

    /// Opens a table: reads and verifies the footer, metaindex, properties and index, and
    /// loads the filter if `opts.filter` names the policy it was written with.
    ///
    /// A filter block that is damaged or that the policy rejects is not an error: the table
    /// is then read without a filter and `filter_unavailable` is counted.
    ///
    /// # Errors
    /// `Corruption` naming the file and absolute offset for any damage outside the filter;
    /// `UnsupportedVersion` for a newer format; `Io` if a read fails.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # use std::sync::Arc;
    /// # use bloomkv::env::{Env, StdEnv};
    /// # use bloomkv::filter::BloomPolicy;
    /// # use bloomkv::sstable::internal_key::{self, Kind};
    /// # use bloomkv::sstable::{ReadCounters, Table, TableBuildOptions, TableBuilder, TableReadOptions};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("000007.sst");
    /// # let opts = TableBuildOptions { filter: Some(Arc::new(BloomPolicy::new(10))), ..Default::default() };
    /// # let mut b = TableBuilder::new(StdEnv.create_writable(&path)?, path.clone(), opts);
    /// # b.add(&internal_key::encode(b"apple", 1, Kind::Put), b"red")?;
    /// # b.add(&internal_key::encode(b"pear", 2, Kind::Put), b"green")?;
    /// # b.finish()?;
    /// # let read = TableReadOptions {
    /// #     file_number: 7,
    /// #     filter: Some(Arc::new(BloomPolicy::new(10))),
    /// #     cache: None,
    /// #     counters: Arc::new(ReadCounters::default()),
    /// # };
    /// # let table = Table::open(StdEnv.open_random_access(&path)?, read)?;
    /// // A table opened without a filter policy reads without its filter.
    /// let plain = TableReadOptions { file_number: 7, filter: None, cache: None, counters: Arc::new(ReadCounters::default()) };
    /// assert!(!Table::open(StdEnv.open_random_access(&path)?, plain)?.has_filter());
    /// # Ok(())
    /// # }
    /// ```
    pub fn open(file: Arc<dyn RandomAccessFile>, opts: TableReadOptions) -> Result<Table> {
        let path = file.path().to_path_buf();
        let size = file.size();
        if size < FOOTER_LEN as u64 {
            return Err(Error::corruption(
                &path,
                0,
                format!("file of {size} bytes is shorter than a table footer ({FOOTER_LEN})"),
            ));
        }
        let blocks_end = size - FOOTER_LEN as u64;
        let footer =
            Footer::decode(&file.read_at(blocks_end, FOOTER_LEN)?).map_err(|e| match e {
                Error::UnsupportedVersion {
                    found, supported, ..
                } => Error::UnsupportedVersion {
                    file: path.clone(),
                    found,
                    supported,
                },
                e => e.located(&path, blocks_end),
            })?;
        check_handle(footer.metaindex, blocks_end, &path, blocks_end, "metaindex")?;
        check_handle(footer.index, blocks_end, &path, blocks_end, "index")?;

        let path_ref = &path;
        let locate = |h: BlockHandle| move |e: Error| e.located(path_ref, h.offset);
        // Metaindex: name -> handle.
        let meta = Block::new(read_block(&*file, &path, footer.metaindex, blocks_end)?)
            .map_err(locate(footer.metaindex))?;
        let mut meta_it = BlockIter::new(Arc::new(meta), bytewise);
        let mut props_handle = None;
        let mut range_handle = None;
        let mut filter_handles = Vec::new();
        let mut prefix_handles = Vec::new();
        meta_it.seek_to_first().map_err(locate(footer.metaindex))?;
        while meta_it.valid() {
            let at = footer.metaindex.offset + meta_it.entry_offset() as u64;
            let h = BlockHandle::decode_exact(meta_it.value()).map_err(|e| e.located(&path, at))?;
            let name = meta_it.key();
            if name == PROPERTIES_BLOCK_NAME.as_bytes() {
                check_handle(h, blocks_end, &path, at, "properties")?;
                props_handle = Some(h);
            } else if name == RANGE_DELETION_BLOCK_NAME.as_bytes() {
                check_handle(h, blocks_end, &path, at, "range-deletion")?;
                range_handle = Some(h);
            } else if let Some(policy) = name.strip_prefix(FILTER_BLOCK_PREFIX.as_bytes()) {
                filter_handles.push((policy.to_vec(), h));
            } else if let Some(policy) = name.strip_prefix(PREFIX_FILTER_BLOCK_PREFIX.as_bytes()) {
                prefix_handles.push((policy.to_vec(), h));
            }
            meta_it.advance().map_err(locate(footer.metaindex))?;
        }
        let props_handle = props_handle.ok_or_else(|| {
            Error::corruption(
                &path,
                footer.metaindex.offset,
                "metaindex has no properties block",
            )
        })?;

        let mut props =
            TableProperties::decode_block(read_block(&*file, &path, props_handle, blocks_end)?)
                .map_err(locate(props_handle))?;
        props.file_size = size;
        let bad_props = |why: &str| Error::corruption(&path, props_handle.offset, why.to_string());
        if props.format_version != footer.format_version {
            return Err(bad_props(
                "properties and footer disagree on the format version",
            ));
        }
        if (props.entries > 0 || props.range_deletions > 0)
            && (props.smallest_key.len() < key::TRAILER_LEN
                || props.largest_key.len() < key::TRAILER_LEN
                || key::compare(&props.smallest_key, &props.largest_key) == Ordering::Greater)
        {
            return Err(bad_props("impossible smallest/largest keys"));
        }

        let index = Self::read_index(&*file, &path, footer.index, blocks_end)?;
        if index.len() as u64 != props.data_blocks || (props.entries == 0) != index.is_empty() {
            return Err(Error::corruption(
                &path,
                footer.index.offset,
                format!(
                    "index has {} blocks, properties say {} blocks and {} entries",
                    index.len(),
                    props.data_blocks,
                    props.entries
                ),
            ));
        }

        if props.format_version < 2 {
            // Version 1 stored every block raw and recorded no data sizes.
            props.data_bytes = index.handles().iter().map(|h| h.size).sum();
            props.data_raw_bytes = props.data_bytes;
        }
        let range_dels = Self::read_range_dels(&*file, &path, &props, range_handle, blocks_end)?;
        let filter = Self::load_filter(&*file, &path, &opts, &props, &filter_handles, blocks_end);
        // A damaged prefix filter is dropped like a damaged filter: scans then read the table.
        let prefix_filter = if props.prefix_extractor.is_empty() {
            None
        } else {
            Self::load_filter(&*file, &path, &opts, &props, &prefix_handles, blocks_end)
        };
        Ok(Table {
            prefix_filter,
            range_dels,
            path,
            file_number: opts.file_number,
            blocks_end,
            mapping: file.mapping(),
            verified: no_block_verified(index.len()),
            index,
            props,
            filter,
            cache: opts.cache,
            counters: opts.counters,
            file,
            filter_checks: AtomicU64::new(0),
            filter_false_positives: AtomicU64::new(0),
        })
    }

    /// Decodes the whole index, checking that handles are in order, inside the data region
    /// and non-overlapping, and that separators increase.
    fn read_index(
        file: &dyn RandomAccessFile,
        path: &Path,
        handle: BlockHandle,
        blocks_end: u64,
    ) -> Result<Index> {
        let (raw, codec) = read_block_with_codec(file, path, handle, blocks_end, Vec::new())?;
        let locate = |e: Error| located_in_block(e, path, handle, codec);
        let block = Block::new(raw).map_err(locate)?;
        let mut it = BlockIter::new(Arc::new(block), key::compare);
        let mut out = Index::default();
        let mut next_free = 0u64;
        it.seek_to_first().map_err(locate)?;
        while it.valid() {
            // Entry offsets are the file's only in a raw block.
            let at = match codec {
                CODEC_NONE => handle.offset + it.entry_offset() as u64,
                _ => handle.offset,
            };
            let h = BlockHandle::decode_exact(it.value()).map_err(|e| e.located(path, at))?;
            check_handle(h, handle.offset, path, at, "data block")?;
            if h.offset < next_free || it.key().len() < key::TRAILER_LEN {
                return Err(Error::corruption(
                    path,
                    at,
                    "index entry overlaps the previous block or has a malformed separator",
                ));
            }
            next_free = h.offset + h.size + BLOCK_TRAILER_LEN as u64;
            if !out.push(it.key(), h) {
                return Err(Error::corruption(path, at, "index separators exceed 4 GiB"));
            }
            it.advance().map_err(locate)?;
        }
        out.shrink_to_fit();
        Ok(out)
    }

    /// Reads and checks the range-deletion block: its count must match the properties and
    /// every tombstone must lie inside the table's key range.
    fn read_range_dels(
        file: &dyn RandomAccessFile,
        path: &Path,
        props: &TableProperties,
        handle: Option<BlockHandle>,
        blocks_end: u64,
    ) -> Result<Option<Arc<Fragments>>> {
        let Some(handle) = handle else {
            if props.range_deletions > 0 {
                return Err(Error::corruption(
                    path,
                    blocks_end,
                    format!(
                        "properties count {} range tombstones but the metaindex has no range-deletion block",
                        props.range_deletions
                    ),
                ));
            }
            return Ok(None);
        };
        let bytes = read_block(file, path, handle, blocks_end)?;
        let tombstones =
            range_del::decode_block(&bytes).map_err(|e| match e.located(path, handle.offset) {
                Error::Corruption { file, offset, why } => Error::Corruption {
                    file,
                    offset,
                    why: format!("range-deletion block: {why}"),
                },
                other => other,
            })?;
        let bad = |why: String| Err(Error::corruption(path, handle.offset, why));
        if tombstones.len() as u64 != props.range_deletions {
            return bad(format!(
                "range-deletion block holds {} tombstones, the properties say {}",
                tombstones.len(),
                props.range_deletions
            ));
        }
        let inside = |t: &range_del::RangeTombstone| {
            !key::compare(&t.smallest_key(), &props.smallest_key).is_lt()
                && !key::compare(&t.largest_key(), &props.largest_key).is_gt()
        };
        if let Some(t) = tombstones.iter().find(|t| !inside(t)) {
            return bad(format!(
                "range tombstone [{:?}, {:?}) lies outside the table's key range",
                t.start, t.end
            ));
        }
        Ok(Some(Arc::new(Fragments::build(&tombstones))))
    }

    /// The table's range tombstones, cut into pieces; `None` when it has none.
    pub(crate) fn range_fragments(&self) -> Option<&Arc<Fragments>> {
        self.range_dels.as_ref()
    }

    /// The filter to use, or `None`. Never fails: a filter is only an optimisation.
    fn load_filter(
        file: &dyn RandomAccessFile,
        path: &Path,
        opts: &TableReadOptions,
        props: &TableProperties,
        filter_handles: &[(Vec<u8>, BlockHandle)],
        blocks_end: u64,
    ) -> Option<(Arc<dyn FilterPolicy>, Vec<u8>)> {
        let policy = opts.filter.as_ref()?;
        let found = filter_handles
            .iter()
            .find(|(name, _)| name.as_slice() == policy.name().as_bytes());
        let Some((_, handle)) = found else {
            // The properties say a filter of this policy was written, yet the metaindex has
            // none: the table lost its filter.
            if props.filter_policy == policy.name() {
                opts.counters.filter_was_unavailable();
            }
            return None;
        };
        let bytes = read_block(file, path, *handle, blocks_end)
            .ok()
            .filter(|b| policy.check_filter(b).is_ok());
        match bytes {
            Some(b) => Some((policy.clone(), b)),
            None => {
                opts.counters.filter_was_unavailable();
                None
            }
        }
    }

    /// Whether the table may hold a key with prefix `prefix`, as cut by the extractor named
    /// `extractor`: `Some(false)` only when its prefix filter, built under that extractor,
    /// rules it out; `None` when it has no usable prefix filter for that extractor.
    pub(crate) fn prefix_may_match(&self, extractor: &str, prefix: &[u8]) -> Option<bool> {
        if self.props.prefix_extractor != extractor {
            return None;
        }
        let (policy, bytes) = self.prefix_filter.as_ref()?;
        Some(policy.may_contain(bytes, prefix))
    }

    /// What the table records about itself; `file_size` is the file's length.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # use std::sync::Arc;
    /// # use bloomkv::env::{Env, StdEnv};
    /// # use bloomkv::filter::BloomPolicy;
    /// # use bloomkv::sstable::internal_key::{self, Kind};
    /// # use bloomkv::sstable::{ReadCounters, Table, TableBuildOptions, TableBuilder, TableReadOptions};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("000007.sst");
    /// # let opts = TableBuildOptions { filter: Some(Arc::new(BloomPolicy::new(10))), ..Default::default() };
    /// # let mut b = TableBuilder::new(StdEnv.create_writable(&path)?, path.clone(), opts);
    /// # b.add(&internal_key::encode(b"apple", 1, Kind::Put), b"red")?;
    /// # b.add(&internal_key::encode(b"pear", 2, Kind::Put), b"green")?;
    /// # b.finish()?;
    /// # let read = TableReadOptions {
    /// #     file_number: 7,
    /// #     filter: Some(Arc::new(BloomPolicy::new(10))),
    /// #     cache: None,
    /// #     counters: Arc::new(ReadCounters::default()),
    /// # };
    /// # let table = Table::open(StdEnv.open_random_access(&path)?, read)?;
    /// assert_eq!(internal_key::user_key(&table.properties().smallest_key), b"apple");
    /// # Ok(())
    /// # }
    /// ```
    pub fn properties(&self) -> &TableProperties {
        &self.props
    }

    /// The file number given at open.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # use std::sync::Arc;
    /// # use bloomkv::env::{Env, StdEnv};
    /// # use bloomkv::filter::BloomPolicy;
    /// # use bloomkv::sstable::internal_key::{self, Kind};
    /// # use bloomkv::sstable::{ReadCounters, Table, TableBuildOptions, TableBuilder, TableReadOptions};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("000007.sst");
    /// # let opts = TableBuildOptions { filter: Some(Arc::new(BloomPolicy::new(10))), ..Default::default() };
    /// # let mut b = TableBuilder::new(StdEnv.create_writable(&path)?, path.clone(), opts);
    /// # b.add(&internal_key::encode(b"apple", 1, Kind::Put), b"red")?;
    /// # b.add(&internal_key::encode(b"pear", 2, Kind::Put), b"green")?;
    /// # b.finish()?;
    /// # let read = TableReadOptions {
    /// #     file_number: 7,
    /// #     filter: Some(Arc::new(BloomPolicy::new(10))),
    /// #     cache: None,
    /// #     counters: Arc::new(ReadCounters::default()),
    /// # };
    /// # let table = Table::open(StdEnv.open_random_access(&path)?, read)?;
    /// assert_eq!(table.file_number(), 7);
    /// # Ok(())
    /// # }
    /// ```
    pub fn file_number(&self) -> u64 {
        self.file_number
    }

    /// The file path (for messages).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # use std::sync::Arc;
    /// # use bloomkv::env::{Env, StdEnv};
    /// # use bloomkv::filter::BloomPolicy;
    /// # use bloomkv::sstable::internal_key::{self, Kind};
    /// # use bloomkv::sstable::{ReadCounters, Table, TableBuildOptions, TableBuilder, TableReadOptions};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("000007.sst");
    /// # let opts = TableBuildOptions { filter: Some(Arc::new(BloomPolicy::new(10))), ..Default::default() };
    /// # let mut b = TableBuilder::new(StdEnv.create_writable(&path)?, path.clone(), opts);
    /// # b.add(&internal_key::encode(b"apple", 1, Kind::Put), b"red")?;
    /// # b.add(&internal_key::encode(b"pear", 2, Kind::Put), b"green")?;
    /// # b.finish()?;
    /// # let read = TableReadOptions {
    /// #     file_number: 7,
    /// #     filter: Some(Arc::new(BloomPolicy::new(10))),
    /// #     cache: None,
    /// #     counters: Arc::new(ReadCounters::default()),
    /// # };
    /// # let table = Table::open(StdEnv.open_random_access(&path)?, read)?;
    /// assert_eq!(table.path(), path.as_path());
    /// # Ok(())
    /// # }
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The policy whose filter lookups use, if any.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # use std::sync::Arc;
    /// # use bloomkv::env::{Env, StdEnv};
    /// # use bloomkv::filter::BloomPolicy;
    /// # use bloomkv::sstable::internal_key::{self, Kind};
    /// # use bloomkv::sstable::{ReadCounters, Table, TableBuildOptions, TableBuilder, TableReadOptions};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("000007.sst");
    /// # let opts = TableBuildOptions { filter: Some(Arc::new(BloomPolicy::new(10))), ..Default::default() };
    /// # let mut b = TableBuilder::new(StdEnv.create_writable(&path)?, path.clone(), opts);
    /// # b.add(&internal_key::encode(b"apple", 1, Kind::Put), b"red")?;
    /// # b.add(&internal_key::encode(b"pear", 2, Kind::Put), b"green")?;
    /// # b.finish()?;
    /// # let read = TableReadOptions {
    /// #     file_number: 7,
    /// #     filter: Some(Arc::new(BloomPolicy::new(10))),
    /// #     cache: None,
    /// #     counters: Arc::new(ReadCounters::default()),
    /// # };
    /// # let table = Table::open(StdEnv.open_random_access(&path)?, read)?;
    /// assert_eq!(table.filter_policy().map(|p| p.name()), Some(BloomPolicy::NAME));
    /// # Ok(())
    /// # }
    /// ```
    pub fn filter_policy(&self) -> Option<&Arc<dyn FilterPolicy>> {
        self.filter.as_ref().map(|(p, _)| p)
    }

    /// Whether lookups use a filter.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # use std::sync::Arc;
    /// # use bloomkv::env::{Env, StdEnv};
    /// # use bloomkv::filter::BloomPolicy;
    /// # use bloomkv::sstable::internal_key::{self, Kind};
    /// # use bloomkv::sstable::{ReadCounters, Table, TableBuildOptions, TableBuilder, TableReadOptions};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("000007.sst");
    /// # let opts = TableBuildOptions { filter: Some(Arc::new(BloomPolicy::new(10))), ..Default::default() };
    /// # let mut b = TableBuilder::new(StdEnv.create_writable(&path)?, path.clone(), opts);
    /// # b.add(&internal_key::encode(b"apple", 1, Kind::Put), b"red")?;
    /// # b.add(&internal_key::encode(b"pear", 2, Kind::Put), b"green")?;
    /// # b.finish()?;
    /// # let read = TableReadOptions {
    /// #     file_number: 7,
    /// #     filter: Some(Arc::new(BloomPolicy::new(10))),
    /// #     cache: None,
    /// #     counters: Arc::new(ReadCounters::default()),
    /// # };
    /// # let table = Table::open(StdEnv.open_random_access(&path)?, read)?;
    /// assert!(table.has_filter());
    /// # Ok(())
    /// # }
    /// ```
    pub fn has_filter(&self) -> bool {
        self.filter.is_some()
    }

    /// Bytes held in memory for the filter.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # use std::sync::Arc;
    /// # use bloomkv::env::{Env, StdEnv};
    /// # use bloomkv::filter::BloomPolicy;
    /// # use bloomkv::sstable::internal_key::{self, Kind};
    /// # use bloomkv::sstable::{ReadCounters, Table, TableBuildOptions, TableBuilder, TableReadOptions};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("000007.sst");
    /// # let opts = TableBuildOptions { filter: Some(Arc::new(BloomPolicy::new(10))), ..Default::default() };
    /// # let mut b = TableBuilder::new(StdEnv.create_writable(&path)?, path.clone(), opts);
    /// # b.add(&internal_key::encode(b"apple", 1, Kind::Put), b"red")?;
    /// # b.add(&internal_key::encode(b"pear", 2, Kind::Put), b"green")?;
    /// # b.finish()?;
    /// # let read = TableReadOptions {
    /// #     file_number: 7,
    /// #     filter: Some(Arc::new(BloomPolicy::new(10))),
    /// #     cache: None,
    /// #     counters: Arc::new(ReadCounters::default()),
    /// # };
    /// # let table = Table::open(StdEnv.open_random_access(&path)?, read)?;
    /// assert!(table.filter_memory() > 0);
    /// # Ok(())
    /// # }
    /// ```
    pub fn filter_memory(&self) -> usize {
        self.filter.as_ref().map_or(0, |(_, b)| b.len())
    }

    /// The false-positive rate the filter's own parameters predict; `None` without a filter.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # use std::sync::Arc;
    /// # use bloomkv::env::{Env, StdEnv};
    /// # use bloomkv::filter::BloomPolicy;
    /// # use bloomkv::sstable::internal_key::{self, Kind};
    /// # use bloomkv::sstable::{ReadCounters, Table, TableBuildOptions, TableBuilder, TableReadOptions};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("000007.sst");
    /// # let opts = TableBuildOptions { filter: Some(Arc::new(BloomPolicy::new(10))), ..Default::default() };
    /// # let mut b = TableBuilder::new(StdEnv.create_writable(&path)?, path.clone(), opts);
    /// # b.add(&internal_key::encode(b"apple", 1, Kind::Put), b"red")?;
    /// # b.add(&internal_key::encode(b"pear", 2, Kind::Put), b"green")?;
    /// # b.finish()?;
    /// # let read = TableReadOptions {
    /// #     file_number: 7,
    /// #     filter: Some(Arc::new(BloomPolicy::new(10))),
    /// #     cache: None,
    /// #     counters: Arc::new(ReadCounters::default()),
    /// # };
    /// # let table = Table::open(StdEnv.open_random_access(&path)?, read)?;
    /// assert!(table.expected_fp_rate().unwrap() < 0.02);
    /// # Ok(())
    /// # }
    /// ```
    pub fn expected_fp_rate(&self) -> Option<f64> {
        let (policy, bytes) = self.filter.as_ref()?;
        policy.expected_fp_rate(bytes)
    }

    /// This table's (filter checks, filter false positives) since it was opened.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # use std::sync::Arc;
    /// # use bloomkv::env::{Env, StdEnv};
    /// # use bloomkv::filter::BloomPolicy;
    /// # use bloomkv::sstable::internal_key::{self, Kind};
    /// # use bloomkv::sstable::{ReadCounters, Table, TableBuildOptions, TableBuilder, TableReadOptions};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("000007.sst");
    /// # let opts = TableBuildOptions { filter: Some(Arc::new(BloomPolicy::new(10))), ..Default::default() };
    /// # let mut b = TableBuilder::new(StdEnv.create_writable(&path)?, path.clone(), opts);
    /// # b.add(&internal_key::encode(b"apple", 1, Kind::Put), b"red")?;
    /// # b.add(&internal_key::encode(b"pear", 2, Kind::Put), b"green")?;
    /// # b.finish()?;
    /// # let read = TableReadOptions {
    /// #     file_number: 7,
    /// #     filter: Some(Arc::new(BloomPolicy::new(10))),
    /// #     cache: None,
    /// #     counters: Arc::new(ReadCounters::default()),
    /// # };
    /// # let table = Table::open(StdEnv.open_random_access(&path)?, read)?;
    /// assert_eq!(table.filter_stats(), (0, 0)); // no lookup yet
    /// # Ok(())
    /// # }
    /// ```
    pub fn filter_stats(&self) -> (u64, u64) {
        (
            self.filter_checks.load(Relaxed),
            self.filter_false_positives.load(Relaxed),
        )
    }

    /// The data block at index position `pos`, from the cache or the file. Returns it and
    /// whether it came from the cache.
    pub(crate) fn data_block(&self, pos: usize) -> Result<(Arc<Block>, bool)> {
        self.data_block_finding(pos, None)
            .map(|(block, hit, _)| (block, hit))
    }

    /// [`Table::data_block`]; when the block is decoded whole for its first verification,
    /// that pass also finds the first entry `>= target` and returns it.
    fn data_block_finding(
        &self,
        pos: usize,
        target: Option<&[u8]>,
    ) -> Result<(Arc<Block>, bool, Option<Found>)> {
        let handle = self.index.handle(pos);
        if let Some(map) = &self.mapping
            && let Some(range) = raw_block_in(map, &self.path, handle, self.blocks_end)?
        {
            self.counters
                .block_read(handle.size + BLOCK_TRAILER_LEN as u64);
            let block = Arc::new(
                Block::mapped(Arc::clone(map), range)
                    .map_err(|e| located_in_block(e, &self.path, handle, CODEC_NONE))?,
            );
            let found = self.verify_once(pos, &block, handle, CODEC_NONE, target)?;
            return Ok((block, false, found));
        }
        if let Some(cache) = &self.cache
            && let Some(b) = cache.get(self.file_number, handle.offset)
        {
            self.counters.cache_hit();
            return Ok((b, true, None));
        }
        let spare = self
            .cache
            .as_ref()
            .map(|c| c.spare_buffer(self.file_number, handle.offset))
            .unwrap_or_default();
        let (data, codec) =
            read_block_with_codec(&*self.file, &self.path, handle, self.blocks_end, spare)?;
        self.counters
            .block_read(handle.size + BLOCK_TRAILER_LEN as u64);
        let block =
            Arc::new(Block::new(data).map_err(|e| located_in_block(e, &self.path, handle, codec))?);
        let found = self.verify_once(pos, &block, handle, codec, target)?;
        if let Some(cache) = &self.cache {
            cache.insert(self.file_number, handle.offset, block.clone());
        }
        Ok((block, false, found))
    }

    /// Decodes the block at `pos` whole ([`Block::verify_and_find`]) unless an earlier read
    /// of it already did; returns what that pass found for `target`, if it ran.
    fn verify_once(
        &self,
        pos: usize,
        block: &Arc<Block>,
        handle: BlockHandle,
        codec: u8,
        target: Option<&[u8]>,
    ) -> Result<Option<Found>> {
        let (word, bit) = (&self.verified[pos / 64], 1u64 << (pos % 64));
        if word.load(Relaxed) & bit != 0 {
            return Ok(None);
        }
        let found = block
            .verify_and_find(key::compare, target)
            .map_err(|e| located_in_block(e, &self.path, handle, codec))?;
        word.fetch_or(bit, Relaxed);
        Ok(target.map(|_| found))
    }

    /// Index position of the first block whose separator is `>= target`.
    pub(crate) fn index_seek(&self, target: &[u8]) -> usize {
        self.index
            .partition_point(|separator| key::compare(separator, target) == Ordering::Less)
    }

    /// Looks up the newest version of a user key visible at a snapshot.
    ///
    /// `lookup` is `key::encode(user_key, snapshot_seq, key::KIND_SEEK)`; `hash` is
    /// `filter::hash_key(user_key)`. Reads at most one data block, and none when the key is
    /// outside the table's range or the filter rules it out.
    ///
    /// # Errors
    /// `InvalidArgument` for a lookup key shorter than a trailer; `Corruption` naming the file
    /// and offset if the data block is damaged; `Io` if the read fails.
    ///
    /// Only for tests and the internal benchmarks: the engine calls [`Table::get_in_range`].
    #[cfg(any(test, feature = "internals"))]
    #[doc(hidden)]
    pub fn get(&self, lookup: &[u8], hash: u64) -> Result<TableGet> {
        if lookup.len() < key::TRAILER_LEN {
            return Err(Error::InvalidArgument(format!(
                "lookup key of {} bytes is not an internal key",
                lookup.len()
            )));
        }
        let user_key = key::user_key(lookup);
        if (self.props.entries == 0 && self.props.range_deletions == 0)
            || user_key < key::user_key(&self.props.smallest_key)
            || user_key > key::user_key(&self.props.largest_key)
        {
            return Ok(TableGet {
                verdict: FilterVerdict::OutOfRange,
                blocks_read: 0,
                cache_hits: 0,
                entry: None,
                false_positive: false,
            });
        }
        let out = self.get_in_range(lookup, hash)?;
        if matches!(
            out.verdict,
            FilterVerdict::Absent | FilterVerdict::MayContain
        ) {
            self.counters
                .filter_checked(out.verdict == FilterVerdict::Absent);
        }
        if out.false_positive {
            self.counters.filter_false_positive();
        }
        Ok(out)
    }

    /// [`Table::filter_verdict`] then [`Table::get_in_range_after`]: the lookup of a key
    /// already matched against the table's range.
    #[cfg(any(test, feature = "internals"))]
    pub(crate) fn get_in_range(&self, lookup: &[u8], hash: u64) -> Result<TableGet> {
        let verdict = self.filter_verdict(hash);
        self.get_in_range_after(lookup, verdict)
    }

    /// What the table's filter says of a key with this hash, counted in the table's own
    /// counters: [`FilterVerdict::NoFilter`], [`FilterVerdict::Absent`] or
    /// [`FilterVerdict::MayContain`]. The first half of [`Table::get_in_range`], for a caller
    /// that can skip the rest when the filter rules the key out and the table has no range
    /// tombstones ([`Table::has_range_deletions`]).
    #[inline]
    pub(crate) fn filter_verdict(&self, hash: u64) -> FilterVerdict {
        match &self.filter {
            None => FilterVerdict::NoFilter,
            Some((policy, bytes)) => {
                self.filter_checks.fetch_add(1, Relaxed);
                if policy.may_contain_hash(bytes, hash) {
                    FilterVerdict::MayContain
                } else {
                    FilterVerdict::Absent
                }
            }
        }
    }

    /// Whether the table holds range tombstones (which a point lookup consults whatever the
    /// filter says).
    #[inline]
    pub(crate) fn has_range_deletions(&self) -> bool {
        self.range_dels.is_some()
    }

    /// [`Table::get`] without its key-range check and after [`Table::filter_verdict`] gave
    /// `verdict` for the key, for a caller that has already matched the key against the
    /// table's range (the engine does, from the manifest's record of it).
    /// Never a wrong answer if that record were off: a key outside the table is simply not
    /// found in the block the index leads to (or the index leads to no block at all).
    ///
    /// [`Table::filter_verdict`] counts the filter's answer in the table's own counters only,
    /// not in the shared [`ReadCounters`]' filter figures: the engine keeps those per level
    /// (one increment per check instead of two) and adds the levels up for its totals.
    ///
    /// A range tombstone of this table that covers the key and is newer than the version
    /// found (or finds none) makes the answer a delete at the tombstone's sequence number:
    /// the tombstones are consulted before the filter, which knows nothing of them.
    ///
    /// `lookup` must be at least a trailer long.
    pub(crate) fn get_in_range_after(
        &self,
        lookup: &[u8],
        verdict: FilterVerdict,
    ) -> Result<TableGet> {
        let mut out = self.get_point(lookup, verdict)?;
        if let Some(f) = &self.range_dels {
            let snapshot = lookup_seq(lookup);
            if let Some(t) = f.covering_seq(key::user_key(lookup), snapshot)
                && out.entry.as_ref().is_none_or(|(_, seq, _)| *seq < t)
            {
                out.entry = Some((Kind::Delete, t, Vec::new()));
            }
        }
        Ok(out)
    }

    fn get_point(&self, lookup: &[u8], verdict: FilterVerdict) -> Result<TableGet> {
        let user_key = key::user_key(lookup);
        let out = TableGet {
            verdict,
            blocks_read: 0,
            cache_hits: 0,
            entry: None,
            false_positive: false,
        };
        if verdict == FilterVerdict::Absent {
            return Ok(out);
        }
        let mut out = out;
        let pos = self.index_seek(lookup);
        let mut user_key_present = false;
        if let Some(handle) = self.index.get(pos) {
            let (block, hit, found) = self.data_block_finding(pos, Some(lookup))?;
            if hit {
                out.cache_hits += 1;
            } else {
                out.blocks_read += 1;
            }
            let bad_key = |at: usize, e: Error| {
                Error::corruption(
                    &self.path,
                    handle.offset + at as u64,
                    format!("bad internal key in data block: {e}"),
                )
            };
            if let Some(found) = found {
                // Read from the file just now: the verifying pass found the entry already.
                if let Some(e) = &found.entry {
                    let p = key::parse(&e.key).map_err(|err| bad_key(e.offset, err))?;
                    if p.user_key == user_key {
                        out.entry = Some((p.kind, p.seq, block.value_at(e.value).to_vec()));
                        return Ok(out);
                    }
                }
                // Versions newer than the snapshot sort right before the first entry
                // `>= lookup`, in this same block (see separator.rs).
                user_key_present = found
                    .previous_key
                    .is_some_and(|k| key::user_key(&k) == user_key);
                if out.verdict == FilterVerdict::MayContain && !user_key_present {
                    self.filter_false_positives.fetch_add(1, Relaxed);
                    out.false_positive = true;
                }
                return Ok(out);
            }
            let locate = |e: Error| e.located(&self.path, handle.offset);
            let mut it = BlockIter::new(block, key::compare);
            it.seek(lookup).map_err(locate)?;
            if it.valid() {
                let p = key::parse(it.key()).map_err(|e| bad_key(it.entry_offset(), e))?;
                if p.user_key == user_key {
                    out.entry = Some((p.kind, p.seq, it.value().to_vec()));
                    return Ok(out);
                }
            }
            if out.verdict == FilterVerdict::MayContain {
                // Was it a false positive, or does the table hold only versions newer than the
                // snapshot? Those sort before `lookup` in this same block (see separator.rs).
                it.seek(&key::encode(user_key, key::MAX_SEQ, key::KIND_SEEK))
                    .map_err(locate)?;
                user_key_present = it.valid() && key::user_key(it.key()) == user_key;
            }
        }
        if out.verdict == FilterVerdict::MayContain && !user_key_present {
            self.filter_false_positives.fetch_add(1, Relaxed);
            out.false_positive = true;
        }
        Ok(out)
    }

    /// The sequence number of the newest range tombstone of this table that covers
    /// `user_key` and is visible at `snapshot` (answered from memory).
    pub(crate) fn covering_range_delete(&self, user_key: &[u8], snapshot: SeqNo) -> Option<SeqNo> {
        self.range_dels.as_ref()?.covering_seq(user_key, snapshot)
    }

    /// The filter's answer for a key hashed by this table's policy, without reading anything:
    /// `None` when the table has no usable filter. With `count`, the check (and, when the
    /// caller later reports it, the false positive) goes into the table's own counters.
    pub(crate) fn filter_may_contain(&self, hash: u64, count: bool) -> Option<bool> {
        let (policy, bytes) = self.filter.as_ref()?;
        if count {
            self.filter_checks.fetch_add(1, Relaxed);
        }
        Some(policy.may_contain_hash(bytes, hash))
    }

    /// Records a false positive found by a caller of [`Table::filter_may_contain`].
    pub(crate) fn note_false_positive(&self) {
        self.filter_false_positives.fetch_add(1, Relaxed);
    }
}

/// The sequence number of a lookup key (`key::encode(user_key, snapshot, KIND_SEEK)`).
pub(crate) fn lookup_seq(lookup: &[u8]) -> SeqNo {
    key::parse(lookup).map_or(key::MAX_SEQ, |p| p.seq)
}
