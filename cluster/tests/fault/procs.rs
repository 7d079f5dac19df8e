//! Clusters of `bloomkv-cluster` server processes on loopback, every node pair's Raft
//! traffic routed through a proxy the test controls (`bloomkv_cluster_testkit::proxy`), and the
//! nemesis's tools: kill -9 and restart, SIGSTOP and SIGCONT, cutting, blackholing and
//! delaying links.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bloomkv_cluster_testkit::proxy::{Link, Proxy};

use crate::resp::{Value, call_until};

/// A free loopback port (bound and released: the process binds it again).
pub fn free_port() -> u16 {
    // Below the kernel's ephemeral range: a node keeps its ports across restarts, and a
    // port from that range, free while the node is down, may meanwhile become the source
    // port of any outgoing connection on the machine (a pooled HTTP connection holds it for
    // many seconds), and the restart fails with "Address already in use".
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    let (from, to) = (low.saturating_sub(12_000).max(1024), low);
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    // Processes running fault tests at once start at different places.
    let start = std::process::id().wrapping_mul(7919);
    let span = u32::from(to - from);
    for _ in 0..span {
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let port = from + (start.wrapping_add(n) % span) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port in {from}..{to}");
}

pub struct ProcNode {
    pub id: u64,
    pub client_port: u16,
    pub raft_port: u16,
    dir: PathBuf,
    log: PathBuf,
    child: Option<Child>,
    paused: bool,
    /// Times this node was started (its log files are numbered by it).
    starts: u32,
    /// Started with the initial cluster (else it waits to be added).
    bootstrap: bool,
}

impl ProcNode {
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    pub fn is_up(&self) -> bool {
        self.child.is_some()
    }

    pub fn is_paused(&self) -> bool {
        self.paused
    }
}

pub struct ProcCluster {
    pub dir: tempfile::TempDir,
    pub nodes: BTreeMap<u64, ProcNode>,
    /// (from, to): the proxy `from` dials to reach `to`.
    proxies: BTreeMap<(u64, u64), Proxy>,
    extra: Vec<String>,
    initial: String,
    /// The proxies run on it (kept alive with the cluster).
    _rt: tokio::runtime::Runtime,
}

fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "kill {sig} {pid}");
}

impl ProcCluster {
    /// Starts `n` nodes bootstrapped as one cluster, with `extra` flags for every node.
    pub fn start(n: u64, extra: &[&str]) -> ProcCluster {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut nodes = BTreeMap::new();
        for id in 1..=n {
            nodes.insert(
                id,
                ProcNode {
                    id,
                    client_port: free_port(),
                    raft_port: free_port(),
                    dir: dir.path().join(format!("node{id}")),
                    log: dir.path().join(format!("node{id}")),
                    child: None,
                    paused: false,
                    starts: 0,
                    bootstrap: true,
                },
            );
        }
        let mut proxies = BTreeMap::new();
        for from in 1..=n {
            for to in 1..=n {
                if from != to {
                    let target = std::net::SocketAddr::from(([127, 0, 0, 1], nodes[&to].raft_port));
                    proxies.insert((from, to), rt.block_on(Proxy::start(target)).unwrap());
                }
            }
        }
        let initial = nodes
            .values()
            .map(|n| format!("{}=127.0.0.1:{}", n.id, n.raft_port))
            .collect::<Vec<_>>()
            .join(",");
        let mut c = ProcCluster {
            dir,
            nodes,
            proxies,
            extra: extra.iter().map(|s| s.to_string()).collect(),
            initial,
            _rt: rt,
        };
        for id in 1..=n {
            c.spawn(id);
        }
        for id in 1..=n {
            c.wait_serving(id);
        }
        c
    }

    fn spawn(&mut self, id: u64) {
        let routes: Vec<String> = self
            .proxies
            .iter()
            .filter(|((from, _), _)| *from == id)
            .map(|((_, to), p)| format!("--route={to}={}", p.addr()))
            .collect();
        let initial = self.initial.clone();
        let n = self.nodes.get_mut(&id).unwrap();
        n.starts += 1;
        let bootstrap: Vec<String> = if n.bootstrap {
            vec!["--initial-cluster".into(), initial]
        } else {
            Vec::new()
        };
        std::fs::create_dir_all(&n.log).unwrap();
        let log = std::fs::File::create(n.log.with_extension(format!("log{}", n.starts))).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_bloomkv-cluster"))
            .arg("--node-id")
            .arg(id.to_string())
            .arg("--port")
            .arg(n.client_port.to_string())
            .arg("--dir")
            .arg(&n.dir)
            .arg("--cluster-addr")
            .arg(format!("127.0.0.1:{}", n.raft_port))
            .args(&bootstrap)
            .arg("--threads")
            .arg("2")
            .args(&routes)
            .args(
                std::env::var("BLOOMKV_FAULT_LOGLEVEL")
                    .map(|l| vec!["--loglevel".to_string(), l])
                    .unwrap_or_default(),
            )
            .args(&self.extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log))
            .spawn()
            .expect("spawning bloomkv-cluster");
        n.child = Some(child);
        n.paused = false;
    }

    /// Starts node `id`, not a member yet (no `--initial-cluster`): it waits to be added.
    /// Its Raft traffic is not routed through proxies.
    pub fn add_node(&mut self, id: u64) {
        self.nodes.insert(
            id,
            ProcNode {
                id,
                client_port: free_port(),
                raft_port: free_port(),
                dir: self.dir.path().join(format!("node{id}")),
                log: self.dir.path().join(format!("node{id}")),
                child: None,
                paused: false,
                starts: 0,
                bootstrap: false,
            },
        );
        self.spawn(id);
        self.wait_serving(id);
    }

    /// Forgets node `id` (after it left the cluster): killed and no longer counted.
    pub fn forget(&mut self, id: u64) {
        self.kill(id);
        self.nodes.remove(&id);
    }

    /// Waits until node `id` answers PING.
    pub fn wait_serving(&self, id: u64) {
        let port = self.nodes[&id].client_port;
        call_until(
            port,
            &["PING"],
            Duration::from_secs(30),
            |v| matches!(v, Value::Status(s) if s == "PONG"),
        );
    }

    /// kill -9 (the process gets no chance to do anything).
    pub fn kill(&mut self, id: u64) {
        let n = self.nodes.get_mut(&id).unwrap();
        if let Some(mut c) = n.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        n.paused = false;
    }

    /// Starts a stopped or killed node again on the same ports and directory.
    pub fn restart(&mut self, id: u64) {
        assert!(!self.nodes[&id].is_up(), "node {id} is running");
        // The ports were ours a moment ago; a quick restart may need a few tries.
        self.spawn(id);
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            if ping(self.nodes[&id].client_port) {
                return;
            }
            let exited = self
                .nodes
                .get_mut(&id)
                .and_then(|n| n.child.as_mut())
                .and_then(|c| c.try_wait().ok().flatten());
            if let Some(status) = exited {
                assert!(
                    Instant::now() < until,
                    "node {id} keeps failing to start ({status}): {}",
                    self.log_tail(id)
                );
                self.nodes.get_mut(&id).unwrap().child = None;
                std::thread::sleep(Duration::from_millis(200));
                self.spawn(id);
            }
            assert!(
                Instant::now() < until,
                "node {id} does not answer: {}",
                self.log_tail(id)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn pause(&mut self, id: u64) {
        let n = self.nodes.get_mut(&id).unwrap();
        if let (Some(pid), false) = (n.pid(), n.paused) {
            signal(pid, "-STOP");
            n.paused = true;
        }
    }

    pub fn resume(&mut self, id: u64) {
        let n = self.nodes.get_mut(&id).unwrap();
        if let (Some(pid), true) = (n.pid(), n.paused) {
            signal(pid, "-CONT");
            n.paused = false;
        }
    }

    /// What the link `from` -> `to` does (the connections `from` opens to `to`).
    pub fn link(&self, from: u64, to: u64, link: Link) {
        self.proxies[&(from, to)].set(link);
    }

    /// Every link passes again, every paused node runs, every down node restarts.
    pub fn heal(&mut self) {
        for p in self.proxies.values() {
            p.set(Link::Pass);
        }
        let ids: Vec<u64> = self.nodes.keys().copied().collect();
        for id in &ids {
            self.resume(*id);
        }
        for id in ids {
            if !self.nodes[&id].is_up() {
                self.restart(id);
            }
        }
    }

    pub fn ids(&self) -> Vec<u64> {
        self.nodes.keys().copied().collect()
    }

    /// Whether node `id`'s process runs.
    pub fn is_up(&self, id: u64) -> bool {
        self.nodes[&id].is_up()
    }

    pub fn port(&self, id: u64) -> u16 {
        self.nodes[&id].client_port
    }

    /// The leader every running node agrees on (asked over RESP: `CLUSTER LEADER`).
    pub fn wait_leader(&self) -> u64 {
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            let mut seen = Vec::new();
            for n in self.nodes.values().filter(|n| n.is_up() && !n.paused) {
                let v = crate::resp::Conn::connect(n.client_port, Duration::from_secs(2))
                    .and_then(|mut c| c.call(&["CLUSTER", "LEADER"]));
                seen.push(match v {
                    Ok(Value::Int(l)) => Some(l as u64),
                    _ => None,
                });
            }
            if let Some(Some(l)) = seen.first().copied()
                && seen.iter().all(|s| *s == Some(l))
            {
                return l;
            }
            assert!(Instant::now() < until, "no agreed leader: {seen:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until every node applied the leader's whole log (`CLUSTER INFO`: lag 0 and
    /// state up for all).
    pub fn wait_converged(&self) {
        let until = Instant::now() + Duration::from_secs(120);
        loop {
            let leader = self.wait_leader();
            let text = crate::resp::Conn::connect(self.port(leader), Duration::from_secs(5))
                .and_then(|mut c| c.call(&["CLUSTER", "INFO"]))
                .map(|v| v.text())
                .unwrap_or_default();
            let nodes: Vec<&str> = text.lines().filter(|l| l.starts_with("node")).collect();
            if nodes.len() == self.nodes.len()
                && nodes
                    .iter()
                    .all(|l| l.contains("state=up") && l.contains(",lag=0"))
            {
                return;
            }
            if Instant::now() >= until {
                let tails: Vec<String> = self
                    .ids()
                    .into_iter()
                    .map(|id| format!("node {id}:\n{}", self.log_tail(id)))
                    .collect();
                panic!("not converged:\n{text}\n{}", tails.join("\n"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Everything node `id` logged since its last start.
    pub fn log_text(&self, id: u64) -> String {
        let n = &self.nodes[&id];
        std::fs::read_to_string(n.log.with_extension(format!("log{}", n.starts)))
            .unwrap_or_default()
    }

    /// The last lines of node `id`'s current log, for failure messages.
    pub fn log_tail(&self, id: u64) -> String {
        let text = self.log_text(id);
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

/// One quick PING: true when it answers.
fn ping(port: u16) -> bool {
    crate::resp::Conn::connect(port, Duration::from_millis(500))
        .and_then(|mut c| c.call(&["PING"]))
        .is_ok()
}

impl Drop for ProcCluster {
    fn drop(&mut self) {
        for id in self.ids() {
            self.resume(id);
            self.kill(id);
        }
        // A failed test keeps every node's logs (the directory goes with the cluster), and
        // so does any run with BLOOMKV_FAULT_KEEP_LOGS set (to study a figure's slow cases).
        if std::thread::panicking() || std::env::var_os("BLOOMKV_FAULT_KEEP_LOGS").is_some() {
            let keep = std::env::temp_dir().join(format!(
                "bloomkv-fault-logs-{}-{}",
                std::process::id(),
                self.nodes.values().next().map_or(0, |n| n.client_port)
            ));
            if std::fs::create_dir_all(&keep).is_ok() {
                for n in self.nodes.values() {
                    for start in 1..=n.starts {
                        let log = n.log.with_extension(format!("log{start}"));
                        let name = format!("node{}.log{start}", n.id);
                        let _ = std::fs::copy(&log, keep.join(name));
                    }
                }
                eprintln!("the nodes' logs are kept in {}", keep.display());
            }
        }
    }
}
