//! Idle-time compaction of level 0: the tables a write burst leaves in level 0 (fewer than
//! `level0_compaction_trigger`, so never due) cost every lookup one filter probe each, for
//! as long as no more writes come to push level 0 over its trigger. Once the database has
//! taken no write for `Options::idle_compaction_delay`, a compaction thread with nothing
//! else to do compacts them into the base level, as an ordinary level-0 compaction would.
//!
//! It never competes with foreground or other background work for long: it starts only when
//! no flush is pending or running and no other compaction runs, takes one job (level 0 and
//! the base-level tables it overlaps, at most what a due level-0 compaction would take), and
//! after it level 0 is empty, so the next one needs a new flush: at most one per flushed
//! memtable. `Db::wait_for_compactions` counts the leftovers as due at once (its caller asks
//! for a settled tree), without waiting for the delay.

use std::time::{Duration, Instant};

use crate::db::compaction::pick;
use crate::util::key::SeqNo;
use crate::options::Options;
use crate::db::version::Version;

/// When the database last took a write, as far as the compaction threads have seen.
#[derive(Debug)]
pub(crate) struct IdleWatch {
    /// The newest sequence number when last looked at.
    seen_seq: SeqNo,
    /// Since when `seen_seq` has not changed (no write arrived).
    since: Instant,
}

impl IdleWatch {
    pub(crate) fn new(seq: SeqNo) -> IdleWatch {
        IdleWatch {
            seen_seq: seq,
            since: Instant::now(),
        }
    }

    /// Notes the newest sequence number `seq`; returns how long none has been written. A
    /// write between two looks restarts the clock at the second look (never earlier than the
    /// last write).
    pub(crate) fn quiet_for(&mut self, seq: SeqNo) -> Duration {
        if seq != self.seen_seq {
            self.seen_seq = seq;
            self.since = Instant::now();
        }
        self.since.elapsed()
    }
}

/// What the background state says about starting an idle compaction now.
pub(crate) struct Quiet {
    /// No frozen memtable, no flush and no compaction running.
    pub nothing_running: bool,
    /// How long no write has arrived.
    pub quiet_for: Duration,
    /// A caller of `wait_for_compactions` asks for a settled tree now.
    pub settling: bool,
}

/// The level-0 compaction to run now, if the tree is idle and level 0 holds tables; else
/// `Ok(wait)`: how long until the delay may be over (`None`: nothing to wait for).
pub(crate) fn plan(
    version: &Version,
    opts: &Options,
    quiet: &Quiet,
    busy: &pick::Busy,
) -> Result<pick::Plan, Option<Duration>> {
    let Some(delay) = opts.idle_compaction_delay else {
        return Err(None);
    };
    if version.levels()[0].is_empty() {
        return Err(None);
    }
    if !quiet.nothing_running {
        // Woken again when the running job ends.
        return Err(None);
    }
    if !quiet.settling && quiet.quiet_for < delay {
        return Err(Some(delay - quiet.quiet_for));
    }
    let targets = pick::level_targets(version, opts);
    pick::plan_avoiding(version, 0, None, opts.compaction_pri, &targets, busy).ok_or(None)
}
