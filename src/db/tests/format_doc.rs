//! docs/FORMAT.md against the code: every example and constant the document states is
//! rebuilt here from the code (or, for the filter probes, re-derived from the document's own
//! description) and compared byte for byte, so the two cannot drift apart unnoticed.

use std::sync::Arc;

use crate::WriteBatch;
use crate::env::{MemRandomAccessFile, MemWritableFile, StdEnv};
use crate::filter::{BloomPolicy, FilterPolicy, FilterSize, hash_key};
use crate::util::key::{self, Kind};
use crate::db::manifest::{self, VersionEdit};
use crate::sstable::block::BlockBuilder;
use crate::sstable::compression::{
    CODEC_LZ4, CODEC_NONE, CODEC_ZSTD, MAX_COMPRESSED_RAW_BYTES, decompress_block,
};
use crate::sstable::format::{
    BLOCK_TRAILER_LEN, BlockHandle, FOOTER_LEN, FORMAT_VERSION, PLAIN_FORMAT_VERSION, TABLE_MAGIC,
    block_crc,
};
use crate::sstable::{ReadCounters, Table, TableBuildOptions, TableBuilder, TableReadOptions};
use crate::db::wal::{BLOCK_SIZE, HEADER_SIZE, LogWriter};

const DOC: &str = include_str!("../../../docs/FORMAT.md");

/// Parses the hex bytes of "`aa bb | cc`"-style text.
fn hex(text: &str) -> Vec<u8> {
    text.split(|c: char| c.is_whitespace() || c == '|')
        .filter(|t| !t.is_empty())
        .map(|t| u8::from_str_radix(t, 16).unwrap())
        .collect()
}

/// The text between the first backticks after `marker` in the document.
fn quoted_after(marker: &str) -> &'static str {
    let at = DOC
        .find(marker)
        .unwrap_or_else(|| panic!("FORMAT.md lost {marker:?}"));
    let rest = &DOC[at + marker.len()..];
    let start = rest.find('`').unwrap() + 1;
    let end = start + rest[start..].find('`').unwrap();
    &rest[start..end]
}

fn assert_doc_says(text: &str) {
    assert!(DOC.contains(text), "FORMAT.md no longer says {text:?}");
}

#[test]
fn constants_match() {
    assert_doc_says("[footer: 56 bytes]");
    assert_eq!(FOOTER_LEN, 56);
    assert_doc_says("### Block trailer (5 bytes, after every block)");
    assert_eq!(BLOCK_TRAILER_LEN, 5);
    assert_doc_says(
        "u32 format version (3, or 4 for a table with a prefix-filter block; versions 1 and 2 are still read)",
    );
    assert_eq!((PLAIN_FORMAT_VERSION, FORMAT_VERSION), (3, 4));
    assert_doc_says("| `prefix.<policy name>` | the prefix-filter block");
    assert_eq!(crate::sstable::PREFIX_FILTER_BLOCK_PREFIX, "prefix.");
    assert_doc_says("| `prefix.extractor` | UTF-8 name of the prefix extractor");
    assert_doc_says("`bloomkv.FixedPrefix.<n>`, `bloomkv.DelimiterPrefix.<hex byte>`");
    assert_eq!(
        crate::filter::PrefixExtractor::name(&crate::filter::FixedPrefix::new(3)),
        "bloomkv.FixedPrefix.3"
    );
    assert_doc_says("`0` = stored raw, `1` = LZ4, `2` = Zstandard");
    assert_eq!((CODEC_NONE, CODEC_LZ4, CODEC_ZSTD), (0, 1, 2));
    assert_doc_says("`1 ..= 16777216` (16 MiB");
    assert_eq!(MAX_COMPRESSED_RAW_BYTES, 16_777_216);
    assert_doc_says("u64 magic `0x626c6f6f6d6b7631`");
    assert_eq!(TABLE_MAGIC, 0x626c_6f6f_6d6b_7631);
    assert_doc_says("blocks** of 32768 bytes");
    assert_eq!(BLOCK_SIZE, 32768);
    assert_doc_says("0 ..= 32761 (block size - 7)");
    assert_eq!(HEADER_SIZE, 7);
    assert_doc_says("\"BKVMANIF\" (42 4B 56 4D 41 4E 49 46)");
    assert_eq!(&manifest::MANIFEST_MAGIC, b"BKVMANIF");
    assert_doc_says("version  u32 LE, currently 2");
    assert_eq!(manifest::MANIFEST_FORMAT_VERSION, 2);
    assert_doc_says("| `rangedel` | the range-deletion block");
    assert_eq!(crate::sstable::RANGE_DELETION_BLOCK_NAME, "rangedel");
}

#[test]
fn examples_match() {
    // Empty block.
    let empty = hex(quoted_after("An empty block is the 8 bytes "));
    assert_eq!(BlockBuilder::new(16).finish(), empty);

    // Version edit.
    let edit = VersionEdit {
        log_number: Some(5),
        next_file_number: Some(300),
        ..Default::default()
    };
    assert_eq!(
        edit.encode(),
        hex(quoted_after("next_file_number 300` encodes as "))
    );

    // WriteBatch.
    let mut b = WriteBatch::new();
    b.put("ab", "xyz");
    b.delete("k");
    b.set_sequence(5);
    let example = DOC.split("`delete(\"k\")`:\n`").nth(1).unwrap();
    assert_eq!(b.payload(), hex(&example[..example.find('`').unwrap()]));
    let mut b = WriteBatch::new();
    b.delete_range("a", "c");
    b.set_sequence(9);
    let example = DOC
        .split("`delete_range(\"a\", \"c\")`:\n`")
        .nth(1)
        .unwrap();
    assert_eq!(b.payload(), hex(&example[..example.find('`').unwrap()]));

    // An empty WAL record: crc32([0x01]) LE, 00 00, 01.
    assert_doc_says("(`crc32([0x01]) LE, 00 00, 01`)");
    let file = MemWritableFile::new();
    let mut w = LogWriter::new(Box::new(file.clone()));
    w.add_record(b"").unwrap();
    w.flush().unwrap();
    let mut want = crc32fast::hash(&[1]).to_le_bytes().to_vec();
    want.extend_from_slice(&[0, 0, 1]);
    assert_eq!(file.contents(), want);
}

#[test]
fn lock_file_holds_the_writer_process_id() {
    let dir = tempfile::tempdir().unwrap();
    let db = crate::Db::open(dir.path(), crate::Options::default()).unwrap();
    assert_doc_says("(`4242\\n` for process 4242)");
    // Read once the lock is let go: this process reading the file while it holds the lock
    // would release it (docs/FORMAT.md, LOCK).
    drop(db);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("LOCK")).unwrap(),
        format!("{}\n", std::process::id())
    );
}

#[test]
fn manifest_header_and_current_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = manifest::ManifestWriter::create(&StdEnv, dir.path(), 123).unwrap();
    m.append(&VersionEdit::default()).unwrap();
    let bytes = std::fs::read(dir.path().join("MANIFEST-000123")).unwrap();
    // First physical record: 7-byte header, then the 12-byte header payload.
    assert_eq!(&bytes[4..7], &[12, 0, 1]);
    assert_eq!(&bytes[7..15], b"BKVMANIF");
    assert_eq!(&bytes[15..19], &2u32.to_le_bytes());
    manifest::set_current(&StdEnv, dir.path(), 123).unwrap();
    assert_doc_says("`MANIFEST-000123\\n`");
    assert_eq!(
        std::fs::read(dir.path().join("CURRENT")).unwrap(),
        b"MANIFEST-000123\n"
    );
}

fn mix64(mut x: u64) -> u64 {
    // As FORMAT.md states it.
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d049bb133111eb);
    x ^ (x >> 31)
}

/// The bits a key with hash `h` sets, derived only from FORMAT.md's description.
fn documented_bits(h: u64, m: u64, k: u32) -> Vec<u64> {
    let blocks = m / 512;
    let block = ((u128::from(h) * u128::from(blocks)) >> 64) as u64;
    let mut word = mix64(h);
    let mut fields = word;
    let mut left_in_word = 7;
    (0..k)
        .map(|_| {
            if left_in_word == 0 {
                word = mix64(word.wrapping_add(0x9e3779b97f4a7c15));
                fields = word;
                left_in_word = 7;
            }
            left_in_word -= 1;
            let offset = fields & 511;
            fields >>= 9;
            block * 512 + offset
        })
        .collect()
}

#[test]
fn bloom_filter_block_is_exactly_as_documented() {
    assert_doc_says("`w = mix64(w + 0x9e3779b97f4a7c15)`");
    for (keys, bits_per_key) in [(1usize, 10.0), (1000, 10.0), (5000, 6.0), (300, 20.0)] {
        let hashes: Vec<u64> = (0..keys)
            .map(|i| hash_key(format!("key{i}").as_bytes()))
            .collect();
        let bytes = BloomPolicy::new(bits_per_key).create_filter_from_hashes(&hashes);
        assert_eq!(&bytes[0..4], b"BKVF");
        assert_eq!(
            (bytes[4], bytes[5], bytes[6]),
            (1, 0, 1),
            "version, kind, layout"
        );
        let k = u32::from(bytes[7]);
        assert!((1..=64).contains(&k));
        let m = u64::from_le_bytes(bytes[8..16].try_into().unwrap());
        assert!(m > 0 && m % 512 == 0);
        assert_eq!(
            u64::from_le_bytes(bytes[16..24].try_into().unwrap()),
            keys as u64
        );
        let payload_end = 24 + (m / 8) as usize;
        assert_eq!(bytes.len(), payload_end + 4);
        let crc = u32::from_le_bytes(bytes[payload_end..].try_into().unwrap());
        assert_eq!(crc, crc32fast::hash(&bytes[..payload_end]));
        // Exactly the documented bits are set, no others.
        let mut want = vec![0u8; (m / 8) as usize];
        for &h in &hashes {
            for p in documented_bits(h, m, k) {
                want[(p / 8) as usize] |= 1 << (p % 8);
            }
        }
        assert_eq!(
            &bytes[24..payload_end],
            &want[..],
            "{keys} keys at {bits_per_key} bits/key"
        );
    }
}

/// The `bloomkv.BinaryFuse8` and `bloomkv.Ribbon` filter blocks: every header field read
/// back at its documented offset from real filters, the payload length and checksum, and the
/// documented lookup, re-derived here from FORMAT.md alone, finding every key in the bytes
/// and agreeing with the policy on absent ones.
#[test]
fn static_filter_blocks_are_as_documented() {
    use crate::filter::{BinaryFusePolicy, RibbonPolicy};
    assert_doc_says("| 0 | 4 | magic `42 46 55 38` (`\"BFU8\"`) |");
    assert_doc_says("| 0 | 4 | magic `42 52 49 42` (`\"BRIB\"`) |");
    assert_doc_says("`p1 = (p0 + L) ^ ((x >> 18) & (L - 1))`");
    assert_doc_says("fingerprint `(x ^ (x >> 32)) & 0xff`");
    assert_doc_says("coefficients `c = mix64(x + 0x9e3779b97f4a7c15) | 1`");
    assert_doc_says("result `b = mix64(x ^ 0xd6e8feb86659fd93) & (2^r - 1)`");
    let le32 = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    let le64 = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let reduce = |x: u64, n: u64| ((u128::from(x) * u128::from(n)) >> 64) as u64;
    let checksummed = |b: &[u8], end: usize| {
        assert_eq!(b.len(), end + 4, "length");
        assert_eq!(le32(b, end), crc32fast::hash(&b[..end]), "crc");
    };
    let absent: Vec<u64> = (0..2000)
        .map(|i| hash_key(format!("absent{i}").as_bytes()))
        .collect();
    for keys in [0usize, 1, 100, 5000] {
        let hashes: Vec<u64> = (0..keys)
            .map(|i| hash_key(format!("key{i}").as_bytes()))
            .collect();

        let fuse = BinaryFusePolicy::new();
        let f = fuse.create_filter_from_hashes(&hashes);
        assert_eq!((&f[0..4], f[4], &f[5..8]), (&b"BFU8"[..], 1, &[0u8; 3][..]));
        let seed = le64(&f, 8);
        let log_l = le32(&f, 16);
        let segments = u64::from(le32(&f, 20));
        assert!(log_l <= 18 && segments >= 1, "{log_l} {segments}");
        assert_eq!(le64(&f, 24), keys as u64);
        let l = 1u64 << log_l;
        let end = 32 + ((segments + 2) * l) as usize;
        checksummed(&f, end);
        let fingerprints = &f[32..end];
        let documented = |h: u64| {
            if keys == 0 {
                return false;
            }
            let x = mix64(h ^ seed);
            let p0 = reduce(x, segments * l);
            let p1 = (p0 + l) ^ ((x >> 18) & (l - 1));
            let p2 = (p0 + 2 * l) ^ (x & (l - 1));
            let at = |p: u64| fingerprints[p as usize];
            at(p0) ^ at(p1) ^ at(p2) == ((x ^ (x >> 32)) & 0xff) as u8
        };
        assert!(hashes.iter().all(|&h| documented(h)), "fuse, {keys} keys");
        for &h in &absent {
            assert_eq!(
                documented(h),
                fuse.may_contain_hash(&f, h),
                "fuse, {keys} keys"
            );
        }

        for r in [1u32, 7, 13] {
            let ribbon = RibbonPolicy::with_result_bits(r);
            let f = ribbon.create_filter_from_hashes(&hashes);
            assert_eq!(
                (&f[0..4], f[4], f[5], &f[6..8]),
                (&b"BRIB"[..], 1, r as u8, &[0u8; 2][..])
            );
            let seed = le64(&f, 8);
            let m = le64(&f, 16);
            assert!(m >= 128 && m % 64 == 0, "{m}");
            assert_eq!(le64(&f, 24), keys as u64);
            let end = 32 + (m / 64 * u64::from(r) * 8) as usize;
            checksummed(&f, end);
            // Bit j of Z[slot]: word j of the slot's 64-slot block, bit slot % 64.
            let z_bit = |slot: u64, j: u32| {
                let word = 32 + 8 * ((slot / 64) * u64::from(r) + u64::from(j)) as usize;
                (le64(&f, word) >> (slot % 64)) & 1
            };
            let documented = |h: u64| {
                if keys == 0 {
                    return false;
                }
                let x = mix64(h ^ seed);
                let start = reduce(x, m - 63);
                let c = mix64(x.wrapping_add(0x9e3779b97f4a7c15)) | 1;
                let b = mix64(x ^ 0xd6e8feb86659fd93) & ((1u64 << r) - 1);
                (0..r).all(|j| {
                    let parity = (0..64)
                        .filter(|i| c >> i & 1 == 1)
                        .fold(0, |acc, i| acc ^ z_bit(start + i, j));
                    parity == (b >> j) & 1
                })
            };
            assert!(
                hashes.iter().all(|&h| documented(h)),
                "ribbon r {r}, {keys} keys"
            );
            for &h in &absent {
                assert_eq!(
                    documented(h),
                    ribbon.may_contain_hash(&f, h),
                    "ribbon r {r}, {keys} keys"
                );
            }
        }
    }
}

#[test]
fn table_footer_layout() {
    let file = MemWritableFile::new();
    let mut b = TableBuilder::new(
        Box::new(file.clone()),
        "000001.sst".into(),
        TableBuildOptions {
            filter: Some(Arc::new(BloomPolicy::new(10.0))),
            ..Default::default()
        },
    );
    b.add(&key::encode(b"k", 1, Kind::Put), b"v").unwrap();
    b.finish().unwrap();
    let bytes = file.contents();
    let footer = &bytes[bytes.len() - 56..];
    assert_eq!(&footer[40..44], &3u32.to_le_bytes());
    assert_eq!(
        &footer[44..48],
        &crc32fast::hash(&footer[..44]).to_le_bytes()
    );
    assert_doc_says("on disk `31 76 6b 6d 6f 6f 6c 62`");
    assert_eq!(&footer[48..56], &hex("31 76 6b 6d 6f 6f 6c 62")[..]);
    // And it opens, with its filter in use.
    let table = Table::open(
        Arc::new(MemRandomAccessFile::new(bytes, "000001.sst")),
        TableReadOptions {
            file_number: 1,
            filter: Some(Arc::new(BloomPolicy::new(10.0))),
            cache: None,
            counters: Arc::new(ReadCounters::default()),
        },
    )
    .unwrap();
    assert!(table.has_filter());
}

/// "Standalone filter files": the version-2 example, rebuilt, and the header offsets of every
/// kind read back from real filters.
#[test]
fn standalone_filter_files_are_as_documented() {
    use crate::filter::{BloomFilter, CountingBloomFilter, Layout, ScalableBloomFilter, math};
    assert_doc_says("filter format **version 2**");
    let mut f = BloomFilter::new(FilterSize::bits(64, 2).with_layout(Layout::Standard)).unwrap();
    f.insert("a");
    let example = hex(quoted_after("after `insert(\"a\")` is the 52 bytes\n"));
    assert_eq!(f.to_bytes(), example);
    assert_eq!(
        f.capacity(),
        (64.0 * std::f64::consts::LN_2 / 2.0).floor() as usize
    );
    assert_doc_says(&format!("error rate the model's {}", f.error_rate()));
    assert_eq!(
        f.error_rate(),
        math::standard_false_positive_rate(64, 22, 2)
    );

    let le64 = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let mut c = CountingBloomFilter::new(FilterSize::for_items(100, 0.02)).unwrap();
    c.insert("x");
    c.insert("x");
    let b = c.to_bytes();
    assert_eq!((&b[0..4], b[4], b[5], b[6]), (&b"BKVF"[..], 2, 1, 0));
    assert_eq!(u32::from(b[7]), c.num_hashes());
    assert_eq!(le64(&b, 8), c.bit_len());
    assert_eq!(le64(&b, 16), 2);
    assert_eq!(le64(&b, 24), 100);
    assert_eq!(f64::from_bits(le64(&b, 32)), 0.02);
    assert_eq!(b.len(), 40 + c.bit_len().div_ceil(2) as usize + 4);
    assert_eq!(
        u32::from_le_bytes(b[b.len() - 4..].try_into().unwrap()),
        crc32fast::hash(&b[..b.len() - 4])
    );

    let mut s = ScalableBloomFilter::with_growth(10, 0.01, 4, 0.5).unwrap();
    for i in 0..60u32 {
        s.insert(i.to_le_bytes());
    }
    let b = s.to_bytes();
    assert_eq!((b[4], b[5], b[6], b[7]), (2, 2, 0, 4));
    assert_eq!(le64(&b, 8), 10);
    assert_eq!(le64(&b, 16), s.len() as u64);
    assert_eq!(f64::from_bits(le64(&b, 24)), 0.01);
    assert_eq!(f64::from_bits(le64(&b, 32)), 0.5);
    let stages = u32::from_le_bytes(b[40..44].try_into().unwrap()) as usize;
    assert_eq!(stages, s.stages());
    let mut at = 44;
    for (i, stage) in s.stage_filters().iter().enumerate() {
        let len = le64(&b, at) as usize;
        let inner = &b[at + 8..at + 8 + len];
        assert_eq!(inner, stage.to_bytes());
        assert_eq!(stage.capacity(), 10 * 4usize.pow(i as u32));
        assert_eq!(
            stage.error_rate(),
            0.01 * (1.0 - 0.5) * 0.5f64.powi(i as i32)
        );
        at += 8 + len;
    }
    assert_eq!(at + 4, b.len());
    assert_eq!(
        u32::from_le_bytes(b[at..].try_into().unwrap()),
        crc32fast::hash(&b[..at])
    );
}

/// A compressed block is `varint32 raw_len | payload` with the codec byte and a crc over the
/// stored bytes in its trailer, exactly as FORMAT.md's example lays it out.
#[test]
fn compressed_block_layout() {
    assert_doc_says("`80 20` (`raw_len` 4096)");
    for (compression, codec) in [
        (crate::Compression::Lz4, CODEC_LZ4),
        (crate::Compression::Zstd { level: 3 }, CODEC_ZSTD),
    ] {
        let file = MemWritableFile::new();
        let mut b = TableBuilder::new(
            Box::new(file.clone()),
            "000001.sst".into(),
            TableBuildOptions {
                block_bytes: 4096,
                compression,
                ..Default::default()
            },
        );
        for i in 0..2000u32 {
            let k = format!("key{i:08}");
            b.add(&key::encode(k.as_bytes(), 1, Kind::Put), &[b'v'; 40])
                .unwrap();
        }
        let props = b.finish().unwrap();
        assert_eq!(props.compression, compression.name());
        assert!(props.data_bytes * 2 < props.data_raw_bytes);
        let bytes = file.contents();
        // The first data block starts at offset 0; its raw length leads it.
        let (raw_len, used) = crate::util::coding::get_varint32(&bytes).unwrap();
        assert!(raw_len >= 4096);
        // Find its end: the index's first handle names it; instead walk the trailer by its
        // crc, which must cover the stored bytes and the codec byte.
        let end = (used..bytes.len() - 5)
            .find(|&e| {
                bytes[e] == codec
                    && bytes[e + 1..e + 5] == block_crc(&bytes[..e], codec).to_le_bytes()
            })
            .unwrap();
        let raw = decompress_block(codec, bytes[..end].to_vec()).unwrap();
        assert_eq!(raw.len(), raw_len as usize);
        let h = BlockHandle {
            offset: 0,
            size: end as u64,
        };
        assert!(h.end_with_trailer().unwrap() < bytes.len() as u64);
    }
    let mut v = Vec::new();
    crate::util::coding::put_varint32(&mut v, 4096);
    assert_eq!(v, hex("80 20"));
}

/// "Range-deletion block": the example's bytes, and a table holding a tombstone names the
/// block in its metaindex, counts it in its properties and widens its key range as stated.
#[test]
fn range_deletion_block_is_as_documented() {
    use crate::range_del::{RangeTombstone, encode_block};
    let t = RangeTombstone {
        start: b"b".to_vec(),
        end: b"d".to_vec(),
        seq: 7,
    };
    let example = hex(quoted_after("at sequence 7 is the 13 bytes\n"));
    assert_eq!(example.len(), 13);
    assert_eq!(encode_block(std::slice::from_ref(&t)), example);

    let file = MemWritableFile::new();
    let mut b = TableBuilder::new(
        Box::new(file.clone()),
        "000002.sst".into(),
        TableBuildOptions::default(),
    );
    b.add(&key::encode(b"a", 3, Kind::Put), b"v").unwrap();
    // A tombstone cut after "b" (end "b" ++ 00) and one past the last entry.
    let cut = RangeTombstone {
        start: b"a".to_vec(),
        end: b"b\0".to_vec(),
        seq: 9,
    };
    b.set_range_tombstones(vec![cut.clone(), t.clone()])
        .unwrap();
    let props = b.finish().unwrap();
    assert_eq!(props.range_deletions, 2);
    assert_eq!(props.smallest_key, key::encode(b"a", 9, Kind::Delete));
    assert_eq!(props.largest_key, key::encode(b"d", 0, Kind::Delete));
    assert_eq!(cut.largest_key(), key::encode(b"b", 0, Kind::Delete));
    let bytes = file.contents();
    let needle = encode_block(&[cut, t]);
    assert!(bytes.windows(needle.len()).any(|w| w == needle.as_slice()));
    let table = Table::open(
        Arc::new(MemRandomAccessFile::new(bytes, "000002.sst")),
        TableReadOptions {
            file_number: 2,
            filter: None,
            cache: None,
            counters: Arc::new(ReadCounters::default()),
        },
    )
    .unwrap();
    assert_eq!(table.covering_range_delete(b"c", 100), Some(7));
    assert_eq!(table.covering_range_delete(b"a", 100), Some(9));
    assert_eq!(table.covering_range_delete(b"d", 100), None);
}
