//! A snapshot of a secondary keeps reading its state after a catch-up installed a version
//! from which the writer compacted the snapshot's versions away (the writer cannot see a
//! secondary's snapshots, so nothing keeps those versions in its tables).

use crate::{Db, Options, ReadOptions};

#[test]
fn a_snapshot_reads_versions_the_writer_compacted_away() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Db::open(dir.path(), Options::default()).unwrap();
    writer.put("k", "old").unwrap();
    writer.put("gone", "soon").unwrap();
    writer.flush().unwrap();
    let reader = Db::open_secondary(dir.path(), Options::default()).unwrap();
    let snap = reader.snapshot();

    writer.put("k", "new").unwrap();
    writer.delete("gone").unwrap();
    writer.compact().unwrap();
    reader.try_catch_up().unwrap();

    assert_eq!(reader.get("k").unwrap(), Some(b"new".to_vec()));
    assert_eq!(reader.get("gone").unwrap(), None);
    assert_eq!(snap.get("k").unwrap(), Some(b"old".to_vec()));
    assert_eq!(snap.get("gone").unwrap(), Some(b"soon".to_vec()));
    assert_eq!(snap.scan(..).count(), 2);
    let mut c = reader.cursor(&ReadOptions::default().with_snapshot(&snap));
    c.seek("k").unwrap();
    assert_eq!(c.value(), b"old");
    assert!(snap.sequence() < reader.snapshot().sequence());
}
