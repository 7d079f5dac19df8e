//! A read that loaded the published sequence number just before a catch-up installed a new
//! view (the two are stored one after the other, and a reader loads them one after the
//! other) reads that view at the view's own number. At the older number it would read a
//! version the writer may have compacted away by then; here the newer version is only in
//! the memtable, so the two numbers give different answers without depending on what the
//! writer's compactions keep.

use std::ops::Bound;

use crate::{Db, Options};

#[test]
fn a_sequence_number_older_than_the_view_is_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Db::open(dir.path(), Options::default()).unwrap();
    writer.put("k", "old").unwrap();
    let reader = Db::open_secondary(dir.path(), Options::default()).unwrap();
    let loaded_before = reader.inner().visible_seq();

    writer.put("k", "new").unwrap();
    reader.try_catch_up().unwrap();
    assert!(reader.inner().visible_seq() > loaded_before);

    let got = reader.inner().get_at(b"k", loaded_before, None).unwrap();
    assert_eq!(got, Some(b"new".to_vec()));
    let scanned: Vec<_> = reader
        .inner()
        .scan_at(Bound::Unbounded, Bound::Unbounded, loaded_before)
        .map(Result::unwrap)
        .collect();
    assert_eq!(scanned, vec![(b"k".to_vec(), b"new".to_vec())]);
    let many = reader.multi_get_at(&["k"], loaded_before).unwrap();
    assert_eq!(many, vec![Some(b"new".to_vec())]);
}
