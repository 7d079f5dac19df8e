//! Block compression (format version 2): tables round-trip under every codec, the cache holds
//! raw blocks, and damaged compressed blocks are `Corruption` naming the file and offset —
//! never a panic, never an unbounded allocation.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::error::Error;
use crate::filter::{FilterPolicy, hash_key};
use crate::sstable::cache::BlockCache;
use crate::sstable::compression::{CODEC_LZ4, CODEC_NONE, CODEC_ZSTD};
use crate::sstable::format::BlockHandle;
use crate::sstable::{Compression, Table, TableBuildOptions};
use crate::test_util::sstable::*;
use crate::util::coding::put_varint32;
use crate::util::key::{self, KIND_SEEK, Kind, MAX_SEQ};
use proptest::prelude::*;

const CODECS: [Compression; 3] = [
    Compression::None,
    Compression::Lz4,
    Compression::Zstd { level: 3 },
];

fn policy() -> Option<Arc<dyn FilterPolicy>> {
    Some(Arc::new(ExactPolicy))
}

/// W2-like values: 50 pseudo-random bytes, then the same 50 again.
fn entries(n: u64) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    (0..n)
        .map(|i| {
            let mut half = Vec::with_capacity(50);
            while half.len() < 50 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                half.extend_from_slice(&x.to_le_bytes());
            }
            half.truncate(50);
            let mut v = half.clone();
            v.extend_from_slice(&half);
            (
                key::encode(format!("{:016x}", i * 7919).as_bytes(), i + 1, Kind::Put),
                v,
            )
        })
        .collect()
}

fn build_with(c: Compression, data: &BTreeMap<Vec<u8>, Vec<u8>>) -> Vec<u8> {
    build(
        data.iter().map(|(k, v)| (k.clone(), v.clone())),
        TableBuildOptions {
            filter: policy(),
            compression: c,
            ..Default::default()
        },
    )
    .0
}

fn get(table: &Table, ikey: &[u8]) -> crate::Result<Option<Vec<u8>>> {
    let uk = key::user_key(ikey);
    let g = table.get(&key::encode(uk, MAX_SEQ, KIND_SEEK), hash_key(uk))?;
    Ok(g.entry.map(|(_, _, v)| v))
}

#[test]
fn each_codec_round_trips_and_shrinks_the_table() {
    let data = entries(20_000);
    let mut sizes = Vec::new();
    for c in CODECS {
        let (bytes, props) = build(
            data.iter().map(|(k, v)| (k.clone(), v.clone())),
            TableBuildOptions {
                filter: policy(),
                compression: c,
                ..Default::default()
            },
        );
        assert_eq!(props.compression, c.name());
        assert_eq!(
            props.format_version,
            crate::sstable::format::PLAIN_FORMAT_VERSION
        );
        sizes.push((bytes.len(), props.data_raw_bytes, props.data_bytes));
        let cache = Arc::new(BlockCache::new(64 << 20));
        let table = open(bytes, read_opts(policy(), Some(cache.clone()))).unwrap();
        assert_eq!(table.properties().compression, c.name());
        for (k, v) in &data {
            assert_eq!(get(&table, k).unwrap().as_ref(), Some(v), "{c}");
        }
        // The cache holds raw blocks: it is charged at least the uncompressed data size.
        assert!(cache.usage() as u64 >= props.data_raw_bytes, "{c}");
        // A second pass is served from the cache, with the same answers.
        for (k, v) in data.iter().step_by(97) {
            assert_eq!(get(&table, k).unwrap().as_ref(), Some(v), "{c}");
        }
        let mut it = table.iter();
        let mut seen = 0;
        use crate::iter::InternalIterator;
        it.seek_to_first().unwrap();
        while it.valid() {
            assert_eq!(data.get(it.key()).map(Vec::as_slice), Some(it.value()));
            seen += 1;
            it.next().unwrap();
        }
        assert_eq!(seen, data.len());
    }
    let (none, lz4, zstd) = (sizes[0], sizes[1], sizes[2]);
    assert_eq!(none.1, none.2, "raw blocks are stored as they are");
    assert_eq!(none.1, lz4.1);
    assert_eq!(none.1, zstd.1);
    // Values compress about 2:1.
    for (name, s) in [("lz4", lz4), ("zstd", zstd)] {
        let ratio = s.1 as f64 / s.2 as f64;
        assert!(ratio > 1.5, "{name}: data ratio {ratio:.2}");
        assert!(s.0 * 10 < none.0 * 7, "{name}: {} vs {} bytes", s.0, none.0);
    }
}

/// The codec byte of the block at `h`.
fn codec_of(bytes: &[u8], h: BlockHandle) -> u8 {
    bytes[(h.offset + h.size) as usize]
}

fn assert_corruption_in(e: &Error, h: BlockHandle, what: &str) {
    match e {
        Error::Corruption { file, offset, .. } => {
            assert_eq!(file, Path::new(TEST_PATH), "{what}: {e}");
            assert!(
                *offset >= h.offset && *offset <= h.offset + h.size + 5,
                "{what}: offset {offset} outside block {h:?}: {e}"
            );
        }
        other => panic!("{what}: not corruption: {other}"),
    }
}

/// Every answer about the keys of the damaged table is right, or corruption in `h`.
fn reads_are_right_or_corruption(
    table: &Table,
    data: &BTreeMap<Vec<u8>, Vec<u8>>,
    h: BlockHandle,
    what: &str,
) {
    for (k, _) in data.iter().step_by(13) {
        if let Err(e) = get(table, k) {
            assert_corruption_in(&e, h, what);
        }
    }
}

/// The first key of each data block of an intact table.
fn first_key_of(bytes: &[u8], h: BlockHandle) -> Vec<u8> {
    use crate::sstable::block::{Block, BlockIter};
    let (s, e) = (h.offset as usize, (h.offset + h.size) as usize);
    let raw =
        crate::sstable::compression::decompress_block(bytes[e], bytes[s..e].to_vec()).unwrap();
    let mut it = BlockIter::new(Arc::new(Block::new(raw).unwrap()), key::compare);
    it.seek_to_first().unwrap();
    it.key().to_vec()
}

/// Rewrites the stored raw length of the compressed block at `h` (same varint width).
fn with_raw_len(bytes: &[u8], h: BlockHandle, lie: u32) -> Option<Vec<u8>> {
    let s = h.offset as usize;
    let (_, used) = crate::util::coding::get_varint32(&bytes[s..]).unwrap();
    let mut v = Vec::new();
    put_varint32(&mut v, lie);
    if v.len() != used {
        return None;
    }
    let mut b = bytes.to_vec();
    b[s..s + used].copy_from_slice(&v);
    fix_crc(&mut b, h);
    Some(b)
}

#[test]
fn damaged_compressed_data_blocks_are_corruption_naming_file_and_offset() {
    let data = entries(3000);
    for c in [Compression::Lz4, Compression::Zstd { level: 3 }] {
        let bytes = build_with(c, &data);
        let l = layout(&bytes);
        let compressed: Vec<BlockHandle> = l
            .data
            .iter()
            .copied()
            .filter(|h| codec_of(&bytes, *h) == c.codec_byte())
            .collect();
        assert!(compressed.len() > 10, "{c}: blocks compress");
        let h = compressed[compressed.len() / 2];
        let (s, e) = (h.offset as usize, (h.offset + h.size) as usize);
        let victim = first_key_of(&bytes, h);

        // Bit flips: caught by the checksum.
        for at in (s..e + 5).step_by(7) {
            let mut b = bytes.clone();
            b[at] ^= 0x04;
            let table = open(b, read_opts(None, None)).unwrap();
            let e = get(&table, &victim).unwrap_err();
            assert_corruption_in(&e, h, &format!("{c} flip at {at}"));
        }
        // Bit flips behind a recomputed checksum: the codec or the block check catches most;
        // whatever it does, no panic and no wrong key order.
        for at in (s..e).step_by(3) {
            let mut b = bytes.clone();
            b[at] ^= 0x41;
            fix_crc(&mut b, h);
            let table = open(b, read_opts(None, None)).unwrap();
            reads_are_right_or_corruption(&table, &data, h, &format!("{c} fixed flip at {at}"));
        }
        // Bad codec bytes (checksum recomputed): unknown, the other codec, or "raw".
        for bad in [
            3u8,
            0x7f,
            0xff,
            CODEC_NONE,
            CODEC_LZ4 + CODEC_ZSTD - c.codec_byte(),
        ] {
            let mut b = bytes.clone();
            b[e] = bad;
            fix_crc(&mut b, h);
            let table = open(b, read_opts(None, None)).unwrap();
            let e = get(&table, &victim).unwrap_err();
            assert_corruption_in(&e, h, &format!("{c} codec byte {bad}"));
        }
        // A lying raw length (checksum recomputed).
        let (raw_len, _) = crate::util::coding::get_varint32(&bytes[s..]).unwrap();
        for lie in [raw_len - 1, raw_len + 1, raw_len / 2, 16383, 128] {
            let Some(b) = with_raw_len(&bytes, h, lie) else {
                continue;
            };
            let table = open(b, read_opts(None, None)).unwrap();
            let e = get(&table, &victim).unwrap_err();
            assert_corruption_in(&e, h, &format!("{c} raw length {lie} (is {raw_len})"));
        }
        // The stored block cut short (the index is rebuilt to match, checksum recomputed):
        // truncated compressed input.
        for cut in [1usize, 2, 10, h.size as usize / 2] {
            let mut b = bytes[..e - cut].to_vec();
            b.push(c.codec_byte());
            b.extend_from_slice(&[0; 4]);
            let short = BlockHandle {
                offset: h.offset,
                size: h.size - cut as u64,
            };
            fix_crc(&mut b, short);
            let e2 = get_truncated(&b, short);
            assert_corruption_in(&e2, short, &format!("{c} cut {cut}"));
        }
    }
}

/// Reads the block at `h` of `bytes` (which may be only the prefix up to that block) directly.
fn get_truncated(bytes: &[u8], h: BlockHandle) -> Error {
    let file = crate::env::MemRandomAccessFile::new(bytes.to_vec(), TEST_PATH);
    crate::sstable::format::read_block(&file, Path::new(TEST_PATH), h, bytes.len() as u64)
        .unwrap_err()
}

#[test]
fn damaged_compressed_index_block_fails_open_with_its_offset() {
    let data = entries(3000);
    for c in [Compression::Lz4, Compression::Zstd { level: 3 }] {
        let bytes = build_with(c, &data);
        let l = layout(&bytes);
        let h = l.index;
        assert_eq!(
            codec_of(&bytes, h),
            c.codec_byte(),
            "{c}: the index compresses"
        );
        let (raw_len, _) = crate::util::coding::get_varint32(&bytes[h.offset as usize..]).unwrap();
        for lie in [raw_len - 1, raw_len + 1] {
            if let Some(b) = with_raw_len(&bytes, h, lie) {
                let e = open(b, read_opts(None, None)).unwrap_err();
                assert_corruption_in(&e, h, &format!("{c} index raw length {lie}"));
            }
        }
        let mut b = bytes.clone();
        b[(h.offset + h.size) as usize] = 9;
        fix_crc(&mut b, h);
        let e = open(b, read_opts(None, None)).unwrap_err();
        assert_corruption_in(&e, h, &format!("{c} index codec 9"));
        for at in (h.offset..h.offset + h.size).step_by(5) {
            let mut b = bytes.clone();
            b[at as usize] ^= 0x10;
            fix_crc(&mut b, h);
            // Open may fail (corruption) or succeed with a differently damaged index: then
            // reads are right or corruption, never a panic.
            if let Ok(table) = open(b, read_opts(None, None)) {
                for (k, _) in data.iter().step_by(29) {
                    let _ = get(&table, k);
                }
            }
        }
    }
}

fn block_strategy() -> impl Strategy<Value = Vec<(Vec<u8>, Vec<u8>)>> {
    proptest::collection::btree_map(
        proptest::collection::vec(any::<u8>(), 1..24),
        (
            proptest::collection::vec(any::<u8>(), 0..80),
            0usize..4,
            0usize..200,
        ),
        1..300,
    )
    .prop_map(|m| {
        m.into_iter()
            .enumerate()
            .map(|(i, (uk, (random, repeat_of, extra)))| {
                // Values mix random bytes and repeats, so some blocks compress and some don't.
                let mut v = random.clone();
                for _ in 0..repeat_of {
                    v.extend_from_slice(&random);
                }
                v.resize(v.len() + extra % 64, b'z');
                (key::encode(&uk, i as u64 + 1, Kind::Put), v)
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_blocks_round_trip_and_damage_never_panics(
        entries in block_strategy(),
        codec in 0usize..3,
        block_bytes in prop_oneof![Just(64usize), Just(512), Just(4096), Just(65536)],
        flip in any::<prop::sample::Index>(),
        bit in 0u8..8,
    ) {
        let c = CODECS[codec];
        let (bytes, props) = build(
            entries.iter().cloned(),
            TableBuildOptions { block_bytes, compression: c, ..Default::default() },
        );
        prop_assert_eq!(props.entries, entries.len() as u64);
        let table = open(bytes.clone(), read_opts(None, None)).unwrap();
        for (k, v) in &entries {
            prop_assert_eq!(get(&table, k).unwrap(), Some(v.clone()));
        }
        // One bit flipped anywhere in the blocks, each block's checksum recomputed so the
        // damage reaches the codecs: open and reads give answers or corruption, never panic.
        let l = layout(&bytes);
        let mut handles = l.data.clone();
        handles.push(l.index);
        let h = handles[flip.index(handles.len())];
        let mut b = bytes;
        let at = h.offset as usize + (flip.index(h.size.max(1) as usize)).min(h.size as usize - 1);
        b[at] ^= 1 << bit;
        fix_crc(&mut b, h);
        if let Ok(table) = open(b, read_opts(None, None)) {
            for (k, _) in &entries {
                match get(&table, k) {
                    Ok(_) => {}
                    Err(Error::Corruption { file, .. }) => prop_assert_eq!(file, Path::new(TEST_PATH)),
                    Err(e) => prop_assert!(false, "unexpected {}", e),
                }
            }
        }
    }
}

/// The engine writes each level's tables with that level's codec, and reads them all back.
#[test]
fn db_compresses_per_level_and_reads_everything_back() {
    use crate::{Db, Options};
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        memtable_bytes: 256 << 10,
        target_file_bytes: 256 << 10,
        max_bytes_for_level_base: 1 << 20,
        compression_per_level: Some(vec![
            Compression::None,
            Compression::Lz4,
            Compression::Zstd { level: 3 },
        ]),
        ..Default::default()
    };
    let data = entries(30_000);
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    for (k, v) in &data {
        db.put(key::user_key(k), v).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    db.compact().unwrap();
    for (k, v) in data.iter().step_by(10) {
        db.put(key::user_key(k), v).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    db.put(b"late", b"in level 0").unwrap();
    db.flush().unwrap();
    let check = |db: &Db| {
        for (k, v) in &data {
            assert_eq!(db.get(key::user_key(k)).unwrap().as_ref(), Some(v));
        }
    };
    check(&db);
    let stats = db.stats();
    drop(db);
    let mut seen = std::collections::BTreeSet::new();
    for t in &stats.tables {
        let path = dir
            .path()
            .join(crate::sstable::table_file_name(t.file_number));
        let file: Arc<dyn crate::env::RandomAccessFile> = Arc::new(
            crate::env::MemRandomAccessFile::new(std::fs::read(&path).unwrap(), &path),
        );
        let table = Table::open(file, read_opts(None, None)).unwrap();
        // Written for its level, or for a level above and moved down unchanged (a trivial
        // move keeps a table's bytes).
        let codec = table.properties().compression.clone();
        assert!(
            (0..=t.level).any(|l| opts.compression_for_level(l).name() == codec),
            "L{}: {codec}",
            t.level
        );
        seen.insert(codec);
    }
    assert!(
        seen.contains("lz4") && seen.contains("zstd"),
        "tables of each compressing codec: {seen:?}"
    );
    let db = Db::open(dir.path(), opts).unwrap();
    check(&db);
}
