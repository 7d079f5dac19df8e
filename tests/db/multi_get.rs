//! `Db::multi_get`: answers in the caller's order (duplicates included), one consistent
//! read, and keys that fall into the same data block share one read of it.

use bloomkv::{Db, Options};

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

#[test]
fn answers_in_order_with_duplicates_absent_keys_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    for i in 0..100 {
        db.put(key(i), format!("v{i}")).unwrap();
    }
    db.flush().unwrap();
    db.delete(key(5)).unwrap(); // newest version in the memtable
    db.put(key(6), "new").unwrap();
    let keys = [key(7), key(5), key(500), key(6), key(7), key(0)];
    let got = db.multi_get(&keys).unwrap();
    let want: Vec<Option<Vec<u8>>> = keys.iter().map(|k| db.get(k).unwrap()).collect();
    assert_eq!(got, want);
    assert_eq!(got[0], Some(b"v7".to_vec()));
    assert_eq!(got[1], None);
    assert_eq!(got[3], Some(b"new".to_vec()));
    assert!(db.multi_get::<&[u8]>(&[]).unwrap().is_empty());
    assert!(matches!(
        db.multi_get(&[vec![0u8; 70_000]]),
        Err(bloomkv::Error::InvalidArgument(_))
    ));
}

#[test]
fn keys_in_one_block_share_a_read() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        block_cache_bytes: 0,
        block_bytes: 4096,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..1000 {
        db.put(key(i), [b'v'; 20]).unwrap();
    }
    db.compact().unwrap();
    // Ten neighbours: one or two blocks (of about 100 entries each), not ten reads.
    let keys: Vec<Vec<u8>> = (500..510).map(key).collect();
    let before = db.stats().data_blocks_read;
    let got = db.multi_get(&keys).unwrap();
    let batched = db.stats().data_blocks_read - before;
    assert!(got.iter().all(Option::is_some));
    let before = db.stats().data_blocks_read;
    for k in &keys {
        db.get(k).unwrap();
    }
    let single = db.stats().data_blocks_read - before;
    assert!(batched <= 2, "multi_get read {batched} blocks");
    assert_eq!(single, 10);
}
