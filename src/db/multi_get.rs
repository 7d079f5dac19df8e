//! Batched point lookups ([`Db::multi_get`]) and the no-I/O membership hint
//! ([`Db::key_may_exist`]).

use std::sync::Arc;

use super::database::{Db, check_key};
use crate::error::Result;
use crate::util::key::{self, KIND_SEEK, Kind, SeqNo};
use crate::stats::metrics::bump;
use crate::options::MAX_KEY_BYTES;
use crate::db::version::TableFile;

/// One distinct key of a batch, while it is being looked up.
struct Pending<'k> {
    user_key: &'k [u8],
    lookup: Vec<u8>,
    /// Hash under the database's filter policy, computed once for every table.
    hash: u64,
    /// `Some(answer)` once a memtable or table held a visible version.
    answer: Option<Option<Vec<u8>>>,
}

impl Db {
    /// The current values of `keys`, in the order given (`None` for an absent key), read at
    /// one sequence number: the batch sees one consistent state.
    ///
    /// Cheaper than one [`Db::get`] per key: the keys are sorted once and each distinct key
    /// is hashed once for every table's filter; the tables are visited level by level, each
    /// with all of its keys at once, so keys that fall into the same data block share one read
    /// (and one block-cache lookup) of it.
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] for a key over 64 KiB; corruption or I/O errors from
    /// the files consulted.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// db.put("a", "1")?;
    /// db.put("c", "3")?;
    /// db.flush()?;
    /// let got = db.multi_get(&["c", "b", "a"])?;
    /// assert_eq!(got, [Some(b"3".to_vec()), None, Some(b"1".to_vec())]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn multi_get<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<Vec<Option<Vec<u8>>>> {
        for k in keys {
            check_key(k.as_ref())?;
        }
        self.multi_get_at(keys, self.inner().visible_seq())
    }

    pub(super) fn multi_get_at<K: AsRef<[u8]>>(
        &self,
        keys: &[K],
        seq: SeqNo,
    ) -> Result<Vec<Option<Vec<u8>>>> {
        let inner = self.inner();
        bump(&inner.work.gets, keys.len() as u64);
        // Sort once; equal keys share one lookup.
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_by(|&a, &b| keys[a].as_ref().cmp(keys[b].as_ref()));
        let mut slot = vec![0usize; keys.len()];
        let mut pending: Vec<Pending<'_>> = Vec::with_capacity(keys.len());
        for &i in &order {
            let k = keys[i].as_ref();
            if pending.last().is_none_or(|p| p.user_key != k) {
                pending.push(Pending {
                    user_key: k,
                    lookup: Vec::new(),
                    hash: 0,
                    answer: None,
                });
            }
            slot[i] = pending.len() - 1;
        }

        let view = inner.view_guard();
        let seq = view.read_seq(seq);
        for p in &mut pending {
            let found = view
                .mem
                .get(p.user_key, seq)
                .or_else(|| view.imm.as_ref().and_then(|imm| imm.get(p.user_key, seq)));
            if let Some((kind, value)) = found {
                p.answer = Some((kind == Kind::Put).then_some(value));
            }
        }
        let policy = &inner.opts.filter_policy;
        for p in pending.iter_mut().filter(|p| p.answer.is_none()) {
            p.hash = policy.hash_key(p.user_key);
            p.lookup = key::encode(p.user_key, seq.min(key::MAX_SEQ), KIND_SEEK);
        }

        let mut batch = Vec::with_capacity(pending.len());
        for (level, files) in view.version.levels().iter().enumerate() {
            if pending.iter().all(|p| p.answer.is_some()) {
                break;
            }
            if level == 0 {
                // Level-0 tables overlap: each one is matched against every open key, newest
                // table first.
                for file in files {
                    batch.clear();
                    batch.extend((0..pending.len()).filter(|&i| {
                        pending[i].answer.is_none() && file.covers(pending[i].user_key)
                    }));
                    if !batch.is_empty() {
                        self.probe_table(level, file, &mut pending, &batch)?;
                    }
                }
                continue;
            }
            // Deeper levels are sorted and disjoint, like the keys: one merge-like pass.
            let mut at = 0;
            for file in files {
                if at == pending.len() {
                    break;
                }
                at += pending[at..].partition_point(|p| p.user_key < file.smallest_user_key());
                let end =
                    at + pending[at..].partition_point(|p| p.user_key <= file.largest_user_key());
                batch.clear();
                batch.extend((at..end).filter(|&i| pending[i].answer.is_none()));
                if !batch.is_empty() {
                    self.probe_table(level, file, &mut pending, &batch)?;
                }
                at = end;
            }
        }
        // Each answer moves out to the last copy of its key and is cloned for earlier ones.
        let mut last_use = vec![0usize; pending.len()];
        for (i, &p) in slot.iter().enumerate() {
            last_use[p] = i;
        }
        Ok(slot
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                if last_use[p] == i {
                    pending[p].answer.take().flatten()
                } else {
                    pending[p].answer.clone().flatten()
                }
            })
            .collect())
    }

    /// Looks the keys `batch` (indices into `pending`, ascending) up in one table.
    fn probe_table(
        &self,
        level: usize,
        file: &Arc<TableFile>,
        pending: &mut [Pending<'_>],
        batch: &[usize],
    ) -> Result<()> {
        let inner = self.inner();
        let table = file.reader()?;
        let own_policy = match table.filter_policy() {
            Some(p) if !Arc::ptr_eq(p, &inner.opts.filter_policy) => Some(Arc::clone(p)),
            _ => None,
        };
        let lookups: Vec<&[u8]> = batch
            .iter()
            .map(|&i| pending[i].lookup.as_slice())
            .collect();
        let hashes: Vec<u64> = batch
            .iter()
            .map(|&i| match &own_policy {
                Some(p) => p.hash_key(pending[i].user_key),
                None => pending[i].hash,
            })
            .collect();
        let probes = table.multi_get_in_range(&lookups, &hashes)?;
        let counters = &inner.level_counters[level];
        for (&i, probe) in batch.iter().zip(probes) {
            if probe.filter_checked {
                bump(&counters.checks, 1);
                if probe.maybe {
                    bump(&counters.maybe, 1);
                    if probe.entry.is_none() {
                        // Counted as a false positive even if the table held only versions
                        // newer than the read's sequence number (rare: a concurrent write).
                        bump(&counters.false_positives, 1);
                        table.note_false_positive();
                    }
                }
            }
            if let Some((kind, _, value)) = probe.entry {
                pending[i].answer = Some((kind == Kind::Put).then_some(value));
            }
        }
        Ok(())
    }

    /// Whether `key` may exist, answered from memory alone: the memtables, then the filters of
    /// the tables whose key range covers it. `false` means the key is certainly absent (no
    /// table may hold it, or a memtable holds its newest version and that is a delete);
    /// `true` means it may be present.
    ///
    /// No file is read: a table whose reader is not open (not pinned, not in the table cache)
    /// would need I/O to consult its filter, so it answers "may exist". So does a table
    /// without a usable filter, and a table whose filter says "maybe" (it may hold a delete).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// db.put("here", "1")?;
    /// db.flush()?;
    /// assert!(db.key_may_exist("here"));
    /// db.delete("here")?;
    /// assert!(!db.key_may_exist("here")); // the memtable's delete is the newest version
    /// # Ok(())
    /// # }
    /// ```
    pub fn key_may_exist(&self, key: impl AsRef<[u8]>) -> bool {
        let key = key.as_ref();
        if key.len() > MAX_KEY_BYTES {
            return false;
        }
        let inner = self.inner();
        let view = inner.view_guard();
        let seq = view.read_seq(inner.visible_seq());
        let in_memory = view
            .mem
            .get(key, seq)
            .or_else(|| view.imm.as_ref().and_then(|imm| imm.get(key, seq)));
        if let Some((kind, _)) = in_memory {
            return kind == Kind::Put;
        }
        let policy = &inner.opts.filter_policy;
        let hash = policy.hash_key(key);
        for (_, file) in view.version.tables_for_get(key) {
            let Some(table) = file.open_reader_now() else {
                return true;
            };
            let hash = match table.filter_policy() {
                Some(p) if !Arc::ptr_eq(p, policy) => p.hash_key(key),
                _ => hash,
            };
            // A range tombstone here hides every older version below: the key is absent
            // unless the table holds a newer version, which only a read could tell.
            if table.covering_range_delete(key, seq).is_some() {
                return table.filter_may_contain(hash, false) != Some(false);
            }
            if table.filter_may_contain(hash, false) != Some(false) {
                return true;
            }
        }
        false
    }
}
