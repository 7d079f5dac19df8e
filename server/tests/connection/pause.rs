//! CLIENT PAUSE and CLIENT UNPAUSE: a write pause holds writes (and EXEC of a transaction
//! that writes) while reads go on; a pause of everything holds every command but the
//! UNPAUSE; held commands run, in order, once the pause ends.

use crate::common::{TestServer, bulk, err, ok};
use redis::Value;

#[test]
fn a_write_pause_holds_writes_and_lets_reads_through() {
    let s = TestServer::start();
    let mut admin = s.client();
    let mut reader = s.client();
    let mut writer = s.raw();
    assert_eq!(
        ok(&mut admin, &["CLIENT", "PAUSE", "600000", "WRITE"]),
        Value::Okay
    );
    // One write of three commands: the read before the SET answers, the SET and the read
    // after it wait.
    writer.send(b"*2\r\n$3\r\nGET\r\n$1\r\nx\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
    assert_eq!(writer.read_n(5), b"$-1\r\n");
    // Other clients read freely, and the SET has not run.
    assert_eq!(ok(&mut reader, &["GET", "k"]), Value::Nil);
    assert_eq!(ok(&mut reader, &["EXISTS", "k"]), Value::Int(0));
    // A transaction that only reads runs; one that writes waits at EXEC.
    let mut tx = s.raw();
    tx.expect(&[b"MULTI"], b"+OK\r\n");
    tx.expect(&[b"GET", b"k"], b"+QUEUED\r\n");
    tx.expect(&[b"EXEC"], b"*1\r\n$-1\r\n");
    assert_eq!(ok(&mut admin, &["CLIENT", "UNPAUSE"]), Value::Okay);
    assert_eq!(writer.read_n(12), b"+OK\r\n$1\r\nv\r\n");
    assert_eq!(ok(&mut reader, &["GET", "k"]), bulk("v"));
}

#[test]
fn an_exec_that_writes_waits_for_the_pause() {
    let s = TestServer::start();
    let mut admin = s.client();
    let mut tx = s.raw();
    tx.expect(&[b"MULTI"], b"+OK\r\n");
    tx.expect(&[b"INCR", b"n"], b"+QUEUED\r\n");
    ok(&mut admin, &["CLIENT", "PAUSE", "600000", "WRITE"]);
    tx.send(b"*1\r\n$4\r\nEXEC\r\n*1\r\n$4\r\nPING\r\n");
    assert_eq!(
        ok(&mut admin, &["GET", "n"]),
        Value::Nil,
        "EXEC has not run"
    );
    ok(&mut admin, &["CLIENT", "UNPAUSE"]);
    assert_eq!(tx.read_n(15), b"*1\r\n:1\r\n+PONG\r\n");
    assert_eq!(ok(&mut admin, &["GET", "n"]), bulk("1"));
}

#[test]
fn a_pause_of_everything_ends_at_its_deadline_or_on_unpause() {
    let s = TestServer::start();
    let mut admin = s.raw();
    let mut other = s.raw();
    // Held, then let go by UNPAUSE (which a pause of everything does not hold).
    admin.expect(&[b"CLIENT", b"PAUSE", b"600000"], b"+OK\r\n");
    other.cmd(&[b"SET", b"k", b"1"]);
    admin.expect(&[b"CLIENT", b"UNPAUSE"], b"+OK\r\n");
    assert_eq!(other.read_n(5), b"+OK\r\n");
    // A short pause ends by itself; the commands held run in order.
    admin.expect(&[b"CLIENT", b"PAUSE", b"50", b"ALL"], b"+OK\r\n");
    other.cmd(&[b"INCR", b"k"]);
    other.cmd(&[b"GET", b"k"]);
    assert_eq!(other.read_n(11), b":2\r\n$1\r\n2\r\n");
    admin.expect(&[b"GET", b"k"], b"$1\r\n2\r\n");
}

#[test]
fn errors_are_redis_s() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(
        err(&mut c, &["CLIENT", "PAUSE", "x"]),
        "ERR timeout is not an integer or out of range"
    );
    assert_eq!(
        err(&mut c, &["CLIENT", "PAUSE", "-1"]),
        "ERR timeout is negative"
    );
    // As redis-server 7.0.15 words them.
    assert_eq!(
        err(&mut c, &["CLIENT", "PAUSE", "10", "READS"]),
        "ERR CLIENT PAUSE mode must be WRITE or ALL"
    );
    assert_eq!(
        err(&mut c, &["CLIENT", "PAUSE", "0", "write", "extra"]),
        "ERR unknown subcommand or wrong number of arguments for 'PAUSE'. Try CLIENT HELP."
    );
    assert!(err(&mut c, &["CLIENT", "PAUSE"]).contains("wrong number of arguments"));
    assert!(err(&mut c, &["CLIENT", "UNPAUSE", "x"]).contains("wrong number of arguments"));
    assert_eq!(
        ok(&mut c, &["CLIENT", "UNPAUSE"]),
        Value::Okay,
        "without a pause too"
    );
    assert_eq!(ok(&mut c, &["CLIENT", "PAUSE", "0", "WRITE"]), Value::Okay);
    assert_eq!(
        ok(&mut c, &["SET", "k", "v"]),
        Value::Okay,
        "a pause of 0 ms is over"
    );
}
