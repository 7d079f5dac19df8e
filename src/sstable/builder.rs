//! Writing a table: data blocks as entries arrive, then filter, properties, metaindex, index
//! and footer on `finish`.

use std::cmp::Ordering;
use std::path::PathBuf;
use std::sync::Arc;

use crate::env::WritableFile;
use crate::error::{Error, Result};
use crate::filter::{FilterPolicy, PrefixExtractor};
use crate::range_del::{self, RangeTombstone};
use crate::sstable::block::BlockBuilder;
use crate::sstable::compression::{CODEC_NONE, Compression, compress_block};
use crate::sstable::format::{
    BLOCK_TRAILER_LEN, BlockHandle, FORMAT_VERSION, Footer, PLAIN_FORMAT_VERSION, block_trailer,
};
use crate::sstable::properties::TableProperties;
use crate::sstable::separator::{last_separator, separator};
use crate::util::key::{self, Kind};

/// Metaindex name of the properties block.
///
/// # Examples
/// ```
/// use bloomkv::sstable::PROPERTIES_BLOCK_NAME;
/// assert_eq!(PROPERTIES_BLOCK_NAME, "properties");
/// ```
pub const PROPERTIES_BLOCK_NAME: &str = "properties";

/// Metaindex name of the range-deletion block (format version 3; only in tables holding
/// range tombstones).
///
/// # Examples
/// ```
/// use bloomkv::sstable::RANGE_DELETION_BLOCK_NAME;
/// assert_eq!(RANGE_DELETION_BLOCK_NAME, "rangedel");
/// ```
pub const RANGE_DELETION_BLOCK_NAME: &str = "rangedel";

/// Metaindex name prefix of the filter block; the policy name follows.
///
/// # Examples
/// ```
/// use bloomkv::filter::BloomPolicy;
/// use bloomkv::sstable::FILTER_BLOCK_PREFIX;
/// assert_eq!(format!("{FILTER_BLOCK_PREFIX}{}", BloomPolicy::NAME), "filter.bloomkv.BloomFilter");
/// ```
pub const FILTER_BLOCK_PREFIX: &str = "filter.";

/// Metaindex name prefix of the prefix-filter block; the policy name follows.
///
/// # Examples
/// ```
/// use bloomkv::filter::BloomPolicy;
/// use bloomkv::sstable::PREFIX_FILTER_BLOCK_PREFIX;
/// assert_eq!(format!("{PREFIX_FILTER_BLOCK_PREFIX}{}", BloomPolicy::NAME), "prefix.bloomkv.BloomFilter");
/// ```
pub const PREFIX_FILTER_BLOCK_PREFIX: &str = "prefix.";

/// How to build a table.
///
/// # Examples
/// ```
/// use bloomkv::Compression;
/// use bloomkv::sstable::TableBuildOptions;
/// let opts = TableBuildOptions { compression: Compression::Lz4, file_number: Some(7), ..Default::default() };
/// assert_eq!((opts.block_bytes, opts.restart_interval), (4096, 16));
/// assert!(opts.filter.is_none());
/// ```
#[derive(Clone, Debug)]
pub struct TableBuildOptions {
    /// Target size of a data block's contents in bytes (default 4096). A block is closed
    /// once it reaches this size, so it may exceed it by one entry.
    pub block_bytes: usize,
    /// Entries between restart points in data blocks (default 16; 0 is treated as 1).
    pub restart_interval: usize,
    /// The filter to build over the table's user keys; `None` (default) writes no filter.
    pub filter: Option<Arc<dyn FilterPolicy>>,
    /// How data blocks and the index block are compressed (default
    /// [`Compression::None`]); a block that would not shrink by an eighth is stored raw.
    pub compression: Compression,
    /// The file number the table is written as, recorded in its properties so that a reader
    /// can tell a table copied or renamed over another (default `None`: not recorded).
    pub file_number: Option<u64>,
    /// With a filter: also build a filter over the keys' prefixes, and record this
    /// extractor's name (default `None`: no prefix filter).
    pub prefix_extractor: Option<Arc<dyn PrefixExtractor>>,
}

impl Default for TableBuildOptions {
    fn default() -> Self {
        TableBuildOptions {
            block_bytes: 4096,
            restart_interval: 16,
            filter: None,
            compression: Compression::None,
            file_number: None,
            prefix_extractor: None,
        }
    }
}

/// Writes one table. Entries must be added in strictly increasing internal-key order.
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
/// assert_eq!(table.file_number(), 7);
/// # Ok(())
/// # }
/// ```
pub struct TableBuilder {
    file: Box<dyn WritableFile>,
    path: PathBuf,
    opts: TableBuildOptions,
    /// Bytes written to `file` so far (== the offset of the next block).
    offset: u64,
    data: BlockBuilder,
    index: BlockBuilder,
    /// Handle of the last flushed data block, waiting for the next key to pick a separator.
    pending_index: Option<BlockHandle>,
    last_key: Vec<u8>,
    /// One hash per distinct user key, in order.
    user_key_hashes: Vec<u64>,
    /// With a prefix extractor: one hash per run of keys sharing a prefix.
    prefix_hashes: Vec<u64>,
    /// The prefix of the last key that had one.
    last_prefix: Option<Vec<u8>>,
    props: TableProperties,
    /// Set when a write failed: the file is then in an unknown state and must not be finished.
    failed: Option<String>,
    /// Scratch space for a compressed block.
    compressed: Vec<u8>,
    /// Range tombstones to store, sorted by start then sequence number descending.
    range_tombstones: Vec<RangeTombstone>,
}

impl std::fmt::Debug for TableBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableBuilder")
            .field("path", &self.path)
            .field("offset", &self.offset)
            .field("entries", &self.props.entries)
            .finish_non_exhaustive()
    }
}

impl TableBuilder {
    /// Starts a table written to `file`; `path` is used in error messages only.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::env::MemWritableFile;
    /// use bloomkv::sstable::{TableBuildOptions, TableBuilder};
    /// // A table built in memory.
    /// let b = TableBuilder::new(Box::new(MemWritableFile::new()), "in-memory".into(), TableBuildOptions::default());
    /// assert_eq!(b.num_entries(), 0);
    /// # Ok(())
    /// # }
    /// ```
    pub fn new(file: Box<dyn WritableFile>, path: PathBuf, opts: TableBuildOptions) -> Self {
        let offset = file.len();
        let compression = opts.compression.name().to_string();
        let file_number = opts.file_number;
        TableBuilder {
            file,
            path,
            data: BlockBuilder::new(opts.restart_interval),
            index: BlockBuilder::new(1),
            opts,
            offset,
            pending_index: None,
            last_key: Vec::new(),
            user_key_hashes: Vec::new(),
            prefix_hashes: Vec::new(),
            last_prefix: None,
            props: TableProperties {
                format_version: PLAIN_FORMAT_VERSION,
                entries: 0,
                deletions: 0,
                smallest_key: Vec::new(),
                largest_key: Vec::new(),
                raw_key_bytes: 0,
                raw_value_bytes: 0,
                data_blocks: 0,
                filter_policy: String::new(),
                filter_bits_per_key: 0.0,
                filter_bytes: 0,
                file_size: 0,
                compression,
                data_raw_bytes: 0,
                data_bytes: 0,
                file_number,
                range_deletions: 0,
                prefix_extractor: String::new(),
            },
            failed: None,
            compressed: Vec::new(),
            range_tombstones: Vec::new(),
        }
    }

    fn check_usable(&self) -> Result<()> {
        match &self.failed {
            Some(why) => Err(Error::InvalidArgument(format!(
                "table builder for {} failed earlier: {why}",
                self.path.display()
            ))),
            None => Ok(()),
        }
    }

    /// Adds an entry.
    ///
    /// # Errors
    /// `InvalidArgument` if `ikey` is not a valid internal key, is not strictly greater than
    /// the previous key under [`key::compare`], or the value exceeds 4 GiB; `Io` if writing a
    /// finished data block fails (the builder is unusable afterwards).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::env::MemWritableFile;
    /// use bloomkv::sstable::internal_key::{self, Kind};
    /// use bloomkv::sstable::{TableBuildOptions, TableBuilder};
    /// let mut b = TableBuilder::new(Box::new(MemWritableFile::new()), "mem".into(), TableBuildOptions::default());
    /// b.add(&internal_key::encode(b"b", 1, Kind::Put), b"v")?;
    /// // Keys must increase: "a" after "b" is refused.
    /// assert!(b.add(&internal_key::encode(b"a", 2, Kind::Put), b"v").is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        self.check_usable()?;
        let parsed = key::parse(ikey).map_err(|e| {
            Error::InvalidArgument(format!(
                "table {}: bad internal key: {e}",
                self.path.display()
            ))
        })?;
        if u32::try_from(value.len()).is_err() || u32::try_from(ikey.len()).is_err() {
            return Err(Error::InvalidArgument(format!(
                "table {}: entry too large ({} byte key, {} byte value)",
                self.path.display(),
                ikey.len(),
                value.len()
            )));
        }
        let first = self.props.entries == 0;
        if !first && key::compare(&self.last_key, ikey) != Ordering::Less {
            return Err(Error::InvalidArgument(format!(
                "table {}: keys out of order: {:?} added after {:?}",
                self.path.display(),
                ikey,
                self.last_key
            )));
        }
        if (first || key::user_key(&self.last_key) != parsed.user_key)
            && let Some(policy) = &self.opts.filter
        {
            self.user_key_hashes.push(policy.hash_key(parsed.user_key));
            if let Some(prefix) = self
                .opts
                .prefix_extractor
                .as_ref()
                .and_then(|e| e.prefix(parsed.user_key))
                && self.last_prefix.as_deref() != Some(prefix)
            {
                self.prefix_hashes.push(policy.hash_key(prefix));
                self.last_prefix = Some(prefix.to_vec());
            }
        }
        if let Some(handle) = self.pending_index.take() {
            let sep = separator(&self.last_key, ikey);
            self.index.add(&sep, &handle.encode());
        }
        if first {
            self.props.smallest_key = ikey.to_vec();
        }
        self.props.entries += 1;
        if parsed.kind == Kind::Delete {
            self.props.deletions += 1;
        }
        self.props.raw_key_bytes += ikey.len() as u64;
        self.props.raw_value_bytes += value.len() as u64;
        self.last_key.clear();
        self.last_key.extend_from_slice(ikey);
        self.data.add(ikey, value);
        if self.data.size_estimate() >= self.opts.block_bytes {
            self.flush_data_block()?;
        }
        Ok(())
    }

    /// Entries added so far.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::env::MemWritableFile;
    /// use bloomkv::sstable::internal_key::{self, Kind};
    /// use bloomkv::sstable::{TableBuildOptions, TableBuilder};
    /// let mut b = TableBuilder::new(Box::new(MemWritableFile::new()), "mem".into(), TableBuildOptions::default());
    /// b.add(&internal_key::encode(b"k", 1, Kind::Delete), b"")?;
    /// assert_eq!(b.num_entries(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn num_entries(&self) -> u64 {
        self.props.entries
    }

    /// Sets the range tombstones the table holds (written to its range-deletion block on
    /// `finish`; the table's key range is widened to cover them).
    ///
    /// # Errors
    /// `InvalidArgument` unless every tombstone has `start < end` and they are sorted by
    /// start, then sequence number descending, without duplicates.
    pub(crate) fn set_range_tombstones(&mut self, tombstones: Vec<RangeTombstone>) -> Result<()> {
        let bad = tombstones
            .iter()
            .any(|t| t.start >= t.end || t.seq > key::MAX_SEQ)
            || tombstones.windows(2).any(|w| {
                (w[0].start.as_slice(), std::cmp::Reverse(w[0].seq))
                    >= (w[1].start.as_slice(), std::cmp::Reverse(w[1].seq))
            });
        if bad {
            return Err(Error::InvalidArgument(format!(
                "table {}: range tombstones empty, inverted or out of order",
                self.path.display()
            )));
        }
        self.range_tombstones = tombstones;
        Ok(())
    }

    /// Whether the table holds range tombstones.
    pub(crate) fn has_range_tombstones(&self) -> bool {
        !self.range_tombstones.is_empty()
    }

    /// Bytes written so far plus the size of the data block being built.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::env::MemWritableFile;
    /// use bloomkv::sstable::internal_key::{self, Kind};
    /// use bloomkv::sstable::{TableBuildOptions, TableBuilder};
    /// let mut b = TableBuilder::new(Box::new(MemWritableFile::new()), "mem".into(), TableBuildOptions::default());
    /// let before = b.estimated_file_size();
    /// b.add(&internal_key::encode(b"k", 1, Kind::Put), &[7u8; 100])?;
    /// assert!(b.estimated_file_size() > before);
    /// # Ok(())
    /// # }
    /// ```
    pub fn estimated_file_size(&self) -> u64 {
        self.offset + self.data.size_estimate() as u64
    }

    /// Writes `contents` and its trailer, compressed with the table's codec when `compress`
    /// is set and it saves enough; returns its handle (which names the stored bytes).
    fn write_block(&mut self, contents: &[u8], compress: bool) -> Result<BlockHandle> {
        let mut compressed = std::mem::take(&mut self.compressed);
        let codec = if compress {
            compress_block(self.opts.compression, contents, &mut compressed)
        } else {
            CODEC_NONE
        };
        let stored = if codec == CODEC_NONE {
            contents
        } else {
            &compressed[..]
        };
        let handle = BlockHandle {
            offset: self.offset,
            size: stored.len() as u64,
        };
        let res = self
            .file
            .append(stored)
            .and_then(|()| self.file.append(&block_trailer(stored, codec)));
        self.compressed = compressed;
        if let Err(e) = res {
            self.failed = Some(e.to_string());
            return Err(e.located(&self.path, handle.offset));
        }
        self.offset += handle.size + BLOCK_TRAILER_LEN as u64;
        Ok(handle)
    }

    fn flush_data_block(&mut self) -> Result<()> {
        if self.data.is_empty() {
            return Ok(());
        }
        let contents = self.data.finish();
        let handle = self.write_block(&contents, true)?;
        self.props.data_blocks += 1;
        self.props.data_raw_bytes += contents.len() as u64;
        self.props.data_bytes += handle.size;
        self.pending_index = Some(handle);
        Ok(())
    }

    /// Writes the remaining blocks and the footer, then syncs the file.
    ///
    /// # Errors
    /// `Io` if a write or the sync fails; `InvalidArgument` if an earlier write failed.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::env::MemWritableFile;
    /// use bloomkv::sstable::internal_key::{self, Kind};
    /// use bloomkv::sstable::{TableBuildOptions, TableBuilder};
    /// let mut b = TableBuilder::new(Box::new(MemWritableFile::new()), "mem".into(), TableBuildOptions::default());
    /// b.add(&internal_key::encode(b"k", 1, Kind::Put), b"v")?;
    /// let props = b.finish()?;
    /// assert_eq!((props.entries, props.data_blocks), (1, 1));
    /// # Ok(())
    /// # }
    /// ```
    pub fn finish(mut self) -> Result<TableProperties> {
        self.check_usable()?;
        self.flush_data_block()?;
        if let Some(handle) = self.pending_index.take() {
            let sep = last_separator(&self.last_key);
            self.index.add(&sep, &handle.encode());
        }
        self.props.largest_key = self.last_key.clone();
        // The table's key range covers its range tombstones, so that a lookup of any key
        // they cover consults this table.
        for t in &self.range_tombstones {
            let (lo, hi) = (t.smallest_key(), t.largest_key());
            if self.props.smallest_key.is_empty()
                || key::compare(&lo, &self.props.smallest_key).is_lt()
            {
                self.props.smallest_key = lo;
            }
            if self.props.largest_key.is_empty()
                || key::compare(&hi, &self.props.largest_key).is_gt()
            {
                self.props.largest_key = hi;
            }
        }
        self.props.range_deletions = self.range_tombstones.len() as u64;
        let range_block = (!self.range_tombstones.is_empty())
            .then(|| range_del::encode_block(&self.range_tombstones));
        let range_handle = match range_block {
            Some(b) => Some(self.write_block(&b, false)?),
            None => None,
        };

        // Metaindex entries must be sorted bytewise: "filter.*" < "prefix.*" < "properties"
        // < "rangedel".
        let mut meta = BlockBuilder::new(1);
        if let Some(policy) = self.opts.filter.clone() {
            let filter = policy.create_filter_from_hashes(&self.user_key_hashes);
            let handle = self.write_block(&filter, false)?;
            self.props.filter_policy = policy.name().to_string();
            self.props.filter_bits_per_key = policy.bits_per_key();
            self.props.filter_bytes = filter.len() as u64;
            meta.add(
                format!("{FILTER_BLOCK_PREFIX}{}", policy.name()).as_bytes(),
                &handle.encode(),
            );
            if let Some(extractor) = self.opts.prefix_extractor.clone() {
                let prefixes = policy.create_filter_from_hashes(&self.prefix_hashes);
                let handle = self.write_block(&prefixes, false)?;
                self.props.prefix_extractor = extractor.name().to_string();
                self.props.format_version = FORMAT_VERSION;
                meta.add(
                    format!("{PREFIX_FILTER_BLOCK_PREFIX}{}", policy.name()).as_bytes(),
                    &handle.encode(),
                );
            }
        }
        let props_block = self.props.encode_block();
        let props_handle = self.write_block(&props_block, false)?;
        meta.add(PROPERTIES_BLOCK_NAME.as_bytes(), &props_handle.encode());
        if let Some(h) = range_handle {
            meta.add(RANGE_DELETION_BLOCK_NAME.as_bytes(), &h.encode());
        }
        let meta_block = meta.finish();
        let metaindex = self.write_block(&meta_block, false)?;
        let index_block = self.index.finish();
        let index = self.write_block(&index_block, true)?;
        let footer = Footer {
            metaindex,
            index,
            format_version: self.props.format_version,
        }
        .encode();
        let footer_at = self.offset;
        self.file
            .append(&footer)
            .and_then(|()| self.file.sync())
            .map_err(|e| e.located(&self.path, footer_at))?;
        self.offset += footer.len() as u64;
        self.props.file_size = self.offset;
        Ok(self.props)
    }
}
