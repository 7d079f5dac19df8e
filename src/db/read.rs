//! The read path: memtables, then level-0 tables newest first, then one table per deeper
//! level; every table's filter is asked (with the key hashed once) before any block is read.

use std::ops::Bound;
use std::sync::atomic::Ordering;

use super::core::DbInner;
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::iter::db_iter::DbIter;
use crate::iter::merge::MergingIterator;
use crate::util::key::{self, Kind, SeqNo};
use crate::stats::metrics::bump;
use crate::range_del::RangeDelView;
use crate::sstable::FilterVerdict;
use crate::db::version::TableFile;
use crate::db::version::level_iter::{ErrorIter, LevelIter};
use std::sync::Arc;

/// One table consulted by a lookup (see [`crate::Db::get_explained`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct TableProbe {
    /// The table's level.
    pub level: usize,
    /// The table's file number.
    pub file_number: u64,
    /// What the table's filter (or key range) said.
    pub verdict: FilterVerdict,
    /// Data blocks read from the file.
    pub blocks_read: u32,
    /// Data blocks found in the block cache.
    pub cache_hits: u32,
    /// The filter said "maybe" and the table did not hold the key.
    pub false_positive: bool,
    /// The table held a version of the key (value or tombstone) visible to the lookup.
    pub found: bool,
}

/// The trace of one point lookup.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct GetExplain {
    /// The answer.
    pub value: Option<Vec<u8>>,
    /// The sequence number the lookup read at.
    pub snapshot: SeqNo,
    /// Where the answer came from: "memtable", "immutable memtable", "table", or "nowhere".
    pub source: &'static str,
    /// Whether the active memtable was checked (always) and the immutable one existed.
    pub checked_immutable: bool,
    /// Every table consulted, in order.
    pub tables: Vec<TableProbe>,
}

impl GetExplain {
    /// Data blocks read from files by this lookup.
    pub fn blocks_read(&self) -> u32 {
        self.tables.iter().map(|t| t.blocks_read).sum()
    }
}

fn visible(kind: Kind, value: Vec<u8>) -> Option<Vec<u8>> {
    (kind == Kind::Put).then_some(value)
}

impl DbInner {
    /// A user's lookup of `user_key` as of `seq` (counted in `Stats::gets`).
    pub(crate) fn get_at(
        &self,
        user_key: &[u8],
        seq: SeqNo,
        trace: Option<&mut GetExplain>,
    ) -> Result<Option<Vec<u8>>> {
        bump(&self.work.gets, 1);
        self.read_at(user_key, seq, trace)
    }

    /// The lookup itself, also made by the engine for its own needs (a compaction filter's
    /// reads), which do not count as users' gets.
    pub(crate) fn read_at(
        &self,
        user_key: &[u8],
        seq: SeqNo,
        mut trace: Option<&mut GetExplain>,
    ) -> Result<Option<Vec<u8>>> {
        let view = self.view_guard();
        let seq = view.read_seq(seq);
        if let Some(t) = trace.as_deref_mut() {
            t.snapshot = seq;
            t.checked_immutable = view.imm.is_some();
        }
        // One hash per lookup: the memtables' key filters and every table filter that hashes
        // with `filter::hash_key` (every built-in kind) share it.
        let key_hash = crate::filter::hash_key(user_key);
        if let Some((kind, value)) = view.mem.get_hashed(user_key, key_hash, seq) {
            if let Some(t) = trace.as_deref_mut() {
                t.source = "memtable";
            }
            return Ok(visible(kind, value));
        }
        if let Some((kind, value)) = view
            .imm
            .as_ref()
            .and_then(|imm| imm.get_hashed(user_key, key_hash, seq))
        {
            if let Some(t) = trace.as_deref_mut() {
                t.source = "immutable memtable";
            }
            return Ok(visible(kind, value));
        }
        let policy = &self.opts.filter_policy;
        let hash = if policy.uses_default_hash() {
            key_hash
        } else {
            policy.hash_key(user_key)
        };
        // Most keys are short: build the lookup key on the stack, not the heap.
        let mut stack = [0u8; 64];
        let heap;
        let lookup: &[u8] = if user_key.len() + key::TRAILER_LEN <= stack.len() {
            let n = user_key.len();
            stack[..n].copy_from_slice(user_key);
            stack[n..n + key::TRAILER_LEN]
                .copy_from_slice(&key::pack_trailer(seq, key::KIND_SEEK).to_le_bytes());
            &stack[..n + key::TRAILER_LEN]
        } else {
            heap = key::encode(user_key, seq, key::KIND_SEEK);
            &heap
        };
        // A table built by another policy (a per-level kind) is probed with that policy's
        // hash: the same one when both hash with `filter::hash_key` (every built-in does).
        for (level, file) in view.version.tables_for_get(user_key) {
            let table = file.reader()?;
            let hash = match table.filter_policy() {
                Some(p) if !Arc::ptr_eq(p, policy) => {
                    if p.uses_default_hash() {
                        key_hash
                    } else {
                        p.hash_key(user_key)
                    }
                }
                _ => hash,
            };
            let counters = &self.level_counters[level];
            // `tables_for_get` matched the key against the table's range already. Most
            // tables probed by a lookup rule the key out on their filter: count that and go
            // on, unless a range tombstone of the table may still answer.
            let verdict = table.filter_verdict(hash);
            if verdict == FilterVerdict::Absent && !table.has_range_deletions() && trace.is_none() {
                bump(&counters.checks, 1);
                continue;
            }
            let got = table.get_in_range_after(lookup, verdict)?;
            let false_positive = got.false_positive;
            match got.verdict {
                FilterVerdict::Absent => bump(&counters.checks, 1),
                FilterVerdict::MayContain => {
                    bump(&counters.checks, 1);
                    bump(&counters.maybe, 1);
                    if false_positive {
                        bump(&counters.false_positives, 1);
                    }
                }
                _ => {}
            }
            if let Some(t) = trace.as_deref_mut() {
                t.tables.push(TableProbe {
                    level,
                    file_number: file.meta.number,
                    verdict: got.verdict,
                    blocks_read: got.blocks_read,
                    cache_hits: got.cache_hits,
                    false_positive,
                    found: got.entry.is_some(),
                });
            }
            if let Some((kind, _, value)) = got.entry {
                if let Some(t) = trace.as_deref_mut() {
                    t.source = "table";
                }
                return Ok(visible(kind, value));
            }
        }
        if let Some(t) = trace {
            t.source = "nowhere";
        }
        Ok(None)
    }

    pub(crate) fn scan_at(&self, start: Bound<Vec<u8>>, end: Bound<Vec<u8>>, seq: SeqNo) -> DbIter {
        let (merged, view) = self.internal_iter();
        let range_dels = range_del_view(&view);
        let seq = view.read_seq(seq);
        DbIter::new(Box::new(merged), seq, start, end)
            .with_range_dels(range_dels)
            .with_keep_alive(Box::new(view))
    }

    /// One iterator over both memtables and every level of the current view (newest source
    /// first), and the view it reads, which must outlive it.
    pub(crate) fn internal_iter(&self) -> (MergingIterator, Arc<super::core::ReadView>) {
        self.internal_iter_of(self.read_view(), |_| true)
    }

    /// As [`DbInner::internal_iter`] over `view`, leaving out the tables `keep` says no to.
    pub(crate) fn internal_iter_of(
        &self,
        view: Arc<super::core::ReadView>,
        keep: impl Fn(&TableFile) -> bool,
    ) -> (MergingIterator, Arc<super::core::ReadView>) {
        let mut children: Vec<Box<dyn InternalIterator>> = vec![Box::new(view.mem.iter())];
        if let Some(imm) = &view.imm {
            children.push(Box::new(imm.iter()));
        }
        for file in view.version.levels()[0].iter().filter(|f| keep(f)) {
            match file.reader() {
                Ok(table) => children.push(Box::new(table.iter())),
                Err(e) => children.push(Box::new(ErrorIter::new(e))),
            }
        }
        for files in view.version.levels().iter().skip(1) {
            // Leaving tables out of a level keeps it sorted and disjoint.
            let kept: Vec<Arc<TableFile>> = files.iter().filter(|f| keep(f)).cloned().collect();
            if !kept.is_empty() {
                children.push(Box::new(LevelIter::new(kept)));
            }
        }
        (MergingIterator::new(children), view)
    }

    pub(crate) fn level_counter_values(&self, level: usize) -> (u64, u64, u64) {
        let c = &self.level_counters[level];
        let maybe = c.maybe.load(Ordering::Relaxed);
        let checks = c.checks.load(Ordering::Relaxed);
        (
            checks,
            checks.saturating_sub(maybe),
            c.false_positives.load(Ordering::Relaxed),
        )
    }
}

/// The range tombstones a scan of `view` must honour: both memtables' and those of every
/// table the MANIFEST records as holding some (the others are not opened).
pub(crate) fn range_del_view(view: &super::core::ReadView) -> Result<RangeDelView> {
    let mut out = RangeDelView::default();
    if let Some(f) = view.mem.range_fragments() {
        out.push(f);
    }
    if let Some(f) = view.imm.as_ref().and_then(|imm| imm.range_fragments()) {
        out.push(f);
    }
    for file in view
        .version
        .all_files()
        .filter(|f| f.meta.range_deletions > 0)
    {
        if let Some(f) = file.reader()?.range_fragments() {
            out.push(Arc::clone(f));
        }
    }
    Ok(out)
}
