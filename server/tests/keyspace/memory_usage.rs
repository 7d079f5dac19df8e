//! MEMORY USAGE (a key's bytes in the engine, sampled for collections as Redis samples),
//! MEMORY's other subcommands, and TOUCH.

use crate::common;

use common::{TestServer, err, int, ok};
use redis::Value;

fn usage(c: &mut redis::Connection, args: &[&str]) -> i64 {
    let mut w = vec!["MEMORY", "USAGE"];
    w.extend_from_slice(args);
    match ok(c, &w) {
        Value::Int(n) => n,
        v => panic!("{args:?}: {v:?}"),
    }
}

#[test]
fn memory_usage_grows_with_the_value_and_samples_collections() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["MEMORY", "USAGE", "nosuchkey"]), Value::Nil);
    ok(&mut c, &["SET", "small", "x"]);
    let big = "y".repeat(10_000);
    ok(&mut c, &["SET", "big", &big]);
    let (small, large) = (usage(&mut c, &["small"]), usage(&mut c, &["big"]));
    assert!((2..64).contains(&small), "{small}");
    assert!((10_000..10_200).contains(&large), "{large}");

    // 1000 fields of about 20 bytes each: sampling 5 or reading all gives about the same.
    for i in 0..1000 {
        ok(
            &mut c,
            &["HSET", "h", &format!("field:{i:05}"), "value-value"],
        );
    }
    let all = usage(&mut c, &["h", "SAMPLES", "0"]);
    let sampled = usage(&mut c, &["h"]);
    assert!(all > 1000 * 20, "{all}");
    assert!(
        (sampled - all).abs() < all / 10,
        "sampled {sampled}, all {all}"
    );
    // A sorted set counts its two records per member.
    for i in 0..100 {
        ok(&mut c, &["ZADD", "z", &i.to_string(), &format!("m{i:03}")]);
        ok(&mut c, &["SADD", "s", &format!("m{i:03}")]);
    }
    assert!(usage(&mut c, &["z", "SAMPLES", "0"]) > usage(&mut c, &["s", "SAMPLES", "0"]));
    ok(&mut c, &["RPUSH", "l", "a", "b", "c"]);
    assert!(usage(&mut c, &["l"]) > usage(&mut c, &["small"]));

    assert_eq!(
        err(&mut c, &["MEMORY", "USAGE", "h", "SAMPLES", "-1"]),
        "ERR value is not an integer or out of range"
    );
    assert_eq!(
        err(&mut c, &["MEMORY", "USAGE", "h", "BOGUS", "1"]),
        "ERR syntax error"
    );
    assert_eq!(
        err(&mut c, &["MEMORY", "NOPE"]),
        "ERR unknown subcommand 'NOPE'. Try MEMORY HELP."
    );
    assert_eq!(ok(&mut c, &["MEMORY", "PURGE"]), Value::Okay);
    let Value::Array(help) = ok(&mut c, &["MEMORY", "HELP"]) else {
        panic!("MEMORY HELP")
    };
    assert!(help.len() > 5);
    let stats = ok(&mut c, &["MEMORY", "STATS"]);
    let text = format!("{stats:?}");
    assert!(text.contains("keys.count"), "{text}");
    // The key count: small, big, h, z, s, l.
    let Value::Array(fields) = stats else {
        panic!("{stats:?}")
    };
    assert_eq!(fields[1], int(6));
}

#[test]
fn touch_counts_the_keys_that_exist() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["SET", "a", "1"]);
    ok(&mut c, &["SADD", "b", "1"]);
    assert_eq!(ok(&mut c, &["TOUCH", "a", "b", "nope", "a"]), int(3));
    assert_eq!(ok(&mut c, &["TOUCH", "nope"]), int(0));
    assert_eq!(
        err(&mut c, &["TOUCH"]),
        "ERR wrong number of arguments for 'touch' command"
    );
}
