//! Background work on the table set: leveled compaction and re-filtering.
//!
//! * [`pick`]: what to compact (scores, which table of a level, the manual compaction's steps).
//! * [`merge`]: merging inputs, dropping versions nothing can read, writing the outputs.
//! * [`refilter`]: rewriting a table whose filter no longer fits its level's share.
//! * [`filter_budget`]: how filter memory is spread over the levels (Monkey).
//!
//! A job takes a version, the options and the env (in a [`Context`]) and returns an
//! [`Outcome`]: the version edit and the files it wrote. Installing it is the database's
//! business; nothing here calls back into `db`, except through the [`Host`] it is given.

pub(crate) mod filter_budget;
pub(crate) mod merge;
pub(crate) mod pick;
pub(crate) mod refilter;
#[cfg(test)]
mod test_version;

use std::path::Path;
use std::sync::Arc;

use crate::env::Env;
use crate::filter::FilterPolicy;
use crate::util::key::SeqNo;
use crate::db::manifest::VersionEdit;
use crate::options::Options;
use crate::util::rate::RateLimiter;
use crate::db::table_cache::TableCache;
use crate::db::table_writer::TableWriter;
use crate::db::version::Version;

/// What a running job needs from the database that runs it.
pub(crate) trait Host {
    /// A fresh file number for an output table.
    fn new_file_number(&self) -> u64;
    /// The value of `key` as of sequence number `seq` (for the compaction filter's reads;
    /// `seq` is a snapshot the database holds for the job).
    fn get_at(&self, key: &[u8], seq: SeqNo) -> crate::error::Result<Option<Vec<u8>>>;
}

/// Everything a job reads.
pub(crate) struct Context<'a> {
    pub env: &'a Arc<dyn Env>,
    pub dir: &'a Path,
    pub opts: &'a Options,
    /// Opens written tables back to verify them.
    pub cache: &'a TableCache,
    /// Sequence numbers of live snapshots, ascending.
    pub snapshots: &'a [SeqNo],
    /// Where the compaction filter's reads look (`Options::compaction_filter`): a snapshot
    /// held for the job, at or below every other live snapshot.
    pub read_seq: SeqNo,
    pub host: &'a dyn Host,
    /// `Options::compaction_bytes_per_sec`, shared by the compaction threads.
    pub limiter: Option<&'a RateLimiter>,
}

impl<'a> Context<'a> {
    /// A writer of output tables for `level` with `filter`, cut at the target file size.
    fn writer<'b>(
        &'b self,
        level: usize,
        filter: Option<Arc<dyn FilterPolicy>>,
        next_number: &'b mut dyn FnMut() -> u64,
    ) -> TableWriter<'b>
    where
        'a: 'b,
    {
        TableWriter::new(
            self.env.as_ref(),
            self.dir,
            self.cache,
            self.opts,
            level,
            filter,
            self.opts.target_file_bytes,
            next_number,
        )
        .rate_limited(self.limiter)
    }
}

/// A finished job, ready to install.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// Tables deleted and added, and the level's new compaction pointer.
    pub edit: VersionEdit,
    /// The level compacted (or re-filtered).
    pub level: usize,
    /// The level its tables go to.
    pub out_level: usize,
    pub kind: JobKind,
    pub bytes_read: u64,
    pub bytes_written: u64,
}

/// What a job did to its inputs (for the accounting of bytes written per cause).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JobKind {
    /// Merged them into new tables of the output level.
    Merge,
    /// Moved a table down unchanged: nothing read or written.
    TrivialMove,
    /// Rewrote a table on its own level for a new filter.
    Refilter,
}

/// The next job for `version`, if one is due: the level with the highest score, else (under
/// Monkey) the table whose filter is furthest from its level's share.
pub(crate) enum Job {
    Compact(pick::Plan),
    Refilter(refilter::Refilter),
}

/// Picks the next job that can run beside the jobs in `busy`, and marks its inputs busy:
/// levels in order of score (each level's tables in `Options::compaction_pri` order), then (under
/// Monkey) the re-filter of a table that is neither busy nor in `given_up` (tables a
/// re-filter could not help).
pub(crate) fn pick_job(
    version: &Version,
    opts: &Options,
    pointers: &[Option<Vec<u8>>],
    given_up: &[u64],
    busy: &mut pick::Busy,
) -> Option<Job> {
    let targets = pick::level_targets(version, opts);
    for (level, _) in pick::scores(version, opts, &targets) {
        let pointer = pointers.get(level).and_then(|p| p.as_deref());
        if let Some(plan) =
            pick::plan_avoiding(version, level, pointer, opts.compaction_pri, &targets, busy)
        {
            let job = Job::Compact(plan);
            busy.take(&job.claim());
            return Some(job);
        }
    }
    let skip: Vec<u64> = given_up.iter().copied().chain(busy.tables()).collect();
    let r = refilter::pick(version, opts, &skip)?;
    let job = Job::Refilter(r);
    busy.take(&job.claim());
    Some(job)
}

impl Job {
    /// What the job holds while it runs.
    pub(crate) fn claim(&self) -> pick::Claim {
        match self {
            Job::Compact(plan) => pick::Claim {
                levels: Some((plan.level, plan.out_level)),
                tables: plan.all_inputs().map(|f| f.meta.number).collect(),
            },
            Job::Refilter(r) => pick::Claim {
                levels: None,
                tables: vec![r.file.meta.number],
            },
        }
    }
}

/// Whether any job is due (running or not).
pub(crate) fn is_due(version: &Version, opts: &Options, given_up: &[u64]) -> bool {
    !pick::scores(version, opts, &pick::level_targets(version, opts)).is_empty()
        || refilter::pick(version, opts, given_up).is_some()
}
