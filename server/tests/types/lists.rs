//! Lists: every command and option against replies recorded from redis-server, byte for
//! byte (RESP2 and RESP3), plus long lists (range deletions, moves on the shorter side),
//! huge counts, MULTI, expiry and restart.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common;

use common::*;
use redis::Value;

/// Recorded from redis-server 7.0.15 (no list reply differs in 7.2).
#[rustfmt::skip]
const TABLE: &[(&str, &str)] = &[
        ("rpush l a b c d e", ":5\r\n"),
        ("lpush l z y", ":7\r\n"),
        ("lrange l 0 -1", "*7\r\n$1\r\ny\r\n$1\r\nz\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n"),
        ("lrange l -3 -1", "*3\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n"),
        ("lrange l 5 2", "*0\r\n"),
        ("lrange l -100 100", "*7\r\n$1\r\ny\r\n$1\r\nz\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n"),
        ("lrange l x 1", "-ERR value is not an integer or out of range\r\n"),
        ("llen l", ":7\r\n"),
        ("llen nope", ":0\r\n"),
        ("lindex l 0", "$1\r\ny\r\n"),
        ("lindex l -1", "$1\r\ne\r\n"),
        ("lindex l 100", "$-1\r\n"),
        ("lindex l abc", "-ERR value is not an integer or out of range\r\n"),
        ("lindex nope 0", "$-1\r\n"),
        ("lset l 1 Z", "+OK\r\n"),
        ("lset l 100 Z", "-ERR index out of range\r\n"),
        ("lset nope 0 x", "-ERR no such key\r\n"),
        ("lset l abc x", "-ERR value is not an integer or out of range\r\n"),
        ("lpushx nope a", ":0\r\n"),
        ("rpushx nope a", ":0\r\n"),
        ("lpushx l front", ":8\r\n"),
        ("rpushx l back", ":9\r\n"),
        ("lrange l 0 -1", "*9\r\n$5\r\nfront\r\n$1\r\ny\r\n$1\r\nZ\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$4\r\nback\r\n"),
        ("lpop l", "$5\r\nfront\r\n"),
        ("rpop l", "$4\r\nback\r\n"),
        ("lpop l 2", "*2\r\n$1\r\ny\r\n$1\r\nZ\r\n"),
        ("rpop l 2", "*2\r\n$1\r\ne\r\n$1\r\nd\r\n"),
        ("lpop l 0", "*0\r\n"),
        ("lpop nope", "$-1\r\n"),
        ("lpop nope 2", "*-1\r\n"),
        ("lpop nope 0", "*-1\r\n"),
        ("lpop l -1", "-ERR value is out of range, must be positive\r\n"),
        ("lpop l abc", "-ERR value is out of range, must be positive\r\n"),
        ("lpop l 1 2", "-ERR wrong number of arguments for 'lpop' command\r\n"),
        ("rpop l 100", "*3\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n"),
        ("lpop l", "$-1\r\n"),
        ("llen l", ":0\r\n"),
        ("exists l", ":0\r\n"),
        ("rpush l a b a c a d", ":6\r\n"),
        ("lrem l 2 a", ":2\r\n"),
        ("lrange l 0 -1", "*4\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\na\r\n$1\r\nd\r\n"),
        ("rpush l a a", ":6\r\n"),
        ("lrem l -1 a", ":1\r\n"),
        ("lrange l 0 -1", "*5\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\na\r\n$1\r\nd\r\n$1\r\na\r\n"),
        ("lrem l 0 a", ":2\r\n"),
        ("lrange l 0 -1", "*3\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n"),
        ("lrem l -9223372036854775808 a", ":0\r\n"),
        ("lrem l abc a", "-ERR value is not an integer or out of range\r\n"),
        ("lrem nope 1 a", ":0\r\n"),
        ("linsert l before c X", ":4\r\n"),
        ("linsert l after d Y", ":5\r\n"),
        ("linsert l after nope Y", ":-1\r\n"),
        ("linsert l middle c Y", "-ERR syntax error\r\n"),
        ("linsert nope before c X", ":0\r\n"),
        ("lrange l 0 -1", "*5\r\n$1\r\nb\r\n$1\r\nX\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\nY\r\n"),
        ("lpos l X", ":1\r\n"),
        ("lpos l nope", "$-1\r\n"),
        ("lpos l X count 0", "*1\r\n:1\r\n"),
        ("lpos l X rank 0", "-ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list\r\n"),
        ("lpos l X rank -1", ":1\r\n"),
        ("lpos l X count -1", "-ERR COUNT can't be negative\r\n"),
        ("lpos l X maxlen -1", "-ERR MAXLEN can't be negative\r\n"),
        ("lpos l X count abc", "-ERR COUNT can't be negative\r\n"),
        ("lpos l X rank abc", "-ERR value is not an integer or out of range\r\n"),
        ("lpos l X bogus 1", "-ERR syntax error\r\n"),
        ("lpos l X rank", "-ERR syntax error\r\n"),
        ("lpos nope X", "$-1\r\n"),
        ("lpos nope X count 1", "*0\r\n"),
        ("rpush m a b a c a d a", ":7\r\n"),
        ("lpos m a rank 2", ":2\r\n"),
        ("lpos m a rank -2", ":4\r\n"),
        ("lpos m a count 2 rank 2", "*2\r\n:2\r\n:4\r\n"),
        ("lpos m a count 0 rank -1", "*4\r\n:6\r\n:4\r\n:2\r\n:0\r\n"),
        ("lpos m a maxlen 3 count 0", "*2\r\n:0\r\n:2\r\n"),
        ("lpos m a rank 5", "$-1\r\n"),
        ("ltrim m 1 -2", "+OK\r\n"),
        ("lrange m 0 -1", "*5\r\n$1\r\nb\r\n$1\r\na\r\n$1\r\nc\r\n$1\r\na\r\n$1\r\nd\r\n"),
        ("ltrim m 100 200", "+OK\r\n"),
        ("exists m", ":0\r\n"),
        ("ltrim nope 0 1", "+OK\r\n"),
        ("ltrim m a 1", "-ERR value is not an integer or out of range\r\n"),
        ("set s str", "+OK\r\n"),
        ("lpush s a", "WT"),
        ("lrange s 0 -1", "WT"),
        ("llen s", "WT"),
        ("lpop s", "WT"),
        ("lmove s l left right", "WT"),
        ("lmove l s left right", "WT"),
        ("rpush src 1 2 3", ":3\r\n"),
        ("lmove src dst left right", "$1\r\n1\r\n"),
        ("lmove src dst right left", "$1\r\n3\r\n"),
        ("lrange dst 0 -1", "*2\r\n$1\r\n3\r\n$1\r\n1\r\n"),
        ("lmove src dst middle left", "-ERR syntax error\r\n"),
        ("lmove nope dst left left", "$-1\r\n"),
        ("rpoplpush src dst", "$1\r\n2\r\n"),
        ("rpoplpush src dst", "$-1\r\n"),
        ("lrange dst 0 -1", "*3\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n1\r\n"),
        ("exists src", ":0\r\n"),
        ("rpoplpush dst dst", "$1\r\n1\r\n"),
        ("lrange dst 0 -1", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"),
        ("lmpop 2 nope dst left", "*2\r\n$3\r\ndst\r\n*1\r\n$1\r\n1\r\n"),
        ("lmpop 2 nope dst right count 2", "*2\r\n$3\r\ndst\r\n*2\r\n$1\r\n3\r\n$1\r\n2\r\n"),
        ("lmpop 0 dst left", "-ERR numkeys should be greater than 0\r\n"),
        ("lmpop -1 dst left", "-ERR numkeys should be greater than 0\r\n"),
        ("lmpop abc dst left", "-ERR numkeys should be greater than 0\r\n"),
        ("lmpop 3 dst left", "-ERR syntax error\r\n"),
        ("lmpop 1 dst middle", "-ERR syntax error\r\n"),
        ("lmpop 1 dst left count 0", "-ERR count should be greater than 0\r\n"),
        ("lmpop 1 dst left count abc", "-ERR count should be greater than 0\r\n"),
        ("lmpop 1 dst left count 1 count 1", "-ERR syntax error\r\n"),
        ("lmpop 1 dst left bogus", "-ERR syntax error\r\n"),
        ("lmpop 2 nope nope2 left", "*-1\r\n"),
        ("lmpop 2 s dst left", "WT"),
        ("lmpop 2 dst s left count 10", "WT"),
        ("lmpop 1 dst left", "*-1\r\n"),
        ("lpop nope 2", "*-1\r\n"),
        ("lpop nope", "$-1\r\n"),
        ("set s str", "+OK\r\n"),
        ("lpush s a", "WT"),
        ("rpush s a", "WT"),
        ("lpushx s a", "WT"),
        ("rpushx s a", "WT"),
        ("lpop s", "WT"),
        ("rpop s 2", "WT"),
        ("llen s", "WT"),
        ("lrange s 0 -1", "WT"),
        ("lindex s 0", "WT"),
        ("lset s 0 a", "WT"),
        ("ltrim s 0 1", "WT"),
        ("lrem s 0 a", "WT"),
        ("linsert s before a b", "WT"),
        ("lpos s a", "WT"),
        ("lmove s l left left", "WT"),
        ("rpush l x", ":6\r\n"),
        ("lmove l s left left", "WT"),
        ("rpoplpush s l", "WT"),
        ("rpoplpush l s", "WT"),
        ("lmpop 1 s left", "WT"),
        ("lrange l 0 -1", "*6\r\n$1\r\nb\r\n$1\r\nX\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\nY\r\n$1\r\nx\r\n"),
];

#[test]
fn every_command_answers_as_redis_does() {
    let s = TestServer::start();
    let mut raw = s.raw();
    run_table(&mut raw, TABLE);
}

#[test]
fn resp3_replies() {
    let s = TestServer::start();
    let mut raw = s.raw();
    raw.cmd(&[b"HELLO", b"3"]);
    raw.read_until(b"modules\r\n*0\r\n");
    run_table(
        &mut raw,
        &[
            ("rpush r3 a b", ":2\r\n"),
            ("lpop r3 5", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
            ("lpop nope 2", "_\r\n"),
            ("lpop nope", "_\r\n"),
            ("lindex nope 0", "_\r\n"),
            ("lmpop 1 nope left", "_\r\n"),
            ("rpush r3 c d", ":2\r\n"),
            (
                "lmpop 1 r3 right count 5",
                "*2\r\n$2\r\nr3\r\n*2\r\n$1\r\nd\r\n$1\r\nc\r\n",
            ),
        ],
    );
}

fn range(c: &mut redis::Connection, key: &str) -> Vec<String> {
    redis::cmd("LRANGE")
        .arg(key)
        .arg(0)
        .arg(-1)
        .query(c)
        .unwrap()
}

#[test]
fn long_lists_trim_pop_and_push_back_correctly() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut model: std::collections::VecDeque<String> = (0..1000).map(|i| i.to_string()).collect();
    let mut cmd = redis::cmd("RPUSH");
    cmd.arg("l");
    for v in &model {
        cmd.arg(v);
    }
    let n: i64 = cmd.query(&mut c).unwrap();
    assert_eq!(n, 1000);
    // A long trim at both ends goes as range deletions; pushing back over the deleted
    // positions must show the new elements, not the old ones or none.
    ok(&mut c, &["LTRIM", "l", "100", "899"]);
    model = model.into_iter().skip(100).take(800).collect();
    assert_eq!(range(&mut c, "l"), Vec::from(model.clone()));
    for i in 0..150 {
        let v = format!("new{i}");
        ok(&mut c, &["LPUSH", "l", &v]);
        model.push_front(v);
    }
    for i in 0..150 {
        let v = format!("tail{i}");
        ok(&mut c, &["RPUSH", "l", &v]);
        model.push_back(v);
    }
    assert_eq!(range(&mut c, "l"), Vec::from(model.clone()));
    // Long pops (range deletions) and a push back, in one transaction.
    let mut p = redis::pipe();
    p.atomic()
        .cmd("LPOP")
        .arg("l")
        .arg(200)
        .cmd("RPOP")
        .arg("l")
        .arg(100)
        .cmd("LPUSH")
        .arg("l")
        .arg("x")
        .cmd("LRANGE")
        .arg("l")
        .arg(0)
        .arg(2);
    let (left, right, n, first): (Vec<String>, Vec<String>, i64, Vec<String>) =
        p.query(&mut c).unwrap();
    let want_left: Vec<String> = model.drain(..200).collect();
    let want_right: Vec<String> = (0..100).map(|_| model.pop_back().unwrap()).collect();
    model.push_front("x".into());
    assert_eq!(left, want_left);
    assert_eq!(right, want_right);
    assert_eq!(n as usize, model.len());
    assert_eq!(first, model.iter().take(3).cloned().collect::<Vec<_>>());
    assert_eq!(range(&mut c, "l"), Vec::from(model.clone()));
    assert_eq!(
        ok(&mut c, &["LINDEX", "l", "-1"]),
        bulk(model.back().unwrap())
    );
}

#[test]
fn inserts_and_removals_in_the_middle_move_the_shorter_side() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut model: Vec<String> = (0..100).map(|i| (i % 7).to_string()).collect();
    let mut cmd = redis::cmd("RPUSH");
    cmd.arg("l").arg(&model);
    let _: i64 = cmd.query(&mut c).unwrap();
    // Near the head, near the tail, and in the middle.
    for (pivot, after, elem) in [("1", false, "a"), ("6", true, "b"), ("5", false, "c")] {
        let pos = model.iter().position(|v| v == pivot).unwrap();
        model.insert(if after { pos + 1 } else { pos }, elem.into());
        let where_ = if after { "AFTER" } else { "BEFORE" };
        assert_eq!(
            ok(&mut c, &["LINSERT", "l", where_, pivot, elem]),
            int(model.len() as i64)
        );
        assert_eq!(range(&mut c, "l"), model);
    }
    // A pivot near the tail: the tail side moves.
    let last = model.len() - 3;
    let pivot = format!("p{last}");
    ok(&mut c, &["LSET", "l", &last.to_string(), &pivot]);
    model[last] = pivot.clone();
    model.insert(last + 1, "d".into());
    ok(&mut c, &["LINSERT", "l", "AFTER", &pivot, "d"]);
    assert_eq!(range(&mut c, "l"), model);
    for (count, elem) in [(2i64, "3"), (-3, "4"), (0, "0"), (1, "a"), (-1, "b")] {
        let mut removed = 0;
        if count >= 0 {
            let mut i = 0;
            while i < model.len() {
                if model[i] == elem && (count == 0 || removed < count) {
                    model.remove(i);
                    removed += 1;
                } else {
                    i += 1;
                }
            }
        } else {
            let mut i = model.len();
            while i > 0 {
                i -= 1;
                if model[i] == elem && removed < -count {
                    model.remove(i);
                    removed += 1;
                }
            }
        }
        assert_eq!(
            ok(&mut c, &["LREM", "l", &count.to_string(), elem]),
            int(removed)
        );
        assert_eq!(range(&mut c, "l"), model, "after LREM {count} {elem}");
        for (i, v) in model.iter().enumerate() {
            if i % 17 == 0 {
                assert_eq!(ok(&mut c, &["LINDEX", "l", &i.to_string()]), bulk(v));
            }
        }
    }
    // Removing every element removes the key.
    ok(&mut c, &["DEL", "m"]);
    ok(&mut c, &["RPUSH", "m", "x", "x", "x"]);
    assert_eq!(ok(&mut c, &["LREM", "m", "0", "x"]), int(3));
    assert_eq!(ok(&mut c, &["EXISTS", "m"]), int(0));
}

#[test]
fn huge_counts_are_bounded_by_the_list() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["RPUSH", "l", "a", "b", "c"]);
    let max = i64::MAX.to_string();
    let min = i64::MIN.to_string();
    assert_eq!(range(&mut c, "l").len(), 3);
    let v: Vec<String> = redis::cmd("LRANGE")
        .arg("l")
        .arg(&min)
        .arg(&max)
        .query(&mut c)
        .unwrap();
    assert_eq!(v, ["a", "b", "c"]);
    assert_eq!(
        ok(
            &mut c,
            &[
                "LPOS",
                "l",
                "b",
                "COUNT",
                "0",
                "MAXLEN",
                &max,
                "RANK",
                &(-i64::MAX).to_string()
            ]
        ),
        Value::Array(vec![])
    );
    assert_eq!(ok(&mut c, &["LINDEX", "l", &min]), Value::Nil);
    let (key, v): (String, Vec<String>) = redis::cmd("LMPOP")
        .arg(1)
        .arg("l")
        .arg("RIGHT")
        .arg("COUNT")
        .arg(&max)
        .query(&mut c)
        .unwrap();
    assert_eq!(
        (key.as_str(), v),
        ("l", vec!["c".to_string(), "b".into(), "a".into()])
    );
    assert_eq!(ok(&mut c, &["EXISTS", "l"]), int(0));
    ok(&mut c, &["RPUSH", "l", "a", "b"]);
    let v: Vec<String> = redis::cmd("LPOP").arg("l").arg(&max).query(&mut c).unwrap();
    assert_eq!(v, ["a", "b"]);
    assert_eq!(ok(&mut c, &["EXISTS", "l"]), int(0));
}

#[test]
fn transactions_see_their_own_list_writes() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut p = redis::pipe();
    p.atomic()
        .cmd("RPUSH")
        .arg("src")
        .arg("a")
        .arg("b")
        .arg("c")
        .cmd("LMOVE")
        .arg("src")
        .arg("src")
        .arg("LEFT")
        .arg("RIGHT")
        .cmd("RPOPLPUSH")
        .arg("src")
        .arg("dst")
        .cmd("LRANGE")
        .arg("src")
        .arg(0)
        .arg(-1)
        .cmd("LRANGE")
        .arg("dst")
        .arg(0)
        .arg(-1);
    let (n, moved, popped, src, dst): (i64, String, String, Vec<String>, Vec<String>) =
        p.query(&mut c).unwrap();
    assert_eq!((n, moved.as_str(), popped.as_str()), (3, "a", "a"));
    assert_eq!(src, ["b", "c"]);
    assert_eq!(dst, ["a"]);
    // A pipeline of pushes and pops (group commit) answers as if one by one.
    let mut p = redis::pipe();
    p.cmd("RPUSH")
        .arg("g")
        .arg("1")
        .cmd("RPUSH")
        .arg("g")
        .arg("2")
        .cmd("LPOP")
        .arg("g")
        .cmd("LLEN")
        .arg("g")
        .cmd("RPOP")
        .arg("g")
        .cmd("EXISTS")
        .arg("g");
    let r: (i64, i64, String, i64, String, i64) = p.query(&mut c).unwrap();
    assert_eq!(r, (1, 2, "1".into(), 1, "2".into(), 0));
}

#[test]
fn an_expired_list_is_gone_and_its_elements_stay_gone() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["RPUSH", "l", "old1", "old2", "old3"]);
    ok(&mut c, &["PEXPIRE", "l", "50"]);
    std::thread::sleep(std::time::Duration::from_millis(120));
    assert_eq!(ok(&mut c, &["LLEN", "l"]), int(0));
    assert_eq!(ok(&mut c, &["LPUSHX", "l", "x"]), int(0));
    ok(&mut c, &["RPUSH", "l", "new"]);
    assert_eq!(range(&mut c, "l"), ["new"]);
    assert_eq!(ok(&mut c, &["LINDEX", "l", "1"]), Value::Nil);
    assert_eq!(ok(&mut c, &["TTL", "l"]), int(-1));
    // Pushes keep a list's time to live.
    ok(&mut c, &["EXPIRE", "l", "100"]);
    ok(&mut c, &["LPUSH", "l", "y"]);
    let ttl: i64 = redis::cmd("TTL").arg("l").query(&mut c).unwrap();
    assert!(ttl > 90, "{ttl}");
    assert_eq!(ok(&mut c, &["TYPE", "l"]), status("list"));
}

#[test]
fn lists_survive_a_restart() {
    let mut s = TestServer::start();
    {
        let mut c = s.client();
        ok(&mut c, &["RPUSH", "l", "a", "b", "c"]);
        ok(&mut c, &["LPUSH", "l", "z"]);
        ok(&mut c, &["LSET", "l", "1", "A"]);
        ok(&mut c, &["RPUSH", "gone", "x"]);
        ok(&mut c, &["LPOP", "gone"]);
    }
    s.restart();
    let mut c = s.client();
    assert_eq!(range(&mut c, "l"), ["z", "A", "b", "c"]);
    assert_eq!(ok(&mut c, &["EXISTS", "gone"]), int(0));
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(1));
}

fn rpush_many(c: &mut redis::Connection, key: &str, n: usize, len: usize) {
    for chunk in (0..n).collect::<Vec<_>>().chunks(5000) {
        let mut cmd = redis::cmd("RPUSH");
        cmd.arg(key);
        for i in chunk {
            cmd.arg(format!("{i:0len$}"));
        }
        let _: i64 = cmd.query(c).unwrap();
    }
}

#[test]
fn long_ranges_stream_in_order_with_pipelined_commands() {
    let s = TestServer::start();
    let mut c = s.client();
    let n = 200_000;
    rpush_many(&mut c, "big", n, 8);
    // A streamed reply between two other replies of one pipeline.
    let mut p = redis::pipe();
    p.cmd("PING")
        .cmd("LRANGE")
        .arg("big")
        .arg(0)
        .arg(-1)
        .cmd("LRANGE")
        .arg("big")
        .arg(1000)
        .arg(3047)
        .cmd("LLEN")
        .arg("big");
    let (pong, all, mid, len): (String, Vec<String>, Vec<String>, i64) = p.query(&mut c).unwrap();
    assert_eq!(pong, "PONG");
    assert_eq!(all.len(), n);
    assert!(all.iter().enumerate().all(|(i, v)| *v == format!("{i:08}")));
    assert_eq!(mid.len(), 2048);
    assert_eq!(mid[0], "00001000");
    assert_eq!(mid[2047], "00003047");
    assert_eq!(len as usize, n);
    // RESP3 too, and a snapshot: a write after the LRANGE does not show in its reply.
    let mut c3 = s.client3();
    let mut p = redis::pipe();
    p.cmd("LRANGE")
        .arg("big")
        .arg(-5000)
        .arg(-1)
        .cmd("RPUSH")
        .arg("big")
        .arg("x");
    let (tail, n2): (Vec<String>, i64) = p.query(&mut c3).unwrap();
    assert_eq!(tail.len(), 5000);
    assert_eq!(tail[4999], format!("{:08}", n - 1));
    assert_eq!(n2 as usize, n + 1);
}

/// Resident memory of the process, from /proc.
fn rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .unwrap()
        .trim()
        .trim_end_matches(" kB")
        .trim()
        .parse()
        .unwrap()
}

/// LRANGE 0 -1 over 4M elements of 64 bytes (256 MB of elements) raises the process's
/// memory (sampled while the reply is read) by far less than the reply's size: the reply is
/// streamed, not built. Heavy:
/// `cargo test --release -p bloomkv-server --test types lists:: -- --ignored --nocapture`.
#[test]
#[ignore]
fn a_range_over_millions_of_elements_is_streamed_in_bounded_memory() {
    let s = TestServer::start();
    let mut c = s.client();
    let n = 4_000_000;
    rpush_many(&mut c, "huge", n, 64);
    let before = rss_kb();
    let mut peak = before;
    // Read the reply as raw bytes, counting them, without keeping them.
    let mut raw = s.raw();
    raw.cmd(&[b"LRANGE", b"huge", b"0", b"-1"]);
    let want = format!("*{n}\r\n").len() + n * ("$64\r\n".len() + 64 + 2);
    let mut got = 0;
    let mut buf = vec![0u8; 1 << 16];
    while got < want {
        use std::io::Read;
        let k = raw.s.read(&mut buf).unwrap();
        assert!(k > 0, "connection closed after {got} of {want} bytes");
        got += k;
        if got % (1 << 20) < k {
            peak = peak.max(rss_kb());
        }
    }
    let grew_mb = peak.saturating_sub(before) / 1024;
    println!(
        "reply of {} MB; memory grew {grew_mb} MB while it was read",
        want >> 20
    );
    assert!(
        grew_mb < 64,
        "memory grew {grew_mb} MB for a {} MB reply",
        want >> 20
    );
}
