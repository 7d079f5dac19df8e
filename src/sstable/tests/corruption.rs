//! Damaged tables: every outcome is a typed error or a correct answer, never a panic or a
//! wrong value; a damaged filter only costs the filter.

use std::path::Path;
use std::sync::Arc;

use crate::error::Error;
use crate::filter::{FilterPolicy, hash_key};
use crate::iter::InternalIterator;
use crate::sstable::format::BlockHandle;
use crate::sstable::{Table, TableBuildOptions, TableProperties};
use crate::test_util::sstable::*;
use crate::util::key::{self, KIND_SEEK, Kind, MAX_SEQ};

const N: u32 = 3000;

fn entries() -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..N)
        .map(|i| {
            let kind = if i % 11 == 0 { Kind::Delete } else { Kind::Put };
            let v = if kind == Kind::Put {
                format!("value-{i}-{}", "x".repeat((i % 40) as usize)).into_bytes()
            } else {
                vec![]
            };
            (
                key::encode(
                    format!("key{:06}", i * 2).as_bytes(),
                    u64::from(i) + 1,
                    kind,
                ),
                v,
            )
        })
        .collect()
}

fn policy() -> Option<Arc<dyn FilterPolicy>> {
    Some(Arc::new(ExactPolicy))
}

fn good_table() -> Vec<u8> {
    build(
        entries(),
        TableBuildOptions {
            block_bytes: 512,
            filter: policy(),
            ..Default::default()
        },
    )
    .0
}

fn check_error(e: &Error, file_len: usize) {
    match e {
        Error::Corruption { file, offset, .. } => {
            // In memory the file is `TEST_PATH`; mapped, a file of that name in a directory.
            assert!(file.ends_with(Path::new(TEST_PATH)), "{e}");
            assert!(*offset <= file_len as u64, "{e}");
        }
        Error::UnsupportedVersion { .. } => {}
        other => panic!("unexpected error kind: {other}"),
    }
}

/// Everything the table answers must be right or an error.
fn check_answers(table: &Arc<Table>, file_len: usize) {
    let want = entries();
    for (k, v) in &want {
        let p = key::parse(k).unwrap();
        match table.get(
            &key::encode(p.user_key, MAX_SEQ, KIND_SEEK),
            hash_key(p.user_key),
        ) {
            Ok(g) => assert_eq!(
                g.entry,
                Some((p.kind, p.seq, v.clone())),
                "{:?}",
                p.user_key
            ),
            Err(e) => check_error(&e, file_len),
        }
    }
    for i in (0..N).step_by(7) {
        let uk = format!("key{:06}", i * 2 + 1);
        match table.get(
            &key::encode(uk.as_bytes(), MAX_SEQ, KIND_SEEK),
            hash_key(uk.as_bytes()),
        ) {
            Ok(g) => assert_eq!(g.entry, None),
            Err(e) => check_error(&e, file_len),
        }
    }
    let mut it = table.iter();
    let mut res = it.seek_to_first();
    let mut n = 0;
    while res.is_ok() && it.valid() {
        assert_eq!((it.key(), it.value()), (&want[n].0[..], &want[n].1[..]));
        n += 1;
        res = it.next();
    }
    match res {
        Ok(()) => assert_eq!(n, want.len()),
        Err(e) => check_error(&e, file_len),
    }
}

/// Flips one byte at each of `positions` and checks the outcome. Returns how many flips
/// made `open` fail.
fn flip_each(bytes: &[u8], positions: impl Iterator<Item = u64>, filter_region: bool) -> usize {
    flip_each_with(bytes, positions, filter_region, false)
}

/// [`flip_each`], the table read from memory or (`mapped`) from a memory-mapped file.
fn flip_each_with(
    bytes: &[u8],
    positions: impl Iterator<Item = u64>,
    filter_region: bool,
    mapped: bool,
) -> usize {
    let mut open_errors = 0;
    for pos in positions {
        let mut b = bytes.to_vec();
        b[pos as usize] ^= 0x5a;
        let opts = read_opts(policy(), None);
        let counters = opts.counters.clone();
        let (table, _dir) = if mapped {
            let (t, dir) = open_mapped(b, opts);
            (t, Some(dir))
        } else {
            (open(b, opts), None)
        };
        match table {
            Err(e) => {
                assert!(!filter_region, "filter damage at {pos} failed open: {e}");
                check_error(&e, bytes.len());
                open_errors += 1;
            }
            Ok(table) => {
                if filter_region {
                    assert!(!table.has_filter(), "flip at {pos}");
                    assert_eq!(counters.snapshot().filter_unavailable, 1);
                }
                check_answers(&table, bytes.len());
            }
        }
    }
    open_errors
}

fn range(h: BlockHandle) -> std::ops::Range<u64> {
    h.offset..h.offset + h.size + 5
}

#[test]
fn intact_table_is_sane() {
    let bytes = good_table();
    let l = layout(&bytes);
    assert!(l.data.len() > 20);
    check_answers(&open(bytes, read_opts(policy(), None)).unwrap(), 0);
}

#[test]
fn flipped_data_bytes() {
    let bytes = good_table();
    let l = layout(&bytes);
    let end = l.data.last().map(|h| range(*h).end).unwrap();
    // Data damage is found lazily: open succeeds, reads of the damaged block fail.
    assert_eq!(flip_each(&bytes, (0..end).step_by(331), false), 0);
}

#[test]
fn flipped_data_bytes_read_in_place_from_a_mapping() {
    let bytes = good_table();
    let l = layout(&bytes);
    let end = l.data.last().map(|h| range(*h).end).unwrap();
    assert_eq!(
        flip_each_with(&bytes, (0..end).step_by(997), false, true),
        0
    );
}

#[test]
fn flipped_filter_bytes_only_cost_the_filter() {
    let bytes = good_table();
    let l = layout(&bytes);
    let f = l.filter.unwrap();
    let r = range(f);
    // A sample of the contents, and every byte of the trailer.
    flip_each(&bytes, r.clone().step_by(211).chain(r.end - 5..r.end), true);
}

#[test]
fn flipped_metadata_bytes() {
    let bytes = good_table();
    let l = layout(&bytes);
    for (name, r) in [
        ("properties", range(l.properties)),
        ("metaindex", range(l.metaindex)),
        ("index", range(l.index)),
        ("footer", l.footer_at..bytes.len() as u64),
    ] {
        let n = r.clone().count();
        let errors = flip_each(&bytes, r, false);
        // Every byte of these regions is checksummed: each flip is caught at open.
        assert_eq!(errors, n, "{name}: {errors} of {n} flips failed open");
    }
}

#[test]
fn truncated_files_fail_open() {
    let bytes = good_table();
    for len in (0..bytes.len())
        .step_by(101)
        .chain(bytes.len() - 60..bytes.len())
    {
        let e = open(bytes[..len].to_vec(), read_opts(policy(), None)).unwrap_err();
        check_error(&e, len);
    }
}

fn props(entries: u64, blocks: u64, smallest: &[u8], largest: &[u8]) -> TableProperties {
    TableProperties {
        format_version: bloomkv::sstable::format::FORMAT_VERSION,
        entries,
        deletions: 0,
        smallest_key: smallest.to_vec(),
        largest_key: largest.to_vec(),
        raw_key_bytes: 0,
        raw_value_bytes: 0,
        data_blocks: blocks,
        filter_policy: String::new(),
        filter_bits_per_key: 0.0,
        filter_bytes: 0,
        file_size: 0,
        compression: "none".into(),
        data_raw_bytes: 0,
        data_bytes: 0,
        file_number: None,
        range_deletions: 0,
        prefix_extractor: String::new(),
    }
}

fn ik(u: &str, seq: u64) -> Vec<u8> {
    key::encode(u.as_bytes(), seq, Kind::Put)
}

#[test]
fn unsorted_keys_in_a_checksummed_block_are_corruption() {
    let entries = vec![
        (ik("a", 1), b"1".to_vec()),
        (ik("c", 1), b"3".to_vec()),
        (ik("b", 1), b"2".to_vec()),
    ];
    let bytes = assemble(
        &[(ik("z", 0), entries)],
        &props(3, 1, &ik("a", 1), &ik("c", 1)),
    );
    let len = bytes.len();
    for mapped in [false, true] {
        let (table, _dir) = if mapped {
            let (t, dir) = open_mapped(bytes.clone(), read_opts(None, None));
            (t.unwrap(), Some(dir))
        } else {
            (open(bytes.clone(), read_opts(None, None)).unwrap(), None)
        };
        // The whole block is verified when it is read, so the first touch already fails.
        let mut it = table.iter();
        let e = it.seek_to_first().unwrap_err();
        assert!(e.is_corruption());
        check_error(&e, len);
        assert!(!it.valid());
        // A block that failed its verification is never taken as verified: every read of it
        // fails again (a read of a verified block skips the whole-block decode).
        for _ in 0..2 {
            let e = table
                .get(&key::encode(b"b", MAX_SEQ, KIND_SEEK), hash_key(b"b"))
                .unwrap_err();
            assert!(e.is_corruption(), "{e}");
        }
    }
}

#[test]
fn keys_out_of_order_across_blocks_are_corruption() {
    let b1 = vec![(ik("m", 1), b"1".to_vec())];
    let b2 = vec![(ik("c", 1), b"2".to_vec())];
    let bytes = assemble(
        &[(ik("m", 1), b1), (ik("z", 0), b2)],
        &props(2, 2, &ik("c", 1), &ik("m", 1)),
    );
    let table = open(bytes, read_opts(None, None)).unwrap();
    let mut it = table.iter();
    it.seek_to_first().unwrap();
    let e = it.next().unwrap_err();
    assert!(e.is_corruption(), "{e}");
    assert!(!it.valid());
}

#[test]
fn inconsistent_metadata_is_corruption() {
    let b = vec![(ik("a", 1), b"1".to_vec())];
    // Index separators out of order.
    let bytes = assemble(
        &[(ik("z", 0), b.clone()), (ik("b", 0), b.clone())],
        &props(2, 2, &ik("a", 1), &ik("a", 1)),
    );
    assert!(
        open(bytes, read_opts(None, None))
            .unwrap_err()
            .is_corruption()
    );
    // Block count disagrees with the properties.
    let bytes = assemble(
        &[(ik("z", 0), b.clone())],
        &props(1, 2, &ik("a", 1), &ik("a", 1)),
    );
    assert!(
        open(bytes, read_opts(None, None))
            .unwrap_err()
            .is_corruption()
    );
    // smallest > largest.
    let bytes = assemble(
        &[(ik("z", 0), b.clone())],
        &props(1, 1, &ik("q", 1), &ik("a", 1)),
    );
    assert!(
        open(bytes, read_opts(None, None))
            .unwrap_err()
            .is_corruption()
    );
}

#[test]
fn huge_handle_sizes_are_rejected_before_reading() {
    use crate::sstable::block::{BlockBuilder, BlockIter};
    use crate::sstable::format::{Footer, PLAIN_FORMAT_VERSION, block_trailer};
    // Rebuild the index with one enormous (but checksummed) handle: the reader must refuse
    // it by its own bounds check, naming the index entry, before reading or allocating.
    let bytes = good_table();
    let l = layout(&bytes);
    for bad_size in [1u64 << 60, u64::MAX, bytes.len() as u64] {
        let idx = l.index;
        let old = crate::sstable::block::Block::new(
            bytes[idx.offset as usize..(idx.offset + idx.size) as usize].to_vec(),
        )
        .unwrap();
        let mut it = BlockIter::new(Arc::new(old), key::compare);
        let mut index = BlockBuilder::new(1);
        it.seek_to_first().unwrap();
        let mut first = true;
        while it.valid() {
            let mut h = BlockHandle::decode_exact(it.value()).unwrap();
            if std::mem::take(&mut first) {
                h.size = bad_size;
            }
            index.add(it.key(), &h.encode());
            it.advance().unwrap();
        }
        let mut out = bytes[..idx.offset as usize].to_vec();
        let contents = index.finish();
        out.extend_from_slice(&contents);
        out.extend_from_slice(&block_trailer(&contents, 0));
        let new_index = BlockHandle {
            offset: idx.offset,
            size: contents.len() as u64,
        };
        out.extend_from_slice(
            &Footer {
                metaindex: l.metaindex,
                index: new_index,
                format_version: PLAIN_FORMAT_VERSION,
            }
            .encode(),
        );
        let e = open(out, read_opts(policy(), None)).unwrap_err();
        let Error::Corruption { offset, why, .. } = &e else {
            panic!("{e}")
        };
        assert!(
            *offset >= idx.offset && *offset < idx.offset + contents.len() as u64,
            "{e}"
        );
        assert!(why.contains("runs past"), "{e}");
    }
}

/// Damage inside the filter bytes that the block checksum does not see (checksum recomputed):
/// the Bloom policy's own validation rejects it, and the table answers correctly without it.
#[test]
fn bloom_filter_damage_behind_a_valid_block_checksum() {
    use crate::filter::BloomPolicy;
    let bloom = || Some(Arc::new(BloomPolicy::new(10.0)) as Arc<dyn FilterPolicy>);
    let (bytes, props) = build(
        entries(),
        TableBuildOptions {
            block_bytes: 512,
            filter: bloom(),
            ..Default::default()
        },
    );
    assert_eq!(props.filter_policy, BloomPolicy::NAME);
    let f = layout(&bytes).filter.unwrap();
    let mut rejected = 0;
    for at in (f.offset..f.offset + f.size)
        .step_by(173)
        .chain([f.offset, f.offset + f.size - 1])
    {
        let mut b = bytes.clone();
        b[at as usize] ^= 0x21;
        fix_crc(&mut b, f);
        let opts = read_opts(bloom(), None);
        let counters = opts.counters.clone();
        let table = open(b, opts).unwrap();
        if !table.has_filter() {
            rejected += 1;
            assert_eq!(counters.snapshot().filter_unavailable, 1);
        }
        check_answers(&table, bytes.len());
    }
    assert!(
        rejected > 0,
        "the policy's own checksum should reject damaged filters"
    );
}
