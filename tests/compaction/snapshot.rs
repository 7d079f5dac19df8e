//! Snapshots across compaction: a snapshot taken before overwrites and deletes reads the old
//! values after compactions have rewritten every table; once it is released, a compaction
//! drops the versions only it could read.

use bloomkv::Db;

use crate::common::{small_options, w1_key, w1_value};

const N: u64 = 20_000;

#[test]
fn snapshot_reads_old_values_after_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small_options()).unwrap();
    for i in 0..N {
        db.put(w1_key(i), w1_value(i, 0)).unwrap();
    }
    let snap0 = db.snapshot();
    for i in 0..N {
        if i.is_multiple_of(3) {
            db.delete(w1_key(i)).unwrap();
        } else {
            db.put(w1_key(i), w1_value(i, 1)).unwrap();
        }
    }
    let snap1 = db.snapshot();
    for i in (0..N).filter(|i| i.is_multiple_of(2)) {
        db.put(w1_key(i), w1_value(i, 2)).unwrap();
    }
    db.compact().unwrap();
    db.wait_for_compactions().unwrap();
    assert_eq!(db.stats().levels[0].files, 0);

    let now = |i: u64| {
        if i.is_multiple_of(2) {
            Some(w1_value(i, 2))
        } else if i.is_multiple_of(3) {
            None
        } else {
            Some(w1_value(i, 1))
        }
    };
    let at1 = |i: u64| (!i.is_multiple_of(3)).then(|| w1_value(i, 1));
    for i in 0..N {
        assert_eq!(
            snap0.get(w1_key(i)).unwrap(),
            Some(w1_value(i, 0)),
            "snap0 {i}"
        );
        assert_eq!(snap1.get(w1_key(i)).unwrap(), at1(i), "snap1 {i}");
        assert_eq!(db.get(w1_key(i)).unwrap(), now(i), "now {i}");
    }
    assert_eq!(snap0.scan(..).count() as u64, N);
    let live1 = (0..N).filter(|i| !i.is_multiple_of(3)).count();
    assert_eq!(snap1.scan(..).count(), live1);
    // Three readable versions for keys overwritten twice, etc.: more entries than keys.
    let entries: u64 = db.stats().levels.iter().map(|l| l.entries).sum();
    assert!(
        entries > N * 2,
        "old versions kept for snapshots: {entries}"
    );

    drop(snap0);
    drop(snap1);
    db.compact().unwrap();
    let live = (0..N).filter(|&i| now(i).is_some()).count() as u64;
    let entries: u64 = db.stats().levels.iter().map(|l| l.entries).sum();
    assert_eq!(entries, live, "released versions dropped");
    for i in 0..N {
        assert_eq!(db.get(w1_key(i)).unwrap(), now(i));
    }
}

/// The version between two snapshots that neither reads is dropped; the ones they read stay.
#[test]
fn only_versions_some_snapshot_reads_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small_options()).unwrap();
    db.put(b"k", b"v1").unwrap();
    let s1 = db.snapshot();
    db.put(b"k", b"v2").unwrap();
    db.put(b"k", b"v3").unwrap();
    let s3 = db.snapshot();
    db.delete(b"k").unwrap();
    db.put(b"k", b"v5").unwrap();
    db.compact().unwrap();
    // v1 (s1), v3 (s3), v5 (newest); v2 and the tombstone are read by nobody.
    let entries: u64 = db.stats().levels.iter().map(|l| l.entries).sum();
    assert_eq!(entries, 3);
    assert_eq!(s1.get(b"k").unwrap(), Some(b"v1".to_vec()));
    assert_eq!(s3.get(b"k").unwrap(), Some(b"v3".to_vec()));
    assert_eq!(db.get(b"k").unwrap(), Some(b"v5".to_vec()));

    // A tombstone a snapshot reads is kept too, even at the bottom level.
    let s5 = db.snapshot();
    db.delete(b"k").unwrap();
    let s6 = db.snapshot();
    db.put(b"k", b"v7").unwrap();
    db.compact().unwrap();
    assert_eq!(s5.get(b"k").unwrap(), Some(b"v5".to_vec()));
    assert_eq!(s6.get(b"k").unwrap(), None);
    assert_eq!(db.get(b"k").unwrap(), Some(b"v7".to_vec()));
    drop((s1, s3, s5));
    db.compact().unwrap();
    // s6 reads the tombstone, but nothing older is left for it to hide at the bottom
    // level, so it goes too: v7 alone remains, and s6 still reads "absent".
    let entries: u64 = db.stats().levels.iter().map(|l| l.entries).sum();
    assert_eq!(entries, 1);
    assert_eq!(s6.get(b"k").unwrap(), None);
    drop(s6);
    db.delete(b"k").unwrap();
    db.compact().unwrap();
    let entries: u64 = db.stats().levels.iter().map(|l| l.entries).sum();
    assert_eq!(
        entries, 0,
        "a bottom-level tombstone hiding everything is dropped"
    );
}
