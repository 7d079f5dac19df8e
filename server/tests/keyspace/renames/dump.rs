//! DUMP and RESTORE: payloads made by redis-server 7.0.15 (its compact encodings: intset,
//! listpacks, a quicklist node, an LZF-compressed string) restore here; every type dumped
//! here restores here (and, checked by hand, in redis-server 7.0.15); small strings and
//! integers dump to Redis's exact bytes; RESTORE's options and errors. Streams in
//! [`streams`] (here) and [`redis_server`] (against redis-server 7.0.15).

mod redis_server;
mod streams;

use super::common::{TestServer, bulk, int, ok, q};
use redis::Value;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn restore(c: &mut redis::Connection, key: &str, payload: &[u8]) -> Value {
    redis::cmd("RESTORE")
        .arg(key)
        .arg(0)
        .arg(payload)
        .query(c)
        .unwrap()
}

fn bytes(v: Value) -> Vec<u8> {
    match v {
        Value::BulkString(b) => b,
        other => panic!("not a bulk string: {other:?}"),
    }
}

/// `DUMP` of each key, recorded from redis-server 7.0.15.
const FROM_REDIS: &[(&str, &str)] = &[
    // SADD si 1 2 -3: an intset.
    ("si", "0b0e0200000003000000fdff010002000a00d1b78ed9bc07c27f"),
    // HSET hl f v n 7: a listpack.
    (
        "hl",
        "1012120000000400816602817602816e020701ff0a00b82adea8407ffaa8",
    ),
    // ZADD zl 1.5 a -2 b: a listpack.
    (
        "zl",
        "1115150000000400816202dffe0281610283312e3504ff0a006c359df633d08b5d",
    ),
    // RPUSH ll x 12 -100000: a quicklist of one listpack node.
    (
        "ll",
        "120102111100000003008178020c01f26079fe04ff0a00fdd29334a2ec9ccc",
    ),
    // SET lzf ("abc" x 11) x 3: LZF-compressed.
    (
        "lzf",
        "00c30b40630361626361e054020162630a003f6fb74cd92a88ad",
    ),
    // SADD ss a b: a set of strings.
    ("ss", "0202016201610a0075d99d835ef85f65"),
];

#[test]
fn payloads_from_redis_restore() {
    let s = TestServer::start();
    let mut c = s.client();
    for (key, payload) in FROM_REDIS {
        assert_eq!(restore(&mut c, key, &hex(payload)), Value::Okay, "{key}");
    }
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    let members: Vec<String> = redis::cmd("SMEMBERS").arg("si").query(&mut c).unwrap();
    assert_eq!(sorted(members), vec!["-3", "1", "2"]);
    let h: Vec<String> = redis::cmd("HGETALL").arg("hl").query(&mut c).unwrap();
    assert_eq!(sorted(h), vec!["7", "f", "n", "v"]);
    assert_eq!(
        ok(&mut c, &["ZRANGE", "zl", "0", "-1", "WITHSCORES"]),
        Value::Array(vec![bulk("b"), bulk("-2"), bulk("a"), bulk("1.5")])
    );
    assert_eq!(
        ok(&mut c, &["LRANGE", "ll", "0", "-1"]),
        Value::Array(vec![bulk("x"), bulk("12"), bulk("-100000")])
    );
    assert_eq!(ok(&mut c, &["GET", "lzf"]), bulk(&"abc".repeat(33)));
    assert_eq!(ok(&mut c, &["SCARD", "ss"]), int(2));
}

#[test]
fn every_type_round_trips_and_small_strings_dump_as_redis_does() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["SET", "s_small", "hello"]);
    ok(&mut c, &["SET", "s_int", "12345"]);
    // Recorded from redis-server 7.0.15.
    assert_eq!(
        bytes(ok(&mut c, &["DUMP", "s_small"])),
        b"\x00\x05hello\n\x00cr\xdfve4 \n"
    );
    assert_eq!(
        bytes(ok(&mut c, &["DUMP", "s_int"])),
        b"\x00\xc190\n\x00\x9d\x94\xea'\x93\xfc\x08\xb9"
    );
    let big: Vec<String> = (0..700).map(|i| format!("m{i}")).collect();
    let mut sadd = vec!["SADD", "set"];
    sadd.extend(big.iter().map(String::as_str));
    ok(&mut c, &sadd);
    let mut rpush = vec!["RPUSH", "list"];
    rpush.extend(big.iter().map(String::as_str));
    ok(&mut c, &rpush);
    ok(&mut c, &["HSET", "hash", "f", "v", "g", "w"]);
    ok(
        &mut c,
        &["ZADD", "zset", "1e100", "a", "-0.5", "b", "3", "c"],
    );
    ok(&mut c, &["SETRANGE", "bits", "10000", "x"]);
    ok(&mut c, &["PFADD", "hll", "a", "b"]);
    for key in [
        "s_small", "s_int", "set", "list", "hash", "zset", "bits", "hll",
    ] {
        let payload = bytes(ok(&mut c, &["DUMP", key]));
        let copy = format!("copy:{key}");
        assert_eq!(restore(&mut c, &copy, &payload), Value::Okay, "{key}");
        // The copy dumps to the same bytes.
        assert_eq!(bytes(ok(&mut c, &["DUMP", &copy])), payload, "{key}");
    }
    assert_eq!(ok(&mut c, &["SCARD", "copy:set"]), int(700));
    assert_eq!(ok(&mut c, &["LINDEX", "copy:list", "699"]), bulk("m699"));
    assert_eq!(ok(&mut c, &["STRLEN", "copy:bits"]), int(10001));
    assert_eq!(ok(&mut c, &["PFCOUNT", "copy:hll"]), int(2));
    assert_eq!(ok(&mut c, &["DUMP", "nokey"]), Value::Nil);
}

#[test]
fn restore_options_and_errors_match_redis() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["SET", "k", "v"]);
    let payload = bytes(ok(&mut c, &["DUMP", "k"]));
    let r = |c: &mut redis::Connection, key: &str, ttl: &str, extra: &[&str]| {
        let mut cmd = redis::cmd("RESTORE");
        cmd.arg(key).arg(ttl).arg(&payload[..]);
        for e in extra {
            cmd.arg(*e);
        }
        cmd.query::<Value>(c)
    };
    let e = |res: redis::RedisResult<Value>| res.unwrap_err().to_string();
    assert!(e(r(&mut c, "k", "0", &[])).contains("Target key name already exists."));
    assert!(e(r(&mut c, "n", "-1", &[])).contains("Invalid TTL value, must be >= 0"));
    assert!(e(r(&mut c, "n", "0", &["FREQ", "300"])).contains("Invalid FREQ value"));
    assert!(e(r(&mut c, "n", "0", &["IDLETIME", "-1"])).contains("Invalid IDLETIME value"));
    assert!(e(r(&mut c, "n", "0", &["IDLETIME", "5", "FREQ", "3"])).contains("syntax error"));
    assert!(e(r(&mut c, "n", "0", &["BOGUS"])).contains("syntax error"));
    let damaged = q(&mut c, &["RESTORE", "n", "0", "not a payload"]).unwrap_err();
    assert!(
        damaged
            .to_string()
            .contains("DUMP payload version or checksum are wrong")
    );
    // REPLACE overwrites; a TTL is relative, ABSTTL absolute (1 ms after the epoch: gone).
    ok(&mut c, &["SET", "k", "other"]);
    assert_eq!(r(&mut c, "k", "100000", &["REPLACE"]).unwrap(), Value::Okay);
    assert_eq!(ok(&mut c, &["GET", "k"]), bulk("v"));
    let Value::Int(pttl) = ok(&mut c, &["PTTL", "k"]) else {
        panic!()
    };
    assert!((1..=100_000).contains(&pttl), "{pttl}");
    assert_eq!(
        r(&mut c, "k", "1", &["REPLACE", "ABSTTL"]).unwrap(),
        Value::Okay
    );
    assert_eq!(ok(&mut c, &["EXISTS", "k"]), int(0));
}

/// Damaged payloads whose checksum holds are refused with Redis's error, allocate nothing
/// they declare, and leave the key as it was: an LZF string claiming 1 TiB, an empty set
/// (Redis never writes one), a truncated object, an unknown type.
#[test]
fn damaged_payloads_are_bad_data_format_and_change_nothing() {
    use bloomkv_server::cmd::dump::rdb::{put_len, seal};
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["SET", "k", "kept"]);
    let mut huge_lzf = vec![0u8, 0xc3];
    put_len(&mut huge_lzf, 5);
    put_len(&mut huge_lzf, 1 << 40);
    huge_lzf.extend_from_slice(&[0x00, b'a', 0xe0, 0x00, 0x00]);
    let empty_set = vec![2u8, 0];
    let truncated = vec![0u8, 10, b'x'];
    let unknown_type = vec![99u8, 1, b'x'];
    for body in [huge_lzf, empty_set, truncated, unknown_type] {
        let e = redis::cmd("RESTORE")
            .arg("k")
            .arg(0)
            .arg(seal(body.clone()))
            .arg("REPLACE")
            .query::<Value>(&mut c)
            .unwrap_err();
        assert!(e.to_string().contains("Bad data format"), "{body:?}: {e}");
        assert_eq!(ok(&mut c, &["GET", "k"]), bulk("kept"), "{body:?}");
    }
}
