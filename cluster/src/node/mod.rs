//! The node API the server sits on: start, write, read barrier, membership, status.

mod batch;
pub(crate) mod config;
pub(crate) mod core;
pub(crate) mod election;
pub(crate) mod events;
mod forwarder;
mod proposer;
mod read_index;
mod route;
mod session;
pub(crate) mod sharded;
pub(crate) mod status;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bloomkv::env::Env;
use openraft::error::{InitializeError, RaftError};
use openraft::{BasicNode, SnapshotPolicy};
use parking_lot::Mutex;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use self::config::NodeConfig;
use self::core::Core;
use self::session::Session;
use self::status::{PeerStatus, Role, Status};
use crate::error::{Error, Result};
use crate::log_store::LogStore;
use crate::machine::Machine;
use crate::net::client::{NetworkFactory, Transport};
use crate::net::routes::Routes;
use crate::net::server;
use crate::net::wire::{Admin, Done, Op};
use crate::state_db::StateDb;
use crate::state_machine::StateMachine;
use crate::types::{Raft, Request};

/// The node's own background tasks (election timer, event log) and what stops them.
type Tasks = (tokio::sync::watch::Sender<bool>, Vec<JoinHandle<()>>);

/// The file in the data directory naming the node it belongs to.
const NODE_FILE: &str = "NODE";

/// A running cluster node: a Raft member with its log and state-machine databases and its
/// HTTP endpoint. Every method may be called on any node; operations that need the leader
/// are forwarded to it.
///
/// # Examples
/// A single-node cluster with the test machine (a three-node one only differs in the
/// initial cluster and in starting the other two):
/// ```
/// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use bloomkv_cluster::kv::{KvMachine, KvRequest, KvResponse};
/// use bloomkv_cluster::{Node, NodeConfig};
///
/// let dir = tempfile::tempdir()?;
/// let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
/// let addr = listener.local_addr()?.to_string();
/// let mut config = NodeConfig::new(1, addr.clone(), dir.path());
/// config.initial_cluster = Some([(1, addr)].into());
/// let node = Node::start_on(listener, config, Arc::new(KvMachine::new())).await?;
///
/// let reply = node.write(KvRequest::incr("hits", 2).encode()).await?;
/// assert_eq!(KvResponse::decode(&reply)?, KvResponse::Int(2));
/// node.linearizable_read_barrier().await?;
/// assert_eq!(KvMachine::get(&node.state_db(), b"hits")?, Some(b"2".to_vec()));
/// node.shutdown().await?;
/// # Ok(()) }
/// ```
pub struct Node {
    core: Arc<Core>,
    session: Session,
    local_addr: SocketAddr,
    /// Its HTTP endpoint, when it serves one of its own (a group of a [`crate::ShardedNode`]
    /// is served by the node's).
    server: Mutex<Option<Serving>>,
    tasks: Mutex<Option<Tasks>>,
    roles: tokio::sync::watch::Sender<Role>,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("id", &self.core.id)
            .field("addr", &self.local_addr)
            .finish()
    }
}

/// Checks (or, in a new directory, writes) the id file of the data directory.
fn claim_data_dir(env: &dyn Env, dir: &Path, id: u64) -> Result<()> {
    let io = |e| Error::db(format!("preparing data directory {}", dir.display()), e);
    env.create_dir_all(dir).map_err(io)?;
    let path = dir.join(NODE_FILE);
    if env.exists(&path) {
        let bytes = env.read_all(&path).map_err(io)?;
        let text = String::from_utf8_lossy(&bytes);
        let found: u64 = text
            .trim()
            .parse()
            .map_err(|_| Error::Storage(format!("{} is damaged: {text:?}", path.display())))?;
        if found != id {
            return Err(Error::Config(format!(
                "data directory {} belongs to node {found}, not {id}",
                dir.display()
            )));
        }
        return Ok(());
    }
    crate::fsutil::replace_atomically(env, &path, format!("{id}\n").as_bytes()).map_err(io)
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The node's listener, for its HTTP endpoint.
pub(crate) fn tokio_listener(
    listener: std::net::TcpListener,
) -> Result<(tokio::net::TcpListener, SocketAddr)> {
    let err = |e| Error::Network(format!("listener: {e}"));
    listener.set_nonblocking(true).map_err(err)?;
    let listener = tokio::net::TcpListener::from_std(listener).map_err(err)?;
    let local_addr = listener.local_addr().map_err(err)?;
    Ok((listener, local_addr))
}

/// The node's HTTP client (every group of a node shares it).
pub(crate) fn transport(config: &NodeConfig) -> Result<Transport> {
    let routes = Arc::new(Routes::new(config.routes.clone()));
    Transport::new(routes, Duration::from_secs(1)).map_err(Error::Network)
}

/// Claims the data directory for this node (its `NODE` file).
pub(crate) async fn claim(config: &NodeConfig) -> Result<()> {
    let env = Arc::clone(&config.options.env);
    let (data, id) = (config.data_dir.clone(), config.id);
    tokio::task::spawn_blocking(move || claim_data_dir(env.as_ref(), &data, id))
        .await
        .map_err(|e| Error::Storage(format!("opening the node's storage failed: {e}")))?
}

/// The server task serving `app` on `listener`, and what stops it.
pub(crate) type Serving = (oneshot::Sender<()>, JoinHandle<()>);

/// Serves `app` on `listener` until the sender is used.
pub(crate) fn serve(listener: tokio::net::TcpListener, app: axum::Router) -> Serving {
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stop_rx.await;
            })
            .await;
    });
    (stop_tx, task)
}

/// Stops a server task: asks it to finish, aborts it after 2 s.
pub(crate) async fn stop_serving((stop, task): Serving) {
    let _ = stop.send(());
    let abort = task.abort_handle();
    if tokio::time::timeout(Duration::from_secs(2), task)
        .await
        .is_err()
    {
        abort.abort();
    }
}

impl Node {
    /// Starts a node listening on `config.raft_addr`.
    ///
    /// # Errors
    /// As [`Node::start_on`], and [`Error::Network`] if the address cannot be bound.
    pub async fn start(config: NodeConfig, machine: Arc<dyn Machine>) -> Result<Node> {
        let listener = std::net::TcpListener::bind(&config.raft_addr)
            .map_err(|e| Error::Network(format!("binding {}: {e}", config.raft_addr)))?;
        Node::start_on(listener, config, machine).await
    }

    /// Starts a node serving on `listener` (bound by the caller, e.g. to port 0 in tests;
    /// `config.raft_addr` must still be the address peers reach it at): opens its
    /// databases (restoring the state machine from the local snapshot if a crash left it
    /// behind the purged log), starts Raft and the HTTP endpoint, and on a first start with
    /// `config.initial_cluster` bootstraps that membership. Must be called inside a
    /// multi-threaded tokio runtime.
    ///
    /// # Errors
    /// [`Error::Config`] for a bad configuration or a data directory of another node;
    /// [`Error::Db`] / [`Error::Storage`] when the databases cannot be opened or are
    /// damaged (a database still open elsewhere is [`bloomkv::Error::Locked`] inside
    /// [`Error::Db`]); [`Error::Network`] for listener trouble.
    pub async fn start_on(
        listener: std::net::TcpListener,
        config: NodeConfig,
        machine: Arc<dyn Machine>,
    ) -> Result<Node> {
        config.validate()?;
        if config.shards != 1 {
            return Err(Error::Config(format!(
                "a node of {} shards is started with ShardedNode::start",
                config.shards
            )));
        }
        let (listener, local_addr) = tokio_listener(listener)?;
        let transport = transport(&config)?;
        claim(&config).await?;
        {
            // A directory a node of several groups wrote is not opened as one group (that
            // would start an empty group 0 beside the data). Read-only for one group.
            let env = Arc::clone(&config.options.env);
            let data = config.data_dir.clone();
            tokio::task::spawn_blocking(move || sharded::check_shards(env.as_ref(), &data, 1))
                .await
                .map_err(|e| Error::Storage(format!("checking the data directory: {e}")))??;
        }
        let node = Node::open_group(config.clone(), machine, transport, local_addr).await?;
        if let Some(init) = &config.initial_cluster
            && let Err(e) = node.bootstrap(init).await
        {
            let _ = node.shutdown().await;
            return Err(e);
        }
        // Raft's requests are served only from here on, after the bootstrap: a vote request
        // answered before it would move this node's vote, openraft would then refuse the
        // bootstrap, and the node would be left without a membership, waiting on the
        // requester to lead and send one (a cluster started on a loaded machine never
        // elected a leader that way once). Until now the listener's backlog holds them.
        *node.server.lock() = Some(serve(listener, server::router(Arc::clone(&node.core))));
        Ok(node)
    }

    /// Opens one group's storage (`config.data_dir` is the group's directory) and starts
    /// its Raft core and tasks, calling peers through `transport` (already the group's);
    /// serving its routes is the caller's.
    pub(crate) async fn open_group(
        config: NodeConfig,
        machine: Arc<dyn Machine>,
        transport: Transport,
        local_addr: SocketAddr,
    ) -> Result<Node> {
        let id = config.id;
        let env = Arc::clone(&config.options.env);
        let (log, sm) = {
            let data = config.data_dir.clone();
            let options = config.options.clone();
            tokio::task::spawn_blocking(move || -> Result<_> {
                let log = LogStore::open(&data.join("log"), options.clone())?;
                let sm = StateMachine::open(
                    id,
                    data.join("sm"),
                    data.join("snapshots"),
                    options,
                    machine,
                )?;
                sm.shared.restore_if_behind(log.purged())?;
                Ok((log, sm))
            })
            .await
            .map_err(|e| Error::Storage(format!("opening the node's storage failed: {e}")))??
        };
        let raft_config = openraft::Config {
            cluster_name: "bloomkv".into(),
            heartbeat_interval: millis(config.heartbeat),
            election_timeout_min: millis(config.election_timeout.0),
            election_timeout_max: millis(config.election_timeout.1),
            install_snapshot_timeout: millis(config.snapshot_timeout),
            snapshot_policy: SnapshotPolicy::LogsSinceLast(config.snapshot_every),
            max_in_snapshot_log_to_keep: config.keep_logs_after_snapshot,
            // Elections are started by `election::run`, after a pre-vote.
            enable_elect: false,
            ..Default::default()
        }
        .validate()
        .map_err(|e| Error::Config(e.to_string()))?;
        let network = NetworkFactory {
            id,
            transport: transport.clone(),
            env: Arc::clone(&env),
            snapshot_timeout: config.snapshot_timeout,
        };
        let shared = Arc::clone(&sm.shared);
        let committed = log.committed_handle();
        let log_handle = log.clone();
        let raft = Raft::new(id, Arc::new(raft_config), network, log, sm)
            .await
            .map_err(|e| Error::Stopped(format!("starting Raft: {e}")))?;
        let forward_transport = transport.clone();
        let core = Arc::new(Core {
            id,
            raft: raft.clone(),
            sm: shared,
            committed,
            env,
            transport,
            config: config.clone(),
            log: log_handle,
            contact: crate::clock::Stamp::new(),
            granted_prevote: crate::clock::Stamp::new(),
            removed: std::sync::atomic::AtomicBool::new(false),
            counters: self::core::Counters::default(),
            proposer: proposer::Proposer::start(raft.clone(), &config),
            forwarder: forwarder::Forwarder::start(forward_transport, &config),
            read_indexes: read_index::ReadIndexes::default(),
            client_addr: parking_lot::Mutex::new(None),
        });
        // The node's own tasks: its election timer and the log of what happens to it.
        let (stop_tasks, tasks_stopped) = tokio::sync::watch::channel(false);
        let (roles, _) = tokio::sync::watch::channel(Role::Follower);
        let tasks = vec![
            tokio::spawn(election::run(Arc::clone(&core), tasks_stopped.clone())),
            tokio::spawn(events::watch(
                Arc::clone(&core),
                tasks_stopped,
                roles.clone(),
            )),
        ];
        Ok(Node {
            session: Session::new(id),
            core,
            local_addr,
            server: Mutex::new(None),
            tasks: Mutex::new(Some((stop_tasks, tasks))),
            roles,
        })
    }

    /// Whether this group has a membership (bootstrapped, or reached by a leader).
    pub(crate) async fn initialized(&self) -> Result<bool> {
        self.core
            .raft
            .is_initialized()
            .await
            .map_err(|e| Error::Stopped(e.to_string()))
    }

    /// On a first start, bootstraps the membership `init` (openraft then starts an
    /// election at once); nothing once the group has a membership, or when another
    /// node's vote request got here first (its leader brings the membership).
    pub(crate) async fn bootstrap(&self, init: &BTreeMap<u64, String>) -> Result<()> {
        if self.initialized().await? {
            return Ok(());
        }
        let members: BTreeMap<u64, BasicNode> = init
            .iter()
            .map(|(id, addr)| (*id, BasicNode { addr: addr.clone() }))
            .collect();
        match self.core.raft.initialize(members).await {
            Ok(()) | Err(RaftError::APIError(InitializeError::NotAllowed(_))) => Ok(()),
            Err(e) => Err(Error::Config(format!("bootstrapping the cluster: {e}"))),
        }
    }

    pub(crate) fn core(&self) -> &Arc<Core> {
        &self.core
    }

    /// This node's id.
    pub fn id(&self) -> u64 {
        self.core.id
    }

    /// The address the node's HTTP endpoint listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Applies `request` through the replicated log and returns the machine's response: it
    /// returns once a majority of the nodes has the entry on disk and the leader has
    /// applied it. Any node accepts writes: a follower forwards to the leader, following
    /// leader changes, until `config.request_timeout`. Each call is one request id of this
    /// node's client session, so a forward retried after a leader change is applied once.
    ///
    /// # Errors
    /// [`Error::NoLeader`] when no leader took the request in time (not applied);
    /// [`Error::Timeout`] when a leader may have taken it but no answer came in time (the
    /// outcome is unknown); [`Error::Stopped`] when this node's Raft core has stopped;
    /// [`Error::Removed`] when this node was removed from the cluster.
    ///
    /// # Examples
    /// See [`Node`].
    pub async fn write(&self, request: impl Into<Vec<u8>>) -> Result<Vec<u8>> {
        self.core.check_member()?;
        let (id, acked_below) = self.session.begin();
        let req = Request {
            client: self.session.client(),
            id,
            acked_below,
            time_ms: 0,
            body: request.into(),
        };
        let result = self.core.route(Op::Write(req)).await;
        self.session.end(id);
        match result? {
            Done::Reply(b) => Ok(b),
            other => Err(Error::Storage(format!("a write answered {other:?}"))),
        }
    }

    /// Waits until a read of [`Node::state_db`] on this node sees every write acknowledged
    /// (anywhere in the cluster) before this call: asks the leader for its read index (the
    /// leader confirms its leadership with a quorum first), then waits until this node has
    /// applied up to it. Concurrent reads on one node share one request for the read index.
    ///
    /// # Errors
    /// [`Error::NoLeader`] when no leader could confirm in time; [`Error::Timeout`] when this
    /// node did not catch up in time; [`Error::Stopped`]; [`Error::Removed`].
    pub async fn linearizable_read_barrier(&self) -> Result<()> {
        self.core.check_member()?;
        let start = Instant::now();
        let index = self.core.shared_read_index().await?;
        if self.core.sm.applied().is_some_and(|a| a.index >= index) || index == 0 {
            return Ok(());
        }
        let left = self
            .core
            .config
            .request_timeout
            .saturating_sub(start.elapsed());
        self.core
            .raft
            .wait(Some(left))
            .applied_index_at_least(Some(index), "read barrier")
            .await
            .map(|_| ())
            .map_err(|e| match e {
                openraft::metrics::WaitError::Timeout(..) => Error::Timeout {
                    waited: start.elapsed(),
                },
                openraft::metrics::WaitError::ShuttingDown => {
                    Error::Stopped("shutting down".into())
                }
            })
    }

    /// The state-machine database as it is now, for reads: after
    /// [`Node::linearizable_read_barrier`] for linearizable reads, or directly for stale
    /// reads (Redis's `READONLY` on a replica). Take a fresh handle per read: a snapshot
    /// install replaces the database.
    pub fn state_db(&self) -> StateDb {
        self.core.sm.state_db()
    }

    /// Adds node `id` at Raft address `addr` as a learner (a non-voting member that
    /// replicates). Returns once the membership change is committed; the learner then
    /// catches up (from the log or a snapshot) in the background: watch its `lag` in the
    /// leader's [`Node::status`] before promoting it.
    ///
    /// # Errors
    /// [`Error::Membership`] when refused; [`Error::NoLeader`] / [`Error::Timeout`].
    pub async fn add_learner(&self, id: u64, addr: impl Into<String>) -> Result<()> {
        self.admin(Admin::AddLearner {
            id,
            addr: addr.into(),
        })
        .await
    }

    /// Makes learner `id` a voter. Refused if the voters would then be an even number
    /// (four tolerate one failure, as three do, and need a larger majority), unless
    /// `force`: while replacing a node, add the new one with `force`, then remove the old.
    ///
    /// # Errors
    /// [`Error::Membership`] when refused (`id` is not a learner, an even number of voters
    /// without `force`); [`Error::NoLeader`] / [`Error::Timeout`].
    pub async fn promote(&self, id: u64, force: bool) -> Result<()> {
        self.admin(Admin::Promote { id, force }).await
    }

    /// Removes node `id` (voter or learner) from the cluster. The removed node learns it
    /// (from the change itself, or from the members' answers to its pre-votes) and stops
    /// serving, voting and campaigning ([`Error::Removed`]).
    ///
    /// # Errors
    /// [`Error::Membership`] when refused (`id` is not a member); [`Error::NoLeader`] /
    /// [`Error::Timeout`].
    pub async fn remove(&self, id: u64) -> Result<()> {
        self.admin(Admin::Remove { id }).await
    }

    async fn admin(&self, a: Admin) -> Result<()> {
        self.core.route(Op::Admin(a)).await.map(|_| ())
    }

    /// This node's status (role, term, leader, log and applied indexes; replication
    /// progress of every member when it leads).
    pub fn status(&self) -> Status {
        self.core.status()
    }

    /// Records `host:port` where this node's clients connect: its [`Status`] carries it to
    /// the other nodes, which tell clients (`CLUSTER SLOTS`).
    pub fn set_client_addr(&self, addr: String) {
        *self.core.client_addr.lock() = Some(addr);
    }

    /// This node's role as it changes (the current one first): for a server that shows it,
    /// as Redis's log lines do with `M` and `S`.
    pub fn roles(&self) -> tokio::sync::watch::Receiver<Role> {
        self.roles.subscribe()
    }

    /// The leader this node knows of.
    pub fn leader(&self) -> Option<u64> {
        self.core.leader().map(|(id, _)| id)
    }

    /// Every member's own status (applied index, role, ...), asked over HTTP with a short
    /// timeout; a member that does not answer has its error instead.
    ///
    /// The members are asked all at once: a dead one costs one attempt timeout in all, not
    /// one each.
    pub async fn cluster_status(&self) -> Vec<PeerStatus> {
        let own = self.status();
        let asks = own.members.iter().map(|m| {
            let own = &own;
            async move {
                let status = if m.id == self.core.id {
                    Ok(own.clone())
                } else {
                    let addr = self.core.transport.routes.resolve(m.id, &m.addr);
                    self.core
                        .transport
                        .get_json::<Status>(
                            &addr,
                            "/status",
                            self.core.config.forward_attempt_timeout,
                        )
                        .await
                        .map_err(|e| e.to_string())
                };
                PeerStatus {
                    id: m.id,
                    addr: m.addr.clone(),
                    status,
                }
            }
        });
        futures_util::future::join_all(asks).await
    }

    /// Dials `addr` instead of node `id`'s membership address from now on (`None`: back to
    /// the membership's). For tests routing a node pair through a proxy.
    pub fn set_route(&self, id: u64, addr: Option<String>) {
        self.core.transport.routes.set(id, addr);
    }

    /// Stops the node: Raft first, then the HTTP endpoint. The databases close once the
    /// last [`StateDb`] handle is dropped.
    ///
    /// # Errors
    /// [`Error::Stopped`] if the Raft core had already failed.
    pub async fn shutdown(&self) -> Result<()> {
        let tasks = self.tasks.lock().take();
        if let Some((stop, tasks)) = tasks {
            let _ = stop.send(true);
            for t in tasks {
                let _ = t.await;
            }
        }
        let r = self.core.raft.shutdown().await;
        let server = self.server.lock().take();
        if let Some(serving) = server {
            stop_serving(serving).await;
        }
        r.map_err(|e| Error::Stopped(format!("Raft core: {e}")))
    }
}
