//! SORT and SORT_RO: replies byte for byte as redis-server 7.0.15 gave them for lists, sets
//! and sorted sets, BY and GET patterns (strings and hash fields), LIMIT, ALPHA, DESC, STORE
//! and the errors; a model test of random numeric lists; SORT ... STORE inside MULTI and
//! serving a client blocked on the destination.

use crate::common;

use common::model::Rng;
use common::{TestServer, bulk, int, ok, run_bytes_table};
use redis::Value;

/// Recorded from redis-server 7.0.15, in order on one connection (RESP2).
#[rustfmt::skip]
const RECORDED: &[(&str, &[u8])] = &[
    ("FLUSHALL", b"+OK\r\n"),
    ("RPUSH l 3 1 2 10 -5 2.5", b":6\r\n"),
    ("SORT l", b"*6\r\n$2\r\n-5\r\n$1\r\n1\r\n$1\r\n2\r\n$3\r\n2.5\r\n$1\r\n3\r\n$2\r\n10\r\n"),
    ("SORT l DESC", b"*6\r\n$2\r\n10\r\n$1\r\n3\r\n$3\r\n2.5\r\n$1\r\n2\r\n$1\r\n1\r\n$2\r\n-5\r\n"),
    ("SORT l ALPHA", b"*6\r\n$2\r\n-5\r\n$1\r\n1\r\n$2\r\n10\r\n$1\r\n2\r\n$3\r\n2.5\r\n$1\r\n3\r\n"),
    ("SORT l ALPHA DESC", b"*6\r\n$1\r\n3\r\n$3\r\n2.5\r\n$1\r\n2\r\n$2\r\n10\r\n$1\r\n1\r\n$2\r\n-5\r\n"),
    ("SORT l LIMIT 1 3", b"*3\r\n$1\r\n1\r\n$1\r\n2\r\n$3\r\n2.5\r\n"),
    ("SORT l LIMIT -2 2", b"*2\r\n$2\r\n-5\r\n$1\r\n1\r\n"),
    ("SORT l LIMIT 4 10", b"*2\r\n$1\r\n3\r\n$2\r\n10\r\n"),
    ("SORT l LIMIT 10 2", b"*0\r\n"),
    ("SORT l LIMIT 0 0", b"*0\r\n"),
    ("SORT l LIMIT 2 -1", b"*4\r\n$1\r\n2\r\n$3\r\n2.5\r\n$1\r\n3\r\n$2\r\n10\r\n"),
    ("SORT l LIMIT 1", b"-ERR syntax error\r\n"),
    ("SORT l LIMIT x 1", b"-ERR value is not an integer or out of range\r\n"),
    ("SORT l BOGUS", b"-ERR syntax error\r\n"),
    ("SORT l BY nosort", b"*6\r\n$1\r\n3\r\n$1\r\n1\r\n$1\r\n2\r\n$2\r\n10\r\n$2\r\n-5\r\n$3\r\n2.5\r\n"),
    ("SORT l BY nosort DESC", b"*6\r\n$3\r\n2.5\r\n$2\r\n-5\r\n$2\r\n10\r\n$1\r\n2\r\n$1\r\n1\r\n$1\r\n3\r\n"),
    ("SORT l BY nosort LIMIT 1 2", b"*2\r\n$1\r\n1\r\n$1\r\n2\r\n"),
    ("SORT l BY nosort DESC LIMIT 1 2", b"*2\r\n$2\r\n-5\r\n$2\r\n10\r\n"),
    ("RPUSH words banana apple cherry", b":3\r\n"),
    ("SORT words", b"-ERR One or more scores can't be converted into double\r\n"),
    ("SORT words ALPHA", b"*3\r\n$5\r\napple\r\n$6\r\nbanana\r\n$6\r\ncherry\r\n"),
    ("SORT words ALPHA LIMIT 0 2 DESC", b"*2\r\n$6\r\ncherry\r\n$6\r\nbanana\r\n"),
    ("SADD s 30 4 200 17", b":4\r\n"),
    ("SORT s", b"*4\r\n$1\r\n4\r\n$2\r\n17\r\n$2\r\n30\r\n$3\r\n200\r\n"),
    ("SORT s DESC LIMIT 1 2", b"*2\r\n$2\r\n30\r\n$2\r\n17\r\n"),
    ("ZADD z 1 c 2 b 3 a", b":3\r\n"),
    ("SORT z ALPHA", b"*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"),
    ("SORT z BY nosort", b"*3\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n"),
    ("SORT z BY nosort DESC", b"*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"),
    ("SORT z BY nosort LIMIT 1 5", b"*2\r\n$1\r\nb\r\n$1\r\na\r\n"),
    ("MSET w_3 30 w_1 10 w_2 20 w_10 5", b"+OK\r\n"),
    ("SORT l BY w_*", b"*6\r\n$2\r\n-5\r\n$3\r\n2.5\r\n$2\r\n10\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"),
    ("SORT l BY w_* DESC", b"*6\r\n$1\r\n3\r\n$1\r\n2\r\n$1\r\n1\r\n$2\r\n10\r\n$3\r\n2.5\r\n$2\r\n-5\r\n"),
    ("RPUSH ids 1 2 3", b":3\r\n"),
    ("HSET h_1 name one rank 3", b":2\r\n"),
    ("HSET h_2 name two rank 1", b":2\r\n"),
    ("HSET h_3 name three rank 2", b":2\r\n"),
    ("SORT ids BY h_*->rank", b"*3\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n1\r\n"),
    ("SORT ids BY h_*->rank GET h_*->name", b"*3\r\n$3\r\ntwo\r\n$5\r\nthree\r\n$3\r\none\r\n"),
    ("SORT ids BY h_*->rank GET # GET h_*->name GET h_*->missing GET w_*", b"*12\r\n$1\r\n2\r\n$3\r\ntwo\r\n$-1\r\n$2\r\n20\r\n$1\r\n3\r\n$5\r\nthree\r\n$-1\r\n$2\r\n30\r\n$1\r\n1\r\n$3\r\none\r\n$-1\r\n$2\r\n10\r\n"),
    ("SORT ids BY h_*->name ALPHA GET h_*->name", b"*3\r\n$3\r\none\r\n$5\r\nthree\r\n$3\r\ntwo\r\n"),
    ("SORT ids BY h_*->name ALPHA DESC GET #", b"*3\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n1\r\n"),
    ("SORT ids BY nokey_* GET #", b"*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"),
    ("SORT ids BY w_* ALPHA", b"*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"),
    ("SORT ids GET nostar", b"*3\r\n$-1\r\n$-1\r\n$-1\r\n"),
    ("SORT ids GET h_*->", b"*3\r\n$-1\r\n$-1\r\n$-1\r\n"),
    ("SET tie_a 1", b"+OK\r\n"),
    ("RPUSH t b a c", b":3\r\n"),
    ("SORT t BY tie_*", b"*3\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\na\r\n"),
    ("SORT t BY tie_* ALPHA", b"*3\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\na\r\n"),
    ("SORT t BY tie_* ALPHA DESC", b"*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"),
    ("SORT ids BY h_*->rank STORE dst", b":3\r\n"),
    ("LRANGE dst 0 -1", b"*3\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n1\r\n"),
    ("SORT ids BY h_*->rank GET h_*->name GET h_*->missing STORE dst", b":6\r\n"),
    ("LRANGE dst 0 -1", b"*6\r\n$3\r\ntwo\r\n$0\r\n\r\n$5\r\nthree\r\n$0\r\n\r\n$3\r\none\r\n$0\r\n\r\n"),
    ("TYPE dst", b"+list\r\n"),
    ("SORT nokey STORE dst", b":0\r\n"),
    ("EXISTS dst", b":0\r\n"),
    ("SORT_RO ids BY h_*->rank GET h_*->name", b"*3\r\n$3\r\ntwo\r\n$5\r\nthree\r\n$3\r\none\r\n"),
    ("SORT_RO ids STORE dst", b"-ERR syntax error\r\n"),
    ("SORT words", b"-ERR One or more scores can't be converted into double\r\n"),
    ("SET str x", b"+OK\r\n"),
    ("SORT str", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("SORT nokey", b"*0\r\n"),
    ("RPUSH f 1e3 -inf 0.5 +7 inf", b":5\r\n"),
    ("SORT f", b"*5\r\n$4\r\n-inf\r\n$3\r\n0.5\r\n$2\r\n+7\r\n$3\r\n1e3\r\n$3\r\ninf\r\n"),
    ("SORT f DESC", b"*5\r\n$3\r\ninf\r\n$3\r\n1e3\r\n$2\r\n+7\r\n$3\r\n0.5\r\n$4\r\n-inf\r\n"),
    ("RPUSH g 1 nan", b":2\r\n"),
    ("SORT g", b"-ERR One or more scores can't be converted into double\r\n"),
    ("RPUSH e 2 \"\" 1", b":3\r\n"),
    ("SORT e", b"*3\r\n$0\r\n\r\n$1\r\n1\r\n$1\r\n2\r\n"),
    ("RPUSH sp 3 \" 2\" 1", b":3\r\n"),
    ("RPUSH bad 1 \"1 \"", b":2\r\n"),
    ("SORT bad", b"-ERR One or more scores can't be converted into double\r\n"),
    ("SORT sp", b"*3\r\n$1\r\n1\r\n$2\r\n 2\r\n$1\r\n3\r\n"),
    ("SORT ids BY w_* GET nokey_*", b"*3\r\n$-1\r\n$-1\r\n$-1\r\n"),
];

#[test]
fn replies_match_redis() {
    let s = TestServer::start();
    run_bytes_table(&mut s.raw(), RECORDED);
}

/// Random lists of integers and decimals: SORT with LIMIT, DESC and ALPHA against the order
/// computed here (numbers ascending, ties by the elements' bytes; ALPHA by bytes).
#[test]
fn random_lists_sort_as_the_model_does() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut rng = Rng(0x50f7);
    for round in 0..40 {
        let key = format!("l{round}");
        let n = rng.below(30) as usize;
        let elems: Vec<String> = (0..n)
            .map(|_| match rng.below(3) {
                0 => rng.range(-50, 50).to_string(),
                1 => format!("{}.{}", rng.range(-9, 9), rng.below(10)),
                _ => format!("{:03}", rng.below(20)),
            })
            .collect();
        if !elems.is_empty() {
            let mut push = vec!["RPUSH", key.as_str()];
            push.extend(elems.iter().map(String::as_str));
            ok(&mut c, &push);
        }
        let desc = rng.below(2) == 1;
        let alpha = rng.below(2) == 1;
        let (start, count) = (rng.range(-2, 10), rng.range(-1, 12));
        let mut want = elems.clone();
        if alpha {
            want.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        } else {
            want.sort_by(|a, b| {
                let (x, y) = (a.parse::<f64>().unwrap(), b.parse::<f64>().unwrap());
                x.partial_cmp(&y).unwrap().then_with(|| a.cmp(b))
            });
        }
        if desc {
            want.reverse();
        }
        let from = start.max(0) as usize;
        let want: Vec<Value> = if from >= want.len() || count == 0 {
            Vec::new()
        } else {
            let to = if count < 0 {
                want.len()
            } else {
                (from + count as usize).min(want.len())
            };
            want[from..to].iter().map(|e| bulk(e)).collect()
        };
        let (start, count) = (start.to_string(), count.to_string());
        let mut cmd = vec!["SORT", key.as_str(), "LIMIT", &start, &count];
        if desc {
            cmd.push("DESC");
        }
        if alpha {
            cmd.push("ALPHA");
        }
        assert_eq!(ok(&mut c, &cmd), Value::Array(want), "{cmd:?} of {elems:?}");
    }
}

/// SORT ... STORE inside MULTI sees the transaction's own writes, and a client blocked on
/// the destination is served by the stored list.
#[test]
fn store_in_multi_and_serving_a_blocked_client() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut waiter = s.client();
    let blocked = std::thread::spawn(move || ok(&mut waiter, &["BLPOP", "dst", "10"]));
    common::wait_blocked(&mut c, 1);
    ok(&mut c, &["MULTI"]);
    ok(&mut c, &["RPUSH", "src", "3", "1", "2"]);
    ok(&mut c, &["SORT", "src", "STORE", "dst"]);
    assert_eq!(ok(&mut c, &["EXEC"]), Value::Array(vec![int(3), int(3)]));
    assert_eq!(
        blocked.join().unwrap(),
        Value::Array(vec![bulk("dst"), bulk("1")])
    );
    assert_eq!(
        ok(&mut c, &["LRANGE", "dst", "0", "-1"]),
        Value::Array(vec![bulk("2"), bulk("3")])
    );
}
