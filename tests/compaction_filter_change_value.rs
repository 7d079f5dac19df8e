//! A compaction filter's `ChangeValue`: the entry keeps its key and sequence number with the
//! new value, for every read path and across a reopen; a snapshot older than the entry and
//! the entries the filter leaves alone are untouched.

mod common;

use std::sync::Arc;

use bloomkv::{CompactionDecision, CompactionFilter, CompactionFilterContext, Db, Options};
use common::NoSyncEnv;

/// Rewrites "draft:X" values to "final:X".
#[derive(Debug)]
struct Finalize;

impl CompactionFilter for Finalize {
    fn name(&self) -> &str {
        "finalize"
    }

    fn filter(
        &self,
        _: &mut CompactionFilterContext<'_>,
        _key: &[u8],
        value: &[u8],
    ) -> CompactionDecision {
        match value.strip_prefix(b"draft:") {
            Some(rest) => CompactionDecision::ChangeValue([b"final:".as_slice(), rest].concat()),
            None => CompactionDecision::Keep,
        }
    }
}

fn options() -> Options {
    Options {
        compaction_filter: Some(Arc::new(Finalize)),
        env: NoSyncEnv::shared(),
        ..Options::default()
    }
}

#[test]
fn changed_values_replace_the_entry_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    for i in 0..100u32 {
        let value = if i % 2 == 0 { "draft" } else { "kept" };
        db.put(format!("k{i:03}"), format!("{value}:{i}")).unwrap();
    }
    // A snapshot older than the later drafts: they stay drafts for it, and the filter is not
    // asked about them while it lives.
    let snap = db.snapshot();
    db.put("late", "draft:late").unwrap();
    db.compact().unwrap();
    for i in 0..100u32 {
        let want = if i % 2 == 0 {
            format!("final:{i}")
        } else {
            format!("kept:{i}")
        };
        assert_eq!(
            db.get(format!("k{i:03}")).unwrap(),
            Some(want.into_bytes()),
            "{i}"
        );
    }
    assert_eq!(db.get("late").unwrap(), Some(b"draft:late".to_vec()));
    assert_eq!(snap.get("late").unwrap(), None);
    // The snapshot predates k000's put too: but that put is older than every snapshot, and
    // changing it is the filter's business (it holds for every later state).
    assert_eq!(snap.get("k000").unwrap(), Some(b"final:0".to_vec()));
    drop(snap);
    db.compact().unwrap();
    assert_eq!(db.get("late").unwrap(), Some(b"final:late".to_vec()));
    let scanned: Vec<(Vec<u8>, Vec<u8>)> = db.scan(..).map(|kv| kv.unwrap()).collect();
    assert_eq!(scanned.len(), 101);
    assert!(
        scanned.iter().all(|(_, v)| !v.starts_with(b"draft:")),
        "a scan still sees a draft"
    );
    drop(db);
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(db.get("k042").unwrap(), Some(b"final:42".to_vec()));
    assert_eq!(db.get("late").unwrap(), Some(b"final:late".to_vec()));
}
