//! bloomkv-server in cluster mode: a [`Node`] whose state machine is the server's command
//! layer, and the server serving clients on top of it (the `bloomkv-cluster` binary).
//!
//! ```no_run
//! use clap::Parser;
//! use bloomkv_cluster::redis_server::{ClusterArgs, ClusterServer};
//!
//! let args = ClusterArgs::parse_from([
//!     "bloomkv-cluster", "--node-id", "1", "--port", "6381", "--dir", "n1",
//!     "--cluster-addr", "127.0.0.1:7001",
//!     "--initial-cluster", "1=127.0.0.1:7001,2=127.0.0.1:7002,3=127.0.0.1:7003",
//! ]);
//! let node = ClusterServer::start(args)?;
//! println!("redis-cli -p {}", node.client_addr().port());
//! node.shutdown()?;
//! # Ok::<(), bloomkv_cluster::Error>(())
//! ```

mod machine;
mod replicator;
mod tracing_bridge;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bloomkv::env::Env;
use bloomkv_server::replica::{Applier, Cluster};
use bloomkv_server::{Config, Server};
use clap::Parser;

pub use machine::ServerMachine;
pub use replicator::{NodeReplicator, node_status};

use crate::error::{Error, Result};
use crate::node::Node;
use crate::node::config::{NodeConfig, parse_initial_cluster};

/// The flags of `bloomkv-cluster`: every flag of bloomkv-server, and the node's.
#[derive(Clone, Debug, Parser)]
#[command(
    name = "bloomkv-cluster",
    version,
    about = "bloomkv-server in cluster mode: a Redis-protocol server replicated with Raft"
)]
pub struct ClusterArgs {
    /// The server's flags; `--dir` is the node's data directory (Raft log, state machine,
    /// snapshots); `--appendfsync` does not apply (the log is synced on every append).
    #[command(flatten)]
    pub server: Config,
    /// This node's id: a positive integer, fixed for the life of its `--dir`.
    #[arg(long)]
    pub node_id: u64,
    /// `host:port` of this node's Raft endpoint: peers replicate to it there, and
    /// followers forward writes to it there when it leads.
    #[arg(long)]
    pub cluster_addr: String,
    /// First start only: the whole initial membership, `id=host:port,...` (etcd's
    /// `--initial-cluster`), the same on every initial node. Without it a new node waits
    /// to be added (`CLUSTER ADDLEARNER` / `kvctl cluster add` on a member).
    #[arg(long)]
    pub initial_cluster: Option<String>,
    /// Build a snapshot after this many applied entries.
    #[arg(long, default_value_t = 10_000)]
    pub snapshot_every: u64,
    /// Log entries kept below a snapshot (a follower less far behind catches up from the
    /// log instead of a snapshot).
    #[arg(long, default_value_t = 1_000)]
    pub keep_logs: u64,
    /// How long a write, read barrier or membership change waits in all (ms) before
    /// answering -CLUSTERDOWN or -TRYAGAIN.
    #[arg(long, default_value_t = 5_000)]
    pub request_timeout_ms: u64,
    /// Leader heartbeat interval (ms); default: the node's (see docs/CLUSTER.md).
    #[arg(long)]
    pub heartbeat_ms: Option<u64>,
    /// Election timeout range `MIN-MAX` (ms); default: the node's. openraft also holds a
    /// leader lease of MAX after each heartbeat, so a dead leader is replaced after about
    /// MAX plus a random time in the range.
    #[arg(long, value_name = "MIN-MAX")]
    pub election_timeout_ms: Option<String>,
    /// Test hook: dial peer ID at ADDR instead of its membership address (`ID=ADDR`,
    /// repeatable), to route a node pair through a proxy.
    #[arg(long = "route", value_name = "ID=ADDR", hide = true)]
    pub routes: Vec<String>,
    /// `yes`: answer as a Redis Cluster node does, for cluster clients: a keyed command
    /// reaching a follower gets `-MOVED <slot> <leader's host:port>` (reads after
    /// `READONLY` are served), keys in different slots `-CROSSSLOT`. `no` (the default):
    /// every node serves every key, forwarding writes to the leader, for plain clients.
    #[arg(long, default_value = "no", value_parser = parse_yes_no, value_name = "yes|no", action = clap::ArgAction::Set)]
    pub cluster_redirects: bool,
}

fn parse_yes_no(s: &str) -> std::result::Result<bool, String> {
    match s {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err(format!("{s:?}: expected yes or no")),
    }
}

impl ClusterArgs {
    /// The node's configuration these flags ask for, on file system `env`.
    ///
    /// # Errors
    /// [`Error::Config`] for a bad `--initial-cluster` or `--route`.
    pub fn node_config(&self, env: Option<Arc<dyn Env>>) -> Result<NodeConfig> {
        let mut c = NodeConfig::new(
            self.node_id,
            self.cluster_addr.clone(),
            self.server.dir.clone(),
        );
        c.initial_cluster = self
            .initial_cluster
            .as_deref()
            .map(parse_initial_cluster)
            .transpose()?;
        c.snapshot_every = self.snapshot_every.max(1);
        c.keep_logs_after_snapshot = self.keep_logs;
        c.request_timeout = Duration::from_millis(self.request_timeout_ms.max(100));
        if let Some(h) = self.heartbeat_ms {
            c.heartbeat = Duration::from_millis(h);
        }
        if let Some(r) = &self.election_timeout_ms {
            let (lo, hi) = r
                .split_once('-')
                .and_then(|(a, b)| {
                    Some((a.trim().parse::<u64>().ok()?, b.trim().parse::<u64>().ok()?))
                })
                .ok_or_else(|| {
                    Error::Config(format!("--election-timeout-ms {r:?}: want MIN-MAX"))
                })?;
            c.election_timeout = (Duration::from_millis(lo), Duration::from_millis(hi));
        }
        c.options = self.server.engine_options();
        if let Some(env) = env {
            c.options.env = env;
        }
        let mut routes = BTreeMap::new();
        for r in &self.routes {
            let (id, addr) = r
                .split_once('=')
                .and_then(|(i, a)| Some((i.parse::<u64>().ok()?, a.to_string())))
                .ok_or_else(|| Error::Config(format!("--route {r:?}: want ID=HOST:PORT")))?;
            routes.insert(id, addr);
        }
        c.routes = routes;
        Ok(c)
    }
}

/// Where clients are told to connect to this node: its listening address, or, when it
/// listens on every interface, its Raft endpoint's host with the client port.
fn advertised(listening: SocketAddr, raft_host: &str) -> String {
    if listening.ip().is_unspecified() {
        format!("{raft_host}:{}", listening.port())
    } else {
        listening.to_string()
    }
}

/// A running cluster node with its Redis-protocol server.
pub struct ClusterServer {
    node: Arc<Node>,
    server: Option<Server>,
    rt: Option<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for ClusterServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterServer")
            .field("node", &self.node)
            .finish_non_exhaustive()
    }
}

impl ClusterServer {
    /// Starts the node (its databases in `--dir`, its Raft endpoint on `--cluster-addr`),
    /// then the server on `--bind`/`--port`.
    ///
    /// # Errors
    /// The node's errors ([`Node::start`]: a bad configuration, a data directory of another
    /// node, storage trouble, an address in use); [`Error::Server`] when the server cannot
    /// listen.
    pub fn start(args: ClusterArgs) -> Result<ClusterServer> {
        ClusterServer::start_with_env(args, None)
    }

    /// [`ClusterServer::start`] with the node's files on `env` (tests inject faults).
    ///
    /// # Errors
    /// As [`ClusterServer::start`].
    pub fn start_with_env(args: ClusterArgs, env: Option<Arc<dyn Env>>) -> Result<ClusterServer> {
        let applier = Applier::new(args.node_id);
        let mut config = args.node_config(env)?;
        // The standalone server's engine options, with its GC judging expiry by the
        // replicated log's clock (the time every node's commands use), not this machine's.
        config.options = bloomkv::Options {
            env: Arc::clone(&config.options.env),
            ..args
                .server
                .replicated_engine_options(Arc::clone(applier.log_clock()))
        };
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("bloomkv-raft")
            .enable_all()
            .build()
            .map_err(|e| Error::Network(format!("starting the node's runtime: {e}")))?;
        let machine = Arc::new(ServerMachine::new(Arc::clone(&applier)));
        let node = Arc::new(rt.block_on(Node::start(config, machine))?);
        // The log's role letter follows the node: `M` while it leads, `S` otherwise.
        let mut roles = node.roles();
        rt.spawn(async move {
            loop {
                let leads = *roles.borrow_and_update() == crate::Role::Leader;
                bloomkv_server::log::set_role(if leads { 'M' } else { 'S' });
                if roles.changed().await.is_err() {
                    return;
                }
            }
        });
        let mut cluster = Cluster::new(
            Arc::new(NodeReplicator::new(Arc::clone(&node), rt.handle().clone())),
            applier,
        );
        cluster.redirects = args.cluster_redirects;
        let raft_host = args
            .cluster_addr
            .rsplit_once(':')
            .map_or(args.cluster_addr.as_str(), |(h, _)| h)
            .to_string();
        let server = match Server::start_replicated(args.server, cluster) {
            Ok(s) => s,
            Err(e) => {
                let _ = rt.block_on(node.shutdown());
                return Err(Error::Server(e.to_string()));
            }
        };
        node.set_client_addr(advertised(server.local_addr(), &raft_host));
        Ok(ClusterServer {
            node,
            server: Some(server),
            rt: Some(rt),
        })
    }

    /// The address clients connect to.
    pub fn client_addr(&self) -> SocketAddr {
        self.server
            .as_ref()
            .map_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)), Server::local_addr)
    }

    /// The Raft node.
    pub fn node(&self) -> &Arc<Node> {
        &self.node
    }

    /// A function that asks the server to stop (from a signal handler, another thread);
    /// [`ClusterServer::wait`] then returns.
    pub fn stopper(&self) -> impl Fn() + Send + Sync + 'static {
        let s = self.server.as_ref().map(Server::stopper);
        move || {
            if let Some(s) = &s {
                s();
            }
        }
    }

    /// Stops the server (connections finish their commands, up to 5 s), then the node.
    ///
    /// # Errors
    /// [`Error::Server`] from the server's shutdown, or the node's.
    pub fn shutdown(mut self) -> Result<()> {
        if let Some(s) = self.server.as_ref() {
            s.stopper()();
        }
        self.finish()
    }

    /// Waits until the server stops (a client's `SHUTDOWN`, or [`ClusterServer::stopper`]),
    /// then stops the node.
    ///
    /// # Errors
    /// As [`ClusterServer::shutdown`].
    pub fn wait(mut self) -> Result<()> {
        self.finish()
    }

    fn finish(&mut self) -> Result<()> {
        let served = match self.server.take() {
            Some(s) => s.wait().map_err(|e| Error::Server(e.to_string())),
            None => Ok(()),
        };
        let stopped = match self.rt.take() {
            Some(rt) => {
                let r = rt.block_on(self.node.shutdown());
                rt.shutdown_timeout(Duration::from_secs(2));
                r
            }
            None => Ok(()),
        };
        served.and(stopped)
    }
}

impl Drop for ClusterServer {
    fn drop(&mut self) {
        if let Some(s) = self.server.as_ref() {
            s.stopper()();
        }
        let _ = self.finish();
    }
}

/// Runs a node until SIGINT, SIGTERM or a client's `SHUTDOWN`, then stops it cleanly.
///
/// # Errors
/// As [`ClusterServer::start`] and [`ClusterServer::shutdown`].
pub fn run(args: ClusterArgs) -> Result<()> {
    bloomkv_server::log::configure(args.server.loglevel, args.server.logfile.as_deref())
        .map_err(|e| Error::Config(format!("the log file: {e}")))?;
    // Another subscriber set by an embedding program wins; the node's own notices still go out.
    let _ = tracing::subscriber::set_global_default(tracing_bridge::Bridge);
    let (id, raft) = (args.node_id, args.cluster_addr.clone());
    let node = ClusterServer::start(args)?;
    bloomkv_server::log::notice(&format!(
        "bloomkv-cluster node {id} listening on {} (Raft endpoint {raft})",
        node.client_addr()
    ));
    let stop = node.stopper();
    // Signals are watched on a thread of their own; the node's own runtime must not be
    // blocked on them.
    std::thread::Builder::new()
        .name("bloomkv-signals".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                #[cfg(unix)]
                {
                    use tokio::signal::unix::{SignalKind, signal};
                    match signal(SignalKind::terminate()) {
                        Ok(mut term) => tokio::select! {
                            _ = tokio::signal::ctrl_c() => {}
                            _ = term.recv() => {}
                        },
                        Err(_) => {
                            let _ = tokio::signal::ctrl_c().await;
                        }
                    }
                }
                #[cfg(not(unix))]
                let _ = tokio::signal::ctrl_c().await;
            });
            bloomkv_server::log::notice("shutting down");
            stop();
        })
        .map_err(|e| Error::Network(format!("starting the signal thread: {e}")))?;
    let r = node.wait();
    bloomkv_server::log::notice("stopped");
    r
}
