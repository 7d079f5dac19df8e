//! Elections this node starts itself, each after a pre-vote (the Raft dissertation, §9.6).
//!
//! openraft 0.9 starts an election whenever a follower's timer runs out, raising its term
//! even when it cannot win: a node that was paused, restarted, cut off or busy receiving a
//! snapshot comes back with a higher term, and the leader steps down when that term reaches
//! it in an AppendEntries answer. A node whose log is behind keeps doing so; when its new
//! term collides with the next leader's, it also refuses that leader's entries (a candidate
//! and a leader of the same term are incomparable in openraft), so it never catches up.
//! That loop held a cluster without a leader for minutes, its term climbing by hundreds.
//!
//! So openraft's own election timer is off (`enable_elect: false`) and this task decides:
//! a voter that has not heard from a leader for a random time in
//! `[max, 2 * max - min]` of the election timeout asks every voter first whether it *would*
//! vote (a pre-vote, which changes no state). A voter says yes only if it has not heard
//! from a leader for `max` itself (openraft's leader lease: a real vote would be refused
//! before) and the candidate's log is at least as up to date as its own; a leader says no
//! while a quorum acknowledged it within `max`. Only with a majority of yeses does the
//! node start a real election (`Raft::trigger().elect()`), so terms move only when an
//! election can succeed, and a node that cannot win leaves the cluster alone. A voter that
//! just granted a pre-vote holds back its own for the election timeout's minimum: two
//! candidates standing at once would split the vote and both wait a whole timeout more.
//!
//! "Heard from a leader" means an AppendEntries this node accepted, or a chunk of a
//! snapshot stream from a leader no older than this node's vote: a follower receiving a
//! large snapshot does not start elections halfway through it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use openraft::ServerState;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use super::core::Core;
use crate::types::{LogId, NodeId};

/// A pre-vote request: would you vote for `candidate`, whose log ends at `last_log`?
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct PreVote {
    pub candidate: NodeId,
    pub last_log: Option<LogId>,
}

/// A pre-vote answer, with the reason for a no (for the candidate's log).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct PreVoteAnswer {
    pub granted: bool,
    pub why: String,
    /// The candidate is not in this voter's membership at all: it was removed (a removed
    /// node may never receive the change that removed it; a majority saying so, each from a
    /// membership at least as new as the candidate's, is proof).
    pub not_member: bool,
    /// The log index of the membership this voter answered from (`None`: it has none yet,
    /// a node waiting for its first leader). Older nodes do not send it.
    #[serde(default)]
    pub membership_index: Option<u64>,
    /// A follower that heard from its leader a moment ago: in how many milliseconds it would
    /// say yes if it hears nothing more (the candidate may ask again then, not a whole
    /// election timeout later).
    pub lease_left_ms: Option<u64>,
}

impl PreVoteAnswer {
    fn no(why: String) -> PreVoteAnswer {
        PreVoteAnswer {
            granted: false,
            why,
            not_member: false,
            membership_index: None,
            lease_left_ms: None,
        }
    }
}

/// This node's answer to a pre-vote.
pub(crate) fn judge(core: &Core, req: &PreVote) -> PreVoteAnswer {
    let lease = core.config.election_timeout.1;
    let metrics = core.raft.metrics().borrow().clone();
    let membership = metrics.membership_config.membership();
    let membership_index = metrics.membership_config.log_id().map(|l| l.index);
    // A node that has no membership yet (started without `--initial-cluster`, or one whose
    // bootstrap lost the race to the first vote request) knows of no voters: it cannot
    // judge the candidate, and learns the membership from whoever wins. Refusing would
    // leave a cluster whose bootstrapped node can never win with no leader for good.
    if membership_index.is_some() && !membership.voter_ids().any(|v| v == req.candidate) {
        let mut no = PreVoteAnswer::no(format!(
            "node {} is not a voter in node {}'s membership",
            req.candidate, core.id
        ));
        no.not_member = membership.get_node(&req.candidate).is_none();
        no.membership_index = membership_index;
        return no;
    }
    match metrics.state {
        ServerState::Leader => {
            if let Some(ms) = metrics.millis_since_quorum_ack
                && Duration::from_millis(ms) < lease
            {
                return PreVoteAnswer::no(format!(
                    "node {} leads, acknowledged by a quorum {ms} ms ago",
                    core.id
                ));
            }
        }
        _ => {
            let since = core.contact.elapsed();
            if since < lease && metrics.current_leader.is_some() {
                let mut no = PreVoteAnswer::no(format!(
                    "node {} heard from leader {:?} {} ms ago",
                    core.id,
                    metrics.current_leader,
                    since.as_millis()
                ));
                no.lease_left_ms = u64::try_from((lease - since).as_millis()).ok();
                return no;
            }
        }
    }
    let mine = core.log.last_log_id();
    if req.last_log < mine {
        return PreVoteAnswer::no(format!(
            "the candidate's log ends at {:?}, node {}'s at {mine:?}",
            req.last_log, core.id
        ));
    }
    core.granted_prevote.touch();
    PreVoteAnswer {
        granted: true,
        why: String::new(),
        not_member: false,
        membership_index,
        lease_left_ms: None,
    }
}

/// A random election wait in `[max, 2 * max - min]`.
fn next_wait(core: &Core, salt: u64) -> Duration {
    let (lo, hi) = core.config.election_timeout;
    let spread = u64::try_from((hi - lo).as_millis()).unwrap_or(1).max(1);
    // The clock's nanoseconds differ between nodes and attempts; the id and the attempt
    // number keep two nodes apart even if they read the same.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::from(d.subsec_nanos()));
    let r = crate::machine::seed_for(nanos ^ (core.id << 32) ^ salt);
    hi + Duration::from_millis(r % spread)
}

/// A node of several groups: how far this node is from its group's preferred leader in the
/// voters' id order (0: it is the preferred leader), which delays its candidacy by two
/// spreads of the election timeout, so each group's leader is its preferred one when that
/// node is up, and the next in order otherwise (docs/CLUSTER.md "Spreading the leaders").
/// Always 0 on a node of one group, whose elections are as they always were.
fn rank(core: &Core) -> u32 {
    if core.config.shards <= 1 {
        return 0;
    }
    let mut voters: Vec<NodeId> = core
        .raft
        .metrics()
        .borrow()
        .membership_config
        .membership()
        .voter_ids()
        .collect();
    voters.sort_unstable();
    let n = voters.len();
    let (Some(me), Some(preferred)) = (
        voters.iter().position(|&v| v == core.id),
        super::sharded::preferred_leader(&voters, core.config.group)
            .and_then(|p| voters.iter().position(|&v| v == p)),
    ) else {
        return 0;
    };
    u32::try_from((me + n - preferred) % n).unwrap_or(0)
}

/// Runs the election timer until `stop` changes.
pub(crate) async fn run(core: Arc<Core>, mut stop: watch::Receiver<bool>) {
    let tick = (core.config.heartbeat / 2).max(Duration::from_millis(5));
    let mut attempt = 0u64;
    let mut wait = next_wait(&core, attempt);
    // The later of the last leader contact and the last attempt starts the wait.
    let mut last_try: Option<Instant> = None;
    // The term an election was last asked for in, and when: until Raft's core has begun
    // that election (the term moved), asking again would only queue another behind it.
    let mut asked: Option<(u64, Instant)> = None;
    loop {
        tokio::select! {
            _ = stop.changed() => return,
            () = tokio::time::sleep(tick) => {}
        }
        let (state, voter, term, voters) = {
            let m = core.raft.metrics();
            let m = m.borrow();
            let membership = m.membership_config.membership();
            let voters: Vec<NodeId> = membership.voter_ids().collect();
            (m.state, voters.contains(&core.id), m.current_term, voters)
        };
        let removed = core.check_member().is_err();
        if state == ServerState::Leader || state == ServerState::Shutdown || !voter || removed {
            last_try = None;
            continue;
        }
        // A core stalled on storage (a slow fsync) has not taken the last request from its
        // queue yet: each pre-vote won meanwhile queued one more, and when the core caught
        // up it ran them back to back, the term jumping by one per request (15 -> 27 in the
        // soak) and each election deposing the one before. A request the core dropped
        // without an election is asked again after a few election timeouts.
        if let Some((t, at)) = asked {
            if t == term && at.elapsed() < core.config.election_timeout.1 * 4 {
                continue;
            }
            asked = None;
        }
        let quiet = core.contact.elapsed();
        let since_try = last_try.map_or(Duration::MAX, |t| t.elapsed());
        // Asked at every tick: the membership (and so the rank) may have come after the
        // wait was drawn.
        let (lo, hi) = core.config.election_timeout;
        // Two spreads per rank: the waits of neighbouring ranks do not touch, although each
        // node counts from its own last contact with the leader.
        let due = wait + (hi - lo) * 2 * rank(&core);
        if quiet < due || since_try < due {
            continue;
        }
        // Another voter is about to run (it won a pre-vote here a moment ago): standing at
        // the same time would split the vote and cost both a whole election timeout.
        if core.granted_prevote.elapsed() < core.config.election_timeout.0 {
            continue;
        }
        attempt += 1;
        last_try = Some(Instant::now());
        wait = next_wait(&core, attempt);
        let req = PreVote {
            candidate: core.id,
            last_log: core.log.last_log_id(),
        };
        let Tally {
            granted,
            not_member,
            lease_left,
            refusals,
        } = pre_vote(&core, &voters, &req).await;
        if not_member * 2 > voters.len() {
            core.mark_removed(&format!(
                "{not_member} of the {} voters it knows no longer count it a member",
                voters.len()
            ));
            continue;
        }
        // The term moved while the voters were asked: another candidate won (or is
        // winning) an election this node took part in. Standing now would depose that
        // leader a moment after its election.
        let now_term = core.raft.metrics().borrow().current_term;
        if granted * 2 > voters.len() && now_term != term {
            tracing::debug!(
                target: "bloomkv_cluster::election",
                "pre-vote won, but the term moved from {term} to {now_term} while it was asked: not standing"
            );
            continue;
        }
        if granted * 2 > voters.len() {
            tracing::info!(
                target: "bloomkv_cluster::election",
                "no leader heard for {} ms; pre-vote won ({granted} of {} voters): starting an election for term {}",
                quiet.as_millis(),
                voters.len(),
                term + 1
            );
            if core.raft.trigger().elect().await.is_err() {
                return;
            }
            asked = Some((term, Instant::now()));
        } else {
            core.counters
                .prevotes_lost
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            // Voters that only wait for their lease to run out (the leader went quiet a
            // moment later for them than for this node) would make a majority soon: ask
            // again then rather than a whole election timeout later.
            if granted + lease_left.len() > voters.len() / 2
                && let Some(&longest) = lease_left.iter().max()
            {
                wait = wait.min(Duration::from_millis(longest + 10));
            }
            tracing::debug!(
                target: "bloomkv_cluster::election",
                "no leader heard for {} ms; pre-vote lost ({granted} of {} voters), term stays {term}: {}",
                quiet.as_millis(),
                voters.len(),
                refusals.join("; ")
            );
        }
    }
}

/// The answers to one pre-vote.
struct Tally {
    /// Yeses, this node's own included.
    granted: usize,
    /// Voters that do not count this node a member.
    not_member: usize,
    /// For each voter that said no only because it heard from its leader a moment ago,
    /// how long until it would say yes.
    lease_left: Vec<u64>,
    /// The reasons of the noes and failures.
    refusals: Vec<String>,
}

/// Asks every other voter.
async fn pre_vote(core: &Core, voters: &[NodeId], req: &PreVote) -> Tally {
    let ttl = core.config.election_timeout.0;
    let membership = core.raft.metrics().borrow().membership_config.clone();
    let own_index = membership.log_id().map(|l| l.index);
    let asks = voters.iter().filter(|&&v| v != core.id).map(|&v| {
        let addr = membership
            .membership()
            .get_node(&v)
            .map(|n| core.transport.routes.resolve(v, &n.addr));
        async move {
            let Some(addr) = addr else {
                return Err(format!("node {v} has no address"));
            };
            core.transport
                .call::<_, PreVoteAnswer>(&addr, "/raft/prevote", req, ttl)
                .await
                .map_err(|e| format!("node {v}: {e}"))
        }
    });
    let answers = futures_util::future::join_all(asks).await;
    let mut t = Tally {
        granted: 1,
        not_member: 0,
        lease_left: Vec::new(),
        refusals: Vec::new(),
    };
    for a in answers {
        match a {
            Ok(a) if a.granted => t.granted += 1,
            Ok(a) => {
                // Only a membership at least as new as this node's proves a removal: one
                // that has not caught up with this node's addition says nothing.
                t.not_member += usize::from(a.not_member && a.membership_index >= own_index);
                t.lease_left.extend(a.lease_left_ms);
                t.refusals.push(a.why);
            }
            Err(e) => t.refusals.push(e),
        }
    }
    t
}
