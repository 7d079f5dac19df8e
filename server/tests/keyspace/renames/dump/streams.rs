//! DUMP and RESTORE of streams: entries over several nodes (with deleted entries and
//! different field sets), consumer groups with PELs and consumers, an empty stream with a
//! group, XINFO STREAM FULL the same before and after; damaged payloads refused.

use super::{bytes, restore};
use crate::common::{TestServer, bulk, int, ok, q};
use redis::Value;

/// Commands that build the streams `big` (several nodes, deleted entries, three groups),
/// `plain` (entries only added, one group: Redis's bytes exactly), `wide` (700-byte values:
/// nodes cut by their bytes), `empty` (a group on an empty stream) and `emptied` (its only
/// entry deleted). Delivery times are the only
/// thing they leave to the clock.
pub fn script() -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut cmd = |w: &[&str]| out.push(w.iter().map(|s| (*s).to_string()).collect());
    for i in 1..=230u64 {
        let id = format!("{}-{}", 1000 + i / 4, i % 4);
        let (vi, ni, big) = (format!("v{i}"), format!("{i}"), "x".repeat(2000));
        let val = format!("{}", i * 1000);
        match i {
            150 => cmd(&["XADD", "big", &id, "f", &big]),
            _ if i % 10 == 7 => cmd(&["XADD", "big", &id, "name", &vi, "extra", &ni]),
            _ if i % 25 == 0 => cmd(&["XADD", "big", &id, "f", &val]),
            _ => cmd(&["XADD", "big", &id, "f", &vi, "g", &ni]),
        }
    }
    for id in ["1001-1", "1012-2", "1025-1", "1050-0"] {
        cmd(&["XDEL", "big", id]);
    }
    cmd(&["XGROUP", "CREATE", "big", "g1", "0"]);
    cmd(&[
        "XREADGROUP",
        "GROUP",
        "g1",
        "alice",
        "COUNT",
        "10",
        "STREAMS",
        "big",
        ">",
    ]);
    cmd(&[
        "XREADGROUP",
        "GROUP",
        "g1",
        "bob",
        "COUNT",
        "5",
        "STREAMS",
        "big",
        ">",
    ]);
    cmd(&["XACK", "big", "g1", "1000-2"]);
    cmd(&["XCLAIM", "big", "g1", "bob", "0", "1000-3"]);
    cmd(&["XGROUP", "CREATE", "big", "g2", "$"]);
    cmd(&["XGROUP", "CREATECONSUMER", "big", "g2", "carol"]);
    cmd(&["XGROUP", "CREATE", "big", "g3", "1030-0"]);
    for i in 1..=150u64 {
        let id = format!("{}-0", 5000 + i);
        let v = format!("value-{}", i * 7);
        if i % 30 == 0 {
            cmd(&["XADD", "plain", &id, "temp", &v, "unit", "C"]);
        } else {
            cmd(&["XADD", "plain", &id, "temp", &v]);
        }
    }
    cmd(&["XGROUP", "CREATE", "plain", "readers", "0"]);
    cmd(&[
        "XREADGROUP",
        "GROUP",
        "readers",
        "r1",
        "COUNT",
        "3",
        "STREAMS",
        "plain",
        ">",
    ]);
    for i in 1..=20u64 {
        let v = format!("{i}:{}", "w".repeat(700));
        cmd(&["XADD", "wide", &format!("{i}-0"), "payload", &v]);
    }
    cmd(&["XGROUP", "CREATE", "empty", "g", "$", "MKSTREAM"]);
    cmd(&["XADD", "emptied", "5-1", "a", "1"]);
    cmd(&["XDEL", "emptied", "5-1"]);
    out
}

pub fn run(c: &mut redis::Connection, script: &[Vec<String>]) {
    for w in script {
        let words: Vec<&str> = w.iter().map(String::as_str).collect();
        ok(c, &words);
    }
}

/// Removes `name value` pairs this server adds to Redis 7.0's replies or works out its own
/// way: consumers' `active-time` (Redis 7.2's, not in a 7.0 payload) and the radix tree
/// sizes (Redis counts its nodes, deleted entries included).
pub fn normalized(v: Value) -> Value {
    match v {
        Value::Array(items) => {
            let drop = |x: &Value| {
                matches!(x, Value::BulkString(b) if b == b"active-time"
                    || b == b"radix-tree-keys" || b == b"radix-tree-nodes")
            };
            let mut out = Vec::with_capacity(items.len());
            let mut it = items.into_iter().peekable();
            let mut at = 0usize;
            while let Some(x) = it.next() {
                if at.is_multiple_of(2) && drop(&x) {
                    it.next();
                    at += 2;
                    continue;
                }
                out.push(normalized(x));
                at += 1;
            }
            Value::Array(out)
        }
        other => other,
    }
}

/// The replies that show a stream's whole state, normalized.
pub fn state(c: &mut redis::Connection, key: &str) -> Vec<Value> {
    let mut out = vec![
        ok(c, &["TYPE", key]),
        ok(c, &["XLEN", key]),
        ok(c, &["XRANGE", key, "-", "+"]),
        normalized(ok(c, &["XINFO", "STREAM", key, "FULL"])),
    ];
    if let Value::Array(groups) = ok(c, &["XINFO", "GROUPS", key]) {
        for g in groups {
            let Value::Array(fields) = g else { continue };
            let name = match &fields[1] {
                Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
                other => panic!("group name {other:?}"),
            };
            out.push(ok(c, &["XPENDING", key, &name]));
            // Extended form: ID, consumer, idle time (left out: the clock's), deliveries.
            let ext = ok(c, &["XPENDING", key, &name, "-", "+", "1000"]);
            if let Value::Array(rows) = ext {
                for r in rows {
                    if let Value::Array(mut f) = r {
                        f.remove(2);
                        out.push(Value::Array(f));
                    }
                }
            }
        }
    }
    out
}

pub const KEYS: [&str; 5] = ["big", "plain", "wide", "empty", "emptied"];

#[test]
fn streams_round_trip_with_groups_and_xinfo_full_unchanged() {
    let s = TestServer::start();
    let mut c = s.client();
    run(&mut c, &script());
    assert_eq!(ok(&mut c, &["XLEN", "big"]), int(226));
    for key in KEYS {
        let payload = bytes(ok(&mut c, &["DUMP", key]));
        assert_eq!(payload[0], 19, "{key}: RDB_TYPE_STREAM_LISTPACKS_2");
        let copy = format!("copy:{key}");
        assert_eq!(restore(&mut c, &copy, &payload), Value::Okay, "{key}");
        // Consumers' active time is not in a Redis 7.0 payload (`normalized` leaves it out).
        assert_eq!(state(&mut c, key), state(&mut c, &copy), "{key}");
        assert_eq!(bytes(ok(&mut c, &["DUMP", &copy])), payload, "{key}");
    }
    // Several nodes: 226 entries, one of 2000 bytes.
    assert_eq!(
        ok(&mut c, &["XRANGE", "copy:big", "1037-2", "1037-2"]),
        Value::Array(vec![Value::Array(vec![
            bulk("1037-2"),
            Value::Array(vec![bulk("f"), bulk(&"x".repeat(2000))]),
        ])])
    );
    // The group goes on where it was: the next read starts after alice's and bob's (1004-0).
    let next = ok(
        &mut c,
        &[
            "XREADGROUP",
            "GROUP",
            "g1",
            "dave",
            "COUNT",
            "1",
            "STREAMS",
            "copy:big",
            ">",
        ],
    );
    let Value::Array(streams) = next else {
        panic!("{next:?}")
    };
    let Value::Array(kv) = &streams[0] else {
        panic!()
    };
    let Value::Array(entries) = &kv[1] else {
        panic!()
    };
    let Value::Array(first) = &entries[0] else {
        panic!()
    };
    assert_eq!(first[0], bulk("1004-1"));
    // Consumers' active time comes back as their seen time (no active time in the payload).
    let full = ok(&mut c, &["XINFO", "STREAM", "copy:big", "FULL"]);
    let (seen, active) = (after(&full, "seen-time"), after(&full, "active-time"));
    assert_eq!(
        seen.len(),
        4,
        "alice, bob, dave (who read above, both times now), carol"
    );
    assert_eq!(seen, active);
}

/// The values that follow `name` in the name-value lists anywhere in `v`.
fn after(v: &Value, name: &str) -> Vec<Value> {
    let mut out = Vec::new();
    if let Value::Array(items) = v {
        for (i, x) in items.iter().enumerate() {
            if i % 2 == 0
                && matches!(x, Value::BulkString(b) if b == name.as_bytes())
                && let Some(next) = items.get(i + 1)
            {
                out.push(next.clone());
            }
            out.extend(after(x, name));
        }
    }
    out
}

/// A reader blocked on a stream that does not exist yet gets the entries RESTORE creates.
#[test]
fn restore_wakes_blocked_readers() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["XADD", "src", "7-1", "f", "v"]);
    let payload = bytes(ok(&mut c, &["DUMP", "src"]));
    let mut reader = s.client();
    let t = std::thread::spawn(move || {
        q(
            &mut reader,
            &["XREAD", "BLOCK", "5000", "STREAMS", "dst", "0-0"],
        )
        .unwrap()
    });
    crate::common::wait_blocked(&mut c, 1);
    assert_eq!(restore(&mut c, "dst", &payload), Value::Okay);
    assert_eq!(
        t.join().unwrap(),
        Value::Array(vec![Value::Array(vec![
            bulk("dst"),
            Value::Array(vec![Value::Array(vec![
                bulk("7-1"),
                Value::Array(vec![bulk("f"), bulk("v")]),
            ])]),
        ])])
    );
}

#[test]
fn stream_restore_keeps_ttl_and_replace_rules() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["XADD", "s", "1-1", "f", "v"]);
    ok(&mut c, &["XGROUP", "CREATE", "s", "g", "0"]);
    let payload = bytes(ok(&mut c, &["DUMP", "s"]));
    let e = q(&mut c, &["SET", "s", "x"]);
    assert!(e.is_ok());
    let busy = redis::cmd("RESTORE")
        .arg("s")
        .arg(0)
        .arg(&payload[..])
        .query::<Value>(&mut c)
        .unwrap_err();
    assert!(busy.to_string().contains("BUSYKEY"), "{busy}");
    let replaced = redis::cmd("RESTORE")
        .arg("s")
        .arg(50_000)
        .arg(&payload[..])
        .arg("REPLACE")
        .query::<Value>(&mut c)
        .unwrap();
    assert_eq!(replaced, Value::Okay);
    assert_eq!(
        ok(&mut c, &["TYPE", "s"]),
        Value::SimpleString("stream".into())
    );
    let Value::Int(pttl) = ok(&mut c, &["PTTL", "s"]) else {
        panic!()
    };
    assert!((1..=50_000).contains(&pttl), "{pttl}");
    assert_eq!(
        ok(&mut c, &["XINFO", "GROUPS", "s"])
            .as_sequence()
            .map(<[Value]>::len),
        Some(1)
    );
}

/// Stream payloads with their checksum right but their body damaged, cut or inconsistent
/// are refused with Redis's error and leave the key as it was; every prefix of a real
/// payload (its checksum made right) is refused too, never a panic.
#[test]
fn damaged_stream_payloads_are_refused() {
    use bloomkv_server::cmd::dump::rdb::{seal, unseal};
    let s = TestServer::start();
    let mut c = s.client();
    run(&mut c, &script());
    ok(&mut c, &["SET", "k", "kept"]);
    let payload = bytes(ok(&mut c, &["DUMP", "big"]));
    let body = unseal(&payload).unwrap().to_vec();
    let refused = |c: &mut redis::Connection, p: Vec<u8>| {
        let e = redis::cmd("RESTORE")
            .arg("k")
            .arg(0)
            .arg(p)
            .arg("REPLACE")
            .query::<Value>(c)
            .unwrap_err()
            .to_string();
        assert_eq!(ok(c, &["GET", "k"]), bulk("kept"));
        e
    };
    let mut cuts: Vec<usize> = (1..body.len()).step_by(97).collect();
    cuts.extend(body.len() - 40..body.len());
    for cut in cuts {
        let e = refused(&mut c, seal(body[..cut].to_vec()));
        assert!(e.contains("Bad data format"), "cut at {cut}: {e}");
    }
    // One byte flipped without fixing the checksum.
    let mut flipped = payload.clone();
    flipped[40] ^= 0x55;
    let e = refused(&mut c, flipped);
    assert!(
        e.contains("DUMP payload version or checksum are wrong"),
        "{e}"
    );
    // A consumer owning an ID its group's PEL does not hold.
    let mut v = bloomkv_server::cmd::dump::stream::StreamValue {
        last: (9, 9),
        added: 1,
        ..Default::default()
    };
    v.entries.push(((1, 1), vec!["f".into(), "v".into()]));
    v.groups
        .push(bloomkv_server::cmd::dump::stream::GroupValue {
            name: "g".into(),
            entries_read: Some(0),
            consumers: vec![bloomkv_server::cmd::dump::stream::ConsumerValue {
                name: "c".into(),
                pel: vec![(1, 1)],
                ..Default::default()
            }],
            ..Default::default()
        });
    let mut good = Vec::new();
    bloomkv_server::cmd::dump::stream::write(&mut good, &v);
    v.groups[0].pel.push(((1, 1), 5, 1));
    let mut ok_body = Vec::new();
    bloomkv_server::cmd::dump::stream::write(&mut ok_body, &v);
    let e = refused(&mut c, seal(good));
    assert!(e.contains("Bad data format"), "{e}");
    assert_eq!(
        restore(&mut c, "fine", &seal(ok_body)),
        Value::Okay,
        "the same with the PEL entry"
    );
    // Counters that contradict the entries: fewer added than present.
    v.added = 0;
    let mut few = Vec::new();
    bloomkv_server::cmd::dump::stream::write(&mut few, &v);
    let e = refused(&mut c, seal(few));
    assert!(e.contains("Bad data format"), "{e}");
    assert_eq!(
        ok(&mut c, &["XPENDING", "fine", "g", "-", "+", "5", "c"])
            .as_sequence()
            .map(<[Value]>::len),
        Some(1)
    );
}
