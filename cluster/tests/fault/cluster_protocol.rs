//! Redis Cluster's protocol on a 3-node cluster: every node tells clients the same map (one
//! shard of all 16384 slots, the leader as master at its client port, the others as its
//! replicas), the map follows a failover, and a real cluster client (the `redis` crate's
//! `ClusterClient`, which routes by `CLUSTER SLOTS` as redis-py's `RedisCluster` does)
//! works against it unchanged.

use std::time::{Duration, Instant};

use redis::Commands;

use crate::procs::ProcCluster;
use crate::resp::{Conn, Value};

fn conn(c: &ProcCluster, id: u64) -> Conn {
    Conn::connect(c.port(id), Duration::from_secs(10)).unwrap()
}

/// Raft id `id` as a Redis Cluster node id.
fn name(id: u64) -> String {
    format!("{id:040x}")
}

/// The (port, id) of each node `CLUSTER SLOTS` names, master first, after checking its
/// one range covers every slot.
fn slot_nodes(v: &Value) -> Vec<(i64, String)> {
    let Value::Array(Some(ranges)) = v else {
        panic!("CLUSTER SLOTS: {v:?}")
    };
    assert_eq!(ranges.len(), 1, "one shard: {v:?}");
    let Value::Array(Some(range)) = &ranges[0] else {
        panic!("{v:?}")
    };
    assert_eq!(range[..2], [Value::Int(0), Value::Int(16383)], "{v:?}");
    range[2..]
        .iter()
        .map(|n| match n {
            Value::Array(Some(n)) => match (&n[0], &n[1], &n[2]) {
                (Value::Bulk(Some(host)), Value::Int(port), Value::Bulk(Some(id))) => {
                    assert_eq!(host, b"127.0.0.1");
                    (*port, String::from_utf8(id.clone()).unwrap())
                }
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        })
        .collect()
}

/// Waits until the running nodes agree on a leader other than `old`.
fn wait_new_leader(c: &ProcCluster, old: u64) -> u64 {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let l = c.wait_leader();
        if l != old {
            return l;
        }
        assert!(Instant::now() < until, "no new leader");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The `redis` crate's cluster client, every node a seed.
fn cluster_client(c: &ProcCluster) -> redis::cluster::ClusterClient {
    let seeds: Vec<String> = c
        .ids()
        .into_iter()
        .map(|id| format!("redis://127.0.0.1:{}", c.port(id)))
        .collect();
    redis::cluster::ClusterClient::new(seeds).unwrap()
}

/// Asks every running node for `CLUSTER SLOTS` until all name `leader` as the master and
/// `serving` nodes in all.
fn wait_map(c: &ProcCluster, leader: u64, serving: usize) {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let maps: Vec<Vec<(i64, String)>> = c
            .ids()
            .into_iter()
            .filter(|&id| c.is_up(id))
            .map(|id| {
                // Empty while that node knows no leader (just after a failover): not yet.
                match conn(c, id).call(&["CLUSTER", "SLOTS"]).unwrap() {
                    Value::Array(Some(r)) if r.is_empty() => Vec::new(),
                    v => slot_nodes(&v),
                }
            })
            .collect();
        let good = maps.iter().all(|m| {
            m.len() == serving
                && m[0] == (i64::from(c.port(leader)), name(leader))
                && m.iter().all(|(port, id)| {
                    c.ids()
                        .into_iter()
                        .any(|i| i64::from(c.port(i)) == *port && name(i) == *id && c.is_up(i))
                })
        });
        if good {
            return;
        }
        assert!(Instant::now() < until, "maps never agreed: {maps:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn cluster_clients_find_the_leader_and_follow_a_failover() {
    let mut c = ProcCluster::start(3, &["--request-timeout-ms", "3000"]);
    let leader = c.wait_leader();
    wait_map(&c, leader, 3);

    let mut l = conn(&c, leader);
    let info = l.call(&["INFO", "cluster"]).unwrap().text();
    assert!(info.contains("cluster_enabled:1"), "{info}");
    let ci = l.call(&["CLUSTER", "INFO"]).unwrap().text();
    for field in [
        "cluster_state:ok",
        "cluster_slots_assigned:16384",
        "cluster_slots_ok:16384",
        "cluster_size:1",
    ] {
        assert!(ci.contains(field), "{field}: {ci}");
    }
    let nodes = l.call(&["CLUSTER", "NODES"]).unwrap().text();
    assert_eq!(nodes.lines().count(), 3, "{nodes}");
    let mine = nodes
        .lines()
        .find(|line| line.starts_with(&name(leader)))
        .unwrap();
    assert!(
        mine.contains("myself,master") && mine.ends_with(" 0-16383"),
        "{mine}"
    );

    // A real cluster client: keys spread over slots, a hash-tagged MSET in one slot.
    let client = cluster_client(&c);
    let mut cc = client.get_connection().unwrap();
    for i in 0..50 {
        let _: () = cc.set(format!("key:{i}"), i).unwrap();
    }
    let _: () = redis::cmd("MSET")
        .arg("{user1}.name")
        .arg("ada")
        .arg("{user1}.lang")
        .arg("rust")
        .query(&mut cc)
        .unwrap();
    for i in 0..50 {
        let v: i64 = cc.get(format!("key:{i}")).unwrap();
        assert_eq!(v, i);
    }
    let v: Vec<String> = redis::cmd("MGET")
        .arg("{user1}.name")
        .arg("{user1}.lang")
        .query(&mut cc)
        .unwrap();
    assert_eq!(v, ["ada", "rust"]);

    // Slots as Redis computes them, and this node's keys in them.
    let slot = l.call(&["CLUSTER", "KEYSLOT", "key:7"]).unwrap();
    let Value::Int(slot) = slot else {
        panic!("{slot:?}")
    };
    let same_slot: Vec<String> = (0..50)
        .map(|i| format!("key:{i}"))
        .filter(|k| conn(&c, leader).call(&["CLUSTER", "KEYSLOT", k]).unwrap() == Value::Int(slot))
        .collect();
    let s = slot.to_string();
    assert_eq!(
        l.call(&["CLUSTER", "COUNTKEYSINSLOT", &s]).unwrap(),
        Value::Int(same_slot.len() as i64)
    );
    let Value::Array(Some(keys)) = l.call(&["CLUSTER", "GETKEYSINSLOT", &s, "100"]).unwrap() else {
        panic!("GETKEYSINSLOT")
    };
    assert_eq!(keys.len(), same_slot.len());
    assert!(keys.contains(&Value::Bulk(Some(b"key:7".to_vec()))));
    assert_eq!(
        l.call(&["CLUSTER", "COUNTKEYSINSLOT", "16384"]).unwrap(),
        Value::Error("ERR Invalid slot".into())
    );

    // The leader dies: the others elect a new one and every node's map names it. A client
    // that connects now (from the same seed list, the dead node in it) is sent there.
    // (The `redis` crate's client does not refresh its map on a refused connection to a
    // master, against Redis as here; redis-py's `RedisCluster` does.)
    c.kill(leader);
    let new_leader = wait_new_leader(&c, leader);
    wait_map(&c, new_leader, 2);
    let mut cc = client.get_connection().unwrap();
    let v: i64 = cc.get("key:3").unwrap();
    assert_eq!(v, 3);
    let _: () = cc.set("after", "failover").unwrap();
    let v: String = conn(&c, new_leader).call(&["GET", "after"]).unwrap().text();
    assert_eq!(v, "failover");
}

fn err(v: Value) -> String {
    match v {
        Value::Error(e) => e,
        other => panic!("expected an error, got {other:?}"),
    }
}

/// `--cluster-redirects yes`: the nodes answer as Redis Cluster's do. A follower sends
/// keyed commands to the leader with `-MOVED` (serving reads after `READONLY`), keys in
/// different slots are `-CROSSSLOT` (in a transaction too, which then aborts), keyless
/// commands are served anywhere; a cluster client that follows `MOVED` keeps working
/// through a failover on the connection it had.
#[test]
fn redirecting_nodes_answer_moved_and_crossslot_as_redis_cluster() {
    // Every MOVED checked names the leader found here: a longer election timeout keeps a
    // loaded machine's missed heartbeats from moving it before the failover below.
    let mut c = ProcCluster::start(
        3,
        &[
            "--request-timeout-ms",
            "3000",
            "--cluster-redirects",
            "yes",
            "--election-timeout-ms",
            "2000-4000",
        ],
    );
    let leader = c.wait_leader();
    wait_map(&c, leader, 3);
    let follower = c.ids().into_iter().find(|&id| id != leader).unwrap();
    let moved = format!("MOVED 12182 127.0.0.1:{}", c.port(leader));

    let mut l = conn(&c, leader);
    let mut f = conn(&c, follower);
    assert_eq!(l.call(&["SET", "foo", "1"]).unwrap().text(), "OK");
    assert_eq!(err(f.call(&["SET", "foo", "2"]).unwrap()), moved);
    assert_eq!(err(f.call(&["GET", "foo"]).unwrap()), moved);
    assert_eq!(
        err(f.call(&["EVAL", "return 1", "1", "foo"]).unwrap()),
        moved
    );
    // Pipelined: each keyed command answered in its place, keyless ones served.
    f.send(&["PING"]).unwrap();
    f.send(&["INCR", "foo"]).unwrap();
    f.send(&["DBSIZE"]).unwrap();
    f.send(&["GET", "foo"]).unwrap();
    assert_eq!(f.read().unwrap().text(), "PONG");
    assert_eq!(err(f.read().unwrap()), moved);
    assert!(matches!(f.read().unwrap(), Value::Int(_)));
    assert_eq!(err(f.read().unwrap()), moved);
    // READONLY: reads from the follower's copy (it catches up), writes still moved.
    assert_eq!(f.call(&["READONLY"]).unwrap().text(), "OK");
    let until = Instant::now() + Duration::from_secs(10);
    while f.call(&["GET", "foo"]).unwrap() != Value::Bulk(Some(b"1".to_vec())) {
        assert!(Instant::now() < until, "the follower never applied SET foo");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(err(f.call(&["SET", "foo", "2"]).unwrap()), moved);
    assert_eq!(f.call(&["READWRITE"]).unwrap().text(), "OK");
    assert_eq!(err(f.call(&["GET", "foo"]).unwrap()), moved);
    assert_eq!(f.call(&["ASKING"]).unwrap().text(), "OK");
    // Database 0 only, as in Redis Cluster.
    assert_eq!(
        err(f.call(&["SELECT", "1"]).unwrap()),
        "ERR SELECT is not allowed in cluster mode"
    );
    assert_eq!(f.call(&["SELECT", "0"]).unwrap().text(), "OK");

    // Slots: one per request, and one per transaction.
    let cross = "CROSSSLOT Keys in request don't hash to the same slot";
    assert_eq!(
        err(l.call(&["MSET", "foo", "1", "bar", "2"]).unwrap()),
        cross
    );
    assert_eq!(err(l.call(&["DEL", "foo", "bar"]).unwrap()), cross);
    assert_eq!(
        l.call(&["MSET", "{u}a", "1", "{u}b", "2"]).unwrap().text(),
        "OK"
    );
    assert_eq!(l.call(&["MULTI"]).unwrap().text(), "OK");
    assert_eq!(l.call(&["SET", "foo", "3"]).unwrap().text(), "QUEUED");
    assert_eq!(err(l.call(&["SET", "bar", "3"]).unwrap()), cross);
    assert!(err(l.call(&["EXEC"]).unwrap()).starts_with("EXECABORT"));
    assert_eq!(l.call(&["GET", "foo"]).unwrap().text(), "1");
    assert_eq!(l.call(&["MULTI"]).unwrap().text(), "OK");
    assert_eq!(l.call(&["INCR", "{u}a"]).unwrap().text(), "QUEUED");
    assert_eq!(l.call(&["INCR", "{u}b"]).unwrap().text(), "QUEUED");
    assert_eq!(
        l.call(&["EXEC"]).unwrap(),
        Value::Array(Some(vec![Value::Int(2), Value::Int(3)]))
    );
    assert_eq!(f.call(&["MULTI"]).unwrap().text(), "OK");
    assert_eq!(err(f.call(&["SET", "foo", "4"]).unwrap()), moved);
    assert!(err(f.call(&["EXEC"]).unwrap()).starts_with("EXECABORT"));

    // A cluster client that learnt the map before a failover follows MOVED afterwards, on
    // the connection it had: the old leader, paused until another is elected, answers as
    // a follower once it is back. (The `redis` crate's client does not look elsewhere on a
    // refused connection, so a dead master would not show this.)
    let client = cluster_client(&c);
    let mut cc = client.get_connection().unwrap();
    for i in 0..20 {
        let _: () = cc.set(format!("key:{i}"), i).unwrap();
    }
    c.pause(leader);
    let new_leader = wait_new_leader(&c, leader);
    c.resume(leader);
    wait_map(&c, new_leader, 3);
    let moved_to_new = format!("MOVED 12182 127.0.0.1:{}", c.port(new_leader));
    assert_eq!(
        err(conn(&c, leader).call(&["GET", "foo"]).unwrap()),
        moved_to_new
    );
    for i in 0..20 {
        let v: i64 = cc.get(format!("key:{i}")).unwrap();
        assert_eq!(v, i);
    }
    let _: () = cc.set("after", "failover").unwrap();
    let mut nl = conn(&c, new_leader);
    assert_eq!(nl.call(&["GET", "after"]).unwrap().text(), "failover");
}
