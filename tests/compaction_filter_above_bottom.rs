//! A compaction filter's `Remove` in a compaction above the bottom of the tree, where a
//! deeper level still holds an older version of the key: a tombstone takes the entry's
//! place, so the older version does not come back. And while a snapshot older than the entry
//! lives, the filter is not asked about it at all: the snapshot keeps its answer.

mod common;

use std::sync::Arc;

use bloomkv::{
    CompactionDecision, CompactionFilter, CompactionFilterContext, Compression, Db, Options,
};
use common::NoSyncEnv;
use parking_lot::Mutex;

/// Removes every value starting with "drop"; records what it removed, at which level.
#[derive(Debug, Default)]
struct DropMarked {
    removed: Mutex<Vec<(Vec<u8>, usize)>>,
}

impl CompactionFilter for DropMarked {
    fn name(&self) -> &str {
        "drop-marked"
    }

    fn filter(
        &self,
        ctx: &mut CompactionFilterContext<'_>,
        key: &[u8],
        value: &[u8],
    ) -> CompactionDecision {
        if value.starts_with(b"drop") {
            self.removed.lock().push((key.to_vec(), ctx.output_level()));
            CompactionDecision::Remove
        } else {
            CompactionDecision::Keep
        }
    }
}

fn filler_key(i: u32) -> String {
    format!("key{i:06}")
}

/// Writes the first and the last key again, so the next flushed table spans them all.
fn span_the_key_range(db: &Db) {
    db.put(filler_key(0), "first").unwrap();
    db.put(filler_key(10_002), "last").unwrap();
}

/// The deepest level with a table whose key range holds `key`.
fn deepest_holding(db: &Db, key: &[u8]) -> usize {
    db.stats()
        .tables
        .iter()
        .filter(|t| t.smallest_key.as_slice() <= key && key <= t.largest_key.as_slice())
        .map(|t| t.level)
        .max()
        .unwrap_or(0)
}

#[test]
fn a_removed_entry_above_an_older_version_leaves_a_tombstone() {
    let dir = tempfile::tempdir().unwrap();
    let filter = Arc::new(DropMarked::default());
    let opts = Options {
        compaction_filter: Some(Arc::clone(&filter) as Arc<dyn CompactionFilter>),
        compression: Compression::None,
        memtable_bytes: 32 << 10,
        target_file_bytes: 16 << 10,
        max_bytes_for_level_base: 48 << 10,
        level_size_multiplier: 4,
        level0_compaction_trigger: 1,
        level0_slowdown_writes: 8,
        env: NoSyncEnv::shared(),
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let key = filler_key(5000).into_bytes();
    // Enough data over the whole key range that the first version of `key` ends up two or
    // more levels down.
    for round in 0..4u32 {
        for i in (0..10_000).step_by(4) {
            db.put(filler_key(i + round), format!("old-{round}-{i:0>80}"))
                .unwrap();
        }
        db.flush().unwrap();
        db.wait_for_compactions().unwrap();
    }
    let deep = deepest_holding(&db, &key);
    assert!(deep >= 2, "the old version sits on level {deep}");
    let old = db.get(&key).unwrap().unwrap();

    // A newer version the filter wants gone, under a snapshot older than it: not asked. (The
    // first and last keys make the flushed table span level 1, so it is merged there, not
    // moved down whole.)
    let snap = db.snapshot();
    db.put(&key, "drop-1").unwrap();
    span_the_key_range(&db);
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    assert!(
        filter.removed.lock().is_empty(),
        "asked about an entry a snapshot predates"
    );
    assert_eq!(db.get(&key).unwrap(), Some(b"drop-1".to_vec()));
    assert_eq!(snap.get(&key).unwrap(), Some(old.clone()));
    drop(snap);

    // No snapshot now: the next compaction out of level 0 removes it, above the level that
    // holds the old version.
    db.put(&key, "drop-2").unwrap();
    db.put(filler_key(4999), "neighbour").unwrap();
    span_the_key_range(&db);
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let removed = filter.removed.lock().clone();
    let at: Vec<usize> = removed
        .iter()
        .filter(|(k, _)| *k == key)
        .map(|(_, l)| *l)
        .collect();
    assert!(!at.is_empty(), "the filter was not asked: {removed:?}");
    let deep = deepest_holding(&db, &key);
    assert!(
        at.iter().any(|&l| l < deep),
        "removed on levels {at:?}, the old version is on {deep}"
    );
    // Not resurrected, by any read path.
    assert_eq!(db.get(&key).unwrap(), None);
    let scanned: Vec<Vec<u8>> = db
        .scan(key.clone()..)
        .take(1)
        .map(|kv| kv.unwrap().0)
        .collect();
    assert_ne!(scanned.first(), Some(&key));
    assert_eq!(
        db.get(filler_key(4999)).unwrap(),
        Some(b"neighbour".to_vec())
    );

    // Down to the bottom: the tombstone and the old version go together; still absent.
    db.compact().unwrap();
    assert_eq!(db.get(&key).unwrap(), None);
    drop(db);
    let db = Db::open(
        dir.path(),
        Options {
            env: NoSyncEnv::shared(),
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(db.get(&key).unwrap(), None, "after reopen");
}
