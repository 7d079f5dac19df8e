//! Puts compacted where nothing deeper holds their key, older than every snapshot, are
//! stored with sequence number 0; versions a snapshot still tells apart keep theirs.

use std::path::Path;
use std::sync::Arc;

use crate::env::{Env, StdEnv};
use crate::iter::InternalIterator;
use crate::util::key;
use crate::sstable::{ReadCounters, Table, TableReadOptions};
use crate::{Compression, Db, Options};

fn options() -> Options {
    Options {
        compression: Compression::None,
        memtable_bytes: 64 << 10,
        target_file_bytes: 64 << 10,
        ..Default::default()
    }
}

/// `(user key, seq)` of every entry of every live table.
fn stored(db: &Db, dir: &Path) -> Vec<(Vec<u8>, u64)> {
    let mut out = Vec::new();
    for number in db.live_files() {
        let path = crate::util::filename::table_path(dir, number);
        let table = Arc::new(
            Table::open(
                StdEnv.open_random_access(&path).unwrap(),
                TableReadOptions {
                    file_number: number,
                    filter: None,
                    cache: None,
                    counters: Arc::new(ReadCounters::default()),
                },
            )
            .unwrap(),
        );
        let mut it = table.iter();
        it.seek_to_first().unwrap();
        while it.valid() {
            let p = key::parse(it.key()).unwrap();
            out.push((p.user_key.to_vec(), p.seq));
            it.next().unwrap();
        }
    }
    out.sort();
    out
}

#[test]
fn a_full_compaction_without_snapshots_zeroes_every_sequence_number() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    for i in 0..3000u32 {
        db.put(format!("k{i:05}"), [b'v'; 50]).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(..).unwrap();
    let entries = stored(&db, dir.path());
    assert_eq!(entries.len(), 3000);
    assert!(
        entries.iter().all(|(_, seq)| *seq == 0),
        "{:?}",
        &entries[..3]
    );
    drop(db);
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(db.get("k00042").unwrap().as_deref(), Some(&[b'v'; 50][..]));
    // A later write of a zeroed key is newer, and wins.
    db.put("k00042", "new").unwrap();
    db.flush().unwrap();
    db.compact_range(..).unwrap();
    assert_eq!(db.get("k00042").unwrap().as_deref(), Some(&b"new"[..]));
}

#[test]
fn versions_a_snapshot_tells_apart_keep_their_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    for i in 0..100u32 {
        db.put(format!("k{i:03}"), "old").unwrap();
    }
    let snap = db.snapshot();
    for i in 0..50u32 {
        db.put(format!("k{i:03}"), "new").unwrap();
    }
    db.flush().unwrap();
    db.compact_range(..).unwrap();
    let entries = stored(&db, dir.path());
    // k000..k049: the new version (above the snapshot) keeps its number, the old one the
    // snapshot reads is older than every snapshot: 0. k050..k099: one version, 0.
    assert_eq!(entries.len(), 150);
    for (k, seq) in &entries {
        let i: u32 = std::str::from_utf8(&k[1..]).unwrap().parse().unwrap();
        let versions = entries.iter().filter(|(k2, _)| k2 == k).count();
        if i < 50 {
            assert_eq!(versions, 2);
        } else {
            assert_eq!((versions, *seq), (1, 0));
        }
    }
    assert_eq!(
        entries.iter().filter(|(_, s)| *s != 0).count(),
        50,
        "only the versions newer than the snapshot keep a number"
    );
    assert_eq!(snap.get("k007").unwrap().as_deref(), Some(&b"old"[..]));
    assert_eq!(db.get("k007").unwrap().as_deref(), Some(&b"new"[..]));
    drop(snap);
    db.compact_range(..).unwrap();
    let entries = stored(&db, dir.path());
    assert_eq!(entries.len(), 100);
    assert!(entries.iter().all(|(_, seq)| *seq == 0));
    assert_eq!(db.get("k007").unwrap().as_deref(), Some(&b"new"[..]));
}
