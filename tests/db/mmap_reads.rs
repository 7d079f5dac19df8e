//! `Options::mmap_reads`: tables are read through memory maps (seen in /proc/self/maps) and
//! give the same answers as `pread`: against a model across flushes, compactions, deletes
//! and a reopen; a flipped byte is a `Corruption` naming the file; an iterator keeps reading
//! the tables a compaction replaced, whose files go once it lets go.

use std::path::Path;

use bloomkv::{Db, Error, Options};

use crate::common::{self, Model, Rng, w1_key, w1_value};

fn options() -> Options {
    Options {
        mmap_reads: true,
        ..common::small_options()
    }
}

/// Whether this process maps any `.sst` file of `dir` (Linux only; elsewhere `true`).
fn maps_a_table_of(dir: &Path) -> bool {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return true;
    };
    let dir = dir.canonicalize().unwrap();
    maps.lines()
        .any(|l| l.contains(dir.to_str().unwrap()) && l.ends_with(".sst"))
}

#[test]
fn answers_match_the_model_through_memory_maps() {
    let mut m = Model::open(options());
    let mut rng = Rng::new(7);
    for round in 0..4u32 {
        for _ in 0..6000 {
            let i = rng.below(20_000);
            if rng.below(8) == 0 {
                m.delete(w1_key(i));
            } else {
                m.put(w1_key(i), w1_value(i, round));
            }
        }
        m.db().flush().unwrap();
    }
    m.db().wait_for_compactions().unwrap();
    let keys: Vec<_> = (0..20_000).map(w1_key).collect();
    m.check_all(keys.clone());
    assert!(
        m.db().stats().levels.iter().any(|l| l.files > 0),
        "the reads above went to tables"
    );
    m.reopen();
    m.check_all(keys);
}

#[test]
fn tables_are_mapped_only_when_asked() {
    for mmap_reads in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(
            dir.path(),
            Options {
                mmap_reads,
                ..common::small_options()
            },
        )
        .unwrap();
        for i in 0..2000 {
            db.put(w1_key(i), w1_value(i, 0)).unwrap();
        }
        db.flush().unwrap();
        assert!(db.get(w1_key(5)).unwrap().is_some());
        if std::fs::metadata("/proc/self/maps").is_ok() {
            assert_eq!(maps_a_table_of(dir.path()), mmap_reads);
        }
    }
}

#[test]
fn a_flipped_byte_is_corruption_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        block_cache_bytes: 0,
        ..options()
    };
    {
        let db = Db::open(dir.path(), opts.clone()).unwrap();
        for i in 0..2000 {
            db.put(w1_key(i), w1_value(i, 0)).unwrap();
        }
        db.flush().unwrap();
    }
    let table = common::sst_files(dir.path()).into_iter().next().unwrap();
    let path = dir.path().join(bloomkv::sstable::table_file_name(table));
    // The database is closed: nothing maps the file while it changes.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[20] ^= 0x10; // inside the first data block
    std::fs::write(&path, bytes).unwrap();
    let db = Db::open(dir.path(), opts).unwrap();
    let mut corrupt = 0;
    for i in 0..2000 {
        match db.get(w1_key(i)) {
            Ok(v) => assert_eq!(v, Some(w1_value(i, 0))),
            Err(Error::Corruption { file, .. }) => {
                assert_eq!(file, path);
                corrupt += 1;
            }
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    assert!(corrupt > 0, "some key lives in the damaged block");
}

#[test]
fn an_iterator_reads_tables_a_compaction_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    for round in 0..2u32 {
        for i in 0..5000 {
            db.put(w1_key(i), w1_value(i, round)).unwrap();
        }
        db.flush().unwrap();
    }
    let before = common::sst_files(dir.path());
    let mut it = db.scan(..);
    let first = it.next().unwrap().unwrap();
    db.compact().unwrap();
    let live: std::collections::BTreeSet<u64> = db.live_files().into_iter().collect();
    assert!(
        before.iter().any(|t| !live.contains(t)),
        "the compaction replaced tables the iterator holds"
    );
    let want: std::collections::BTreeMap<_, _> =
        (0..5000).map(|i| (w1_key(i), w1_value(i, 1))).collect();
    assert_eq!(Some(&first.1), want.get(&first.0));
    let rest: Vec<_> = it.map(|kv| kv.unwrap()).collect();
    let want_rest: Vec<_> = want
        .range(first.0.clone()..)
        .skip(1)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(rest, want_rest);
    // Once the iterator lets go, the replaced tables' files go (and their mappings with them).
    assert_eq!(common::sst_files(dir.path()), live);
}
