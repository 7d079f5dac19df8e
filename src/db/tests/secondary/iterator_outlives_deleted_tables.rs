//! An iterator opened on a secondary reads its whole state while the writer compacts and
//! deletes every table of it, and the secondary catches up meanwhile; the descriptors it
//! held are let go once the iterator is gone and the secondary has caught up.

use super::{busy_writer_options, key, value};
use crate::Db;

#[test]
fn an_iterator_reads_tables_the_writer_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Db::open(dir.path(), busy_writer_options()).unwrap();
    for i in 0..1000 {
        writer.put(key(i), value(i, 0)).unwrap();
    }
    writer.flush().unwrap();
    let reader = Db::open_secondary(dir.path(), busy_writer_options()).unwrap();
    let old_tables = reader.live_files();
    assert!(!old_tables.is_empty());
    let mut it = reader.scan(..);
    let first = it.next().unwrap().unwrap();
    assert_eq!(first, (key(0), value(0, 0)));

    for i in 0..1000 {
        writer.put(key(i), value(i, 1)).unwrap();
    }
    writer.compact().unwrap();
    let deleted = old_tables
        .iter()
        .filter(|&&n| !dir.path().join(crate::sstable::table_file_name(n)).exists())
        .count();
    assert_eq!(deleted, old_tables.len(), "the compaction kept old tables");
    reader.try_catch_up().unwrap();
    assert_eq!(reader.get(key(7)).unwrap(), Some(value(7, 1)));

    // The iterator still reads the state it started with, from the deleted files.
    let rest: Vec<(Vec<u8>, Vec<u8>)> = it.by_ref().map(Result::unwrap).collect();
    assert_eq!(rest.len(), 999);
    for (i, (k, v)) in rest.into_iter().enumerate() {
        let i = i as u32 + 1;
        assert_eq!((k, v), (key(i), value(i, 0)));
    }
    let held_with_iterator = reader.secondary_held_files();
    assert!(held_with_iterator >= old_tables.len() + reader.live_files().len());
    drop(it);
    reader.try_catch_up().unwrap();
    assert_eq!(reader.secondary_held_files(), reader.live_files().len());
}
