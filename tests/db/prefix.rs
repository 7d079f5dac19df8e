//! `Db::prefix` and `Snapshot::prefix`: exactly the live keys starting with the prefix, in
//! both directions, across tables and the memtable, with deletes and snapshots.

use std::collections::BTreeMap;

use bloomkv::{Db, Options};

fn keys(it: bloomkv::DbIter) -> Vec<Vec<u8>> {
    it.map(|kv| kv.unwrap().0).collect()
}

#[test]
fn prefix_reads_match_a_model_in_both_directions_and_at_a_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        memtable_bytes: 32 << 10,
        target_file_bytes: 16 << 10,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let mut model = BTreeMap::new();
    let prefixes: [&[u8]; 5] = [b"a", b"ab", b"b\xff", b"\xff", b"c"];
    for i in 0..3000u32 {
        let p = prefixes[(i % 5) as usize];
        let mut k = p.to_vec();
        k.extend_from_slice(format!("{:05}", i * 7919 % 3000).as_bytes());
        db.put(&k, b"v").unwrap();
        model.insert(k, ());
    }
    db.flush().unwrap();
    // Deletes and later writes in the memtable, over keys in tables.
    for (n, k) in model.keys().cloned().collect::<Vec<_>>().iter().enumerate() {
        if n % 3 == 0 {
            db.delete(k).unwrap();
            model.remove(k);
        }
    }
    let snap = db.snapshot();
    let at_snap = model.clone();
    db.put(b"ab-after", b"v").unwrap();
    model.insert(b"ab-after".to_vec(), ());
    for p in [&b""[..], b"a", b"ab", b"b", b"b\xff", b"\xff", b"c0", b"zz"] {
        let want: Vec<Vec<u8>> = model.keys().filter(|k| k.starts_with(p)).cloned().collect();
        assert_eq!(keys(db.prefix(p)), want, "prefix {p:?}");
        let mut rev = want.clone();
        rev.reverse();
        let got: Vec<Vec<u8>> = db.prefix(p).rev().map(|kv| kv.unwrap().0).collect();
        assert_eq!(got, rev, "reverse, prefix {p:?}");
        let want_snap: Vec<Vec<u8>> = at_snap
            .keys()
            .filter(|k| k.starts_with(p))
            .cloned()
            .collect();
        assert_eq!(keys(snap.prefix(p)), want_snap, "snapshot, prefix {p:?}");
    }
}
