//! What an operator reads in a node's log: elections and their outcome, leader and term
//! changes, membership changes, snapshots built, log purges, this node's removal. Read
//! off openraft's metrics as they change and written as `tracing` events (target
//! `bloomkv_cluster::*`); the binary writes them in Redis's format at `notice`.
//! Peers lost and found, snapshots sent and installed and slow log writes are reported
//! where they happen (`net::client`, `net::server`, `log_store`).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use openraft::ServerState;
use tokio::sync::watch;

use super::core::Core;
use super::status::Role;
use crate::types::NodeId;

/// The part of the metrics the log follows.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Seen {
    state: ServerState,
    term: u64,
    leader: Option<NodeId>,
    membership_index: Option<u64>,
    voters: BTreeSet<NodeId>,
    learners: BTreeSet<NodeId>,
    snapshot: Option<u64>,
    purged: Option<u64>,
}

fn seen(core: &Core) -> Seen {
    let m = core.raft.metrics().borrow().clone();
    let membership = m.membership_config.membership();
    Seen {
        state: m.state,
        term: m.current_term,
        leader: m.current_leader,
        membership_index: m.membership_config.log_id().map(|l| l.index),
        voters: membership.voter_ids().collect(),
        learners: membership.learner_ids().collect(),
        snapshot: m.snapshot.map(|l| l.index),
        purged: m.purged.map(|l| l.index),
    }
}

fn role(s: ServerState) -> &'static str {
    match s {
        ServerState::Leader => "leader",
        ServerState::Follower => "follower",
        ServerState::Candidate => "candidate",
        ServerState::Learner => "learner",
        ServerState::Shutdown => "stopped",
    }
}

/// Follows the metrics until `stop` changes, publishing this node's role on `roles`
/// ([`crate::Node::roles`]).
pub(crate) async fn watch(
    core: Arc<Core>,
    mut stop: watch::Receiver<bool>,
    roles: watch::Sender<Role>,
) {
    let mut rx = core.raft.metrics();
    let mut last = seen(&core);
    roles.send_replace(Role::from(last.state));
    loop {
        tokio::select! {
            _ = stop.changed() => return,
            changed = rx.changed() => if changed.is_err() { return },
        }
        let now = seen(&core);
        if now != last {
            report(core.id, &last, &now);
            count(&core, &last, &now);
            let member = |s: &Seen| s.voters.contains(&core.id) || s.learners.contains(&core.id);
            if member(&last) && !member(&now) {
                core.mark_removed(&format!(
                    "the membership change at log index {} leaves it out",
                    now.membership_index.unwrap_or(0)
                ));
            }
            if now.state != last.state {
                roles.send_replace(Role::from(now.state));
            }
            last = now;
        }
    }
}

fn count(core: &Core, was: &Seen, now: &Seen) {
    let c = &core.counters;
    if now.state == ServerState::Candidate && was.state != ServerState::Candidate {
        c.elections_started.fetch_add(1, Ordering::Relaxed);
    }
    if now.state == ServerState::Leader && was.state != ServerState::Leader {
        c.elections_won.fetch_add(1, Ordering::Relaxed);
    }
    if now.leader != was.leader {
        c.leader_changes.fetch_add(1, Ordering::Relaxed);
    }
}

fn report(id: NodeId, was: &Seen, now: &Seen) {
    const T: &str = "bloomkv_cluster::events";
    if now.state != was.state {
        match (was.state, now.state) {
            (ServerState::Candidate, ServerState::Leader) => tracing::info!(
                target: T,
                "won the election for term {}: node {id} leads",
                now.term
            ),
            (_, ServerState::Candidate) => tracing::info!(
                target: T,
                "started an election for term {}",
                now.term
            ),
            (ServerState::Candidate, _) => tracing::info!(
                target: T,
                "lost the election for term {}; now a {}",
                was.term.max(now.term),
                role(now.state)
            ),
            (ServerState::Leader, _) => tracing::info!(
                target: T,
                "stepped down as leader in term {} (term now {}); now a {}",
                was.term,
                now.term,
                role(now.state)
            ),
            _ => tracing::info!(
                target: T,
                "role {} -> {} (term {})",
                role(was.state),
                role(now.state),
                now.term
            ),
        }
    } else if now.term != was.term {
        tracing::info!(target: T, "term {} -> {}", was.term, now.term);
    }
    if now.leader != was.leader {
        match now.leader {
            Some(l) => tracing::info!(
                target: T,
                "leader is now node {l} (term {}; was {})",
                now.term,
                was.leader.map_or("none".to_string(), |l| format!("node {l}"))
            ),
            None => tracing::info!(target: T, "no known leader (term {})", now.term),
        }
    }
    if now.membership_index != was.membership_index
        && (now.voters != was.voters || now.learners != was.learners)
    {
        tracing::info!(
            target: T,
            "membership changed at log index {}: voters {:?}, learners {:?} (were {:?}, {:?})",
            now.membership_index.unwrap_or(0),
            now.voters,
            now.learners,
            was.voters,
            was.learners
        );

        if now.voters.len().is_multiple_of(2) && now.voters.len() > was.voters.len() {
            tracing::warn!(
                target: T,
                "{} voters: an even number tolerates no more failures than one voter fewer",
                now.voters.len()
            );
        }
    }
    if now.snapshot > was.snapshot {
        tracing::info!(
            target: T,
            "snapshot at log index {} (was {})",
            now.snapshot.unwrap_or(0),
            was.snapshot.map_or("none".into(), |i| i.to_string())
        );
    }
    if now.purged > was.purged {
        tracing::info!(
            target: T,
            "log purged up to index {}",
            now.purged.unwrap_or(0)
        );
    }
}
