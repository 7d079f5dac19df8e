//! A power cut (the engine's fault env: from the cut on no fsync succeeds, then every file
//! is rewound to what was synced) on the leader and then on a follower of a cluster of
//! three servers in this process, with clients writing through all of them: nothing
//! acknowledged is lost, and the node restarts and catches up although snapshots purged
//! its log.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bloomkv::env::fault::{FaultController, FaultEnv, FaultKind, FaultOp};
use bloomkv::env::{Env, StdEnv};
use bloomkv_cluster::redis_server::{ClusterArgs, ClusterServer};
use clap::Parser;

use crate::procs::free_port;
use crate::resp::{Conn, Value, call_until};

struct Member {
    args: ClusterArgs,
    env: Arc<dyn Env>,
    ctl: Arc<FaultController>,
    server: Option<ClusterServer>,
}

struct InProcess {
    dir: tempfile::TempDir,
    members: BTreeMap<u64, Member>,
}

impl InProcess {
    fn start(n: u64) -> InProcess {
        let dir = tempfile::tempdir().unwrap();
        let raft: BTreeMap<u64, u16> = (1..=n).map(|id| (id, free_port())).collect();
        let initial = raft
            .iter()
            .map(|(id, p)| format!("{id}=127.0.0.1:{p}"))
            .collect::<Vec<_>>()
            .join(",");
        let mut members = BTreeMap::new();
        for (&id, port) in &raft {
            let node_dir = dir.path().join(format!("node{id}"));
            let args = ClusterArgs::parse_from([
                "bloomkv-cluster",
                "--node-id",
                &id.to_string(),
                "--port",
                "0",
                "--threads",
                "2",
                "--dir",
                node_dir.to_str().unwrap(),
                "--cluster-addr",
                &format!("127.0.0.1:{port}"),
                "--initial-cluster",
                &initial,
                "--snapshot-every",
                "100",
                "--keep-logs",
                "0",
                "--request-timeout-ms",
                "3000",
                "--memtable-mb",
                "1",
            ]);
            let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
            ctl.set_simulated_sync(true);
            members.insert(
                id,
                Member {
                    args,
                    env,
                    ctl,
                    server: None,
                },
            );
        }
        let mut c = InProcess { dir, members };
        for id in 1..=n {
            c.launch(id);
        }
        c
    }

    fn launch(&mut self, id: u64) {
        let m = self.members.get_mut(&id).unwrap();
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            match ClusterServer::start_with_env(m.args.clone(), Some(Arc::clone(&m.env))) {
                Ok(s) => {
                    m.server = Some(s);
                    return;
                }
                // The previous incarnation's files or ports may need a moment.
                Err(e) if Instant::now() < until => {
                    eprintln!("node {id} not started yet: {e}");
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(e) => panic!("node {id}: {e}"),
            }
        }
    }

    fn port(&self, id: u64) -> u16 {
        self.members[&id]
            .server
            .as_ref()
            .expect("running")
            .client_addr()
            .port()
    }

    fn leader(&self) -> u64 {
        let id = *self.members.keys().next().unwrap();
        let port = self.port(id);
        match call_until(port, &["CLUSTER", "LEADER"], Duration::from_secs(30), |v| {
            matches!(v, Value::Int(_))
        }) {
            Value::Int(l) => l as u64,
            _ => unreachable!(),
        }
    }

    /// The power cut: no fsync succeeds from now on; the node stops (its Raft core fails
    /// on its first failed append); its files are rewound to what was synced.
    fn power_cut(&mut self, id: u64) {
        let m = self.members.get_mut(&id).unwrap();
        m.ctl.fail_from_nth(FaultOp::Sync, 1, FaultKind::Eio);
        if let Some(s) = m.server.take() {
            let _ = s.shutdown();
        }
        let node_dir = self.dir.path().join(format!("node{id}"));
        wait_closed(&node_dir);
        let m = &self.members[&id];
        m.ctl.clear();
        m.ctl.crash(&StdEnv).unwrap();
    }

    fn converged(&self) {
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            let leader = self.leader();
            let text = Conn::connect(self.port(leader), Duration::from_secs(5))
                .and_then(|mut c| c.call(&["CLUSTER", "INFO"]))
                .map(|v| v.text())
                .unwrap_or_default();
            let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("node")).collect();
            if lines.len() == self.members.len()
                && lines
                    .iter()
                    .all(|l| l.contains("state=up") && l.contains(",lag=0"))
            {
                return;
            }
            assert!(Instant::now() < until, "not converged:\n{text}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Waits until the databases under a stopped node's directory are closed (the crash
/// model rewinds files, which needs them closed).
fn wait_closed(node_dir: &std::path::Path) {
    let mut dbs = vec![node_dir.join("log")];
    if let Ok(rd) = std::fs::read_dir(node_dir.join("sm")) {
        dbs.extend(rd.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
    }
    let until = Instant::now() + Duration::from_secs(20);
    for db in dbs {
        while let Err(bloomkv::Error::Locked(_)) =
            bloomkv::Db::open_read_only(&db, bloomkv::Options::default())
        {
            assert!(Instant::now() < until, "{} stays open", db.display());
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Writers through every running node's port until `stop`; acknowledged keys collected.
fn writers(
    ports: Vec<u16>,
    stop: &Arc<AtomicBool>,
    acked: &Arc<Mutex<BTreeMap<String, String>>>,
    tag: &str,
) -> Vec<std::thread::JoinHandle<()>> {
    ports
        .into_iter()
        .enumerate()
        .map(|(n, port)| {
            let (stop, acked, tag) = (Arc::clone(stop), Arc::clone(acked), tag.to_string());
            std::thread::spawn(move || {
                let mut i = 0u64;
                let mut conn = None;
                while !stop.load(Ordering::Relaxed) {
                    i += 1;
                    if conn.is_none() {
                        conn = Conn::connect(port, Duration::from_secs(5)).ok();
                        if conn.is_none() {
                            std::thread::sleep(Duration::from_millis(50));
                            continue;
                        }
                    }
                    let Some(c) = conn.as_mut() else { continue };
                    let (k, v) = (format!("{tag}:{n}:{i}"), format!("v{i}"));
                    match c.call(&["SADD", &k, &v]) {
                        Ok(Value::Int(1)) => {
                            acked.lock().unwrap().insert(k, v);
                        }
                        Ok(_) => {}
                        Err(_) => conn = None,
                    }
                }
            })
        })
        .collect()
}

#[test]
fn power_cuts_lose_no_acknowledged_write() {
    let mut c = InProcess::start(3);
    let acked = Arc::new(Mutex::new(BTreeMap::new()));
    for round in ["leader", "follower"] {
        let leader = c.leader();
        let victim = if round == "leader" {
            leader
        } else {
            c.members.keys().copied().find(|&i| i != leader).unwrap()
        };
        let ports: Vec<u16> = c.members.keys().map(|&id| c.port(id)).collect();
        let stop = Arc::new(AtomicBool::new(false));
        let threads = writers(ports, &stop, &acked, round);
        // Enough writes for snapshots to purge the logs, then the cut with writes in flight.
        let until = Instant::now() + Duration::from_secs(30);
        while acked.lock().unwrap().len() < if round == "leader" { 400 } else { 800 } {
            assert!(Instant::now() < until, "writes do not get through");
            std::thread::sleep(Duration::from_millis(20));
        }
        c.power_cut(victim);
        std::thread::sleep(Duration::from_millis(800));
        stop.store(true, Ordering::Relaxed);
        for t in threads {
            t.join().unwrap();
        }
        c.launch(victim);
        c.converged();
        // Every acknowledged write, on the node that lost power (its own data, read
        // locally) and through a linearizable read on another.
        let acked = acked.lock().unwrap().clone();
        let other = c.members.keys().copied().find(|&i| i != victim).unwrap();
        let mut local = Conn::connect(c.port(victim), Duration::from_secs(10)).unwrap();
        local.call(&["READONLY"]).unwrap();
        let mut lin = Conn::connect(c.port(other), Duration::from_secs(10)).unwrap();
        for (k, v) in &acked {
            for conn in [&mut local, &mut lin] {
                assert_eq!(
                    conn.call(&["SISMEMBER", k, v]).unwrap(),
                    Value::Int(1),
                    "{round} power cut lost acknowledged SADD {k} {v}"
                );
            }
        }
        println!(
            "power cut on the {round} (node {victim}): {} acknowledged writes kept",
            acked.len()
        );
    }
}
