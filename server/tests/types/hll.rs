//! PFADD, PFCOUNT, PFMERGE: replies and sketch bytes as redis-server 7.0.15 gave them (the
//! table was recorded from it: sparse sketches byte for byte, the cached estimate, errors),
//! a dense sketch of a million elements equal to Redis's, the estimate within three standard
//! errors, and a model of the sets the sketches count.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use common::model::Rng;
use common::{Raw, TestServer, err, int, ok, words};
use redis::Value;

/// Runs `(command line, exact reply)` rows on one connection; `\\xNN` in a word is a byte.
fn run(raw: &mut Raw, table: &[(&str, &[u8])]) {
    for (line, want) in table {
        let w: Vec<Vec<u8>> = words(line).iter().map(|w| unescape(w)).collect();
        let refs: Vec<&[u8]> = w.iter().map(Vec::as_slice).collect();
        raw.expect(&refs, want);
    }
}

fn unescape(w: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(w.len());
    let mut i = 0;
    while i < w.len() {
        if w[i] == b'\\' && w.get(i + 1) == Some(&b'x') && i + 4 <= w.len() {
            let hex = std::str::from_utf8(&w[i + 2..i + 4]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 4;
        } else {
            out.push(w[i]);
            i += 1;
        }
    }
    out
}

/// Recorded from redis-server 7.0.15, in order on one connection.
#[rustfmt::skip]
const TABLE: &[(&str, &[u8])] = &[
    ("PFADD x", b":1\r\n"),
    ("GET x", b"$18\r\nHYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff\r\n"),
    ("PFADD x", b":0\r\n"),
    ("PFCOUNT x", b":0\r\n"),
    ("GET x", b"$18\r\nHYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff\r\n"),
    ("PFADD h a b c d e f g", b":1\r\n"),
    ("PFADD h a b c", b":0\r\n"),
    ("GET h", b"$38\r\nHYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80Fm\x80V\x0c\x80D<\x848\x80P\xb1\x84I\x8c\x80Bm\x80BZ\r\n"),
    ("PFCOUNT h", b":7\r\n"),
    ("GET h", b"$38\r\nHYLL\x01\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00Fm\x80V\x0c\x80D<\x848\x80P\xb1\x84I\x8c\x80Bm\x80BZ\r\n"),
    ("PFADD h2 c d e f g h i j k l m n o p", b":1\r\n"),
    ("PFCOUNT h h2", b":16\r\n"),
    ("PFCOUNT h nokey h2", b":16\r\n"),
    ("PFMERGE m h h2", b"+OK\r\n"),
    ("GET m", b"$65\r\nHYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80DE\x8cB&\x80@\x89\x88H_\x84@\xfc\x80@\xc4\x84K\\\x80D<\x848\x80B=\x80K\x83\x80B\xed\x84A\xfc\x8cC\x93\x84C\xf9\x80Bm\x80BZ\r\n"),
    ("PFCOUNT m", b":16\r\n"),
    ("PFMERGE m", b"+OK\r\n"),
    ("PFCOUNT nokey", b":0\r\n"),
    ("PFCOUNT nokey x", b":0\r\n"),
    ("SADD s m", b":1\r\n"),
    ("PFADD s a", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("PFCOUNT s", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("PFCOUNT x s", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("PFMERGE s x", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("PFMERGE x s", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("SET str hello", b"+OK\r\n"),
    ("PFADD str a", b"-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"),
    ("PFCOUNT str", b"-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"),
    ("PFCOUNT x str", b"-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"),
    ("PFMERGE x str", b"-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"),
    ("PFMERGE new", b"+OK\r\n"),
    ("GET new", b"$18\r\nHYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff\r\n"),
    ("PFADD", b"-ERR wrong number of arguments for 'pfadd' command\r\n"),
    ("PFCOUNT", b"-ERR wrong number of arguments for 'pfcount' command\r\n"),
    ("PFMERGE", b"-ERR wrong number of arguments for 'pfmerge' command\r\n"),
    ("SET bad \"HYLL\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\"", b"+OK\r\n"),
    ("PFADD bad a", b"-INVALIDOBJ Corrupted HLL object detected\r\n"),
    ("PFCOUNT bad", b":0\r\n"),
    ("PFMERGE bad2 bad", b"-INVALIDOBJ Corrupted HLL object detected\r\n"),
    ("SET bad2 \"HYLL\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\"", b"+OK\r\n"),
    ("PFADD bad2 a", b"-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"),
    ("SET bad3 \"HYLL\\x02\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\"", b"+OK\r\n"),
    ("PFCOUNT bad3", b"-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"),
    ("SET sk \"HYLL\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x80\\x7f\\xfe\\x80\"", b"+OK\r\n"),
    ("PFCOUNT sk", b":1\r\n"),
    ("GET sk", b"$19\r\nHYLL\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x7f\xfe\x80\r\n"),
    ("PFADD sk zzz", b":1\r\n"),
    ("PFADD k a", b":1\r\n"),
    ("EXPIRE k 100", b":1\r\n"),
    ("PFADD k b", b":1\r\n"),
    ("TTL k", b":100\r\n"),
    ("PFCOUNT k", b":2\r\n"),
    ("TTL k", b":100\r\n"),
];

#[test]
fn replies_and_sketch_bytes_match_redis() {
    let s = TestServer::start();
    let mut raw = s.raw();
    run(&mut raw, TABLE);
    // The same replies in RESP3 (integers, bulk strings and errors look alike there).
    let mut c = s.client3();
    assert_eq!(ok(&mut c, &["PFCOUNT", "h", "h2"]), int(16));
}

fn pfadd_many(c: &mut redis::Connection, key: &str, range: std::ops::Range<u64>) {
    let items: Vec<String> = range.map(|i| format!("item:{i}")).collect();
    for chunk in items.chunks(1000) {
        let _: Value = redis::cmd("PFADD").arg(key).arg(chunk).query(c).unwrap();
    }
}

/// FNV-1a style fold of the sketch bytes, computed the same way over redis-server's GET.
fn fold(b: &[u8]) -> u64 {
    b.iter().fold(0u64, |h, &x| {
        h.wrapping_mul(1_099_511_628_211) ^ u64::from(x)
    })
}

/// A million distinct elements: the dense sketch is byte for byte Redis's (so the count is
/// too), and the estimate is within three standard errors (1.04 / sqrt(16384) = 0.81%
/// each) of the truth.
#[test]
fn a_million_elements_match_redis_and_the_error_bound() {
    let s = TestServer::start();
    let mut c = s.client();
    pfadd_many(&mut c, "big", 0..1_000_000);
    assert_eq!(
        ok(&mut c, &["PFCOUNT", "big"]),
        int(993_158),
        "redis-server's count"
    );
    // After PFCOUNT the sketch holds the cached count too.
    let Value::BulkString(sketch) = ok(&mut c, &["GET", "big"]) else {
        panic!()
    };
    assert_eq!(sketch.len(), 12304, "dense");
    assert_eq!(
        fold(&sketch),
        17_284_972_397_138_030_650,
        "redis-server's sketch"
    );
    assert_eq!(
        ok(&mut c, &["PFCOUNT", "big"]),
        int(993_158),
        "redis-server's count"
    );
    let sigma = 1.04 / (16384f64).sqrt();
    let err = (993_158f64 - 1e6).abs() / 1e6;
    assert!(err < 3.0 * sigma, "error {err} past 3 sigma");
    // A sketch made by Redis (its bytes, as GET or DUMP's payload carries them) counts and
    // grows here: SET it under another key.
    redis::cmd("SET")
        .arg("copy")
        .arg(&sketch)
        .query::<()>(&mut c)
        .unwrap();
    assert_eq!(ok(&mut c, &["PFADD", "copy", "item:5"]), int(0));
    assert_eq!(ok(&mut c, &["PFCOUNT", "copy", "big"]), int(993_158));
}

#[derive(Default)]
struct Model {
    sets: BTreeMap<String, BTreeSet<u64>>,
}

/// Random PFADD, PFMERGE, PFCOUNT (one key and several), DEL and type errors against the
/// exact sets the sketches stand for, across a restart: re-adding known elements never
/// changes a sketch, PFCOUNT stays within 3% (+2) of the exact size, a merge counts the
/// union.
#[test]
fn sketches_follow_a_model_of_exact_sets_across_a_restart() {
    let mut s = TestServer::start();
    let mut m = Model::default();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let keys = ["a", "b", "c"];
    for _round in 0..2 {
        let mut c = s.client();
        for step in 0..300 {
            let key = keys[rng.below(3) as usize];
            match rng.below(6) {
                0 | 1 => {
                    let n = [1, 10, 500][rng.below(3) as usize];
                    let base = rng.below(20_000);
                    let items: Vec<u64> = (base..base + n).collect();
                    let words: Vec<String> = items.iter().map(|i| format!("e{i}")).collect();
                    // A key present in the model exists on the server (PFADD and PFMERGE
                    // create it, DEL removes it).
                    let known = m
                        .sets
                        .get(key)
                        .is_some_and(|set| items.iter().all(|i| set.contains(i)));
                    m.sets.entry(key.into()).or_default().extend(items);
                    let r: i64 = redis::cmd("PFADD")
                        .arg(key)
                        .arg(&words)
                        .query(&mut c)
                        .unwrap();
                    if known {
                        assert_eq!(r, 0, "step {step}: re-adding changed the sketch");
                    }
                }
                2 => {
                    let src = keys[rng.below(3) as usize];
                    ok(&mut c, &["PFMERGE", key, src]);
                    let union: BTreeSet<u64> = m
                        .sets
                        .get(key)
                        .into_iter()
                        .chain(m.sets.get(src))
                        .flatten()
                        .copied()
                        .collect();
                    m.sets.insert(key.into(), union);
                }
                3 => {
                    let Value::Int(got) = ok(&mut c, &["PFCOUNT", key]) else {
                        panic!()
                    };
                    let want = m.sets.get(key).map_or(0, BTreeSet::len) as f64;
                    assert!(
                        (got as f64 - want).abs() <= want * 0.03 + 2.0,
                        "step {step}: {got} for {want}"
                    );
                }
                4 => {
                    let Value::Int(got) = ok(&mut c, &["PFCOUNT", "a", "b", "c"]) else {
                        panic!()
                    };
                    let want = m.sets.values().flatten().collect::<BTreeSet<_>>().len() as f64;
                    assert!(
                        (got as f64 - want).abs() <= want * 0.03 + 2.0,
                        "step {step}: {got} for {want}"
                    );
                }
                _ => {
                    if rng.below(4) == 0 {
                        ok(&mut c, &["DEL", key]);
                        m.sets.remove(key);
                    } else {
                        ok(&mut c, &["SADD", "set", "x"]);
                        assert!(err(&mut c, &["PFADD", "set", "e"]).starts_with("WRONGTYPE"));
                    }
                }
            }
        }
        s.restart();
    }
}
