//! The wire: pipelining, many clients, AUTH, malformed and oversized input.

use crate::common;

use common::*;
use redis::Value;

#[test]
fn pipeline_of_10k_commands() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut p = redis::pipe();
    for i in 0..10_000 {
        p.cmd("SET").arg(format!("k{i}")).arg(i).ignore();
    }
    p.cmd("DBSIZE");
    let (n,): (i64,) = p.query(&mut c).unwrap();
    assert_eq!(n, 10_000);
    let mut p = redis::pipe();
    for i in 0..10_000 {
        p.cmd("GET").arg(format!("k{i}"));
    }
    let got: Vec<i64> = p.query(&mut c).unwrap();
    assert_eq!(got, (0..10_000).collect::<Vec<i64>>());
    // The same through one raw write: replies come back in order.
    let mut r = s.raw();
    let mut req = Vec::new();
    let mut want = Vec::new();
    for i in 0..10_000 {
        req.extend_from_slice(b"*2\r\n$4\r\nINCR\r\n$3\r\nctr\r\n");
        want.extend_from_slice(format!(":{}\r\n", i + 1).as_bytes());
    }
    r.send(&req);
    assert_eq!(r.read_n(want.len()), want);
}

#[test]
fn fifty_concurrent_clients() {
    let s = TestServer::start();
    let port = s.port;
    let threads: Vec<_> = (0..50)
        .map(|t| {
            std::thread::spawn(move || {
                let mut c = client_at(&format!("redis://127.0.0.1:{port}/"));
                for i in 0..100 {
                    let k = format!("c{t}:{i}");
                    assert_eq!(ok(&mut c, &["SET", &k, &i.to_string()]), Value::Okay);
                    assert_eq!(ok(&mut c, &["GET", &k]), bulk(&i.to_string()));
                    ok(&mut c, &["SADD", "everyone", &k]);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(5001));
    assert_eq!(ok(&mut c, &["SCARD", "everyone"]), int(5000));
}

#[test]
fn auth_is_required_when_a_password_is_set() {
    let s = TestServer::with(|c| c.requirepass = Some("s3cret".into()));
    let mut r = s.raw();
    r.expect(&[b"GET", b"k"], b"-NOAUTH Authentication required.\r\n");
    r.expect(&[b"PING"], b"-NOAUTH Authentication required.\r\n");
    // As in Redis, unknown commands and wrong arities are reported before NOAUTH.
    r.expect(
        &[b"NOPE"],
        b"-ERR unknown command 'NOPE', with args beginning with: \r\n",
    );
    r.expect(
        &[b"GET"],
        b"-ERR wrong number of arguments for 'get' command\r\n",
    );
    r.expect(
        &[b"AUTH", b"wrong"],
        b"-WRONGPASS invalid username-password pair or user is disabled.\r\n",
    );
    r.expect(
        &[b"AUTH", b"admin", b"s3cret"],
        b"-WRONGPASS invalid username-password pair or user is disabled.\r\n",
    );
    r.expect(&[b"HELLO", b"3"], b"-NOAUTH HELLO must be called");
    let _ = r.read_until(b"\r\n");
    r.expect(&[b"AUTH", b"s3cret"], b"+OK\r\n");
    r.expect(&[b"PING"], b"+PONG\r\n");
    // HELLO with AUTH authenticates and switches protocol at once.
    let mut r2 = s.raw();
    r2.expect(&[b"HELLO", b"3", b"AUTH", b"default", b"s3cret"], b"%7\r\n");
    // The redis crate with a password in the URL.
    let mut c = client_at(&format!("redis://:s3cret@127.0.0.1:{}/", s.port));
    assert_eq!(ok(&mut c, &["SET", "k", "v"]), Value::Okay);
    let mut c3 = client_at(&format!(
        "redis://default:s3cret@127.0.0.1:{}/?protocol=resp3",
        s.port
    ));
    assert_eq!(ok(&mut c3, &["GET", "k"]), bulk("v"));
    // Without a configured password, AUTH says so.
    let open = TestServer::start();
    let mut r = open.raw();
    // The default user without a password takes any password (Redis's `nopass`).
    r.expect(&[b"AUTH", b"default", b"anything"], b"+OK\r\n");
    r.expect(
        &[b"AUTH", b"x"],
        b"-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n",
    );
}

#[test]
fn malformed_frames_close_only_their_connection() {
    let s = TestServer::start();
    let mut bystander = s.client();
    ok(&mut bystander, &["SET", "k", "v"]);
    let cases: &[(&[u8], &[u8])] = &[
        (
            b"*abc\r\n",
            b"-ERR Protocol error: invalid multibulk length\r\n",
        ),
        (
            b"*1\r\n$-3\r\n",
            b"-ERR Protocol error: invalid bulk length\r\n",
        ),
        (
            b"*1\r\n$999999999999\r\n",
            b"-ERR Protocol error: invalid bulk length\r\n",
        ),
        (
            b"*1\r\n$600000000\r\n",
            b"-ERR Protocol error: invalid bulk length\r\n",
        ),
        (
            b"*1\r\n:5\r\n",
            b"-ERR Protocol error: expected '$', got ':'\r\n",
        ),
        (
            b"SET a \"b\r\n",
            b"-ERR Protocol error: unbalanced quotes in request\r\n",
        ),
        (
            b"*2\r\n$3\r\nGET\r\n$1\r\nkXX",
            b"-ERR Protocol error: invalid bulk terminator\r\n",
        ),
    ];
    for (input, want) in cases {
        let mut r = s.raw();
        r.send(input);
        assert_eq!(
            String::from_utf8_lossy(&r.read_n(want.len())),
            String::from_utf8_lossy(want)
        );
        assert!(r.closed(), "connection left open after {input:?}");
    }
    // An over-long inline request and header line.
    let mut r = s.raw();
    r.send(&vec![b'a'; 70 * 1024]);
    let want = b"-ERR Protocol error: too big inline request\r\n";
    assert_eq!(r.read_n(want.len()), want);
    assert!(r.closed());
    // A request before the bad one is answered first.
    let mut r = s.raw();
    r.send(b"*1\r\n$4\r\nPING\r\n*x\r\n");
    let want = b"+PONG\r\n-ERR Protocol error: invalid multibulk length\r\n";
    assert_eq!(r.read_n(want.len()), want);
    // Inline commands work (telnet style), and quoting.
    let mut r = s.raw();
    r.send(b"SET inline \"a b\"\r\nGET inline\r\n\r\n");
    let want = b"+OK\r\n$3\r\na b\r\n";
    assert_eq!(r.read_n(want.len()), want);
    // Everyone else is unaffected.
    assert_eq!(ok(&mut bystander, &["GET", "k"]), bulk("v"));
}

#[test]
fn query_buffer_limit_closes_the_client() {
    let s = TestServer::with(|c| c.client_query_buffer_limit = 1 << 20);
    let mut r = s.raw();
    // A declared 4 MiB bulk string: bytes are taken as they come, never reserved ahead.
    r.send(b"*2\r\n$3\r\nGET\r\n$4194304\r\n");
    let chunk = vec![b'x'; 64 * 1024];
    let mut sent = 0;
    while sent < 4 << 20 {
        use std::io::Write;
        if r.s.write_all(&chunk).is_err() {
            break;
        }
        sent += chunk.len();
    }
    assert!(r.closed());
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["PING"]), status("PONG"));
}

#[test]
fn large_values_round_trip() {
    let s = TestServer::start();
    let mut c = s.client();
    let big = vec![7u8; 8 << 20];
    let _: () = redis::cmd("SET")
        .arg("big")
        .arg(&big)
        .query(&mut c)
        .unwrap();
    let got: Vec<u8> = redis::cmd("GET").arg("big").query(&mut c).unwrap();
    assert_eq!(got.len(), big.len());
    assert!(got == big);
    let long_key = "k".repeat(70_000);
    assert!(err(&mut c, &["SET", &long_key, "v"]).starts_with("ERR key longer than"));
}

#[test]
fn maxclients_refuses_extra_clients() {
    let s = TestServer::with(|c| c.maxclients = 2);
    let _a = s.client();
    let _b = s.client();
    let mut r = s.raw();
    let want = b"-ERR max number of clients reached\r\n";
    assert_eq!(r.read_n(want.len()), want);
    assert!(r.closed());
}

/// This machine's first non-loopback IPv4 address, if it has one.
fn non_loopback_addr() -> Option<std::net::IpAddr> {
    // Routing a UDP socket towards a public address picks the outgoing interface; no packet
    // is sent.
    let s = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    s.connect("192.0.2.1:9").ok()?;
    let ip = s.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[test]
fn protected_mode_refuses_remote_clients_without_a_password() {
    let Some(ip) = non_loopback_addr() else {
        eprintln!("no non-loopback address on this machine; skipping");
        return;
    };
    let open = TestServer::with(|c| c.bind = "0.0.0.0".parse().unwrap());
    let mut r = Raw {
        s: std::net::TcpStream::connect((ip, open.port)).unwrap(),
    };
    r.s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let got = r.read_until(b"\r\n");
    assert!(
        got.starts_with(b"-DENIED Redis is running in protected mode"),
        "{}",
        String::from_utf8_lossy(&got)
    );
    assert!(r.closed());
    // Loopback clients are served.
    let mut c = open.client();
    assert_eq!(ok(&mut c, &["PING"]), status("PONG"));
    // With a password, remote clients are served (after AUTH).
    let guarded = TestServer::with(|c| {
        c.bind = "0.0.0.0".parse().unwrap();
        c.requirepass = Some("pw".into());
    });
    let mut r = Raw {
        s: std::net::TcpStream::connect((ip, guarded.port)).unwrap(),
    };
    r.s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    r.expect(&[b"PING"], b"-NOAUTH Authentication required.\r\n");
    r.expect(&[b"AUTH", b"pw"], b"+OK\r\n");
    r.expect(&[b"PING"], b"+PONG\r\n");
}

#[test]
fn pipelined_writes_commit_together_and_keep_their_own_replies() {
    let s = TestServer::start();
    let mut r = s.raw();
    // One read: writes (grouped into one batch), an error among them, a read of the group's
    // own writes, more writes.
    let mut req = Vec::new();
    for words in [
        &[&b"SET"[..], b"g1", b"a"][..],
        &[b"SADD", b"g2", b"m"],
        &[b"INCR", b"g2"],
        &[b"APPEND", b"g1", b"b"],
        &[b"GET", b"g1"],
        &[b"SADD", b"g2", b"n"],
        &[b"SCARD", b"g2"],
    ] {
        req.extend_from_slice(format!("*{}\r\n", words.len()).as_bytes());
        for w in words {
            req.extend_from_slice(format!("${}\r\n", w.len()).as_bytes());
            req.extend_from_slice(w);
            req.extend_from_slice(b"\r\n");
        }
    }
    r.send(&req);
    let want: &[u8] = b"+OK\r\n:1\r\n-WRONGTYPE Operation against a key holding the wrong kind of value\r\n:2\r\n$2\r\nab\r\n:1\r\n:2\r\n";
    assert_eq!(
        String::from_utf8_lossy(&r.read_n(want.len())),
        String::from_utf8_lossy(want)
    );
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(2));
    // RESP3 INFO is a verbatim string; the crate hands it over as text.
    let mut c3 = s.client3();
    match ok(&mut c3, &["INFO", "keyspace"]) {
        Value::VerbatimString { text, .. } => assert!(text.contains("db0:keys=2"), "{text}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn replies_to_a_long_pipeline_of_big_reads_are_streamed() {
    let s = TestServer::start();
    let mut c = s.client();
    let value = vec![b'v'; 1 << 20];
    let _: () = redis::cmd("SET")
        .arg("big")
        .arg(&value)
        .query(&mut c)
        .unwrap();
    let mut r = s.raw();
    let n = 40;
    let mut req = Vec::new();
    for _ in 0..n {
        req.extend_from_slice(b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n");
    }
    req.extend_from_slice(b"*1\r\n$4\r\nPING\r\n");
    r.send(&req);
    let one = format!("${}\r\n", value.len()).len() + value.len() + 2;
    let got = r.read_n(n * one + 7);
    assert_eq!(got.len(), n * one + 7);
    assert!(got.ends_with(b"vv\r\n+PONG\r\n"));
}

#[test]
fn unauthenticated_clients_are_held_to_small_requests() {
    let s = TestServer::with(|c| c.requirepass = Some("pw".into()));
    let mut r = s.raw();
    r.send(b"*11\r\n");
    let want = b"-ERR Protocol error: unauthenticated multibulk length\r\n";
    assert_eq!(r.read_n(want.len()), want);
    assert!(r.closed());
    let mut r = s.raw();
    r.send(b"*2\r\n$3\r\nGET\r\n$16385\r\n");
    let want = b"-ERR Protocol error: unauthenticated bulk length\r\n";
    assert_eq!(r.read_n(want.len()), want);
    assert!(r.closed());
    // AUTH and a big request in one write: the request after AUTH is parsed as authenticated.
    let mut r = s.raw();
    let big = vec![b'z'; 100_000];
    let mut req = b"*2\r\n$4\r\nAUTH\r\n$2\r\npw\r\n".to_vec();
    req.extend_from_slice(format!("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n${}\r\n", big.len()).as_bytes());
    req.extend_from_slice(&big);
    req.extend_from_slice(b"\r\n*2\r\n$6\r\nSTRLEN\r\n$1\r\nk\r\n");
    r.send(&req);
    let want = b"+OK\r\n+OK\r\n:100000\r\n";
    assert_eq!(r.read_n(want.len()), want);
}

#[test]
fn a_transaction_queue_is_bounded() {
    let s = TestServer::with(|c| c.client_query_buffer_limit = 1 << 20);
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["MULTI"]), Value::Okay);
    let v = "x".repeat(100_000);
    for i in 0..10 {
        assert_eq!(ok(&mut c, &["SET", &format!("k{i}"), &v]), status("QUEUED"));
    }
    assert_eq!(
        err(&mut c, &["SET", "k10", &v]),
        "ERR transaction too large: queued commands exceed client-query-buffer-limit"
    );
    assert_eq!(
        err(&mut c, &["EXEC"]),
        "EXECABORT Transaction discarded because of previous errors."
    );
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(0));
}
