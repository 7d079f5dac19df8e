//! Regression tests for compaction bugs found in review.

use std::sync::mpsc;
use std::time::Duration;

use bloomkv::{Db, Options};

use crate::common::{small_options, w1_key, w1_value};

/// `level0_stop_writes` below `level0_compaction_trigger` used to deadlock: writers waited
/// for L0 to shrink while L0's score never reached 1, so no compaction ran.
#[test]
fn stop_writes_below_trigger_is_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        memtable_bytes: 4 << 10,
        level0_compaction_trigger: 8,
        level0_stop_writes: 3,
        ..small_options()
    };
    // Such options once made writers wait forever; they are now refused, naming the field.
    let err = Db::open(dir.path(), opts).unwrap_err();
    assert!(matches!(err, bloomkv::Error::InvalidArgument(_)), "{err}");
    assert!(err.to_string().contains("level0_stop_writes"), "{err}");
    // The nearest valid setting (stop just above the trigger) writes and compacts.
    let opts = Options {
        memtable_bytes: 4 << 10,
        level0_compaction_trigger: 2,
        level0_slowdown_writes: 2,
        level0_stop_writes: 3,
        ..small_options()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let (tx, rx) = mpsc::channel();
    let writer = db.clone();
    std::thread::spawn(move || {
        for i in 0..5_000 {
            writer.put(w1_key(i), w1_value(i, 0)).unwrap();
        }
        tx.send(()).unwrap();
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("writers stalled forever");
    db.wait_for_compactions().unwrap();
    assert!(db.stats().levels[0].files < 3);
    for i in (0..5_000).step_by(7) {
        assert_eq!(db.get(w1_key(i)).unwrap(), Some(w1_value(i, 0)));
    }
}

/// `compact()` returns only after a full compaction that started after the call: a caller
/// whose request arrives while another manual compaction runs gets a run of its own (the
/// running one used to clear the request flag, so the caller's own flushed table could be
/// left in L0).
#[test]
fn concurrent_manual_compactions_each_cover_their_callers_writes() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small_options()).unwrap();
    // Some data below, so a manual compaction has work to do.
    for i in 0..20_000 {
        db.put(w1_key(i), w1_value(i, 0)).unwrap();
    }
    let threads: Vec<_> = (0..2u64)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                for round in 0..8u64 {
                    let k = format!("caller{t}-{round:03}");
                    db.put(&k, b"v").unwrap();
                    db.compact().unwrap();
                    let trace = db.get_explained(&k).unwrap();
                    assert_eq!(trace.value, Some(b"v".to_vec()));
                    let found =
                        trace.tables.iter().find(|p| p.found).unwrap_or_else(|| {
                            panic!("{k} not in a table after compact(): {trace:?}")
                        });
                    assert!(found.level >= 1, "{k} still in L0 after compact()");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

/// A scan opens a deeper level's tables lazily. A table trivially moved down after the scan
/// began, and then compacted away, used to be deleted under the scan: the move gave the new
/// version a second, separate owner of the file, and that owner deleted it while the scan's
/// version still listed it under the first one.
#[test]
fn scan_survives_trivial_move_then_compaction_of_an_unopened_table() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        memtable_bytes: 1 << 20,
        level0_compaction_trigger: 1,
        max_bytes_for_level_base: 16 << 10,
        target_file_bytes: 1 << 20,
        block_cache_bytes: 0,
        ..small_options()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let table_of = |db: &Db, key: &[u8]| {
        db.stats()
            .tables
            .iter()
            .find(|t| t.smallest_key.as_slice() <= key && key <= t.largest_key.as_slice())
            .map(|t| (t.level, t.file_number))
    };
    let fill = |prefix: &str, n: u32| {
        for i in 0..n {
            db.put(format!("{prefix}{i:04}"), [b'x'; 100]).unwrap();
        }
        db.flush().unwrap();
        db.wait_for_compactions().unwrap();
    };
    fill("a", 50);
    fill("b", 50);
    let (level_b, file_b) = table_of(&db, b"b0000").unwrap();
    assert_eq!(level_b, 1, "precondition: b's table moved to L1");
    assert_eq!(table_of(&db, b"a0000").unwrap().0, 1);

    // The scan is positioned in a's table; b's table is not opened yet.
    let mut scan = db.scan(..);
    assert_eq!(scan.next().unwrap().unwrap().0, b"a0000".to_vec());

    // L1 overflows: its tables move down to L2 unchanged, b's among them.
    fill("c", 200);
    assert_eq!(
        table_of(&db, b"b0000").unwrap(),
        (2, file_b),
        "precondition: b's table trivially moved to L2"
    );
    // A full compaction rewrites every table: b's old file is obsolete.
    db.compact().unwrap();
    assert_ne!(table_of(&db, b"b0000").unwrap().1, file_b);

    let rest: Vec<Vec<u8>> = scan.map(|kv| kv.unwrap().0).collect();
    assert_eq!(rest.len(), 99, "a0001..a0049 and b0000..b0049");
    assert_eq!(rest.last().unwrap(), &b"b0049".to_vec());
}
