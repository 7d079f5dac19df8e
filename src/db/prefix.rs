//! Prefix scans that skip tables: with `Options::prefix_extractor` set and a prefix the
//! extractor produces, a table whose prefix filter rules the prefix out is left out of the
//! scan before any of its data blocks is read.

use std::ops::Bound;
use std::sync::Arc;

use super::core::DbInner;
use super::read::{TableProbe, range_del_view};
use crate::iter::db_iter::DbIter;
use crate::iter::merge::MergingIterator;
use crate::util::key::SeqNo;
use crate::sstable::FilterVerdict;
use crate::db::version::TableFile;

impl DbInner {
    /// The live entries whose key starts with `prefix`, at `seq`.
    pub(crate) fn prefix_at(&self, prefix: &[u8], seq: SeqNo) -> DbIter {
        let (start, end) = prefix_range(prefix);
        if self.filterable_prefix(prefix).is_none() {
            return self.scan_at(start, end, seq);
        }
        let (merged, view) = self.prefix_iter(prefix);
        let range_dels = range_del_view(&view);
        let seq = view.read_seq(seq);
        DbIter::new(Box::new(merged), seq, start, end)
            .with_range_dels(range_dels)
            .with_keep_alive(Box::new(view))
    }

    /// The merged entries of the current read view for a walk over `prefix`'s keys only,
    /// leaving out the tables that hold none: those outside the prefix's key range (unopened:
    /// a level iterator seeking past a skipped table would otherwise land in the next one
    /// and read its first block), and, when the extractor cuts exactly this prefix, those
    /// whose prefix filter rules it out.
    pub(crate) fn prefix_iter(
        &self,
        prefix: &[u8],
    ) -> (MergingIterator, Arc<super::core::ReadView>) {
        let (start, end) = prefix_range(prefix);
        let name = self.filterable_prefix(prefix);
        self.internal_iter_of(self.read_view(), |f| {
            overlaps(f, &start, &end)
                && name.is_none_or(|n| table_verdict(f, n, prefix) != FilterVerdict::Absent)
        })
    }

    /// What each table of the current version would do in a scan of `prefix`.
    pub(crate) fn explain_prefix(&self, prefix: &[u8]) -> Vec<TableProbe> {
        let view = self.read_view();
        let name = self.filterable_prefix(prefix);
        let (start, end) = prefix_range(prefix);
        let mut out = Vec::new();
        for (level, files) in view.version.levels().iter().enumerate() {
            for f in files {
                let verdict = if !overlaps(f, &start, &end) {
                    FilterVerdict::OutOfRange
                } else {
                    name.map_or(FilterVerdict::NoFilter, |n| table_verdict(f, n, prefix))
                };
                out.push(TableProbe {
                    level,
                    file_number: f.meta.number,
                    verdict,
                    blocks_read: 0,
                    cache_hits: 0,
                    false_positive: false,
                    found: false,
                });
            }
        }
        out
    }

    /// The extractor's name if `prefix` is exactly a prefix it cuts (so tables' prefix
    /// filters can answer for it); `None` otherwise.
    fn filterable_prefix(&self, prefix: &[u8]) -> Option<&str> {
        let e = self.opts.prefix_extractor.as_ref()?;
        (e.prefix(prefix) == Some(prefix)).then(|| e.name())
    }
}

/// What `f`'s prefix filter says of `prefix` (cut by the extractor named `extractor`).
fn table_verdict(f: &TableFile, extractor: &str, prefix: &[u8]) -> FilterVerdict {
    // A table that cannot be opened is kept: the scan then reports the error.
    let Ok(table) = f.reader() else {
        return FilterVerdict::NoFilter;
    };
    match table.prefix_may_match(extractor, prefix) {
        None => FilterVerdict::NoFilter,
        Some(false) => FilterVerdict::Absent,
        Some(true) => FilterVerdict::MayContain,
    }
}

fn overlaps(f: &TableFile, start: &Bound<Vec<u8>>, end: &Bound<Vec<u8>>) -> bool {
    let above_start = match start {
        Bound::Included(s) => f.largest_user_key() >= s.as_slice(),
        Bound::Excluded(s) => f.largest_user_key() > s.as_slice(),
        Bound::Unbounded => true,
    };
    let below_end = match end {
        Bound::Included(e) => f.smallest_user_key() <= e.as_slice(),
        Bound::Excluded(e) => f.smallest_user_key() < e.as_slice(),
        Bound::Unbounded => true,
    };
    above_start && below_end
}

/// The keys starting with `prefix`: from `prefix` up to (excluding) the smallest key above
/// all of them, unbounded when there is none (an empty or all-0xff prefix).
pub(crate) fn prefix_range(prefix: &[u8]) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return (Bound::Included(prefix.to_vec()), Bound::Excluded(end));
        }
    }
    (Bound::Included(prefix.to_vec()), Bound::Unbounded)
}
