//! Blocking pops (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP):
//! immediate replies and errors as Redis gives them, clients woken across connections in the
//! order they blocked, served atomically with the push, timeouts, disconnects, MULTI, chains
//! of BLMOVE, and no I/O thread held while blocked.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use redis::Value;

/// Recorded from redis-server 7.0.15 (the same in 7.2: nothing here blocks).
#[rustfmt::skip]
const TABLE: &[(&str, &str)] = &[
        // timeouts and arguments
        ("blpop k abc", "-ERR timeout is not a float or out of range\r\n"),
        ("blpop k -1", "-ERR timeout is negative\r\n"),
        ("blpop k \" 1\"", "-ERR timeout is not a float or out of range\r\n"),
        ("blpop k nan", "-ERR timeout is not a float or out of range\r\n"),
        ("brpop k -0.5", "-ERR timeout is negative\r\n"),
        ("bzpopmin k abc", "-ERR timeout is not a float or out of range\r\n"),
        ("bzpopmax k -1", "-ERR timeout is negative\r\n"),
        ("blmove a b left middle 1", "-ERR syntax error\r\n"),
        ("blmove a b left left abc", "-ERR timeout is not a float or out of range\r\n"),
        ("blmove a b left left -1", "-ERR timeout is negative\r\n"),
        ("brpoplpush a b abc", "-ERR timeout is not a float or out of range\r\n"),
        ("blmpop 1 1 k middle", "-ERR syntax error\r\n"),
        ("blmpop abc 1 k left", "-ERR timeout is not a float or out of range\r\n"),
        ("blmpop 1 0 k left", "-ERR numkeys should be greater than 0\r\n"),
        ("blmpop 1 abc k left", "-ERR numkeys should be greater than 0\r\n"),
        ("blmpop 1 2 k left", "-ERR syntax error\r\n"),
        ("blmpop 1 1 k left count 0", "-ERR count should be greater than 0\r\n"),
        ("blmpop 1 1 k left count 1 bogus", "-ERR syntax error\r\n"),
        ("bzmpop 1 1 k middle", "-ERR syntax error\r\n"),
        ("bzmpop abc 1 k min", "-ERR timeout is not a float or out of range\r\n"),
        ("bzmpop 1 0 k min", "-ERR numkeys should be greater than 0\r\n"),
        ("bzmpop 1 1 k min count -1", "-ERR count should be greater than 0\r\n"),
        // served at once
        ("rpush l1 a b c", ":3\r\n"),
        ("rpush l2 x", ":1\r\n"),
        ("blpop nope l1 l2 1", "*2\r\n$2\r\nl1\r\n$1\r\na\r\n"),
        ("brpop nope l2 l1 1", "*2\r\n$2\r\nl2\r\n$1\r\nx\r\n"),
        ("blmpop 1 2 nope l1 right count 5", "*2\r\n$2\r\nl1\r\n*2\r\n$1\r\nc\r\n$1\r\nb\r\n"),
        ("blmpop 1 1 l2 left", "*-1\r\n"),
        ("exists l2", ":0\r\n"),
        ("rpush l1 a b", ":2\r\n"),
        ("blmove l1 l2 left right 1", "$1\r\na\r\n"),
        ("brpoplpush l1 l2 1", "$1\r\nb\r\n"),
        ("lrange l2 0 -1", "*2\r\n$1\r\nb\r\n$1\r\na\r\n"),
        ("zadd z1 1 a 2 b 3 c", ":3\r\n"),
        ("bzpopmin nope z1 1", "*3\r\n$2\r\nz1\r\n$1\r\na\r\n$1\r\n1\r\n"),
        ("bzpopmax nope z1 1", "*3\r\n$2\r\nz1\r\n$1\r\nc\r\n$1\r\n3\r\n"),
        ("bzmpop 1 2 nope z1 min count 5", "*2\r\n$2\r\nz1\r\n*1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n"),
        // wrong types
        ("set s x", "+OK\r\n"),
        ("blpop nope s 1", "WT"),
        ("blpop s l2 1", "WT"),
        ("brpop s 1", "WT"),
        ("blmove s l2 left left 1", "WT"),
        ("blmove l2 s left left 1", "WT"),
        ("brpoplpush l2 s 1", "WT"),
        ("blmpop 1 2 nope s left", "WT"),
        ("bzpopmin s 1", "WT"),
        ("bzpopmax nope s 1", "WT"),
        ("bzmpop 1 1 s max", "WT"),
        ("zadd z2 1 a", ":1\r\n"),
        ("blpop z2 1", "WT"),
        ("bzpopmin l2 1", "WT"),
        ("lrange l2 0 -1", "*2\r\n$1\r\nb\r\n$1\r\na\r\n"),
];

#[test]
fn errors_and_immediate_replies_are_redis_s() {
    let s = TestServer::start();
    let mut raw = s.raw();
    run_table(&mut raw, TABLE);
    run_table(
        &mut raw,
        &[
            ("blpop k inf", "-ERR timeout is out of range\r\n"),
            ("blpop k 1e300", "-ERR timeout is out of range\r\n"),
        ],
    );
}

/// A raw connection that sends `words` (which block) and waits until the server has the
/// client blocked (`expect` clients blocked in all).
fn block(s: &TestServer, c: &mut redis::Connection, words: &[&str], expect: i64) -> Raw {
    let mut raw = s.raw();
    let w: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
    raw.cmd(&w);
    wait_blocked(c, expect);
    raw
}

fn reply(raw: &mut Raw, want: &str) {
    let got = raw.read_n(want.len());
    assert_eq!(String::from_utf8_lossy(&got), want);
}

#[test]
fn pushes_wake_blocked_clients_first_blocked_first_served() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut a = block(&s, &mut c, &["BLPOP", "k", "0"], 1);
    let mut b = block(&s, &mut c, &["BRPOP", "other", "k", "0"], 2);
    let mut d = block(
        &s,
        &mut c,
        &["BLMPOP", "0", "1", "k", "LEFT", "COUNT", "5"],
        3,
    );
    // One push of three elements serves all three, in the order they blocked; RPUSH's reply
    // is the length right after the push, as in Redis.
    assert_eq!(ok(&mut c, &["RPUSH", "k", "x", "y", "z", "w"]), int(4));
    reply(&mut a, "*2\r\n$1\r\nk\r\n$1\r\nx\r\n");
    reply(&mut b, "*2\r\n$1\r\nk\r\n$1\r\nw\r\n");
    reply(&mut d, "*2\r\n$1\r\nk\r\n*2\r\n$1\r\ny\r\n$1\r\nz\r\n");
    assert_eq!(ok(&mut c, &["EXISTS", "k"]), int(0));
    assert_eq!(blocked(&mut c), 0);
    // One element for two waiters: the first gets it, the second stays blocked.
    let mut a = block(&s, &mut c, &["BLPOP", "k", "0"], 1);
    let mut b = block(&s, &mut c, &["BLPOP", "k", "0"], 2);
    ok(&mut c, &["LPUSH", "k", "1"]);
    reply(&mut a, "*2\r\n$1\r\nk\r\n$1\r\n1\r\n");
    wait_blocked(&mut c, 1);
    ok(&mut c, &["LPUSH", "k", "2"]);
    reply(&mut b, "*2\r\n$1\r\nk\r\n$1\r\n2\r\n");
    wait_blocked(&mut c, 0);
}

#[test]
fn the_pushed_element_cannot_be_stolen_by_a_pop_in_between() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut a = block(&s, &mut c, &["BLPOP", "k", "0"], 1);
    // The push and a pop pipelined behind it (one group commit): the blocked client is
    // served right after the push, so the pop finds nothing.
    let mut p = redis::pipe();
    p.cmd("RPUSH").arg("k").arg("v").cmd("LPOP").arg("k");
    let (n, popped): (i64, Option<String>) = p.query(&mut c).unwrap();
    assert_eq!((n, popped), (1, None));
    reply(&mut a, "*2\r\n$1\r\nk\r\n$1\r\nv\r\n");
    // Inside MULTI, blocked clients are served after EXEC: the transaction's own pop wins.
    let mut a = block(&s, &mut c, &["BLPOP", "k", "0"], 1);
    let mut p = redis::pipe();
    p.atomic()
        .cmd("RPUSH")
        .arg("k")
        .arg("v")
        .cmd("LPOP")
        .arg("k");
    let (n, popped): (i64, Option<String>) = p.query(&mut c).unwrap();
    assert_eq!((n, popped.as_deref()), (1, Some("v")));
    assert_eq!(blocked(&mut c), 1);
    // A transaction that leaves elements serves the waiter after its commit.
    let mut p = redis::pipe();
    p.atomic()
        .cmd("RPUSH")
        .arg("k")
        .arg("v1")
        .arg("v2")
        .cmd("LPOP")
        .arg("k");
    let (_, popped): (i64, String) = p.query(&mut c).unwrap();
    assert_eq!(popped, "v1");
    reply(&mut a, "*2\r\n$1\r\nk\r\n$2\r\nv2\r\n");
    assert_eq!(ok(&mut c, &["EXISTS", "k"]), int(0));
}

#[test]
fn pops_inside_multi_never_block() {
    let s = TestServer::start();
    let mut raw = s.raw();
    run_table(
        &mut raw,
        &[
            ("multi", "+OK\r\n"),
            ("blpop k 0", "+QUEUED\r\n"),
            ("brpoplpush k d 0", "+QUEUED\r\n"),
            ("blmove k d left left 0", "+QUEUED\r\n"),
            ("blmpop 0 1 k left", "+QUEUED\r\n"),
            ("bzpopmin z 0", "+QUEUED\r\n"),
            ("bzmpop 0 1 z min", "+QUEUED\r\n"),
            ("rpush k a", "+QUEUED\r\n"),
            ("blpop k 0", "+QUEUED\r\n"),
            (
                "exec",
                "*8\r\n*-1\r\n$-1\r\n$-1\r\n*-1\r\n*-1\r\n*-1\r\n:1\r\n*2\r\n$1\r\nk\r\n$1\r\na\r\n",
            ),
        ],
    );
}

#[test]
fn timeouts_answer_nil_and_leave_nothing_behind() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut raw = s.raw();
    let t = Instant::now();
    raw.cmd(&[b"BLPOP", b"k1", b"k2", b"0.2"]);
    reply(&mut raw, "*-1\r\n");
    let waited = t.elapsed();
    assert!(waited >= Duration::from_millis(190), "{waited:?}");
    raw.cmd(&[b"BLMOVE", b"k1", b"k2", b"LEFT", b"LEFT", b"0.05"]);
    reply(&mut raw, "$-1\r\n");
    raw.cmd(&[b"BZPOPMAX", b"z", b"0.05"]);
    reply(&mut raw, "*-1\r\n");
    assert_eq!(blocked(&mut c), 0);
    // A later push is kept: nobody waits any more.
    ok(&mut c, &["RPUSH", "k1", "x"]);
    assert_eq!(ok(&mut c, &["LLEN", "k1"]), int(1));
    // RESP3: the null.
    let mut r3 = s.raw();
    r3.cmd(&[b"HELLO", b"3"]);
    r3.read_until(b"modules\r\n*0\r\n");
    r3.cmd(&[b"BLPOP", b"nope", b"0.01"]);
    reply(&mut r3, "_\r\n");
}

#[test]
fn a_blocked_client_that_disconnects_leaves_nothing_behind_and_loses_nothing() {
    let s = TestServer::start();
    let mut c = s.client();
    let a = block(&s, &mut c, &["BLPOP", "k", "k2", "0"], 1);
    let b = block(&s, &mut c, &["BLMOVE", "k", "d", "LEFT", "LEFT", "0"], 2);
    drop(a);
    drop(b);
    wait_blocked(&mut c, 0);
    ok(&mut c, &["RPUSH", "k", "x"]);
    assert_eq!(
        ok(&mut c, &["LRANGE", "k", "0", "-1"]),
        Value::Array(vec![bulk("x")])
    );
    assert_eq!(ok(&mut c, &["EXISTS", "d"]), int(0));
}

#[test]
fn a_blocked_client_answers_nothing_else_until_woken() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut raw = s.raw();
    raw.cmd(&[b"BLPOP", b"k", b"0"]);
    raw.cmd(&[b"PING"]);
    wait_blocked(&mut c, 1);
    raw.s
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let early = raw.read_n(1);
    assert!(early.is_empty(), "answered while blocked: {early:?}");
    raw.s
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    ok(&mut c, &["RPUSH", "k", "v"]);
    reply(&mut raw, "*2\r\n$1\r\nk\r\n$1\r\nv\r\n+PONG\r\n");
}

#[test]
fn blmove_pushes_wake_the_next_waiters() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut mover = block(
        &s,
        &mut c,
        &["BLMOVE", "src", "mid", "RIGHT", "LEFT", "0"],
        1,
    );
    let mut mover2 = block(&s, &mut c, &["BRPOPLPUSH", "mid", "dst", "0"], 2);
    let mut popper = block(&s, &mut c, &["BLPOP", "dst", "0"], 3);
    ok(&mut c, &["RPUSH", "src", "a", "b"]);
    reply(&mut mover, "$1\r\nb\r\n");
    reply(&mut mover2, "$1\r\nb\r\n");
    reply(&mut popper, "*2\r\n$3\r\ndst\r\n$1\r\nb\r\n");
    assert_eq!(
        ok(&mut c, &["LRANGE", "src", "0", "-1"]),
        Value::Array(vec![bulk("a")])
    );
    assert_eq!(ok(&mut c, &["EXISTS", "mid", "dst"]), int(0));
    assert_eq!(blocked(&mut c), 0);
    // A destination of another type: the waiter gets WRONGTYPE, nothing moves.
    ok(&mut c, &["SET", "str", "x"]);
    let mut m = block(&s, &mut c, &["BLMOVE", "s2", "str", "LEFT", "LEFT", "0"], 1);
    ok(&mut c, &["RPUSH", "s2", "e"]);
    reply(&mut m, WRONGTYPE_LINE);
    assert_eq!(
        ok(&mut c, &["LRANGE", "s2", "0", "-1"]),
        Value::Array(vec![bulk("e")])
    );
}

#[test]
fn sorted_set_waiters_wake_on_zadd_and_only_their_type_is_served() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut lister = block(&s, &mut c, &["BLPOP", "k", "0.5"], 1);
    let mut min = block(&s, &mut c, &["BZPOPMIN", "k", "0"], 2);
    let mut max = block(&s, &mut c, &["BZPOPMAX", "k", "0"], 3);
    let mut m = block(
        &s,
        &mut c,
        &["BZMPOP", "0", "1", "k", "MIN", "COUNT", "9"],
        4,
    );
    ok(
        &mut c,
        &["ZADD", "k", "1", "a", "2", "b", "3", "c", "4", "d"],
    );
    reply(&mut min, "*3\r\n$1\r\nk\r\n$1\r\na\r\n$1\r\n1\r\n");
    reply(&mut max, "*3\r\n$1\r\nk\r\n$1\r\nd\r\n$1\r\n4\r\n");
    reply(
        &mut m,
        "*2\r\n$1\r\nk\r\n*2\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n",
    );
    // The list waiter was not served by a sorted set: it times out.
    reply(&mut lister, "*-1\r\n");
    wait_blocked(&mut c, 0);
}

#[test]
fn waiting_holds_no_io_thread() {
    let s = TestServer::with(|c| c.threads = 1);
    let mut c = s.client();
    let blocked_clients: Vec<Raw> = (0..8)
        .map(|i| block(&s, &mut c, &["BLPOP", &format!("k{i}"), "0"], i + 1))
        .collect();
    // With one I/O thread and eight blocked clients, other clients are still served.
    for _ in 0..20 {
        assert_eq!(ok(&mut c, &["PING"]), status("PONG"));
    }
    let mut other = s.client();
    assert_eq!(ok(&mut other, &["SET", "x", "1"]), Value::Okay);
    for (i, mut raw) in blocked_clients.into_iter().enumerate() {
        ok(&mut c, &["RPUSH", &format!("k{i}"), "v"]);
        reply(&mut raw, &format!("*2\r\n$2\r\nk{i}\r\n$1\r\nv\r\n"));
    }
}

#[test]
fn shutdown_does_not_wait_for_blocked_clients() {
    let mut s = TestServer::start();
    let mut c = s.client();
    let mut raw = block(&s, &mut c, &["BLPOP", "k", "0"], 1);
    let t = Instant::now();
    s.stop();
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    assert!(raw.closed());
}

/// Many consumers blocking with short timeouts against producers: every element pushed is
/// received exactly once (nothing lost to a timeout or disconnect racing a push).
#[test]
fn concurrent_producers_and_blocking_consumers_lose_nothing() {
    let s = TestServer::start();
    let port = s.port;
    let producers = 3;
    let per_producer = 400;
    let consumers: Vec<_> = (0..4)
        .map(|i| {
            std::thread::spawn(move || {
                let mut c = client_at(&format!("redis://127.0.0.1:{port}/"));
                let mut got = Vec::new();
                let mut idle = 0;
                while idle < 20 {
                    // Mixed timeouts so that some expire while pushes arrive.
                    let t = if i % 2 == 0 { "0.01" } else { "0.05" };
                    let r: Option<(String, String)> =
                        redis::cmd(if i % 2 == 0 { "BLPOP" } else { "BRPOP" })
                            .arg("q")
                            .arg("q2")
                            .arg(t)
                            .query(&mut c)
                            .unwrap();
                    match r {
                        Some((_, v)) => {
                            got.push(v);
                            idle = 0;
                        }
                        None => idle += 1,
                    }
                }
                got
            })
        })
        .collect();
    let pushers: Vec<_> = (0..producers)
        .map(|p| {
            std::thread::spawn(move || {
                let mut c = client_at(&format!("redis://127.0.0.1:{port}/"));
                for i in 0..per_producer {
                    let key = if i % 3 == 0 { "q2" } else { "q" };
                    let _: i64 = redis::cmd("RPUSH")
                        .arg(key)
                        .arg(format!("{p}:{i}"))
                        .query(&mut c)
                        .unwrap();
                }
            })
        })
        .collect();
    for p in pushers {
        p.join().unwrap();
    }
    let mut all: Vec<String> = consumers
        .into_iter()
        .flat_map(|c| c.join().unwrap())
        .collect();
    let mut c = s.client();
    let left: Vec<String> = redis::cmd("LRANGE")
        .arg("q")
        .arg(0)
        .arg(-1)
        .query(&mut c)
        .unwrap();
    let left2: Vec<String> = redis::cmd("LRANGE")
        .arg("q2")
        .arg(0)
        .arg(-1)
        .query(&mut c)
        .unwrap();
    all.extend(left);
    all.extend(left2);
    all.sort();
    let n = all.len();
    all.dedup();
    assert_eq!(all.len(), n, "an element was received twice");
    assert_eq!(n, producers * per_producer, "elements lost");
    assert_eq!(blocked(&mut c), 0);
}

/// BLMOVE consumers whose destination other clients write all the time (so serving them
/// often finds the destination's lock taken and defers to a pass of its own): every element
/// is moved exactly once and lands in the destination.
#[test]
fn moves_to_a_busy_destination_are_served_exactly_once() {
    let s = TestServer::start();
    let port = s.port;
    let url = format!("redis://127.0.0.1:{port}/");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let filler = {
        let (url, stop) = (url.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut c = client_at(&url);
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let mut p = redis::pipe();
                for _ in 0..16 {
                    p.cmd("RPUSH").arg("work").arg("filler").ignore();
                }
                let () = p.query(&mut c).unwrap();
                n += 16;
            }
            n
        })
    };
    let movers: Vec<_> = (0..3)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || {
                let mut c = client_at(&url);
                let mut got = Vec::new();
                loop {
                    let r: Option<String> = redis::cmd("BLMOVE")
                        .arg("jobs")
                        .arg("work")
                        .arg("LEFT")
                        .arg("RIGHT")
                        .arg("0.2")
                        .query(&mut c)
                        .unwrap();
                    match r {
                        Some(v) => got.push(v),
                        None => return got,
                    }
                }
            })
        })
        .collect();
    let mut c = s.client();
    let total = 600;
    for i in 0..total {
        let _: i64 = redis::cmd("RPUSH")
            .arg("jobs")
            .arg(format!("job{i}"))
            .query(&mut c)
            .unwrap();
    }
    let mut moved: Vec<String> = movers.into_iter().flat_map(|m| m.join().unwrap()).collect();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let fillers = filler.join().unwrap();
    let work: Vec<String> = redis::cmd("LRANGE")
        .arg("work")
        .arg(0)
        .arg(-1)
        .query(&mut c)
        .unwrap();
    let left: Vec<String> = redis::cmd("LRANGE")
        .arg("jobs")
        .arg(0)
        .arg(-1)
        .query(&mut c)
        .unwrap();
    moved.extend(left.iter().cloned());
    moved.sort();
    let n = moved.len();
    moved.dedup();
    assert_eq!(moved.len(), n, "a job was moved twice");
    assert_eq!(n, total, "jobs lost");
    let mut in_work: Vec<&String> = work.iter().filter(|v| v.starts_with("job")).collect();
    assert_eq!(in_work.len() + left.len(), total);
    in_work.sort();
    in_work.dedup();
    assert_eq!(in_work.len() + left.len(), total);
    assert_eq!(work.len(), total - left.len() + fillers);
    assert_eq!(blocked(&mut c), 0);
}

/// Push-to-wake latency: a client blocked in BLPOP, another pushing; prints p50/p99 of the
/// time from sending RPUSH to receiving the popped element. Run with
/// `cargo test --release -p bloomkv-server --test connection blocking:: -- --ignored --nocapture`.
#[test]
#[ignore]
fn push_to_wake_latency() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut pusher = s.raw();
    let mut waiter = s.raw();
    let rounds = 5000;
    let mut lat = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        waiter.cmd(&[b"BLPOP", b"lat", b"0"]);
        wait_blocked(&mut c, 1);
        let t = Instant::now();
        pusher.cmd(&[b"RPUSH", b"lat", b"v"]);
        reply(&mut waiter, "*2\r\n$3\r\nlat\r\n$1\r\nv\r\n");
        lat.push(t.elapsed());
        reply(&mut pusher, ":1\r\n");
    }
    lat.sort();
    let p = |q: f64| lat[((rounds as f64 * q) as usize).min(rounds - 1)];
    println!(
        "push-to-wake over {rounds} rounds: p50 {:?} p90 {:?} p99 {:?} max {:?}",
        p(0.5),
        p(0.9),
        p(0.99),
        lat[rounds - 1]
    );
}

/// CLIENT UNBLOCK ends a blocked client's wait as its timeout would, or with Redis's
/// UNBLOCKED error; the client takes nothing pushed afterwards, and a client that is not
/// blocked answers 0.
#[test]
fn client_unblock_ends_a_wait_as_a_timeout_or_an_error() {
    let s = TestServer::start();
    let mut c = s.client();
    for (reason, want) in [
        (None, "*-1\r\n"),
        (Some("TIMEOUT"), "*-1\r\n"),
        (
            Some("ERROR"),
            "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n",
        ),
    ] {
        let mut raw = s.raw();
        raw.cmd(&[b"CLIENT", b"ID"]);
        let id = String::from_utf8(raw.read_until(b"\r\n")).unwrap();
        let id = id.trim_start_matches(':').trim_end().to_string();
        raw.cmd(&[b"BLPOP", b"k", b"0"]);
        wait_blocked(&mut c, 1);
        let mut unblock = vec!["CLIENT", "UNBLOCK", id.as_str()];
        unblock.extend(reason);
        assert_eq!(ok(&mut c, &unblock), int(1));
        reply(&mut raw, want);
        wait_blocked(&mut c, 0);
        assert_eq!(ok(&mut c, &["CLIENT", "UNBLOCK", &id]), int(0));
        // The connection serves commands again.
        raw.cmd(&[b"PING"]);
        reply(&mut raw, "+PONG\r\n");
    }
    assert_eq!(ok(&mut c, &["RPUSH", "k", "x"]), int(1));
    assert_eq!(ok(&mut c, &["LLEN", "k"]), int(1));
    assert_eq!(
        err(&mut c, &["CLIENT", "UNBLOCK", "1", "LATER"]),
        "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"
    );
    assert_eq!(
        err(&mut c, &["CLIENT", "UNBLOCK", "x"]),
        "ERR value is not an integer or out of range"
    );
}
