//! MONITOR: every command other clients send, as Redis's status lines, in the order run,
//! with the database and the client's address; administrative commands and passwords left
//! out; RESET (or the monitor leaving) stops the feed.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common::{Raw, TestServer, ok};

/// Reads one status line and returns it without `+` and CRLF.
fn line(m: &mut Raw) -> String {
    let l = String::from_utf8(m.read_until(b"\r\n")).unwrap();
    assert!(l.starts_with('+'), "{l:?}");
    l.trim_start_matches('+').trim_end().to_string()
}

/// The part after `[db addr] `, and the db.
fn shown(l: &str) -> (String, String) {
    let (head, rest) = l.split_once("] ").unwrap();
    let (time, client) = head.split_once(" [").unwrap();
    let (secs, micros) = time.split_once('.').unwrap();
    assert!(secs.parse::<u64>().unwrap() > 1_600_000_000, "{l}");
    assert_eq!(micros.len(), 6, "{l}");
    let db = client.split(' ').next().unwrap().to_string();
    (db, rest.to_string())
}

#[test]
fn monitors_see_every_command_as_redis_prints_it() {
    let s = TestServer::with(|c| c.requirepass = Some("pw".into()));
    let mut m = Raw::connect(s.port);
    m.expect(&[b"AUTH", b"pw"], b"+OK\r\n");
    m.expect(&[b"MONITOR"], b"+OK\r\n");
    let mut c = redis::Client::open(format!("redis://:pw@127.0.0.1:{}/", s.port))
        .unwrap()
        .get_connection()
        .unwrap();
    ok(&mut c, &["SET", "k", "a \"b\"\n\\"]);
    ok(&mut c, &["CONFIG", "GET", "maxmemory"]);
    ok(&mut c, &["SELECT", "2"]);
    ok(&mut c, &["GET", "k"]);
    let mut p = redis::pipe();
    p.cmd("INCR").arg("n").cmd("DEL").arg("n");
    let _: redis::Value = p.query(&mut c).unwrap();
    let mut p = redis::pipe();
    p.atomic().cmd("INCR").arg("m");
    let _: redis::Value = p.query(&mut c).unwrap();
    ok(&mut c, &["AUTH", "pw"]);

    // The client's own handshake (HELLO or AUTH, CLIENT SETINFO...) comes first: skip to SET.
    let mut l = line(&mut m);
    while !shown(&l).1.starts_with("\"SET\"") {
        assert!(!l.contains("pw"), "a password reached a monitor: {l}");
        l = line(&mut m);
    }
    assert_eq!(shown(&l), ("0".into(), r#""SET" "k" "a \"b\"\n\\""#.into()));
    // CONFIG is administrative: not shown.
    // Shown once run, so in the database it selected (as Redis 7 shows it).
    assert_eq!(shown(&line(&mut m)), ("2".into(), r#""SELECT" "2""#.into()));
    assert_eq!(shown(&line(&mut m)), ("2".into(), r#""GET" "k""#.into()));
    assert_eq!(shown(&line(&mut m)), ("2".into(), r#""INCR" "n""#.into()));
    assert_eq!(shown(&line(&mut m)), ("2".into(), r#""DEL" "n""#.into()));
    // A transaction: MULTI, each command as EXEC runs it, then EXEC.
    assert_eq!(shown(&line(&mut m)).1, r#""MULTI""#);
    assert_eq!(shown(&line(&mut m)).1, r#""INCR" "m""#);
    assert_eq!(shown(&line(&mut m)).1, r#""EXEC""#);
    assert_eq!(shown(&line(&mut m)).1, r#""AUTH" "(redacted)""#);

    // RESET ends monitoring: the next thing this connection reads is its own PONG.
    m.expect(&[b"RESET"], b"+RESET\r\n");
    m.expect(&[b"AUTH", b"pw"], b"+OK\r\n");
    ok(&mut c, &["SET", "unseen", "1"]);
    m.expect(&[b"PING"], b"+PONG\r\n");
}

#[test]
fn a_monitor_that_leaves_is_forgotten() {
    let s = TestServer::start();
    let mut m = Raw::connect(s.port);
    m.expect(&[b"MONITOR"], b"+OK\r\n");
    drop(m);
    let mut c = s.client();
    // Commands keep being answered with nobody to feed (the dead mailbox is gone, or its
    // feed is dropped).
    for i in 0..100 {
        ok(&mut c, &["SET", "k", &i.to_string()]);
    }
    let mut m2 = Raw::connect(s.port);
    m2.expect(&[b"MONITOR"], b"+OK\r\n");
    ok(&mut c, &["GET", "k"]);
    assert_eq!(shown(&line(&mut m2)).1, r#""GET" "k""#);
}

#[test]
fn a_script_s_commands_follow_its_own_line_as_lua() {
    let s = TestServer::start();
    let mut m = Raw::connect(s.port);
    m.expect(&[b"MONITOR"], b"+OK\r\n");
    let mut c = s.client_db(3);
    let script = "redis.call('SET', KEYS[1], ARGV[1]) redis.call('SELECT', 5) \
                  return redis.call('GET', KEYS[1])";
    ok(&mut c, &["EVAL", script, "1", "k", "v"]);
    ok(
        &mut c,
        &["EVAL_RO", "return redis.call('EXISTS', KEYS[1])", "1", "k"],
    );
    let mut l = line(&mut m);
    while !shown(&l).1.starts_with("\"EVAL\"") {
        l = line(&mut m);
    }
    let lua = |l: &str| {
        let (head, _) = l.split_once("] ").unwrap();
        head.ends_with(" lua")
    };
    assert!(!lua(&l), "{l}");
    let next = line(&mut m);
    assert!(lua(&next), "{next}");
    assert_eq!(shown(&next), ("3".into(), r#""SET" "k" "v""#.into()));
    // Shown once run: SELECT in the database it selected (redis-server 7.0.15 prints
    // `[3 lua] "SET" "k" "v"`, `[5 lua] "SELECT" "5"`, `[5 lua] "GET" "k"` for this script).
    assert_eq!(shown(&line(&mut m)), ("5".into(), r#""SELECT" "5""#.into()));
    let get = line(&mut m);
    assert_eq!(shown(&get), ("5".into(), r#""GET" "k""#.into()));
    assert!(lua(&get));
    let ro = line(&mut m);
    assert!(shown(&ro).1.starts_with("\"EVAL_RO\""), "{ro}");
    assert_eq!(shown(&line(&mut m)), ("3".into(), r#""EXISTS" "k""#.into()));
}
