//! The rest of the set commands: SPOP, SRANDMEMBER, SMOVE, SINTER/SUNION/SDIFF and their
//! STORE forms, SINTERCARD, with Redis's replies and errors; members longer than the engine's
//! key limit.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common;

use std::collections::BTreeSet;

use common::{TestServer, err, int, ok};
use redis::Value;

const WT: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

fn members(v: Value) -> Vec<String> {
    match v {
        Value::Array(a) | Value::Set(a) => a
            .into_iter()
            .map(|x| match x {
                Value::BulkString(b) => String::from_utf8(b).unwrap(),
                other => panic!("not a string: {other:?}"),
            })
            .collect(),
        other => panic!("not an array: {other:?}"),
    }
}

fn sorted(v: Value) -> Vec<String> {
    let mut m = members(v);
    m.sort();
    m
}

fn sadd(c: &mut redis::Connection, key: &str, ms: &[&str]) {
    let mut words = vec!["SADD", key];
    words.extend_from_slice(ms);
    ok(c, &words);
}

#[test]
fn spop_single_and_counted() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["SPOP", "none"]), Value::Nil);
    assert_eq!(ok(&mut c, &["SPOP", "none", "5"]), Value::Array(vec![]));
    sadd(&mut c, "s", &["a", "b", "c"]);
    let mut popped = BTreeSet::new();
    for left in [2, 1, 0] {
        let Value::BulkString(m) = ok(&mut c, &["SPOP", "s"]) else {
            panic!()
        };
        assert!(popped.insert(m));
        assert_eq!(ok(&mut c, &["SCARD", "s"]), int(left));
    }
    assert_eq!(ok(&mut c, &["EXISTS", "s"]), int(0));
    let letters: Vec<String> = ('a'..='z').map(|l| l.to_string()).collect();
    let refs: Vec<&str> = letters.iter().map(String::as_str).collect();
    sadd(&mut c, "s", &refs);
    let mut all = Vec::new();
    for n in ["11", "9", "0", "4", "1", "0", "1", "0"] {
        let got = members(ok(&mut c, &["SPOP", "s", n]));
        assert_eq!(got.len(), n.parse::<usize>().unwrap());
        all.extend(got);
    }
    all.sort();
    assert_eq!(all, letters, "every member popped once");
    assert_eq!(ok(&mut c, &["EXISTS", "s"]), int(0));
    // A count at or past the size pops everything and removes the key.
    sadd(&mut c, "s", &["x", "y"]);
    assert_eq!(sorted(ok(&mut c, &["SPOP", "s", "30"])), ["x", "y"]);
    assert_eq!(ok(&mut c, &["EXISTS", "s"]), int(0));
    // Errors.
    sadd(&mut c, "s", &["x"]);
    assert_eq!(
        err(&mut c, &["SPOP", "s", "-1"]),
        "ERR value is out of range, must be positive"
    );
    assert_eq!(
        err(&mut c, &["SPOP", "s", "x"]),
        "ERR value is out of range, must be positive"
    );
    assert_eq!(err(&mut c, &["SPOP", "s", "1", "2"]), "ERR syntax error");
    ok(&mut c, &["SET", "str", "v"]);
    assert_eq!(err(&mut c, &["SPOP", "str"]), WT);
    assert_eq!(err(&mut c, &["SPOP", "str", "1"]), WT);
    // The time to live stays while members go.
    sadd(&mut c, "t", &["1", "2", "3"]);
    ok(&mut c, &["EXPIRE", "t", "100"]);
    ok(&mut c, &["SPOP", "t"]);
    assert!(matches!(ok(&mut c, &["TTL", "t"]), Value::Int(t) if t > 0));
}

#[test]
fn spop_of_a_large_set_empties_it_exactly() {
    let s = TestServer::start();
    let mut c = s.client();
    let names: Vec<String> = (0..1000).map(|i| format!("member:{i:04}")).collect();
    for chunk in names.chunks(100) {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        sadd(&mut c, "big", &refs);
    }
    let mut seen = BTreeSet::new();
    loop {
        let got = members(ok(&mut c, &["SPOP", "big", "37"]));
        if got.is_empty() {
            break;
        }
        for m in got {
            assert!(seen.insert(m.clone()), "{m} popped twice");
        }
        let left = 1000 - seen.len() as i64;
        assert_eq!(ok(&mut c, &["SCARD", "big"]), int(left));
    }
    assert_eq!(seen.len(), 1000);
    assert_eq!(ok(&mut c, &["EXISTS", "big"]), int(0));
}

#[test]
fn srandmember_counts() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["SRANDMEMBER", "none"]), Value::Nil);
    assert_eq!(
        ok(&mut c, &["SRANDMEMBER", "none", "100"]),
        Value::Array(vec![])
    );
    let contents: Vec<String> = (0..50).map(|i| format!("m{i}")).collect();
    let refs: Vec<&str> = contents.iter().map(String::as_str).collect();
    sadd(&mut c, "s", &refs);
    let all: BTreeSet<String> = contents.iter().cloned().collect();
    assert_eq!(ok(&mut c, &["SRANDMEMBER", "s", "0"]), Value::Array(vec![]));
    let rep = members(ok(&mut c, &["SRANDMEMBER", "s", "-100"]));
    assert_eq!(rep.len(), 100);
    assert!(rep.iter().all(|m| all.contains(m)));
    for size in ["50", "100"] {
        let got: BTreeSet<String> = members(ok(&mut c, &["SRANDMEMBER", "s", size]))
            .into_iter()
            .collect();
        assert_eq!(got, all);
    }
    for size in [45usize, 5] {
        let mut ever = BTreeSet::new();
        for _ in 0..1000 {
            let got = members(ok(&mut c, &["SRANDMEMBER", "s", &size.to_string()]));
            assert_eq!(got.len(), size);
            let distinct: BTreeSet<_> = got.iter().cloned().collect();
            assert_eq!(distinct.len(), size);
            ever.extend(distinct);
            if ever == all {
                break;
            }
        }
        assert_eq!(ever, all, "every member eventually");
    }
    assert_eq!(ok(&mut c, &["SCARD", "s"]), int(50));
    assert_eq!(
        err(&mut c, &["SRANDMEMBER", "s", "-9223372036854775808"]),
        "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
    );
    assert_eq!(
        err(&mut c, &["SRANDMEMBER", "s", "x"]),
        "ERR value is not an integer or out of range"
    );
    assert_eq!(
        err(&mut c, &["SRANDMEMBER", "s", "1", "2"]),
        "ERR syntax error"
    );
    assert_eq!(
        err(&mut c, &["SRANDMEMBER", "s", "-2000000"]),
        "ERR value is too large"
    );
    // An empty array, not a null, for a count.
    let mut raw = s.raw();
    raw.expect(&[b"SRANDMEMBER", b"none", b"100"], b"*0\r\n");
    raw.expect(&[b"SRANDMEMBER", b"s", b"0"], b"*0\r\n");
    raw.expect(&[b"SRANDMEMBER", b"none"], b"$-1\r\n");
}

#[test]
fn srandmember_histogram() {
    let s = TestServer::start();
    let mut c = s.client();
    sadd(
        &mut c,
        "s",
        &["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"],
    );
    let chi = |picks: &[String]| {
        let n = picks.len() as f64 / 10.0;
        (0..10)
            .map(|i| {
                let k = picks.iter().filter(|p| **p == i.to_string()).count() as f64;
                (k - n) * (k - n) / n
            })
            .sum::<f64>()
    };
    // df = 9: 40 is exceeded with probability 1e-5.
    let picks = members(ok(&mut c, &["SRANDMEMBER", "s", "-1000"]));
    assert!(chi(&picks) < 40.0);
    for size in [8, 2] {
        let mut all = Vec::new();
        for _ in 0..1000 / size {
            all.extend(members(ok(
                &mut c,
                &["SRANDMEMBER", "s", &size.to_string()],
            )));
        }
        assert!(chi(&all) < 40.0, "size {size}");
    }
}

#[test]
fn smove() {
    let s = TestServer::start();
    let mut c = s.client();
    sadd(&mut c, "a", &["1", "x", "y"]);
    sadd(&mut c, "b", &["2", "3"]);
    assert_eq!(ok(&mut c, &["SMOVE", "a", "b", "x"]), int(1));
    assert_eq!(sorted(ok(&mut c, &["SMEMBERS", "a"])), ["1", "y"]);
    assert_eq!(sorted(ok(&mut c, &["SMEMBERS", "b"])), ["2", "3", "x"]);
    assert_eq!(ok(&mut c, &["SMOVE", "a", "b", "nope"]), int(0));
    assert_eq!(ok(&mut c, &["SMOVE", "a", "a", "nope"]), int(0));
    assert_eq!(ok(&mut c, &["SMOVE", "a", "a", "y"]), int(1));
    assert_eq!(ok(&mut c, &["SMOVE", "none", "b", "2"]), int(0));
    // To a new set; a member already in the destination is moved all the same.
    assert_eq!(ok(&mut c, &["SMOVE", "a", "c", "1"]), int(1));
    assert_eq!(sorted(ok(&mut c, &["SMEMBERS", "c"])), ["1"]);
    sadd(&mut c, "a", &["2"]);
    assert_eq!(ok(&mut c, &["SMOVE", "a", "b", "2"]), int(1));
    assert_eq!(ok(&mut c, &["SCARD", "b"]), int(3));
    // The source goes with its last member.
    assert_eq!(ok(&mut c, &["SMOVE", "a", "b", "y"]), int(1));
    assert_eq!(ok(&mut c, &["EXISTS", "a"]), int(0));
    // Types: a missing source answers 0 before the destination's type is looked at.
    ok(&mut c, &["SET", "str", "v"]);
    assert_eq!(ok(&mut c, &["SMOVE", "none", "str", "x"]), int(0));
    assert_eq!(err(&mut c, &["SMOVE", "b", "str", "x"]), WT);
    assert_eq!(err(&mut c, &["SMOVE", "str", "b", "x"]), WT);
    assert_eq!(sorted(ok(&mut c, &["SMEMBERS", "b"])), ["2", "3", "x", "y"]);
    assert_eq!(
        err(&mut c, &["SMOVE", "b", "c"]),
        "ERR wrong number of arguments for 'smove' command"
    );
}

#[test]
fn inter_union_diff_and_store() {
    let s = TestServer::start();
    let mut c = s.client();
    sadd(&mut c, "s1", &["a", "b", "c", "1", "2", "3"]);
    sadd(&mut c, "s2", &["b", "c", "d", "2", "3", "4"]);
    sadd(&mut c, "s3", &["c", "3", "z"]);
    assert_eq!(
        sorted(ok(&mut c, &["SINTER", "s1", "s2", "s3"])),
        ["3", "c"]
    );
    assert_eq!(
        sorted(ok(&mut c, &["SINTER", "s1", "s2"])),
        ["2", "3", "b", "c"]
    );
    assert_eq!(sorted(ok(&mut c, &["SINTER", "s1", "s1", "s1"])).len(), 6);
    assert_eq!(ok(&mut c, &["SINTER", "s1", "none"]), Value::Array(vec![]));
    assert_eq!(
        sorted(ok(&mut c, &["SUNION", "none", "s1", "s3", "none2"])),
        ["1", "2", "3", "a", "b", "c", "z"]
    );
    assert_eq!(
        sorted(ok(&mut c, &["SDIFF", "s1", "s2", "none"])),
        ["1", "a"]
    );
    assert_eq!(sorted(ok(&mut c, &["SDIFF", "s1", "s2", "s3"])), ["1", "a"]);
    assert_eq!(ok(&mut c, &["SDIFF", "s1", "s1"]), Value::Array(vec![]));
    assert_eq!(ok(&mut c, &["SDIFF", "none", "s1"]), Value::Array(vec![]));
    // STORE forms replace the destination, whatever it held, and clear its TTL.
    ok(&mut c, &["SET", "dst", "string"]);
    ok(&mut c, &["EXPIRE", "dst", "100"]);
    assert_eq!(ok(&mut c, &["SINTERSTORE", "dst", "s1", "s2"]), int(4));
    assert_eq!(
        sorted(ok(&mut c, &["SMEMBERS", "dst"])),
        ["2", "3", "b", "c"]
    );
    assert_eq!(ok(&mut c, &["TTL", "dst"]), int(-1));
    assert_eq!(ok(&mut c, &["SUNIONSTORE", "dst", "s3", "dst"]), int(5));
    assert_eq!(
        sorted(ok(&mut c, &["SMEMBERS", "dst"])),
        ["2", "3", "b", "c", "z"]
    );
    assert_eq!(ok(&mut c, &["SDIFFSTORE", "dst", "dst", "s3"]), int(2));
    assert_eq!(sorted(ok(&mut c, &["SMEMBERS", "dst"])), ["2", "b"]);
    // An empty result removes the destination.
    assert_eq!(ok(&mut c, &["SINTERSTORE", "dst", "s1", "none"]), int(0));
    assert_eq!(ok(&mut c, &["EXISTS", "dst"]), int(0));
    ok(&mut c, &["SET", "dst", "x"]);
    assert_eq!(
        ok(&mut c, &["SUNIONSTORE", "dst", "none1", "none2"]),
        int(0)
    );
    assert_eq!(ok(&mut c, &["EXISTS", "dst"]), int(0));
    sadd(&mut c, "dst", &["q"]);
    assert_eq!(ok(&mut c, &["SDIFFSTORE", "dst", "s3", "s3"]), int(0));
    assert_eq!(ok(&mut c, &["EXISTS", "dst"]), int(0));
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(3));
    // WRONGTYPE whatever the position, even next to a missing key; a failed STORE keeps the
    // destination.
    ok(&mut c, &["SET", "str", "v"]);
    sadd(&mut c, "keep", &["e"]);
    for cmd in [
        &["SINTER", "str", "none"][..],
        &["SINTER", "none", "str"],
        &["SINTER", "s1", "str"],
        &["SUNION", "str", "s1"],
        &["SUNION", "none", "str"],
        &["SDIFF", "str", "none"],
        &["SDIFF", "s1", "str"],
        &["SINTERSTORE", "keep", "none", "str"],
        &["SUNIONSTORE", "keep", "s1", "str"],
        &["SDIFFSTORE", "keep", "str", "s1"],
        &["SINTERCARD", "2", "s1", "str"],
    ] {
        assert_eq!(err(&mut c, cmd), WT, "{cmd:?}");
    }
    assert_eq!(sorted(ok(&mut c, &["SMEMBERS", "keep"])), ["e"]);
    // The STORE forms store into a string key's name too (the key is replaced).
    assert_eq!(ok(&mut c, &["SUNIONSTORE", "str", "s3"]), int(3));
    assert_eq!(
        ok(&mut c, &["TYPE", "str"]),
        Value::SimpleString("set".into())
    );
}

#[test]
fn sintercard() {
    let s = TestServer::start();
    let mut c = s.client();
    sadd(&mut c, "s1", &["a", "b", "c", "d"]);
    sadd(&mut c, "s2", &["b", "c", "d", "e"]);
    sadd(&mut c, "s3", &["c", "d", "z"]);
    assert_eq!(ok(&mut c, &["SINTERCARD", "3", "s1", "s2", "s3"]), int(2));
    assert_eq!(ok(&mut c, &["SINTERCARD", "2", "s1", "s2"]), int(3));
    assert_eq!(
        ok(&mut c, &["SINTERCARD", "2", "s1", "s2", "LIMIT", "0"]),
        int(3)
    );
    assert_eq!(
        ok(&mut c, &["SINTERCARD", "2", "s1", "s2", "limit", "2"]),
        int(2)
    );
    assert_eq!(
        ok(&mut c, &["SINTERCARD", "2", "s1", "s2", "LIMIT", "10"]),
        int(3)
    );
    assert_eq!(ok(&mut c, &["SINTERCARD", "2", "s1", "none"]), int(0));
    assert_eq!(ok(&mut c, &["SINTERCARD", "1", "s1"]), int(4));
    for (args, want) in [
        (
            &["SINTERCARD", "0", "s1"][..],
            "ERR numkeys should be greater than 0",
        ),
        (
            &["SINTERCARD", "x", "s1"],
            "ERR numkeys should be greater than 0",
        ),
        (
            &["SINTERCARD", "-1", "s1"],
            "ERR numkeys should be greater than 0",
        ),
        (
            &["SINTERCARD", "3", "s1", "s2"],
            "ERR Number of keys can't be greater than number of args",
        ),
        (&["SINTERCARD", "1", "s1", "LIMIT"], "ERR syntax error"),
        (&["SINTERCARD", "1", "s1", "FOO", "1"], "ERR syntax error"),
        (
            &["SINTERCARD", "1", "s1", "LIMIT", "-1"],
            "ERR LIMIT can't be negative",
        ),
        (
            &["SINTERCARD", "1", "s1", "LIMIT", "x"],
            "ERR LIMIT can't be negative",
        ),
        (
            &["SINTERCARD", "1"],
            "ERR wrong number of arguments for 'sintercard' command",
        ),
    ] {
        assert_eq!(err(&mut c, args), want, "{args:?}");
    }
}

#[test]
fn members_past_the_engine_key_limit() {
    let s = TestServer::start();
    let mut c = s.client();
    let base = "m".repeat(100_000);
    let (a, b) = (format!("{base}a"), format!("{base}b"));
    let huge = "h".repeat(1 << 20);
    assert_eq!(
        ok(&mut c, &["SADD", "s", &a, &b, &huge, "short", &a]),
        int(4)
    );
    assert_eq!(ok(&mut c, &["SADD", "s", &b]), int(0));
    assert_eq!(ok(&mut c, &["SCARD", "s"]), int(4));
    assert_eq!(ok(&mut c, &["SISMEMBER", "s", &a]), int(1));
    assert_eq!(ok(&mut c, &["SISMEMBER", "s", &format!("{base}c")]), int(0));
    assert_eq!(
        ok(&mut c, &["SMISMEMBER", "s", &huge, &base]),
        Value::Array(vec![int(1), int(0)])
    );
    let mut all = members(ok(&mut c, &["SMEMBERS", "s"]));
    all.sort_by_key(|m| m.len());
    assert_eq!(
        all.iter().map(|m| m.len()).collect::<Vec<_>>(),
        [5, 100_001, 100_001, 1 << 20]
    );
    // Set algebra and moves compare whole members.
    ok(&mut c, &["SADD", "t", &b, "short", &format!("{base}z")]);
    let mut inter = members(ok(&mut c, &["SINTER", "s", "t"]));
    inter.sort();
    assert_eq!(inter, [b.clone(), "short".to_string()]);
    assert_eq!(ok(&mut c, &["SDIFFSTORE", "d", "s", "t"]), int(2));
    assert_eq!(ok(&mut c, &["SISMEMBER", "d", &huge]), int(1));
    assert_eq!(ok(&mut c, &["SMOVE", "s", "t", &a]), int(1));
    assert_eq!(ok(&mut c, &["SISMEMBER", "t", &a]), int(1));
    assert_eq!(ok(&mut c, &["SISMEMBER", "s", &a]), int(0));
    assert_eq!(ok(&mut c, &["SREM", "s", &huge, &b]), int(2));
    assert_eq!(members(ok(&mut c, &["SMEMBERS", "s"])), ["short"]);
    let popped = members(ok(&mut c, &["SPOP", "t", "10"]));
    assert_eq!(popped.len(), 4);
    // SSCAN returns whole members.
    ok(&mut c, &["SADD", "u", &a, "x"]);
    let Value::Array(page) = ok(&mut c, &["SSCAN", "u", "0", "COUNT", "100"]) else {
        panic!()
    };
    let mut got = members(page[1].clone());
    got.sort();
    assert_eq!(got, [a.clone(), "x".to_string()]);
    let picks = members(ok(&mut c, &["SRANDMEMBER", "u", "-4"]));
    assert!(picks.iter().all(|m| *m == a || m == "x"));
}
