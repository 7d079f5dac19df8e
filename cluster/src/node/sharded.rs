//! A node hosting several Raft groups, each owning a range of Redis Cluster's hash slots
//! (docs/CLUSTER.md "Sharding").
//!
//! Each group is a [`Node`] without a listener of its own: its own log, state machine and
//! snapshots in `group-<g>/` of the data directory, its own Raft core, proposer, forwarder,
//! read indexes, election timer and client session. The groups share the node's one HTTP
//! endpoint (group g's routes under `/g/<g>`, group 0's where a one-group node has them)
//! and its one HTTP client (one connection pool per peer).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bloomkv::env::Env;
use bloomkv_server::keyslot::SlotMap;
use parking_lot::Mutex;
use tokio::task::JoinHandle;

use super::config::NodeConfig;
use super::{Node, Serving, claim, serve, stop_serving, tokio_listener, transport};
use crate::error::{Error, Result};
use crate::machine::Machine;
use crate::net::server;

/// The file in the data directory of a node of several groups holding their number.
const SHARDS_FILE: &str = "SHARDS";

/// The directory of group `group` in the data directory `data` of a node of `shards` groups:
/// `data` itself for one group (the layout a one-group node always had), else
/// `data/group-<g>`.
pub(crate) fn group_dir(data: &std::path::Path, shards: u32, group: u32) -> PathBuf {
    if shards == 1 {
        data.to_path_buf()
    } else {
        data.join(format!("group-{group}"))
    }
}

/// The preferred leader of group `group` among `voters`: the voter at position `group mod
/// voters` in id order (docs/CLUSTER.md "Spreading the leaders").
pub(crate) fn preferred_leader(voters: &[u64], group: u32) -> Option<u64> {
    let mut v = voters.to_vec();
    v.sort_unstable();
    v.dedup();
    let n = u32::try_from(v.len()).ok().filter(|&n| n > 0)?;
    v.get(usize::try_from(group % n).ok()?).copied()
}

/// Checks (or, on a first start, writes) the group count of the data directory: it may not
/// change, and a directory of one group (no `SHARDS` file, a `log/` at its top) is not one
/// of several.
pub(super) fn check_shards(env: &dyn Env, data: &std::path::Path, shards: u32) -> Result<()> {
    let io = |e| Error::db(format!("checking the groups of {}", data.display()), e);
    let path = data.join(SHARDS_FILE);
    let found = if env.exists(&path) {
        let bytes = env.read_all(&path).map_err(io)?;
        let text = String::from_utf8_lossy(&bytes);
        Some(
            text.trim()
                .parse::<u32>()
                .map_err(|_| Error::Storage(format!("{} is damaged: {text:?}", path.display())))?,
        )
    } else if env.exists(&data.join("log")) {
        Some(1)
    } else {
        None
    };
    match found {
        Some(n) if n != shards => Err(Error::Config(format!(
            "data directory {} holds {n} group(s), not {shards}: the number of shards is fixed \
             for the life of a data directory",
            data.display()
        ))),
        Some(_) => Ok(()),
        None if shards == 1 => Ok(()),
        None => crate::fsutil::replace_atomically(env, &path, format!("{shards}\n").as_bytes())
            .map_err(io),
    }
}

/// A running node of several Raft groups ([`NodeConfig::shards`]), each owning the slots
/// its [`SlotMap`] gives it. With one shard it is a [`Node`] in all but name: the same data
/// directory and routes.
pub struct ShardedNode {
    groups: Vec<Arc<Node>>,
    map: SlotMap,
    local_addr: std::net::SocketAddr,
    server: Mutex<Option<Serving>>,
    /// The delayed bootstraps of the groups this node is not the preferred leader of.
    bootstraps: Mutex<Vec<JoinHandle<()>>>,
}

impl std::fmt::Debug for ShardedNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardedNode")
            .field("id", &self.id())
            .field("addr", &self.local_addr)
            .field("shards", &self.groups.len())
            .finish()
    }
}

impl ShardedNode {
    /// Starts a node listening on `config.raft_addr`; `machine(g)` is group g's state
    /// machine (one per group: each applies to its own database).
    ///
    /// # Errors
    /// As [`ShardedNode::start_on`], and [`Error::Network`] if the address cannot be bound.
    pub async fn start(
        config: NodeConfig,
        machine: impl FnMut(u32) -> Arc<dyn Machine>,
    ) -> Result<ShardedNode> {
        let listener = std::net::TcpListener::bind(&config.raft_addr)
            .map_err(|e| Error::Network(format!("binding {}: {e}", config.raft_addr)))?;
        ShardedNode::start_on(listener, config, machine).await
    }

    /// Starts a node of `config.shards` groups serving on `listener` (see
    /// [`Node::start_on`]). On a first start with `config.initial_cluster`, each group is
    /// bootstrapped by its preferred leader at once, and by the other nodes only if that
    /// node stays unreachable (so the leaders start spread over the nodes).
    ///
    /// # Errors
    /// As [`Node::start_on`]; [`Error::Config`] when the data directory holds another
    /// number of groups.
    pub async fn start_on(
        listener: std::net::TcpListener,
        config: NodeConfig,
        mut machine: impl FnMut(u32) -> Arc<dyn Machine>,
    ) -> Result<ShardedNode> {
        config.validate()?;
        let shards = config.shards;
        let (listener, local_addr) = tokio_listener(listener)?;
        let transport = transport(&config)?;
        claim(&config).await?;
        {
            let env = Arc::clone(&config.options.env);
            let data = config.data_dir.clone();
            tokio::task::spawn_blocking(move || check_shards(env.as_ref(), &data, shards))
                .await
                .map_err(|e| Error::Storage(format!("checking the data directory: {e}")))??;
        }
        let mut groups = Vec::new();
        for g in 0..shards {
            let mut c = config.clone();
            c.group = g;
            c.data_dir = group_dir(&config.data_dir, shards, g);
            match Node::open_group(c, machine(g), transport.for_group(g), local_addr).await {
                Ok(n) => groups.push(Arc::new(n)),
                Err(e) => {
                    for n in &groups {
                        let _ = n.shutdown().await;
                    }
                    return Err(e);
                }
            }
        }
        let node = ShardedNode {
            groups,
            map: SlotMap::even(shards),
            local_addr,
            server: Mutex::new(None),
            bootstraps: Mutex::new(Vec::new()),
        };
        let mut later = Vec::new();
        if let Some(init) = &config.initial_cluster {
            let voters: Vec<u64> = init.keys().copied().collect();
            for (g, group) in (0u32..).zip(&node.groups) {
                let mine = shards == 1 || preferred_leader(&voters, g) == Some(config.id);
                if !mine {
                    later.push(g);
                    continue;
                }
                if let Err(e) = group.bootstrap(init).await {
                    let _ = node.shutdown().await;
                    return Err(e);
                }
            }
        }
        // Served only after the bootstraps (see `Node::start_on`).
        let app = server::groups_router(
            &node
                .groups
                .iter()
                .map(|n| Arc::clone(n.core()))
                .collect::<Vec<_>>(),
        );
        *node.server.lock() = Some(serve(listener, app));
        if let Some(init) = &config.initial_cluster {
            let mut tasks = node.bootstraps.lock();
            for g in later {
                let (group, init) = (Arc::clone(&node.groups[g as usize]), init.clone());
                tasks.push(tokio::spawn(bootstrap_unless_led(group, g, init)));
            }
        }
        Ok(node)
    }

    /// This node's id.
    pub fn id(&self) -> u64 {
        self.groups.first().map_or(0, |n| n.id())
    }

    /// The address the node's HTTP endpoint listens on.
    pub fn local_addr(&self) -> std::net::SocketAddr {
        self.local_addr
    }

    /// The slot map: which group owns each of the 16384 slots.
    pub fn slot_map(&self) -> &SlotMap {
        &self.map
    }

    /// Every group, group g at index g.
    pub fn groups(&self) -> &[Arc<Node>] {
        &self.groups
    }

    /// Group `g`, if this node hosts it.
    pub fn group(&self, g: u32) -> Option<&Arc<Node>> {
        self.groups.get(usize::try_from(g).ok()?)
    }

    /// The group owning `key` (by its slot, hash tags as Redis Cluster's).
    pub fn group_of_key(&self, key: &[u8]) -> &Arc<Node> {
        let g = usize::try_from(self.map.group_of_key(key)).unwrap_or(0);
        &self.groups[g.min(self.groups.len() - 1)]
    }

    /// Records `host:port` where this node's clients connect, in every group's status.
    pub fn set_client_addr(&self, addr: &str) {
        for g in &self.groups {
            g.set_client_addr(addr.to_string());
        }
    }

    /// Dials `addr` instead of node `id`'s membership address from now on, for every group
    /// (they share one client).
    pub fn set_route(&self, id: u64, addr: Option<String>) {
        if let Some(g) = self.groups.first() {
            g.set_route(id, addr);
        }
    }

    /// Stops every group's Raft, then the HTTP endpoint.
    ///
    /// # Errors
    /// [`Error::Stopped`] if a group's Raft core had already failed (the first such).
    pub async fn shutdown(&self) -> Result<()> {
        let tasks = std::mem::take(&mut *self.bootstraps.lock());
        for t in tasks {
            t.abort();
        }
        let stopped =
            futures_util::future::join_all(self.groups.iter().map(|g| g.shutdown())).await;
        let server = self.server.lock().take();
        if let Some(serving) = server {
            stop_serving(serving).await;
        }
        stopped.into_iter().collect::<Result<Vec<()>>>().map(|_| ())
    }
}

/// Bootstraps group `g` on a node that is not its preferred leader, once that leader has
/// been unreachable for two checks an election timeout apart (and the group has no
/// membership yet): when every node starts, the preferred leader's election brings the
/// membership and this does nothing.
async fn bootstrap_unless_led(
    group: Arc<Node>,
    g: u32,
    init: std::collections::BTreeMap<u64, String>,
) {
    let core = Arc::clone(group.core());
    let every = core.config.election_timeout.1;
    let voters: Vec<u64> = init.keys().copied().collect();
    let Some(preferred) = preferred_leader(&voters, g) else {
        return;
    };
    let addr = core
        .transport
        .routes
        .resolve(preferred, init.get(&preferred).map_or("", String::as_str));
    let mut missed = 0;
    loop {
        tokio::time::sleep(every).await;
        match group.initialized().await {
            Ok(false) => {}
            Ok(true) | Err(_) => return,
        }
        let reached = core
            .transport
            .get_json::<crate::Status>(&addr, "/status", every.max(Duration::from_millis(200)))
            .await
            .is_ok();
        missed = if reached { 0 } else { missed + 1 };
        if missed >= 2 {
            tracing::info!(
                target: "bloomkv_cluster::events",
                "group {g}: its preferred leader, node {preferred}, is unreachable; bootstrapping it here"
            );
            let _ = group.bootstrap(&init).await;
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preferred_leaders_go_round_the_voters() {
        let v = [3, 1, 2];
        assert_eq!(
            (0..4).map(|g| preferred_leader(&v, g)).collect::<Vec<_>>(),
            [Some(1), Some(2), Some(3), Some(1)]
        );
        assert_eq!(preferred_leader(&[], 0), None);
    }

    #[test]
    fn one_group_keeps_the_data_directory_as_it_was() {
        let d = std::path::Path::new("/d");
        assert_eq!(group_dir(d, 1, 0), d);
        assert_eq!(group_dir(d, 3, 2), d.join("group-2"));
    }

    #[test]
    fn the_number_of_groups_is_fixed_for_a_data_directory() {
        let dir = tempfile::tempdir().unwrap();
        let env = bloomkv::env::StdEnv;
        check_shards(&env, dir.path(), 3).unwrap();
        check_shards(&env, dir.path(), 3).unwrap();
        assert!(matches!(
            check_shards(&env, dir.path(), 2),
            Err(Error::Config(_))
        ));
        assert!(matches!(
            check_shards(&env, dir.path(), 1),
            Err(Error::Config(_))
        ));
        // A one-group directory (its log at the top) is not one of several groups.
        let one = tempfile::tempdir().unwrap();
        std::fs::create_dir(one.path().join("log")).unwrap();
        check_shards(&env, one.path(), 1).unwrap();
        assert!(matches!(
            check_shards(&env, one.path(), 3),
            Err(Error::Config(_))
        ));
    }
}
