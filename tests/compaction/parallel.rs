//! Compactions of different levels run in parallel: with a compaction of level 1 into 2 held
//! at its inputs, a level-0 compaction of keys it does not hold runs to the end on another
//! thread. With one compaction thread the same database still settles once released.

use std::time::{Duration, Instant};

use bloomkv::{Db, Options};

use crate::common::gate::GateEnv;

fn options(env: &std::sync::Arc<GateEnv>, threads: usize) -> Options {
    Options {
        level0_compaction_trigger: 2,
        level0_slowdown_writes: 10,
        level0_stop_writes: 20,
        // Level 1 is over its size with any table in it; level 2 holds a megabyte.
        max_bytes_for_level_base: 1024,
        level_size_multiplier: 1000,
        background_threads: threads,
        env: env.clone(),
        ..Options::default()
    }
}

/// Two flushes of keys `prefix0000..prefix0999`, valued `v`: a level-0 compaction.
fn two_tables(db: &Db, prefix: &str, v: &str) {
    for half in 0..2 {
        for i in (half * 500)..(half + 1) * 500 {
            db.put(format!("{prefix}{i:04}"), v).unwrap();
        }
        db.flush().unwrap();
    }
}

/// Polls until level 0 is empty, for at most `limit`.
fn level0_drains(db: &Db, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if db.stats().levels[0].files == 0 {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

/// Builds a table of `a` keys in level 2, then holds the compaction of new `a` keys from
/// level 1 into level 2 at that table, and flushes `b` keys until level 0 must compact.
fn hold_a_level_one_compaction(threads: usize) -> (tempfile::TempDir, std::sync::Arc<GateEnv>, Db) {
    let dir = tempfile::tempdir().unwrap();
    let env = GateEnv::shared();
    let db = Db::open(dir.path(), options(&env, threads)).unwrap();
    // Level 0 -> 1 (merged), then a trivial move into level 2, where it stays.
    two_tables(&db, "a", "old");
    db.wait_for_compactions().unwrap();
    let s = db.stats();
    assert_eq!((s.levels[0].files, s.levels[1].files), (0, 0), "{s:?}");
    assert!(s.levels[2].files > 0, "{s:?}");
    // The next compaction of `a` keys from level 1 into 2 waits at the level-2 table.
    env.hold(db.live_files());
    two_tables(&db, "a", "new");
    assert!(
        env.wait_for_a_held_reader(Duration::from_secs(60)),
        "the level-1 compaction never started"
    );
    two_tables(&db, "b", "b");
    (dir, env, db)
}

fn check(db: &Db) {
    for i in 0..1000 {
        assert_eq!(db.get(format!("a{i:04}")).unwrap(), Some(b"new".to_vec()));
        assert_eq!(db.get(format!("b{i:04}")).unwrap(), Some(b"b".to_vec()));
    }
}

#[test]
fn a_level_zero_compaction_runs_beside_a_held_deeper_one() {
    let (_dir, env, db) = hold_a_level_one_compaction(2);
    // Dropped before `db`: a failed assertion then fails the test instead of hanging it.
    let _release = env.release_on_drop();
    // Generous: the level-0 compaction of 1000 keys takes milliseconds.
    let drained = level0_drains(&db, Duration::from_secs(60));
    env.release_all();
    assert!(drained, "level 0 waited for the held compaction");
    db.wait_for_compactions().unwrap();
    check(&db);
}

#[test]
fn one_compaction_thread_runs_them_one_after_the_other() {
    let (dir, env, db) = hold_a_level_one_compaction(1);
    // Dropped before `db`: a failed assertion then fails the test instead of hanging it.
    let _release = env.release_on_drop();
    // The only compaction thread is held: level 0 keeps its tables.
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(db.stats().levels[0].files, 2);
    env.release_all();
    db.wait_for_compactions().unwrap();
    assert_eq!(db.stats().levels[0].files, 0);
    check(&db);
    drop(db);
    let db = Db::open(dir.path(), Options::default()).unwrap();
    check(&db);
}
