//! A database of 200+ tables with `max_open_files` = 20 and a process limit of open files
//! just above what that needs: gets, scans, a full compaction and a reopen all work, since
//! lookups go through the table cache and compactions read their inputs one table at a time.

use std::collections::BTreeMap;

use bloomkv::{Db, Options};

use crate::common;

fn options() -> Options {
    Options {
        max_open_files: 20,
        memtable_bytes: 64 << 10,
        target_file_bytes: 16 << 10,
        max_bytes_for_level_base: 256 << 10,
        ..common::small_options()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("{:08x}", i.wrapping_mul(2_654_435_761)).into_bytes()
}

/// The process's open file descriptors.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

/// Lowers this process's open-file limit (soft and hard) to what 20 table readers plus the
/// engine's spare handles need, so a leak or an unbounded compaction fails with EMFILE. The
/// test runs in a process of its own, so nothing else runs under the lowered limit (or opens
/// files the count would include).
fn limit_open_files() {
    use rustix::process::{Resource, Rlimit, setrlimit};
    let limit = Some(20 + 64);
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: limit,
            maximum: limit,
        },
    )
    .unwrap();
}

#[test]
fn two_hundred_tables_with_twenty_handles() {
    if !common::is_alone() {
        common::run_alone(module_path!(), "two_hundred_tables_with_twenty_handles");
        return;
    }
    limit_open_files();
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let mut model = BTreeMap::new();
    for i in 0..50_000u32 {
        let v = format!("value-{i}-{}", "x".repeat(40)).into_bytes();
        db.put(key(i), &v).unwrap();
        model.insert(key(i), v);
    }
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let tables = db.stats().total_files();
    assert!(tables >= 200, "only {tables} tables");

    let check = |db: &Db| {
        for (i, (k, v)) in model.iter().enumerate() {
            if i % 7 == 0 {
                assert_eq!(db.get(k).unwrap().as_ref(), Some(v));
            }
        }
        assert_eq!(db.get(b"absent").unwrap(), None);
        let scanned: BTreeMap<Vec<u8>, Vec<u8>> = db.scan(..).map(|kv| kv.unwrap()).collect();
        assert_eq!(scanned, model);
        // Table readers beyond the cache's 20 are closed again; the engine's own few
        // handles (WAL, MANIFEST, LOCK) and the test harness's come on top.
        let fds = open_fds();
        assert!(
            fds < 20 + 30,
            "{fds} file descriptors open for {tables} tables"
        );
    };
    check(&db);

    db.compact_range(..).unwrap();
    let after = db.stats().total_files();
    assert!(after >= 200, "the full compaction wrote {after} tables");
    check(&db);
    drop(db);

    let db = Db::open(dir.path(), options()).unwrap();
    check(&db);
}
