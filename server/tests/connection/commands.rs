//! Every command against the replies Redis (and RedisBloom) give, through the `redis` crate.

use crate::common;

use common::*;
use redis::Value;

#[test]
fn connection_commands() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["PING"]), status("PONG"));
    assert_eq!(ok(&mut c, &["PING", "hi"]), bulk("hi"));
    assert_eq!(ok(&mut c, &["ECHO", "x y"]), bulk("x y"));
    assert_eq!(ok(&mut c, &["SELECT", "0"]), Value::Okay);
    assert_eq!(
        err(&mut c, &["SELECT", "16"]),
        "ERR DB index is out of range"
    );
    assert_eq!(
        err(&mut c, &["SELECT", "x"]),
        "ERR value is not an integer or out of range"
    );
    assert_eq!(ok(&mut c, &["CLIENT", "GETNAME"]), Value::Nil);
    assert_eq!(ok(&mut c, &["CLIENT", "SETNAME", "crawler-1"]), Value::Okay);
    assert_eq!(ok(&mut c, &["CLIENT", "GETNAME"]), bulk("crawler-1"));
    assert_eq!(
        err(&mut c, &["CLIENT", "SETNAME", "a b"]),
        "ERR Client names cannot contain spaces, newlines or special characters."
    );
    assert!(matches!(ok(&mut c, &["CLIENT", "ID"]), Value::Int(n) if n > 0));
    assert_eq!(
        ok(&mut c, &["CLIENT", "SETINFO", "LIB-NAME", "redis-rs"]),
        Value::Okay
    );
    assert_eq!(
        err(&mut c, &["CLIENT", "MAINT_NOTIFICATIONS", "on"]),
        "ERR unknown subcommand 'MAINT_NOTIFICATIONS'. Try CLIENT HELP."
    );
    // The connection survives the unknown subcommand.
    assert_eq!(ok(&mut c, &["PING"]), status("PONG"));
    assert_eq!(
        err(&mut c, &["GET"]),
        "ERR wrong number of arguments for 'get' command"
    );
    assert_eq!(
        err(&mut c, &["NOSUCH", "a", "b"]),
        "ERR unknown command 'NOSUCH', with args beginning with: 'a' 'b' "
    );
    assert_eq!(
        err(&mut c, &["FOO"]),
        "ERR unknown command 'FOO', with args beginning with: "
    );
    let n = ok(&mut c, &["COMMAND", "COUNT"]);
    assert!(matches!(n, Value::Int(k) if k >= 50), "{n:?}");
    match ok(&mut c, &["COMMAND", "DOCS", "get"]) {
        Value::Array(v) => assert_eq!(v[0], bulk("get")),
        other => panic!("{other:?}"),
    }
    match ok(&mut c, &["COMMAND", "INFO", "get"]) {
        Value::Array(v) => match &v[0] {
            Value::Array(info) => {
                assert_eq!(info[0], bulk("get"));
                assert_eq!(info[1], int(2));
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    let info = match ok(&mut c, &["INFO"]) {
        Value::BulkString(b) => String::from_utf8(b).unwrap(),
        other => panic!("{other:?}"),
    };
    for field in [
        "# Server",
        "redis_version:",
        "# Clients",
        "connected_clients:1",
        "# Cluster\r\ncluster_enabled:0\r\n",
        "# Keyspace",
        "# Bloomkv",
        "filter_checks:",
        "filter_saved_reads:",
        "data_blocks_read:",
    ] {
        assert!(info.contains(field), "INFO lacks {field}: {info}");
    }
    assert_eq!(ok(&mut c, &["QUIT"]), Value::Okay);
}

#[test]
fn hello_switches_to_resp3_and_back() {
    let s = TestServer::start();
    let mut c = s.client();
    match ok(&mut c, &["HELLO", "3"]) {
        Value::Map(m) => {
            let proto = m
                .iter()
                .find(|(k, _)| *k == bulk("proto"))
                .map(|(_, v)| v.clone());
            assert_eq!(proto, Some(int(3)));
        }
        other => panic!("{other:?}"),
    }
    // RESP3 null and map replies.
    assert_eq!(ok(&mut c, &["GET", "missing"]), Value::Nil);
    assert_eq!(
        err(&mut c, &["HELLO", "4"]),
        "NOPROTO unsupported protocol version"
    );
    let mut r = s.raw();
    r.expect(&[b"HELLO", b"3"], b"%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n");
    let mut r = s.raw();
    r.expect(&[b"GET", b"nothing"], b"$-1\r\n");
    r.cmd(&[b"HELLO", b"3"]);
    let hello = r.read_until(b"$7\r\nmodules\r\n*0\r\n");
    assert!(hello.starts_with(b"%7\r\n"));
    r.expect(&[b"GET", b"nothing"], b"_\r\n");
    // A RESP3 client of the redis crate handshakes and works.
    let mut c3 = s.client3();
    assert_eq!(ok(&mut c3, &["SET", "k", "v"]), Value::Okay);
    assert_eq!(ok(&mut c3, &["GET", "k"]), bulk("v"));
    assert!(matches!(ok(&mut c3, &["SMEMBERS", "none"]), Value::Set(v) if v.is_empty()));
}

#[test]
fn strings() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["GET", "a"]), Value::Nil);
    assert_eq!(ok(&mut c, &["SET", "a", "1"]), Value::Okay);
    assert_eq!(ok(&mut c, &["GET", "a"]), bulk("1"));
    assert_eq!(ok(&mut c, &["SET", "a", "2", "NX"]), Value::Nil);
    assert_eq!(ok(&mut c, &["SET", "b", "2", "XX"]), Value::Nil);
    assert_eq!(ok(&mut c, &["SET", "a", "3", "XX", "GET"]), bulk("1"));
    assert_eq!(ok(&mut c, &["SET", "new", "x", "GET"]), Value::Nil);
    assert_eq!(ok(&mut c, &["GET", "a"]), bulk("3"));
    assert_eq!(
        err(&mut c, &["SET", "a", "1", "NX", "XX"]),
        "ERR syntax error"
    );
    assert_eq!(err(&mut c, &["SET", "a", "1", "BOGUS"]), "ERR syntax error");
    assert_eq!(
        err(&mut c, &["SET", "a", "1", "EX", "10", "PX", "5"]),
        "ERR syntax error"
    );
    assert_eq!(ok(&mut c, &["SETNX", "a", "x"]), int(0));
    assert_eq!(ok(&mut c, &["SETNX", "c", "x"]), int(1));
    assert_eq!(ok(&mut c, &["GETSET", "c", "y"]), bulk("x"));
    assert_eq!(ok(&mut c, &["GETSET", "nope", "y"]), Value::Nil);
    assert_eq!(ok(&mut c, &["MSET", "m1", "a", "m2", "b"]), Value::Okay);
    assert_eq!(
        err(&mut c, &["MSET", "m1", "a", "m2"]),
        "ERR wrong number of arguments for 'mset' command"
    );
    ok(&mut c, &["SADD", "set", "x"]);
    assert_eq!(
        ok(&mut c, &["MGET", "m1", "missing", "m2", "set"]),
        Value::Array(vec![bulk("a"), Value::Nil, bulk("b"), Value::Nil])
    );
    assert_eq!(ok(&mut c, &["INCR", "n"]), int(1));
    assert_eq!(ok(&mut c, &["INCRBY", "n", "41"]), int(42));
    assert_eq!(ok(&mut c, &["DECR", "n"]), int(41));
    assert_eq!(ok(&mut c, &["DECRBY", "n", "50"]), int(-9));
    assert_eq!(
        err(&mut c, &["INCR", "m1"]),
        "ERR value is not an integer or out of range"
    );
    assert_eq!(
        err(&mut c, &["INCRBY", "n", "1.5"]),
        "ERR value is not an integer or out of range"
    );
    ok(&mut c, &["SET", "big", "9223372036854775807"]);
    assert_eq!(
        err(&mut c, &["INCR", "big"]),
        "ERR increment or decrement would overflow"
    );
    assert_eq!(ok(&mut c, &["APPEND", "ap", "Hello"]), int(5));
    assert_eq!(ok(&mut c, &["APPEND", "ap", " World"]), int(11));
    assert_eq!(ok(&mut c, &["GET", "ap"]), bulk("Hello World"));
    assert_eq!(ok(&mut c, &["STRLEN", "ap"]), int(11));
    assert_eq!(ok(&mut c, &["STRLEN", "none"]), int(0));
    let wrongtype = "WRONGTYPE Operation against a key holding the wrong kind of value";
    for cmd in [
        &["GET", "set"][..],
        &["INCR", "set"],
        &["APPEND", "set", "x"],
        &["STRLEN", "set"],
        &["SET", "set", "v", "GET"],
        &["GETSET", "set", "v"],
    ] {
        assert_eq!(err(&mut c, cmd), wrongtype, "{cmd:?}");
    }
    // SET replaces a key of any type, members included.
    assert_eq!(ok(&mut c, &["SET", "set", "plain"]), Value::Okay);
    assert_eq!(ok(&mut c, &["TYPE", "set"]), status("string"));
    assert_eq!(err(&mut c, &["SADD", "set", "y"]), wrongtype);
}

#[test]
fn bitmaps_and_big_strings() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["SETBIT", "bm", "7", "1"]), int(0));
    assert_eq!(ok(&mut c, &["SETBIT", "bm", "7", "1"]), int(1));
    assert_eq!(ok(&mut c, &["GETBIT", "bm", "7"]), int(1));
    assert_eq!(ok(&mut c, &["GETBIT", "bm", "6"]), int(0));
    assert_eq!(ok(&mut c, &["GETBIT", "bm", "100000"]), int(0));
    assert_eq!(ok(&mut c, &["GET", "bm"]), Value::BulkString(vec![1]));
    // Beyond one chunk the bitmap goes chunked; GET assembles it.
    assert_eq!(ok(&mut c, &["SETBIT", "bm", "80000", "1"]), int(0));
    assert_eq!(ok(&mut c, &["STRLEN", "bm"]), int(10001));
    assert_eq!(ok(&mut c, &["BITCOUNT", "bm"]), int(2));
    assert_eq!(ok(&mut c, &["SETBIT", "bm", "1000000", "1"]), int(0));
    assert_eq!(ok(&mut c, &["GETBIT", "bm", "1000000"]), int(1));
    assert_eq!(ok(&mut c, &["BITCOUNT", "bm"]), int(3));
    assert_eq!(ok(&mut c, &["BITCOUNT", "bm", "0", "0"]), int(1));
    assert_eq!(ok(&mut c, &["BITCOUNT", "bm", "0", "7", "BIT"]), int(1));
    assert_eq!(ok(&mut c, &["BITCOUNT", "bm", "-1", "-1"]), int(1));
    assert_eq!(ok(&mut c, &["BITCOUNT", "bm", "-2", "-2"]), int(0));
    match ok(&mut c, &["GET", "bm"]) {
        Value::BulkString(b) => {
            assert_eq!(b.len(), 125_001);
            assert_eq!(b[0], 1);
            assert_eq!(b[10_000], 0x80);
            assert_eq!(b[125_000], 0x80);
            assert_eq!(b.iter().map(|x| x.count_ones()).sum::<u32>(), 3);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(ok(&mut c, &["SETBIT", "bm", "80000", "0"]), int(1));
    assert_eq!(ok(&mut c, &["BITCOUNT", "bm"]), int(2));
    assert_eq!(
        err(&mut c, &["SETBIT", "bm", "4294967296", "1"]),
        "ERR bit offset is not an integer or out of range"
    );
    assert_eq!(
        err(&mut c, &["SETBIT", "bm", "1", "2"]),
        "ERR bit is not an integer or out of range"
    );
    assert_eq!(err(&mut c, &["BITCOUNT", "bm", "0"]), "ERR syntax error");
    assert_eq!(ok(&mut c, &["BITCOUNT", "none"]), int(0));
    // APPEND onto a chunked string, and past a chunk boundary of an inline one.
    assert_eq!(ok(&mut c, &["APPEND", "bm", "xyz"]), int(125_004));
    let long = "a".repeat(5000);
    assert_eq!(ok(&mut c, &["APPEND", "s", &long]), int(5000));
    assert_eq!(ok(&mut c, &["APPEND", "s", "bc"]), int(5002));
    assert_eq!(ok(&mut c, &["GET", "s"]), bulk(&format!("{long}bc")));
    // DEL removes every chunk: a new bitmap under the same name starts empty.
    assert_eq!(ok(&mut c, &["DEL", "bm"]), int(1));
    assert_eq!(ok(&mut c, &["SETBIT", "bm", "1000000", "1"]), int(0));
    assert_eq!(ok(&mut c, &["BITCOUNT", "bm"]), int(1));
    assert_eq!(ok(&mut c, &["TYPE", "bm"]), status("string"));
}

#[test]
fn keyspace() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(0));
    for i in 0..25 {
        ok(&mut c, &["SET", &format!("user:{i}"), "x"]);
    }
    ok(&mut c, &["SADD", "tags", "a", "b"]);
    ok(&mut c, &["BF.ADD", "seen", "u1"]);
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(27));
    assert_eq!(ok(&mut c, &["EXISTS", "user:1", "user:1", "nope"]), int(2));
    assert_eq!(ok(&mut c, &["TYPE", "user:1"]), status("string"));
    assert_eq!(ok(&mut c, &["TYPE", "tags"]), status("set"));
    assert_eq!(ok(&mut c, &["TYPE", "seen"]), status("MBbloom--"));
    assert_eq!(ok(&mut c, &["TYPE", "nope"]), status("none"));
    let mut keys: Vec<String> = redis::cmd("KEYS").arg("user:1*").query(&mut c).unwrap();
    keys.sort();
    let mut want: Vec<String> = ["user:1".to_string()]
        .into_iter()
        .chain((10..20).map(|i| format!("user:{i}")))
        .collect();
    want.sort();
    assert_eq!(keys, want);
    // SCAN visits every key exactly once across cursors.
    let mut cursor = 0u64;
    let mut seen = Vec::new();
    loop {
        let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("COUNT")
            .arg(7)
            .query(&mut c)
            .unwrap();
        seen.extend(batch);
        if next == 0 {
            break;
        }
        cursor = next;
    }
    seen.sort();
    assert_eq!(seen.len(), 27);
    seen.dedup();
    assert_eq!(seen.len(), 27);
    let (_, sets): (u64, Vec<String>) = redis::cmd("SCAN")
        .arg(0)
        .arg("COUNT")
        .arg(100)
        .arg("TYPE")
        .arg("set")
        .query(&mut c)
        .unwrap();
    assert_eq!(sets, vec!["tags".to_string()]);
    let (_, m): (u64, Vec<String>) = redis::cmd("SCAN")
        .arg(0)
        .arg("MATCH")
        .arg("user:2?")
        .arg("COUNT")
        .arg(1000)
        .query(&mut c)
        .unwrap();
    assert_eq!(
        m,
        vec!["user:20", "user:21", "user:22", "user:23", "user:24"]
    );
    assert_eq!(err(&mut c, &["SCAN", "abc"]), "ERR invalid cursor");
    assert_eq!(
        err(&mut c, &["SCAN", "0", "COUNT", "0"]),
        "ERR syntax error"
    );
    assert_eq!(
        ok(&mut c, &["DEL", "user:1", "tags", "seen", "nope"]),
        int(3)
    );
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(24));
    assert_eq!(ok(&mut c, &["FLUSHDB"]), Value::Okay);
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(0));
    assert_eq!(ok(&mut c, &["KEYS", "*"]), Value::Array(vec![]));
    assert_eq!(ok(&mut c, &["SCARD", "tags"]), int(0));
}

#[test]
fn sets() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["SADD", "s", "a", "b", "a"]), int(2));
    assert_eq!(ok(&mut c, &["SADD", "s", "b", "c"]), int(1));
    assert_eq!(ok(&mut c, &["SCARD", "s"]), int(3));
    assert_eq!(ok(&mut c, &["SISMEMBER", "s", "a"]), int(1));
    assert_eq!(ok(&mut c, &["SISMEMBER", "s", "z"]), int(0));
    assert_eq!(ok(&mut c, &["SISMEMBER", "none", "z"]), int(0));
    assert_eq!(
        ok(&mut c, &["SMISMEMBER", "s", "a", "z", "c"]),
        ints(&[1, 0, 1])
    );
    let mut m: Vec<String> = redis::cmd("SMEMBERS").arg("s").query(&mut c).unwrap();
    m.sort();
    assert_eq!(m, ["a", "b", "c"]);
    // A set named as a prefix of another keeps its own members.
    ok(&mut c, &["SADD", "s2", "x"]);
    assert_eq!(ok(&mut c, &["SCARD", "s"]), int(3));
    assert_eq!(ok(&mut c, &["SREM", "s", "a", "z"]), int(1));
    assert_eq!(ok(&mut c, &["SCARD", "s"]), int(2));
    assert_eq!(ok(&mut c, &["SREM", "s", "b", "c"]), int(2));
    assert_eq!(ok(&mut c, &["EXISTS", "s"]), int(0));
    assert_eq!(ok(&mut c, &["SCARD", "s"]), int(0));
    for i in 0..50 {
        ok(&mut c, &["SADD", "big", &format!("m{i:02}")]);
    }
    let mut cursor = 0u64;
    let mut all = Vec::new();
    loop {
        let (next, batch): (u64, Vec<String>) = redis::cmd("SSCAN")
            .arg("big")
            .arg(cursor)
            .arg("COUNT")
            .arg(8)
            .query(&mut c)
            .unwrap();
        all.extend(batch);
        if next == 0 {
            break;
        }
        cursor = next;
    }
    assert_eq!(all.len(), 50);
    let (_, some): (u64, Vec<String>) = redis::cmd("SSCAN")
        .arg("big")
        .arg(0)
        .arg("MATCH")
        .arg("m1*")
        .arg("COUNT")
        .arg(100)
        .query(&mut c)
        .unwrap();
    assert_eq!(some.len(), 10);
    ok(&mut c, &["SET", "str", "v"]);
    let wrongtype = "WRONGTYPE Operation against a key holding the wrong kind of value";
    assert_eq!(err(&mut c, &["SADD", "str", "x"]), wrongtype);
    assert_eq!(err(&mut c, &["SCARD", "str"]), wrongtype);
    assert_eq!(err(&mut c, &["SMEMBERS", "str"]), wrongtype);
    assert_eq!(err(&mut c, &["SISMEMBER", "str", "x"]), wrongtype);
    assert_eq!(
        err(&mut c, &["SADD", "s"]),
        "ERR wrong number of arguments for 'sadd' command"
    );
    // DEL of a set removes the members: a new set of the same name is empty.
    assert_eq!(ok(&mut c, &["DEL", "big"]), int(1));
    assert_eq!(ok(&mut c, &["SADD", "big", "m00"]), int(1));
    assert_eq!(ok(&mut c, &["SCARD", "big"]), int(1));
    assert_eq!(
        ok(&mut c, &["SMEMBERS", "big"]),
        Value::Array(vec![bulk("m00")])
    );
}

#[test]
fn bloom_filters() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["BF.EXISTS", "bf", "x"]), int(0));
    assert_eq!(ok(&mut c, &["BF.CARD", "bf"]), int(0));
    assert_eq!(err(&mut c, &["BF.INFO", "bf"]), "ERR not found");
    assert_eq!(ok(&mut c, &["BF.ADD", "bf", "x"]), int(1));
    assert_eq!(ok(&mut c, &["BF.ADD", "bf", "x"]), int(0));
    assert_eq!(ok(&mut c, &["BF.EXISTS", "bf", "x"]), int(1));
    assert_eq!(
        ok(&mut c, &["BF.MADD", "bf", "y", "x", "z"]),
        ints(&[1, 0, 1])
    );
    assert_eq!(
        ok(&mut c, &["BF.MEXISTS", "bf", "y", "nope", "z"]),
        ints(&[1, 0, 1])
    );
    assert_eq!(ok(&mut c, &["BF.CARD", "bf"]), int(3));
    // Auto-created with RedisBloom's defaults: capacity 100, expansion 2.
    let info = ok(&mut c, &["BF.INFO", "bf"]);
    let Value::Array(f) = info else {
        panic!("{info:?}")
    };
    assert_eq!(f[0], status("Capacity"));
    assert_eq!(f[1], int(100));
    assert_eq!(f[2], status("Size"));
    assert_eq!(f[4], status("Number of filters"));
    assert_eq!(f[5], int(1));
    assert_eq!(f[6], status("Number of items inserted"));
    assert_eq!(f[7], int(3));
    assert_eq!(f[8], status("Expansion rate"));
    assert_eq!(f[9], int(2));
    assert_eq!(ok(&mut c, &["BF.INFO", "bf", "ITEMS"]), ints(&[3]));
    assert_eq!(
        ok(&mut c, &["BF.RESERVE", "r", "0.001", "1000"]),
        Value::Okay
    );
    assert_eq!(
        err(&mut c, &["BF.RESERVE", "r", "0.001", "1000"]),
        "ERR item exists"
    );
    assert_eq!(
        err(&mut c, &["BF.RESERVE", "q", "abc", "1000"]),
        "ERR bad error rate"
    );
    assert_eq!(
        err(&mut c, &["BF.RESERVE", "q", "1.5", "1000"]),
        "ERR (0 < error rate range < 1) "
    );
    assert_eq!(
        err(&mut c, &["BF.RESERVE", "q", "0.01", "0"]),
        "ERR (capacity should be larger than 0)"
    );
    assert_eq!(
        err(
            &mut c,
            &[
                "BF.RESERVE",
                "q",
                "0.01",
                "10",
                "EXPANSION",
                "2",
                "NONSCALING"
            ]
        ),
        "ERR Nonscaling filters cannot expand"
    );
    // Scaling: 10 + 20 + 40 capacity; the third layer appears after 30 items.
    assert_eq!(
        ok(
            &mut c,
            &["BF.RESERVE", "sc", "0.01", "10", "EXPANSION", "2"]
        ),
        Value::Okay
    );
    let mut added = 0;
    for i in 0..35 {
        if ok(&mut c, &["BF.ADD", "sc", &format!("item-{i}")]) == int(1) {
            added += 1;
        }
    }
    assert!(added >= 34, "{added}");
    assert_eq!(ok(&mut c, &["BF.INFO", "sc", "FILTERS"]), ints(&[3]));
    assert_eq!(ok(&mut c, &["BF.INFO", "sc", "CAPACITY"]), ints(&[70]));
    for i in 0..35 {
        assert_eq!(
            ok(&mut c, &["BF.EXISTS", "sc", &format!("item-{i}")]),
            int(1)
        );
    }
    // Non-scaling filters fill up.
    ok(&mut c, &["BF.RESERVE", "ns", "0.01", "2", "NONSCALING"]);
    assert_eq!(ok(&mut c, &["BF.ADD", "ns", "a"]), int(1));
    assert_eq!(ok(&mut c, &["BF.ADD", "ns", "b"]), int(1));
    assert_eq!(
        err(&mut c, &["BF.ADD", "ns", "c"]),
        "ERR non scaling filter is full"
    );
    assert_eq!(
        ok(&mut c, &["BF.INFO", "ns", "EXPANSION"]),
        Value::Array(vec![Value::Nil])
    );
    // BF.INSERT with options, NOCREATE.
    assert_eq!(
        ok(
            &mut c,
            &[
                "BF.INSERT",
                "ins",
                "CAPACITY",
                "500",
                "ERROR",
                "0.001",
                "ITEMS",
                "a",
                "b",
                "a"
            ]
        ),
        ints(&[1, 1, 0])
    );
    assert_eq!(ok(&mut c, &["BF.INFO", "ins", "CAPACITY"]), ints(&[500]));
    assert_eq!(
        err(&mut c, &["BF.INSERT", "nc", "NOCREATE", "ITEMS", "a"]),
        "ERR not found"
    );
    assert_eq!(
        err(&mut c, &["BF.INSERT", "x", "ITEMS"]),
        "ERR wrong number of arguments for 'bf.insert' command"
    );
    ok(&mut c, &["SET", "str", "v"]);
    let wrongtype = "WRONGTYPE Operation against a key holding the wrong kind of value";
    assert_eq!(err(&mut c, &["BF.ADD", "str", "x"]), wrongtype);
    assert_eq!(err(&mut c, &["BF.EXISTS", "str", "x"]), wrongtype);
    assert_eq!(err(&mut c, &["GET", "bf"]), wrongtype);
    // The measured false-positive rate stays near the target.
    ok(&mut c, &["BF.RESERVE", "fpr", "0.01", "2000"]);
    let mut p = redis::pipe();
    for i in 0..2000 {
        p.cmd("BF.ADD").arg("fpr").arg(format!("in-{i}"));
    }
    let _: Vec<i64> = p.query(&mut c).unwrap();
    let mut p = redis::pipe();
    for i in 0..5000 {
        p.cmd("BF.EXISTS").arg("fpr").arg(format!("out-{i}"));
    }
    let hits: Vec<i64> = p.query(&mut c).unwrap();
    let fp = hits.iter().sum::<i64>();
    assert!(fp < 150, "{fp} false positives of 5000 at a 1% target");
    assert_eq!(ok(&mut c, &["DEL", "fpr"]), int(1));
    assert_eq!(ok(&mut c, &["BF.EXISTS", "fpr", "in-1"]), int(0));
}

#[test]
fn transactions() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(err(&mut c, &["EXEC"]), "ERR EXEC without MULTI");
    assert_eq!(err(&mut c, &["DISCARD"]), "ERR DISCARD without MULTI");
    assert_eq!(ok(&mut c, &["MULTI"]), Value::Okay);
    assert_eq!(err(&mut c, &["MULTI"]), "ERR MULTI calls can not be nested");
    assert_eq!(ok(&mut c, &["SET", "a", "1"]), status("QUEUED"));
    assert_eq!(ok(&mut c, &["INCR", "a"]), status("QUEUED"));
    assert_eq!(ok(&mut c, &["SADD", "s", "x"]), status("QUEUED"));
    assert_eq!(ok(&mut c, &["INCR", "s"]), status("QUEUED"));
    assert_eq!(ok(&mut c, &["GET", "a"]), status("QUEUED"));
    // EXEC answers an array; an error inside it does not undo the others. The redis crate
    // turns an error element into an error for the whole reply, so read it raw.
    let mut r = s.raw();
    r.expect(&[b"MULTI"], b"+OK\r\n");
    r.expect(&[b"SET", b"a", b"1"], b"+QUEUED\r\n");
    r.expect(&[b"INCR", b"a"], b"+QUEUED\r\n");
    r.expect(&[b"SADD", b"s", b"x"], b"+QUEUED\r\n");
    r.expect(&[b"INCR", b"s"], b"+QUEUED\r\n");
    r.expect(&[b"GET", b"a"], b"+QUEUED\r\n");
    r.expect(
        &[b"EXEC"],
        b"*5\r\n+OK\r\n:2\r\n:1\r\n-WRONGTYPE Operation against a key holding the wrong kind of value\r\n$1\r\n2\r\n",
    );
    assert_eq!(ok(&mut c, &["DISCARD"]), Value::Okay);
    assert_eq!(ok(&mut c, &["GET", "a"]), bulk("2"));
    assert_eq!(ok(&mut c, &["MULTI"]), Value::Okay);
    ok(&mut c, &["SET", "a", "99"]);
    assert_eq!(ok(&mut c, &["DISCARD"]), Value::Okay);
    assert_eq!(ok(&mut c, &["GET", "a"]), bulk("2"));
    // A queued command with a wrong arity aborts the transaction.
    assert_eq!(ok(&mut c, &["MULTI"]), Value::Okay);
    ok(&mut c, &["SET", "a", "3"]);
    assert_eq!(
        err(&mut c, &["GET"]),
        "ERR wrong number of arguments for 'get' command"
    );
    assert_eq!(
        err(&mut c, &["EXEC"]),
        "EXECABORT Transaction discarded because of previous errors."
    );
    assert_eq!(ok(&mut c, &["GET", "a"]), bulk("2"));
    // The redis crate's atomic pipeline.
    let (x, y): (i64, i64) = redis::pipe()
        .atomic()
        .cmd("INCR")
        .arg("ctr")
        .cmd("INCR")
        .arg("ctr")
        .query(&mut c)
        .unwrap();
    assert_eq!((x, y), (1, 2));
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(3));
}

#[test]
fn read_modify_write_is_atomic_across_clients() {
    let s = TestServer::start();
    let port = s.port;
    let threads: Vec<_> = (0..8)
        .map(|t| {
            std::thread::spawn(move || {
                let mut c = client_at(&format!("redis://127.0.0.1:{port}/"));
                for i in 0..250 {
                    ok(&mut c, &["INCR", "counter"]);
                    ok(&mut c, &["APPEND", "log", "x"]);
                    ok(&mut c, &["SADD", "members", &format!("{t}-{i}")]);
                    ok(&mut c, &["SETBIT", "bits", &(t * 250 + i).to_string(), "1"]);
                    ok(&mut c, &["BF.ADD", "bf", &format!("{t}-{i}")]);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["GET", "counter"]), bulk("2000"));
    assert_eq!(ok(&mut c, &["STRLEN", "log"]), int(2000));
    assert_eq!(ok(&mut c, &["SCARD", "members"]), int(2000));
    assert_eq!(ok(&mut c, &["BITCOUNT", "bits"]), int(2000));
    let card = ok(&mut c, &["BF.CARD", "bf"]);
    // Items a full chain already (falsely) reports present are not counted, as in RedisBloom.
    assert!(
        matches!(card, Value::Int(n) if n > 1940 && n <= 2000),
        "{card:?}"
    );
}

/// COMMAND GETKEYS as Redis finds keys (numkeys, STREAMS, SORT's and GEORADIUS's STORE,
/// container subcommands) and its errors, recorded from redis-server 7.0.15. COMMAND INFO's
/// key triple and `movablekeys` flag match 7.0.15's for every command both servers have
/// (checked by hand; its ACL categories and key specs are not reported).
#[rustfmt::skip]
const GETKEYS: &[(&str, &[u8])] = &[
    ("COMMAND GETKEYS SET a b", b"*1\r\n$1\r\na\r\n"),
    ("COMMAND GETKEYS MSET a 1 b 2", b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    ("COMMAND GETKEYS ZUNIONSTORE d 2 x y WEIGHTS 1 2", b"*3\r\n$1\r\nd\r\n$1\r\nx\r\n$1\r\ny\r\n"),
    ("COMMAND GETKEYS ZUNION 2 x y WITHSCORES", b"*2\r\n$1\r\nx\r\n$1\r\ny\r\n"),
    ("COMMAND GETKEYS ZUNION 3 x y", b"-ERR Invalid arguments specified for command\r\n"),
    ("COMMAND GETKEYS ZUNION x x y", b"-ERR Invalid arguments specified for command\r\n"),
    ("COMMAND GETKEYS EVAL s 2 k1 k2 a1", b"*2\r\n$2\r\nk1\r\n$2\r\nk2\r\n"),
    ("COMMAND GETKEYS EVAL s 0 a1", b"*0\r\n"),
    ("COMMAND GETKEYS EVAL s x a1", b"*0\r\n"),
    ("COMMAND GETKEYS BLMPOP 0 2 l1 l2 LEFT", b"*2\r\n$2\r\nl1\r\n$2\r\nl2\r\n"),
    ("COMMAND GETKEYS LMPOP 2 l1 l2 LEFT", b"*2\r\n$2\r\nl1\r\n$2\r\nl2\r\n"),
    ("COMMAND GETKEYS XREADGROUP GROUP g c COUNT 1 STREAMS s1 s2 > >", b"*2\r\n$2\r\ns1\r\n$2\r\ns2\r\n"),
    ("COMMAND GETKEYS XREAD STREAMS s1 0", b"*1\r\n$2\r\ns1\r\n"),
    ("COMMAND GETKEYS XREAD COUNT 1 s1 0", b"-ERR Invalid arguments specified for command\r\n"),
    ("COMMAND GETKEYS SORT l BY w_* LIMIT 0 1 GET STORE STORE dst", b"*2\r\n$1\r\nl\r\n$3\r\ndst\r\n"),
    ("COMMAND GETKEYS SORT_RO l BY w_*", b"*1\r\n$1\r\nl\r\n"),
    ("COMMAND GETKEYS GEORADIUS g 1 2 3 km STOREDIST d", b"*2\r\n$1\r\ng\r\n$1\r\nd\r\n"),
    ("COMMAND GETKEYS GEORADIUS g 1 2 3 km STORE d STOREDIST e", b"*3\r\n$1\r\ng\r\n$1\r\nd\r\n$1\r\ne\r\n"),
    ("COMMAND GETKEYS GEORADIUSBYMEMBER g m 3 km STORE d", b"*2\r\n$1\r\ng\r\n$1\r\nd\r\n"),
    ("COMMAND GETKEYS GEOSEARCHSTORE d s FROMLONLAT 1 1 BYRADIUS 1 km", b"*2\r\n$1\r\nd\r\n$1\r\ns\r\n"),
    ("COMMAND GETKEYS PING", b"-ERR wrong number of arguments for 'command|getkeys' command\r\n"),
    ("COMMAND GETKEYS NOSUCH a", b"-ERR Invalid command specified\r\n"),
    ("COMMAND GETKEYS GET", b"-ERR wrong number of arguments for 'command|getkeys' command\r\n"),
    ("COMMAND GETKEYS GET a b", b"-ERR Invalid number of arguments specified for command\r\n"),
    ("COMMAND GETKEYS BLPOP a b 0", b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    ("COMMAND GETKEYS ZINTERCARD 2 a b LIMIT 1", b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    ("COMMAND GETKEYS SINTERCARD 1 a", b"*1\r\n$1\r\na\r\n"),
    ("COMMAND GETKEYS RENAME a b", b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    ("COMMAND GETKEYS LMOVE a b LEFT RIGHT", b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    ("COMMAND GETKEYS BITOP AND d a b", b"*3\r\n$1\r\nd\r\n$1\r\na\r\n$1\r\nb\r\n"),
    ("COMMAND GETKEYS PFCOUNT a b", b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    ("COMMAND GETKEYS OBJECT ENCODING k", b"*1\r\n$1\r\nk\r\n"),
    ("COMMAND GETKEYS XINFO STREAM s", b"*1\r\n$1\r\ns\r\n"),
    ("COMMAND GETKEYS XGROUP CREATE s g $", b"*1\r\n$1\r\ns\r\n"),
    ("COMMAND GETKEYS OBJECT HELP", b"-ERR The command has no key arguments\r\n"),
    ("COMMAND GETKEYS", b"-ERR wrong number of arguments for 'command|getkeys' command\r\n"),
];

#[test]
fn command_getkeys_finds_keys_as_redis_does() {
    let s = TestServer::start();
    run_bytes_table(&mut s.raw(), GETKEYS);
}
