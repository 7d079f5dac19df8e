//! The verdict catches what it must: a stale read planted in a real cluster's history (a
//! `READONLY` read on a node cut off from the others, recorded as if it were a
//! linearizable read) is a linearizability violation and a lost write.

use std::time::Duration;

use bloomkv_cluster_testkit::linearizability::{
    Recorder, RedisModel, RedisOp, RedisOut, Verdict, check,
};
use bloomkv_cluster_testkit::proxy::Link;

use crate::history::lost_writes;
use crate::procs::ProcCluster;
use crate::resp::{Conn, Value};

#[test]
fn a_planted_stale_read_is_caught() {
    // `cut` must be a follower when its links are cut: an election timeout of 2-4 s keeps
    // a loaded machine's missed heartbeats from moving the leader before.
    let c = ProcCluster::start(
        3,
        &[
            "--request-timeout-ms",
            "1500",
            "--election-timeout-ms",
            "2000-4000",
        ],
    );
    let leader = c.wait_leader();
    let cut = c.ids().into_iter().find(|&i| i != leader).unwrap();
    let mut l = Conn::connect(c.port(leader), Duration::from_secs(10)).unwrap();
    let mut s = Conn::connect(c.port(cut), Duration::from_secs(10)).unwrap();
    let rec: Recorder<RedisOp, RedisOut> = Recorder::new();
    let set = |conn: &mut Conn, v: &str| {
        let id = rec.call(1, b"str:k", RedisOp::Set(v.as_bytes().to_vec()));
        assert_eq!(
            conn.call(&["SET", "str:k", v]).unwrap(),
            Value::Status("OK".into())
        );
        rec.ret(id, Some(RedisOut::Ok));
    };
    set(&mut l, "v1");
    // Let the node to be cut off apply v1, then cut it off.
    crate::resp::call_until(
        c.port(cut),
        &["GET", "str:k"],
        Duration::from_secs(10),
        |v| *v == Value::Bulk(Some(b"v1".to_vec())),
    );
    for o in c.ids() {
        if o != cut {
            c.link(cut, o, Link::Cut);
            c.link(o, cut, Link::Cut);
        }
    }
    set(&mut l, "v2");
    // Its linearizable read refuses to answer without the leader...
    let v = s.call(&["GET", "str:k"]).unwrap();
    assert!(matches!(&v, Value::Error(_)), "{v:?}");
    // ...its stale read answers the old value: planted as a final linearizable read.
    s.call(&["READONLY"]).unwrap();
    let id = rec.call(10_000, b"str:k", RedisOp::Get);
    let v = s.call(&["GET", "str:k"]).unwrap();
    assert_eq!(v, Value::Bulk(Some(b"v1".to_vec())));
    rec.ret(id, Some(RedisOut::Value(Some(b"v1".to_vec()))));
    let history = rec.history();
    assert!(
        matches!(
            check(&RedisModel, &history, 1_000_000),
            Verdict::Illegal { .. }
        ),
        "the stale read must be a violation"
    );
    let lost = lost_writes(&history);
    assert_eq!(lost.len(), 1, "{lost:?}");
}
