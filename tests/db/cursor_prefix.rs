//! A cursor with a prefix bound (`ReadOptions::prefix`) shows exactly the live keys starting
//! with the prefix — forward, backward, after seeks, within lower/upper bounds and at a
//! snapshot — and, with a prefix extractor, reads no data block of the tables whose prefix
//! filter rules an absent prefix out.

use std::collections::BTreeMap;
use std::sync::Arc;

use bloomkv::filter::DelimiterPrefix;
use bloomkv::{Cursor, Db, Options, ReadOptions};

use crate::common::{self, Rng};

fn key(t: u64, i: u64) -> Vec<u8> {
    format!("t{t:03}/{i:05}").into_bytes()
}

fn forward(c: &mut Cursor) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    c.seek_to_first().unwrap();
    while c.valid() {
        out.push(c.key().to_vec());
        c.next().unwrap();
    }
    c.status().unwrap();
    out
}

fn backward(c: &mut Cursor) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    c.seek_to_last().unwrap();
    while c.valid() {
        out.push(c.key().to_vec());
        c.prev().unwrap();
    }
    c.status().unwrap();
    out
}

fn with_prefix<'m>(model: &'m BTreeMap<Vec<u8>, ()>, p: &'m [u8]) -> Vec<Vec<u8>> {
    model.keys().filter(|k| k.starts_with(p)).cloned().collect()
}

#[test]
fn a_prefix_bound_shows_exactly_the_prefix_and_skips_tables_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        prefix_extractor: Some(Arc::new(DelimiterPrefix::new(b'/'))),
        memtable_bytes: 16 << 10,
        target_file_bytes: 8 << 10,
        // Every block a walk touches is then read from its file and counted.
        block_cache_bytes: 0,
        ..common::small_options()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let mut model = BTreeMap::new();
    let mut rng = Rng::new(11);
    // Even tenants only: odd ones are absent prefixes inside the tables' key ranges.
    for _ in 0..4 {
        for _ in 0..1500 {
            let k = key(rng.below(100) * 2, rng.below(40));
            db.put(&k, b"v").unwrap();
            model.insert(k, ());
        }
        for _ in 0..100 {
            let k = key(rng.below(100) * 2, rng.below(40));
            db.delete(&k).unwrap();
            model.remove(&k);
        }
        db.flush().unwrap();
    }
    db.wait_for_compactions().unwrap();
    let snap = db.snapshot();
    let at_snap = model.clone();
    db.put(key(10, 99), b"later").unwrap();
    model.insert(key(10, 99), ());

    for t in [0u64, 10, 11, 98, 198, 199] {
        let p = format!("t{t:03}/").into_bytes();
        let want = with_prefix(&model, &p);
        let mut c = db.cursor(&ReadOptions::new().with_prefix(&p));
        assert_eq!(forward(&mut c), want, "prefix t{t:03}/");
        let mut rev = want.clone();
        rev.reverse();
        assert_eq!(backward(&mut c), rev, "backward, prefix t{t:03}/");
        // A seek before the prefix lands on its first key; one past it finds nothing.
        c.seek(b"t").unwrap();
        assert_eq!(c.valid().then(|| c.key().to_vec()), want.first().cloned());
        c.seek(b"u").unwrap();
        assert!(!c.valid());
        c.seek_for_prev(b"u").unwrap();
        assert_eq!(c.valid().then(|| c.key().to_vec()), want.last().cloned());

        let snap_want = with_prefix(&at_snap, &p);
        let mut c = db.cursor(&ReadOptions::new().with_snapshot(&snap).with_prefix(&p));
        assert_eq!(forward(&mut c), snap_want, "snapshot, prefix t{t:03}/");
    }

    // Bounds and a prefix together: the narrower of the two on each side.
    let p = b"t010/".to_vec();
    let (lo, hi) = (key(10, 5), key(10, 30));
    let want: Vec<_> = with_prefix(&model, &p)
        .into_iter()
        .filter(|k| *k >= lo && *k < hi)
        .collect();
    let opts = ReadOptions::new()
        .with_prefix(&p)
        .with_lower_bound(&lo)
        .with_upper_bound(&hi);
    assert_eq!(forward(&mut db.cursor(&opts)), want);
    let wide = ReadOptions::new()
        .with_prefix(&p)
        .with_lower_bound(b"a")
        .with_upper_bound(b"z");
    assert_eq!(forward(&mut db.cursor(&wide)), with_prefix(&model, &p));
    let outside = ReadOptions::new().with_prefix(&p).with_upper_bound(b"t005");
    assert!(forward(&mut db.cursor(&outside)).is_empty());

    // Absent tenants: the tables spanning them are left out, so the walks read almost no
    // data block (a prefix filter's false positive reads one).
    let before = db.stats().data_blocks_read;
    let mut spanning = 0;
    for t in (1..200u64).step_by(2) {
        let p = format!("t{t:03}/");
        spanning += db
            .explain_prefix(&p)
            .iter()
            .filter(|probe| probe.verdict != bloomkv::sstable::FilterVerdict::OutOfRange)
            .count();
        let mut c = db.cursor(&ReadOptions::new().with_prefix(&p));
        assert!(forward(&mut c).is_empty());
        assert!(backward(&mut c).is_empty());
    }
    let blocks = db.stats().data_blocks_read - before;
    assert!(spanning >= 50, "{spanning} tables span absent prefixes");
    assert!(
        blocks * 10 < spanning as u64,
        "{blocks} data blocks read for {spanning} tables spanning absent prefixes"
    );
}
