//! A writer that closes and reopens writes a new MANIFEST and WAL (carrying its memtable's
//! records) and deletes the old ones: a secondary catching up reads the new MANIFEST from
//! its start and applies no record twice.

use super::{busy_writer_options, key, value};
use crate::{Db, Options};

#[test]
fn a_secondary_follows_a_writer_across_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = Db::open(dir.path(), busy_writer_options()).unwrap();
    writer.put(key(0), value(0, 0)).unwrap();
    let reader = Db::open_secondary(dir.path(), Options::default()).unwrap();
    for round in 1..5 {
        for i in 0..200 {
            writer.put(key(i), value(i, round)).unwrap();
        }
        drop(writer);
        writer = Db::open(dir.path(), busy_writer_options()).unwrap();
        writer.put("round", round.to_string()).unwrap();
        reader.try_catch_up().unwrap();
        assert_eq!(
            reader.get("round").unwrap(),
            Some(round.to_string().into_bytes())
        );
        for i in 0..200 {
            assert_eq!(reader.get(key(i)).unwrap(), Some(value(i, round)), "{i}");
        }
        // Each key once: a carried record applied twice would not show here, but a
        // sequence number going back would (the snapshot's sequence only grows).
        assert_eq!(reader.scan(..).count(), 201);
    }
}
