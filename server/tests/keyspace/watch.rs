//! WATCH / UNWATCH across connections: EXEC answers a nil array when a watched key changed
//! (a write by another client or by the client itself, an expiry, FLUSHDB), runs when none
//! did, and every way out of a transaction forgets the watches.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common;

use std::time::Duration;

use common::{TestServer, bulk, err, int, ok};
use redis::Value;

/// Runs `MULTI`, the commands, `EXEC` on `c`; returns EXEC's reply.
fn transaction(c: &mut redis::Connection, cmds: &[&[&str]]) -> Value {
    assert_eq!(ok(c, &["MULTI"]), Value::Okay);
    for cmd in cmds {
        assert_eq!(ok(c, cmd), Value::SimpleString("QUEUED".into()));
    }
    ok(c, &["EXEC"])
}

#[test]
fn a_change_by_another_client_aborts_exec() {
    let s = TestServer::start();
    let (mut a, mut b) = (s.client(), s.client());
    ok(&mut a, &["SET", "k", "1"]);
    ok(&mut a, &["WATCH", "k", "other"]);
    ok(&mut b, &["SET", "k", "2"]);
    assert_eq!(
        transaction(&mut a, &[&["SET", "k", "3"], &["SET", "x", "1"]]),
        Value::Nil
    );
    assert_eq!(
        ok(&mut a, &["GET", "k"]),
        bulk("2"),
        "the queued commands did not run"
    );
    assert_eq!(ok(&mut a, &["EXISTS", "x"]), int(0));
    // The watches ended with EXEC: the next transaction runs.
    ok(&mut b, &["SET", "k", "4"]);
    assert_eq!(
        transaction(&mut a, &[&["INCR", "k"]]),
        Value::Array(vec![int(5)])
    );
}

#[test]
fn no_change_lets_exec_run() {
    let s = TestServer::start();
    let (mut a, mut b) = (s.client(), s.client());
    ok(&mut a, &["SET", "k", "1"]);
    ok(&mut a, &["WATCH", "k", "absent"]);
    // Writes to other keys, reads of the watched ones, and a watcher on the same key elsewhere.
    ok(&mut b, &["SET", "unrelated", "x"]);
    ok(&mut b, &["GET", "k"]);
    ok(&mut b, &["WATCH", "k"]);
    assert_eq!(
        transaction(&mut a, &[&["INCR", "k"], &["GET", "absent"]]),
        Value::Array(vec![int(2), Value::Nil])
    );
    // a's EXEC wrote k: b's watch sees it.
    assert_eq!(transaction(&mut b, &[&["GET", "k"]]), Value::Nil);
}

#[test]
fn own_writes_and_every_kind_of_write_count() {
    let s = TestServer::start();
    let (mut a, mut b) = (s.client(), s.client());
    // The client's own write between WATCH and MULTI.
    ok(&mut a, &["WATCH", "k"]);
    ok(&mut a, &["SET", "k", "mine"]);
    assert_eq!(transaction(&mut a, &[&["GET", "k"]]), Value::Nil);
    // Writes to members, fields and expiry are writes to the key.
    ok(&mut a, &["SADD", "s", "m"]);
    ok(&mut a, &["HSET", "h", "f", "v"]);
    ok(&mut a, &["SET", "e", "v"]);
    for (key, write) in [
        ("s", &["SADD", "s", "n"][..]),
        ("s", &["SREM", "s", "m"]),
        ("h", &["HSET", "h", "f", "w"]),
        ("h", &["HINCRBY", "h", "n", "1"]),
        ("e", &["EXPIRE", "e", "100"]),
        ("e", &["PERSIST", "e"]),
        ("e", &["DEL", "e"]),
        ("new", &["SETNX", "new", "1"]),
    ] {
        ok(&mut a, &["WATCH", key]);
        ok(&mut b, write);
        assert_eq!(transaction(&mut a, &[&["PING"]]), Value::Nil, "{write:?}");
    }
    // A write that changes nothing is no write: SADD of a present member, DEL of nothing.
    ok(&mut a, &["WATCH", "s", "nothing"]);
    ok(&mut b, &["SADD", "s", "n"]);
    ok(&mut b, &["DEL", "nothing"]);
    assert_eq!(
        transaction(&mut a, &[&["PING"]]),
        Value::Array(vec![Value::SimpleString("PONG".into())])
    );
    // SMOVE of a member the destination has already leaves the destination unchanged.
    ok(&mut b, &["SADD", "src", "a", "b"]);
    ok(&mut b, &["SADD", "dstset", "a"]);
    ok(&mut a, &["WATCH", "dstset"]);
    ok(&mut b, &["SMOVE", "src", "dstset", "a"]);
    assert_eq!(
        transaction(&mut a, &[&["SADD", "dstset", "c"]]),
        Value::Array(vec![int(1)])
    );
    assert_eq!(ok(&mut a, &["SCARD", "dstset"]), int(2));
    // A pipelined group of another client's writes marks the watcher too.
    ok(&mut a, &["WATCH", "g"]);
    let mut p = redis::pipe();
    for i in 0..20 {
        p.cmd("SET").arg(format!("p{i}")).arg(i).ignore();
    }
    p.cmd("SET").arg("g").arg(1).ignore();
    p.query::<()>(&mut b).unwrap();
    assert_eq!(transaction(&mut a, &[&["PING"]]), Value::Nil);
}

#[test]
fn watch_rules_and_clearing() {
    let s = TestServer::start();
    let (mut a, mut b) = (s.client(), s.client());
    // WATCH inside MULTI is refused without aborting the transaction.
    ok(&mut a, &["MULTI"]);
    assert_eq!(
        err(&mut a, &["WATCH", "k"]),
        "ERR WATCH inside MULTI is not allowed"
    );
    ok(&mut a, &["SET", "k", "1"]);
    assert_eq!(ok(&mut a, &["EXEC"]), Value::Array(vec![Value::Okay]));
    assert_eq!(
        err(&mut a, &["WATCH"]),
        "ERR wrong number of arguments for 'watch' command"
    );
    // UNWATCH forgets.
    ok(&mut a, &["WATCH", "k"]);
    assert_eq!(ok(&mut a, &["UNWATCH"]), Value::Okay);
    ok(&mut b, &["SET", "k", "2"]);
    assert_eq!(
        transaction(&mut a, &[&["GET", "k"]]),
        Value::Array(vec![bulk("2")])
    );
    // DISCARD forgets.
    ok(&mut a, &["WATCH", "k"]);
    ok(&mut a, &["MULTI"]);
    ok(&mut a, &["DISCARD"]);
    ok(&mut b, &["SET", "k", "3"]);
    assert_eq!(
        transaction(&mut a, &[&["GET", "k"]]),
        Value::Array(vec![bulk("3")])
    );
    // An aborted EXEC forgets too.
    ok(&mut a, &["WATCH", "k"]);
    ok(&mut b, &["SET", "k", "4"]);
    assert_eq!(transaction(&mut a, &[&["GET", "k"]]), Value::Nil);
    ok(&mut b, &["SET", "k", "5"]);
    assert_eq!(
        transaction(&mut a, &[&["GET", "k"]]),
        Value::Array(vec![bulk("5")])
    );
    // EXECABORT forgets.
    ok(&mut a, &["WATCH", "k"]);
    ok(&mut a, &["MULTI"]);
    assert!(err(&mut a, &["NOSUCHCOMMAND"]).starts_with("ERR unknown command"));
    assert!(err(&mut a, &["EXEC"]).starts_with("EXECABORT"));
    ok(&mut b, &["SET", "k", "6"]);
    assert_eq!(
        transaction(&mut a, &[&["GET", "k"]]),
        Value::Array(vec![bulk("6")])
    );
    // RESET forgets.
    ok(&mut a, &["WATCH", "k"]);
    ok(&mut a, &["RESET"]);
    ok(&mut b, &["SET", "k", "7"]);
    assert_eq!(
        transaction(&mut a, &[&["GET", "k"]]),
        Value::Array(vec![bulk("7")])
    );
    // Watching a key twice is watching it once; a client that leaves takes its watches.
    ok(&mut a, &["WATCH", "k", "k", "j"]);
    ok(&mut b, &["WATCH", "k"]);
    assert_eq!(watched_keys(&mut b), 2);
    drop(a);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while watched_keys(&mut b) != 1 {
        assert!(
            std::time::Instant::now() < deadline,
            "watches outlived their client"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    ok(&mut b, &["UNWATCH"]);
    assert_eq!(watched_keys(&mut b), 0);
}

/// INFO clients' `total_watched_keys`.
fn watched_keys(c: &mut redis::Connection) -> usize {
    let Value::BulkString(info) = ok(c, &["INFO", "clients"]) else {
        panic!()
    };
    let info = String::from_utf8(info).unwrap();
    let line = info
        .lines()
        .find_map(|l| l.strip_prefix("total_watched_keys:"))
        .unwrap();
    line.trim().parse().unwrap()
}

#[test]
fn nil_array_in_both_protocols() {
    let s = TestServer::start();
    let mut b = s.client();
    for (hello, nil) in [(&b"2"[..], &b"*-1\r\n"[..]), (b"3", b"_\r\n")] {
        let mut raw = s.raw();
        raw.cmd(&[b"HELLO", hello]);
        raw.read_until(b"modules\r\n*0\r\n");
        raw.expect(&[b"WATCH", b"k"], b"+OK\r\n");
        ok(&mut b, &["INCR", "k"]);
        raw.expect(&[b"MULTI"], b"+OK\r\n");
        raw.expect(&[b"GET", b"k"], b"+QUEUED\r\n");
        raw.expect(&[b"EXEC"], nil);
    }
}

#[test]
fn expiry_counts_as_a_change() {
    let s = TestServer::start();
    let mut a = s.client();
    // Live when watched, expired by EXEC (whether or not the reclaimer removed it yet).
    for wait in [20, 400] {
        ok(&mut a, &["SET", "t", "v", "PX", "10"]);
        ok(&mut a, &["WATCH", "t"]);
        std::thread::sleep(Duration::from_millis(wait));
        assert_eq!(transaction(&mut a, &[&["PING"]]), Value::Nil, "wait {wait}");
    }
    // Expired already when watched: its removal by the reclaimer changes nothing.
    ok(&mut a, &["SET", "stale", "v", "PX", "1"]);
    std::thread::sleep(Duration::from_millis(5));
    ok(&mut a, &["WATCH", "stale"]);
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(ok(&mut a, &["EXISTS", "stale"]), int(0));
    assert_eq!(
        transaction(&mut a, &[&["PING"]]),
        Value::Array(vec![Value::SimpleString("PONG".into())])
    );
    // A key with a TTL still to run is unchanged.
    ok(&mut a, &["SET", "long", "v", "EX", "100"]);
    ok(&mut a, &["WATCH", "long"]);
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(
        transaction(&mut a, &[&["GET", "long"]]),
        Value::Array(vec![bulk("v")])
    );
}

#[test]
fn flushdb_touches_the_watched_keys_that_existed() {
    let s = TestServer::start();
    let (mut a, mut b) = (s.client(), s.client());
    ok(&mut a, &["SET", "k", "v"]);
    ok(&mut a, &["WATCH", "k"]);
    ok(&mut b, &["FLUSHDB"]);
    assert_eq!(transaction(&mut a, &[&["PING"]]), Value::Nil);
    // A watched key that did not exist is not affected.
    ok(&mut a, &["WATCH", "absent"]);
    ok(&mut b, &["SET", "other", "v"]);
    ok(&mut b, &["FLUSHALL"]);
    assert_eq!(
        transaction(&mut a, &[&["PING"]]),
        Value::Array(vec![Value::SimpleString("PONG".into())])
    );
    // A transaction of another client that writes the key and then flushes touches it.
    ok(&mut a, &["WATCH", "absent"]);
    transaction(&mut b, &[&["SET", "absent", "1"], &["FLUSHDB"]]);
    assert_eq!(transaction(&mut a, &[&["PING"]]), Value::Nil);
}

/// Which writes that change nothing still count as a change for WATCH, as redis-server
/// 7.0.15 decides (each case checked against it): a SETBIT to the bit's own value does
/// not, LTRIM keeping every element does, and so does an HSET of the same value.
#[test]
fn writes_that_change_nothing_touch_as_redis_decides() {
    let s = TestServer::start();
    let mut a = s.client();
    let mut b = s.client();
    // (setup commands, the other client's write, whether EXEC then fails)
    type Case<'a> = (&'a [&'a [&'a str]], &'a [&'a str], bool);
    let cases: &[Case<'_>] = &[
        (&[&["SET", "k", "a"]], &["SETBIT", "k", "1", "1"], false),
        (&[&["SET", "k", "a"]], &["SETBIT", "k", "0", "0"], false),
        (&[&["SET", "k", "a"]], &["SETBIT", "k", "7", "0"], true),
        (
            &[&["RPUSH", "k", "1", "2"]],
            &["LTRIM", "k", "0", "-1"],
            true,
        ),
        (&[&["SET", "k", "abc"]], &["SETRANGE", "k", "0", "a"], true),
        (&[&["SET", "k", "a"]], &["PERSIST", "k"], false),
        (&[&["HSET", "k", "f", "v"]], &["HSET", "k", "f", "v"], true),
        (&[&["SADD", "k", "m"]], &["SADD", "k", "m"], false),
        (&[&["ZADD", "k", "1", "m"]], &["ZADD", "k", "1", "m"], false),
        (&[], &["DEL", "k"], false),
        (&[&["RPUSH", "k", "1"]], &["LREM", "k", "0", "x"], false),
    ];
    for (setup, write, touches) in cases {
        ok(&mut a, &["FLUSHALL"]);
        for cmd in *setup {
            ok(&mut a, cmd);
        }
        ok(&mut a, &["WATCH", "k"]);
        ok(&mut b, write);
        let exec = transaction(&mut a, &[&["PING"]]);
        assert_eq!(
            exec == Value::Nil,
            *touches,
            "{write:?} after {setup:?}: {exec:?}"
        );
    }
}
