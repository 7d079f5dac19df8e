//! Level-0 tables left over after the last writes (fewer than the compaction trigger) are
//! compacted once the database has been idle for `Options::idle_compaction_delay`, and at
//! once by `wait_for_compactions`; never while writes keep coming, and never with the
//! option off. Every answer stays the same.

mod common;

use std::time::{Duration, Instant};

use bloomkv::{Db, Options};
use common::{absent_key, small_options, w1_key, w1_value};

const KEYS: u64 = 6_000;

/// Writes `KEYS` keys in three flushed batches: three level-0 tables (the trigger is four).
fn three_level0_tables(opts: Options) -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts).unwrap();
    for batch in 0..3 {
        for i in (batch..KEYS).step_by(3) {
            db.put(w1_key(i), w1_value(i, 0)).unwrap();
        }
        db.flush().unwrap();
    }
    (dir, db)
}

fn level0_tables(db: &Db) -> u64 {
    db.stats().levels[0].files
}

fn check_answers(db: &Db) {
    for i in (0..KEYS).step_by(7) {
        assert_eq!(db.get(w1_key(i)).unwrap(), Some(w1_value(i, 0)), "key {i}");
        assert_eq!(db.get(absent_key(i)).unwrap(), None, "absent key {i}");
    }
}

fn options(delay: Option<Duration>) -> Options {
    Options {
        // Big enough that the three tables stay below level 0's trigger and nothing else is due.
        memtable_bytes: 4 << 20,
        idle_compaction_delay: delay,
        ..small_options()
    }
}

#[test]
fn leftovers_are_compacted_once_the_database_is_idle() {
    let (_dir, db) = three_level0_tables(options(Some(Duration::from_millis(300))));
    let probes_before = {
        let e = db.get_explained(absent_key(1)).unwrap();
        e.tables.len()
    };
    assert!(probes_before >= 3, "{probes_before} tables probed");
    let start = Instant::now();
    while level0_tables(&db) > 0 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "level 0 still holds {} tables",
            level0_tables(&db)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(db.stats().levels[1].files > 0);
    // One table of level 1 per lookup now, not three of level 0.
    assert_eq!(db.get_explained(absent_key(1)).unwrap().tables.len(), 1);
    check_answers(&db);
}

#[test]
fn wait_for_compactions_compacts_leftovers_without_waiting_for_the_delay() {
    let (_dir, db) = three_level0_tables(options(Some(Duration::from_secs(3600))));
    assert_eq!(level0_tables(&db), 3);
    db.wait_for_compactions().unwrap();
    assert_eq!(level0_tables(&db), 0);
    check_answers(&db);
}

#[test]
fn without_the_option_leftovers_stay() {
    let (_dir, db) = three_level0_tables(options(None));
    db.wait_for_compactions().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(level0_tables(&db), 3);
    check_answers(&db);
}

#[test]
fn not_while_writes_keep_coming() {
    let delay = Duration::from_millis(1500);
    let (_dir, db) = three_level0_tables(options(Some(delay)));
    // Writes every few milliseconds for twice the delay: the database is never idle.
    let start = Instant::now();
    let mut i = 0;
    while start.elapsed() < delay * 2 {
        db.put(format!("busy{i}"), "x").unwrap();
        i += 1;
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(level0_tables(&db), 3, "compacted while writes came");
    let stopped = Instant::now();
    while level0_tables(&db) > 0 {
        assert!(stopped.elapsed() < Duration::from_secs(30));
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(stopped.elapsed() >= delay - Duration::from_millis(100));
    check_answers(&db);
    for j in 0..i {
        assert_eq!(db.get(format!("busy{j}")).unwrap(), Some(b"x".to_vec()));
    }
}
