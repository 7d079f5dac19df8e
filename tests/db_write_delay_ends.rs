//! A delayed write stops waiting as soon as the pressure it was delayed for is gone: its
//! pause is slept in slices, re-checking the pressure, not whole. Here level 0 is held far
//! past `level0_slowdown_writes` (rate 16 KiB/s), so a 1 MiB put is charged a pause of about
//! a minute; once the held compaction is let go and level 0 drains, the put returns. Before
//! the fix it slept the whole minute (issue 27).

mod common;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use bloomkv::{Db, Options};
use common::gate::GateEnv;

#[test]
fn a_delayed_put_returns_once_the_pressure_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let env = GateEnv::shared();
    let opts = Options {
        level0_compaction_trigger: 2,
        level0_slowdown_writes: 3,
        level0_stop_writes: 20,
        env: env.clone(),
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let _release = env.release_on_drop();
    db.put("k0", "v").unwrap();
    db.flush().unwrap();
    // The first table is an input of the level-0 compaction the second flush starts.
    env.hold(db.live_files());
    db.put("k1", "v").unwrap();
    db.flush().unwrap();
    assert!(
        env.wait_for_a_held_reader(Duration::from_secs(60)),
        "the level-0 compaction never started"
    );
    // Thirteen level-0 tables: ten beyond the slowdown, the lowest rate.
    for i in 2..13 {
        db.put(format!("k{i}"), "v").unwrap();
        db.flush().unwrap();
    }
    assert_eq!(db.stats().levels[0].files, 13);
    let delayed_before = db.stats().write_delay_micros;

    let (done, finished) = mpsc::channel();
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || {
            let r = db.put("big", vec![7u8; 1 << 20]);
            done.send(r).unwrap();
        })
    };
    // The put is paced (1 MiB at 16 KiB/s: a 64 s pause) while level 0 stays full.
    assert!(
        finished.recv_timeout(Duration::from_millis(500)).is_err(),
        "the put was not delayed"
    );
    let released = Instant::now();
    env.release_all();
    // Level 0 drains within a couple of compactions; the put must follow. A minute would
    // mean it slept its whole pause; 30 s leaves a loaded machine plenty of room.
    let result = finished
        .recv_timeout(Duration::from_secs(30))
        .expect("the put kept sleeping after the pressure was gone");
    result.unwrap();
    let waited = released.elapsed();
    writer.join().unwrap();
    let delayed = db.stats().write_delay_micros - delayed_before;
    assert!(
        delayed < 30_000_000,
        "delayed {delayed} us, {waited:?} after the release"
    );
    assert_eq!(db.get("big").unwrap().map(|v| v.len()), Some(1 << 20));
}
