//! A checkpoint is the database as of its sequence number: tables, memtable and range
//! deletes, unaffected by later writes and compactions of the live database, whether its
//! tables were linked or copied.

use std::collections::BTreeMap;
use std::path::Path;

use bloomkv::{Db, Error, Options};

use crate::common::{self, NoSyncEnv};

fn options(env: std::sync::Arc<dyn bloomkv::env::Env>) -> Options {
    Options {
        env,
        ..common::small_options()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// Builds a live database with tables on several levels, a frozen-or-flushed history, a
/// memtable holding puts, deletes and a range delete; checkpoints it; then changes and
/// fully compacts the live database. Returns the model of the state at the checkpoint.
fn checkpoint_then_diverge(
    live: &Path,
    copy: &Path,
    env: std::sync::Arc<dyn bloomkv::env::Env>,
) -> common::Map {
    let db = Db::open(live, options(env)).unwrap();
    let mut model = BTreeMap::new();
    for i in 0..20_000u32 {
        let v = format!("v{i}-first").into_bytes();
        db.put(key(i), &v).unwrap();
        model.insert(key(i), v);
    }
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    assert!(db.stats().levels.iter().skip(1).any(|l| l.files > 0));
    // The memtable part: overwrites, deletes and a range delete, not flushed.
    for i in (0..20_000u32).step_by(7) {
        let v = format!("v{i}-second").into_bytes();
        db.put(key(i), &v).unwrap();
        model.insert(key(i), v);
    }
    for i in (3..20_000u32).step_by(11) {
        db.delete(key(i)).unwrap();
        model.remove(&key(i));
    }
    db.delete_range(key(500), key(600)).unwrap();
    model.retain(|k, _| !(key(500) <= *k && *k < key(600)));

    let seq = db.checkpoint(copy).unwrap();
    assert!(seq > 20_000);
    assert_eq!(common::contents(&db), model);

    // The live database moves on and rewrites every table.
    for i in 0..20_000u32 {
        db.put(key(i), b"after").unwrap();
    }
    db.delete_range(key(0), key(100)).unwrap();
    db.compact_range(..).unwrap();
    drop(db);
    model
}

#[test]
fn a_checkpoint_holds_the_state_at_its_sequence_number() {
    let dir = tempfile::tempdir().unwrap();
    let (live, copy) = (dir.path().join("live"), dir.path().join("copy"));
    let model = checkpoint_then_diverge(&live, &copy, NoSyncEnv::shared());
    assert!(!dir.path().join("copy.checkpoint-tmp").exists());

    let ro = Db::open_read_only(&copy, options(NoSyncEnv::shared())).unwrap();
    assert_eq!(common::contents(&ro), model);
    drop(ro);
    let db = Db::open(&copy, options(NoSyncEnv::shared())).unwrap();
    assert_eq!(common::contents(&db), model);
    // It is a database of its own: writes and compactions there leave the live one alone.
    db.put("own", "write").unwrap();
    db.compact_range(..).unwrap();
    assert_eq!(db.get("own").unwrap().as_deref(), Some(&b"write"[..]));
    drop(db);
    let live_db = Db::open(&live, options(NoSyncEnv::shared())).unwrap();
    assert_eq!(live_db.get("own").unwrap(), None);
    assert_eq!(
        live_db.get(key(150)).unwrap().as_deref(),
        Some(&b"after"[..])
    );
}

#[test]
fn tables_are_copied_where_they_cannot_be_linked() {
    let dir = tempfile::tempdir().unwrap();
    let (live, copy) = (dir.path().join("live"), dir.path().join("copy"));
    let model = checkpoint_then_diverge(&live, &copy, NoSyncEnv::without_hard_links());
    let db = Db::open(&copy, options(NoSyncEnv::shared())).unwrap();
    assert_eq!(common::contents(&db), model);
}

#[test]
fn hard_linked_tables_share_the_live_files() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("live"), options(NoSyncEnv::shared())).unwrap();
    for i in 0..5000u32 {
        db.put(key(i), [b'x'; 100]).unwrap();
    }
    db.flush().unwrap();
    // A settled tree: a compaction finishing between the checkpoint and `live_files` would
    // list tables the checkpoint never saw.
    db.wait_for_compactions().unwrap();
    db.checkpoint(dir.path().join("copy")).unwrap();
    for n in db.live_files() {
        let name = bloomkv::sstable::table_file_name(n);
        let a = std::fs::metadata(dir.path().join("live").join(&name)).unwrap();
        let b = std::fs::metadata(dir.path().join("copy").join(&name)).unwrap();
        assert_eq!((a.dev(), a.ino()), (b.dev(), b.ino()), "{name} is one file");
    }
}

#[test]
fn an_existing_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("live"), options(NoSyncEnv::shared())).unwrap();
    std::fs::create_dir(dir.path().join("there")).unwrap();
    let err = db.checkpoint(dir.path().join("there")).unwrap_err();
    assert!(
        matches!(err, Error::InvalidArgument(ref m) if m.contains("already exists")),
        "{err}"
    );
    // The live directory itself, too.
    assert!(matches!(
        db.checkpoint(dir.path().join("live")),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn a_read_only_handle_can_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live");
    let db = Db::open(&live, options(NoSyncEnv::shared())).unwrap();
    db.put("in-table", "1").unwrap();
    db.flush().unwrap();
    db.put("in-wal", "2").unwrap();
    drop(db);
    let ro = Db::open_read_only(&live, options(NoSyncEnv::shared())).unwrap();
    ro.checkpoint(dir.path().join("copy")).unwrap();
    let copy = Db::open(dir.path().join("copy"), options(NoSyncEnv::shared())).unwrap();
    assert_eq!(copy.get("in-table").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(copy.get("in-wal").unwrap().as_deref(), Some(&b"2"[..]));
}
