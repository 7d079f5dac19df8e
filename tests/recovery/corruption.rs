//! Corruption: flip, zero or cut bytes in every kind of file of a database (WAL, each SSTable
//! region, MANIFEST, CURRENT) and check the outcome is a `Corruption` error naming the damaged
//! file, or correct answers — never a panic, a hang, a wrong value or lost data passed off as
//! a clean open. A damaged filter only costs speed. Then `bloomkv::repair` brings back
//! everything outside the damage.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bloomkv::sstable::block::{Block, BlockIter, bytewise};
use bloomkv::sstable::format::{BlockHandle, FOOTER_LEN, Footer};
use bloomkv::{Compression, Db, Error, Options};

use crate::common::Map;
use crate::common::copy_dir;

fn options() -> Options {
    Options {
        memtable_bytes: 16 * 1024,
        target_file_bytes: 16 * 1024,
        block_bytes: 1024,
        // No automatic compaction: the shape of the tree stays what the setup made.
        level0_compaction_trigger: 100,
        level0_slowdown_writes: 100,
        level0_stop_writes: 200,
        // The region walk below reads blocks raw (compressed blocks have their own
        // corruption tests in src/sstable/tests).
        compression: Compression::None,
        ..Default::default()
    }
}

fn value(i: u64, round: u64) -> Vec<u8> {
    format!("value-{i}-{round}-{}", "y".repeat((i % 60) as usize)).into_bytes()
}

/// A database with tables in level 1 (compacted), tables in level 0 (overwrites and
/// deletes), and a WAL holding the last writes; returns it closed, with its model.
fn build(dir: &Path) -> Map {
    let mut model = Map::new();
    let db = Db::open(dir, options()).unwrap();
    for i in 0..1500u64 {
        let k = format!("key{i:05}").into_bytes();
        db.put(&k, value(i, 0)).unwrap();
        model.insert(k, value(i, 0));
    }
    db.compact().unwrap();
    for i in (0..1500u64).step_by(3) {
        let k = format!("key{i:05}").into_bytes();
        if i % 2 == 0 {
            db.delete(&k).unwrap();
            model.remove(&k);
        } else {
            db.put(&k, value(i, 1)).unwrap();
            model.insert(k, value(i, 1));
        }
    }
    db.flush().unwrap();
    for i in 0..60u64 {
        let k = format!("wal{i:03}").into_bytes();
        db.put(&k, value(i, 2)).unwrap();
        model.insert(k, value(i, 2));
    }
    drop(db);
    model
}

fn files_with(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.to_string_lossy().ends_with(suffix)
                || p.file_name().unwrap().to_string_lossy().starts_with(suffix)
        })
        .collect();
    v.sort();
    v
}

#[derive(Clone, Copy, Debug)]
enum Damage {
    Flip,
    Zero,
    Truncate,
}

fn damage(path: &Path, at: usize, len: usize, how: Damage) {
    let mut bytes = std::fs::read(path).unwrap();
    match how {
        Damage::Flip => {
            let i = (at + len / 2).min(bytes.len() - 1);
            bytes[i] ^= 0x5a
        }
        Damage::Zero => {
            let end = (at + len).min(bytes.len()).min(at + 16);
            bytes[at..end].fill(0);
        }
        Damage::Truncate => bytes.truncate(at),
    }
    std::fs::write(path, bytes).unwrap();
}

/// The regions of a table: every data block, the filter, properties, metaindex, index and
/// the footer, as (name, offset, length).
fn table_regions(path: &Path) -> Vec<(String, usize, usize)> {
    let bytes = std::fs::read(path).unwrap();
    let footer_at = bytes.len() - FOOTER_LEN;
    let footer = Footer::decode(&bytes[footer_at..]).unwrap();
    let block = |h: BlockHandle| {
        Arc::new(
            Block::new(bytes[h.offset as usize..(h.offset + h.size) as usize].to_vec()).unwrap(),
        )
    };
    let mut out = Vec::new();
    let mut it = BlockIter::new(block(footer.metaindex), bytewise);
    it.seek_to_first().unwrap();
    while it.valid() {
        let h = BlockHandle::decode_exact(it.value()).unwrap();
        let name = String::from_utf8_lossy(it.key()).to_string();
        out.push((name, h.offset as usize, h.size as usize + 5));
        it.advance().unwrap();
    }
    let mut it = BlockIter::new(block(footer.index), bloomkv::sstable::internal_key::compare);
    it.seek_to_first().unwrap();
    let mut n = 0;
    while it.valid() {
        let h = BlockHandle::decode_exact(it.value()).unwrap();
        // First, a middle one and the last data block are enough.
        out.push((
            format!("data block {n}"),
            h.offset as usize,
            h.size as usize + 5,
        ));
        n += 1;
        it.advance().unwrap();
    }
    let data: Vec<_> = out
        .iter()
        .filter(|r| r.0.starts_with("data"))
        .cloned()
        .collect();
    out.retain(|r| !r.0.starts_with("data"));
    out.push(data[0].clone());
    out.push(data[data.len() / 2].clone());
    out.push(data[data.len() - 1].clone());
    out.push((
        "metaindex".into(),
        footer.metaindex.offset as usize,
        footer.metaindex.size as usize + 5,
    ));
    out.push((
        "index".into(),
        footer.index.offset as usize,
        footer.index.size as usize + 5,
    ));
    out.push(("footer".into(), footer_at, FOOTER_LEN));
    out
}

/// An error is acceptable only if it is a `Corruption` naming `file`.
fn check_error(e: &Error, file: &Path, context: &str) {
    match e {
        Error::Corruption { file: f, .. } => assert_eq!(
            f.file_name(),
            file.file_name(),
            "{context}: corruption blamed on the wrong file: {e}"
        ),
        _ => panic!(
            "{context}: expected a corruption naming {}, got {e}",
            file.display()
        ),
    }
}

/// Every get and a full scan: each answer is right or a corruption naming `file`. Returns
/// how many keys answered with an error.
fn check_answers(db: &Db, model: &Map, file: &Path, context: &str) -> usize {
    let mut errors = 0;
    for (k, v) in model {
        match db.get(k) {
            Ok(got) => assert_eq!(
                got.as_ref(),
                Some(v),
                "{context}: wrong value for {}",
                String::from_utf8_lossy(k)
            ),
            Err(e) => {
                check_error(&e, file, context);
                errors += 1;
            }
        }
    }
    for i in 0..1500u64 {
        // Deleted and never-written keys stay absent.
        let k = format!("key{i:05}x").into_bytes();
        if let Ok(got) = db.get(&k) {
            assert_eq!(got, None, "{context}");
        }
    }
    let expected: Vec<(Vec<u8>, Vec<u8>)> =
        model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let mut n = 0;
    for item in db.scan(..) {
        match item {
            Ok(kv) => {
                assert_eq!(Some(&kv), expected.get(n), "{context}: scan item {n}");
                n += 1;
            }
            Err(e) => {
                check_error(&e, file, context);
                return errors + 1;
            }
        }
    }
    assert_eq!(
        n,
        expected.len(),
        "{context}: scan ended early without an error"
    );
    errors
}

fn pristine() -> (tempfile::TempDir, Map) {
    let dir = tempfile::tempdir().unwrap();
    let model = build(dir.path());
    (dir, model)
}

#[test]
fn damaged_table_regions_give_corruption_or_right_answers() {
    let (src, model) = pristine();
    let tables = files_with(src.path(), ".sst");
    assert!(tables.len() >= 3, "setup made {} tables", tables.len());
    // The oldest table is in level 1; the newest holds the WAL replayed at the next open
    // and does not exist yet, so the last one listed is a level-0 flush.
    let picks = [tables[0].clone(), tables[tables.len() - 1].clone()];
    let mut cases = 0;
    for table in &picks {
        for (region, at, len) in table_regions(table) {
            for how in [Damage::Flip, Damage::Zero, Damage::Truncate] {
                let dir = tempfile::tempdir().unwrap();
                copy_dir(src.path(), dir.path());
                let victim = dir.path().join(table.file_name().unwrap());
                damage(&victim, at, len, how);
                let context = format!("{} {region} {how:?}", victim.display());
                let db = Db::open(dir.path(), options())
                    .unwrap_or_else(|e| panic!("{context}: open: {e}"));
                let errors = check_answers(&db, &model, &victim, &context);
                if region.starts_with("filter.") && !matches!(how, Damage::Truncate) {
                    // A damaged filter costs only the filter.
                    assert_eq!(errors, 0, "{context}: damaged filter caused errors");
                    assert!(
                        db.stats().filter_unavailable > 0,
                        "{context}: filter_unavailable"
                    );
                } else {
                    assert!(errors > 0, "{context}: damage went unnoticed");
                }
                cases += 1;
            }
        }
    }
    eprintln!("table damage: {cases} cases");
}

#[test]
fn damaged_wal_is_reported_or_rejected() {
    let (src, model) = pristine();
    let logs = files_with(src.path(), ".log");
    let log = logs.last().unwrap();
    let size = std::fs::metadata(log).unwrap().len() as usize;
    assert!(size > 1000);
    let mut rejected = 0;
    for at in [0, 7, size / 3, size / 2, size - 40, size - 3] {
        for how in [Damage::Flip, Damage::Zero, Damage::Truncate] {
            let dir = tempfile::tempdir().unwrap();
            copy_dir(src.path(), dir.path());
            let victim = dir.path().join(log.file_name().unwrap());
            damage(&victim, at, 8, how);
            let context = format!("WAL {how:?} at {at}");
            match Db::open(dir.path(), options()) {
                Err(e) => {
                    check_error(&e, &victim, &context);
                    rejected += 1;
                }
                Ok(db) => {
                    // Whatever was dropped from the log is reported; all else is right.
                    let mut missing = 0;
                    for (k, v) in &model {
                        let got = db.get(k).unwrap();
                        if got.as_ref() != Some(v) {
                            assert!(k.starts_with(b"wal"), "{context}: table key wrong");
                            assert_eq!(got, None, "{context}: wrong value, not a lost one");
                            missing += 1;
                        }
                    }
                    if matches!(how, Damage::Truncate) {
                        // A log cut at a record boundary looks exactly like a crash before the
                        // later writes: only a suffix of the writes may be missing.
                        let present: Vec<bool> = (0..60u64)
                            .map(|i| db.get(format!("wal{i:03}")).unwrap().is_some())
                            .collect();
                        assert!(
                            present.windows(2).all(|w| w[0] || !w[1]),
                            "{context}: {present:?}"
                        );
                    } else if missing > 0 {
                        assert!(
                            !db.recovery_report().dropped.is_empty(),
                            "{context}: silent loss"
                        );
                    }
                }
            }
        }
    }
    assert!(rejected > 0);
}

#[test]
fn damaged_manifest_or_current_is_rejected_never_misread() {
    let (src, model) = pristine();
    // Reopen once so the manifest is the compact one `open` writes (header + one snapshot).
    drop(Db::open(src.path(), options()).unwrap());
    let manifest = files_with(src.path(), "MANIFEST-").pop().unwrap();
    let size = std::fs::metadata(&manifest).unwrap().len() as usize;
    let current = src.path().join("CURRENT");
    let mut cases = Vec::new();
    for at in [0, 4, 7, 12, 20, size / 2, size - 10, size - 1] {
        for how in [Damage::Flip, Damage::Zero, Damage::Truncate] {
            cases.push((manifest.clone(), at, how));
        }
    }
    for at in [0, 3, 9, 15] {
        for how in [Damage::Flip, Damage::Zero, Damage::Truncate] {
            cases.push((current.clone(), at, how));
        }
    }
    let mut rejected = 0;
    for (file, at, how) in cases {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(src.path(), dir.path());
        let victim = dir.path().join(file.file_name().unwrap());
        damage(&victim, at, 4, how);
        let context = format!("{} {how:?} at {at}", victim.display());
        match Db::open(dir.path(), options()) {
            Err(e) => {
                check_error(&e, &victim, &context);
                rejected += 1;
                // Nothing was deleted: repair can still bring everything back.
                let report = bloomkv::repair(dir.path()).unwrap();
                assert!(report.tables_dropped.is_empty(), "{context}: {report:?}");
                let db = Db::open(dir.path(), options()).unwrap();
                let errors = check_answers(&db, &model, &victim, &format!("{context}, repaired"));
                assert_eq!(errors, 0, "{context}: repaired database has errors");
            }
            Ok(db) => {
                let errors = check_answers(&db, &model, &victim, &context);
                assert_eq!(errors, 0, "{context}");
            }
        }
    }
    assert!(rejected > 10);
}

#[test]
fn missing_current_with_tables_is_an_error_not_a_new_database() {
    let (src, model) = pristine();
    std::fs::remove_file(src.path().join("CURRENT")).unwrap();
    let e = Db::open(src.path(), options()).unwrap_err();
    check_error(&e, &src.path().join("CURRENT"), "missing CURRENT");
    assert!(
        files_with(src.path(), ".sst").len() >= 3,
        "tables were deleted"
    );
    bloomkv::repair(src.path()).unwrap();
    let db = Db::open(src.path(), options()).unwrap();
    assert_eq!(check_answers(&db, &model, Path::new("none"), "repaired"), 0);
}

#[test]
fn repair_salvages_everything_outside_a_damaged_block() {
    let (src, model) = pristine();
    let tables = files_with(src.path(), ".sst");
    let victim = tables[0].clone();
    let regions = table_regions(&victim);
    let (_, at, len) = regions
        .iter()
        .find(|r| r.0 == "data block 0")
        .cloned()
        .unwrap();
    damage(&victim, at, len, Damage::Flip);
    // Keys that live in the damaged block: those the damaged database cannot answer.
    let db = Db::open(src.path(), options()).unwrap();
    let lost: Vec<Vec<u8>> = model
        .keys()
        .filter(|k| db.get(k).is_err())
        .cloned()
        .collect();
    assert!(!lost.is_empty());
    drop(db);
    let report = bloomkv::repair(src.path()).unwrap();
    assert!(report.bytes_skipped > 0, "{report:?}");
    assert!(report.entries_salvaged > 0, "{report:?}");
    let db = Db::open(src.path(), options()).unwrap();
    for (k, v) in &model {
        let got = db.get(k).unwrap();
        if lost.contains(k) {
            // The damaged block is gone; what answers now is an older version or nothing,
            // never a value that was not written.
            continue;
        }
        assert_eq!(got.as_ref(), Some(v), "key {}", String::from_utf8_lossy(k));
    }
    // The repaired database is whole again: scans and compactions run clean.
    db.scan(..).for_each(|kv| drop(kv.unwrap()));
    db.compact().unwrap();
}

/// Regression: a damaged last MANIFEST record that is all there (not cut short) was taken
/// for a torn tail and dropped. When it was a flush's edit, the WAL it covered was already
/// deleted, so the open "succeeded" without the flushed data and then deleted the table as an
/// orphan. It is an error now, and repair brings everything back.
#[test]
fn damaged_last_manifest_edit_is_an_error_not_a_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let mut model = Map::new();
    {
        let db = Db::open(dir.path(), options()).unwrap();
        for i in 0..300u64 {
            let k = format!("key{i:05}").into_bytes();
            db.put(&k, value(i, 0)).unwrap();
            model.insert(k, value(i, 0));
        }
        db.flush().unwrap();
    }
    let manifest = files_with(dir.path(), "MANIFEST-").pop().unwrap();
    let size = std::fs::metadata(&manifest).unwrap().len() as usize;
    // The flush's edit is the last record; damage a byte of its payload.
    damage(&manifest, size - 6, 2, Damage::Flip);
    let e = Db::open(dir.path(), options()).unwrap_err();
    check_error(&e, &manifest, "damaged last edit");
    assert!(
        !files_with(dir.path(), ".sst").is_empty(),
        "tables were deleted"
    );
    let report = bloomkv::repair(dir.path()).unwrap();
    assert!(report.tables_dropped.is_empty(), "{report:?}");
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(check_answers(&db, &model, &manifest, "repaired"), 0);
}
