//! The properties block: a table's metadata as named entries in an ordinary block.
//!
//! Names are stable and sorted bytewise; integers are varint64, `filter.bits_per_key` is an
//! f64 as 8 bytes LE, strings and keys are raw bytes. Readers ignore names they do not know
//! and reject a block missing one they need. `file_size` is not stored: it is the file's
//! length.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::sstable::block::{Block, BlockBuilder, BlockIter, bytewise};
use crate::util::coding::{get_varint64, put_varint64};

/// What a table records about itself (returned by `TableBuilder::finish`, read by `Table::open`).
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
/// let props = table.properties();
/// assert_eq!((props.entries, props.deletions, props.data_blocks), (2, 0, 1));
/// assert_eq!(props.filter_policy, BloomPolicy::NAME);
/// assert_eq!(props.file_size, std::fs::metadata(&path)?.len());
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TableProperties {
    /// The table format version.
    pub format_version: u32,
    /// Number of entries (puts and deletes).
    pub entries: u64,
    /// Number of delete entries.
    pub deletions: u64,
    /// The smallest internal key (empty for an empty table).
    pub smallest_key: Vec<u8>,
    /// The largest internal key (empty for an empty table).
    pub largest_key: Vec<u8>,
    /// Sum of the internal key lengths.
    pub raw_key_bytes: u64,
    /// Sum of the value lengths.
    pub raw_value_bytes: u64,
    /// Number of data blocks.
    pub data_blocks: u64,
    /// Name of the filter policy whose filter the table holds; `""` when it has none.
    pub filter_policy: String,
    /// Bits per key the filter was built with (0 without a filter).
    pub filter_bits_per_key: f64,
    /// Size of the filter block contents in bytes.
    pub filter_bytes: u64,
    /// Size of the whole file in bytes.
    pub file_size: u64,
    /// Name of the codec the table was built with (`none`, `lz4`, `zstd`; see
    /// [`crate::Compression::name`]); `none` for a format-version-1 table. Individual blocks
    /// may still be raw.
    pub compression: String,
    /// Sum of the data blocks' sizes before compression (trailers excluded). Version-1 tables
    /// do not store it; their reader fills it in from the index (equal to `data_bytes`).
    pub data_raw_bytes: u64,
    /// Sum of the data blocks' sizes as stored (trailers excluded).
    pub data_bytes: u64,
    /// The number of the file the table was written as (`NNNNNN.sst`), when the writer knew
    /// it: a reader checks it against the number it opened, so a table copied or renamed
    /// over another is caught. Tables written before it was recorded have none.
    pub file_number: Option<u64>,
    /// Number of range tombstones in the table's range-deletion block (format version 3;
    /// 0 when it has none).
    pub range_deletions: u64,
    /// Name of the prefix extractor whose prefixes the table's prefix filter holds (format
    /// version 4); `""` when it has no prefix filter.
    pub prefix_extractor: String,
}

impl TableProperties {
    /// How much smaller the data blocks are stored: `data_raw_bytes / data_bytes`
    /// (1.0 for raw blocks or an empty table).
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
    /// assert_eq!(table.properties().compression_ratio(), 1.0); // stored raw
    /// # Ok(())
    /// # }
    /// ```
    pub fn compression_ratio(&self) -> f64 {
        if self.data_bytes == 0 {
            1.0
        } else {
            self.data_raw_bytes as f64 / self.data_bytes as f64
        }
    }
}

const COMPRESSION: &str = "compression";
const DATA_BLOCKS: &str = "data_blocks";
const DATA_BYTES: &str = "data_bytes";
const DATA_RAW_BYTES: &str = "data_raw_bytes";
const DELETIONS: &str = "deletions";
const ENTRIES: &str = "entries";
const FILTER_BITS: &str = "filter.bits_per_key";
const FILTER_BYTES: &str = "filter.bytes";
const FILE_NUMBER: &str = "file_number";
const FILTER_POLICY: &str = "filter.policy";
const FORMAT_VERSION: &str = "format_version";
const LARGEST_KEY: &str = "largest_key";
const PREFIX_EXTRACTOR: &str = "prefix.extractor";
const RANGE_DELETIONS: &str = "range_deletions";
const RAW_KEY_BYTES: &str = "raw_key_bytes";
const RAW_VALUE_BYTES: &str = "raw_value_bytes";
const SMALLEST_KEY: &str = "smallest_key";

fn varint(v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    put_varint64(&mut out, v);
    out
}

impl TableProperties {
    /// The properties block contents (without trailer).
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
    /// use bloomkv::sstable::TableProperties;
    /// let props = table.properties();
    /// let decoded = TableProperties::decode_block(props.encode_block())?;
    /// assert_eq!((decoded.entries, &decoded.filter_policy), (props.entries, &props.filter_policy));
    /// # Ok(())
    /// # }
    /// ```
    pub fn encode_block(&self) -> Vec<u8> {
        let mut fields: BTreeMap<&str, Vec<u8>> = BTreeMap::new();
        fields.insert(COMPRESSION, self.compression.as_bytes().to_vec());
        fields.insert(DATA_BLOCKS, varint(self.data_blocks));
        fields.insert(DATA_BYTES, varint(self.data_bytes));
        fields.insert(DATA_RAW_BYTES, varint(self.data_raw_bytes));
        fields.insert(DELETIONS, varint(self.deletions));
        fields.insert(ENTRIES, varint(self.entries));
        if let Some(n) = self.file_number {
            fields.insert(FILE_NUMBER, varint(n));
        }
        fields.insert(FILTER_BITS, self.filter_bits_per_key.to_le_bytes().to_vec());
        fields.insert(FILTER_BYTES, varint(self.filter_bytes));
        fields.insert(FILTER_POLICY, self.filter_policy.as_bytes().to_vec());
        fields.insert(FORMAT_VERSION, varint(u64::from(self.format_version)));
        fields.insert(LARGEST_KEY, self.largest_key.clone());
        if !self.prefix_extractor.is_empty() {
            fields.insert(PREFIX_EXTRACTOR, self.prefix_extractor.as_bytes().to_vec());
        }
        if self.range_deletions > 0 {
            fields.insert(RANGE_DELETIONS, varint(self.range_deletions));
        }
        fields.insert(RAW_KEY_BYTES, varint(self.raw_key_bytes));
        fields.insert(RAW_VALUE_BYTES, varint(self.raw_value_bytes));
        fields.insert(SMALLEST_KEY, self.smallest_key.clone());
        let mut b = BlockBuilder::new(1);
        for (name, value) in &fields {
            b.add(name.as_bytes(), value);
        }
        b.finish()
    }

    /// Decodes a properties block; `file_size` is filled in by the caller. `compression`,
    /// `data_bytes` and `data_raw_bytes` (format version 2) may be missing: they are then
    /// `none`, 0 and 0.
    ///
    /// # Errors
    /// Block-relative `Corruption` on a bad block, a missing field or a malformed value.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::sstable::TableProperties;
    /// assert!(TableProperties::decode_block(vec![1, 2, 3]).is_err());
    /// ```
    pub fn decode_block(data: Vec<u8>) -> Result<TableProperties> {
        let mut it = BlockIter::new(Arc::new(Block::new(data)?), bytewise);
        let mut fields: BTreeMap<Vec<u8>, (usize, Vec<u8>)> = BTreeMap::new();
        it.seek_to_first()?;
        while it.valid() {
            fields.insert(it.key().to_vec(), (it.entry_offset(), it.value().to_vec()));
            it.advance()?;
        }
        let get = |name: &str| -> Result<&(usize, Vec<u8>)> {
            fields.get(name.as_bytes()).ok_or_else(|| {
                Error::corrupt_bytes(0, format!("properties block lacks \"{name}\""))
            })
        };
        let num = |name: &str| -> Result<u64> {
            let (at, v) = get(name)?;
            match get_varint64(v) {
                Ok((n, used)) if used == v.len() => Ok(n),
                _ => Err(Error::corrupt_bytes(
                    *at as u64,
                    format!("property \"{name}\" is not a varint"),
                )),
            }
        };
        let bits = {
            let (at, v) = get(FILTER_BITS)?;
            let arr: [u8; 8] = v.as_slice().try_into().map_err(|_| {
                Error::corrupt_bytes(
                    *at as u64,
                    "property \"filter.bits_per_key\" is not 8 bytes",
                )
            })?;
            f64::from_le_bytes(arr)
        };
        let policy = {
            let (at, v) = get(FILTER_POLICY)?;
            String::from_utf8(v.clone()).map_err(|_| {
                Error::corrupt_bytes(*at as u64, "property \"filter.policy\" is not UTF-8")
            })?
        };
        let optional_num = |name: &str| match fields.contains_key(name.as_bytes()) {
            true => num(name),
            false => Ok(0),
        };
        let compression = match fields.get(COMPRESSION.as_bytes()) {
            None => "none".to_string(),
            Some((at, v)) => String::from_utf8(v.clone()).map_err(|_| {
                Error::corrupt_bytes(*at as u64, "property \"compression\" is not UTF-8")
            })?,
        };
        let version = num(FORMAT_VERSION)?;
        let props = TableProperties {
            format_version: u32::try_from(version).map_err(|_| {
                Error::corrupt_bytes(
                    get(FORMAT_VERSION).map_or(0, |f| f.0) as u64,
                    "format version overflows u32",
                )
            })?,
            entries: num(ENTRIES)?,
            deletions: num(DELETIONS)?,
            smallest_key: get(SMALLEST_KEY)?.1.clone(),
            largest_key: get(LARGEST_KEY)?.1.clone(),
            raw_key_bytes: num(RAW_KEY_BYTES)?,
            raw_value_bytes: num(RAW_VALUE_BYTES)?,
            data_blocks: num(DATA_BLOCKS)?,
            filter_policy: policy,
            filter_bits_per_key: bits,
            filter_bytes: num(FILTER_BYTES)?,
            file_size: 0,
            compression,
            data_raw_bytes: optional_num(DATA_RAW_BYTES)?,
            data_bytes: optional_num(DATA_BYTES)?,
            file_number: match fields.contains_key(FILE_NUMBER.as_bytes()) {
                true => Some(num(FILE_NUMBER)?),
                false => None,
            },
            range_deletions: optional_num(RANGE_DELETIONS)?,
            prefix_extractor: match fields.get(PREFIX_EXTRACTOR.as_bytes()) {
                None => String::new(),
                Some((at, v)) => String::from_utf8(v.clone()).map_err(|_| {
                    Error::corrupt_bytes(*at as u64, "property \"prefix.extractor\" is not UTF-8")
                })?,
            },
        };
        Ok(props)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let p = TableProperties {
            format_version: 1,
            entries: 10,
            deletions: 2,
            smallest_key: b"a\0\0\0\0\0\0\0\0".to_vec(),
            largest_key: b"z\0\0\0\0\0\0\0\0".to_vec(),
            raw_key_bytes: 90,
            raw_value_bytes: 1000,
            data_blocks: 3,
            filter_policy: "bloomkv.bloom".into(),
            filter_bits_per_key: 10.0,
            filter_bytes: 17,
            file_size: 0,
            compression: "lz4".into(),
            data_raw_bytes: 12_000,
            data_bytes: 6_000,
            file_number: Some(42),
            range_deletions: 3,
            prefix_extractor: "bloomkv.FixedPrefix.4".into(),
        };
        assert_eq!(TableProperties::decode_block(p.encode_block()).unwrap(), p);
    }
}
