//! WAIT on a standalone server (no replicas): 0 at once when asked for none; otherwise the
//! client blocks until its timeout, CLIENT UNBLOCK or leaving, and gets 0; inside MULTI it
//! never blocks. Errors as Redis words them. (Cluster mode: `cluster/tests/fault/smoke.rs`.)

use crate::common::{TestServer, err, int, ok, wait_blocked};
use redis::Value;

#[test]
fn without_replicas_wait_answers_zero_after_blocking_as_asked() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["SET", "k", "v"]);
    assert_eq!(ok(&mut c, &["WAIT", "0", "0"]), int(0));
    assert_eq!(ok(&mut c, &["WAIT", "-3", "0"]), int(0));
    assert_eq!(ok(&mut c, &["WAIT", "1", "20"]), int(0));

    // WAIT 1 0 blocks for good: seen as a blocked client, ended by CLIENT UNBLOCK with 0.
    let mut raw = s.raw();
    raw.cmd(&[b"CLIENT", b"ID"]);
    let id = String::from_utf8(raw.read_until(b"\r\n")).unwrap_or_default();
    let id = id.trim_start_matches(':').trim_end().to_string();
    raw.cmd(&[b"WAIT", b"1", b"0"]);
    wait_blocked(&mut c, 1);
    assert_eq!(ok(&mut c, &["CLIENT", "UNBLOCK", &id]), int(1));
    assert_eq!(raw.read_until(b"\r\n"), b":0\r\n");
    wait_blocked(&mut c, 0);
    // A waiting client that leaves is forgotten.
    let mut gone = s.raw();
    gone.cmd(&[b"WAIT", b"1", b"0"]);
    wait_blocked(&mut c, 1);
    drop(gone);
    wait_blocked(&mut c, 0);

    // Inside MULTI it answers at once.
    let mut p = redis::pipe();
    p.atomic().cmd("WAIT").arg(1).arg(0).cmd("GET").arg("k");
    let got: Value = p.query(&mut c).unwrap_or(Value::Nil);
    assert_eq!(
        got,
        Value::Array(vec![int(0), Value::BulkString(b"v".to_vec())])
    );
}

#[test]
fn errors_as_redis_words_them() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(err(&mut c, &["WAIT", "1", "-1"]), "ERR timeout is negative");
    assert_eq!(
        err(&mut c, &["WAIT", "1", "x"]),
        "ERR timeout is not an integer or out of range"
    );
    assert_eq!(
        err(&mut c, &["WAIT", "x", "1"]),
        "ERR value is not an integer or out of range"
    );
    assert_eq!(
        err(&mut c, &["WAIT", "1"]),
        "ERR wrong number of arguments for 'wait' command"
    );
}
