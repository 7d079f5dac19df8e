//! What a compaction filter's `get` sees: the database at the oldest live snapshot, and
//! without one, as it was when the compaction started, whatever is written meanwhile.

mod common;

use std::sync::Arc;
use std::time::Duration;

use bloomkv::{CompactionDecision, CompactionFilter, CompactionFilterContext, Db, Options};
use common::gate::GateEnv;
use parking_lot::Mutex;

/// Looks up "config" for every entry and records what it read.
#[derive(Debug, Default)]
struct ReadsConfig {
    seen: Mutex<Vec<Option<Vec<u8>>>>,
}

impl CompactionFilter for ReadsConfig {
    fn name(&self) -> &str {
        "reads-config"
    }

    fn filter(
        &self,
        ctx: &mut CompactionFilterContext<'_>,
        key: &[u8],
        _: &[u8],
    ) -> CompactionDecision {
        if key.starts_with(b"data") {
            self.seen.lock().push(ctx.get("config").unwrap());
        }
        CompactionDecision::Keep
    }
}

fn options(filter: &Arc<ReadsConfig>, env: &Arc<GateEnv>) -> Options {
    Options {
        compaction_filter: Some(Arc::clone(filter) as Arc<dyn CompactionFilter>),
        env: env.clone(),
        ..Options::default()
    }
}

#[test]
fn reads_see_the_oldest_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let filter = Arc::new(ReadsConfig::default());
    let env = GateEnv::shared();
    let db = Db::open(dir.path(), options(&filter, &env)).unwrap();
    db.put("config", "v1").unwrap();
    db.put("data1", "x").unwrap();
    let snap = db.snapshot();
    db.put("config", "v2").unwrap();
    let later = db.snapshot();
    db.put("config", "v3").unwrap();
    db.compact().unwrap();
    let seen = filter.seen.lock().clone();
    assert!(!seen.is_empty(), "the filter was not asked");
    assert!(
        seen.iter().all(|v| v.as_deref() == Some(b"v1".as_slice())),
        "{seen:?}"
    );
    // The reads' versions survived for the snapshots too.
    assert_eq!(snap.get("config").unwrap(), Some(b"v1".to_vec()));
    assert_eq!(later.get("config").unwrap(), Some(b"v2".to_vec()));
    assert_eq!(db.get("config").unwrap(), Some(b"v3".to_vec()));
    // Reads made for the filter are not users' lookups.
    let gets_before = db.stats().gets;
    drop((snap, later));
    filter.seen.lock().clear();
    db.compact().unwrap();
    assert_eq!(
        filter.seen.lock().as_slice(),
        [Some(b"v3".to_vec())],
        "no snapshot: the latest state"
    );
    assert_eq!(db.stats().gets, gets_before);
}

#[test]
fn writes_made_during_a_compaction_are_not_seen_by_its_reads() {
    let dir = tempfile::tempdir().unwrap();
    let filter = Arc::new(ReadsConfig::default());
    let env = GateEnv::shared();
    let db = Db::open(dir.path(), options(&filter, &env)).unwrap();
    let _release = env.release_on_drop();
    db.put("config", "before").unwrap();
    db.put("data1", "x").unwrap();
    db.flush().unwrap();
    // The compaction stops at the gate when it opens its input.
    env.hold(db.live_files());
    let compaction = {
        let db = db.clone();
        std::thread::spawn(move || db.compact())
    };
    assert!(
        env.wait_for_a_held_reader(Duration::from_secs(60)),
        "the compaction never started"
    );
    db.put("config", "during").unwrap();
    env.release_all();
    compaction.join().unwrap().unwrap();
    assert_eq!(
        filter.seen.lock().as_slice(),
        [Some(b"before".to_vec())],
        "the filter read a write made after its compaction started"
    );
    assert_eq!(db.get("config").unwrap(), Some(b"during".to_vec()));
}
