//! Cluster mode's state machine (`replica::Applier`) is deterministic: the same log
//! entries leave byte-identical databases and give identical answers however the
//! replication layer groups them into apply calls (one per call, all in one, pairs), with
//! random choices (SPOP, SRANDMEMBER's sampling), new collection versions, expiry times,
//! Bloom filter growth, consumer groups, WATCH/EXEC and the expiry sweep in the mix; and a
//! node that restarts rebuilds the same watch table from its database.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use bloomkv::{Db, WriteBatch};
use bloomkv_server::replica::codec::{Answer, Request, decode_answers};
use bloomkv_server::replica::{Applier, LogCommand};
use bloomkv_server::resp::Reply;
use bytes::Bytes;

fn cmd(args: &[&str]) -> Vec<Bytes> {
    args.iter().map(|a| Bytes::from(a.to_string())).collect()
}

/// The log: (leader time, request), indexes from 1.
fn log() -> Vec<(u64, Request)> {
    let t0 = 1_700_000_000_000u64;
    let mut entries = vec![
        (
            t0,
            Request::Commands(vec![cmd(&["SADD", "s", "a", "b", "c", "d", "e", "f", "g"])]),
        ),
        (
            t0 + 1,
            Request::Commands(vec![
                cmd(&["SPOP", "s", "2"]),
                cmd(&["SRANDMEMBER", "s", "-5"]),
            ]),
        ),
        (
            t0 + 2,
            Request::Commands(vec![
                cmd(&["RPUSH", "l", "1", "2", "3"]),
                cmd(&["LPOP", "l"]),
            ]),
        ),
        (
            t0 + 3,
            Request::Commands(vec![
                cmd(&["SET", "k", "v", "PX", "50"]),
                cmd(&["INCR", "n"]),
            ]),
        ),
        (
            t0 + 4,
            Request::Watch {
                token: 7,
                keys: vec![Bytes::from("n"), Bytes::from("k")],
            },
        ),
        (t0 + 5, Request::Commands(vec![cmd(&["INCR", "n"])])),
        (
            t0 + 6,
            Request::Exec {
                watch: Some(7),
                commands: vec![cmd(&["SET", "x", "1"])],
            },
        ),
        (
            t0 + 7,
            Request::Watch {
                token: 8,
                keys: vec![Bytes::from("untouched")],
            },
        ),
        (
            t0 + 8,
            Request::Exec {
                watch: Some(8),
                commands: vec![
                    cmd(&["SET", "y", "1"]),
                    cmd(&["BLPOP", "none", "0"]),
                    cmd(&["HSET", "h", "f", "v"]),
                ],
            },
        ),
        (
            t0 + 9,
            Request::Commands(vec![
                cmd(&["ZADD", "z", "1", "a", "2", "b"]),
                cmd(&["ZRANDMEMBER", "z", "-3"]),
            ]),
        ),
        (
            t0 + 10,
            Request::Commands(vec![cmd(&["BLPOP", "empty", "1"])]),
        ),
        (
            t0 + 100,
            Request::Expire {
                due: vec![(t0 + 53, Bytes::from("k"))],
            },
        ),
        (
            t0 + 101,
            Request::Watch {
                token: 9,
                keys: vec![Bytes::from("s")],
            },
        ),
        (
            t0 + 102,
            Request::Commands(vec![cmd(&["DEL", "s"]), cmd(&["SADD", "s", "new"])]),
        ),
        (
            t0 + 103,
            Request::Commands(vec![cmd(&["NOSUCH"]), cmd(&["GET"])]),
        ),
    ];
    // A Bloom filter grown past its first layer (capacity 100) by one entry of 300 adds.
    let mut adds = vec![cmd(&["BF.RESERVE", "bf", "0.01", "100"])];
    adds.extend((0..300).map(|i| cmd(&["BF.ADD", "bf", &format!("item{i}")])));
    entries.push((t0 + 104, Request::Commands(adds)));
    // Strings edited by range and by bit fields, some chunked (under new versions).
    entries.push((
        t0 + 105,
        Request::Commands(vec![
            cmd(&["SETRANGE", "r", "9000", "tail"]),
            cmd(&[
                "BITFIELD", "r", "INCRBY", "u8", "#5000", "7", "SET", "i16", "72000", "-3",
            ]),
            cmd(&["BITOP", "NOT", "r2", "r"]),
            cmd(&["SETRANGE", "short", "3", "abc"]),
        ]),
    ));
    // HyperLogLog sketches, one made dense, merged, and PFCOUNT's cached estimate.
    let mut hll = vec![cmd(&["PFADD", "hl", "a", "b", "c"])];
    hll.extend((0..8).map(|i| {
        let items: Vec<String> = (0..300).map(|j| format!("x{i}-{j}")).collect();
        let mut c = cmd(&["PFADD", "hd"]);
        c.extend(items.into_iter().map(Bytes::from));
        c
    }));
    hll.push(cmd(&["PFMERGE", "hm", "hl", "hd"]));
    hll.push(cmd(&["PFCOUNT", "hm"]));
    entries.push((t0 + 106, Request::Commands(hll)));
    // A stream's consumer group: deliveries, claims and acknowledgements at the entries'
    // times, and a blocked XREADGROUP's consumer kept.
    entries.push((
        t0 + 107,
        Request::Commands(vec![
            cmd(&["XADD", "x", "*", "f", "1"]),
            cmd(&["XADD", "x", "*", "f", "2"]),
            cmd(&["XGROUP", "CREATE", "x", "g", "0"]),
            cmd(&[
                "XREADGROUP",
                "GROUP",
                "g",
                "a",
                "COUNT",
                "1",
                "STREAMS",
                "x",
                ">",
            ]),
            cmd(&["XREADGROUP", "GROUP", "g", "b", "STREAMS", "x", ">"]),
        ]),
    ));
    entries.push((
        t0 + 140,
        Request::Commands(vec![
            cmd(&["XCLAIM", "x", "g", "c", "10", "1700000000107-0"]),
            cmd(&["XAUTOCLAIM", "x", "g", "d", "0", "0", "COUNT", "1"]),
            cmd(&["XACK", "x", "g", "1700000000107-1"]),
            cmd(&[
                "XREADGROUP",
                "GROUP",
                "g",
                "e",
                "BLOCK",
                "0",
                "STREAMS",
                "x",
                ">",
            ]),
        ]),
    ));
    // A cuckoo filter of one-slot buckets made to kick and to grow, with deletes between.
    let mut cf = vec![cmd(&[
        "CF.RESERVE",
        "cf",
        "8",
        "BUCKETSIZE",
        "1",
        "EXPANSION",
        "2",
    ])];
    cf.extend((0..120).map(|i| cmd(&["CF.ADD", "cf", &format!("item{}", i % 90)])));
    cf.extend((0..30).map(|i| cmd(&["CF.DEL", "cf", &format!("item{i}")])));
    entries.push((t0 + 141, Request::Commands(cf)));
    entries
}

struct Node {
    _dir: tempfile::TempDir,
    db: Db,
    applier: std::sync::Arc<Applier>,
}

fn node() -> Node {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), bloomkv::Options::default()).unwrap();
    let applier = Applier::new(1);
    applier.reset(&db).unwrap();
    Node {
        _dir: dir,
        db,
        applier,
    }
}

/// Applies the log in calls of `group` entries; the answers of every entry.
fn run(n: &Node, entries: &[(u64, Request)], group: usize) -> Vec<Vec<Answer>> {
    let encoded: Vec<(u64, u64, Vec<u8>)> = entries
        .iter()
        .enumerate()
        .map(|(i, (t, r))| (i as u64 + 1, *t, r.encode()))
        .collect();
    let mut answers = Vec::new();
    for chunk in encoded.chunks(group) {
        let cmds: Vec<LogCommand<'_>> = chunk
            .iter()
            .map(|(index, t, bytes)| LogCommand {
                index: *index,
                time_ms: *t,
                seed: *index * 0x9E37_79B9,
                request: bytes,
            })
            .collect();
        let mut batch = WriteBatch::new();
        let out = n.applier.apply(&cmds, &mut batch).unwrap();
        n.db.write(batch).unwrap();
        answers.extend(out.iter().map(|b| decode_answers(b).unwrap()));
    }
    answers
}

fn contents(db: &Db) -> Vec<(Vec<u8>, Vec<u8>)> {
    db.scan(..).map(|kv| kv.unwrap()).collect()
}

/// Entries present in one list and not the other.
fn differing(a: &[(Vec<u8>, Vec<u8>)], b: &[(Vec<u8>, Vec<u8>)]) -> usize {
    let a: std::collections::BTreeSet<_> = a.iter().collect();
    let b: std::collections::BTreeSet<_> = b.iter().collect();
    a.symmetric_difference(&b).count()
}

#[test]
fn the_same_log_leaves_the_same_state_however_it_is_grouped() {
    let entries = log();
    let one = node();
    let all = node();
    let pairs = node();
    let a = run(&one, &entries, 1);
    let b = run(&all, &entries, entries.len());
    let c = run(&pairs, &entries, 2);
    assert_eq!(a, b);
    assert_eq!(a, c);
    let (x, y, z) = (contents(&one.db), contents(&all.db), contents(&pairs.db));
    assert!(
        differing(&x, &y) == 0,
        "one entry per call vs all in one call: {} engine keys differ",
        differing(&x, &y)
    );
    assert!(
        differing(&x, &z) == 0,
        "one entry per call vs pairs: {} engine keys differ",
        differing(&x, &z)
    );

    // What the entries answered.
    let reply = |e: usize, i: usize| match &a[e][i] {
        Answer::Reply(r) => r.clone(),
        other => panic!("{other:?}"),
    };
    assert!(
        matches!(reply(1, 0), Reply::Array(v) | Reply::Set(v) if v.len() == 2),
        "SPOP 2: {:?}",
        reply(1, 0)
    );
    assert_eq!(reply(4, 0), Reply::Ok, "WATCH");
    assert_eq!(
        reply(6, 0),
        Reply::NilArray,
        "n was written after WATCH: EXEC fails"
    );
    assert_eq!(
        reply(8, 0),
        Reply::Array(vec![Reply::Ok, Reply::NilArray, Reply::Int(1)]),
        "an untouched WATCH: EXEC runs; BLPOP inside EXEC does not block"
    );
    assert!(
        matches!(&a[10][0], Answer::Block { keys, .. } if keys[0] == "empty"),
        "{:?}",
        a[10]
    );
    assert_eq!(reply(11, 0), Reply::Int(1), "the expiry sweep removes k");
    assert!(reply(14, 0).is_error() && reply(14, 1).is_error());
    assert_eq!(reply(15, 0), Reply::Ok, "BF.RESERVE");
    assert!(
        a[15][1..]
            .iter()
            .all(|x| matches!(x, Answer::Reply(Reply::Int(0 | 1))))
    );
    let cf = a.last().unwrap();
    assert_eq!(cf[0], Answer::Reply(Reply::Ok), "CF.RESERVE");
    assert!(
        cf[1..121]
            .iter()
            .all(|x| *x == Answer::Reply(Reply::Int(1))),
        "every CF.ADD fits (the filter grows)"
    );
    assert!(
        cf[121..].iter().all(|x| *x == Answer::Reply(Reply::Int(1))),
        "every CF.DEL finds its item"
    );

    // A restart (a new applier over the same database) rebuilds the watch table: token 9
    // (its key was rewritten) fails its EXEC on every node alike.
    let restarted = Applier::new(1);
    restarted.reset(&one.db).unwrap();
    let exec = Request::Exec {
        watch: Some(9),
        commands: vec![cmd(&["SET", "z9", "1"])],
    }
    .encode();
    let next = entries.len() as u64 + 1;
    let c = [LogCommand {
        index: next,
        time_ms: 1_700_000_001_000,
        seed: 1,
        request: &exec,
    }];
    let mut b1 = WriteBatch::new();
    let r1 = restarted.apply(&c, &mut b1).unwrap();
    let mut b2 = WriteBatch::new();
    let r2 = all.applier.apply(&c, &mut b2).unwrap();
    assert_eq!(r1, r2);
    assert_eq!(
        decode_answers(&r1[0]).unwrap(),
        vec![Answer::Reply(Reply::NilArray)]
    );
}

/// Requests the leader proposed together share their entry's log index: each collection
/// they create still gets a version of its own. A set deleted and made again by later
/// requests of the same entry must not show the old set's members, which are dropped
/// lazily, under the version they were written with.
#[test]
fn requests_of_one_entry_make_collections_of_their_own() {
    let t = 1_700_000_000_000u64;
    let requests = || {
        vec![
            Request::Commands(vec![cmd(&["SADD", "s", "a"])]),
            Request::Commands(vec![cmd(&["DEL", "s"])]),
            Request::Commands(vec![cmd(&["SADD", "s", "b"])]),
            Request::Commands(vec![cmd(&["HSET", "h", "f", "v"])]),
            Request::Commands(vec![cmd(&["DEL", "h"])]),
            Request::Commands(vec![cmd(&["HSET", "h", "g", "w"])]),
            Request::Commands(vec![cmd(&["SMEMBERS", "s"]), cmd(&["HGETALL", "h"])]),
        ]
    };
    let n = node();
    let encoded: Vec<Vec<u8>> = requests().iter().map(Request::encode).collect();
    let cmds: Vec<LogCommand<'_>> = encoded
        .iter()
        .enumerate()
        .map(|(i, bytes)| LogCommand {
            index: 5,
            time_ms: t,
            seed: 0x5EED + i as u64,
            request: bytes,
        })
        .collect();
    let mut batch = WriteBatch::new();
    let out = n.applier.apply(&cmds, &mut batch).unwrap();
    n.db.write(batch).unwrap();
    let last = decode_answers(out.last().unwrap()).unwrap();
    assert!(
        matches!(&last[0], Answer::Reply(Reply::Array(v) | Reply::Set(v)) if *v == [Reply::bulk("b")]),
        "SMEMBERS s: {:?}",
        last[0]
    );
    assert_eq!(
        last[1],
        Answer::Reply(Reply::Map(vec![(Reply::bulk("g"), Reply::bulk("w"))])),
        "HGETALL h"
    );

    // The same requests as entries of their own answer the same.
    let alone = node();
    let single: Vec<(u64, Request)> = requests().into_iter().map(|r| (t, r)).collect();
    let answers = run(&alone, &single, 1);
    assert_eq!(answers.last().unwrap(), &last);
}

/// Functions through the log: FUNCTION LOAD, FCALL (drawing random numbers and reading the
/// time), FCALL inside EXEC, a load that fails, REPLACE and DELETE leave every node with the
/// same libraries, data and answers, however the entries are grouped.
#[test]
fn functions_apply_alike_on_every_node() {
    let t0 = 1_700_000_000_000u64;
    let lib = "#!lua name=dice\n\
        redis.register_function('roll', function(keys, args) \
          local v = math.random(1000000) .. ':' .. redis.call('TIME')[1] \
          redis.call('RPUSH', keys[1], v) return v end)\n\
        redis.register_function{function_name='peek', callback=function(keys) \
          return redis.call('LRANGE', keys[1], 0, -1) end, flags={'no-writes'}}";
    let entries = vec![
        (t0, Request::Commands(vec![cmd(&["FUNCTION", "LOAD", lib])])),
        (
            t0 + 1,
            Request::Commands(vec![
                cmd(&["FCALL", "roll", "1", "rolls"]),
                cmd(&["FCALL", "ROLL", "1", "rolls"]),
            ]),
        ),
        (
            t0 + 2,
            Request::Exec {
                watch: None,
                commands: vec![
                    cmd(&["FCALL", "roll", "1", "rolls"]),
                    cmd(&["FCALL", "peek", "1", "rolls"]),
                ],
            },
        ),
        (
            t0 + 3,
            Request::Commands(vec![cmd(&[
                "FUNCTION",
                "LOAD",
                "#!lua name=spin\nredis.register_function('s', function() end)\nwhile true do end",
            ])]),
        ),
        (
            t0 + 4,
            Request::Commands(vec![
                cmd(&[
                    "FUNCTION",
                    "LOAD",
                    "REPLACE",
                    "#!lua name=dice\nredis.register_function('roll', function(keys) return redis.call('LLEN', keys[1]) end)",
                ]),
                cmd(&["FCALL", "roll", "1", "rolls"]),
                cmd(&["FCALL", "peek", "1", "rolls"]),
            ]),
        ),
        (
            t0 + 5,
            Request::Commands(vec![
                cmd(&[
                    "FUNCTION",
                    "LOAD",
                    "#!lua name=gone\nredis.register_function('g', function() return 1 end)",
                ]),
                cmd(&["FUNCTION", "DELETE", "gone"]),
            ]),
        ),
    ];
    let (one, all, pairs) = (node(), node(), node());
    let a = run(&one, &entries, 1);
    assert_eq!(a, run(&all, &entries, entries.len()));
    assert_eq!(a, run(&pairs, &entries, 2));
    let x = contents(&one.db);
    assert_eq!(differing(&x, &contents(&all.db)), 0);
    assert_eq!(differing(&x, &contents(&pairs.db)), 0);
    let reply = |e: usize, i: usize| match &a[e][i] {
        Answer::Reply(r) => r.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(reply(0, 0), Reply::bulk("dice"));
    let (Reply::Bulk(r1), Reply::Bulk(r2)) = (reply(1, 0), reply(1, 1)) else {
        panic!("{:?}", a[1])
    };
    assert!(r1.ends_with(b":1700000000") && r2.ends_with(b":1700000000"));
    assert_ne!(r1, r2, "two calls draw different numbers");
    let Reply::Array(exec) = reply(2, 0) else {
        panic!("{:?}", a[2])
    };
    assert!(
        matches!(&exec[1], Reply::Array(v) if v.len() == 3),
        "{exec:?}"
    );
    assert_eq!(
        reply(3, 0),
        Reply::err("Error registering functions: ERR FUNCTION LOAD timeout")
    );
    assert_eq!(reply(4, 1), Reply::Int(3), "the replaced library's roll");
    assert_eq!(reply(4, 2), Reply::err("Function not found"));
    assert_eq!(reply(5, 1), Reply::Ok);
    // What is left: the replaced library and its one function.
    let libs: Vec<&[u8]> = x
        .iter()
        .filter_map(|(k, _)| k.strip_prefix(b"\x00flib/".as_slice()))
        .collect();
    assert_eq!(libs, [b"dice".as_slice()]);
}
