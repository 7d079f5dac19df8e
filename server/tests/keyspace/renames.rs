//! RENAME, RENAMENX, COPY and MOVE: every type keeps its whole value under the new name or
//! database, with its time to live; replies and errors as Redis 7's.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common;
mod dump;

use common::{TestServer, bulk, err, int, ok};
use redis::Value;

fn sorted(v: Value) -> Vec<String> {
    let mut out: Vec<String> = redis::from_redis_value(v).unwrap();
    out.sort();
    out
}

/// One key of every type, named `{p}...`.
fn fill(c: &mut redis::Connection, p: &str) {
    let k = |s: &str| format!("{p}{s}");
    ok(c, &["SET", &k("str"), "v"]);
    ok(c, &["SETBIT", &k("bits"), "70000", "1"]);
    ok(c, &["SADD", &k("set"), "a", "b"]);
    ok(c, &["HSET", &k("hash"), "f", "1", "g", "2"]);
    ok(c, &["RPUSH", &k("list"), "x", "y"]);
    ok(c, &["ZADD", &k("zset"), "1", "one", "2", "two"]);
    ok(c, &["XADD", &k("stream"), "1-1", "f", "v"]);
    ok(c, &["BF.ADD", &k("bloom"), "item"]);
    ok(c, &["CF.INSERT", &k("cuckoo"), "ITEMS", "item", "item"]);
}

/// Checks the keys `fill` wrote, under prefix `p`.
fn check(c: &mut redis::Connection, p: &str) {
    let k = |s: &str| format!("{p}{s}");
    assert_eq!(ok(c, &["GET", &k("str")]), bulk("v"));
    assert_eq!(ok(c, &["GETBIT", &k("bits"), "70000"]), int(1));
    assert_eq!(ok(c, &["STRLEN", &k("bits")]), int(8751));
    assert_eq!(sorted(ok(c, &["SMEMBERS", &k("set")])), vec!["a", "b"]);
    assert_eq!(ok(c, &["SISMEMBER", &k("set"), "b"]), int(1));
    assert_eq!(ok(c, &["HGET", &k("hash"), "g"]), bulk("2"));
    assert_eq!(ok(c, &["HLEN", &k("hash")]), int(2));
    assert_eq!(
        sorted(ok(c, &["LRANGE", &k("list"), "0", "-1"])),
        vec!["x", "y"]
    );
    assert_eq!(ok(c, &["ZSCORE", &k("zset"), "two"]), bulk("2"));
    assert_eq!(
        ok(c, &["ZRANGEBYSCORE", &k("zset"), "1.5", "3"]),
        Value::Array(vec![bulk("two")])
    );
    assert_eq!(ok(c, &["XLEN", &k("stream")]), int(1));
    assert_eq!(ok(c, &["BF.EXISTS", &k("bloom"), "item"]), int(1));
    assert_eq!(ok(c, &["CF.COUNT", &k("cuckoo"), "item"]), int(2));
}

const NAMES: [&str; 9] = [
    "str", "bits", "set", "hash", "list", "zset", "stream", "bloom", "cuckoo",
];

#[test]
fn rename_moves_every_type_and_leaves_nothing_behind() {
    let mut s = TestServer::start();
    let mut c = s.client();
    fill(&mut c, "old-");
    for n in NAMES {
        assert_eq!(
            ok(
                &mut c,
                &[
                    "RENAME",
                    &format!("old-{n}"),
                    &format!("a-much-longer-new-name-{n}")
                ]
            ),
            Value::Okay
        );
    }
    check(&mut c, "a-much-longer-new-name-");
    assert_eq!(ok(&mut c, &["KEYS", "old-*"]), Value::Array(vec![]));
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(NAMES.len() as i64));
    // Back to a shorter name, over existing keys of other types (replaced whole).
    fill(&mut c, "n");
    for n in NAMES {
        let from = format!("a-much-longer-new-name-{n}");
        let to = format!(
            "n{}",
            NAMES[(NAMES.iter().position(|x| *x == n).unwrap() + 1) % NAMES.len()]
        );
        ok(&mut c, &["RENAME", &from, &format!("tmp-{to}")]);
    }
    for n in NAMES {
        let to = format!(
            "n{}",
            NAMES[(NAMES.iter().position(|x| *x == n).unwrap() + 1) % NAMES.len()]
        );
        ok(&mut c, &["RENAME", &format!("tmp-{to}"), &format!("n{n}")]);
    }
    check(&mut c, "n");
    s.restart();
    let mut c = s.client();
    check(&mut c, "n");
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(NAMES.len() as i64));
}

#[test]
fn rename_keeps_the_time_to_live_and_answers_as_redis() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(err(&mut c, &["RENAME", "none", "x"]), "ERR no such key");
    assert_eq!(err(&mut c, &["RENAMENX", "none", "x"]), "ERR no such key");
    ok(&mut c, &["SADD", "s", "m"]);
    ok(&mut c, &["EXPIRE", "s", "1000"]);
    assert_eq!(ok(&mut c, &["RENAME", "s", "s"]), Value::Okay);
    assert_eq!(ok(&mut c, &["RENAMENX", "s", "s"]), int(0));
    ok(&mut c, &["RENAME", "s", "t"]);
    let ttl: i64 = redis::from_redis_value(ok(&mut c, &["TTL", "t"])).unwrap();
    assert!((990..=1000).contains(&ttl), "{ttl}");
    ok(&mut c, &["SET", "u", "x"]);
    assert_eq!(ok(&mut c, &["RENAMENX", "t", "u"]), int(0));
    assert_eq!(ok(&mut c, &["RENAMENX", "t", "w"]), int(1));
    assert_eq!(ok(&mut c, &["EXISTS", "t"]), int(0));
    assert_eq!(
        ok(&mut c, &["SMEMBERS", "w"]),
        Value::Array(vec![bulk("m")])
    );
    // A key without a TTL replacing one with a TTL: none afterwards.
    ok(&mut c, &["SET", "plain", "p"]);
    ok(&mut c, &["RENAME", "plain", "w"]);
    assert_eq!(ok(&mut c, &["TTL", "w"]), int(-1));
    let info: String = redis::from_redis_value(ok(&mut c, &["INFO", "keyspace"])).unwrap();
    assert!(info.contains("db0:keys=2,expires=0,"), "{info}");
}

#[test]
fn a_long_member_moves_between_its_two_forms_with_the_name() {
    // Members near the engine's key limit are stored hashed when the key's name leaves too
    // little room; a rename to a longer or shorter name must still find them.
    let s = TestServer::start();
    let mut c = s.client();
    let long = "m".repeat(65_400);
    ok(&mut c, &["SADD", "k", &long, "short"]);
    ok(&mut c, &["HSET", "h", &long, "v"]);
    let longer_name = "k".repeat(200);
    ok(&mut c, &["RENAME", "k", &longer_name]);
    assert_eq!(ok(&mut c, &["SISMEMBER", &longer_name, &long]), int(1));
    assert_eq!(ok(&mut c, &["SCARD", &longer_name]), int(2));
    ok(&mut c, &["RENAME", &longer_name, "k"]);
    assert_eq!(ok(&mut c, &["SISMEMBER", "k", &long]), int(1));
    ok(&mut c, &["RENAME", "h", &longer_name]);
    assert_eq!(ok(&mut c, &["HGET", &longer_name, &long]), bulk("v"));
}

#[test]
fn a_rename_onto_a_waited_key_serves_the_blocked_client() {
    let s = TestServer::start();
    let mut waiter = s.client();
    let mut c = s.client();
    let t = std::thread::spawn(move || ok(&mut waiter, &["BLPOP", "jobs", "0"]));
    common::wait_blocked(&mut c, 1);
    ok(&mut c, &["RPUSH", "staging", "job-1"]);
    ok(&mut c, &["RENAME", "staging", "jobs"]);
    assert_eq!(
        t.join().unwrap(),
        Value::Array(vec![bulk("jobs"), bulk("job-1")])
    );
}

#[test]
fn copy_and_move_between_databases() {
    let s = TestServer::start();
    let (mut zero, mut two) = (s.client(), s.client_db(2));
    fill(&mut zero, "");
    for n in NAMES {
        assert_eq!(ok(&mut zero, &["COPY", n, n, "DB", "2"]), int(1));
        assert_eq!(ok(&mut zero, &["COPY", n, &format!("c-{n}")]), int(1));
    }
    check(&mut two, "");
    check(&mut zero, "");
    check(&mut zero, "c-");
    // The copies are independent.
    ok(&mut two, &["SADD", "set", "only-in-2"]);
    assert_eq!(ok(&mut zero, &["SISMEMBER", "set", "only-in-2"]), int(0));
    assert_eq!(
        ok(&mut zero, &["COPY", "set", "c-set"]),
        int(0),
        "exists, no REPLACE"
    );
    assert_eq!(ok(&mut zero, &["COPY", "str", "c-set", "REPLACE"]), int(1));
    assert_eq!(
        ok(&mut zero, &["TYPE", "c-set"]),
        Value::SimpleString("string".into())
    );
    assert_eq!(ok(&mut zero, &["COPY", "none", "x"]), int(0));
    assert_eq!(
        err(&mut zero, &["COPY", "str", "str"]),
        "ERR source and destination objects are the same"
    );
    assert_eq!(
        err(&mut zero, &["COPY", "str", "x", "DB", "99"]),
        "ERR DB index is out of range"
    );
    assert_eq!(
        err(&mut zero, &["COPY", "str", "x", "BOGUS"]),
        "ERR syntax error"
    );

    // MOVE: refuses an existing destination, else moves with the TTL.
    assert_eq!(ok(&mut zero, &["MOVE", "str", "2"]), int(0), "exists in 2");
    ok(&mut zero, &["SET", "mv", "1", "EX", "500"]);
    assert_eq!(ok(&mut zero, &["MOVE", "mv", "2"]), int(1));
    assert_eq!(ok(&mut zero, &["EXISTS", "mv"]), int(0));
    let ttl: i64 = redis::from_redis_value(ok(&mut two, &["TTL", "mv"])).unwrap();
    assert!((490..=500).contains(&ttl), "{ttl}");
    assert_eq!(ok(&mut zero, &["MOVE", "none", "2"]), int(0));
    assert_eq!(
        err(&mut zero, &["MOVE", "set", "0"]),
        "ERR source and destination objects are the same"
    );
    assert_eq!(
        err(&mut zero, &["MOVE", "set", "x"]),
        "ERR value is not an integer or out of range"
    );
    assert_eq!(ok(&mut zero, &["MOVE", "c-zset", "2"]), int(1));
    assert_eq!(ok(&mut two, &["ZSCORE", "c-zset", "one"]), bulk("1"));
    let info: String = redis::from_redis_value(ok(&mut zero, &["INFO", "keyspace"])).unwrap();
    assert!(
        info.contains("db0:keys=17,") && info.contains("db2:keys=11,expires=1,"),
        "{info}"
    );
}
