//! A secondary reads the writer's state as of its open (WAL records included), none of the
//! writes after it, and the writer's latest state after each catch-up, through flushes and
//! compactions; it refuses writes and takes no lock the writer needs.

use super::{busy_writer_options, key, value};
use crate::{Db, Error, Options};

#[test]
fn a_secondary_follows_the_writer_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Db::open(dir.path(), busy_writer_options()).unwrap();
    for i in 0..300 {
        writer.put(key(i), value(i, 0)).unwrap();
    }
    let reader = Db::open_secondary(dir.path(), Options::default()).unwrap();
    assert!(reader.is_secondary() && reader.is_read_only());
    for round in 1..6 {
        for i in 0..300 {
            writer.put(key(i), value(i, round)).unwrap();
        }
        writer.delete(key(round)).unwrap();
        // Still the previous round: nothing moves before a catch-up.
        assert_eq!(
            reader.get(key(299)).unwrap(),
            Some(value(299, round - 1)),
            "round {round}"
        );
        reader.try_catch_up().unwrap();
        for i in 0..300 {
            let want = (i != round).then(|| value(i, round));
            assert_eq!(reader.get(key(i)).unwrap(), want, "key {i} round {round}");
        }
        let scanned = reader.scan(..).count();
        assert_eq!(scanned, 299, "round {round}");
    }
    assert!(writer.stats().compactions > 0, "the writer never compacted");
    assert!(matches!(reader.put("k", "v"), Err(Error::ReadOnly(_))));
    assert!(matches!(reader.flush(), Err(Error::ReadOnly(_))));
    // The writer could reopen beside it: the secondary holds no lock.
    drop(writer);
    let again = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(again.get(key(299)).unwrap(), Some(value(299, 5)));
}
