//! Helpers for the library's unit tests: one seeded random-number generator and the fault
//! env's set-up (both shared with `tests/common`), an owned internal key, and the helpers of
//! the WAL, SSTable and iterator tests.

#[path = "../tests/common/rng.rs"]
#[expect(dead_code, reason = "shared with tests/common, which uses all of it")]
mod rng;

#[path = "../tests/common/fault.rs"]
mod fault;

pub(crate) use fault::fault_env;
pub(crate) use rng::{Rng, mix};

use std::cmp::Ordering;

use crate::util::key::{Kind, SeqNo, compare, encode};

/// An owned internal key ordered by [`compare`], usable as a map key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct InternalKey(pub Vec<u8>);

impl InternalKey {
    /// Builds one from its parts.
    pub(crate) fn new(user_key: &[u8], seq: SeqNo, kind: Kind) -> Self {
        InternalKey(encode(user_key, seq, kind))
    }
}

impl Ord for InternalKey {
    fn cmp(&self, other: &Self) -> Ordering {
        compare(&self.0, &other.0)
    }
}

impl PartialOrd for InternalKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

pub(crate) mod wal {
    //! Helpers shared by the WAL tests: an in-memory log file and record layout bookkeeping.

    use std::path::PathBuf;

    use crate::db::wal::{BLOCK_SIZE, HEADER_SIZE, LogReader, LogWriter, RecoveryMode};
    use crate::{Error, Result};

    pub use crate::env::MemWritableFile as MemFile;

    /// Where one logical record sits in the log: its first header and the end of its last payload.
    #[derive(Debug, Clone, Copy)]
    pub struct Span {
        pub start: usize,
        pub end: usize,
    }

    /// Writes `records` to a fresh in-memory log; returns the image and each record's span.
    pub fn write_log(records: &[Vec<u8>]) -> (Vec<u8>, Vec<Span>) {
        let file = MemFile::default();
        let mut w = LogWriter::new(Box::new(file.clone()));
        let mut spans = Vec::new();
        for r in records {
            let before = w.len() as usize;
            w.add_record(r).unwrap();
            spans.push(Span {
                start: first_header_at(before),
                end: w.len() as usize,
            });
        }
        w.sync().unwrap();
        let data = file.contents();
        (data, spans)
    }

    /// Where the writer puts the next header when the log is `len` bytes long.
    pub fn first_header_at(len: usize) -> usize {
        let left = BLOCK_SIZE - len % BLOCK_SIZE;
        if left < HEADER_SIZE { len + left } else { len }
    }

    /// A recognisable payload: `len` bytes derived from `seed`.
    pub fn payload(seed: u64, len: usize) -> Vec<u8> {
        crate::test_util::Rng::new(seed).bytes(len)
    }

    pub fn log_path() -> PathBuf {
        PathBuf::from("/test/000007.log")
    }

    /// Reads every record; returns them, the final result (Ok at a clean end), and the reader.
    pub fn read_log(data: &[u8], mode: RecoveryMode) -> (Vec<Vec<u8>>, Result<()>, LogReader) {
        let mut r = LogReader::new(data.to_vec(), log_path(), mode);
        let mut out = Vec::new();
        loop {
            match r.next_record() {
                Ok(Some(rec)) => out.push(rec),
                Ok(None) => return (out, Ok(()), r),
                Err(e) => return (out, Err(e), r),
            }
        }
    }

    /// The offset of a Corruption error, panicking on any other outcome.
    pub fn corruption_offset(res: &Result<()>) -> u64 {
        match res {
            Err(Error::Corruption { file, offset, .. }) => {
                assert_eq!(file, &log_path());
                *offset
            }
            other => panic!("expected a corruption error, got {other:?}"),
        }
    }

    /// True when `got` is `want` with some records left out (order kept).
    pub fn is_subsequence(got: &[Vec<u8>], want: &[Vec<u8>]) -> bool {
        let mut it = want.iter();
        got.iter().all(|g| it.any(|w| w == g))
    }
}

pub(crate) mod sstable {
    //! Shared helpers for the SSTable tests: in-memory files, table building, test-only filter
    //! policies and a hand assembler for crafted (possibly malformed) tables.

    use std::path::PathBuf;
    use std::sync::Arc;

    use crate::error::{Error, Result};
    use crate::filter::FilterPolicy;
    use crate::sstable::block::BlockBuilder;
    use crate::sstable::format::{BlockHandle, FORMAT_VERSION, Footer, block_trailer};
    use crate::sstable::{
        ReadCounters, Table, TableBuildOptions, TableBuilder, TableProperties, TableReadOptions,
    };

    pub use crate::env::{MemRandomAccessFile, MemWritableFile};

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
        cache: Option<Arc<crate::sstable::cache::BlockCache>>,
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

    /// [`open`], from a real file named `TEST_PATH` in a fresh temporary directory, read
    /// through a memory map (`Options::mmap_reads`). Keep the directory while reading.
    pub fn open_mapped(
        bytes: Vec<u8>,
        opts: TableReadOptions,
    ) -> (Result<Arc<Table>>, tempfile::TempDir) {
        use crate::env::{Env, StdEnv};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(TEST_PATH);
        std::fs::write(&path, bytes).unwrap();
        let table = StdEnv
            .open_mapped(&path)
            .and_then(|file| Table::open(file, opts).map(Arc::new));
        (table, dir)
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
        use crate::sstable::block::{Block, BlockIter, bytewise};
        use crate::sstable::format::FOOTER_LEN;
        let footer_at = bytes.len() - FOOTER_LEN;
        let footer = Footer::decode(&bytes[footer_at..]).unwrap();
        // Index blocks may be compressed (format version 2): decode through the codec.
        let block = |h: BlockHandle| {
            let (s, e) = (h.offset as usize, (h.offset + h.size) as usize);
            let raw = crate::sstable::compression::decompress_block(bytes[e], bytes[s..e].to_vec())
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
        let mut it = BlockIter::new(block(footer.index), crate::util::key::compare);
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
}

pub(crate) mod iter {
    //! Test helper shared by the iterator tests: a Vec-backed `InternalIterator`.

    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use crate::Error;
    use crate::Result;
    use crate::iter::InternalIterator;
    use crate::util::key;

    /// Entries sorted by `key::compare`, with an optional injected failure and a record of the
    /// furthest index ever positioned on (to check read-ahead).
    pub struct VecIter {
        entries: Arc<Vec<(Vec<u8>, Vec<u8>)>>,
        pos: usize,
        /// Calls (seek/seek_to_first/next) that succeed before every later call fails.
        pub fail_after: Option<usize>,
        calls: usize,
        /// Largest index positioned on + 1 (0 = none).
        pub furthest: Arc<AtomicUsize>,
    }

    impl VecIter {
        /// Sorts `entries` by internal key.
        pub fn new(mut entries: Vec<(Vec<u8>, Vec<u8>)>) -> VecIter {
            entries.sort_by(|a, b| key::compare(&a.0, &b.0));
            VecIter {
                entries: Arc::new(entries),
                pos: usize::MAX,
                fail_after: None,
                calls: 0,
                furthest: Arc::new(AtomicUsize::new(0)),
            }
        }

        pub fn boxed(entries: Vec<(Vec<u8>, Vec<u8>)>) -> Box<dyn InternalIterator> {
            Box::new(VecIter::new(entries))
        }

        fn call(&mut self) -> Result<()> {
            self.calls += 1;
            match self.fail_after {
                Some(n) if self.calls > n => {
                    self.pos = usize::MAX;
                    Err(Error::corrupt_bytes(self.calls as u64, "injected failure"))
                }
                _ => Ok(()),
            }
        }

        fn note(&self) {
            if self.pos < self.entries.len() {
                self.furthest.fetch_max(self.pos + 1, Ordering::Relaxed);
            }
        }
    }

    impl InternalIterator for VecIter {
        fn seek_to_first(&mut self) -> Result<()> {
            self.call()?;
            self.pos = 0;
            self.note();
            Ok(())
        }
        fn seek(&mut self, target: &[u8]) -> Result<()> {
            self.call()?;
            self.pos = self
                .entries
                .partition_point(|(k, _)| key::compare(k, target) == std::cmp::Ordering::Less);
            self.note();
            Ok(())
        }
        fn next(&mut self) -> Result<()> {
            assert!(self.valid(), "next on an invalid iterator");
            self.call()?;
            self.pos += 1;
            self.note();
            Ok(())
        }
        fn seek_to_last(&mut self) -> Result<()> {
            self.call()?;
            self.pos = self.entries.len().checked_sub(1).unwrap_or(usize::MAX);
            self.note();
            Ok(())
        }
        fn prev(&mut self) -> Result<()> {
            assert!(self.valid(), "prev on an invalid iterator");
            self.call()?;
            self.pos = self.pos.checked_sub(1).unwrap_or(usize::MAX);
            self.note();
            Ok(())
        }
        fn valid(&self) -> bool {
            self.pos < self.entries.len()
        }
        fn key(&self) -> &[u8] {
            &self.entries[self.pos].0
        }
        fn value(&self) -> &[u8] {
            &self.entries[self.pos].1
        }
    }

    /// Drains an internal iterator from its current position.
    pub fn drain(it: &mut dyn InternalIterator) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        while it.valid() {
            out.push((it.key().to_vec(), it.value().to_vec()));
            it.next().unwrap();
        }
        out
    }
}
