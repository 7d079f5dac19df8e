//! Looking up many keys in one table: each data block that holds some of them is read once.

use std::sync::Arc;

use crate::error::Result;
use crate::sstable::block::{Block, BlockIter};
use crate::sstable::table::Table;
use crate::util::key::{self, Kind};

/// What one table said about one key of a [`Table::multi_get_in_range`] call.
#[derive(Debug, Default)]
pub(crate) struct MultiGetProbe {
    /// The filter was consulted (the table has a usable one).
    pub filter_checked: bool,
    /// The filter said "may contain" (or there was no filter).
    pub maybe: bool,
    /// The newest visible entry of the key in this table: kind, sequence number and value
    /// (a delete when a range tombstone of the table hides the key).
    pub entry: Option<(Kind, u64, Vec<u8>)>,
}

impl Table {
    /// Looks up several keys in this table at once.
    ///
    /// `lookups[i]` is `key::encode(user_key, snapshot, KIND_SEEK)`, in increasing internal-key
    /// order; `hashes[i]` is the user key's hash under this table's filter policy. Keys the
    /// filter rules out read nothing; consecutive keys whose lookups lead to the same data
    /// block share one read of it (and one decode of its restart array). The caller has matched
    /// each key against the table's key range.
    ///
    /// # Errors
    /// `Corruption` naming the file and block for a damaged data block; `Io` if a read fails.
    pub(crate) fn multi_get_in_range(
        &self,
        lookups: &[&[u8]],
        hashes: &[u64],
    ) -> Result<Vec<MultiGetProbe>> {
        let mut out = self.multi_get_points(lookups, hashes)?;
        // Range tombstones are not in the filter: checked for every key, filtered out or not.
        if let Some(f) = self.range_fragments() {
            for (lookup, probe) in lookups.iter().zip(&mut out) {
                let snapshot = super::table::lookup_seq(lookup);
                if let Some(t) = f.covering_seq(key::user_key(lookup), snapshot)
                    && probe.entry.as_ref().is_none_or(|(_, seq, _)| *seq < t)
                {
                    probe.entry = Some((Kind::Delete, t, Vec::new()));
                }
            }
        }
        Ok(out)
    }

    fn multi_get_points(&self, lookups: &[&[u8]], hashes: &[u64]) -> Result<Vec<MultiGetProbe>> {
        let mut out = Vec::with_capacity(lookups.len());
        // The block last read: its index position and an iterator over it.
        let mut open: Option<(usize, BlockIter)> = None;
        for (lookup, &hash) in lookups.iter().zip(hashes) {
            let mut probe = MultiGetProbe::default();
            match self.filter_may_contain(hash, true) {
                Some(false) => {
                    probe.filter_checked = true;
                    out.push(probe);
                    continue;
                }
                Some(true) => probe.filter_checked = true,
                None => {}
            }
            probe.maybe = true;
            let pos = self.index_seek(lookup);
            let Some(handle) = self.index.get(pos) else {
                out.push(probe);
                continue;
            };
            let locate = |e: crate::error::Error| e.located(self.path(), handle.offset);
            match &mut open {
                Some((at, it)) if *at == pos && it.valid() => {
                    // The iterator is on the first entry >= the previous (smaller) lookup, so
                    // every entry before it is smaller than this one too: walking on from there
                    // finds the answer. Neighbouring keys take a step or two instead of a seek.
                    let mut steps = 0;
                    while it.valid() && key::compare(it.key(), lookup).is_lt() {
                        if steps == 16 {
                            it.seek(lookup).map_err(locate)?;
                            break;
                        }
                        it.advance().map_err(locate)?;
                        steps += 1;
                    }
                }
                _ => {
                    let (block, _): (Arc<Block>, bool) = self.data_block(pos)?;
                    let it = &mut open.insert((pos, BlockIter::new(block, key::compare))).1;
                    it.seek(lookup).map_err(locate)?;
                }
            }
            let Some((_, it)) = &open else {
                out.push(probe);
                continue;
            };
            if it.valid() {
                let p = key::parse(it.key()).map_err(locate)?;
                if p.user_key == key::user_key(lookup) {
                    probe.entry = Some((p.kind, p.seq, it.value().to_vec()));
                }
            }
            out.push(probe);
        }
        Ok(out)
    }
}
