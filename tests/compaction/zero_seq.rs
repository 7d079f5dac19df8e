//! A put compacted to where nothing deeper holds its key is stored with sequence number 0,
//! unless a range tombstone the output keeps covers it: the tombstone is older than the put
//! but would hide a version numbered 0.

use bloomkv::Db;

use crate::common;

fn x_key(i: u32) -> String {
    format!("x{i:05}")
}

#[test]
fn a_put_under_a_kept_older_range_tombstone_stays_visible() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), common::small_options()).unwrap();
    // Enough "x" keys that compactions push them below level 1.
    for i in 0..30_000u32 {
        db.put(x_key(i), [b'v'; 100]).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let deep = |db: &Db| {
        db.stats()
            .levels
            .iter()
            .skip(2)
            .map(|l| l.files)
            .sum::<u64>()
    };
    assert!(deep(&db) > 0, "the x keys reach level 2 or deeper");

    // An older tombstone over everything, then a newer put of a key nothing deeper holds.
    db.delete_range("a", "z").unwrap();
    db.put("c", "visible").unwrap();
    db.flush().unwrap();
    // Compacting [a, d) merges the level-0 table (tombstone and put) into level 1 only. The
    // tombstone is kept there, since the x tables below still hold keys it hides; "c" has
    // nothing below it.
    db.compact_range("a".."d").unwrap();
    assert!(deep(&db) > 0);
    assert_eq!(db.get("c").unwrap().as_deref(), Some(&b"visible"[..]));
    assert_eq!(db.get(x_key(7)).unwrap(), None);
    drop(db);

    let db = Db::open(dir.path(), common::small_options()).unwrap();
    assert_eq!(db.get("c").unwrap().as_deref(), Some(&b"visible"[..]));
    assert_eq!(db.get(x_key(7)).unwrap(), None);
    assert_eq!(db.scan(..).count(), 1);
    // Pushed all the way down, the tombstone goes with the x keys and "c" remains.
    db.compact_range(..).unwrap();
    assert_eq!(db.get("c").unwrap().as_deref(), Some(&b"visible"[..]));
    assert_eq!(db.scan(..).count(), 1);
}
