//! Expiry in cluster mode: only the leader looks for keys due, and their removal goes
//! through the log, so every node removes the same keys at the same point of the log.
//!
//! Ten times a second the leader scans the start of its expiry index (as the standalone
//! reclaimer, `store::expire`) and proposes the keys due as one [`Request::Expire`] per
//! database (wrapped in [`Request::InDb`] but for database 0); each
//! node applies it with `store::expire::remove_if_due` at the entry's (leader) time, so a
//! key whose expiry changed meanwhile is left alone everywhere. Reads never see an expired
//! key in any case (`Txn::live`). The same entries drop replicated WATCHes older than an
//! hour ([`super::watches::WATCH_TTL_MS`]); while any exist, an empty sweep is proposed
//! once a minute for that.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::codec::Request;
use super::{Cluster, RaftRole};
use crate::store::Store;

/// How often the leader looks (Redis's active expiry runs ten times a second).
const PERIOD: Duration = Duration::from_millis(100);
/// Keys proposed per entry.
const PER_ENTRY: usize = 128;
/// How often watches are swept when no key expires.
const WATCH_SWEEP: Duration = Duration::from_secs(60);

/// Runs until `stop` turns true.
pub async fn run(cluster: Cluster, store: Arc<Store>, mut stop: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(PERIOD);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_sweep = Instant::now();
    let mut logged = false;
    loop {
        tokio::select! {
            _ = stop.changed() => return,
            _ = tick.tick() => {}
        }
        if *stop.borrow() {
            return;
        }
        if cluster.replicator.status().role != RaftRole::Leader {
            continue;
        }
        loop {
            let now = crate::store::txn::unix_ms();
            let due = match crate::store::expire::due(&store, now, PER_ENTRY) {
                Ok(d) => d,
                Err(e) => {
                    if !logged {
                        crate::log::warn(&format!("looking for expired keys failed: {e:?}"));
                        logged = true;
                    }
                    break;
                }
            };
            let sweep = cluster.applier.watching() > 0 && last_sweep.elapsed() >= WATCH_SWEEP;
            if due.is_empty() && !sweep {
                break;
            }
            last_sweep = Instant::now();
            let n = due.len();
            // One request per database, in one entry's worth of proposals (`due` lists
            // the databases in order).
            let mut per_db: Vec<(u8, Vec<(u64, bytes::Bytes)>)> = Vec::new();
            for (db, at, k) in due {
                match per_db.last_mut() {
                    Some((d, keys)) if *d == db => keys.push((at, k.into())),
                    _ => per_db.push((db, vec![(at, k.into())])),
                }
            }
            if per_db.is_empty() {
                per_db.push((0, Vec::new()));
            }
            let mut failed = false;
            for (db, keys) in per_db {
                let req = Request::in_db(db, Request::Expire { due: keys });
                failed |= cluster.replicator.propose(req.encode()).await.is_err();
                if failed {
                    break;
                }
            }
            if failed || n < PER_ENTRY {
                // Lost the leadership or no quorum: the next tick looks again.
                break;
            }
            logged = false;
        }
    }
}
