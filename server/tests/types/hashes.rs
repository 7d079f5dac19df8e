//! Hashes: every command and option with Redis's replies and errors, RESP3 maps and pairs,
//! fields longer than the engine's key limit, and contents and TTLs across a restart.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common;

use common::{TestServer, bulk, err, int, ok};
use redis::Value;

fn strings(v: Value) -> Vec<String> {
    match v {
        Value::Array(a) | Value::Set(a) => a
            .into_iter()
            .map(|x| match x {
                Value::BulkString(b) => String::from_utf8(b).unwrap(),
                Value::Nil => "(nil)".into(),
                other => panic!("not a string: {other:?}"),
            })
            .collect(),
        other => panic!("not an array: {other:?}"),
    }
}

fn sorted(v: Value) -> Vec<String> {
    let mut s = strings(v);
    s.sort();
    s
}

#[test]
fn set_get_and_delete_fields() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["HSET", "h", "f1", "v1"]), int(1));
    assert_eq!(ok(&mut c, &["HSET", "h", "f1", "v2", "f2", "x"]), int(1));
    assert_eq!(ok(&mut c, &["HSET", "h", "f3", "a", "f3", "b"]), int(1));
    assert_eq!(ok(&mut c, &["HGET", "h", "f1"]), bulk("v2"));
    assert_eq!(ok(&mut c, &["HGET", "h", "f3"]), bulk("b"));
    assert_eq!(ok(&mut c, &["HGET", "h", "nope"]), Value::Nil);
    assert_eq!(ok(&mut c, &["HGET", "none", "f"]), Value::Nil);
    assert_eq!(ok(&mut c, &["HLEN", "h"]), int(3));
    assert_eq!(ok(&mut c, &["HLEN", "none"]), int(0));
    assert_eq!(
        ok(&mut c, &["TYPE", "h"]),
        Value::SimpleString("hash".into())
    );
    assert_eq!(
        ok(&mut c, &["HMSET", "h", "f4", "4", "f5", "5"]),
        Value::Okay
    );
    assert_eq!(
        strings(ok(&mut c, &["HMGET", "h", "f1", "nope", "f5"])),
        ["v2", "(nil)", "5"]
    );
    assert_eq!(
        strings(ok(&mut c, &["HMGET", "none", "a", "b"])),
        ["(nil)", "(nil)"]
    );
    assert_eq!(ok(&mut c, &["HSETNX", "h", "f1", "z"]), int(0));
    assert_eq!(ok(&mut c, &["HSETNX", "h", "f6", "z"]), int(1));
    assert_eq!(ok(&mut c, &["HSETNX", "new", "f", "z"]), int(1));
    assert_eq!(ok(&mut c, &["HGET", "h", "f6"]), bulk("z"));
    assert_eq!(ok(&mut c, &["HEXISTS", "h", "f6"]), int(1));
    assert_eq!(ok(&mut c, &["HEXISTS", "h", "f7"]), int(0));
    assert_eq!(ok(&mut c, &["HEXISTS", "none", "f"]), int(0));
    assert_eq!(ok(&mut c, &["HSTRLEN", "h", "f1"]), int(2));
    assert_eq!(ok(&mut c, &["HSTRLEN", "h", "nope"]), int(0));
    assert_eq!(ok(&mut c, &["HSTRLEN", "none", "f"]), int(0));
    assert_eq!(
        sorted(ok(&mut c, &["HKEYS", "h"])),
        ["f1", "f2", "f3", "f4", "f5", "f6"]
    );
    assert_eq!(
        sorted(ok(&mut c, &["HVALS", "h"])),
        ["4", "5", "b", "v2", "x", "z"]
    );
    assert_eq!(
        strings(ok(&mut c, &["HKEYS", "none"])),
        Vec::<String>::new()
    );
    let all = strings(ok(&mut c, &["HGETALL", "h"]));
    assert_eq!(all.len(), 12);
    assert_eq!(&all[0..2], ["f1", "v2"]);
    assert_eq!(ok(&mut c, &["HGETALL", "none"]), Value::Array(vec![]));
    assert_eq!(ok(&mut c, &["HDEL", "h", "f1", "f1", "nope", "f2"]), int(2));
    assert_eq!(ok(&mut c, &["HDEL", "none", "f"]), int(0));
    assert_eq!(ok(&mut c, &["HLEN", "h"]), int(4));
    // The key goes with its last field.
    assert_eq!(ok(&mut c, &["HDEL", "h", "f3", "f4", "f5", "f6"]), int(4));
    assert_eq!(ok(&mut c, &["EXISTS", "h"]), int(0));
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(1));
    // An empty field and an empty value are fields like any other.
    assert_eq!(ok(&mut c, &["HSET", "e", "", ""]), int(1));
    assert_eq!(ok(&mut c, &["HGET", "e", ""]), bulk(""));
    assert_eq!(ok(&mut c, &["HEXISTS", "e", ""]), int(1));
}

#[test]
fn errors_are_redis_errors() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["SET", "str", "x"]);
    const WT: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
    for cmd in [
        &["HSET", "str", "f", "v"][..],
        &["HMSET", "str", "f", "v"],
        &["HSETNX", "str", "f", "v"],
        &["HGET", "str", "f"],
        &["HMGET", "str", "f"],
        &["HGETALL", "str"],
        &["HDEL", "str", "f"],
        &["HEXISTS", "str", "f"],
        &["HINCRBY", "str", "f", "1"],
        &["HINCRBYFLOAT", "str", "f", "1"],
        &["HLEN", "str"],
        &["HKEYS", "str"],
        &["HVALS", "str"],
        &["HSTRLEN", "str", "f"],
        &["HRANDFIELD", "str"],
        &["HRANDFIELD", "str", "2"],
        &["HSCAN", "str", "0"],
    ] {
        assert_eq!(err(&mut c, cmd), WT, "{cmd:?}");
    }
    ok(&mut c, &["HSET", "h", "f", "v"]);
    assert_eq!(err(&mut c, &["SADD", "h", "m"]), WT);
    assert_eq!(err(&mut c, &["GET", "h"]), WT);
    assert_eq!(
        err(&mut c, &["HSET", "h", "f"]),
        "ERR wrong number of arguments for 'hset' command"
    );
    assert_eq!(
        err(&mut c, &["HSET", "h", "f", "v", "g"]),
        "ERR wrong number of arguments for 'hset' command"
    );
    assert_eq!(
        err(&mut c, &["HMSET", "h", "f", "v", "g"]),
        "ERR wrong number of arguments for 'hmset' command"
    );
    assert_eq!(
        err(&mut c, &["HGET", "h"]),
        "ERR wrong number of arguments for 'hget' command"
    );
    // A failed HSET writes nothing.
    assert_eq!(ok(&mut c, &["HGET", "h", "g"]), Value::Nil);
    assert_eq!(err(&mut c, &["HSCAN", "h", "x"]), "ERR invalid cursor");
    assert_eq!(
        err(&mut c, &["HSCAN", "h", "0", "COUNT", "0"]),
        "ERR syntax error"
    );
    assert_eq!(
        err(&mut c, &["HSCAN", "h", "0", "MATCH"]),
        "ERR syntax error"
    );
}

#[test]
fn increments() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["HINCRBY", "h", "n", "5"]), int(5));
    assert_eq!(ok(&mut c, &["HINCRBY", "h", "n", "-7"]), int(-2));
    assert_eq!(ok(&mut c, &["HGET", "h", "n"]), bulk("-2"));
    assert_eq!(
        err(&mut c, &["HINCRBY", "h", "n", "x"]),
        "ERR value is not an integer or out of range"
    );
    assert_eq!(
        err(&mut c, &["HINCRBY", "h", "n", "1.5"]),
        "ERR value is not an integer or out of range"
    );
    ok(
        &mut c,
        &[
            "HSET",
            "h",
            "s",
            "abc",
            "sp",
            " 1",
            "big",
            "9223372036854775807",
        ],
    );
    assert_eq!(
        err(&mut c, &["HINCRBY", "h", "s", "1"]),
        "ERR hash value is not an integer"
    );
    assert_eq!(
        err(&mut c, &["HINCRBY", "h", "sp", "1"]),
        "ERR hash value is not an integer"
    );
    assert_eq!(
        err(&mut c, &["HINCRBY", "h", "big", "1"]),
        "ERR increment or decrement would overflow"
    );
    ok(&mut c, &["HSET", "h", "small", "-9223372036854775808"]);
    assert_eq!(
        err(&mut c, &["HINCRBY", "h", "small", "-1"]),
        "ERR increment or decrement would overflow"
    );
    assert_eq!(
        ok(&mut c, &["HGET", "h", "big"]),
        bulk("9223372036854775807")
    );

    assert_eq!(
        ok(&mut c, &["HINCRBYFLOAT", "h", "f", "10.5"]),
        bulk("10.5")
    );
    assert_eq!(ok(&mut c, &["HINCRBYFLOAT", "h", "f", "0.1"]), bulk("10.6"));
    assert_eq!(ok(&mut c, &["HINCRBYFLOAT", "h", "f", "-10.6"]), bulk("0"));
    assert_eq!(
        ok(&mut c, &["HINCRBYFLOAT", "h", "n", "5.0e3"]),
        bulk("4998")
    );
    assert_eq!(
        err(&mut c, &["HINCRBYFLOAT", "h", "f", "x"]),
        "ERR value is not a valid float"
    );
    assert_eq!(
        err(&mut c, &["HINCRBYFLOAT", "h", "f", "inf"]),
        "ERR value is NaN or Infinity"
    );
    assert_eq!(
        err(&mut c, &["HINCRBYFLOAT", "h", "s", "1"]),
        "ERR hash value is not a float"
    );
    // Redis computes in long double: past f64's range, and 0.1 + 0.2 is 0.3.
    ok(&mut c, &["HSET", "h", "huge", "1.7976931348623157e308"]);
    let twice = ok(
        &mut c,
        &["HINCRBYFLOAT", "h", "huge", "1.7976931348623157e308"],
    );
    let Value::BulkString(twice) = twice else {
        panic!("{twice:?}")
    };
    assert!(twice.starts_with(b"3595386269724631399918420935482088680967728938886583569706288415303532570462487927094037372167741711288575868388510413786174167269022721107157945560529552341469979553725767896712363265880911888698590748945812549613388347692977582455524366671979077056642065650095032233824162354403199718527536"));
    assert_eq!(ok(&mut c, &["HINCRBYFLOAT", "h", "p", "0.1"]), bulk("0.1"));
    assert_eq!(ok(&mut c, &["HINCRBYFLOAT", "h", "p", "0.2"]), bulk("0.3"));
    assert_eq!(
        ok(&mut c, &["HINCRBYFLOAT", "h", "tiny", "1e-20"]),
        bulk("0")
    );
    ok(&mut c, &["HSET", "h", "max", "1.18e4932", "i", "inf"]);
    assert_eq!(
        err(&mut c, &["HINCRBYFLOAT", "h", "max", "1.18e4932"]),
        "ERR increment would produce NaN or Infinity"
    );
    assert_eq!(
        err(&mut c, &["HINCRBYFLOAT", "h", "i", "1"]),
        "ERR increment would produce NaN or Infinity"
    );
    // Increments keep the key's time to live.
    ok(&mut c, &["EXPIRE", "h", "100"]);
    ok(&mut c, &["HINCRBY", "h", "n", "1"]);
    ok(&mut c, &["HSET", "h", "another", "1"]);
    assert!(matches!(ok(&mut c, &["TTL", "h"]), Value::Int(t) if t > 0));
}

#[test]
fn random_fields() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["HRANDFIELD", "none"]), Value::Nil);
    assert_eq!(
        ok(&mut c, &["HRANDFIELD", "none", "3"]),
        Value::Array(vec![])
    );
    assert_eq!(
        ok(&mut c, &["HRANDFIELD", "none", "-3", "WITHVALUES"]),
        Value::Array(vec![])
    );
    for i in 0..10 {
        ok(&mut c, &["HSET", "h", &format!("f{i}"), &format!("v{i}")]);
    }
    let f = strings(Value::Array(vec![ok(&mut c, &["HRANDFIELD", "h"])]));
    assert!(f[0].starts_with('f'));
    assert_eq!(ok(&mut c, &["HRANDFIELD", "h", "0"]), Value::Array(vec![]));
    let three = strings(ok(&mut c, &["HRANDFIELD", "h", "3"]));
    assert_eq!(three.len(), 3);
    let mut d = three.clone();
    d.sort();
    d.dedup();
    assert_eq!(d.len(), 3, "a positive count gives distinct fields");
    assert_eq!(strings(ok(&mut c, &["HRANDFIELD", "h", "100"])).len(), 10);
    let rep = strings(ok(&mut c, &["HRANDFIELD", "h", "-25"]));
    assert_eq!(rep.len(), 25, "a negative count gives exactly that many");
    let wv = strings(ok(&mut c, &["HRANDFIELD", "h", "4", "withvalues"]));
    assert_eq!(wv.len(), 8);
    for p in wv.chunks(2) {
        assert_eq!(p[1], p[0].replace('f', "v"));
    }
    assert_eq!(
        strings(ok(&mut c, &["HRANDFIELD", "h", "-7", "WITHVALUES"])).len(),
        14
    );
    assert_eq!(
        err(&mut c, &["HRANDFIELD", "h", "1", "BAD"]),
        "ERR syntax error"
    );
    assert_eq!(
        err(&mut c, &["HRANDFIELD", "h", "1", "WITHVALUES", "x"]),
        "ERR syntax error"
    );
    assert_eq!(
        err(&mut c, &["HRANDFIELD", "h", "x"]),
        "ERR value is not an integer or out of range"
    );
    assert_eq!(
        err(&mut c, &["HRANDFIELD", "h", "-9223372036854775808"]),
        "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
    );
    assert_eq!(
        err(
            &mut c,
            &["HRANDFIELD", "h", "-9223372036854770000", "WITHVALUES"]
        ),
        "ERR value is out of range"
    );
    // Beyond what the server builds in memory for one reply.
    assert_eq!(
        err(&mut c, &["HRANDFIELD", "h", "-2000000"]),
        "ERR value is too large"
    );

    // RESP3: pairs are two-element arrays (Redis's reply, repeats allowed).
    let mut c3 = s.client3();
    match ok(&mut c3, &["HRANDFIELD", "h", "-3", "WITHVALUES"]) {
        Value::Array(pairs) => {
            assert_eq!(pairs.len(), 3);
            for p in pairs {
                assert!(matches!(p, Value::Array(ref kv) if kv.len() == 2), "{p:?}");
            }
        }
        other => panic!("{other:?}"),
    }
    let mut raw = s.raw();
    raw.expect(&[b"HELLO", b"3"], b"%7\r\n");
    raw.read_until(b"modules\r\n*0\r\n");
    raw.cmd(&[b"HSET", b"one", b"f", b"v"]);
    raw.read_until(b"\r\n");
    raw.expect(
        &[b"HRANDFIELD", b"one", b"-2", b"WITHVALUES"],
        b"*2\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n",
    );
    raw.expect(&[b"HGETALL", b"one"], b"%1\r\n$1\r\nf\r\n$1\r\nv\r\n");
    raw.expect(&[b"HGETALL", b"none"], b"%0\r\n");
    raw.expect(&[b"HRANDFIELD", b"none"], b"_\r\n");
}

#[test]
fn hscan_walks_every_field_once() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(
        ok(&mut c, &["HSCAN", "none", "0"]),
        Value::Array(vec![bulk("0"), Value::Array(vec![])])
    );
    for i in 0..250 {
        ok(
            &mut c,
            &["HSET", "h", &format!("field:{i}"), &i.to_string()],
        );
    }
    let mut cursor = "0".to_string();
    let mut seen = std::collections::BTreeMap::new();
    let mut calls = 0;
    loop {
        let v = ok(&mut c, &["HSCAN", "h", &cursor, "COUNT", "20"]);
        let Value::Array(parts) = v else { panic!() };
        let Value::BulkString(next) = &parts[0] else {
            panic!()
        };
        let items = strings(parts[1].clone());
        for p in items.chunks(2) {
            assert!(
                seen.insert(p[0].clone(), p[1].clone()).is_none(),
                "{p:?} twice"
            );
        }
        calls += 1;
        cursor = String::from_utf8(next.clone()).unwrap();
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(seen.len(), 250);
    assert!(calls >= 12);
    assert_eq!(seen["field:17"], "17");
    // MATCH filters fields, NOVALUES drops values.
    let v = ok(
        &mut c,
        &[
            "HSCAN", "h", "0", "MATCH", "field:1?", "COUNT", "1000", "NOVALUES",
        ],
    );
    let Value::Array(parts) = v else { panic!() };
    assert_eq!(parts[0], bulk("0"));
    let mut fields = strings(parts[1].clone());
    fields.sort();
    assert_eq!(fields.len(), 10);
    assert_eq!(fields[0], "field:10");
}

#[test]
fn fields_past_the_engine_key_limit() {
    let s = TestServer::start();
    let mut c = s.client();
    // Fields of 100 KB and 1 MB (the engine holds keys to 64 KiB), sharing a long prefix, and
    // a 70 KB value.
    let base = "f".repeat(100_000);
    let a = format!("{base}a");
    let b = format!("{base}b");
    let m = "m".repeat(1 << 20);
    let big = "v".repeat(70_000);
    assert_eq!(
        ok(&mut c, &["HSET", "h", &a, "1", &b, "2", &m, &big]),
        int(3)
    );
    assert_eq!(ok(&mut c, &["HSET", "h", &a, "11"]), int(0));
    assert_eq!(ok(&mut c, &["HGET", "h", &a]), bulk("11"));
    assert_eq!(ok(&mut c, &["HGET", "h", &b]), bulk("2"));
    assert_eq!(ok(&mut c, &["HGET", "h", &m]), bulk(&big));
    assert_eq!(ok(&mut c, &["HGET", "h", &format!("{base}c")]), Value::Nil);
    assert_eq!(ok(&mut c, &["HEXISTS", "h", &b]), int(1));
    assert_eq!(ok(&mut c, &["HSTRLEN", "h", &m]), int(70_000));
    assert_eq!(ok(&mut c, &["HINCRBY", "h", &b, "40"]), int(42));
    assert_eq!(ok(&mut c, &["HLEN", "h"]), int(3));
    let mut keys = sorted(ok(&mut c, &["HKEYS", "h"]));
    keys.sort_by_key(|k| k.len());
    assert_eq!(keys.len(), 3);
    assert_eq!(keys[2].len(), 1 << 20);
    let rnd = strings(ok(&mut c, &["HRANDFIELD", "h", "-6", "WITHVALUES"]));
    assert_eq!(rnd.len(), 12);
    assert!(rnd.chunks(2).all(|p| p[0].len() > 100_000));
    assert_eq!(ok(&mut c, &["HDEL", "h", &a, &m]), int(2));
    assert_eq!(
        strings(ok(&mut c, &["HGETALL", "h"])),
        [b.clone(), "42".into()]
    );
    // A key at the key limit leaves no room in the engine key: every field but the empty
    // one is hashed.
    let long_key = "k".repeat(65_511);
    assert_eq!(ok(&mut c, &["HSET", &long_key, "x", "1", "", "2"]), int(2));
    assert_eq!(ok(&mut c, &["HGET", &long_key, "x"]), bulk("1"));
    assert_eq!(ok(&mut c, &["HGET", &long_key, ""]), bulk("2"));
}

#[test]
fn contents_and_ttls_survive_a_restart() {
    let mut s = TestServer::start();
    {
        let mut c = s.client();
        ok(&mut c, &["HSET", "h", "a", "1", "b", "2"]);
        ok(&mut c, &["HSET", "h", &"L".repeat(70_000), "long"]);
        ok(&mut c, &["HSET", "t", "x", "y"]);
        ok(&mut c, &["EXPIRE", "t", "1000"]);
        ok(&mut c, &["HSET", "gone", "x", "y"]);
        ok(&mut c, &["PEXPIRE", "gone", "50"]);
    }
    std::thread::sleep(std::time::Duration::from_millis(100));
    s.restart();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["HLEN", "h"]), int(3));
    assert_eq!(ok(&mut c, &["HGET", "h", "b"]), bulk("2"));
    assert_eq!(
        ok(&mut c, &["HGET", "h", &"L".repeat(70_000)]),
        bulk("long")
    );
    assert!(matches!(ok(&mut c, &["TTL", "t"]), Value::Int(t) if (990..=1000).contains(&t)));
    assert_eq!(ok(&mut c, &["HGET", "t", "x"]), bulk("y"));
    assert_eq!(ok(&mut c, &["HGET", "gone", "x"]), Value::Nil);
    assert_eq!(ok(&mut c, &["EXISTS", "gone"]), int(0));
    // An expired hash is gone for every command, and a new one starts empty.
    assert_eq!(ok(&mut c, &["HSET", "gone", "z", "1"]), int(1));
    assert_eq!(ok(&mut c, &["HLEN", "gone"]), int(1));
    assert_eq!(ok(&mut c, &["TTL", "gone"]), int(-1));
}

#[test]
fn resp3_hgetall_is_a_map() {
    let s = TestServer::start();
    let mut c = s.client3();
    ok(&mut c, &["HSET", "h", "a", "1", "b", "2"]);
    match ok(&mut c, &["HGETALL", "h"]) {
        Value::Map(m) => {
            assert_eq!(m, vec![(bulk("a"), bulk("1")), (bulk("b"), bulk("2"))]);
        }
        other => panic!("{other:?}"),
    }
}
