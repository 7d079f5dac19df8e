//! Recovery from the WAL: unflushed writes survive a reopen, and a WAL cut at any byte of its
//! last record opens with exactly the complete records.

use std::path::{Path, PathBuf};

use bloomkv::{Db, Options};

use crate::common::copy_dir;

fn newest_log(dir: &Path) -> PathBuf {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    logs.pop().expect("a WAL file")
}

#[test]
fn unflushed_writes_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), Options::default()).unwrap();
        for i in 0..1000u32 {
            db.put(i.to_be_bytes(), i.to_le_bytes()).unwrap();
        }
        for i in (0..1000u32).step_by(3) {
            db.delete(i.to_be_bytes()).unwrap();
        }
    }
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(db.recovery_report().records, 1334);
    for i in 0..1000u32 {
        let want = (i % 3 != 0).then(|| i.to_le_bytes().to_vec());
        assert_eq!(db.get(i.to_be_bytes()).unwrap(), want, "key {i}");
    }
}

#[test]
fn wal_truncated_at_every_byte_of_last_record() {
    let dir = tempfile::tempdir().unwrap();
    let (before, after);
    {
        let db = Db::open(dir.path(), Options::default()).unwrap();
        for i in 0..10u32 {
            db.put(format!("k{i}"), format!("v{i}")).unwrap();
        }
        before = std::fs::metadata(newest_log(dir.path())).unwrap().len();
        let mut batch = bloomkv::WriteBatch::new();
        batch.put("last-a", vec![7u8; 40]);
        batch.put("last-b", "b");
        batch.delete("k0");
        db.write(batch).unwrap();
        after = std::fs::metadata(newest_log(dir.path())).unwrap().len();
    }
    assert!(after > before);
    for cut in before..=after {
        let work = tempfile::tempdir().unwrap();
        copy_dir(dir.path(), work.path());
        let log = newest_log(work.path());
        let f = std::fs::OpenOptions::new().write(true).open(&log).unwrap();
        f.set_len(cut).unwrap();
        drop(f);
        let db = Db::open(work.path(), Options::default())
            .unwrap_or_else(|e| panic!("open with WAL cut at {cut}: {e}"));
        for i in 1..10u32 {
            assert_eq!(
                db.get(format!("k{i}")).unwrap(),
                Some(format!("v{i}").into_bytes())
            );
        }
        let complete = cut == after;
        assert_eq!(
            db.get("last-a").unwrap().is_some(),
            complete,
            "cut at {cut}"
        );
        assert_eq!(
            db.get("last-b").unwrap().is_some(),
            complete,
            "cut at {cut}"
        );
        assert_eq!(db.get("k0").unwrap().is_none(), complete, "cut at {cut}");
        // A torn tail is reported, never silently ignored.
        if !complete && cut > before {
            assert!(!db.recovery_report().dropped.is_empty(), "cut at {cut}");
        }
    }
}

#[test]
fn corrupt_middle_record_is_an_error_unless_best_effort() {
    let dir = tempfile::tempdir().unwrap();
    let mid;
    {
        let db = Db::open(dir.path(), Options::default()).unwrap();
        for i in 0..5u32 {
            db.put(format!("a{i}"), vec![1u8; 100]).unwrap();
        }
        mid = std::fs::metadata(newest_log(dir.path())).unwrap().len();
        db.put("middle", vec![2u8; 100]).unwrap();
        for i in 0..5u32 {
            db.put(format!("z{i}"), vec![3u8; 100]).unwrap();
        }
    }
    let log = newest_log(dir.path());
    let mut bytes = std::fs::read(&log).unwrap();
    bytes[mid as usize + 20] ^= 0x40;
    std::fs::write(&log, &bytes).unwrap();
    let err = Db::open(dir.path(), Options::default()).unwrap_err();
    assert!(err.is_corruption(), "{err}");
    assert!(err.to_string().contains(".log"), "{err}");
    let opts = Options {
        best_effort_recovery: true,
        ..Default::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(db.get("middle").unwrap(), None);
    assert_eq!(db.get("a4").unwrap(), Some(vec![1u8; 100]));
    assert_eq!(db.get("z4").unwrap(), Some(vec![3u8; 100]));
    assert!(!db.recovery_report().dropped.is_empty());
}

#[test]
fn reopening_often_keeps_small_wal_contents_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..6u32 {
        let db = Db::open(dir.path(), Options::default()).unwrap();
        db.put(format!("k{round}"), format!("v{round}")).unwrap();
        for r in 0..=round {
            assert_eq!(
                db.get(format!("k{r}")).unwrap(),
                Some(format!("v{r}").into_bytes())
            );
        }
        // Nothing was big enough to become a table: it all lives in the WAL and memtable.
        assert_eq!(db.stats().total_files(), 0, "round {round}");
        assert_eq!(db.recovery_report().records_carried, u64::from(round));
    }
    let logs = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "log")
        })
        .count();
    assert_eq!(
        logs, 1,
        "old WALs are deleted once their records are carried over"
    );
}
