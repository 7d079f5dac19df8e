//! Databases whose files are written or read by hand: a manifest from the future, a WAL record
//! that is not a batch, and the compaction pointers a reopened manifest carries.

use std::path::{Path, PathBuf};

use crate::{Db, Error, Options};

fn newest_log(dir: &Path) -> PathBuf {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    logs.pop().expect("a WAL file")
}

/// Small options so that a few hundred thousand keys spread over several levels.
fn small_options() -> Options {
    Options {
        memtable_bytes: 256 << 10,
        target_file_bytes: 256 << 10,
        max_bytes_for_level_base: 1 << 20,
        level_size_multiplier: 4,
        level0_compaction_trigger: 4,
        level0_stop_writes: 12,
        ..Default::default()
    }
}

fn w1_key(i: u64) -> Vec<u8> {
    format!("{:016x}", crate::test_util::mix(i)).into_bytes()
}

fn w1_value(i: u64, generation: u32) -> Vec<u8> {
    let mut v = format!("{i:012}-{generation:04}-").into_bytes();
    v.resize(100, b'a' + (i % 26) as u8);
    v
}

#[test]
fn newer_format_version_is_a_clear_error() {
    use crate::env::{Env, StdEnv};
    let dir = tempfile::tempdir().unwrap();
    drop(Db::open(dir.path(), Options::default()).unwrap());
    // A MANIFEST whose header claims the next format version, made current.
    let path = crate::util::filename::manifest_path(dir.path(), 900);
    let mut log = crate::db::wal::LogWriter::new(StdEnv.create_writable(&path).unwrap());
    let mut header = crate::db::manifest::MANIFEST_MAGIC.to_vec();
    header.extend_from_slice(&(crate::db::manifest::MANIFEST_FORMAT_VERSION + 1).to_le_bytes());
    log.add_record(&header).unwrap();
    log.sync().unwrap();
    crate::db::manifest::set_current(&StdEnv, dir.path(), 900).unwrap();
    let err = Db::open(dir.path(), Options::default()).unwrap_err();
    assert!(
        matches!(
            err,
            Error::UnsupportedVersion {
                found: 3,
                supported: 2,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("MANIFEST-000900"), "{err}");
}

#[test]
fn checksummed_record_that_is_not_a_batch_is_named_by_file_and_offset() {
    use crate::env::{Env, StdEnv};
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), Options::default()).unwrap();
        db.put("kept", "1").unwrap();
    }
    let log = newest_log(dir.path());
    let offset = std::fs::metadata(&log).unwrap().len();
    let mut w = crate::db::wal::LogWriter::new(StdEnv.open_appendable(&log).unwrap());
    w.add_record(b"this is not a write batch").unwrap();
    w.sync().unwrap();
    drop(w);
    let err = Db::open(dir.path(), Options::default()).unwrap_err();
    match &err {
        crate::Error::Corruption {
            file,
            offset: at,
            why,
        } => {
            assert_eq!(file, &log);
            assert_eq!(*at, offset, "{err}");
            assert!(why.contains("write batch record"), "{err}");
        }
        other => panic!("expected corruption, got {other}"),
    }
    let opts = Options {
        best_effort_recovery: true,
        ..Default::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(db.get("kept").unwrap(), Some(b"1".to_vec()));
    assert!(
        db.recovery_report()
            .dropped
            .iter()
            .any(|d| d.contains("undecodable batch"))
    );
}

/// Compaction pointers (where each level's next compaction starts) used to be forgotten by
/// reopen: the fresh MANIFEST written at open did not carry them, so every restart began
/// compacting each level from its first table again.
#[test]
fn compaction_pointers_survive_reopen() {
    use crate::env::StdEnv;
    use crate::{util::filename, db::manifest};

    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small_options()).unwrap();
    for i in 0..60_000 {
        db.put(w1_key(i), w1_value(i, 0)).unwrap();
    }
    db.wait_for_compactions().unwrap();
    assert!(db.stats().levels[2].files > 0, "L1 was compacted into L2");
    drop(db);
    let db = Db::open(dir.path(), small_options()).unwrap();
    let number = manifest::read_current(&StdEnv, dir.path()).unwrap();
    let edits =
        manifest::read_manifest(&StdEnv, &filename::manifest_path(dir.path(), number)).unwrap();
    let levels: Vec<usize> = edits[0].compact_pointers.iter().map(|(l, _)| *l).collect();
    assert!(levels.contains(&0), "L0 pointer kept: {levels:?}");
    assert!(levels.contains(&1), "L1 pointer kept: {levels:?}");
    drop(db);
}
