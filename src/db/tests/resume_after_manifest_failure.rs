//! A full disk fails the MANIFEST append of a flush: writes stop; once space is back,
//! `Db::resume` starts a fresh MANIFEST (the MANIFEST writer refuses all work after a
//! failure) and a fresh WAL, writes and flushes work again without a reopen, the failed
//! flush's table (which the old MANIFEST may name) is gone once the new MANIFEST is current,
//! and every acknowledged write is there after a reopen.

use super::{named_tables, table_files};
use crate::env::fault::{FaultKind, FaultOp};
use crate::{Db, Error, Options};

fn key(i: u32) -> String {
    format!("key{i:05}")
}

#[test]
fn resume_after_a_failed_manifest_write_starts_a_new_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let (env, ctl) = super::fault_env();
    let opts = Options {
        env,
        ..Options::default()
    };
    {
        let db = Db::open(dir.path(), opts).unwrap();
        for i in 0..1000 {
            db.put(key(i), b"first").unwrap();
        }
        db.flush().unwrap();
        for i in 1000..2000 {
            db.put(key(i), b"second").unwrap();
        }
        let tables = table_files(dir.path());
        // The flush's fsyncs: the retired WAL, the new table, then the MANIFEST append's.
        ctl.fail_from_nth(FaultOp::Sync, 3, FaultKind::NoSpace);
        let err = db.flush().unwrap_err();
        assert!(matches!(err, Error::WritesStopped(_)), "{err}");
        assert!(err.to_string().contains("MANIFEST"), "{err}");
        // The record may be in the old MANIFEST whole (only its fsync failed), so the table
        // it names stays for now.
        let unsettled: Vec<u64> = table_files(dir.path())
            .difference(&tables)
            .copied()
            .collect();
        assert_eq!(unsettled.len(), 1, "{unsettled:?}");
        let stopped = db.put("during", b"x").unwrap_err();
        assert!(matches!(stopped, Error::WritesStopped(_)), "{stopped}");

        // Still full: resume fails, and nothing changes.
        assert!(db.resume().is_err());
        assert!(db.put("during", b"x").is_err());

        // Space is back.
        ctl.clear();
        db.resume().unwrap();
        // The new MANIFEST does not name the failed flush's table, and it is gone (the
        // flush, retried at once, writes a table of its own).
        assert!(!table_files(dir.path()).contains(&unsettled[0]));
        assert!(!named_tables(dir.path()).contains(&unsettled[0]));
        assert!(named_tables(dir.path()).is_superset(&tables));
        for i in 2000..3000 {
            db.put(key(i), b"third").unwrap();
        }
        // The memtable the failed flush left has been flushed again, and now the next one is.
        db.flush().unwrap();
        assert_eq!(table_files(dir.path()), named_tables(dir.path()));
        assert_eq!(table_files(dir.path()).len(), tables.len() + 2);
        for i in 3000..3500 {
            db.put(key(i), b"fourth").unwrap();
        }
        db.flush().unwrap();
        for i in 3500..3600 {
            db.put(key(i), b"fifth").unwrap();
        }
        assert_eq!(db.get(key(1500)).unwrap(), Some(b"second".to_vec()));
    }
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert!(db.recovery_report().orphan_tables_removed.is_empty());
    assert_eq!(db.get("during").unwrap(), None);
    for i in 0..3600 {
        let want: &[u8] = match i {
            0..1000 => b"first",
            1000..2000 => b"second",
            2000..3000 => b"third",
            3000..3500 => b"fourth",
            _ => b"fifth",
        };
        assert_eq!(db.get(key(i)).unwrap().as_deref(), Some(want), "{i}");
    }
}
