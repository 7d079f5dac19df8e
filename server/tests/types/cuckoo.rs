//! CF.*: RedisBloom's cuckoo filter commands. Replies and errors as RedisBloom gives them; a
//! model test against a multiset (never a false negative, deletes remove one copy); filters
//! that kick, grow and fill; dumps in pieces that load back to the same filter; persistence.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use std::collections::HashMap;

use crate::common::{TestServer, err, int, ints, ok, q, status};
use redis::Value;

fn info(c: &mut redis::Connection, key: &str) -> HashMap<String, i64> {
    let v = ok(c, &["CF.INFO", key]);
    let Value::Array(items) = v else {
        panic!("CF.INFO: {v:?}")
    };
    items
        .chunks_exact(2)
        .map(|kv| match (&kv[0], &kv[1]) {
            (Value::SimpleString(k), Value::Int(v)) => (k.clone(), *v),
            other => panic!("CF.INFO field {other:?}"),
        })
        .collect()
}

#[test]
fn commands_answer_as_redisbloom() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["CF.RESERVE", "cf", "1000"]), Value::Okay);
    assert_eq!(ok(&mut c, &["TYPE", "cf"]), status("MBbloomCF"));
    assert_eq!(ok(&mut c, &["CF.ADD", "cf", "filter"]), int(1));
    assert_eq!(ok(&mut c, &["CF.ADDNX", "cf", "filter"]), int(0));
    assert_eq!(ok(&mut c, &["CF.ADDNX", "cf", "newItem"]), int(1));
    assert_eq!(ok(&mut c, &["CF.EXISTS", "cf", "filter"]), int(1));
    assert_eq!(ok(&mut c, &["CF.EXISTS", "cf", "notexist"]), int(0));
    assert_eq!(
        ok(&mut c, &["CF.MEXISTS", "cf", "filter", "notexist"]),
        ints(&[1, 0])
    );
    assert_eq!(
        ok(
            &mut c,
            &["CF.INSERT", "cf", "ITEMS", "filter", "filter", "x"]
        ),
        ints(&[1, 1, 1])
    );
    assert_eq!(ok(&mut c, &["CF.COUNT", "cf", "filter"]), int(3));
    assert_eq!(ok(&mut c, &["CF.DEL", "cf", "filter"]), int(1));
    assert_eq!(ok(&mut c, &["CF.COUNT", "cf", "filter"]), int(2));
    assert_eq!(ok(&mut c, &["CF.DEL", "cf", "never"]), int(0));
    let i = info(&mut c, "cf");
    assert_eq!(i["Number of buckets"], 512);
    assert_eq!(i["Number of filters"], 1);
    assert_eq!(
        i["Number of items inserted"], 4,
        "items held: 5 added, 1 deleted"
    );
    assert_eq!(i["Number of items deleted"], 1);
    assert_eq!(i["Bucket size"], 2);
    assert_eq!(i["Expansion rate"], 1);
    assert_eq!(i["Max iterations"], 20);
    assert!(i["Size"] >= 1024, "{i:?}");
    assert_eq!(i.len(), 8);

    // CF.INSERTNX: 1 added, 0 present; NOCREATE and CAPACITY; a missing key.
    assert_eq!(
        ok(
            &mut c,
            &[
                "CF.INSERTNX",
                "cap",
                "CAPACITY",
                "1000",
                "ITEMS",
                "foo",
                "bar",
                "foo"
            ]
        ),
        ints(&[1, 1, 0])
    );
    assert_eq!(
        ok(&mut c, &["CF.INSERTNX", "cap", "NOCREATE", "ITEMS", "baz"]),
        ints(&[1])
    );
    assert_eq!(info(&mut c, "cap")["Number of buckets"], 512);
    assert_eq!(ok(&mut c, &["CF.COUNT", "none", "x"]), int(0));
    assert_eq!(ok(&mut c, &["CF.EXISTS", "none", "x"]), int(0));
    assert_eq!(ok(&mut c, &["CF.MEXISTS", "none", "x", "y"]), ints(&[0, 0]));
    // CF.ADD creates a filter of RedisBloom's default capacity (1024: 512 buckets of 2).
    assert_eq!(ok(&mut c, &["CF.ADD", "auto", "item"]), int(1));
    assert_eq!(info(&mut c, "auto")["Number of buckets"], 512);
}

#[test]
fn errors_are_redisbloom_s() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["CF.RESERVE", "cf", "100"]);
    assert_eq!(err(&mut c, &["CF.RESERVE", "cf", "200"]), "ERR item exists");
    assert_eq!(err(&mut c, &["CF.RESERVE", "x", "abc"]), "ERR Bad capacity");
    assert_eq!(
        err(&mut c, &["CF.RESERVE", "x", "3"]),
        "ERR Capacity must be at least (BucketSize * 2)"
    );
    assert_eq!(
        err(&mut c, &["CF.RESERVE", "x", "100", "BUCKETSIZE", "60"]),
        "ERR Capacity must be at least (BucketSize * 2)"
    );
    assert_eq!(
        err(&mut c, &["CF.RESERVE", "x", "100", "BUCKETSIZE", "0"]),
        "ERR BUCKETSIZE: value must be an integer between 1 and 255, inclusive."
    );
    assert_eq!(
        err(&mut c, &["CF.RESERVE", "x", "100", "MAXITERATIONS", "x"]),
        "ERR Couldn't parse MAXITERATIONS"
    );
    assert_eq!(
        err(&mut c, &["CF.RESERVE", "x", "100", "EXPANSION", "40000"]),
        "ERR EXPANSION: value must be an integer between 0 and 32768, inclusive."
    );
    assert!(err(&mut c, &["CF.RESERVE", "x", "100", "EXPANSION"]).contains("wrong number"));
    assert_eq!(
        err(&mut c, &["CF.RESERVE", "x", "100", "COLOUR", "red"]),
        "ERR syntax error"
    );
    assert_eq!(err(&mut c, &["CF.DEL", "nokey", "item"]), "ERR Not found");
    assert_eq!(err(&mut c, &["CF.INFO", "nokey"]), "ERR not found");
    assert_eq!(
        err(&mut c, &["CF.INSERT", "nokey", "NOCREATE", "ITEMS", "foo"]),
        "ERR not found"
    );
    assert_eq!(
        err(
            &mut c,
            &["CF.INSERTNX", "nokey", "NOCREATE", "ITEMS", "foo"]
        ),
        "ERR not found"
    );
    assert!(err(&mut c, &["CF.INSERT", "cf", "foo"]).starts_with("ERR"));
    assert!(err(&mut c, &["CF.INSERT", "cf", "NOCREATE", "ITEMS"]).contains("wrong number"));
    assert_eq!(
        err(&mut c, &["CF.INSERT", "cf", "CAPACITY", "x", "ITEMS", "a"]),
        "ERR Bad capacity"
    );
    assert_eq!(
        err(&mut c, &["CF.INSERT", "cf", "FOO", "ITEMS", "a"]),
        "ERR Unknown argument received"
    );
    // Other types: WRONGTYPE, except CF.DEL (RedisBloom's "Not found"); no filter is made.
    ok(&mut c, &["SET", "str", "v"]);
    assert!(err(&mut c, &["CF.ADD", "str", "a"]).starts_with("WRONGTYPE"));
    assert!(err(&mut c, &["CF.EXISTS", "str", "a"]).starts_with("WRONGTYPE"));
    assert!(err(&mut c, &["CF.RESERVE", "str", "100"]).starts_with("WRONGTYPE"));
    assert_eq!(err(&mut c, &["CF.DEL", "str", "a"]), "ERR Not found");
    ok(&mut c, &["BF.ADD", "bf", "a"]);
    assert!(err(&mut c, &["CF.COUNT", "bf", "a"]).starts_with("WRONGTYPE"));
    assert!(err(&mut c, &["BF.ADD", "cf", "a"]).starts_with("WRONGTYPE"));
    assert_eq!(
        ok(&mut c, &["GET", "str"]),
        Value::BulkString(b"v".to_vec())
    );
}

#[test]
fn a_full_filter_refuses_and_keeps_what_it_holds() {
    let s = TestServer::start();
    let mut c = s.client();
    // 4 buckets of 1 slot, never growing: it holds at most 4 items.
    ok(
        &mut c,
        &[
            "CF.RESERVE",
            "small",
            "4",
            "BUCKETSIZE",
            "1",
            "EXPANSION",
            "0",
        ],
    );
    let mut held = Vec::new();
    let mut full = 0;
    for i in 0..40 {
        let item = format!("item{i}");
        match q(&mut c, &["CF.ADD", "small", &item]) {
            Ok(v) => {
                assert_eq!(v, int(1));
                held.push(item);
            }
            Err(e) => {
                assert_eq!(e.detail(), Some("Filter is full"), "{e}");
                full += 1;
            }
        }
    }
    assert!(held.len() <= 4 && full >= 36, "{} held", held.len());
    for item in &held {
        assert_eq!(ok(&mut c, &["CF.EXISTS", "small", item]), int(1), "{item}");
    }
    assert_eq!(
        ok(&mut c, &["CF.INSERT", "small", "ITEMS", "more1", "more2"]),
        ints(&[-1, -1])
    );
    assert_eq!(
        info(&mut c, "small")["Number of items inserted"],
        held.len() as i64
    );
}

#[test]
fn a_growing_filter_loses_nothing_and_stops_at_32_sub_filters() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(
        &mut c,
        &[
            "CF.RESERVE",
            "grow",
            "64",
            "BUCKETSIZE",
            "2",
            "EXPANSION",
            "2",
        ],
    );
    let items: Vec<String> = (0..3000).map(|i| format!("u{i}")).collect();
    for batch in items.chunks(500) {
        let mut cmd = redis::cmd("CF.INSERT");
        cmd.arg("grow").arg("ITEMS").arg(batch);
        let r: Vec<i64> = cmd.query(&mut c).unwrap();
        assert!(r.iter().all(|&x| x == 1));
    }
    let i = info(&mut c, "grow");
    assert!(i["Number of filters"] > 1, "{i:?}");
    assert_eq!(i["Number of items inserted"], 3000);
    let mut cmd = redis::cmd("CF.MEXISTS");
    cmd.arg("grow").arg(&items);
    let r: Vec<i64> = cmd.query(&mut c).unwrap();
    assert!(r.iter().all(|&x| x == 1), "a false negative after growth");

    // Expansion 1 with one-slot buckets: each growth adds a sub-filter of the same size,
    // until RedisBloom's limit of 32.
    ok(
        &mut c,
        &[
            "CF.RESERVE",
            "cap",
            "2",
            "BUCKETSIZE",
            "1",
            "EXPANSION",
            "1",
        ],
    );
    let mut last = Ok(Value::Nil);
    for i in 0..2000 {
        last = q(&mut c, &["CF.ADD", "cap", &format!("i{i}")]);
        if last.is_err() {
            break;
        }
    }
    let e = last.unwrap_err();
    assert_eq!(e.detail(), Some("Maximum expansions reached"), "{e}");
    assert_eq!(info(&mut c, "cap")["Number of filters"], 32);
}

#[test]
fn compact_folds_newer_sub_filters_into_older_ones() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(
        &mut c,
        &[
            "CF.RESERVE",
            "cf",
            "64",
            "BUCKETSIZE",
            "2",
            "EXPANSION",
            "2",
        ],
    );
    let items: Vec<String> = (0..600).map(|i| format!("u{i}")).collect();
    let mut cmd = redis::cmd("CF.INSERT");
    cmd.arg("cf").arg("ITEMS").arg(&items);
    let _: Vec<i64> = cmd.query(&mut c).unwrap();
    let grown = info(&mut c, "cf")["Number of filters"];
    assert!(grown >= 3, "{grown}");
    for item in &items[20..] {
        assert_eq!(ok(&mut c, &["CF.DEL", "cf", item]), int(1));
    }
    assert_eq!(ok(&mut c, &["CF.COMPACT", "cf"]), Value::Okay);
    let i = info(&mut c, "cf");
    assert!(i["Number of filters"] < grown, "{i:?}");
    assert_eq!(i["Number of items inserted"], 20);
    for item in &items[..20] {
        assert_eq!(
            ok(&mut c, &["CF.EXISTS", "cf", item]),
            int(1),
            "{item} lost"
        );
    }
    // The filter grows again from there and loses nothing.
    let mut cmd = redis::cmd("CF.INSERT");
    cmd.arg("cf").arg("ITEMS").arg(&items[20..]);
    let _: Vec<i64> = cmd.query(&mut c).unwrap();
    let mut cmd = redis::cmd("CF.MEXISTS");
    cmd.arg("cf").arg(&items);
    let r: Vec<i64> = cmd.query(&mut c).unwrap();
    assert!(
        r.iter().all(|&x| x == 1),
        "a false negative after compaction"
    );
    assert_eq!(info(&mut c, "cf")["Number of items inserted"], 600);
    assert_eq!(
        err(&mut c, &["CF.COMPACT", "none"]),
        "ERR Cuckoo filter was not found"
    );
}

/// A small deterministic generator, so a failure repeats.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

#[test]
fn matches_a_multiset_model() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(
        &mut c,
        &[
            "CF.RESERVE",
            "m",
            "16",
            "BUCKETSIZE",
            "3",
            "EXPANSION",
            "2",
            "MAXITERATIONS",
            "5",
        ],
    );
    let mut model: HashMap<u64, i64> = HashMap::new();
    let mut rng = Lcg(7);
    for step in 0..1500 {
        let key = rng.next(80);
        let item = format!("k{key}");
        match rng.next(4) {
            0 | 1 => {
                assert_eq!(ok(&mut c, &["CF.ADD", "m", &item]), int(1), "step {step}");
                *model.entry(key).or_default() += 1;
            }
            2 => {
                let held = model.get(&key).copied().unwrap_or(0);
                if held > 0 {
                    assert_eq!(ok(&mut c, &["CF.DEL", "m", &item]), int(1), "step {step}");
                    model.insert(key, held - 1);
                }
            }
            _ => {
                let held = model.get(&key).copied().unwrap_or(0);
                let Value::Int(n) = ok(&mut c, &["CF.COUNT", "m", &item]) else {
                    panic!()
                };
                assert!(n >= held, "step {step}: {item} counted {n}, holds {held}");
            }
        }
    }
    for (key, &held) in &model {
        let item = format!("k{key}");
        let Value::Int(n) = ok(&mut c, &["CF.COUNT", "m", &item]) else {
            panic!()
        };
        assert!(n >= held, "{item} counted {n}, holds {held}");
        if held > 0 {
            assert_eq!(ok(&mut c, &["CF.EXISTS", "m", &item]), int(1));
        }
    }
    assert_eq!(
        info(&mut c, "m")["Number of items inserted"],
        model.values().sum::<i64>()
    );
}

/// Every (iterator, data) pair of a dump, in order, up to the final (0, nil).
fn dump(c: &mut redis::Connection, key: &str) -> Vec<(i64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut iter = 0;
    loop {
        let (next, data): (i64, Option<Vec<u8>>) = redis::cmd("CF.SCANDUMP")
            .arg(key)
            .arg(iter)
            .query(c)
            .unwrap();
        if next == 0 {
            assert_eq!(data, None);
            return out;
        }
        assert!(out.len() < 10_000, "the dump does not end");
        out.push((next, data.unwrap()));
        iter = next;
    }
}

fn load(c: &mut redis::Connection, key: &str, iter: i64, data: &[u8]) -> redis::RedisResult<Value> {
    redis::cmd("CF.LOADCHUNK")
        .arg(key)
        .arg(iter)
        .arg(data)
        .query(c)
}

#[test]
fn a_dump_loads_back_to_the_same_filter_and_survives_a_restart() {
    let s = TestServer::start();
    let mut c = s.client();
    // A large reservation (~1 MiB of slots) with items in most chunks, then growth.
    ok(&mut c, &["CF.RESERVE", "src", "500000", "EXPANSION", "2"]);
    let items: Vec<String> = (0..20_000)
        .map(|i| format!("https://example.org/{i}"))
        .collect();
    for batch in items.chunks(1000) {
        let mut cmd = redis::cmd("CF.INSERT");
        cmd.arg("src").arg("ITEMS").arg(batch);
        let _: Vec<i64> = cmd.query(&mut c).unwrap();
    }
    ok(&mut c, &["CF.DEL", "src", "https://example.org/0"]);
    let pieces = dump(&mut c, "src");
    assert_eq!(pieces[0].0, 1, "the header first");
    assert!(pieces.len() >= 2);
    for (iter, data) in &pieces {
        assert_eq!(load(&mut c, "dst", *iter, data).unwrap(), Value::Okay);
    }
    assert_eq!(
        ok(&mut c, &["CF.INFO", "dst"]),
        ok(&mut c, &["CF.INFO", "src"])
    );
    let probe: Vec<String> = (0..40_000)
        .map(|i| format!("https://example.org/{i}"))
        .collect();
    let count = |c: &mut redis::Connection, key: &str| -> Vec<i64> {
        probe
            .iter()
            .step_by(7)
            .map(|p| match ok(c, &["CF.COUNT", key, p]) {
                Value::Int(n) => n,
                v => panic!("{v:?}"),
            })
            .collect()
    };
    assert_eq!(count(&mut c, "dst"), count(&mut c, "src"));
    assert_eq!(dump(&mut c, "dst"), pieces);

    // Damage: a bad header creates nothing, a bad piece writes nothing.
    let (header, piece) = (&pieces[0].1, &pieces[1]);
    let mut bad = header.clone();
    bad[8] ^= 1;
    let e = load(&mut c, "other", 1, &bad).unwrap_err();
    assert_eq!(e.detail(), Some("Invalid header"));
    assert_eq!(ok(&mut c, &["EXISTS", "other"]), int(0));
    assert_eq!(load(&mut c, "other", 1, header).unwrap(), Value::Okay);
    let mut bad = piece.1.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0x40;
    let e = load(&mut c, "other", piece.0, &bad).unwrap_err();
    assert_eq!(e.detail(), Some("Couldn't load chunk!"));
    assert_eq!(info(&mut c, "other")["Number of items inserted"], 19_999);
    assert_eq!(
        ok(&mut c, &["CF.COUNT", "other", "https://example.org/5"]),
        int(0),
        "nothing of the damaged piece was written"
    );
    assert_eq!(
        load(&mut c, "other", 0, header).unwrap_err().detail(),
        Some("Invalid position")
    );
    assert_eq!(
        load(&mut c, "src", 1, header).unwrap_err().detail(),
        Some("item exists")
    );
    assert_eq!(
        load(&mut c, "missing", piece.0, &piece.1)
            .unwrap_err()
            .detail(),
        Some("not found")
    );

    // An empty filter dumps as nothing, as in RedisBloom.
    ok(&mut c, &["CF.RESERVE", "empty", "100"]);
    assert_eq!(
        ok(&mut c, &["CF.SCANDUMP", "empty", "0"]),
        Value::Array(vec![int(0), Value::Nil])
    );
    assert_eq!(err(&mut c, &["CF.SCANDUMP", "nokey", "0"]), "ERR not found");
    assert_eq!(
        err(&mut c, &["CF.SCANDUMP", "src", "x"]),
        "ERR Invalid position"
    );

    drop(c);
    let mut s = s;
    s.restart();
    let mut c = s.client();
    assert_eq!(
        ok(&mut c, &["CF.EXISTS", "dst", "https://example.org/19999"]),
        int(1)
    );
    assert_eq!(ok(&mut c, &["CF.ADD", "dst", "new"]), int(1));
    assert_eq!(info(&mut c, "dst")["Number of items inserted"], 20_000);
}

/// A sealed header (magic, format 1, the metadata's bytes, CRC32), as CF.SCANDUMP writes one.
fn header(buckets: &[u64], bucket_size: u16) -> Vec<u8> {
    let mut o = b"bkvCF\x01".to_vec();
    o.extend_from_slice(&1024u64.to_le_bytes());
    o.extend_from_slice(&bucket_size.to_le_bytes());
    o.extend_from_slice(&20u16.to_le_bytes());
    o.extend_from_slice(&1u16.to_le_bytes());
    o.extend_from_slice(&0u64.to_le_bytes());
    o.extend_from_slice(&0u64.to_le_bytes());
    o.extend_from_slice(&(buckets.len() as u32).to_le_bytes());
    for b in buckets {
        o.extend_from_slice(&b.to_le_bytes());
    }
    let crc = crc32fast::hash(&o);
    o.extend_from_slice(&crc.to_le_bytes());
    o
}

#[test]
fn a_header_of_a_filter_no_reserve_could_make_is_refused() {
    let s = TestServer::start();
    let mut c = s.client();
    // Well formed and within the limits: accepted.
    assert_eq!(
        load(&mut c, "ok", 1, &header(&[512], 2)).unwrap(),
        Value::Okay
    );
    assert_eq!(info(&mut c, "ok")["Number of buckets"], 512);
    // A sub-filter of 2^40 buckets of 255 slots (over 256 GiB), or 33 sub-filters: the
    // checksum is right, the filter is not one this server makes.
    for (key, bad) in [
        ("huge", header(&[1 << 40], 255)),
        ("many", header(&[512; 33], 2)),
    ] {
        let e = load(&mut c, key, 1, &bad).unwrap_err();
        assert_eq!(e.detail(), Some("Invalid header"), "{key}");
        assert_eq!(ok(&mut c, &["EXISTS", key]), int(0), "{key}");
    }
}
