//! Prefix scans with prefix filters give exactly what a model holds — across flushes,
//! compactions, deletes, range deletes, snapshots and both directions — while tables that
//! hold no key of an absent prefix are skipped without a data-block read; under another
//! extractor (after a reopen) nothing is skipped and the answers stay the same.

use std::collections::BTreeMap;
use std::sync::Arc;

use bloomkv::filter::{DelimiterPrefix, FixedPrefix, PrefixExtractor};
use bloomkv::sstable::FilterVerdict;
use bloomkv::{Db, Options};

use crate::common::{self, Rng};

fn options(extractor: Arc<dyn PrefixExtractor>) -> Options {
    Options {
        prefix_extractor: Some(extractor),
        memtable_bytes: 16 << 10,
        target_file_bytes: 8 << 10,
        ..common::small_options()
    }
}

/// Tenant `t` of 200; each table covers a stretch of tenants, so most tenants are absent
/// from most tables that span them only if the filter says so.
fn key(t: u64, i: u64) -> Vec<u8> {
    format!("t{t:03}/{i:05}").into_bytes()
}

fn keys(it: bloomkv::DbIter) -> Vec<Vec<u8>> {
    it.map(|kv| kv.unwrap().0).collect()
}

fn check(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>, prefix: &[u8]) {
    let want: Vec<Vec<u8>> = model
        .keys()
        .filter(|k| k.starts_with(prefix))
        .cloned()
        .collect();
    assert_eq!(
        keys(db.prefix(prefix)),
        want,
        "prefix {:?}",
        String::from_utf8_lossy(prefix)
    );
    let mut rev = want;
    rev.reverse();
    let got: Vec<Vec<u8>> = db.prefix(prefix).rev().map(|kv| kv.unwrap().0).collect();
    assert_eq!(
        got,
        rev,
        "reverse, prefix {:?}",
        String::from_utf8_lossy(prefix)
    );
}

#[test]
fn prefix_filters_skip_tables_and_never_change_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(Arc::new(DelimiterPrefix::new(b'/')))).unwrap();
    let mut model = BTreeMap::new();
    let mut rng = Rng::new(7);
    // Even tenants only: odd ones are absent prefixes inside every table's key range.
    for round in 0..6u64 {
        for _ in 0..1500 {
            let t = rng.below(100) * 2;
            let k = key(t, rng.below(50));
            let v = format!("r{round}").into_bytes();
            db.put(&k, &v).unwrap();
            model.insert(k, v);
        }
        for _ in 0..100 {
            let k = key(rng.below(100) * 2, rng.below(50));
            db.delete(&k).unwrap();
            model.remove(&k);
        }
        if round == 3 {
            db.delete_range(key(40, 0), key(44, 0)).unwrap();
            model.retain(|k, _| !(key(40, 0) <= *k && *k < key(44, 0)));
        }
        db.flush().unwrap();
    }
    db.wait_for_compactions().unwrap();
    let snap = db.snapshot();
    let at_snap = model.clone();
    for t in (0..200).step_by(2) {
        db.put(key(t, 99), "later").unwrap();
        model.insert(key(t, 99), b"later".to_vec());
    }

    for t in 0..200u64 {
        let p = format!("t{t:03}/").into_bytes();
        check(&db, &model, &p);
        let want: Vec<Vec<u8>> = at_snap
            .keys()
            .filter(|k| k.starts_with(&p))
            .cloned()
            .collect();
        assert_eq!(keys(snap.prefix(&p)), want, "snapshot, prefix t{t:03}/");
    }
    // Prefixes the extractor does not cut are read by key range, and still right.
    for p in [&b"t04"[..], b"t0", b"", b"t041/0001", b"zz"] {
        check(&db, &model, p);
    }

    // Absent tenants: tables spanning them are skipped, nearly all without a block read.
    let mut skipped = 0;
    let mut spanning = 0;
    let before = db.stats().data_blocks_read;
    for t in (1..200u64).step_by(2) {
        let p = format!("t{t:03}/");
        for probe in db.explain_prefix(&p) {
            match probe.verdict {
                FilterVerdict::Absent => skipped += 1,
                FilterVerdict::MayContain | FilterVerdict::OutOfRange => {}
                other => panic!("{p}: table {} says {other:?}", probe.file_number),
            }
            spanning += usize::from(probe.verdict != FilterVerdict::OutOfRange);
        }
        assert_eq!(db.prefix(&p).count(), 0);
    }
    let blocks = db.stats().data_blocks_read - before;
    assert!(spanning >= 90, "{spanning} tables span absent prefixes");
    assert!(
        skipped * 100 >= spanning * 95,
        "{skipped} of {spanning} skipped"
    );
    assert!(
        blocks * 20 < spanning as u64,
        "{blocks} blocks read for {spanning} tables"
    );
    drop(snap);
    drop(db);

    // Another extractor: tables' filters no longer apply; nothing is skipped, answers hold.
    let db = Db::open(dir.path(), options(Arc::new(FixedPrefix::new(5)))).unwrap();
    for t in 0..30u64 {
        let p = format!("t{t:03}/").into_bytes();
        check(&db, &model, &p);
        check(&db, &model, &p[..4]);
        assert!(
            db.explain_prefix(&p[..4])
                .iter()
                .all(|probe| probe.verdict != FilterVerdict::Absent)
        );
    }
}
