//! OBJECT: ENCODING and REFCOUNT answer as redis-server 7.0.15 does for a value of the same
//! type and size (the table was recorded from it); FREQ and IDLETIME, which need access
//! tracking this server does not keep, answer errors. DEBUG OBJECT and DEBUG SLEEP.

use crate::common;

use common::{TestServer, err, ok, words};
use redis::Value;

/// Recorded from redis-server 7.0.15, in order on one connection (RESP2); the XADD ID is
/// given so the reply is the same.
#[rustfmt::skip]
const TABLE: &[(&str, &[u8])] = &[
    ("SET i 123", b"+OK\r\n"),
    ("SET big 99999", b"+OK\r\n"),
    ("SET neg -5", b"+OK\r\n"),
    ("SET e hello", b"+OK\r\n"),
    ("SET r aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", b"+OK\r\n"),
    ("SET f 1.5", b"+OK\r\n"),
    ("OBJECT ENCODING i", b"$3\r\nint\r\n"),
    ("OBJECT ENCODING big", b"$3\r\nint\r\n"),
    ("OBJECT ENCODING neg", b"$3\r\nint\r\n"),
    ("OBJECT ENCODING e", b"$6\r\nembstr\r\n"),
    ("OBJECT ENCODING r", b"$3\r\nraw\r\n"),
    ("OBJECT ENCODING f", b"$6\r\nembstr\r\n"),
    ("OBJECT REFCOUNT i", b":2147483647\r\n"),
    ("OBJECT REFCOUNT big", b":1\r\n"),
    ("OBJECT REFCOUNT e", b":1\r\n"),
    ("SADD si 1 2 3", b":3\r\n"),
    ("SADD ss a 1", b":2\r\n"),
    ("OBJECT ENCODING si", b"$6\r\nintset\r\n"),
    ("OBJECT ENCODING ss", b"$9\r\nhashtable\r\n"),
    ("HSET h a 1", b":1\r\n"),
    ("HSET hb a aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", b":1\r\n"),
    ("OBJECT ENCODING h", b"$8\r\nlistpack\r\n"),
    ("OBJECT ENCODING hb", b"$9\r\nhashtable\r\n"),
    ("ZADD z 1 a", b":1\r\n"),
    ("ZADD zb 1 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", b":1\r\n"),
    ("OBJECT ENCODING z", b"$8\r\nlistpack\r\n"),
    ("OBJECT ENCODING zb", b"$8\r\nskiplist\r\n"),
    ("RPUSH l a", b":1\r\n"),
    ("OBJECT ENCODING l", b"$9\r\nquicklist\r\n"),
    ("XADD x 1-1 a b", b"$3\r\n1-1\r\n"),
    ("OBJECT ENCODING x", b"$6\r\nstream\r\n"),
    ("SETBIT b 100000 1", b":0\r\n"),
    ("OBJECT ENCODING b", b"$3\r\nraw\r\n"),
    ("OBJECT ENCODING nokey", b"$-1\r\n"),
    ("OBJECT REFCOUNT nokey", b"$-1\r\n"),
    ("OBJECT FOO i", b"-ERR unknown subcommand 'FOO'. Try OBJECT HELP.\r\n"),
    ("OBJECT ENCODING", b"-ERR wrong number of arguments for 'object|encoding' command\r\n"),
];

#[test]
fn encodings_and_refcounts_match_redis() {
    let s = TestServer::start();
    let mut raw = s.raw();
    for (line, want) in TABLE {
        let w = words(line);
        let refs: Vec<&[u8]> = w.iter().map(Vec::as_slice).collect();
        raw.expect(&refs, want);
    }
}

#[test]
fn sizes_past_redis_thresholds_change_the_encoding() {
    let s = TestServer::start();
    let mut c = s.client();
    let ints: Vec<String> = (0..600).map(|i| i.to_string()).collect();
    let mut sadd = vec!["SADD", "s"];
    sadd.extend(ints[..512].iter().map(String::as_str));
    ok(&mut c, &sadd);
    assert_eq!(
        ok(&mut c, &["OBJECT", "ENCODING", "s"]),
        common::bulk("intset")
    );
    ok(&mut c, &["SADD", "s", "512"]);
    assert_eq!(
        ok(&mut c, &["OBJECT", "ENCODING", "s"]),
        common::bulk("hashtable")
    );
    for member in &ints[..128] {
        ok(&mut c, &["ZADD", "z", "1", member]);
    }
    assert_eq!(
        ok(&mut c, &["OBJECT", "ENCODING", "z"]),
        common::bulk("listpack")
    );
    ok(&mut c, &["ZADD", "z", "1", "one more"]);
    assert_eq!(
        ok(&mut c, &["OBJECT", "ENCODING", "z"]),
        common::bulk("skiplist")
    );
    let e = err(&mut c, &["OBJECT", "FREQ", "z"]);
    assert!(
        e.starts_with("ERR An LFU maxmemory policy is not selected"),
        "{e}"
    );
    let e = err(&mut c, &["OBJECT", "IDLETIME", "z"]);
    assert!(e.contains("does not track access times"), "{e}");
}

/// DEBUG OBJECT reports the encoding OBJECT ENCODING names and this server's serialized
/// length; DEBUG SLEEP waits and answers OK; other subcommands are refused.
#[test]
fn debug_object_and_sleep() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["SET", "s", "hello"]);
    ok(&mut c, &["RPUSH", "l", "a", "b", "c"]);
    let Value::SimpleString(line) = ok(&mut c, &["DEBUG", "OBJECT", "s"]) else {
        panic!("DEBUG OBJECT answers a status line")
    };
    assert!(line.contains("encoding:embstr"), "{line}");
    assert!(line.contains("serializedlength:6"), "{line}");
    let Value::SimpleString(line) = ok(&mut c, &["DEBUG", "OBJECT", "l"]) else {
        panic!("DEBUG OBJECT answers a status line")
    };
    assert!(
        line.contains("encoding:quicklist") && line.contains("ql_nodes:1"),
        "{line}"
    );
    assert!(err(&mut c, &["DEBUG", "OBJECT", "nokey"]).contains("no such key"));
    assert_eq!(ok(&mut c, &["DEBUG", "SLEEP", "0"]), Value::Okay);
    assert_eq!(ok(&mut c, &["DEBUG", "SLEEP", "0.01"]), Value::Okay);
    assert!(err(&mut c, &["DEBUG", "SLEEP", "x"]).contains("not a valid float"));
    assert!(err(&mut c, &["DEBUG", "JMAP"]).contains("Try DEBUG HELP"));
}
