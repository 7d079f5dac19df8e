//! Shared helpers for the SSTable tests: in-memory files, table building, test-only filter
//! policies and a hand assembler for crafted (possibly malformed) tables.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use bloomkv::error::{Error, Result};
use bloomkv::filter::FilterPolicy;
use bloomkv::sstable::block::BlockBuilder;
use bloomkv::sstable::format::{BlockHandle, FORMAT_VERSION, Footer, block_trailer};
use bloomkv::sstable::{
    ReadCounters, Table, TableBuildOptions, TableBuilder, TableProperties, TableReadOptions,
};

pub use bloomkv::env::{MemRandomAccessFile, MemWritableFile};

pub const TEST_PATH: &str = "000042.sst";

/// Builds a table from sorted (internal key, value) pairs; returns its bytes and properties.
pub fn build(
    entries: impl IntoIterator<Item = (Vec<u8>, Vec<u8>)>,
    opts: TableBuildOptions,
) -> (Vec<u8>, TableProperties) {
    let file = MemWritableFile::new();
    let mut b = TableBuilder::new(Box::new(file.clone()), PathBuf::from(TEST_PATH), opts);
    for (k, v) in entries {
        b.add(&k, &v).unwrap();
    }
    let props = b.finish().unwrap();
    let bytes = file.contents();
    assert_eq!(props.file_size, bytes.len() as u64);
    (bytes, props)
}

pub fn read_opts(
    filter: Option<Arc<dyn FilterPolicy>>,
    cache: Option<Arc<bloomkv::cache::BlockCache>>,
) -> TableReadOptions {
    TableReadOptions {
        file_number: 42,
        filter,
        cache,
        counters: Arc::new(ReadCounters::default()),
    }
}

pub fn open(bytes: Vec<u8>, opts: TableReadOptions) -> Result<Arc<Table>> {
    let file = Arc::new(MemRandomAccessFile::new(bytes, TEST_PATH));
    Table::open(file, opts).map(Arc::new)
}

/// An exact filter for tests: the sorted set of hashes, with a header and a checksum.
/// Layout: u32 LE magic 0x7e57f17e | sorted u64 LE hashes | u32 LE crc32 of all before.
#[derive(Debug)]
pub struct ExactPolicy;

const EXACT_MAGIC: u32 = 0x7e57_f17e;

impl ExactPolicy {
    fn hashes(filter: &[u8]) -> Option<&[u8]> {
        if filter.len() < 8 || !(filter.len() - 8).is_multiple_of(8) {
            return None;
        }
        if u32::from_le_bytes(filter[..4].try_into().unwrap()) != EXACT_MAGIC {
            return None;
        }
        let n = filter.len();
        let crc = u32::from_le_bytes(filter[n - 4..].try_into().unwrap());
        if crc32fast::hash(&filter[..n - 4]) != crc {
            return None;
        }
        Some(&filter[4..n - 4])
    }
}

impl FilterPolicy for ExactPolicy {
    fn name(&self) -> &str {
        "test.exact"
    }
    fn bits_per_key(&self) -> f64 {
        64.0
    }
    fn create_filter_from_hashes(&self, hashes: &[u64]) -> Vec<u8> {
        let mut h = hashes.to_vec();
        h.sort_unstable();
        h.dedup();
        let mut out = EXACT_MAGIC.to_le_bytes().to_vec();
        for x in h {
            out.extend_from_slice(&x.to_le_bytes());
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }
    fn check_filter(&self, filter: &[u8]) -> Result<()> {
        Self::hashes(filter)
            .map(|_| ())
            .ok_or_else(|| Error::corrupt_bytes(0, "bad exact filter"))
    }
    fn may_contain_hash(&self, filter: &[u8], hash: u64) -> bool {
        let Some(body) = Self::hashes(filter) else {
            return true;
        };
        let n = body.len() / 8;
        let at = |i: usize| u64::from_le_bytes(body[i * 8..i * 8 + 8].try_into().unwrap());
        let (mut lo, mut hi) = (0, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match at(mid).cmp(&hash) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return true,
            }
        }
        false
    }
    fn expected_fp_rate(&self, filter: &[u8]) -> Option<f64> {
        Self::hashes(filter).map(|_| 0.0)
    }
}

/// A policy whose filter always says "absent": proves `get` skips the data block on the
/// filter's word (and that iteration never consults the filter).
#[derive(Debug)]
pub struct NeverPolicy;

impl FilterPolicy for NeverPolicy {
    fn name(&self) -> &str {
        "test.never"
    }
    fn bits_per_key(&self) -> f64 {
        0.0
    }
    fn create_filter_from_hashes(&self, _: &[u64]) -> Vec<u8> {
        b"never".to_vec()
    }
    fn check_filter(&self, _: &[u8]) -> Result<()> {
        Ok(())
    }
    fn may_contain_hash(&self, _: &[u8], _: u64) -> bool {
        false
    }
    fn expected_fp_rate(&self, _: &[u8]) -> Option<f64> {
        Some(0.0)
    }
}

/// Same name as [`ExactPolicy`] but rejects every filter in `check_filter`.
#[derive(Debug)]
pub struct RejectingExactPolicy;

impl FilterPolicy for RejectingExactPolicy {
    fn name(&self) -> &str {
        "test.exact"
    }
    fn bits_per_key(&self) -> f64 {
        64.0
    }
    fn create_filter_from_hashes(&self, hashes: &[u64]) -> Vec<u8> {
        ExactPolicy.create_filter_from_hashes(hashes)
    }
    fn check_filter(&self, _: &[u8]) -> Result<()> {
        Err(Error::corrupt_bytes(0, "rejected"))
    }
    fn may_contain_hash(&self, _: &[u8], _: u64) -> bool {
        false // would wrongly hide keys if the reader used a rejected filter
    }
    fn expected_fp_rate(&self, _: &[u8]) -> Option<f64> {
        None
    }
}

/// Where each region of a well-formed table lies (block handles include no trailer).
#[derive(Debug, Clone)]
pub struct Layout {
    pub data: Vec<BlockHandle>,
    pub filter: Option<BlockHandle>,
    pub properties: BlockHandle,
    pub metaindex: BlockHandle,
    pub index: BlockHandle,
    pub footer_at: u64,
}

/// Decodes the layout of an intact table through the public format pieces.
pub fn layout(bytes: &[u8]) -> Layout {
    use bloomkv::sstable::block::{Block, BlockIter, bytewise};
    use bloomkv::sstable::format::FOOTER_LEN;
    let footer_at = bytes.len() - FOOTER_LEN;
    let footer = Footer::decode(&bytes[footer_at..]).unwrap();
    // Index blocks may be compressed (format version 2): decode through the public codec.
    let block = |h: BlockHandle| {
        let (s, e) = (h.offset as usize, (h.offset + h.size) as usize);
        let raw = bloomkv::sstable::compression::decompress_block(bytes[e], bytes[s..e].to_vec())
            .unwrap();
        Arc::new(Block::new(raw).unwrap())
    };
    let mut filter = None;
    let mut properties = None;
    let mut it = BlockIter::new(block(footer.metaindex), bytewise);
    it.seek_to_first().unwrap();
    while it.valid() {
        let h = BlockHandle::decode_exact(it.value()).unwrap();
        if it.key() == b"properties" {
            properties = Some(h);
        } else {
            filter = Some(h);
        }
        it.advance().unwrap();
    }
    let mut data = Vec::new();
    let mut it = BlockIter::new(block(footer.index), bloomkv::key::compare);
    it.seek_to_first().unwrap();
    while it.valid() {
        data.push(BlockHandle::decode_exact(it.value()).unwrap());
        it.advance().unwrap();
    }
    Layout {
        data,
        filter,
        properties: properties.unwrap(),
        metaindex: footer.metaindex,
        index: footer.index,
        footer_at: footer_at as u64,
    }
}

/// Rewrites the trailer crc of the block at `h` after its contents were modified in place.
pub fn fix_crc(bytes: &mut [u8], h: BlockHandle) {
    let (s, e) = (h.offset as usize, (h.offset + h.size) as usize);
    let t = block_trailer(&bytes[s..e], bytes[e]);
    bytes[e..e + 5].copy_from_slice(&t);
}

/// Assembles a table by hand from data blocks given as (separator, entries), without the
/// builder's checks: lets tests produce well-checksummed tables with bad contents.
/// A hand-made data block: its index separator and its entries.
pub type RawBlock = (Vec<u8>, Vec<(Vec<u8>, Vec<u8>)>);

pub fn assemble(blocks: &[RawBlock], props: &TableProperties) -> Vec<u8> {
    let mut out = Vec::new();
    let put = |out: &mut Vec<u8>, contents: &[u8]| {
        let h = BlockHandle {
            offset: out.len() as u64,
            size: contents.len() as u64,
        };
        out.extend_from_slice(contents);
        out.extend_from_slice(&block_trailer(contents, 0));
        h
    };
    let mut index = BlockBuilder::new(1);
    for (sep, entries) in blocks {
        let mut b = BlockBuilder::new(16);
        for (k, v) in entries {
            b.add(k, v);
        }
        let h = put(&mut out, &b.finish());
        index.add(sep, &h.encode());
    }
    let ph = put(&mut out, &props.encode_block());
    let mut meta = BlockBuilder::new(1);
    meta.add(b"properties", &ph.encode());
    let mh = put(&mut out, &meta.finish());
    let ih = put(&mut out, &index.finish());
    out.extend_from_slice(
        &Footer {
            metaindex: mh,
            index: ih,
            format_version: FORMAT_VERSION,
        }
        .encode(),
    );
    out
}
