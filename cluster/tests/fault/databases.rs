//! Databases other than 0 on a cluster: `SELECT n` on any node, and every write, EXEC,
//! WATCH, blocking pop and expiry of that connection addresses database n on every node,
//! through a restart; a `redis://host:port/n` URL works as against one server.

use std::time::{Duration, Instant};

use redis::Commands;

use crate::procs::ProcCluster;
use crate::resp::{Conn, Value};

fn conn(c: &ProcCluster, id: u64) -> Conn {
    Conn::connect(c.port(id), Duration::from_secs(10)).unwrap()
}

fn bulk(s: &str) -> Value {
    Value::Bulk(Some(s.as_bytes().to_vec()))
}

fn ok(v: Value) {
    assert_eq!(v, Value::Status("OK".into()));
}

#[test]
fn databases_are_replicated_and_kept_apart() {
    let mut c = ProcCluster::start(3, &["--request-timeout-ms", "3000"]);
    let leader = c.wait_leader();
    let follower = c.ids().into_iter().find(|&id| id != leader).unwrap();
    let other = c
        .ids()
        .into_iter()
        .find(|&id| id != leader && id != follower)
        .unwrap();

    // Writes through a follower, in database 1; database 0 does not see them.
    let mut f = conn(&c, follower);
    ok(f.call(&["SELECT", "1"]).unwrap());
    ok(f.call(&["SET", "k", "one"]).unwrap());
    assert_eq!(f.call(&["LPUSH", "l", "a", "b"]).unwrap(), Value::Int(2));
    ok(f.call(&["SET", "gone", "x", "PX", "200"]).unwrap());
    assert_eq!(f.call(&["DBSIZE"]).unwrap(), Value::Int(3));
    ok(f.call(&["SELECT", "0"]).unwrap());
    assert_eq!(f.call(&["GET", "k"]).unwrap(), Value::Bulk(None));
    ok(f.call(&["SET", "k", "zero"]).unwrap());

    // Another node reads each database's own value (linearizable reads).
    let mut o = conn(&c, other);
    ok(o.call(&["SELECT", "1"]).unwrap());
    assert_eq!(o.call(&["GET", "k"]).unwrap(), bulk("one"));
    assert_eq!(
        o.call(&["LRANGE", "l", "0", "-1"]).unwrap().text(),
        "Array(Some([Bulk(Some([98])), Bulk(Some([97]))]))"
    );
    ok(o.call(&["SELECT", "0"]).unwrap());
    assert_eq!(o.call(&["GET", "k"]).unwrap(), bulk("zero"));
    assert_eq!(o.call(&["EXISTS", "l"]).unwrap(), Value::Int(0));

    // The leader's reclaimer removes database 1's expired key on every node.
    ok(o.call(&["SELECT", "1"]).unwrap());
    let until = Instant::now() + Duration::from_secs(20);
    while o.call(&["DBSIZE"]).unwrap() != Value::Int(2) {
        assert!(
            Instant::now() < until,
            "database 1's expired key was never reclaimed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // A SELECT queued in MULTI: the commands after it address its database, on every
    // node, and the connection stays there after EXEC.
    ok(f.call(&["MULTI"]).unwrap());
    assert_eq!(
        f.call(&["SET", "k", "zero-again"]).unwrap().text(),
        "QUEUED"
    );
    assert_eq!(f.call(&["SELECT", "2"]).unwrap().text(), "QUEUED");
    assert_eq!(f.call(&["SET", "k", "two"]).unwrap().text(), "QUEUED");
    assert_eq!(f.call(&["SELECT", "99"]).unwrap().text(), "QUEUED");
    assert_eq!(f.call(&["INCR", "n"]).unwrap().text(), "QUEUED");
    let Value::Array(Some(replies)) = f.call(&["EXEC"]).unwrap() else {
        panic!("EXEC")
    };
    assert_eq!(
        replies[..3],
        [
            Value::Status("OK".into()),
            Value::Status("OK".into()),
            Value::Status("OK".into())
        ]
    );
    assert_eq!(
        replies[3],
        Value::Error("ERR DB index is out of range".into())
    );
    assert_eq!(replies[4], Value::Int(1));
    assert_eq!(f.call(&["GET", "k"]).unwrap(), bulk("two"));
    ok(o.call(&["SELECT", "2"]).unwrap());
    assert_eq!(o.call(&["GET", "k"]).unwrap(), bulk("two"));
    assert_eq!(o.call(&["GET", "n"]).unwrap(), bulk("1"));
    ok(o.call(&["SELECT", "0"]).unwrap());
    assert_eq!(o.call(&["GET", "k"]).unwrap(), bulk("zero-again"));

    // WATCH in database 2: a write there from another node breaks the EXEC.
    ok(f.call(&["WATCH", "k"]).unwrap());
    ok(o.call(&["SELECT", "2"]).unwrap());
    ok(o.call(&["SET", "k", "changed"]).unwrap());
    ok(f.call(&["MULTI"]).unwrap());
    assert_eq!(f.call(&["SET", "k", "mine"]).unwrap().text(), "QUEUED");
    assert_eq!(f.call(&["EXEC"]).unwrap(), Value::Array(None));
    assert_eq!(f.call(&["GET", "k"]).unwrap(), bulk("changed"));

    // A blocking pop in database 3 on one node, woken by a push there through another.
    let mut b = conn(&c, follower);
    ok(b.call(&["SELECT", "3"]).unwrap());
    b.send(&["BLPOP", "q", "10"]).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    ok(o.call(&["SELECT", "0"]).unwrap());
    assert_eq!(o.call(&["LPUSH", "q", "in-0"]).unwrap(), Value::Int(1));
    ok(o.call(&["SELECT", "3"]).unwrap());
    assert_eq!(o.call(&["LPUSH", "q", "in-3"]).unwrap(), Value::Int(1));
    assert_eq!(
        b.read().unwrap(),
        Value::Array(Some(vec![bulk("q"), bulk("in-3")]))
    );
    ok(o.call(&["SELECT", "0"]).unwrap());
    assert_eq!(o.call(&["LLEN", "q"]).unwrap(), Value::Int(1));

    // A client that names the database in its URL, as every Redis library can.
    let url = format!("redis://127.0.0.1:{}/1", c.port(other));
    let mut rc = redis::Client::open(url).unwrap().get_connection().unwrap();
    let v: String = rc.get("k").unwrap();
    assert_eq!(v, "one");
    let _: () = rc.set("from-url", 1).unwrap();

    // Through a restart: the node replays its log (or installs a snapshot) into the same
    // databases.
    c.kill(other);
    c.restart(other);
    let mut o = conn(&c, other);
    ok(o.call(&["SELECT", "1"]).unwrap());
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        match o.call(&["GET", "from-url"]) {
            Ok(v) if v == bulk("1") => break,
            _ => {
                assert!(Instant::now() < until, "database 1 lost after a restart");
                std::thread::sleep(Duration::from_millis(100));
                o = conn(&c, other);
                let _ = o.call(&["SELECT", "1"]);
            }
        }
    }
    assert_eq!(o.call(&["GET", "k"]).unwrap(), bulk("one"));
    c.wait_converged();
}
