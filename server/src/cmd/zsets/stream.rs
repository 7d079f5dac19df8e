//! ZRANGE by rank over many members as a streamed reply (`resp::Stream`): the score index
//! is read from the command's snapshot and encoded a few MiB at a time as the client takes
//! it (ZRANGE 0 -1 on ten million members holds one chunk of the reply, not all of it).

use bloomkv::{DbIter, Snapshot};

use super::store::{Zset, index_prefix, parse_index};
use crate::resp::{Reply, Stream, Streamed, array_header, push_bulk};
use crate::store::prefix_end;

/// Rank ranges of at least this many members are streamed (shorter ones are built whole).
pub const STREAM_MIN: u64 = 1024;

/// Members `start..start + n` by rank (from the highest score when `rev`).
struct RankRange {
    /// Keeps the snapshot the scan reads alive.
    _snap: Snapshot,
    iter: DbIter,
    rev: bool,
    key: Vec<u8>,
    prefix_len: usize,
    skip: u64,
    total: u64,
    left: u64,
    with_scores: bool,
    started: bool,
}

/// A streamed reply of the `n` members from rank `start` (counted from the highest score
/// when `rev`) of the set at `key`, read from `snap` (the snapshot the command read the
/// set's metadata from). The scan starts at the end the ranks count from and steps over
/// `start` members first.
pub fn rank_stream(
    snap: Snapshot,
    key: &[u8],
    z: Zset,
    start: u64,
    n: u64,
    rev: bool,
    with_scores: bool,
) -> Stream {
    let prefix = index_prefix(key, z.version);
    let iter = match prefix_end(&prefix) {
        Some(end) => snap.scan(prefix.as_slice()..end.as_slice()),
        None => snap.scan(prefix.as_slice()..),
    };
    Stream::new(RankRange {
        _snap: snap,
        iter,
        rev,
        key: key.to_vec(),
        prefix_len: prefix.len(),
        skip: start,
        total: n,
        left: n,
        with_scores,
        started: false,
    })
}

impl Streamed for RankRange {
    fn fill(&mut self, proto: u8, out: &mut Vec<u8>, budget: usize) -> Result<bool, String> {
        if !self.started {
            let items = if self.with_scores && proto < 3 {
                self.total * 2
            } else {
                self.total
            };
            array_header(out, items as usize);
            self.started = true;
        }
        while self.left > 0 && out.len() < budget {
            let next = if self.rev {
                self.iter.next_back()
            } else {
                self.iter.next()
            };
            let (k, _) = match next {
                Some(Ok(kv)) => kv,
                Some(Err(e)) => return Err(format!("storage error: {e}")),
                None => return Err("corrupt sorted set in the store: a member is missing".into()),
            };
            if self.skip > 0 {
                self.skip -= 1;
                continue;
            }
            let (m, s) = parse_index(&self.key, self.prefix_len, &k)
                .map_err(|_| "corrupt sorted set in the store".to_string())?;
            if self.with_scores {
                if proto >= 3 {
                    array_header(out, 2);
                }
                push_bulk(out, m);
                Reply::Double(s).encode(proto, out);
            } else {
                push_bulk(out, m);
            }
            self.left -= 1;
        }
        Ok(self.left == 0)
    }
}
