//! A flush does not wait for a running compaction: with a compaction held mid-way (at the
//! opening of its input tables), `flush()` still turns the memtable into a level-0 table.

use std::sync::mpsc;
use std::time::Duration;

use bloomkv::{Db, Options};

use crate::common::gate::GateEnv;

#[test]
fn a_flush_completes_while_a_compaction_is_held() {
    let dir = tempfile::tempdir().unwrap();
    let env = GateEnv::shared();
    let opts = Options {
        level0_compaction_trigger: 4,
        level0_stop_writes: 12,
        env: env.clone(),
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    // Dropped before `db`: a failed assertion then fails the test instead of hanging it.
    let _release = env.release_on_drop();
    for t in 0..3u32 {
        db.put(format!("key{t}"), "v").unwrap();
        db.flush().unwrap();
    }
    // The first three tables are inputs of the level-0 compaction the fourth flush starts.
    env.hold(db.live_files());
    db.put("key3", "v").unwrap();
    db.flush().unwrap();
    assert!(
        env.wait_for_a_held_reader(Duration::from_secs(60)),
        "the level-0 compaction never started"
    );

    db.put("during", "the compaction").unwrap();
    let (done, finished) = mpsc::channel();
    let flusher = db.clone();
    let worker = std::thread::spawn(move || done.send(flusher.flush()).unwrap());
    // Generous: the flush of one small memtable takes milliseconds; without a flush thread
    // of its own it would wait for the held compaction forever.
    let flushed = finished.recv_timeout(Duration::from_secs(60));
    env.release_all();
    worker.join().unwrap();
    flushed
        .expect("flush() waited for the held compaction")
        .unwrap();

    db.wait_for_compactions().unwrap();
    for t in 0..4u32 {
        assert_eq!(db.get(format!("key{t}")).unwrap(), Some(b"v".to_vec()));
    }
    assert_eq!(db.get("during").unwrap(), Some(b"the compaction".to_vec()));
    drop(db);
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(db.get("during").unwrap(), Some(b"the compaction".to_vec()));
}
