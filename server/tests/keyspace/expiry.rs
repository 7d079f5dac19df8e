//! Times to live: SET's options, the EXPIRE and TTL families, PERSIST, GETEX, GETDEL; expired
//! keys invisible to every command, reclaimed in the background, and absolute across restarts.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common;

use std::time::Duration;

use common::{TestServer, bulk, err, int, ok};
use redis::Value;

fn ttl(c: &mut redis::Connection, cmd: &str, key: &str) -> i64 {
    match ok(c, &[cmd, key]) {
        Value::Int(n) => n,
        v => panic!("{cmd} answered {v:?}"),
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

#[test]
fn set_options_and_ttl_queries() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(ttl(&mut c, "TTL", "none"), -2);
    ok(&mut c, &["SET", "k", "v"]);
    assert_eq!(ttl(&mut c, "TTL", "k"), -1);
    assert_eq!(ttl(&mut c, "PEXPIRETIME", "k"), -1);
    ok(&mut c, &["SET", "k", "v", "EX", "100"]);
    assert!((99..=100).contains(&ttl(&mut c, "TTL", "k")));
    assert!((99_000..=100_000).contains(&ttl(&mut c, "PTTL", "k")));
    // KEEPTTL keeps it; a plain SET clears it; INCR and APPEND keep it.
    ok(&mut c, &["SET", "k", "w", "KEEPTTL"]);
    assert!(ttl(&mut c, "TTL", "k") > 0);
    ok(&mut c, &["APPEND", "k", "x"]);
    assert!(ttl(&mut c, "TTL", "k") > 0);
    ok(&mut c, &["SET", "k", "v"]);
    assert_eq!(ttl(&mut c, "TTL", "k"), -1);
    ok(&mut c, &["SET", "n", "1", "PX", "100000"]);
    ok(&mut c, &["INCR", "n"]);
    assert!(ttl(&mut c, "TTL", "n") > 0);
    let at = now_ms() / 1000 + 1000;
    ok(&mut c, &["SET", "a", "v", "EXAT", &at.to_string()]);
    assert_eq!(ttl(&mut c, "EXPIRETIME", "a"), at);
    ok(
        &mut c,
        &["SET", "b", "v", "PXAT", &(at * 1000 + 7).to_string()],
    );
    assert_eq!(ttl(&mut c, "PEXPIRETIME", "b"), at * 1000 + 7);
    // Redis's errors.
    assert_eq!(
        err(&mut c, &["SET", "k", "v", "EX", "0"]),
        "ERR invalid expire time in 'set' command"
    );
    assert_eq!(
        err(&mut c, &["SET", "k", "v", "EX", "-5"]),
        "ERR invalid expire time in 'set' command"
    );
    assert_eq!(
        err(&mut c, &["SET", "k", "v", "EX", "9223372036854775807"]),
        "ERR invalid expire time in 'set' command"
    );
    assert_eq!(
        err(&mut c, &["SET", "k", "v", "EX", "x"]),
        "ERR value is not an integer or out of range"
    );
    assert_eq!(err(&mut c, &["SET", "k", "v", "EX"]), "ERR syntax error");
    assert_eq!(
        err(&mut c, &["SET", "k", "v", "EX", "1", "KEEPTTL"]),
        "ERR syntax error"
    );
    assert_eq!(
        err(&mut c, &["SETEX", "k", "0", "v"]),
        "ERR invalid expire time in 'setex' command"
    );
    ok(&mut c, &["SETEX", "sx", "50", "v"]);
    assert!(ttl(&mut c, "TTL", "sx") > 0);
    ok(&mut c, &["PSETEX", "px", "50000", "v"]);
    assert!(ttl(&mut c, "PTTL", "px") > 40_000);
}

#[test]
fn expire_family_conditions() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["EXPIRE", "none", "10"]), int(0));
    ok(&mut c, &["SET", "k", "v"]);
    assert_eq!(ok(&mut c, &["EXPIRE", "k", "100", "XX"]), int(0));
    assert_eq!(ok(&mut c, &["EXPIRE", "k", "100", "GT"]), int(0));
    assert_eq!(ok(&mut c, &["EXPIRE", "k", "100", "NX"]), int(1));
    assert_eq!(ok(&mut c, &["EXPIRE", "k", "200", "NX"]), int(0));
    assert_eq!(ok(&mut c, &["EXPIRE", "k", "50", "GT"]), int(0));
    assert_eq!(ok(&mut c, &["EXPIRE", "k", "200", "GT"]), int(1));
    assert_eq!(ok(&mut c, &["EXPIRE", "k", "300", "LT"]), int(0));
    assert_eq!(ok(&mut c, &["EXPIRE", "k", "150", "LT"]), int(1));
    assert!((149..=150).contains(&ttl(&mut c, "TTL", "k")));
    assert_eq!(ok(&mut c, &["PEXPIRE", "k", "90000", "XX"]), int(1));
    assert_eq!(
        err(&mut c, &["EXPIRE", "k", "10", "NX", "XX"]),
        "ERR NX and XX, GT or LT options at the same time are not compatible"
    );
    assert_eq!(
        err(&mut c, &["EXPIRE", "k", "10", "GT", "LT"]),
        "ERR GT and LT options at the same time are not compatible"
    );
    assert_eq!(
        err(&mut c, &["EXPIRE", "k", "10", "BOGUS"]),
        "ERR Unsupported option BOGUS"
    );
    assert_eq!(
        err(&mut c, &["EXPIRE", "k", "9223372036854775807"]),
        "ERR invalid expire time in 'expire' command"
    );
    // Overflow is refused before the key is looked up (as redis-server 7.0.15 answers).
    for (cmd, n) in [
        ("EXPIRE", "9223372036854775807"),
        ("PEXPIRE", "9223372036854775807"),
        ("EXPIRE", "-9223372036854775808"),
        ("EXPIREAT", "9223372036854775807"),
    ] {
        assert_eq!(
            err(&mut c, &[cmd, "nokey", n]),
            format!(
                "ERR invalid expire time in '{}' command",
                cmd.to_lowercase()
            )
        );
    }
    assert_eq!(
        ok(&mut c, &["PEXPIRE", "nokey", "-9223372036854775808"]),
        int(0)
    );
    assert_eq!(
        ok(&mut c, &["PEXPIREAT", "nokey", "9223372036854775807"]),
        int(0)
    );
    assert_eq!(ok(&mut c, &["PERSIST", "k"]), int(1));
    assert_eq!(ok(&mut c, &["PERSIST", "k"]), int(0));
    assert_eq!(ttl(&mut c, "TTL", "k"), -1);
    // LT on a key without a time to live succeeds (it counts as infinite).
    assert_eq!(ok(&mut c, &["EXPIRE", "k", "100", "LT"]), int(1));
    let at = now_ms() / 1000 + 500;
    assert_eq!(ok(&mut c, &["EXPIREAT", "k", &at.to_string()]), int(1));
    assert_eq!(ttl(&mut c, "EXPIRETIME", "k"), at);
    // A time in the past deletes the key.
    assert_eq!(ok(&mut c, &["EXPIRE", "k", "-1"]), int(1));
    assert_eq!(ok(&mut c, &["EXISTS", "k"]), int(0));
    ok(&mut c, &["SET", "k", "v"]);
    assert_eq!(ok(&mut c, &["PEXPIREAT", "k", "1"]), int(1));
    assert_eq!(ok(&mut c, &["GET", "k"]), Value::Nil);
}

#[test]
fn getex_and_getdel() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["SET", "k", "v"]);
    assert_eq!(ok(&mut c, &["GETEX", "k", "EX", "100"]), bulk("v"));
    assert!(ttl(&mut c, "TTL", "k") > 0);
    assert_eq!(ok(&mut c, &["GETEX", "k", "PERSIST"]), bulk("v"));
    assert_eq!(ttl(&mut c, "TTL", "k"), -1);
    assert_eq!(ok(&mut c, &["GETEX", "k"]), bulk("v"));
    assert_eq!(ok(&mut c, &["GETEX", "none", "EX", "5"]), Value::Nil);
    assert_eq!(
        err(&mut c, &["GETEX", "k", "EX", "5", "PERSIST"]),
        "ERR syntax error"
    );
    assert_eq!(ok(&mut c, &["GETDEL", "k"]), bulk("v"));
    assert_eq!(ok(&mut c, &["GETDEL", "k"]), Value::Nil);
    ok(&mut c, &["SADD", "set", "m"]);
    assert!(err(&mut c, &["GETDEL", "set"]).starts_with("WRONGTYPE"));
}

#[test]
fn expired_keys_are_invisible_then_reclaimed() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["SET", "gone", "v", "PX", "100"]);
    ok(&mut c, &["SADD", "set", "a", "b", "c"]);
    ok(&mut c, &["PEXPIRE", "set", "100"]);
    ok(&mut c, &["SET", "stays", "v"]);
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(3));
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(ok(&mut c, &["GET", "gone"]), Value::Nil);
    assert_eq!(ok(&mut c, &["EXISTS", "gone", "set"]), int(0));
    assert_eq!(
        ok(&mut c, &["TYPE", "set"]),
        Value::SimpleString("none".into())
    );
    assert_eq!(ok(&mut c, &["SCARD", "set"]), int(0));
    assert_eq!(ok(&mut c, &["SISMEMBER", "set", "a"]), int(0));
    assert_eq!(
        ok(&mut c, &["KEYS", "*"]),
        Value::Array(vec![bulk("stays")])
    );
    // A new set under the old name starts empty: the expired one's members stay buried.
    assert_eq!(ok(&mut c, &["SADD", "set", "z"]), int(1));
    assert_eq!(ok(&mut c, &["SCARD", "set"]), int(1));
    assert_eq!(ok(&mut c, &["SISMEMBER", "set", "a"]), int(0));
    // The reclaimer removes "gone" in the background: DBSIZE drops without a read of it.
    let mut n = Value::Nil;
    for _ in 0..50 {
        n = ok(&mut c, &["DBSIZE"]);
        if n == int(2) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(n, int(2));
    let info = match ok(&mut c, &["INFO", "stats"]) {
        Value::BulkString(b) => String::from_utf8(b).unwrap(),
        v => panic!("{v:?}"),
    };
    // "set" may have been reclaimed too before SADD re-created it.
    assert!(
        info.contains("expired_keys:1\r") || info.contains("expired_keys:2\r"),
        "{info}"
    );
}

#[test]
fn times_to_live_survive_a_restart() {
    let mut s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["SET", "long", "v", "EX", "1000"]);
    ok(&mut c, &["SET", "short", "v", "PX", "300"]);
    let at = ttl(&mut c, "PEXPIRETIME", "long");
    drop(c);
    s.restart();
    let mut c = s.client();
    assert_eq!(ttl(&mut c, "PEXPIRETIME", "long"), at);
    assert!(ttl(&mut c, "PTTL", "short") <= 300);
    std::thread::sleep(Duration::from_millis(350));
    assert_eq!(ok(&mut c, &["GET", "short"]), Value::Nil);
    let mut info = String::new();
    for _ in 0..50 {
        info = match ok(&mut c, &["INFO", "keyspace"]) {
            Value::BulkString(b) => String::from_utf8(b).unwrap(),
            v => panic!("{v:?}"),
        };
        if info.contains("keys=1,expires=1") {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(info.contains("keys=1,expires=1"), "{info}");
}

/// INFO keyspace's line for db0 (`keys=N,expires=M,...`), empty when it has no keys.
fn db0(c: &mut redis::Connection) -> String {
    let info = match ok(c, &["INFO", "keyspace"]) {
        Value::BulkString(b) => String::from_utf8(b).unwrap(),
        v => panic!("{v:?}"),
    };
    info.lines()
        .find_map(|l| l.strip_prefix("db0:"))
        .map(|l| l.split(",avg_ttl").next().unwrap_or(l).to_string())
        .unwrap_or_default()
}

/// Polls `cond` until it holds (the server reports it), at most 5 s.
fn until(c: &mut redis::Connection, mut cond: impl FnMut(&mut redis::Connection) -> bool) {
    for _ in 0..500 {
        if cond(c) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("the condition never held");
}

/// SET replaces a record it reads once: the key counts, the time to live and the old value
/// it answers with GET must all come from that one read.
#[test]
fn set_keeps_key_counts_and_times_to_live_exact() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["SET", "a", "1", "EX", "100"]);
    assert_eq!(db0(&mut c), "keys=1,expires=1");
    ok(&mut c, &["SET", "a", "2"]);
    assert_eq!(db0(&mut c), "keys=1,expires=0");
    assert_eq!(ttl(&mut c, "TTL", "a"), -1);
    ok(&mut c, &["SET", "a", "3", "PX", "100000"]);
    ok(&mut c, &["SET", "a", "4", "KEEPTTL"]);
    assert_eq!(db0(&mut c), "keys=1,expires=1");
    assert!(ttl(&mut c, "TTL", "a") > 0);
    assert_eq!(ok(&mut c, &["SET", "a", "5", "GET"]), bulk("4"));
    assert_eq!(db0(&mut c), "keys=1,expires=0");
    assert_eq!(ok(&mut c, &["SET", "b", "1", "NX"]), Value::Okay);
    assert_eq!(ok(&mut c, &["SET", "b", "2", "NX"]), Value::Nil);
    assert_eq!(ok(&mut c, &["SET", "c", "1", "XX"]), Value::Nil);
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(2));
    // Over another type: the hash goes, the key is counted once.
    ok(&mut c, &["HSET", "h", "f", "v"]);
    ok(&mut c, &["SET", "h", "s"]);
    assert_eq!(
        ok(&mut c, &["TYPE", "h"]),
        Value::SimpleString("string".into())
    );
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(3));
    ok(&mut c, &["MSET", "a", "x", "d", "y"]);
    ok(&mut c, &["SETEX", "e", "100", "v"]);
    assert_eq!(db0(&mut c), "keys=5,expires=1");

    // A key made persistent keeps its new value after its old deadline passes ("gone", set
    // alongside, shows that deadline was reached and reclaimed).
    ok(&mut c, &["SET", "old", "v", "PX", "50"]);
    ok(&mut c, &["SET", "old", "v2"]);
    ok(&mut c, &["SET", "gone", "v", "PX", "50"]);
    until(&mut c, |c| db0(c) == "keys=6,expires=1");
    assert_eq!(ok(&mut c, &["GET", "old"]), bulk("v2"));
    assert_eq!(ttl(&mut c, "TTL", "old"), -1);

    // Over a key that has expired, reclaimed or not yet: counted once either way.
    ok(&mut c, &["SET", "x", "v", "PX", "30"]);
    until(&mut c, |c| ok(c, &["EXISTS", "x"]) == int(0));
    assert_eq!(ok(&mut c, &["SET", "x", "w", "NX"]), Value::Okay);
    assert_eq!(db0(&mut c), "keys=7,expires=1");
    assert_eq!(ok(&mut c, &["GET", "x"]), bulk("w"));
}
