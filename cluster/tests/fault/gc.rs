//! The state machine's database runs the standalone server's compaction-filter GC and its
//! sweeper: a big set dropped with DEL through the replicated log leaves none of its
//! members in that database once the sweep has run (fails with either missing: members
//! stay until ordinary compactions reach them).

use std::time::{Duration, Instant};

use bloomkv::Db;
use bloomkv_cluster::redis_server::{ClusterArgs, ClusterServer};
use clap::Parser;

use crate::procs::free_port;
use crate::resp::{Conn, Value, call_until};

/// Members of the state machine's live database with the set's sub-key tag (`s`).
fn members_on_disk(node_dir: &std::path::Path) -> usize {
    let pointer = std::fs::read_to_string(node_dir.join("sm/POINTER")).unwrap();
    let db = Db::open_read_only(
        node_dir.join("sm").join(pointer.trim()),
        bloomkv::Options::default(),
    )
    .unwrap();
    db.scan(b"s".as_slice()..b"t".as_slice())
        .try_fold(0usize, |n, kv| kv.map(|_| n + 1))
        .unwrap()
}

#[test]
fn a_dropped_big_set_is_reclaimed_on_the_state_machine() {
    let dir = tempfile::tempdir().unwrap();
    let node_dir = dir.path().join("node1");
    let raft = free_port();
    let args = ClusterArgs::parse_from([
        "bloomkv-cluster",
        "--node-id",
        "1",
        "--port",
        "0",
        "--threads",
        "2",
        "--dir",
        node_dir.to_str().unwrap(),
        "--cluster-addr",
        &format!("127.0.0.1:{raft}"),
        "--initial-cluster",
        &format!("1=127.0.0.1:{raft}"),
    ]);
    let server = ClusterServer::start(args.clone()).unwrap();
    let port = server.client_addr().port();
    call_until(port, &["CLUSTER", "LEADER"], Duration::from_secs(30), |v| {
        matches!(v, Value::Int(1))
    });
    let mut c = Conn::connect(port, Duration::from_secs(10)).unwrap();
    // Above the sweep threshold (4,096 entries), in batches of 500 members.
    let n = 5_000;
    for start in (0..n).step_by(500) {
        let mut cmd = vec!["SADD".to_string(), "big".to_string()];
        cmd.extend((start..start + 500).map(|i| format!("member-{i:06}")));
        assert_eq!(c.call(&cmd).unwrap(), Value::Int(500));
    }
    assert_eq!(c.call(&["SCARD", "big"]).unwrap(), Value::Int(n));
    assert_eq!(c.call(&["SADD", "small", "a"]).unwrap(), Value::Int(1));
    assert_eq!(c.call(&["DEL", "big"]).unwrap(), Value::Int(1));
    // The sweeper looks once a second; give it a few.
    let until = Instant::now() + Duration::from_secs(4);
    while Instant::now() < until {
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(c);
    server.shutdown().unwrap();
    assert_eq!(
        members_on_disk(&node_dir),
        1,
        "only the small set's member is left in the state machine's database"
    );
    // And the node still starts on what it left.
    let server = ClusterServer::start(args).unwrap();
    let port = server.client_addr().port();
    let v = call_until(port, &["SMEMBERS", "small"], Duration::from_secs(30), |v| {
        matches!(v, Value::Array(Some(_)))
    });
    assert_eq!(
        v,
        Value::Array(Some(vec![Value::Bulk(Some(b"a".to_vec()))]))
    );
    server.shutdown().unwrap();
}
