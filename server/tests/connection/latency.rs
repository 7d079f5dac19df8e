//! LATENCY and `latency-monitor-threshold`: off by default; once set, a command at least
//! that slow is a sample of the `command` event, which LATEST, HISTORY and RESET read.

use crate::common::{TestServer, bulk, err, int, ok};
use redis::Value;

fn ints_of(v: &Value) -> Vec<i64> {
    let Value::Array(items) = v else {
        panic!("{v:?}")
    };
    items
        .iter()
        .filter_map(|x| match x {
            Value::Int(i) => Some(*i),
            _ => None,
        })
        .collect()
}

#[test]
fn slow_commands_become_samples_once_the_threshold_is_set() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(
        ok(&mut c, &["CONFIG", "GET", "latency-monitor-threshold"]),
        Value::Array(vec![bulk("latency-monitor-threshold"), bulk("0")])
    );
    ok(&mut c, &["DEBUG", "SLEEP", "0.02"]);
    assert_eq!(ok(&mut c, &["LATENCY", "LATEST"]), Value::Array(vec![]));

    ok(
        &mut c,
        &["CONFIG", "SET", "latency-monitor-threshold", "10"],
    );
    ok(&mut c, &["DEBUG", "SLEEP", "0.02"]);
    ok(&mut c, &["GET", "fast"]);
    let Value::Array(latest) = ok(&mut c, &["LATENCY", "LATEST"]) else {
        panic!()
    };
    assert_eq!(latest.len(), 1, "{latest:?}");
    let Value::Array(row) = &latest[0] else {
        panic!()
    };
    assert_eq!(row[0], bulk("command"));
    let n = ints_of(&latest[0]);
    let (time, ms, max) = (n[0], n[1], n[2]);
    assert!(time > 1_600_000_000, "{time}");
    assert!(ms >= 20 && max >= ms, "{n:?}");
    let Value::Array(history) = ok(&mut c, &["LATENCY", "HISTORY", "command"]) else {
        panic!()
    };
    assert_eq!(history.len(), 1);
    assert_eq!(ints_of(&history[0]), vec![time, ms]);
    assert_eq!(
        ok(&mut c, &["LATENCY", "HISTORY", "fast-command"]),
        Value::Array(vec![])
    );
    assert_eq!(ok(&mut c, &["LATENCY", "RESET", "nope"]), int(0));
    assert_eq!(ok(&mut c, &["LATENCY", "RESET"]), int(1));
    assert_eq!(ok(&mut c, &["LATENCY", "LATEST"]), Value::Array(vec![]));
}

#[test]
fn errors_as_redis_words_them() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(
        err(&mut c, &["LATENCY", "FOO"]),
        "ERR unknown subcommand 'FOO'. Try LATENCY HELP."
    );
    assert_eq!(
        err(&mut c, &["LATENCY", "HISTORY"]),
        "ERR wrong number of arguments for 'latency|history' command"
    );
    assert!(
        err(&mut c, &["CONFIG", "SET", "latency-monitor-threshold", "x"])
            .contains("latency-monitor-threshold")
    );
    let Value::Array(help) = ok(&mut c, &["LATENCY", "HELP"]) else {
        panic!()
    };
    assert!(help.len() > 4);
    let _ = redis::cmd("PING").query::<String>(&mut c).unwrap();
}
