//! Round trips through TableBuilder and Table: lookups, iteration, seeks, versions, filters.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::Error;
use crate::filter::{FilterPolicy, hash_key};
use crate::iter::InternalIterator;
use crate::sstable::cache::BlockCache;
use crate::sstable::{Compression, FilterVerdict, Table, TableBuildOptions};
use crate::test_util::InternalKey;
use crate::test_util::sstable::*;
use crate::util::key::{self, KIND_SEEK, Kind, MAX_SEQ};

/// 100k entries of mixed shapes, keyed by internal key. User keys are `k` + even numbers (odd
/// ones are the absent keys), plus one-byte keys; values empty, short, or 64 KiB.
fn dataset() -> BTreeMap<InternalKey, Vec<u8>> {
    let mut m = BTreeMap::new();
    let mut rng = crate::test_util::Rng::new(1);
    for i in 0..99_900u64 {
        let x = rng.next_u64();
        let uk = format!("k{:07}", i * 2).into_bytes();
        let value = match i % 10 {
            0 => Vec::new(),
            _ if i % 5000 == 1 => vec![(i % 251) as u8; 64 * 1024],
            _ => vec![(x % 256) as u8; (x % 200) as usize],
        };
        m.insert(InternalKey::new(&uk, i + 1, Kind::Put), value);
    }
    // One-byte user keys (sort before and after the "k..." keys), some of them deletions.
    for b in (0u8..50).chain(200..250) {
        let kind = if b % 3 == 0 { Kind::Delete } else { Kind::Put };
        let v = if kind == Kind::Delete {
            vec![]
        } else {
            vec![b]
        };
        m.insert(InternalKey::new(&[b], 200_000 + u64::from(b), kind), v);
    }
    m
}

fn policy() -> Option<Arc<dyn FilterPolicy>> {
    Some(Arc::new(ExactPolicy))
}

fn lookup(uk: &[u8], snapshot: u64) -> Vec<u8> {
    key::encode(uk, snapshot, KIND_SEEK)
}

#[test]
fn hundred_thousand_keys_round_trip() {
    let data = dataset();
    assert_eq!(data.len(), 100_000);
    let (bytes, props) = build(
        data.iter().map(|(k, v)| (k.0.clone(), v.clone())),
        TableBuildOptions {
            filter: policy(),
            ..Default::default()
        },
    );
    assert_eq!(props.entries, 100_000);
    assert_eq!(
        props.deletions,
        data.keys()
            .filter(|k| key::parse(&k.0).unwrap().kind == Kind::Delete)
            .count() as u64
    );
    assert_eq!(props.smallest_key, data.keys().next().unwrap().0);
    assert_eq!(props.largest_key, data.keys().last().unwrap().0);
    assert_eq!(props.filter_policy, "test.exact");
    assert!(props.data_blocks > 100);

    let cache = Arc::new(BlockCache::new(32 << 20));
    let opts = read_opts(policy(), Some(cache.clone()));
    let counters = opts.counters.clone();
    let table = open(bytes, opts).unwrap();
    assert_eq!(table.properties(), &props);
    assert!(table.has_filter());
    assert!(table.filter_memory() > 0);
    assert_eq!(table.expected_fp_rate(), Some(0.0));

    // Every key found with its value, kind and sequence number.
    for (k, v) in &data {
        let p = key::parse(&k.0).unwrap();
        let got = table
            .get(&lookup(p.user_key, MAX_SEQ), hash_key(p.user_key))
            .unwrap();
        assert_eq!(got.verdict, FilterVerdict::MayContain);
        assert_eq!(got.blocks_read + got.cache_hits, 1);
        let want = if p.kind == Kind::Delete {
            vec![]
        } else {
            v.clone()
        };
        assert_eq!(
            got.entry,
            Some((p.kind, p.seq, want)),
            "key {:?}",
            p.user_key
        );
    }
    // Absent keys inside the range: the exact filter says no, nothing is read.
    let before = counters.snapshot();
    for i in 0..99_900u64 {
        let uk = format!("k{:07}", i * 2 + 1).into_bytes();
        let got = table.get(&lookup(&uk, MAX_SEQ), hash_key(&uk)).unwrap();
        assert_eq!(got.entry, None);
        assert_eq!(got.verdict, FilterVerdict::Absent);
        assert_eq!(got.blocks_read + got.cache_hits, 0);
    }
    let after = counters.snapshot();
    assert_eq!(after.filter_useful - before.filter_useful, 99_900);
    assert_eq!(after.data_blocks_read, before.data_blocks_read);
    assert_eq!(after.filter_false_positives, 0);
    assert_eq!(table.filter_stats(), (after.filter_checks, 0));
    // Out of range: no filter check at all.
    for uk in [&b""[..], b"\xfa", b"\xff\xff"] {
        let got = table.get(&lookup(uk, MAX_SEQ), hash_key(uk)).unwrap();
        assert_eq!(got.verdict, FilterVerdict::OutOfRange);
    }
    assert_eq!(counters.snapshot().filter_checks, after.filter_checks);
    assert!(cache.usage() <= cache.capacity());
    assert!(counters.snapshot().block_cache_hits > 0);

    // Full iteration in order.
    let mut it = table.iter();
    it.seek_to_first().unwrap();
    let mut n = 0;
    for (k, v) in &data {
        assert!(it.valid());
        assert_eq!(it.key(), &k.0[..]);
        assert_eq!(it.value(), &v[..]);
        it.next().unwrap();
        n += 1;
    }
    assert!(!it.valid());
    assert_eq!(n, data.len());

    // Seek to every key (hits every block boundary) and to the gap just after every key.
    let keys: Vec<&InternalKey> = data.keys().collect();
    for (i, k) in keys.iter().enumerate() {
        it.seek(&k.0).unwrap();
        assert_eq!(it.key(), &k.0[..]);
        // Just after k: same user key, one sequence lower, lands on the next entry.
        let p = key::parse(&k.0).unwrap();
        it.seek(&key::encode(p.user_key, p.seq - 1, KIND_SEEK))
            .unwrap();
        match keys.get(i + 1) {
            Some(next) => assert_eq!(it.key(), &next.0[..]),
            None => assert!(!it.valid()),
        }
    }
    // Before first, between user keys (absent user key), after last.
    it.seek(&lookup(b"", MAX_SEQ)).unwrap();
    assert_eq!(it.key(), &keys[0].0[..]);
    let between = b"k0000001";
    it.seek(&lookup(between, MAX_SEQ)).unwrap();
    assert_eq!(key::user_key(it.key()), b"k0000002");
    it.seek(&lookup(b"\xff\xff\xff", MAX_SEQ)).unwrap();
    assert!(!it.valid());
}

/// Several versions per user key, small blocks so versions straddle block boundaries; every
/// snapshot sees the newest version at or below it.
#[test]
fn versions_and_snapshots() {
    type Versions = Vec<(u64, Kind, Vec<u8>)>;
    let mut model: BTreeMap<Vec<u8>, Versions> = BTreeMap::new();
    let mut entries = BTreeMap::new();
    let mut seq = 1;
    for round in 0..6u64 {
        for u in 0..200u64 {
            if (u + round) % 3 == 0 {
                continue;
            }
            let uk = format!("user{u:04}").into_bytes();
            let kind = if (u * round) % 7 == 3 {
                Kind::Delete
            } else {
                Kind::Put
            };
            let v = if kind == Kind::Put {
                format!("v{u}.{round}").into_bytes()
            } else {
                vec![]
            };
            entries.insert(InternalKey::new(&uk, seq, kind), v.clone());
            model.entry(uk).or_default().push((seq, kind, v));
            seq += 1;
        }
    }
    // Each shape once per codec, in turn (tiny blocks stay raw, bigger ones compress).
    let codecs = [
        Compression::None,
        Compression::Lz4,
        Compression::Zstd { level: 3 },
    ];
    let mut turn = 0;
    for restart in [1, 2, 16] {
        for block_bytes in [1, 60, 200, 4096] {
            turn += 1;
            let (bytes, _) = build(
                entries.iter().map(|(k, v)| (k.0.clone(), v.clone())),
                TableBuildOptions {
                    block_bytes,
                    restart_interval: restart,
                    filter: policy(),
                    compression: codecs[turn % 3],
                    file_number: None,
                    prefix_extractor: None,
                },
            );
            let opts = read_opts(policy(), None);
            let counters = opts.counters.clone();
            let table = open(bytes, opts).unwrap();
            for (uk, versions) in &model {
                // Every snapshot that matters: each version's seq and its neighbours.
                let mut snaps = vec![0, seq, MAX_SEQ];
                for (s, _, _) in versions {
                    snaps.extend([s - 1, *s, s + 1]);
                }
                for snap in snaps {
                    let want = versions
                        .iter()
                        .filter(|(s, _, _)| *s <= snap)
                        .max_by_key(|(s, _, _)| *s)
                        .map(|(s, k, v)| (*k, *s, v.clone()));
                    let got = table.get(&lookup(uk, snap), hash_key(uk)).unwrap();
                    assert_eq!(got.entry, want, "{uk:?} at {snap}, block {block_bytes}");
                }
            }
            // Lookups older than every version found nothing, but the filter was right:
            // the user key is in the table, so no false positive is counted.
            assert_eq!(counters.snapshot().filter_false_positives, 0);
            assert_eq!(table.filter_stats().1, 0);
        }
    }
}

#[test]
fn builder_rejects_bad_keys() {
    let mut b = crate::sstable::TableBuilder::new(
        Box::new(MemWritableFile::new()),
        TEST_PATH.into(),
        TableBuildOptions::default(),
    );
    b.add(&key::encode(b"b", 5, Kind::Put), b"x").unwrap();
    for bad in [
        key::encode(b"a", 9, Kind::Put), // smaller user key
        key::encode(b"b", 5, Kind::Put), // duplicate
        key::encode(b"b", 6, Kind::Put), // newer version after older: out of order
        b"short".to_vec(),               // no trailer
    ] {
        assert!(
            matches!(b.add(&bad, b"y"), Err(Error::InvalidArgument(_))),
            "{bad:?}"
        );
    }
    let mut bad_kind = key::encode(b"c", 1, Kind::Put);
    bad_kind[1] = 9;
    assert!(matches!(
        b.add(&bad_kind, b""),
        Err(Error::InvalidArgument(_))
    ));
    b.add(&key::encode(b"b", 4, Kind::Delete), b"").unwrap();
    assert_eq!(b.num_entries(), 2);
    assert!(b.estimated_file_size() > 0);
    let props = b.finish().unwrap();
    assert_eq!((props.entries, props.deletions), (2, 1));
}

fn small_table(filter: Option<Arc<dyn FilterPolicy>>) -> Vec<u8> {
    let entries = (0..500u32).map(|i| {
        (
            key::encode(format!("key{i:05}").as_bytes(), 7, Kind::Put),
            format!("value{i}").into_bytes(),
        )
    });
    build(
        entries,
        TableBuildOptions {
            filter,
            ..Default::default()
        },
    )
    .0
}

fn get(table: &Table, uk: &[u8]) -> crate::sstable::TableGet {
    table.get(&lookup(uk, MAX_SEQ), hash_key(uk)).unwrap()
}

#[test]
fn filter_is_trusted_only_for_absence_and_only_when_named() {
    // A filter that always says "absent": get skips the data block (so a present key is not
    // found — proving the block read really is skipped), iteration still sees everything.
    let table = open(
        small_table(Some(Arc::new(NeverPolicy))),
        read_opts(Some(Arc::new(NeverPolicy)), None),
    )
    .unwrap();
    let g = get(&table, b"key00010");
    assert_eq!(
        (g.verdict, g.blocks_read, g.entry),
        (FilterVerdict::Absent, 0, None)
    );
    let mut it = table.iter();
    it.seek_to_first().unwrap();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next().unwrap();
    }
    assert_eq!(n, 500);

    // The reader's policy has another name: the filter is ignored, keys are found.
    let table = open(
        small_table(Some(Arc::new(NeverPolicy))),
        read_opts(Some(Arc::new(ExactPolicy)), None),
    )
    .unwrap();
    assert!(!table.has_filter());
    let g = get(&table, b"key00010");
    assert_eq!(g.verdict, FilterVerdict::NoFilter);
    assert_eq!(g.entry.unwrap().2, b"value10");

    // No policy at read time, and no filter written.
    for (w, r) in [
        (Some(Arc::new(ExactPolicy) as Arc<dyn FilterPolicy>), None),
        (None, Some(Arc::new(ExactPolicy) as Arc<dyn FilterPolicy>)),
    ] {
        let opts = read_opts(r, None);
        let counters = opts.counters.clone();
        let table = open(small_table(w), opts).unwrap();
        assert_eq!(get(&table, b"key00499").verdict, FilterVerdict::NoFilter);
        assert_eq!(counters.snapshot().filter_unavailable, 0);
        assert_eq!(table.expected_fp_rate(), None);
    }

    // Same name, but check_filter rejects the bytes: read without filter, counted.
    let opts = read_opts(Some(Arc::new(RejectingExactPolicy)), None);
    let counters = opts.counters.clone();
    let table = open(small_table(Some(Arc::new(ExactPolicy))), opts).unwrap();
    assert!(!table.has_filter());
    assert_eq!(counters.snapshot().filter_unavailable, 1);
    let g = get(&table, b"key00123");
    assert_eq!(
        (g.verdict, g.entry.unwrap().2),
        (FilterVerdict::NoFilter, b"value123".to_vec())
    );
}

#[test]
fn counters_track_reads_and_cache_hits() {
    let cache = Arc::new(BlockCache::new(1 << 20));
    let opts = read_opts(None, Some(cache.clone()));
    let counters = opts.counters.clone();
    let table = open(small_table(None), opts).unwrap();
    let g1 = get(&table, b"key00001");
    let g2 = get(&table, b"key00002");
    assert_eq!((g1.blocks_read, g1.cache_hits), (1, 0));
    assert_eq!((g2.blocks_read, g2.cache_hits), (0, 1));
    let s = counters.snapshot();
    assert_eq!((s.data_blocks_read, s.block_cache_hits), (1, 1));
    assert!(s.bytes_read > 0 && s.bytes_read <= table.properties().file_size);
    assert!(cache.usage() > 0);
    // Absent key inside the range without a filter: one block consulted, nothing found.
    let g = get(&table, b"key00001x");
    assert_eq!((g.verdict, g.entry), (FilterVerdict::NoFilter, None));
    assert!(matches!(
        table.get(b"short", 0),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn empty_table() {
    let (bytes, props) = build(
        std::iter::empty(),
        TableBuildOptions {
            filter: policy(),
            ..Default::default()
        },
    );
    assert_eq!((props.entries, props.data_blocks), (0, 0));
    let table = open(bytes, read_opts(policy(), None)).unwrap();
    assert_eq!(get(&table, b"x").verdict, FilterVerdict::OutOfRange);
    let mut it = table.iter();
    it.seek_to_first().unwrap();
    assert!(!it.valid());
    it.seek(&lookup(b"x", 1)).unwrap();
    assert!(!it.valid());
}

#[test]
fn real_files_and_threads() {
    let dir = tempfile::tempdir().unwrap();
    let env = crate::env::StdEnv;
    use crate::env::Env;
    let path = dir.path().join(crate::sstable::table_file_name(7));
    assert!(path.ends_with("000007.sst"));
    let mut b = crate::sstable::TableBuilder::new(
        env.create_writable(&path).unwrap(),
        path.clone(),
        TableBuildOptions {
            filter: policy(),
            ..Default::default()
        },
    );
    for i in 0..20_000u32 {
        b.add(
            &key::encode(format!("{i:08}").as_bytes(), 1, Kind::Put),
            &i.to_le_bytes(),
        )
        .unwrap();
    }
    let props = b.finish().unwrap();
    assert_eq!(props.file_size, env.file_size(&path).unwrap());
    let mut opts = read_opts(policy(), Some(Arc::new(BlockCache::new(256 << 10))));
    opts.file_number = 7;
    let table = Arc::new(Table::open(env.open_random_access(&path).unwrap(), opts).unwrap());
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let table = table.clone();
            s.spawn(move || {
                for i in (t..20_000).step_by(4) {
                    let uk = format!("{i:08}");
                    let g = table
                        .get(&lookup(uk.as_bytes(), 5), hash_key(uk.as_bytes()))
                        .unwrap();
                    assert_eq!(g.entry.unwrap().2, i.to_le_bytes());
                }
            });
        }
    });
}

#[test]
fn shared_types_are_thread_safe() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Table>();
    send_sync::<BlockCache>();
    send_sync::<crate::sstable::ReadCounters>();
    send::<crate::sstable::TableIter>();
    send::<crate::sstable::TableBuilder>();
}
