//! Online membership changes through `kvctl cluster`'s client at a member's client port:
//! a fourth node started without `--initial-cluster` is added (learner, caught up,
//! promoted), serves reads and writes, and then an original node is removed while the
//! cluster keeps serving.

use std::time::Duration;

use kvctl::cluster_admin::{Admin, field, node_line};

use crate::procs::ProcCluster;
use crate::resp::{Conn, Value};

#[test]
fn add_a_node_then_remove_one_through_kvctl() {
    let mut c = ProcCluster::start(3, &["--request-timeout-ms", "3000"]);
    c.wait_leader();
    let mut one = Conn::connect(c.port(1), Duration::from_secs(10)).unwrap();
    for i in 0..200 {
        assert_eq!(
            one.call(&["SET", &format!("k{i}"), "v"]).unwrap(),
            Value::Status("OK".into())
        );
    }
    c.add_node(4);
    let raft4 = format!("127.0.0.1:{}", c.nodes[&4].raft_port);
    let admin = Admin::new(
        format!("127.0.0.1:{}", c.port(2)),
        None,
        Duration::from_secs(10),
    );
    let mut steps = Vec::new();
    admin
        .add(4, &raft4, false, true, Duration::from_secs(60), |s| {
            steps.push(s.to_string())
        })
        .unwrap();
    assert!(steps.iter().any(|s| s.contains("promoted")), "{steps:?}");
    let status = admin.status().unwrap();
    let line = node_line(&status, 4).unwrap_or_else(|| panic!("{status}"));
    assert_eq!(field(line, "voter"), Some("1"), "{status}");
    c.wait_converged();
    // The new node holds what was written before it joined, and takes writes.
    let mut four = Conn::connect(c.port(4), Duration::from_secs(10)).unwrap();
    assert_eq!(four.call(&["DBSIZE"]).unwrap(), Value::Int(200));
    assert_eq!(
        four.call(&["SET", "via4", "x"]).unwrap(),
        Value::Status("OK".into())
    );
    assert_eq!(
        one.call(&["GET", "via4"]).unwrap(),
        Value::Bulk(Some(b"x".to_vec()))
    );

    // Remove node 1 (whatever its role) through node 4, then stop it for good.
    let admin4 = Admin::new(
        format!("127.0.0.1:{}", c.port(4)),
        None,
        Duration::from_secs(10),
    );
    // A node that is not a member: refused, not reported removed.
    let e = admin4.remove(9).unwrap_err();
    assert!(e.to_string().contains("not a member"), "{e}");
    admin4.remove(1).unwrap();
    // The removed node learns it and stops serving, naming its removal; it does not
    // campaign (its term stays put).
    let mut gone = Conn::connect(c.port(1), Duration::from_secs(10)).unwrap();
    let until = std::time::Instant::now() + Duration::from_secs(30);
    let refused = loop {
        match gone.call(&["SET", "on-removed", "x"]) {
            Ok(Value::Error(e)) if e.contains("removed") => break e,
            other => {
                assert!(std::time::Instant::now() < until, "{other:?}");
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    };
    assert!(refused.contains("node 1 was removed"), "{refused}");
    let term = |conn: &mut Conn| {
        conn.call(&["INFO", "replication"])
            .unwrap()
            .text()
            .lines()
            .find_map(|l| l.strip_prefix("raft_term:").map(|t| t.trim().to_string()))
    };
    let before = term(&mut gone);
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(term(&mut gone), before, "a removed node raised its term");
    // Adding it back with its old directory is refused, saying what to do.
    let raft1 = format!("127.0.0.1:{}", c.nodes[&1].raft_port);
    let e = admin4
        .call(&["CLUSTER", "ADDLEARNER", "1", &raft1])
        .unwrap_err();
    assert!(e.to_string().contains("empty its --dir"), "{e}");
    c.forget(1);
    let until = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let s = admin4.status().unwrap();
        if node_line(&s, 1).is_none() && s.contains("cluster_state:ok") {
            assert_eq!(
                s.lines().filter(|l| l.starts_with("node")).count(),
                3,
                "{s}"
            );
            break;
        }
        assert!(std::time::Instant::now() < until, "{s}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut two = Conn::connect(c.port(2), Duration::from_secs(10)).unwrap();
    assert_eq!(two.call(&["INCR", "after"]).unwrap(), Value::Int(1));
    c.wait_converged();
    // A refused change is an error, not a hang.
    assert!(admin4.call(&["CLUSTER", "PROMOTE", "99"]).is_err());
}
