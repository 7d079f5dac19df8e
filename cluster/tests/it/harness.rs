//! In-process clusters for the scenarios: nodes on loopback ports, each with its own
//! data directory and fault env (simulated fsyncs, so a power cut can be modelled and the
//! tests stay fast), restartable on the same address.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bloomkv::env::fault::{FaultController, FaultEnv};
use bloomkv::env::{Env, StdEnv};
use bloomkv_cluster::kv::{KvMachine, KvRequest, KvResponse};
use bloomkv_cluster::{Error, Node, NodeConfig, Role};
use bloomkv_cluster_testkit::proxy::Proxy;

pub type Tweak = Arc<dyn Fn(&mut NodeConfig) + Send + Sync>;

pub struct Cluster {
    pub dir: tempfile::TempDir,
    nodes: BTreeMap<u64, Option<Arc<Node>>>,
    pub machines: BTreeMap<u64, Arc<KvMachine>>,
    pub addrs: BTreeMap<u64, String>,
    envs: BTreeMap<u64, (Arc<dyn Env>, Arc<FaultController>)>,
    initial: BTreeMap<u64, String>,
    tweak: Tweak,
}

/// Binds `addr` (port 0 for a new one), retrying while the old listener is going away.
pub fn bind(addr: &str) -> std::net::TcpListener {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        match std::net::TcpListener::bind(addr) {
            Ok(l) => return l,
            Err(e) if Instant::now() < until => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => panic!("binding {addr}: {e}"),
        }
    }
}

/// A listener on a new local port for each of nodes `1..=n`, and their addresses: bound
/// before any node starts, so every node knows every address from the first moment.
pub fn bind_all(n: u64) -> (BTreeMap<u64, std::net::TcpListener>, BTreeMap<u64, String>) {
    let mut listeners = BTreeMap::new();
    let mut addrs = BTreeMap::new();
    for id in 1..=n {
        let l = bind("127.0.0.1:0");
        addrs.insert(id, l.local_addr().unwrap().to_string());
        listeners.insert(id, l);
    }
    (listeners, addrs)
}

impl Cluster {
    /// Starts `n` nodes (ids 1..=n) bootstrapped as one cluster.
    pub async fn start(n: u64, tweak: impl Fn(&mut NodeConfig) + Send + Sync + 'static) -> Cluster {
        Cluster::start_some(n, n, tweak).await
    }

    /// Like [`Cluster::start`], with an election timeout of 2-4 s: for tests that name a
    /// leader and a follower and rely on them keeping their roles, which a loaded machine's
    /// missed heartbeats (fsyncs taking a second) would otherwise move now and then.
    pub async fn start_steady(
        n: u64,
        tweak: impl Fn(&mut NodeConfig) + Send + Sync + 'static,
    ) -> Cluster {
        let c = Cluster::start(n, move |cfg| {
            cfg.election_timeout = (Duration::from_secs(2), Duration::from_secs(4));
            tweak(cfg);
        })
        .await;
        // The first election at the bootstrap finds the others not yet serving; the next
        // comes an election timeout later, 2-4 s here: tests start once there is a leader.
        c.wait_leader().await;
        c
    }

    /// Like [`Cluster::start`], but only nodes 1..=`up` start (the others stay down).
    pub async fn start_some(
        n: u64,
        up: u64,
        tweak: impl Fn(&mut NodeConfig) + Send + Sync + 'static,
    ) -> Cluster {
        let (listeners, addrs) = bind_all(n);
        let mut c = Cluster {
            dir: tempfile::tempdir().unwrap(),
            nodes: BTreeMap::new(),
            machines: BTreeMap::new(),
            initial: addrs.clone(),
            addrs,
            envs: BTreeMap::new(),
            tweak: Arc::new(tweak),
        };
        for (id, l) in listeners {
            if id <= up {
                c.launch(id, l, true).await;
            }
        }
        c
    }

    /// Starts node `id` of the initial cluster without `--initial-cluster`: it has no
    /// membership until a leader sends it one (as a node whose bootstrap lost the race
    /// to the first vote request).
    pub async fn launch_unbootstrapped(&mut self, id: u64) {
        let l = bind(&self.addrs[&id]);
        self.launch(id, l, false).await;
    }

    /// Starts node `id` (not in the initial cluster: it waits to be added).
    pub async fn add_node(&mut self, id: u64) {
        let l = bind("127.0.0.1:0");
        self.addrs.insert(id, l.local_addr().unwrap().to_string());
        self.launch(id, l, false).await;
    }

    pub fn config(&self, id: u64, bootstrap: bool) -> NodeConfig {
        let (env, _) = self.envs.get(&id).expect("env made at first launch");
        let mut cfg = NodeConfig::new(
            id,
            self.addrs[&id].clone(),
            self.dir.path().join(format!("node{id}")),
        );
        cfg.initial_cluster = bootstrap.then(|| self.initial.clone());
        cfg.options.env = Arc::clone(env);
        // Small tables and memtables: snapshots and restarts move real table files.
        cfg.options.memtable_bytes = 64 << 10;
        (self.tweak)(&mut cfg);
        cfg
    }

    async fn launch(&mut self, id: u64, listener: std::net::TcpListener, bootstrap: bool) {
        self.envs.entry(id).or_insert_with(|| {
            let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
            ctl.set_simulated_sync(true);
            (env, ctl)
        });
        let cfg = self.config(id, bootstrap);
        let machine = Arc::new(KvMachine::new());
        let mut listener = Some(listener);
        let until = Instant::now() + Duration::from_secs(10);
        let node = loop {
            let l = match listener.take() {
                Some(l) => l,
                None => bind(&self.addrs[&id]),
            };
            let m: Arc<dyn bloomkv_cluster::Machine> = machine.clone();
            match Node::start_on(l, cfg.clone(), m).await {
                Ok(n) => break n,
                // The previous incarnation's databases close once its last tasks end.
                Err(Error::Db {
                    source: bloomkv::Error::Locked(_),
                    ..
                }) if Instant::now() < until => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => panic!("starting node {id}: {e}"),
            }
        };
        self.machines.insert(id, machine);
        self.nodes.insert(id, Some(Arc::new(node)));
    }

    pub fn node(&self, id: u64) -> Arc<Node> {
        Arc::clone(
            self.nodes[&id]
                .as_ref()
                .unwrap_or_else(|| panic!("node {id} is down")),
        )
    }

    /// Node `id`'s fault controller (it outlives restarts: one per node).
    pub fn fault(&self, id: u64) -> Arc<FaultController> {
        Arc::clone(&self.envs[&id].1)
    }

    pub fn running(&self) -> Vec<u64> {
        self.nodes
            .iter()
            .filter(|(_, n)| n.is_some())
            .map(|(id, _)| *id)
            .collect()
    }

    /// Stops node `id` (its Raft core and endpoint; unsynced data stays in the OS).
    pub async fn stop(&mut self, id: u64) {
        let node = self
            .nodes
            .get_mut(&id)
            .and_then(Option::take)
            .expect("running");
        let _ = node.shutdown().await;
        // Clones held by test tasks end with them; the databases close with the last.
        drop(node);
    }

    /// A power cut on node `id`: stops it, then cuts its files back to what was synced.
    pub async fn crash(&mut self, id: u64) {
        self.stop(id).await;
        self.crash_stopped(id).await;
    }

    /// The power cut of a node already stopped.
    pub async fn crash_stopped(&mut self, id: u64) {
        self.wait_closed(id).await;
        let (_, ctl) = &self.envs[&id];
        ctl.crash(&StdEnv).unwrap();
    }

    /// Waits until node `id`'s databases are closed (the last tasks of a stopped node may
    /// hold them a moment): the crash model needs them closed.
    async fn wait_closed(&self, id: u64) {
        let dir = self.dir.path().join(format!("node{id}"));
        let mut dbs = vec![dir.join("log")];
        for e in std::fs::read_dir(dir.join("sm")).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dbs.push(p);
            }
        }
        let until = Instant::now() + Duration::from_secs(10);
        for db in dbs {
            while let Err(bloomkv::Error::Locked(_)) =
                bloomkv::Db::open_read_only(&db, bloomkv::Options::default())
            {
                assert!(Instant::now() < until, "{} stays open", db.display());
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }

    /// Restarts node `id` on its address.
    pub async fn restart(&mut self, id: u64) {
        let l = bind(&self.addrs[&id]);
        self.launch(id, l, true).await;
    }

    /// Waits until a running node leads and every running node names it.
    pub async fn wait_leader(&self) -> u64 {
        let until = Instant::now() + Duration::from_secs(15);
        loop {
            let running = self.running();
            let leaders: Vec<u64> = running
                .iter()
                .filter(|id| self.node(**id).status().role == Role::Leader)
                .copied()
                .collect();
            if let [l] = leaders[..]
                && running.iter().all(|id| self.node(*id).leader() == Some(l))
            {
                return l;
            }
            assert!(Instant::now() < until, "no leader among {running:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// A settled cluster's leader and one follower, the follower reaching the leader through
    /// a proxy the caller controls (it passes everything until told otherwise).
    pub async fn follower_through_proxy(&self) -> (u64, u64, Proxy) {
        self.wait_converged().await;
        let leader = self.wait_leader().await;
        let follower = self.running().into_iter().find(|&id| id != leader).unwrap();
        let proxy = Proxy::start(self.addrs[&leader].parse().unwrap())
            .await
            .unwrap();
        self.node(follower)
            .set_route(leader, Some(proxy.addr().to_string()));
        (leader, follower, proxy)
    }

    /// Waits until every running node applied the leader's whole log.
    pub async fn wait_converged(&self) {
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            let leader = self.wait_leader().await;
            let last = self.node(leader).status().last_log_index;
            let statuses: Vec<_> = self
                .running()
                .iter()
                .map(|id| self.node(*id).status())
                .collect();
            if statuses.iter().all(|s| s.applied_index == last) {
                return;
            }
            assert!(
                Instant::now() < until,
                "not converged: leader last {last:?}, {statuses:#?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Sends a KV write through node `via`.
    pub async fn write(&self, via: u64, req: KvRequest) -> Result<KvResponse, Error> {
        let reply = self.node(via).write(req.encode()).await?;
        Ok(KvResponse::decode(&reply).unwrap())
    }

    /// Sets `key{i}` = `v{i}` through running nodes in turn, recording each in `acked`.
    pub async fn fill(&self, range: std::ops::Range<u32>, acked: &mut BTreeMap<Vec<u8>, Vec<u8>>) {
        let running = self.running();
        for i in range {
            let (k, v) = (format!("key{i:05}"), format!("v{i}"));
            let via = running[i as usize % running.len()];
            let r = self.write(via, KvRequest::set(k.clone(), v.clone())).await;
            assert_eq!(r.unwrap(), KvResponse::Ok, "write {k} via {via}");
            acked.insert(k.into_bytes(), v.into_bytes());
        }
    }

    /// Checks that every running node holds exactly `acked` (after convergence).
    pub async fn check_all(&self, acked: &BTreeMap<Vec<u8>, Vec<u8>>) {
        self.wait_converged().await;
        for id in self.running() {
            let db = self.node(id).state_db();
            for (k, v) in acked {
                assert_eq!(
                    KvMachine::get(&db, k).unwrap().as_ref(),
                    Some(v),
                    "node {id}: acknowledged key {} lost",
                    String::from_utf8_lossy(k)
                );
            }
            assert_eq!(
                self.machines[&id].len(),
                acked.len() as u64,
                "node {id}'s key count"
            );
        }
    }
}
