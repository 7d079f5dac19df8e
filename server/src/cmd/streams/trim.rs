//! Trimming a stream's oldest entries (XADD's and XTRIM's MAXLEN and MINID, exact or
//! approximate, with LIMIT): one range deletion whatever their number.

use super::store::{Id, MAX_ID, NODE_ENTRIES, corrupt, entry_key, for_each_entry, prev_id};
use crate::resp::Reply;
use crate::store::meta::StreamMeta;
use crate::store::{Txn, prefix_end, sub_prefix, tag};

/// A trimming strategy: MAXLEN or MINID, exact (`=`) or approximate (`~`), with LIMIT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Trim {
    /// MAXLEN: at most this many entries stay.
    MaxLen(u64),
    /// MINID: entries below this ID go.
    MinId(Id),
}

/// A trimming as XADD's and XTRIM's options ask for it.
#[derive(Clone, Copy, Debug)]
pub(super) struct TrimSpec {
    /// The strategy and its threshold.
    pub(super) trim: Trim,
    /// `~`: whole nodes only (Redis's radix-tree nodes, runs of [`NODE_ENTRIES`] here).
    pub(super) approx: bool,
    /// Most entries removed (0: no limit).
    pub(super) limit: u64,
}

/// Entries approximate trimming removes at most per call without LIMIT (Redis: 100 nodes).
pub(super) const DEFAULT_APPROX_LIMIT: u64 = 100 * NODE_ENTRIES;

/// Removes the oldest entries as `spec` says; returns how many went.
pub(super) fn trim(
    txn: &mut Txn<'_>,
    key: &[u8],
    m: &mut StreamMeta,
    spec: TrimSpec,
) -> Result<u64, Reply> {
    // How many of the oldest entries the strategy would remove.
    let below = match spec.trim {
        Trim::MaxLen(max) => m.len.saturating_sub(max),
        Trim::MinId(min) => match prev_id(min) {
            None => 0,
            Some(last_below) => {
                let mut c = 0u64;
                for_each_entry(txn, key, m, (0, 0), last_below, false, |_, _| {
                    c += 1;
                    Ok(true)
                })?;
                c
            }
        },
    };
    let n = if spec.approx {
        // Redis removes whole nodes only, oldest first: each while all of it is to go and
        // LIMIT (counting whole nodes) allows. Nodes here are runs of 100 entries from the
        // first one, the last possibly shorter.
        let mut removed = 0u64;
        while removed < m.len {
            let node = NODE_ENTRIES.min(m.len - removed);
            if removed + node > below || (spec.limit > 0 && removed + node > spec.limit) {
                break;
            }
            removed += node;
        }
        removed
    } else {
        below
    };
    if n == 0 {
        return Ok(0);
    }
    // The (n+1)-th entry bounds the range deletion; the n-th is the last removed.
    let mut seen = 0u64;
    let mut next = None;
    for_each_entry(txn, key, m, (0, 0), MAX_ID, false, |id, _| {
        if seen == n {
            next = Some(id);
            return Ok(false);
        }
        seen += 1;
        Ok(true)
    })?;
    let start = sub_prefix(tag::STREAM, key, m.version);
    let end = match next {
        Some(id) => entry_key(key, m.version, id),
        None => prefix_end(&start).ok_or_else(corrupt)?,
    };
    txn.delete_range(start, end);
    m.len -= seen;
    // Trimming leaves no tombstones: `max_deleted` names XDEL's only, as in Redis.
    m.first = next.unwrap_or((0, 0));
    Ok(seen)
}
