//! An open that fails after WAL replay wrote tables (a later table, the new MANIFEST or the
//! CURRENT switch fails) removes what it wrote: before any reopen, the directory holds the
//! tables, WALs and MANIFEST of the last good state, and nothing else. Only when CURRENT
//! already names the new MANIFEST (the directory sync after the rename failed) do the new
//! tables stay, as that MANIFEST's.

use std::collections::BTreeSet;
use std::path::Path;

use super::{named_tables, table_files};
use crate::env::fault::{FaultKind, FaultOp};
use crate::util::filename::{FileType, parse_file_name};
use crate::{Db, Options};

fn key(i: u32) -> String {
    format!("key{i:05}")
}

/// Names of the WAL and MANIFEST files in `dir`.
fn logs_and_manifests(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| {
            matches!(
                parse_file_name(n),
                Some((FileType::Log | FileType::Manifest | FileType::Temp, _))
            )
        })
        .collect()
}

#[test]
fn a_failed_open_leaves_only_the_last_good_state() {
    let cases = [
        // The second table replay writes cannot be created.
        (FaultOp::Create, 2, false),
        // The new MANIFEST's directory entry cannot be synced.
        (FaultOp::SyncDir, 1, false),
        // The new MANIFEST's snapshot cannot be written.
        (FaultOp::Sync, 4, false),
        // CURRENT cannot be switched.
        (FaultOp::Rename, 1, false),
        // CURRENT was switched, but the directory sync after it failed.
        (FaultOp::SyncDir, 3, true),
    ];
    for (op, n, switched) in cases {
        let context = format!("{op:?} #{n}");
        let dir = tempfile::tempdir().unwrap();
        {
            // A big memtable: everything stays in the WAL.
            let db = Db::open(dir.path(), Options::default()).unwrap();
            for i in 0..3000u32 {
                db.put(key(i), [b'v'; 100]).unwrap();
            }
        }
        let tables_before = table_files(dir.path());
        let files_before = logs_and_manifests(dir.path());
        assert!(tables_before.is_empty());

        let (env, ctl) = super::fault_env();
        // A small memtable: replay writes several level-0 tables before the new MANIFEST.
        let opts = Options {
            env,
            memtable_bytes: 64 << 10,
            ..Options::default()
        };
        ctl.fail_nth(op, n, FaultKind::Eio);
        let err = Db::open(dir.path(), opts).unwrap_err();
        assert_eq!(ctl.injected(), 1, "{context}: {err}");
        assert_eq!(
            table_files(dir.path()),
            named_tables(dir.path()),
            "{context}: tables on disk are the MANIFEST's"
        );
        if switched {
            assert!(!table_files(dir.path()).is_empty(), "{context}");
        } else {
            assert_eq!(table_files(dir.path()), tables_before, "{context}");
            assert_eq!(logs_and_manifests(dir.path()), files_before, "{context}");
        }

        let db = Db::open(dir.path(), Options::default()).unwrap();
        assert!(
            db.recovery_report().orphan_tables_removed.is_empty(),
            "{context}: {:?}",
            db.recovery_report().orphan_tables_removed
        );
        for i in (0..3000u32).step_by(71) {
            assert_eq!(db.get(key(i)).unwrap(), Some(vec![b'v'; 100]), "{context}");
        }
    }
}
