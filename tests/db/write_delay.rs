//! Delayed writes: with the level-0 compaction held, level 0 grows; below
//! `level0_slowdown_writes` tables writes run free, from there on every write is paced
//! (delayed, not stopped), and the engine's counters of delayed and stopped writes say so.
//! Whether a paced write sleeps depends on how fast the machine wrote it (a slow one owes the
//! pace nothing), so the test counts writes the engine paced, not microseconds slept.

use std::time::Duration;

use bloomkv::{Db, Options, StallCause, WritePressure};

use crate::common::gate::GateEnv;

const VALUE: [u8; 100] = [7; 100];

/// Writes `bytes` of 100-byte values under fresh keys starting at `from`, one put (one write
/// group) each; returns how many.
fn write(db: &Db, from: u32, bytes: usize) -> u64 {
    let puts = (bytes / VALUE.len()) as u32;
    for i in 0..puts {
        db.put(format!("key{:08}", from + i), VALUE).unwrap();
    }
    u64::from(puts)
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
    assert_eq!(db.write_pressure(), WritePressure::None);
    write(&db, 200_000, 200 << 10);
    let s = db.stats();
    assert_eq!(s.levels[0].files, 2);
    assert_eq!((s.writes_delayed, s.writes_stopped), (0, 0), "{s:?}");
    assert_eq!((s.write_delay_micros, s.write_stop_micros), (0, 0));

    // Three: every write is paced (to 16 MiB/s), none stopped.
    db.flush().unwrap();
    assert_eq!(
        db.write_pressure(),
        WritePressure::Delayed(StallCause::Level0)
    );
    let puts = write(&db, 300_000, 200 << 10);
    let s = db.stats();
    assert_eq!(s.levels[0].files, 3);
    assert_eq!(s.writes_delayed, puts, "{s:?}");
    assert_eq!(
        (s.writes_stopped, s.write_stop_micros),
        (0, 0),
        "delayed, never stopped"
    );
    assert_eq!(s.stall_micros, s.write_delay_micros);
    assert!(s.longest_stall_micros <= s.stall_micros);

    env.release_all();
    db.wait_for_compactions().unwrap();
    // Level 0 is below the slowdown again: writes run free.
    assert_eq!(db.write_pressure(), WritePressure::None);
    let before = db.stats();
    write(&db, 400_000, 200 << 10);
    let after = db.stats();
    assert_eq!(
        (after.writes_delayed, after.write_delay_micros),
        (before.writes_delayed, before.write_delay_micros)
    );
    for k in [0, 100_000, 200_000, 300_000, 400_000] {
        assert_eq!(db.get(format!("key{k:08}")).unwrap(), Some(VALUE.to_vec()));
    }
}
