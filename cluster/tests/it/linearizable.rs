//! End to end: concurrent clients on two hot keys through every node, with the leader
//! stopped and restarted mid-way; the recorded history (failed calls as unknown outcomes)
//! must be linearizable per key.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use bloomkv_cluster::kv::{KvMachine, KvRequest, KvResponse};
use bloomkv_cluster::{Node, seed_for};
use bloomkv_cluster_testkit::linearizability::{KvModel, KvOp, KvOut, Recorder, Verdict, check};

use crate::harness::Cluster;

async fn run_op(node: &Node, key: &str, op: &KvOp) -> Option<KvOut> {
    match op {
        KvOp::Get => {
            node.linearizable_read_barrier().await.ok()?;
            let v = KvMachine::get(&node.state_db(), key.as_bytes()).ok()?;
            Some(KvOut::Value(v))
        }
        KvOp::Set(v) => {
            let r = node
                .write(KvRequest::set(key, v.clone()).encode())
                .await
                .ok()?;
            match KvResponse::decode(&r).ok()? {
                KvResponse::Ok => Some(KvOut::Ok),
                other => panic!("SET answered {other:?}"),
            }
        }
        KvOp::Incr(by) => {
            let r = node.write(KvRequest::incr(key, *by).encode()).await.ok()?;
            match KvResponse::decode(&r).ok()? {
                KvResponse::Int(n) => Some(KvOut::Int(n)),
                KvResponse::Err(_) => Some(KvOut::Err),
                other => panic!("INCR answered {other:?}"),
            }
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_history_across_a_leader_change_is_linearizable() {
    let mut c = Cluster::start(3, |cfg| cfg.request_timeout = Duration::from_secs(3)).await;
    let rec: Arc<Recorder<KvOp, KvOut>> = Arc::new(Recorder::new());
    // The nodes clients may use; the test swaps a restarted node in.
    let nodes: Arc<RwLock<BTreeMap<u64, Arc<Node>>>> = Arc::new(RwLock::new(
        c.running().into_iter().map(|id| (id, c.node(id))).collect(),
    ));
    let done = Arc::new(AtomicBool::new(false));
    let mut clients = Vec::new();
    for client in 0..4u64 {
        let (rec, nodes, done) = (Arc::clone(&rec), Arc::clone(&nodes), Arc::clone(&done));
        clients.push(tokio::spawn(async move {
            let mut i = 0u64;
            while !done.load(Ordering::Relaxed) && i < 1500 {
                i += 1;
                let r = seed_for(client * 1000 + i);
                let (key, op) = match r % 4 {
                    0 => ("reg", KvOp::Set(format!("{client}-{i}").into_bytes())),
                    1 => ("reg", KvOp::Get),
                    2 => ("ctr", KvOp::Incr(1)),
                    _ => ("ctr", KvOp::Get),
                };
                let node = {
                    let nodes = nodes.read().unwrap();
                    let all: Vec<&Arc<Node>> = nodes.values().collect();
                    Arc::clone(all[(r >> 8) as usize % all.len()])
                };
                let id = rec.call(client, key.as_bytes(), op.clone());
                let out = run_op(&node, key, &op).await;
                rec.ret(id, out);
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let leader = c.wait_leader().await;
    nodes.write().unwrap().remove(&leader);
    c.stop(leader).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    c.restart(leader).await;
    nodes.write().unwrap().insert(leader, c.node(leader));
    tokio::time::sleep(Duration::from_millis(500)).await;
    // Enough operations to mean something, however slowly the machine ran them.
    let until = std::time::Instant::now() + Duration::from_secs(60);
    while rec.history().len() < 100 && std::time::Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    done.store(true, Ordering::Relaxed);
    for t in clients {
        t.await.unwrap();
    }
    let history = rec.history();
    let answered = history.iter().filter(|o| o.output.is_some()).count();
    assert!(history.len() >= 100, "{} operations", history.len());
    assert!(
        answered > history.len() / 2,
        "most operations answered ({answered}/{})",
        history.len()
    );
    assert_eq!(check(&KvModel, &history, 50_000_000), Verdict::Ok);
}
