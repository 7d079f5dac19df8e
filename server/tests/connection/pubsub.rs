//! Pub/sub across connections, in RESP2 (subscribed mode) and RESP3 (push frames): channels
//! and patterns, unsubscribe-all replies and counts, messages delivered to idle clients,
//! PUBSUB introspection, and slow subscribers cut off at the output limit.

use crate::common;

use std::time::{Duration, Instant};

use common::{Raw, TestServer, bulk, err, int, ok};
use redis::Value;

/// `*n` / `>n` frame of bulk strings and one integer, as subscribe confirmations are.
fn confirm(push: bool, kind: &str, name: Option<&str>, count: i64) -> Vec<u8> {
    let mut o = format!(
        "{}3\r\n${}\r\n{kind}\r\n",
        if push { '>' } else { '*' },
        kind.len()
    );
    match name {
        Some(n) => o.push_str(&format!("${}\r\n{n}\r\n", n.len())),
        None => o.push_str(if push { "_\r\n" } else { "$-1\r\n" }),
    }
    o.push_str(&format!(":{count}\r\n"));
    o.into_bytes()
}

fn message(push: bool, pattern: Option<&str>, channel: &str, payload: &str) -> Vec<u8> {
    let b = |s: &str| format!("${}\r\n{s}\r\n", s.len());
    let head = if push { '>' } else { '*' };
    match pattern {
        Some(p) => format!(
            "{head}4\r\n{}{}{}{}",
            b("pmessage"),
            b(p),
            b(channel),
            b(payload)
        ),
        None => format!("{head}3\r\n{}{}{}", b("message"), b(channel), b(payload)),
    }
    .into_bytes()
}

fn expect_bytes(raw: &mut Raw, want: &[u8]) {
    let got = raw.read_n(want.len());
    assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(want));
}

fn hello3(raw: &mut Raw) {
    raw.cmd(&[b"HELLO", b"3"]);
    raw.read_until(b"modules\r\n*0\r\n");
}

#[test]
fn resp2_channels_patterns_and_subscribed_mode() {
    let s = TestServer::start();
    let mut sub = s.raw();
    let mut p = s.client();
    sub.cmd(&[b"SUBSCRIBE", b"ch1", b"ch2"]);
    let mut want = confirm(false, "subscribe", Some("ch1"), 1);
    want.extend(confirm(false, "subscribe", Some("ch2"), 2));
    expect_bytes(&mut sub, &want);
    sub.expect(
        &[b"PSUBSCRIBE", b"ch*"],
        &confirm(false, "psubscribe", Some("ch*"), 3),
    );
    // A channel subscriber and a matching pattern each get the message.
    assert_eq!(ok(&mut p, &["PUBLISH", "ch1", "hello"]), int(2));
    assert_eq!(ok(&mut p, &["PUBLISH", "chx", "p"]), int(1));
    assert_eq!(ok(&mut p, &["PUBLISH", "other", "x"]), int(0));
    let mut want = message(false, None, "ch1", "hello");
    want.extend(message(false, Some("ch*"), "ch1", "hello"));
    want.extend(message(false, Some("ch*"), "chx", "p"));
    expect_bytes(&mut sub, &want);
    // Subscribed mode: only the pub/sub commands, PING, QUIT and RESET.
    sub.expect(
        &[b"GET", b"k"],
        b"-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n",
    );
    sub.expect(
        &[b"SET", b"k", b"v"],
        b"-ERR Can't execute 'set': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n",
    );
    sub.expect(&[b"PING"], b"*2\r\n$4\r\npong\r\n$0\r\n\r\n");
    sub.expect(&[b"PING", b"hi"], b"*2\r\n$4\r\npong\r\n$2\r\nhi\r\n");
    assert_eq!(
        ok(&mut p, &["EXISTS", "k"]),
        int(0),
        "the refused SET did not run"
    );
    // Introspection.
    assert_eq!(
        ok(&mut p, &["PUBSUB", "NUMSUB", "ch1", "ch2", "none"]),
        Value::Array(vec![
            bulk("ch1"),
            int(1),
            bulk("ch2"),
            int(1),
            bulk("none"),
            int(0)
        ])
    );
    assert_eq!(ok(&mut p, &["PUBSUB", "NUMSUB"]), Value::Array(vec![]));
    assert_eq!(ok(&mut p, &["PUBSUB", "NUMPAT"]), int(1));
    assert_eq!(
        ok(&mut p, &["PUBSUB", "CHANNELS"]),
        Value::Array(vec![bulk("ch1"), bulk("ch2")])
    );
    assert_eq!(
        ok(&mut p, &["PUBSUB", "CHANNELS", "*1"]),
        Value::Array(vec![bulk("ch1")])
    );
    // Unsubscribing from all answers once per channel, counting down.
    sub.cmd(&[b"UNSUBSCRIBE"]);
    let mut want = confirm(false, "unsubscribe", Some("ch1"), 2);
    want.extend(confirm(false, "unsubscribe", Some("ch2"), 1));
    expect_bytes(&mut sub, &want);
    sub.expect(&[b"UNSUBSCRIBE"], &confirm(false, "unsubscribe", None, 1));
    sub.expect(
        &[b"UNSUBSCRIBE", b"never"],
        &confirm(false, "unsubscribe", Some("never"), 1),
    );
    sub.expect(
        &[b"PUNSUBSCRIBE"],
        &confirm(false, "punsubscribe", Some("ch*"), 0),
    );
    sub.expect(&[b"PUNSUBSCRIBE"], &confirm(false, "punsubscribe", None, 0));
    // Out of subscribed mode, every command runs again.
    sub.expect(&[b"GET", b"k"], b"$-1\r\n");
    sub.expect(&[b"PING"], b"+PONG\r\n");
    assert_eq!(ok(&mut p, &["PUBSUB", "NUMPAT"]), int(0));
    assert_eq!(ok(&mut p, &["PUBLISH", "ch1", "x"]), int(0));
}

/// `smessage channel payload`, as SPUBLISH delivers.
fn smessage(push: bool, channel: &str, payload: &str) -> Vec<u8> {
    let b = |s: &str| format!("${}\r\n{s}\r\n", s.len());
    let head = if push { '>' } else { '*' };
    format!("{head}3\r\n{}{}{}", b("smessage"), b(channel), b(payload)).into_bytes()
}

#[test]
fn shard_channels_are_a_namespace_of_their_own() {
    let s = TestServer::start();
    let mut sub = s.raw();
    let mut p = s.client();
    sub.cmd(&[b"SSUBSCRIBE", b"orders", b"users"]);
    let mut want = confirm(false, "ssubscribe", Some("orders"), 1);
    want.extend(confirm(false, "ssubscribe", Some("users"), 2));
    expect_bytes(&mut sub, &want);
    // Channel and pattern counts do not include shard channels, and the other way round.
    sub.expect(
        &[b"SUBSCRIBE", b"orders"],
        &confirm(false, "subscribe", Some("orders"), 1),
    );
    sub.expect(
        &[b"PSUBSCRIBE", b"o*"],
        &confirm(false, "psubscribe", Some("o*"), 2),
    );
    // SPUBLISH reaches shard subscribers only; PUBLISH never reaches them.
    assert_eq!(ok(&mut p, &["SPUBLISH", "orders", "o1"]), int(1));
    assert_eq!(ok(&mut p, &["PUBLISH", "orders", "o2"]), int(2));
    assert_eq!(ok(&mut p, &["SPUBLISH", "nobody", "x"]), int(0));
    let mut want = smessage(false, "orders", "o1");
    want.extend(message(false, None, "orders", "o2"));
    want.extend(message(false, Some("o*"), "orders", "o2"));
    expect_bytes(&mut sub, &want);
    // Introspection.
    assert_eq!(
        ok(&mut p, &["PUBSUB", "SHARDCHANNELS"]),
        Value::Array(vec![bulk("orders"), bulk("users")])
    );
    assert_eq!(
        ok(&mut p, &["PUBSUB", "SHARDCHANNELS", "u*"]),
        Value::Array(vec![bulk("users")])
    );
    assert_eq!(
        ok(&mut p, &["PUBSUB", "SHARDNUMSUB", "orders", "none"]),
        Value::Array(vec![bulk("orders"), int(1), bulk("none"), int(0)])
    );
    assert_eq!(
        ok(&mut p, &["PUBSUB", "CHANNELS"]),
        Value::Array(vec![bulk("orders")])
    );
    let list: String = redis::from_redis_value(ok(&mut p, &["CLIENT", "LIST"])).unwrap();
    assert!(
        list.lines()
            .any(|l| l.contains("flags=P") && l.contains("sub=1 psub=1 ssub=2")),
        "{list}"
    );
    // Subscribed mode holds while any shard channel is left; SUNSUBSCRIBE counts down.
    sub.expect(
        &[b"UNSUBSCRIBE"],
        &confirm(false, "unsubscribe", Some("orders"), 1),
    );
    sub.expect(
        &[b"PUNSUBSCRIBE"],
        &confirm(false, "punsubscribe", Some("o*"), 0),
    );
    sub.expect(
        &[b"GET", b"k"],
        b"-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n",
    );
    sub.cmd(&[b"SUNSUBSCRIBE"]);
    let mut want = confirm(false, "sunsubscribe", Some("orders"), 1);
    want.extend(confirm(false, "sunsubscribe", Some("users"), 0));
    expect_bytes(&mut sub, &want);
    sub.expect(&[b"SUNSUBSCRIBE"], &confirm(false, "sunsubscribe", None, 0));
    sub.expect(&[b"GET", b"k"], b"$-1\r\n");
    assert_eq!(ok(&mut p, &["SPUBLISH", "orders", "x"]), int(0));
    assert_eq!(
        ok(&mut p, &["PUBSUB", "SHARDCHANNELS"]),
        Value::Array(vec![])
    );

    // RESP3: smessage is a push frame; a client leaving takes its shard channels.
    let mut sub3 = s.raw();
    hello3(&mut sub3);
    sub3.expect(
        &[b"SSUBSCRIBE", b"s"],
        &confirm(true, "ssubscribe", Some("s"), 1),
    );
    assert_eq!(ok(&mut p, &["SPUBLISH", "s", "hi"]), int(1));
    expect_bytes(&mut sub3, &smessage(true, "s", "hi"));
    sub3.expect(&[b"GET", b"k"], b"_\r\n");
    drop(sub3);
    let gone = Instant::now();
    while ok(&mut p, &["PUBSUB", "SHARDNUMSUB", "s"]) != Value::Array(vec![bulk("s"), int(0)]) {
        assert!(
            gone.elapsed() < Duration::from_secs(10),
            "the subscription outlived its client"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        err(&mut p, &["SPUBLISH", "s"]),
        "ERR wrong number of arguments for 'spublish' command"
    );
    assert_eq!(
        ok(&mut p, &["COMMAND", "GETKEYS", "SPUBLISH", "ch", "m"]),
        Value::Array(vec![bulk("ch")])
    );
}

#[test]
fn resp3_push_frames_and_commands_while_subscribed() {
    let s = TestServer::start();
    let mut sub = s.raw();
    let mut p = s.client();
    hello3(&mut sub);
    sub.expect(
        &[b"SUBSCRIBE", b"ch"],
        &confirm(true, "subscribe", Some("ch"), 1),
    );
    sub.expect(
        &[b"PSUBSCRIBE", b"c?"],
        &confirm(true, "psubscribe", Some("c?"), 2),
    );
    // RESP3 has no subscribed mode: any command runs.
    sub.expect(&[b"SET", b"k", b"v"], b"+OK\r\n");
    sub.expect(&[b"GET", b"k"], b"$1\r\nv\r\n");
    sub.expect(&[b"PING"], b"+PONG\r\n");
    assert_eq!(ok(&mut p, &["PUBLISH", "ch", "hi"]), int(2));
    let mut want = message(true, None, "ch", "hi");
    want.extend(message(true, Some("c?"), "ch", "hi"));
    expect_bytes(&mut sub, &want);
    sub.expect(
        &[b"UNSUBSCRIBE"],
        &confirm(true, "unsubscribe", Some("ch"), 1),
    );
    sub.expect(
        &[b"PUNSUBSCRIBE", b"c?"],
        &confirm(true, "punsubscribe", Some("c?"), 0),
    );
    sub.expect(&[b"UNSUBSCRIBE"], &confirm(true, "unsubscribe", None, 0));
}

#[test]
fn publish_to_self_inside_multi() {
    let s = TestServer::start();
    let mut c = s.raw();
    hello3(&mut c);
    c.expect(
        &[b"SUBSCRIBE", b"foo"],
        &confirm(true, "subscribe", Some("foo"), 1),
    );
    c.expect(&[b"MULTI"], b"+OK\r\n");
    c.expect(&[b"PING", b"abc"], b"+QUEUED\r\n");
    c.expect(&[b"PUBLISH", b"foo", b"bar"], b"+QUEUED\r\n");
    c.expect(&[b"PUBLISH", b"foo", b"vaz"], b"+QUEUED\r\n");
    c.expect(&[b"UNSUBSCRIBE", b"foo"], b"+QUEUED\r\n");
    c.expect(&[b"PING", b"def"], b"+QUEUED\r\n");
    // The replies first, then the messages published by the transaction.
    let mut want = b"*5\r\n$3\r\nabc\r\n:1\r\n:1\r\n".to_vec();
    want.extend(confirm(true, "unsubscribe", Some("foo"), 0));
    want.extend(b"$3\r\ndef\r\n");
    want.extend(message(true, None, "foo", "bar"));
    want.extend(message(true, None, "foo", "vaz"));
    c.cmd(&[b"EXEC"]);
    expect_bytes(&mut c, &want);
}

#[test]
fn messages_reach_idle_subscribers() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut ps = c.as_pubsub();
    ps.subscribe("jobs").unwrap();
    ps.psubscribe("log.*").unwrap();
    ps.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let publisher = {
        let port = s.port;
        std::thread::spawn(move || {
            let mut p = common::client_at(&format!("redis://127.0.0.1:{port}/"));
            for i in 0..50 {
                std::thread::sleep(Duration::from_millis(2));
                ok(&mut p, &["PUBLISH", "jobs", &format!("job-{i}")]);
                ok(&mut p, &["PUBLISH", "log.app", &format!("line-{i}")]);
            }
        })
    };
    for i in 0..50 {
        let m = ps.get_message().unwrap();
        assert_eq!(m.get_channel_name(), "jobs");
        assert!(!m.from_pattern());
        assert_eq!(m.get_payload::<String>().unwrap(), format!("job-{i}"));
        let m = ps.get_message().unwrap();
        assert_eq!(m.get_channel_name(), "log.app");
        assert_eq!(m.get_pattern::<String>().unwrap(), "log.*");
        assert_eq!(m.get_payload::<String>().unwrap(), format!("line-{i}"));
    }
    publisher.join().unwrap();
}

#[test]
fn leaving_clients_take_their_subscriptions() {
    let s = TestServer::start();
    let mut p = s.client();
    let mut a = s.raw();
    a.cmd(&[b"SUBSCRIBE", b"x", b"y"]);
    a.read_n(confirm(false, "subscribe", Some("x"), 1).len() * 2);
    a.expect(
        &[b"PSUBSCRIBE", b"*"],
        &confirm(false, "psubscribe", Some("*"), 3),
    );
    // RESET leaves everything silently.
    a.expect(&[b"RESET"], b"+RESET\r\n");
    assert_eq!(
        ok(&mut p, &["PUBSUB", "NUMSUB", "x"]),
        Value::Array(vec![bulk("x"), int(0)])
    );
    assert_eq!(ok(&mut p, &["PUBSUB", "NUMPAT"]), int(0));
    a.expect(&[b"GET", b"k"], b"$-1\r\n");
    a.expect(
        &[b"SUBSCRIBE", b"x"],
        &confirm(false, "subscribe", Some("x"), 1),
    );
    drop(a);
    let deadline = Instant::now() + Duration::from_secs(10);
    while ok(&mut p, &["PUBLISH", "x", "gone?"]) != int(0) {
        assert!(
            Instant::now() < deadline,
            "subscription outlived its client"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn pubsub_errors() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(
        err(&mut c, &["PUBSUB", "FOO"]),
        "ERR unknown subcommand 'FOO'. Try PUBSUB HELP."
    );
    assert_eq!(
        err(&mut c, &["PUBSUB", "NUMPAT", "x"]),
        "ERR wrong number of arguments for 'pubsub|numpat' command"
    );
    assert_eq!(
        err(&mut c, &["PUBSUB", "CHANNELS", "a", "b"]),
        "ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB HELP."
    );
    assert_eq!(
        err(&mut c, &["PUBLISH", "ch"]),
        "ERR wrong number of arguments for 'publish' command"
    );
    assert_eq!(
        err(&mut c, &["SUBSCRIBE"]),
        "ERR wrong number of arguments for 'subscribe' command"
    );
    assert!(matches!(ok(&mut c, &["PUBSUB", "HELP"]), Value::Array(l) if l.len() > 4));
}

#[test]
fn a_subscriber_that_does_not_read_is_cut_off() {
    let s = TestServer::start();
    let mut sub = s.raw();
    sub.expect(
        &[b"SUBSCRIBE", b"big"],
        &confirm(false, "subscribe", Some("big"), 1),
    );
    let mut p = s.client();
    let payload = "x".repeat(1 << 20);
    // 64 MiB for a client that reads nothing: past the 32 MiB limit whatever the socket
    // buffers hold.
    let mut delivered = 0;
    for _ in 0..64 {
        if let Value::Int(n) = ok(&mut p, &["PUBLISH", "big", &payload]) {
            delivered += n;
        }
    }
    assert!(delivered > 0);
    assert!(sub.closed(), "the slow subscriber was disconnected");
    let deadline = Instant::now() + Duration::from_secs(10);
    while ok(&mut p, &["PUBSUB", "NUMSUB", "big"]) != Value::Array(vec![bulk("big"), int(0)]) {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(10));
    }
    // Other clients are unaffected.
    assert_eq!(ok(&mut p, &["PING"]), Value::SimpleString("PONG".into()));
}
