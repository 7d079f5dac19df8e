//! Delayed writes: with the level-0 compaction held, level 0 grows; below
//! `level0_slowdown_writes` tables writes run free, from there on they are paced (delayed, not
//! stopped), and the stall counters say so.

use std::time::Duration;

use bloomkv::{Db, Options};

use crate::common::gate::GateEnv;

const VALUE: [u8; 100] = [7; 100];

/// Writes `bytes` of 100-byte values under fresh keys starting at `from`.
fn write(db: &Db, from: u32, bytes: usize) {
    for i in 0..(bytes / VALUE.len()) as u32 {
        db.put(format!("key{:08}", from + i), VALUE).unwrap();
    }
}

#[test]
fn writes_are_delayed_from_the_slowdown_level_and_not_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let env = GateEnv::shared();
    let opts = Options {
        memtable_bytes: 4 << 20,
        level0_compaction_trigger: 2,
        level0_slowdown_writes: 3,
        level0_stop_writes: 6,
        env: env.clone(),
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    // Dropped before `db`: a failed assertion then fails the test instead of hanging it.
    let _release = env.release_on_drop();
    write(&db, 0, 1000);
    db.flush().unwrap();
    // The first table is an input of the level-0 compaction the second flush starts.
    env.hold(db.live_files());
    write(&db, 100_000, 1000);
    db.flush().unwrap();
    assert!(
        env.wait_for_a_held_reader(Duration::from_secs(60)),
        "the level-0 compaction never started"
    );

    // Two level-0 tables, below the slowdown: no write waits.
    write(&db, 200_000, 200 << 10);
    let s = db.stats();
    assert_eq!(s.levels[0].files, 2);
    assert_eq!((s.write_delay_micros, s.write_stop_micros), (0, 0));

    // Three: writes are paced to 16 MiB/s, so 200 KiB take at least ~12 ms, less the last
    // pause under a millisecond that is carried over.
    db.flush().unwrap();
    write(&db, 300_000, 200 << 10);
    let s = db.stats();
    assert_eq!(s.levels[0].files, 3);
    assert!(s.write_delay_micros >= 10_000, "{s:?}");
    assert_eq!(s.write_stop_micros, 0, "delayed, never stopped");
    assert_eq!(s.stall_micros, s.write_delay_micros);
    assert!(s.longest_stall_micros > 0 && s.longest_stall_micros <= s.stall_micros);

    env.release_all();
    db.wait_for_compactions().unwrap();
    // Level 0 is below the slowdown again: writes run free.
    let before = db.stats().write_delay_micros;
    write(&db, 400_000, 200 << 10);
    assert_eq!(db.stats().write_delay_micros, before);
    for k in [0, 100_000, 200_000, 300_000, 400_000] {
        assert_eq!(db.get(format!("key{k:08}")).unwrap(), Some(VALUE.to_vec()));
    }
}
