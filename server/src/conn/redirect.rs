//! Redis Cluster's redirections, on a node started with `--cluster-redirects yes`.
//!
//! A Redis Cluster node serves only the slots its shard owns, and only as their master: a
//! keyed command reaching a replica is answered `-MOVED <slot> <host:port>` (unless the
//! connection sent `READONLY` and the command only reads), and a command whose keys hash
//! to different slots `-CROSSSLOT`. Cluster clients route by these answers. Here the one
//! Raft group owns every slot and its leader is the master, so a follower sends keyed
//! commands to the leader's client address and serves keyless ones as every node does.
//!
//! Inside `MULTI` every queued command must be in the slot of the first keyed one, as in
//! Redis; a refused one flags the transaction, and `EXEC` answers `EXECABORT`.
//!
//! Without the flag nothing here runs: every node serves every key (forwarding writes to
//! the leader), which plain Redis clients need.

use super::Conn;
use super::replicated::Route;
use crate::cmd;
use crate::cmd::getkeys::{CrossSlot, request_slot};
use crate::replica::Cluster;
use crate::resp::{Args, Reply};

const CROSSSLOT: &str = "CROSSSLOT Keys in request don't hash to the same slot";

/// Why this node does not serve a request.
enum Refusal {
    CrossSlot,
    /// The key's slot: its master is the leader, elsewhere.
    Moved(u16),
    NoLeader,
}

impl Conn {
    /// Redis Cluster's answer to `args` (routed as `route`) when this node does not serve
    /// it; `None` when it does. Only called with [`Cluster::redirects`] on.
    pub(super) async fn redirect(
        &mut self,
        cluster: &Cluster,
        args: &Args,
        route: Route,
    ) -> Option<Reply> {
        let reply = match self.not_served_here(cluster, args, route)? {
            Refusal::CrossSlot => Reply::Error(CROSSSLOT.into()),
            Refusal::NoLeader => {
                Reply::Error("CLUSTERDOWN The cluster is down: no leader is known".into())
            }
            Refusal::Moved(slot) => {
                let leader = cluster.replicator.leader();
                match leader {
                    Some(id) => match cluster.client_addr_of(id).await {
                        Some(addr) => Reply::Error(format!("MOVED {slot} {addr}")),
                        None => Reply::Error(format!(
                            "CLUSTERDOWN The cluster is down: leader {id} has not said where its clients connect"
                        )),
                    },
                    None => {
                        Reply::Error("CLUSTERDOWN The cluster is down: no leader is known".into())
                    }
                }
            }
        };
        // Inside MULTI the transaction is flagged: EXEC answers EXECABORT, as in Redis.
        if self.multi.is_some() {
            self.multi_error = true;
        }
        Some(reply)
    }

    /// Whether a pipelined write after the first of a run is redirected (it then starts a
    /// run of its own, and [`Conn::redirect`] answers it). Outside MULTI only.
    pub(super) fn redirected(&mut self, cluster: &Cluster, args: &Args, route: Route) -> bool {
        self.not_served_here(cluster, args, route).is_some()
    }

    /// Why this node does not serve `args`, if it does not; inside MULTI, the first keyed
    /// command fixes the transaction's slot.
    fn not_served_here(&mut self, cluster: &Cluster, args: &Args, route: Route) -> Option<Refusal> {
        let c = cmd::lookup(&args[0])?;
        if c.name == "multi" && self.multi.is_none() {
            if let Some(cc) = self.cluster.as_mut() {
                cc.tx_slot = None;
            }
            return None;
        }
        // What the standalone path refuses (arity, authentication, ...) it answers itself.
        if !c.arity_ok(args.len())
            || (!self.authed && !matches!(c.name, "auth" | "hello"))
            || self.acl_denies(args)
        {
            return None;
        }
        let slot = match request_slot(c, args) {
            Ok(Some(slot)) => slot,
            Ok(None) => return None,
            Err(CrossSlot) => return Some(Refusal::CrossSlot),
        };
        let queued = self.multi.is_some()
            && !matches!(
                c.name,
                "exec" | "discard" | "multi" | "quit" | "reset" | "watch"
            );
        if queued {
            let cc = self.cluster.as_mut()?;
            match cc.tx_slot {
                Some(first) if first != slot => return Some(Refusal::CrossSlot),
                _ => cc.tx_slot = Some(slot),
            }
        }
        let leader = cluster.replicator.leader();
        if leader == Some(cluster.replicator.node_id()) {
            return None;
        }
        // READONLY: reads are served from this node's copy, as a Redis replica's are.
        if route == Route::Read && self.cluster.as_ref().is_some_and(|cc| cc.readonly) {
            return None;
        }
        Some(if leader.is_some() {
            Refusal::Moved(slot)
        } else {
            Refusal::NoLeader
        })
    }
}
