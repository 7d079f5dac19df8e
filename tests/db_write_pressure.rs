//! `Db::write_pressure` tells, without a lock, whether a write would wait now: delayed or
//! stopped by a memtable flush that is behind, or by level 0 (here with the flush or the
//! level-0 compaction held at a gate), and back to `None` once the pressure is gone.

mod common;

use std::time::{Duration, Instant};

use bloomkv::{Db, Options, StallCause, WritePressure};
use common::gate::GateEnv;

/// Polls `db.write_pressure()` until it is `want` (a minute at most).
fn wait_for(db: &Db, want: WritePressure) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while db.write_pressure() != want {
        assert!(
            Instant::now() < deadline,
            "pressure stayed {:?}, not {want:?}",
            db.write_pressure()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_flush_that_is_behind_delays_then_stops_writes() {
    let dir = tempfile::tempdir().unwrap();
    let env = GateEnv::shared();
    let opts = Options {
        memtable_bytes: 64 << 10,
        env: env.clone(),
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let _release = env.release_on_drop();
    assert_eq!(db.write_pressure(), WritePressure::None);
    // Every table written from now on is held: the flush cannot finish.
    env.hold_tables_after(0);
    let mut i = 0u32;
    let put = |db: &Db, i: &mut u32| {
        db.put(format!("key{i:06}"), [7u8; 100]).unwrap();
        *i += 1;
    };
    // The first memtable fills and is frozen (its flush is held), then the second fills.
    // The active memtable fills while the frozen one waits: delayed from half full...
    while db.write_pressure() == WritePressure::None {
        put(&db, &mut i);
        assert!(i < 10_000, "never delayed");
    }
    assert_eq!(
        db.write_pressure(),
        WritePressure::Delayed(StallCause::Memtable)
    );
    assert!(db.write_pressure().may_wait());
    // ...and stopped once full: the next write would wait for the flush.
    while db.write_pressure() == WritePressure::Delayed(StallCause::Memtable) {
        put(&db, &mut i);
        assert!(i < 10_000, "never stopped");
    }
    assert_eq!(
        db.write_pressure(),
        WritePressure::Stopped(StallCause::Memtable)
    );
    env.release_all();
    wait_for(&db, WritePressure::None);
    put(&db, &mut i);
}

#[test]
fn level_zero_delays_then_stops_writes() {
    let dir = tempfile::tempdir().unwrap();
    let env = GateEnv::shared();
    let opts = Options {
        level0_compaction_trigger: 2,
        level0_slowdown_writes: 3,
        level0_stop_writes: 5,
        env: env.clone(),
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let _release = env.release_on_drop();
    db.put("k1", "v").unwrap();
    db.flush().unwrap();
    // The first table is an input of the level-0 compaction the second flush starts.
    env.hold(db.live_files());
    for files in 2..=5u64 {
        db.put(format!("k{files}"), "v").unwrap();
        db.flush().unwrap();
        if files == 2 {
            assert!(
                env.wait_for_a_held_reader(Duration::from_secs(60)),
                "the level-0 compaction never started"
            );
        }
        assert_eq!(db.stats().levels[0].files, files);
        let want = match files {
            2 => WritePressure::None,
            3 | 4 => WritePressure::Delayed(StallCause::Level0),
            _ => WritePressure::Stopped(StallCause::Level0),
        };
        assert_eq!(db.write_pressure(), want, "{files} level-0 tables");
    }
    env.release_all();
    wait_for(&db, WritePressure::None);
    db.put("after", "v").unwrap();
}
