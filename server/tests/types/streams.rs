//! Streams: XADD, XLEN, XRANGE, XREVRANGE, XDEL, XTRIM, XREAD (BLOCK), TYPE, with Redis's
//! exact replies and errors (recorded from redis-server 7.0.15), blocked readers woken by
//! XADD, approximate trimming in whole nodes as Redis does, persistence across a restart, and
//! a model test against an in-memory stream. Consumer groups: `streams/groups.rs`.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common;
mod groups;

use std::collections::BTreeMap;

use common::{TestServer, bulk, err, int, ok, q, run_bytes_table, run_table};
use redis::Value;

#[test]
fn replies_and_errors_match_redis() {
    let s = TestServer::start();
    let mut raw = s.raw();
    run_table(
        &mut raw,
        &[
            ("xadd s 1-1 a 1", "$3\r\n1-1\r\n"),
            (
                "xadd s 1-1 a 1",
                "-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n",
            ),
            (
                "xadd s 1-0 a 1",
                "-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n",
            ),
            (
                "xadd s 0-0 a 1",
                "-ERR The ID specified in XADD must be greater than 0-0\r\n",
            ),
            ("xadd s 2-* b 2", "$3\r\n2-0\r\n"),
            ("xadd s 2-* b 3", "$3\r\n2-1\r\n"),
            ("xadd s 5 c 1", "$3\r\n5-0\r\n"),
            (
                "xadd s * d",
                "-ERR wrong number of arguments for 'xadd' command\r\n",
            ),
            (
                "xadd s abc d 1",
                "-ERR Invalid stream ID specified as stream command argument\r\n",
            ),
            (
                "xadd s 1-x d 1",
                "-ERR Invalid stream ID specified as stream command argument\r\n",
            ),
            (
                "xadd s 18446744073709551615-18446744073709551615 x 1",
                "$41\r\n18446744073709551615-18446744073709551615\r\n",
            ),
            (
                "xadd s * x 1",
                "-ERR The stream has exhausted the last possible ID, unable to add more items\r\n",
            ),
            (
                "xadd s 18446744073709551615-* x 1",
                "-ERR The stream has exhausted the last possible ID, unable to add more items\r\n",
            ),
            (
                "xadd s 18446744073709551615-18446744073709551615 x 1",
                "-ERR The stream has exhausted the last possible ID, unable to add more items\r\n",
            ),
            ("exists s2", ":0\r\n"),
            (
                "xadd s2 maxlen -1 * a 1",
                "-ERR The MAXLEN argument must be >= 0.\r\n",
            ),
            (
                "xadd s2 maxlen x * a 1",
                "-ERR value is not an integer or out of range\r\n",
            ),
            (
                "xadd s2 maxlen 2 limit 10 * a 1",
                "-ERR syntax error, LIMIT cannot be used without the special ~ option\r\n",
            ),
            (
                "xadd s2 maxlen ~ 2 limit -1 * a 1",
                "-ERR The LIMIT argument must be >= 0.\r\n",
            ),
            (
                "xadd s2 a",
                "-ERR wrong number of arguments for 'xadd' command\r\n",
            ),
            (
                "xadd s2 *",
                "-ERR wrong number of arguments for 'xadd' command\r\n",
            ),
            (
                "xadd s2 * a",
                "-ERR wrong number of arguments for 'xadd' command\r\n",
            ),
            (
                "xadd s2 * a 1 b",
                "-ERR wrong number of arguments for 'xadd' command\r\n",
            ),
            (
                "xadd s2 foo * a 1",
                "-ERR Invalid stream ID specified as stream command argument\r\n",
            ),
            ("xadd s2 maxlen 2 1-1 a 1", "$3\r\n1-1\r\n"),
            ("xadd s2 maxlen 2 2-1 a 1", "$3\r\n2-1\r\n"),
            ("xadd s2 maxlen 2 3-1 a 1", "$3\r\n3-1\r\n"),
            ("xlen s2", ":2\r\n"),
            (
                "xrange s2 - +",
                "*2\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n",
            ),
            ("xadd s2 minid 3 4-1 a 1", "$3\r\n4-1\r\n"),
            (
                "xrange s2 - +",
                "*2\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n4-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n",
            ),
            ("xadd s2 maxlen ~ 1 5-1 a 1", "$3\r\n5-1\r\n"),
            ("xlen s2", ":3\r\n"),
            ("xadd s2 minid = 5 6 a 1", "$3\r\n6-0\r\n"),
            (
                "xrange s2 - +",
                "*2\r\n*2\r\n$3\r\n5-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n6-0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n",
            ),
            ("xlen s", ":5\r\n"),
            ("xlen nokey", ":0\r\n"),
            (
                "xrange s - +",
                "*5\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n3\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\nc\r\n$1\r\n1\r\n*2\r\n$41\r\n18446744073709551615-18446744073709551615\r\n*2\r\n$1\r\nx\r\n$1\r\n1\r\n",
            ),
            (
                "xrange s - + count 2",
                "*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n",
            ),
            (
                "xrange s (1-1 +",
                "*4\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n3\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\nc\r\n$1\r\n1\r\n*2\r\n$41\r\n18446744073709551615-18446744073709551615\r\n*2\r\n$1\r\nx\r\n$1\r\n1\r\n",
            ),
            (
                "xrange s - (2-1",
                "*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n",
            ),
            (
                "xrange s 2 2",
                "*2\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n3\r\n",
            ),
            ("xrange s - + count 0", "*-1\r\n"),
            ("xrange s - + count -1", "*-1\r\n"),
            (
                "xrange s x +",
                "-ERR Invalid stream ID specified as stream command argument\r\n",
            ),
            (
                "xrange s ( +",
                "-ERR Invalid stream ID specified as stream command argument\r\n",
            ),
            (
                "xrange s (18446744073709551615-18446744073709551615 +",
                "-ERR invalid start ID for the interval\r\n",
            ),
            (
                "xrange s - (0-0",
                "-ERR invalid end ID for the interval\r\n",
            ),
            ("xrange s - + foo", "-ERR syntax error\r\n"),
            ("xrange s - + count", "-ERR syntax error\r\n"),
            ("xrange s 5 1", "*0\r\n"),
            (
                "xrange s 2-1 2-1",
                "*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n3\r\n",
            ),
            (
                "xrevrange s + -",
                "*5\r\n*2\r\n$41\r\n18446744073709551615-18446744073709551615\r\n*2\r\n$1\r\nx\r\n$1\r\n1\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\nc\r\n$1\r\n1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n3\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n",
            ),
            (
                "xrevrange s + - count 1",
                "*1\r\n*2\r\n$41\r\n18446744073709551615-18446744073709551615\r\n*2\r\n$1\r\nx\r\n$1\r\n1\r\n",
            ),
            (
                "xrevrange s (5-0 -",
                "*3\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n3\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n",
            ),
            ("xrevrange s - +", "*0\r\n"),
            ("xrange nokey - +", "*0\r\n"),
            ("set str v", "+OK\r\n"),
            ("xlen str", "WT"),
            ("xrange str - +", "WT"),
            ("xadd str * a 1", "WT"),
            ("xdel str 1-1", "WT"),
            ("xtrim str maxlen 1", "WT"),
            ("type s", "+stream\r\n"),
            ("xdel s 1-1 2-0 99-0", ":2\r\n"),
            (
                "xdel s abc",
                "-ERR Invalid stream ID specified as stream command argument\r\n",
            ),
            ("xdel nokey 1-1", ":0\r\n"),
            ("xlen s", ":3\r\n"),
            (
                "xrange s - +",
                "*3\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n3\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\nc\r\n$1\r\n1\r\n*2\r\n$41\r\n18446744073709551615-18446744073709551615\r\n*2\r\n$1\r\nx\r\n$1\r\n1\r\n",
            ),
            ("xtrim s maxlen 2", ":1\r\n"),
            (
                "xrange s - +",
                "*2\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\nc\r\n$1\r\n1\r\n*2\r\n$41\r\n18446744073709551615-18446744073709551615\r\n*2\r\n$1\r\nx\r\n$1\r\n1\r\n",
            ),
            ("xtrim s minid 5", ":0\r\n"),
            ("xtrim s minid ~ 5", ":0\r\n"),
            (
                "xtrim s maxlen",
                "-ERR wrong number of arguments for 'xtrim' command\r\n",
            ),
            ("xtrim s foo 1", "-ERR syntax error\r\n"),
            ("xtrim nokey maxlen 1", ":0\r\n"),
            (
                "xtrim s maxlen 1 limit 5",
                "-ERR syntax error, LIMIT cannot be used without the special ~ option\r\n",
            ),
            ("xtrim s maxlen 1 extra", "-ERR syntax error\r\n"),
            ("xtrim s maxlen ~ 1 limit 5", ":0\r\n"),
            (
                "xread streams s 0",
                "*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\nc\r\n$1\r\n1\r\n*2\r\n$41\r\n18446744073709551615-18446744073709551615\r\n*2\r\n$1\r\nx\r\n$1\r\n1\r\n",
            ),
            (
                "xread count 1 streams s 0-0",
                "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\nc\r\n$1\r\n1\r\n",
            ),
            ("xread streams s $", "*-1\r\n"),
            (
                "xread streams s nokey 0 0",
                "*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\nc\r\n$1\r\n1\r\n*2\r\n$41\r\n18446744073709551615-18446744073709551615\r\n*2\r\n$1\r\nx\r\n$1\r\n1\r\n",
            ),
            (
                "xread streams s",
                "-ERR wrong number of arguments for 'xread' command\r\n",
            ),
            (
                "xread streams s nokey 0",
                "-ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.\r\n",
            ),
            (
                "xread count x streams s 0",
                "-ERR value is not an integer or out of range\r\n",
            ),
            ("xread block -1 streams s 0", "-ERR timeout is negative\r\n"),
            (
                "xread block x streams s 0",
                "-ERR timeout is not an integer or out of range\r\n",
            ),
            ("xread streams str 0", "WT"),
            ("xread foo streams s 0", "-ERR syntax error\r\n"),
            (
                "xread streams s +",
                "-ERR Invalid stream ID specified as stream command argument\r\n",
            ),
            (
                "xread streams s abc",
                "-ERR Invalid stream ID specified as stream command argument\r\n",
            ),
            (
                "xread count 0 streams s 0",
                "*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\nc\r\n$1\r\n1\r\n*2\r\n$41\r\n18446744073709551615-18446744073709551615\r\n*2\r\n$1\r\nx\r\n$1\r\n1\r\n",
            ),
            (
                "xread count 1 block 0 streams s 0",
                "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\nc\r\n$1\r\n1\r\n",
            ),
            (
                "xread count",
                "-ERR wrong number of arguments for 'xread' command\r\n",
            ),
            ("xlen s3", ":0\r\n"),
            ("exists s3", ":0\r\n"),
            ("xrange s3 - +", "*0\r\n"),
            ("type s3", "+none\r\n"),
            ("xadd s4 1-1 a 1", "$3\r\n1-1\r\n"),
            ("xdel s4 1-1", ":1\r\n"),
            ("xlen s4", ":0\r\n"),
            (
                "xadd s4 1-1 a 1",
                "-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n",
            ),
            (
                "xadd s4 0-* a 1",
                "-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n",
            ),
            ("xadd s5 0-* a 1", "$3\r\n0-1\r\n"),
            ("xadd s5 0-* a 1", "$3\r\n0-2\r\n"),
            ("xadd s6 5-* f v f2 v2", "$3\r\n5-0\r\n"),
            (
                "xrange s6 - +",
                "*1\r\n*2\r\n$3\r\n5-0\r\n*4\r\n$1\r\nf\r\n$1\r\nv\r\n$2\r\nf2\r\n$2\r\nv2\r\n",
            ),
            ("xread block 0 streams s6 $", ""),
        ],
    );
}

/// IDs from `*` grow even when the clock does not, and `ms-*` continues a millisecond.
/// XADD's and XTRIM's options in any order, and their errors in Redis's order (recorded
/// from redis-server 7.0.15, RESP2).
#[rustfmt::skip]
const TRIM_OPTIONS: &[(&str, &[u8])] = &[
    ("FLUSHALL", b"+OK\r\n"),
    ("XADD s 1-1 f v", b"$3\r\n1-1\r\n"),
    ("XADD s 2-1 f v", b"$3\r\n2-1\r\n"),
    ("XADD s 3-1 f v", b"$3\r\n3-1\r\n"),
    ("XADD s 4-1 f v", b"$3\r\n4-1\r\n"),
    ("XADD s 5-1 f v", b"$3\r\n5-1\r\n"),
    ("XTRIM s MAXLEN 3 LIMIT 1", b"-ERR syntax error, LIMIT cannot be used without the special ~ option\r\n"),
    ("XTRIM s MINID 3-1 LIMIT 1", b"-ERR syntax error, LIMIT cannot be used without the special ~ option\r\n"),
    ("XADD s LIMIT 0 * f v", b"-ERR syntax error, LIMIT cannot be used without the special ~ option\r\n"),
    ("XADD s LIMIT 5 * f v", b"-ERR syntax error, LIMIT cannot be used without specifying a trimming strategy\r\n"),
    ("XTRIM s LIMIT 0", b"-ERR syntax error, XTRIM must be called with a trimming strategy\r\n"),
    ("XTRIM s MAXLEN -1", b"-ERR The MAXLEN argument must be >= 0.\r\n"),
    ("XTRIM s MAXLEN ~ 5 LIMIT -1", b"-ERR The LIMIT argument must be >= 0.\r\n"),
    ("XTRIM s MAXLEN ~", b"-ERR value is not an integer or out of range\r\n"),
    ("XTRIM s MAXLEN 5 MINID 3-1", b"-ERR syntax error, MAXLEN and MINID options at the same time are not compatible\r\n"),
    ("XTRIM s MINID 3-1 MAXLEN 5", b"-ERR syntax error, MAXLEN and MINID options at the same time are not compatible\r\n"),
    ("XTRIM s MAXLEN 5 MAXLEN 4", b"-ERR syntax error, MAXLEN and MINID options at the same time are not compatible\r\n"),
    ("XTRIM s MINID abc", b"-ERR Invalid stream ID specified as stream command argument\r\n"),
    ("XTRIM s MINID 3-*", b"-ERR Invalid stream ID specified as stream command argument\r\n"),
    ("XTRIM s MINID -", b"-ERR Invalid stream ID specified as stream command argument\r\n"),
    ("XTRIM s MINID +", b"-ERR Invalid stream ID specified as stream command argument\r\n"),
    ("XTRIM s MINID $", b"-ERR Invalid stream ID specified as stream command argument\r\n"),
    ("XTRIM s MINID 1-2-3", b"-ERR Invalid stream ID specified as stream command argument\r\n"),
    ("XTRIM s MINID 18446744073709551616", b"-ERR Invalid stream ID specified as stream command argument\r\n"),
    ("XADD s MAXLEN 5 FOO * f v", b"-ERR Invalid stream ID specified as stream command argument\r\n"),
    ("XTRIM s MAXLEN 5 FOO", b"-ERR syntax error\r\n"),
    ("XTRIM s MAXLEN", b"-ERR wrong number of arguments for 'xtrim' command\r\n"),
    ("XADD s MAXLEN 5 * f", b"-ERR wrong number of arguments for 'xadd' command\r\n"),
    ("XADD s NOMKSTREAM MAXLEN = 5 6-1 f v", b"$3\r\n6-1\r\n"),
    ("XADD s MAXLEN ~ x 6-* f v", b"-ERR value is not an integer or out of range\r\n"),
    ("XADD s 7-* f v MAXLEN 3", b"$3\r\n7-0\r\n"),
    ("XRANGE s - +", b"*6\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n*2\r\n$3\r\n4-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n*2\r\n$3\r\n5-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n*2\r\n$3\r\n6-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n*2\r\n$3\r\n7-0\r\n*4\r\n$1\r\nf\r\n$1\r\nv\r\n$6\r\nMAXLEN\r\n$1\r\n3\r\n"),
    ("XTRIM s LIMIT 100 MAXLEN ~ 3", b":0\r\n"),
    ("XTRIM s MINID = 3", b":1\r\n"),
    ("XTRIM s MAXLEN = 0", b":5\r\n"),
    ("XADD n NOMKSTREAM * f v", b"$-1\r\n"),
    ("EXISTS n", b":0\r\n"),
    ("XADD s MINID ~ 1 LIMIT 10 9-1 f v", b"$3\r\n9-1\r\n"),
    ("XADD s MAXLEN ~ 0 LIMIT 10 MAXLEN ~ 1 10-1 f v", b"-ERR syntax error, MAXLEN and MINID options at the same time are not compatible\r\n"),
    ("XADD s MAXLEN 0 MINID 1 11-1 f v", b"-ERR syntax error, MAXLEN and MINID options at the same time are not compatible\r\n"),
    ("XADD s LIMIT 2 LIMIT 3 MAXLEN ~ 0 12-1 f v", b"$4\r\n12-1\r\n"),
    ("XLEN s", b":0\r\n"),
];

#[test]
fn trimming_options_parse_as_redis_parses_them() {
    let s = TestServer::start();
    run_bytes_table(&mut s.raw(), TRIM_OPTIONS);
}

#[test]
fn generated_ids_are_monotonic() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut last = (0u64, 0u64);
    for _ in 0..500 {
        let Value::BulkString(id) = ok(&mut c, &["XADD", "s", "*", "f", "v"]) else {
            panic!()
        };
        let id = String::from_utf8(id).unwrap();
        let (ms, seq) = id.split_once('-').unwrap();
        let id = (ms.parse().unwrap(), seq.parse().unwrap());
        assert!(id > last, "{id:?} after {last:?}");
        last = id;
    }
    // An ID far in the future: `*` continues after it rather than going back.
    ok(&mut c, &["XADD", "s", "99999999999999-5", "f", "v"]);
    assert_eq!(
        ok(&mut c, &["XADD", "s", "*", "f", "v"]),
        bulk("99999999999999-6")
    );
    assert_eq!(
        ok(&mut c, &["TYPE", "s"]),
        Value::SimpleString("stream".into())
    );
    assert_eq!(ok(&mut c, &["XLEN", "s"]), int(502));
}

/// `~` trims whole nodes of 100 entries, as Redis's radix tree does; `=` trims exactly.
#[test]
fn approximate_trimming_removes_whole_nodes() {
    let s = TestServer::start();
    let mut c = s.client();
    for i in 1..=250 {
        ok(&mut c, &["XADD", "big", &format!("{i}-0"), "f", "v"]);
    }
    assert_eq!(
        ok(
            &mut c,
            &["XADD", "big", "MAXLEN", "~", "100", "251-0", "f", "v"]
        ),
        bulk("251-0")
    );
    assert_eq!(ok(&mut c, &["XLEN", "big"]), int(151));
    assert_eq!(ok(&mut c, &["XTRIM", "big", "MAXLEN", "~", "10"]), int(100));
    assert_eq!(ok(&mut c, &["XTRIM", "big", "MINID", "~", "200"]), int(0));
    assert_eq!(
        ok(
            &mut c,
            &["XTRIM", "big", "MAXLEN", "~", "10", "LIMIT", "50"]
        ),
        int(0)
    );
    assert_eq!(ok(&mut c, &["XTRIM", "big", "MAXLEN", "=", "10"]), int(41));
    let Value::Array(first) = ok(&mut c, &["XRANGE", "big", "-", "+", "COUNT", "1"]) else {
        panic!()
    };
    assert_eq!(
        first,
        vec![Value::Array(vec![
            bulk("242-0"),
            Value::Array(vec![bulk("f"), bulk("v")])
        ])]
    );
    // RQ's pattern: keep the last ten results.
    for i in 0..30 {
        ok(
            &mut c,
            &[
                "XADD",
                "results",
                "MAXLEN",
                "~",
                "10",
                "*",
                "n",
                &i.to_string(),
            ],
        );
    }
    assert_eq!(ok(&mut c, &["XLEN", "results"]), int(30));
    // The last node goes too when all of it is to go, and LIMIT counts whole nodes
    // (350 entries: nodes of 100, 100, 100 and 50; recorded from redis-server 7.0.15).
    for i in 1..=350 {
        ok(&mut c, &["XADD", "s", &format!("{i}-1"), "f", "v"]);
    }
    let trims: [(&[&str], i64); 4] = [
        (&["LIMIT", "150"], 100),
        (&["LIMIT", "200"], 200),
        (&["LIMIT", "0"], 50),
        (&[], 0),
    ];
    for (limit, removed) in trims {
        let mut args = vec!["XTRIM", "s", "MAXLEN", "~", "0"];
        args.extend_from_slice(limit);
        assert_eq!(ok(&mut c, &args), int(removed), "{args:?}");
    }
    assert_eq!(ok(&mut c, &["XLEN", "s"]), int(0));
}

/// XREAD BLOCK waits for an XADD (woken in the adder's write set, like BLPOP), with `$`
/// meaning the last ID when it blocked; several readers of one stream are all served;
/// timeouts answer a nil array; inside MULTI it does not block.
#[test]
fn xread_block_is_woken_by_xadd() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["XADD", "jobs", "1-1", "old", "x"]);
    let readers: Vec<_> = (0..3)
        .map(|i| {
            let mut r = s.client();
            std::thread::spawn(move || {
                let id = if i == 0 { "$" } else { "1-1" };
                q(
                    &mut r,
                    &[
                        "XREAD", "COUNT", "10", "BLOCK", "0", "STREAMS", "other", "jobs", "0-0", id,
                    ],
                )
                .unwrap()
            })
        })
        .collect();
    common::wait_blocked(&mut c, 3);
    ok(&mut c, &["XADD", "jobs", "2-1", "new", "y"]);
    let want = Value::Array(vec![Value::Array(vec![
        bulk("jobs"),
        Value::Array(vec![Value::Array(vec![
            bulk("2-1"),
            Value::Array(vec![bulk("new"), bulk("y")]),
        ])]),
    ])]);
    for r in readers {
        assert_eq!(r.join().unwrap(), want);
    }
    common::wait_blocked(&mut c, 0);
    assert_eq!(
        ok(&mut c, &["XREAD", "BLOCK", "50", "STREAMS", "jobs", "$"]),
        Value::Nil
    );
    // A reader of an ID past the new entry stays blocked until a later one.
    let mut late = s.client();
    let t = std::thread::spawn(move || {
        q(
            &mut late,
            &["XREAD", "BLOCK", "0", "STREAMS", "jobs", "5-0"],
        )
        .unwrap()
    });
    common::wait_blocked(&mut c, 1);
    ok(&mut c, &["XADD", "jobs", "3-0", "a", "b"]);
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(common::blocked(&mut c), 1);
    ok(&mut c, &["XADD", "jobs", "6-0", "a", "b"]);
    let Value::Array(got) = t.join().unwrap() else {
        panic!()
    };
    assert_eq!(got.len(), 1);
    let mut raw = s.raw();
    run_table(
        &mut raw,
        &[
            ("multi", "+OK\r\n"),
            ("xread block 0 streams jobs $", "+QUEUED\r\n"),
            ("exec", "*1\r\n*-1\r\n"),
        ],
    );
    assert!(
        err(
            &mut c,
            &[
                "EVAL",
                "return redis.call('XREAD', 'BLOCK', 0, 'STREAMS', 'jobs', '$')",
                "0"
            ]
        )
        .starts_with("ERR xread command is not allowed with BLOCK option from scripts")
    );
}

/// RESP3 clients get XREAD as a map of streams.
#[test]
fn xread_is_a_map_in_resp3() {
    let s = TestServer::start();
    let mut raw = s.raw();
    raw.expect(&[b"HELLO", b"3"], b"%");
    raw.read_until(b"modules\r\n*0\r\n");
    run_table(
        &mut raw,
        &[
            ("xadd s 1-1 f v", "$3\r\n1-1\r\n"),
            (
                "xread streams s 0",
                "%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n",
            ),
            ("xread streams s $", "_\r\n"),
        ],
    );
}

/// Entries, the last ID and emptied streams survive a restart.
#[test]
fn streams_survive_a_restart() {
    let mut s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["XADD", "s", "5-5", "f", "v"]);
    ok(&mut c, &["XADD", "e", "7-7", "f", "v"]);
    ok(&mut c, &["XDEL", "e", "7-7"]);
    s.restart();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["XLEN", "s"]), int(1));
    assert_eq!(ok(&mut c, &["XLEN", "e"]), int(0));
    assert_eq!(ok(&mut c, &["EXISTS", "e"]), int(1));
    assert!(err(&mut c, &["XADD", "e", "7-7", "f", "v"]).contains("equal or smaller"));
    assert_eq!(ok(&mut c, &["XADD", "e", "7-*", "f", "v"]), bulk("7-8"));
    assert_eq!(ok(&mut c, &["DEL", "s", "e"]), int(2));
    assert_eq!(ok(&mut c, &["XRANGE", "s", "-", "+"]), Value::Array(vec![]));
}

/// Random XADD / XDEL / XTRIM against an in-memory stream, checked with XRANGE, XREVRANGE,
/// XLEN and XREAD after every step.
#[test]
fn model() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut model: BTreeMap<(u64, u64), String> = BTreeMap::new();
    let mut last = (0u64, 0u64);
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    let id_str = |id: (u64, u64)| format!("{}-{}", id.0, id.1);
    let entries = |m: &mut dyn Iterator<Item = (&(u64, u64), &String)>| -> Value {
        Value::Array(
            m.map(|(id, v)| {
                Value::Array(vec![
                    bulk(&id_str(*id)),
                    Value::Array(vec![bulk("v"), bulk(v)]),
                ])
            })
            .collect(),
        )
    };
    for step in 0..1500 {
        match next(10) {
            0..=4 => {
                let id = (last.0 + next(3), 0);
                let id = if id.0 == last.0 {
                    (last.0, last.1 + 1)
                } else {
                    id
                };
                let v = step.to_string();
                assert_eq!(
                    ok(&mut c, &["XADD", "s", &format!("{}-*", id.0), "v", &v]),
                    bulk(&id_str(id))
                );
                model.insert(id, v);
                last = id;
            }
            5 | 6 => {
                let keys: Vec<_> = model.keys().copied().collect();
                let mut ids = vec![(next(last.0 + 2), next(3))];
                if !keys.is_empty() {
                    ids.push(keys[next(keys.len() as u64) as usize]);
                }
                let removed = ids.iter().filter(|i| model.remove(i).is_some()).count();
                let mut args = vec!["XDEL".to_string(), "s".to_string()];
                args.extend(ids.iter().map(|i| id_str(*i)));
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                assert_eq!(ok(&mut c, &args), int(removed as i64));
            }
            7 => {
                let max = next(40) as usize;
                let n = model.len().saturating_sub(max);
                for _ in 0..n {
                    model.pop_first();
                }
                assert_eq!(
                    ok(&mut c, &["XTRIM", "s", "MAXLEN", &max.to_string()]),
                    int(n as i64)
                );
            }
            8 => {
                let min = (next(last.0 + 2), next(3));
                let before = model.len();
                model.retain(|id, _| *id >= min);
                assert_eq!(
                    ok(&mut c, &["XTRIM", "s", "MINID", &id_str(min)]),
                    int((before - model.len()) as i64)
                );
            }
            _ => {
                let a = (next(last.0 + 2), next(3));
                let b = (next(last.0 + 2), next(3));
                let (lo, hi) = (a.min(b), a.max(b));
                let count = 1 + next(5) as usize;
                assert_eq!(
                    ok(&mut c, &["XRANGE", "s", &id_str(lo), &id_str(hi)]),
                    entries(&mut model.range(lo..=hi))
                );
                assert_eq!(
                    ok(
                        &mut c,
                        &[
                            "XREVRANGE",
                            "s",
                            &id_str(hi),
                            &id_str(lo),
                            "COUNT",
                            &count.to_string()
                        ]
                    ),
                    entries(&mut model.range(lo..=hi).rev().take(count))
                );
                assert_eq!(
                    ok(&mut c, &["XRANGE", "s", &format!("({}", id_str(lo)), "+"]),
                    entries(&mut model.range(lo..).filter(|(id, _)| **id > lo))
                );
                let read = ok(
                    &mut c,
                    &[
                        "XREAD",
                        "COUNT",
                        &count.to_string(),
                        "STREAMS",
                        "s",
                        &id_str(lo),
                    ],
                );
                let want: Vec<_> = model
                    .range(lo..)
                    .filter(|(id, _)| **id > lo)
                    .take(count)
                    .collect();
                if want.is_empty() {
                    assert_eq!(read, Value::Nil);
                } else {
                    assert_eq!(
                        read,
                        Value::Array(vec![Value::Array(vec![
                            bulk("s"),
                            entries(&mut want.into_iter())
                        ])])
                    );
                }
            }
        }
        assert_eq!(
            ok(&mut c, &["XLEN", "s"]),
            int(model.len() as i64),
            "step {step}"
        );
    }
}
