//! A full disk stops writes, not the server: writes answer MISCONF while reads go on, INFO
//! says why, and writes resume by themselves once space is back, with every acknowledged
//! write kept.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common;

use std::time::Duration;

use bloomkv::env::fault::{FaultEnv, FaultKind, FaultOp};
use common::{TestServer, bulk, ok};
use redis::Value;

fn info(c: &mut redis::Connection) -> String {
    match ok(c, &["INFO", "persistence"]) {
        Value::BulkString(b) => String::from_utf8(b).unwrap(),
        v => panic!("{v:?}"),
    }
}

#[test]
fn writes_answer_misconf_until_space_returns() {
    let (env, faults) = FaultEnv::wrap(bloomkv::env::StdEnv::shared());
    let s = TestServer::with_env(|_| {}, Some(env));
    let mut c = s.client();
    ok(&mut c, &["SET", "before", "1"]);
    ok(&mut c, &["SADD", "set", "a"]);
    // Every write of a file from now on finds the disk full.
    faults.fail_from_nth(FaultOp::Write, 1, FaultKind::NoSpace);
    let e = common::q(&mut c, &["SET", "during", "1"]).unwrap_err();
    assert_eq!(e.code(), Some("MISCONF"), "{e}");
    let e = common::q(&mut c, &["SADD", "set", "b"]).unwrap_err();
    assert_eq!(e.code(), Some("MISCONF"), "{e}");
    // Reads go on.
    assert_eq!(ok(&mut c, &["GET", "before"]), bulk("1"));
    assert_eq!(ok(&mut c, &["SCARD", "set"]), Value::Int(1));
    let i = info(&mut c);
    assert!(i.contains("aof_last_write_status:err"), "{i}");
    assert!(i.contains("bloomkv_writes_stopped:1"), "{i}");
    // Space is back: the server resumes writes by itself.
    faults.clear();
    let mut resumed = false;
    for _ in 0..100 {
        if common::q(&mut c, &["SET", "after", "1"]).is_ok() {
            resumed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(resumed, "writes did not resume: {}", info(&mut c));
    assert_eq!(ok(&mut c, &["GET", "before"]), bulk("1"));
    assert_eq!(ok(&mut c, &["GET", "after"]), bulk("1"));
    assert_eq!(ok(&mut c, &["GET", "during"]), Value::Nil);
    let i = info(&mut c);
    assert!(i.contains("aof_last_write_status:ok"), "{i}");
    assert!(i.contains("bloomkv_write_resumes:1"), "{i}");
}
