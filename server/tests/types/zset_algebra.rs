//! ZUNION, ZINTER, ZDIFF, their STORE forms, ZINTERCARD and ZRANGESTORE: replies byte for
//! byte as redis-server 7.0.15 gave them (RESP2 and RESP3 tables recorded from it), and a
//! model test of random inputs against the set algebra computed here.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common;

use std::collections::BTreeMap;

use common::model::Rng;
use common::{TestServer, ok, run_bytes_table};
use redis::Value;

/// Recorded from redis-server 7.0.15, in order on one connection (RESP2).
#[rustfmt::skip]
const RESP2: &[(&str, &[u8])] = &[
    ("ZADD a 1 x 2 y 3 z", b":3\r\n"),
    ("ZADD b 10 y 20 z 30 w", b":3\r\n"),
    ("SADD s x w q", b":3\r\n"),
    ("SET str v", b"+OK\r\n"),
    ("ZUNION 2 a b", b"*4\r\n$1\r\nx\r\n$1\r\ny\r\n$1\r\nz\r\n$1\r\nw\r\n"),
    ("ZUNION 2 a b WITHSCORES", b"*8\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$2\r\n12\r\n$1\r\nz\r\n$2\r\n23\r\n$1\r\nw\r\n$2\r\n30\r\n"),
    ("ZUNION 3 a b s WITHSCORES", b"*10\r\n$1\r\nq\r\n$1\r\n1\r\n$1\r\nx\r\n$1\r\n2\r\n$1\r\ny\r\n$2\r\n12\r\n$1\r\nz\r\n$2\r\n23\r\n$1\r\nw\r\n$2\r\n31\r\n"),
    ("ZUNION 2 a b WEIGHTS 2 3 WITHSCORES", b"*8\r\n$1\r\nx\r\n$1\r\n2\r\n$1\r\ny\r\n$2\r\n34\r\n$1\r\nz\r\n$2\r\n66\r\n$1\r\nw\r\n$2\r\n90\r\n"),
    ("ZUNION 2 a b AGGREGATE MIN WITHSCORES", b"*8\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$1\r\n2\r\n$1\r\nz\r\n$1\r\n3\r\n$1\r\nw\r\n$2\r\n30\r\n"),
    ("ZUNION 2 a b AGGREGATE MAX WITHSCORES", b"*8\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$2\r\n10\r\n$1\r\nz\r\n$2\r\n20\r\n$1\r\nw\r\n$2\r\n30\r\n"),
    ("ZUNION 2 a b AGGREGATE BOGUS", b"-ERR syntax error\r\n"),
    ("ZUNION 2 a b WEIGHTS 1", b"-ERR syntax error\r\n"),
    ("ZUNION 2 a b WEIGHTS 1 x", b"-ERR weight value is not a float\r\n"),
    ("ZUNION 0 a", b"-ERR at least 1 input key is needed for 'zunion' command\r\n"),
    ("ZUNION -1 a", b"-ERR at least 1 input key is needed for 'zunion' command\r\n"),
    ("ZUNION x a", b"-ERR value is not an integer or out of range\r\n"),
    ("ZUNION 3 a b", b"-ERR syntax error\r\n"),
    ("ZUNION 2 a str", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("ZUNION 2 a nokey WITHSCORES", b"*6\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$1\r\n2\r\n$1\r\nz\r\n$1\r\n3\r\n"),
    ("ZINTER 2 a b WITHSCORES", b"*4\r\n$1\r\ny\r\n$2\r\n12\r\n$1\r\nz\r\n$2\r\n23\r\n"),
    ("ZINTER 3 a b s WITHSCORES", b"*0\r\n"),
    ("ZINTER 2 a s", b"*1\r\n$1\r\nx\r\n"),
    ("ZINTER 2 a b AGGREGATE MAX WEIGHTS 1 -1 WITHSCORES", b"*4\r\n$1\r\ny\r\n$1\r\n2\r\n$1\r\nz\r\n$1\r\n3\r\n"),
    ("ZDIFF 2 a b WITHSCORES", b"*2\r\n$1\r\nx\r\n$1\r\n1\r\n"),
    ("ZDIFF 2 a s", b"*2\r\n$1\r\ny\r\n$1\r\nz\r\n"),
    ("ZDIFF 2 a b WEIGHTS 1 1", b"-ERR syntax error\r\n"),
    ("ZDIFF 1 nokey", b"*0\r\n"),
    ("ZUNIONSTORE d 2 a b", b":4\r\n"),
    ("ZRANGE d 0 -1 WITHSCORES", b"*8\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$2\r\n12\r\n$1\r\nz\r\n$2\r\n23\r\n$1\r\nw\r\n$2\r\n30\r\n"),
    ("ZUNIONSTORE d 2 a b WITHSCORES", b"-ERR syntax error\r\n"),
    ("ZINTERSTORE d 2 a b WEIGHTS 1 0", b":2\r\n"),
    ("ZRANGE d 0 -1 WITHSCORES", b"*4\r\n$1\r\ny\r\n$1\r\n2\r\n$1\r\nz\r\n$1\r\n3\r\n"),
    ("ZINTERSTORE d 2 a q", b":0\r\n"),
    ("EXISTS d", b":0\r\n"),
    ("ZDIFFSTORE d 2 a b", b":1\r\n"),
    ("ZRANGE d 0 -1 WITHSCORES", b"*2\r\n$1\r\nx\r\n$1\r\n1\r\n"),
    ("ZDIFFSTORE a 2 a a", b":0\r\n"),
    ("EXISTS a", b":0\r\n"),
    ("ZADD a 1 x 2 y 3 z", b":3\r\n"),
    ("ZADD inf inf x -inf y", b":2\r\n"),
    ("ZUNION 2 inf inf WITHSCORES", b"*4\r\n$1\r\ny\r\n$4\r\n-inf\r\n$1\r\nx\r\n$3\r\ninf\r\n"),
    ("ZUNION 2 inf a WEIGHTS 0 1 WITHSCORES", b"*6\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$1\r\n2\r\n$1\r\nz\r\n$1\r\n3\r\n"),
    ("ZADD ninf -inf x", b":1\r\n"),
    ("ZUNION 2 inf ninf WITHSCORES", b"*4\r\n$1\r\ny\r\n$4\r\n-inf\r\n$1\r\nx\r\n$1\r\n0\r\n"),
    ("ZINTERCARD 2 a b", b":2\r\n"),
    ("ZINTERCARD 2 a b LIMIT 1", b":1\r\n"),
    ("ZINTERCARD 2 a b LIMIT 0", b":2\r\n"),
    ("ZINTERCARD 2 a b LIMIT -1", b"-ERR LIMIT can't be negative\r\n"),
    ("ZINTERCARD 0 a", b"-ERR at least 1 input key is needed for 'zintercard' command\r\n"),
    ("ZINTERCARD 3 a b", b"-ERR syntax error\r\n"),
    ("ZINTERCARD 2 a str", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("ZINTERCARD 2 a b BOGUS", b"-ERR syntax error\r\n"),
    ("ZRANGESTORE r a 0 -1", b":3\r\n"),
    ("ZRANGE r 0 -1 WITHSCORES", b"*6\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$1\r\n2\r\n$1\r\nz\r\n$1\r\n3\r\n"),
    ("ZRANGESTORE r a 0 -1 WITHSCORES", b"-ERR syntax error\r\n"),
    ("ZRANGESTORE r a (1 +inf BYSCORE LIMIT 0 1", b":1\r\n"),
    ("ZRANGE r 0 -1 WITHSCORES", b"*2\r\n$1\r\ny\r\n$1\r\n2\r\n"),
    ("ZRANGESTORE r a [y + BYLEX", b":2\r\n"),
    ("ZRANGE r 0 -1 WITHSCORES", b"*4\r\n$1\r\ny\r\n$1\r\n2\r\n$1\r\nz\r\n$1\r\n3\r\n"),
    ("ZRANGESTORE r a + [y BYLEX REV", b":2\r\n"),
    ("ZRANGE r 0 -1 WITHSCORES", b"*4\r\n$1\r\ny\r\n$1\r\n2\r\n$1\r\nz\r\n$1\r\n3\r\n"),
    ("ZRANGESTORE r nokey 0 -1", b":0\r\n"),
    ("EXISTS r", b":0\r\n"),
    ("ZRANGESTORE r str 0 -1", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("ZRANGESTORE r a 5 10", b":0\r\n"),
    ("EXISTS r", b":0\r\n"),
    ("ZUNIONSTORE s 1 b", b":3\r\n"),
    ("TYPE s", b"+zset\r\n"),
    ("ZRANGE s 0 -1 WITHSCORES", b"*6\r\n$1\r\ny\r\n$2\r\n10\r\n$1\r\nz\r\n$2\r\n20\r\n$1\r\nw\r\n$2\r\n30\r\n"),
];

/// The same commands, recorded in RESP3 (`HELLO 3` first).
#[rustfmt::skip]
const RESP3: &[(&str, &[u8])] = &[
    ("ZADD a 1 x 2 y 3 z", b":3\r\n"),
    ("ZADD b 10 y 20 z 30 w", b":3\r\n"),
    ("SADD s x w q", b":3\r\n"),
    ("SET str v", b"+OK\r\n"),
    ("ZUNION 2 a b", b"*4\r\n$1\r\nx\r\n$1\r\ny\r\n$1\r\nz\r\n$1\r\nw\r\n"),
    ("ZUNION 2 a b WITHSCORES", b"*4\r\n*2\r\n$1\r\nx\r\n,1\r\n*2\r\n$1\r\ny\r\n,12\r\n*2\r\n$1\r\nz\r\n,23\r\n*2\r\n$1\r\nw\r\n,30\r\n"),
    ("ZUNION 3 a b s WITHSCORES", b"*5\r\n*2\r\n$1\r\nq\r\n,1\r\n*2\r\n$1\r\nx\r\n,2\r\n*2\r\n$1\r\ny\r\n,12\r\n*2\r\n$1\r\nz\r\n,23\r\n*2\r\n$1\r\nw\r\n,31\r\n"),
    ("ZUNION 2 a b WEIGHTS 2 3 WITHSCORES", b"*4\r\n*2\r\n$1\r\nx\r\n,2\r\n*2\r\n$1\r\ny\r\n,34\r\n*2\r\n$1\r\nz\r\n,66\r\n*2\r\n$1\r\nw\r\n,90\r\n"),
    ("ZUNION 2 a b AGGREGATE MIN WITHSCORES", b"*4\r\n*2\r\n$1\r\nx\r\n,1\r\n*2\r\n$1\r\ny\r\n,2\r\n*2\r\n$1\r\nz\r\n,3\r\n*2\r\n$1\r\nw\r\n,30\r\n"),
    ("ZUNION 2 a b AGGREGATE MAX WITHSCORES", b"*4\r\n*2\r\n$1\r\nx\r\n,1\r\n*2\r\n$1\r\ny\r\n,10\r\n*2\r\n$1\r\nz\r\n,20\r\n*2\r\n$1\r\nw\r\n,30\r\n"),
    ("ZUNION 2 a b AGGREGATE BOGUS", b"-ERR syntax error\r\n"),
    ("ZUNION 2 a b WEIGHTS 1", b"-ERR syntax error\r\n"),
    ("ZUNION 2 a b WEIGHTS 1 x", b"-ERR weight value is not a float\r\n"),
    ("ZUNION 0 a", b"-ERR at least 1 input key is needed for 'zunion' command\r\n"),
    ("ZUNION -1 a", b"-ERR at least 1 input key is needed for 'zunion' command\r\n"),
    ("ZUNION x a", b"-ERR value is not an integer or out of range\r\n"),
    ("ZUNION 3 a b", b"-ERR syntax error\r\n"),
    ("ZUNION 2 a str", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("ZUNION 2 a nokey WITHSCORES", b"*3\r\n*2\r\n$1\r\nx\r\n,1\r\n*2\r\n$1\r\ny\r\n,2\r\n*2\r\n$1\r\nz\r\n,3\r\n"),
    ("ZINTER 2 a b WITHSCORES", b"*2\r\n*2\r\n$1\r\ny\r\n,12\r\n*2\r\n$1\r\nz\r\n,23\r\n"),
    ("ZINTER 3 a b s WITHSCORES", b"*0\r\n"),
    ("ZINTER 2 a s", b"*1\r\n$1\r\nx\r\n"),
    ("ZINTER 2 a b AGGREGATE MAX WEIGHTS 1 -1 WITHSCORES", b"*2\r\n*2\r\n$1\r\ny\r\n,2\r\n*2\r\n$1\r\nz\r\n,3\r\n"),
    ("ZDIFF 2 a b WITHSCORES", b"*1\r\n*2\r\n$1\r\nx\r\n,1\r\n"),
    ("ZDIFF 2 a s", b"*2\r\n$1\r\ny\r\n$1\r\nz\r\n"),
    ("ZDIFF 2 a b WEIGHTS 1 1", b"-ERR syntax error\r\n"),
    ("ZDIFF 1 nokey", b"*0\r\n"),
    ("ZUNIONSTORE d 2 a b", b":4\r\n"),
    ("ZRANGE d 0 -1 WITHSCORES", b"*4\r\n*2\r\n$1\r\nx\r\n,1\r\n*2\r\n$1\r\ny\r\n,12\r\n*2\r\n$1\r\nz\r\n,23\r\n*2\r\n$1\r\nw\r\n,30\r\n"),
    ("ZUNIONSTORE d 2 a b WITHSCORES", b"-ERR syntax error\r\n"),
    ("ZINTERSTORE d 2 a b WEIGHTS 1 0", b":2\r\n"),
    ("ZRANGE d 0 -1 WITHSCORES", b"*2\r\n*2\r\n$1\r\ny\r\n,2\r\n*2\r\n$1\r\nz\r\n,3\r\n"),
    ("ZINTERSTORE d 2 a q", b":0\r\n"),
    ("EXISTS d", b":0\r\n"),
    ("ZDIFFSTORE d 2 a b", b":1\r\n"),
    ("ZRANGE d 0 -1 WITHSCORES", b"*1\r\n*2\r\n$1\r\nx\r\n,1\r\n"),
    ("ZDIFFSTORE a 2 a a", b":0\r\n"),
    ("EXISTS a", b":0\r\n"),
    ("ZADD a 1 x 2 y 3 z", b":3\r\n"),
    ("ZADD inf inf x -inf y", b":2\r\n"),
    ("ZUNION 2 inf inf WITHSCORES", b"*2\r\n*2\r\n$1\r\ny\r\n,-inf\r\n*2\r\n$1\r\nx\r\n,inf\r\n"),
    ("ZUNION 2 inf a WEIGHTS 0 1 WITHSCORES", b"*3\r\n*2\r\n$1\r\nx\r\n,1\r\n*2\r\n$1\r\ny\r\n,2\r\n*2\r\n$1\r\nz\r\n,3\r\n"),
    ("ZADD ninf -inf x", b":1\r\n"),
    ("ZUNION 2 inf ninf WITHSCORES", b"*2\r\n*2\r\n$1\r\ny\r\n,-inf\r\n*2\r\n$1\r\nx\r\n,0\r\n"),
    ("ZINTERCARD 2 a b", b":2\r\n"),
    ("ZINTERCARD 2 a b LIMIT 1", b":1\r\n"),
    ("ZINTERCARD 2 a b LIMIT 0", b":2\r\n"),
    ("ZINTERCARD 2 a b LIMIT -1", b"-ERR LIMIT can't be negative\r\n"),
    ("ZINTERCARD 0 a", b"-ERR at least 1 input key is needed for 'zintercard' command\r\n"),
    ("ZINTERCARD 3 a b", b"-ERR syntax error\r\n"),
    ("ZINTERCARD 2 a str", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("ZINTERCARD 2 a b BOGUS", b"-ERR syntax error\r\n"),
    ("ZRANGESTORE r a 0 -1", b":3\r\n"),
    ("ZRANGE r 0 -1 WITHSCORES", b"*3\r\n*2\r\n$1\r\nx\r\n,1\r\n*2\r\n$1\r\ny\r\n,2\r\n*2\r\n$1\r\nz\r\n,3\r\n"),
    ("ZRANGESTORE r a 0 -1 WITHSCORES", b"-ERR syntax error\r\n"),
    ("ZRANGESTORE r a (1 +inf BYSCORE LIMIT 0 1", b":1\r\n"),
    ("ZRANGE r 0 -1 WITHSCORES", b"*1\r\n*2\r\n$1\r\ny\r\n,2\r\n"),
    ("ZRANGESTORE r a [y + BYLEX", b":2\r\n"),
    ("ZRANGE r 0 -1 WITHSCORES", b"*2\r\n*2\r\n$1\r\ny\r\n,2\r\n*2\r\n$1\r\nz\r\n,3\r\n"),
    ("ZRANGESTORE r a + [y BYLEX REV", b":2\r\n"),
    ("ZRANGE r 0 -1 WITHSCORES", b"*2\r\n*2\r\n$1\r\ny\r\n,2\r\n*2\r\n$1\r\nz\r\n,3\r\n"),
    ("ZRANGESTORE r nokey 0 -1", b":0\r\n"),
    ("EXISTS r", b":0\r\n"),
    ("ZRANGESTORE r str 0 -1", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("ZRANGESTORE r a 5 10", b":0\r\n"),
    ("EXISTS r", b":0\r\n"),
    ("ZUNIONSTORE s 1 b", b":3\r\n"),
    ("TYPE s", b"+zset\r\n"),
    ("ZRANGE s 0 -1 WITHSCORES", b"*3\r\n*2\r\n$1\r\ny\r\n,10\r\n*2\r\n$1\r\nz\r\n,20\r\n*2\r\n$1\r\nw\r\n,30\r\n"),
];

/// Infinite scores, recorded from redis-server 7.0.15 (RESP2): Redis combines the inputs
/// smallest first, makes only the first input's NaN product 0, and a NaN sum 0.
#[rustfmt::skip]
const INFINITIES: &[(&str, &[u8])] = &[
    ("ZADD foo inf e1", b":1\r\n"),
    ("ZADD bar -inf e1 0 e2", b":2\r\n"),
    ("ZUNIONSTORE baz 3 foo bar foo", b":2\r\n"),
    ("ZSCORE baz e1", b"$1\r\n0\r\n"),
    ("ZUNION 3 foo bar foo WITHSCORES", b"*4\r\n$2\r\ne1\r\n$1\r\n0\r\n$2\r\ne2\r\n$1\r\n0\r\n"),
    ("ZUNION 3 bar foo foo WITHSCORES", b"*4\r\n$2\r\ne1\r\n$1\r\n0\r\n$2\r\ne2\r\n$1\r\n0\r\n"),
    ("ZADD foo2 inf x", b":1\r\n"),
    ("ZADD foo3 inf x", b":1\r\n"),
    ("ZINTERSTORE q 2 foo2 foo3 WEIGHTS 1 0", b":1\r\n"),
    ("ZSCORE q x", b"$1\r\n0\r\n"),
    ("ZINTER 2 foo3 foo2 WEIGHTS 0 1 WITHSCORES", b"*2\r\n$1\r\nx\r\n$3\r\ninf\r\n"),
    ("ZINTER 2 foo2 foo3 WEIGHTS 0 1 WITHSCORES", b"*2\r\n$1\r\nx\r\n$3\r\ninf\r\n"),
    ("ZINTER 2 foo2 foo3 WEIGHTS 1 0 AGGREGATE MAX WITHSCORES", b"*2\r\n$1\r\nx\r\n$3\r\ninf\r\n"),
    ("ZINTER 2 foo2 foo3 WEIGHTS 0 1 AGGREGATE MIN WITHSCORES", b"*2\r\n$1\r\nx\r\n$1\r\n0\r\n"),
    ("ZADD big 1 x 2 y 3 z", b":3\r\n"),
    ("ZINTER 2 big foo2 WEIGHTS 0 0 WITHSCORES", b"*2\r\n$1\r\nx\r\n$1\r\n0\r\n"),
    ("ZINTER 2 foo2 big WEIGHTS 0 1 WITHSCORES", b"*2\r\n$1\r\nx\r\n$1\r\n1\r\n"),
    ("ZUNION 2 big foo WEIGHTS 0 1 WITHSCORES", b"*8\r\n$1\r\nx\r\n$1\r\n0\r\n$1\r\ny\r\n$1\r\n0\r\n$1\r\nz\r\n$1\r\n0\r\n$2\r\ne1\r\n$3\r\ninf\r\n"),
];

#[test]
fn infinite_scores_combine_as_in_redis() {
    let s = TestServer::start();
    run_bytes_table(&mut s.raw(), INFINITIES);
}

#[test]
fn replies_match_redis_in_resp2() {
    let s = TestServer::start();
    run_bytes_table(&mut s.raw(), RESP2);
}

#[test]
fn replies_match_redis_in_resp3() {
    let s = TestServer::start();
    // HELLO's reply is a map of unknown length: a fresh connection says HELLO 3 and reads
    // one round trip of PING after it to get past it.
    let mut raw = s.raw();
    raw.send(b"*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n*1\r\n$4\r\nPING\r\n");
    raw.read_until(b"+PONG\r\n");
    run_bytes_table(&mut raw, RESP3);
}

type Model = BTreeMap<String, f64>;

fn scored(v: Value) -> Vec<(String, f64)> {
    let flat: Vec<String> = redis::from_redis_value(v).unwrap();
    flat.chunks(2)
        .map(|p| (p[0].clone(), p[1].parse::<f64>().unwrap()))
        .collect()
}

fn sorted(m: Model) -> Vec<(String, f64)> {
    let mut v: Vec<(String, f64)> = m.into_iter().collect();
    // -0 and 0 tie, broken by member, as in Redis.
    v.sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap().then_with(|| a.0.cmp(&b.0)));
    v
}

#[test]
fn random_inputs_agree_with_a_model() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut rng = Rng(7);
    for round in 0..40 {
        ok(&mut c, &["FLUSHDB"]);
        let mut models: Vec<Model> = Vec::new();
        for k in 0..3 {
            let mut m = Model::new();
            for _ in 0..rng.below(12) {
                let member = format!("m{}", rng.below(16));
                let score = rng.range(-5, 5) as f64;
                m.insert(member, score);
            }
            for (member, score) in &m {
                ok(
                    &mut c,
                    &["ZADD", &format!("k{k}"), &score.to_string(), member],
                );
            }
            models.push(m);
        }
        let (w0, w1, w2) = (rng.range(-2, 3), rng.range(-2, 3), rng.range(-2, 3));
        let weights = [w0 as f64, w1 as f64, w2 as f64];
        let w: Vec<String> = weights.iter().map(|w| w.to_string()).collect();
        let mut union = Model::new();
        for (m, w) in models.iter().zip(weights) {
            for (k, s) in m {
                *union.entry(k.clone()).or_insert(0.0) += s * w;
            }
        }
        let got = ok(
            &mut c,
            &[
                "ZUNION",
                "3",
                "k0",
                "k1",
                "k2",
                "WEIGHTS",
                &w[0],
                &w[1],
                &w[2],
                "WITHSCORES",
            ],
        );
        assert_eq!(scored(got), sorted(union.clone()), "round {round}: union");
        let mut inter = Model::new();
        for (k, s0) in &models[0] {
            if let (Some(s1), Some(s2)) = (models[1].get(k), models[2].get(k)) {
                inter.insert(k.clone(), s0.max(*s1).max(*s2));
            }
        }
        let got = ok(
            &mut c,
            &[
                "ZINTER",
                "3",
                "k0",
                "k1",
                "k2",
                "AGGREGATE",
                "MAX",
                "WITHSCORES",
            ],
        );
        assert_eq!(scored(got), sorted(inter.clone()), "round {round}: inter");
        let n: i64 =
            redis::from_redis_value(ok(&mut c, &["ZINTERCARD", "3", "k0", "k1", "k2"])).unwrap();
        assert_eq!(n as usize, inter.len());
        let diff: Model = models[0]
            .iter()
            .filter(|(k, _)| !models[1].contains_key(*k) && !models[2].contains_key(*k))
            .map(|(k, s)| (k.clone(), *s))
            .collect();
        let stored: i64 =
            redis::from_redis_value(ok(&mut c, &["ZDIFFSTORE", "k0", "3", "k0", "k1", "k2"]))
                .unwrap();
        assert_eq!(
            stored as usize,
            diff.len(),
            "round {round}: diff into its own input"
        );
        let got = ok(&mut c, &["ZRANGE", "k0", "0", "-1", "WITHSCORES"]);
        assert_eq!(scored(got), sorted(diff), "round {round}: diff");
    }
}
