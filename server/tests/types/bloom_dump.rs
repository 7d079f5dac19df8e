//! BF.SCANDUMP and BF.LOADCHUNK: a filter dumped in pieces and loaded under another name
//! answers exactly as the original; damaged or foreign pieces are refused and change nothing.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common::{TestServer, bulk, err, int, ok};
use redis::Value;

/// Every (iterator, data) pair of a dump, in order, up to the final (0, "").
fn dump(c: &mut redis::Connection, key: &str) -> Vec<(i64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut iter = 0;
    loop {
        let (next, data): (i64, Vec<u8>) = redis::cmd("BF.SCANDUMP")
            .arg(key)
            .arg(iter)
            .query(c)
            .unwrap();
        if next == 0 {
            assert!(data.is_empty());
            return out;
        }
        assert!(out.len() < 10_000, "the dump does not end");
        out.push((next, data.clone()));
        iter = next;
    }
}

fn load(c: &mut redis::Connection, key: &str, iter: i64, data: &[u8]) -> redis::RedisResult<Value> {
    redis::cmd("BF.LOADCHUNK")
        .arg(key)
        .arg(iter)
        .arg(data)
        .query(c)
}

fn items(range: std::ops::Range<u32>) -> Vec<String> {
    range.map(|i| format!("https://example.org/{i}")).collect()
}

fn madd(c: &mut redis::Connection, key: &str, items: &[String]) {
    let mut cmd = redis::cmd("BF.MADD");
    cmd.arg(key).arg(items);
    let _: Value = cmd.query(c).unwrap();
}

fn mexists(c: &mut redis::Connection, key: &str, items: &[String]) -> Vec<i64> {
    redis::cmd("BF.MEXISTS")
        .arg(key)
        .arg(items)
        .query(c)
        .unwrap()
}

#[test]
fn a_filter_of_several_pieces_loads_back_and_answers_the_same() {
    let s = TestServer::start();
    let mut c = s.client();
    // ~3.6 MB of bits: the 30,000 items touch most of its 512-byte chunks, so the dump takes
    // several 1 MiB pieces.
    ok(&mut c, &["BF.RESERVE", "seen", "0.001", "2000000"]);
    let added = items(0..30_000);
    for batch in added.chunks(1_000) {
        madd(&mut c, "seen", batch);
    }
    let pieces = dump(&mut c, "seen");
    assert!(pieces.len() >= 4, "{} pieces", pieces.len());
    assert_eq!(pieces[0].0, 1, "the header comes first, at iterator 1");
    for (iter, data) in &pieces {
        assert_eq!(load(&mut c, "copy", *iter, data).unwrap(), Value::Okay);
    }
    assert_eq!(
        ok(&mut c, &["BF.INFO", "copy"]),
        ok(&mut c, &["BF.INFO", "seen"])
    );
    assert!(mexists(&mut c, "copy", &added).iter().all(|&x| x == 1));
    let absent = items(1_000_000..1_020_000);
    let (orig, copy) = (
        mexists(&mut c, "seen", &absent),
        mexists(&mut c, "copy", &absent),
    );
    assert_eq!(orig, copy, "the copy's false positives are the original's");
    assert_eq!(dump(&mut c, "copy"), pieces);
    // The copy lives on after a restart, and keeps growing.
    drop(c);
    let mut s = s;
    s.restart();
    let mut c = s.client();
    assert_eq!(
        ok(&mut c, &["BF.EXISTS", "copy", "https://example.org/29999"]),
        int(1)
    );
    assert_eq!(ok(&mut c, &["BF.ADD", "copy", "new"]), int(1));
    assert_eq!(ok(&mut c, &["BF.CARD", "copy"]), int(30_001));
}

#[test]
fn a_scaled_filter_keeps_its_sub_filters() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(
        &mut c,
        &["BF.RESERVE", "bf", "0.01", "100", "EXPANSION", "2"],
    );
    let added = items(0..1_000);
    madd(&mut c, "bf", &added);
    for (iter, data) in dump(&mut c, "bf") {
        ok_load(&mut c, "bf2", iter, &data);
    }
    assert_eq!(
        ok(&mut c, &["BF.INFO", "bf2", "FILTERS"]),
        ok(&mut c, &["BF.INFO", "bf", "FILTERS"])
    );
    assert!(mexists(&mut c, "bf2", &added).iter().all(|&x| x == 1));
}

fn ok_load(c: &mut redis::Connection, key: &str, iter: i64, data: &[u8]) {
    assert_eq!(load(c, key, iter, data).unwrap(), Value::Okay);
}

#[test]
fn an_empty_filter_is_a_header_alone() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["BF.RESERVE", "bf", "0.01", "1000", "NONSCALING"]);
    let pieces = dump(&mut c, "bf");
    assert_eq!(pieces.len(), 1);
    ok_load(&mut c, "bf2", 1, &pieces[0].1);
    assert_eq!(ok(&mut c, &["BF.EXISTS", "bf2", "x"]), int(0));
    assert_eq!(
        ok(&mut c, &["BF.INFO", "bf2", "EXPANSION"]),
        Value::Array(vec![Value::Nil])
    );
    // An iterator past the end, or negative, ends the dump.
    let v = ok(&mut c, &["BF.SCANDUMP", "bf", "999999999999"]);
    assert_eq!(v, Value::Array(vec![int(0), bulk("")]));
    let v = ok(&mut c, &["BF.SCANDUMP", "bf", "-5"]);
    assert_eq!(v, Value::Array(vec![int(0), bulk("")]));
}

#[test]
fn errors_are_redisbloom_s_and_bad_pieces_change_nothing() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(err(&mut c, &["BF.SCANDUMP", "nope", "0"]), "ERR not found");
    ok(&mut c, &["SET", "str", "x"]);
    assert!(err(&mut c, &["BF.SCANDUMP", "str", "0"]).starts_with("WRONGTYPE"));
    assert!(err(&mut c, &["BF.LOADCHUNK", "str", "1", "x"]).starts_with("WRONGTYPE"));
    ok(&mut c, &["BF.ADD", "bf", "a"]);
    assert_eq!(
        err(&mut c, &["BF.SCANDUMP", "bf", "x"]),
        "ERR Second argument must be numeric"
    );
    assert_eq!(
        err(&mut c, &["BF.LOADCHUNK", "bf", "x", "data"]),
        "ERR Second argument must be numeric"
    );
    assert!(err(&mut c, &["BF.SCANDUMP", "bf"]).contains("wrong number of arguments"));

    let pieces = dump(&mut c, "bf");
    let (header, piece) = (&pieces[0].1, &pieces[1]);
    // A piece before its header: there is no filter to load it into.
    let e = load(&mut c, "other", piece.0, &piece.1).unwrap_err();
    assert_eq!((e.code(), e.detail()), (Some("ERR"), Some("not found")));
    // A damaged header creates nothing.
    let mut bad = header.clone();
    bad[10] ^= 1;
    assert!(
        load(&mut c, "copy", 1, &bad)
            .unwrap_err()
            .to_string()
            .contains("received bad data")
    );
    assert_eq!(ok(&mut c, &["EXISTS", "copy"]), int(0));
    // A damaged piece writes nothing: the item stays absent from the copy.
    ok_load(&mut c, "copy", 1, header);
    for i in [0, 7, piece.1.len() / 2, piece.1.len() - 1] {
        let mut bad = piece.1.clone();
        bad[i] ^= 0x40;
        let e = load(&mut c, "copy", piece.0, &bad).unwrap_err().to_string();
        assert!(e.contains("received bad data"), "byte {i}: {e}");
    }
    assert_eq!(ok(&mut c, &["BF.EXISTS", "copy", "a"]), int(0));
    // A header where a piece belongs, or a piece of a filter of another size.
    assert!(
        load(&mut c, "copy", 1, header)
            .unwrap_err()
            .to_string()
            .contains("received bad data")
    );
    ok(&mut c, &["BF.RESERVE", "small", "0.5", "1"]);
    let e = load(&mut c, "small", piece.0, &piece.1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("Too big for current filter"), "{e}");
    ok_load(&mut c, "copy", piece.0, &piece.1);
    assert_eq!(ok(&mut c, &["BF.EXISTS", "copy", "a"]), int(1));
}

/// A sealed Bloom header for one sub-filter of `bits` bits, as BF.SCANDUMP writes one.
fn bloom_header(bits: u64) -> Vec<u8> {
    let mut o = b"bkvBF\x01".to_vec();
    o.extend_from_slice(&0.01f64.to_le_bytes());
    o.extend_from_slice(&100u64.to_le_bytes());
    o.extend_from_slice(&2u32.to_le_bytes());
    o.push(0);
    o.extend_from_slice(&0u64.to_le_bytes());
    o.extend_from_slice(&1u32.to_le_bytes());
    o.extend_from_slice(&100u64.to_le_bytes());
    o.extend_from_slice(&0u64.to_le_bytes());
    o.extend_from_slice(&bits.to_le_bytes());
    o.extend_from_slice(&7u32.to_le_bytes());
    o.extend_from_slice(&0.01f64.to_le_bytes());
    let crc = crc32fast::hash(&o);
    o.extend_from_slice(&crc.to_le_bytes());
    o
}

#[test]
fn a_header_of_a_sub_filter_larger_than_reserve_makes_is_refused() {
    let s = TestServer::start();
    let mut c = s.client();
    ok_load(&mut c, "fits", 1, &bloom_header(1024));
    assert_eq!(ok(&mut c, &["BF.EXISTS", "fits", "x"]), int(0));
    // 2^50 bits: the checksum is right, the size is past BF.RESERVE's largest (2^42).
    let e = load(&mut c, "huge", 1, &bloom_header(1 << 50)).unwrap_err();
    assert!(e.to_string().contains("received bad data"), "{e}");
    assert_eq!(ok(&mut c, &["EXISTS", "huge"]), int(0));
}
