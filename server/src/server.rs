//! Starting, running and stopping a server.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::config::Config;
use crate::store::Store;

/// Why a server could not start or stopped with an error.
#[derive(Debug)]
#[non_exhaustive]
pub enum ServerError {
    /// The database could not be opened or failed.
    Engine(bloomkv::Error),
    /// The listening address could not be bound (in use, not local, no permission).
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// A socket, runtime or thread error.
    Io(std::io::Error),
    /// The ACL file (`--aclfile`) cannot be read or has errors (Redis's text for each).
    Acl(String),
}

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerError::Engine(e) => write!(f, "database: {e}"),
            ServerError::Bind { addr, source } => write!(f, "cannot listen on {addr}: {source}"),
            ServerError::Io(e) => write!(f, "{e}"),
            ServerError::Acl(e) => write!(f, "ACL errors: {e}"),
        }
    }
}

impl std::error::Error for ServerError {}

impl From<bloomkv::Error> for ServerError {
    fn from(e: bloomkv::Error) -> Self {
        ServerError::Engine(e)
    }
}

impl From<std::io::Error> for ServerError {
    fn from(e: std::io::Error) -> Self {
        ServerError::Io(e)
    }
}

/// State every connection shares.
#[derive(Debug)]
pub struct Shared {
    /// The keyspace.
    pub store: Arc<Store>,
    /// The configuration.
    pub config: Config,
    /// The port actually bound.
    pub port: u16,
    /// When the server started.
    pub started: Instant,
    /// Clients connected now.
    pub clients: AtomicUsize,
    /// Last client id handed out.
    pub next_client_id: AtomicU64,
    /// Connections accepted since start.
    pub total_connections: AtomicU64,
    /// Connections refused for `maxclients`.
    pub rejected_connections: AtomicU64,
    /// Commands, errors and network counters (INFO `stats`, `commandstats`, `errorstats`).
    pub stats: crate::stats::Stats,
    /// The connected clients (CLIENT LIST, KILL).
    pub client_list: Arc<crate::clients::Clients>,
    /// Log lines about refused clients, at most one a second.
    pub refusals_log: crate::log::RateLimited,
    /// Stops the server (SHUTDOWN).
    pub stop: watch::Sender<bool>,
    /// Pub/sub channels, patterns and their subscribers (in cluster mode shared with the
    /// state machine, which delivers PUBLISHes made on other nodes).
    pub pubsub: Arc<crate::pubsub::PubSub>,
    /// Clients blocked in BLPOP and the other blocking pops.
    pub blocked: crate::blocking::Registry,
    /// Cluster mode: the replication layer and the state machine (`None`: standalone).
    pub replica: Option<crate::replica::Cluster>,
    /// SAVE, BGSAVE and LASTSAVE's state.
    pub saves: Arc<crate::saves::Saves>,
    /// The slow commands (SLOWLOG).
    pub slowlog: crate::slowlog::SlowLog,
    /// The latency monitor (LATENCY, `latency-monitor-threshold`).
    pub latency: crate::latency::Latency,
    /// CLIENT PAUSE's state.
    pub pause: crate::pause::Pause,
    /// The password clients must AUTH with (`None`: none); `--requirepass` at start,
    /// `CONFIG SET requirepass` later.
    pub requirepass: parking_lot::RwLock<Option<String>>,
    /// The users (`default`'s password is `requirepass`) and the ACL log.
    pub acl: Arc<crate::acl::Acl>,
    /// The most clients served at once; `--maxclients` at start, `CONFIG SET maxclients`.
    pub maxclients: AtomicUsize,
}

impl Shared {
    /// `CONFIG RESETSTAT`: INFO's counters (commands, errors, network, connections, expired
    /// keys) start again from zero.
    pub fn reset_stats(&self) {
        self.stats.reset();
        self.total_connections.store(0, Ordering::Relaxed);
        self.rejected_connections.store(0, Ordering::Relaxed);
        self.store.reset_expired_count();
    }
}

/// Where a server's data lives.
enum Backend {
    /// Its own database in `config.dir` (on `env` if given).
    Local(Option<Arc<dyn bloomkv::env::Env>>),
    /// A replicated state machine (cluster mode).
    Replicated(crate::replica::Cluster),
}

/// A running server: its address, and the means to stop it.
///
/// ```no_run
/// # fn main() -> Result<(), bloomkv_server::ServerError> {
/// let config = bloomkv_server::Config { port: 0, dir: "/tmp/db".into(), ..Default::default() };
/// let server = bloomkv_server::Server::start(config)?;
/// println!("listening on {}", server.local_addr());
/// server.shutdown()?; // stop accepting, finish in-flight commands, sync the WAL, close
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Server {
    addr: SocketAddr,
    stop: watch::Sender<bool>,
    thread: Option<JoinHandle<Result<(), ServerError>>>,
}

/// Grace period for connections to finish their in-flight commands at shutdown.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

impl Server {
    /// Opens the database, binds the listener and starts serving on background threads.
    ///
    /// # Errors
    /// [`ServerError::Bind`] if the address cannot be bound (nothing is created on disk
    /// then); [`ServerError::Engine`] if the database cannot be opened (for example it is
    /// locked by another process).
    pub fn start(config: Config) -> Result<Server, ServerError> {
        Server::start_with_env(config, None)
    }

    /// [`Server::start`] on the file system `env` (for tests that inject faults; `None`:
    /// the real one).
    ///
    /// # Errors
    /// As for [`Server::start`].
    #[doc(hidden)]
    pub fn start_with_env(
        config: Config,
        env: Option<Arc<dyn bloomkv::env::Env>>,
    ) -> Result<Server, ServerError> {
        Server::launch(config, Backend::Local(env))
    }

    /// Starts a server in cluster mode (docs/CLUSTER.md): its store is the replicated state
    /// machine's (`cluster.applier`, already reset by the replication layer), writes go
    /// through `cluster.replicator`'s log, reads take its read barrier. The replication layer
    /// (the `bloomkv-cluster` package) calls this; `config.dir` and `config.appendfsync`
    /// are the layer's business then (the log is synced on every append).
    ///
    /// # Errors
    /// [`ServerError::Bind`] if the address cannot be bound; [`ServerError::Io`] if the
    /// applier has no store yet (the layer did not reset it).
    pub fn start_replicated(
        config: Config,
        cluster: crate::replica::Cluster,
    ) -> Result<Server, ServerError> {
        Server::launch(config, Backend::Replicated(cluster))
    }

    fn launch(config: Config, backend: Backend) -> Result<Server, ServerError> {
        // The users first: a server whose ACL file is bad must not start (as Redis).
        let acl = crate::acl::Acl::new(config.requirepass.as_deref());
        if let Some(path) = &config.aclfile {
            acl.load(path).map_err(ServerError::Acl)?;
        }
        let mut rt = tokio::runtime::Builder::new_multi_thread();
        rt.enable_all().thread_name("bloomkv-io");
        if config.threads > 0 {
            rt.worker_threads(config.threads);
        }
        let rt = rt.build()?;
        // Bind first: a server that cannot listen must leave no database behind.
        let want = SocketAddr::new(config.bind, config.port);
        let listener = rt
            .block_on(TcpListener::bind(want))
            .map_err(|source| ServerError::Bind { addr: want, source })?;
        let addr = listener.local_addr()?;
        let (stop, stop_rx) = watch::channel(false);
        let (store, pubsub, replica) = match backend {
            Backend::Local(env) => {
                let mut opts = config.engine_options();
                if let Some(e) = env {
                    opts.env = e;
                }
                let db = bloomkv::Db::open(&config.dir, opts)?;
                let store = Arc::new(Store::new(db)?);
                store.set_databases(config.databases);
                (store, Arc::new(crate::pubsub::PubSub::default()), None)
            }
            Backend::Replicated(cluster) => {
                let store = cluster.applier.store().ok_or_else(|| {
                    ServerError::Io(std::io::Error::other(
                        "cluster mode: the state machine has no store (it was never reset)",
                    ))
                })?;
                let pubsub = Arc::clone(cluster.applier.pubsub());
                (store, pubsub, Some(cluster))
            }
        };
        // Keyspace notifications go to this server's subscribers (in cluster mode, those of
        // the node whose state machine applies the write).
        store.notifier().attach(Arc::clone(&pubsub));
        store.notifier().set_flags(config.notify_keyspace_events);
        let shared = Arc::new(Shared {
            store: Arc::clone(&store),
            port: addr.port(),
            started: Instant::now(),
            clients: AtomicUsize::new(0),
            next_client_id: AtomicU64::new(0),
            total_connections: AtomicU64::new(0),
            rejected_connections: AtomicU64::new(0),
            stats: crate::stats::Stats::default(),
            client_list: Arc::default(),
            refusals_log: crate::log::RateLimited::default(),
            stop: stop.clone(),
            pubsub,
            blocked: crate::blocking::Registry::new(),
            replica,
            saves: Arc::default(),
            slowlog: crate::slowlog::SlowLog::default(),
            latency: crate::latency::Latency::default(),
            pause: crate::pause::Pause::default(),
            requirepass: parking_lot::RwLock::new(config.requirepass.clone()),
            acl: Arc::new(acl),
            maxclients: AtomicUsize::new(config.maxclients),
            config,
        });
        let thread = std::thread::Builder::new()
            .name("bloomkv-server".into())
            .spawn(move || {
                let (housekeeper, reclaimer) = match &shared.replica {
                    // The replication layer owns the database's durability; expiry goes
                    // through the log, proposed by the leader.
                    // The housekeeper still runs: its sweeper compacts the ranges of big
                    // dropped collections (store::gc) as on a standalone server; it has no
                    // WAL to sync on a timer.
                    Some(cluster) => {
                        rt.spawn(crate::replica::expire::run(
                            cluster.clone(),
                            Arc::clone(&shared.store),
                            stop_rx.clone(),
                        ));
                        (
                            Some(crate::housekeeping::Housekeeper::start(
                                Arc::clone(&shared.store),
                                crate::config::AppendFsync::No,
                            )?),
                            None,
                        )
                    }
                    None => (
                        Some(crate::housekeeping::Housekeeper::start(
                            Arc::clone(&shared.store),
                            shared.config.appendfsync,
                        )?),
                        crate::store::expire::Reclaimer::start(Arc::clone(&shared.store)),
                    ),
                };
                rt.block_on(accept_loop(listener, Arc::clone(&shared), stop_rx));
                // Every connection has finished (or was cut off after the grace period):
                // dropping the runtime drops their tasks and their handles on the store.
                drop(rt);
                if let Some(h) = housekeeper {
                    h.stop();
                }
                if let Some(r) = reclaimer {
                    r.stop();
                }
                shared.saves.finish();
                let store = Arc::clone(&shared.store);
                drop(shared);
                store.sync_wal()?;
                drop(store); // the last handle: the database closes here
                Ok(())
            })?;
        Ok(Server {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// The address the server listens on (with the actual port when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops the server: no new connections, in-flight commands finish (for up to 5 s),
    /// the WAL is synced and the database closed. Returns when all of that is done.
    ///
    /// # Errors
    /// The WAL sync error, if any.
    pub fn shutdown(mut self) -> Result<(), ServerError> {
        let _ = self.stop.send(true);
        self.join()
    }

    /// Waits until the server stops (after [`Server::shutdown`] from another handle of the
    /// stop signal; see [`Server::stopper`]).
    ///
    /// # Errors
    /// As for [`Server::shutdown`].
    pub fn wait(mut self) -> Result<(), ServerError> {
        self.join()
    }

    /// A function that asks the server to stop, usable from another thread (a signal
    /// handler's task, for example).
    pub fn stopper(&self) -> impl Fn() + Send + Sync + 'static {
        let tx = self.stop.clone();
        move || {
            let _ = tx.send(true);
        }
    }

    fn join(&mut self) -> Result<(), ServerError> {
        match self.thread.take() {
            Some(t) => t
                .join()
                .map_err(|_| ServerError::Io(std::io::Error::other("server thread panicked")))?,
            None => Ok(()),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        let _ = self.join();
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    let mut conns = JoinSet::new();
    // INFO's instantaneous_* rates come from a sample of the counters every 100 ms.
    let mut sampler = tokio::time::interval(Duration::from_millis(100));
    sampler.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            _ = sampler.tick() => shared.stats.sample(),
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
            r = listener.accept() => match r {
                Ok((sock, peer)) => {
                    conns.spawn(crate::conn::serve(sock, peer, Arc::clone(&shared), stop.clone()));
                }
                Err(_) => {
                    // Out of file descriptors or similar: back off instead of spinning.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            },
        }
    }
    drop(listener);
    // A running script would hold its connection (and every writer) past the grace period.
    shared.store.scripts().kill_all();
    let drained = tokio::time::timeout(DRAIN_TIMEOUT, async {
        while conns.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        conns.abort_all();
    }
}

/// Runs a server until SIGINT or SIGTERM, then shuts it down cleanly.
///
/// # Errors
/// As for [`Server::start`] and [`Server::shutdown`].
pub fn run(config: Config) -> Result<(), ServerError> {
    crate::log::configure(config.loglevel, config.logfile.as_deref())?;
    let server = Server::start(config)?;
    crate::log::notice(&format!(
        "bloomkv-server listening on {}",
        server.local_addr()
    ));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // A client's SHUTDOWN stops the server from inside: wait for that as for a signal.
    let mut stopped = server.stop.subscribe();
    rt.block_on(async {
        let asked = stopped.wait_for(|stop| *stop);
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let mut term = signal(SignalKind::terminate())?;
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
                _ = asked => {}
            }
        }
        #[cfg(not(unix))]
        tokio::select! {
            r = tokio::signal::ctrl_c() => r?,
            _ = asked => {}
        }
        Ok::<(), std::io::Error>(())
    })?;
    crate::log::notice("shutting down");
    server.shutdown()?;
    crate::log::notice("stopped");
    Ok(())
}
