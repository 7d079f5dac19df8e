//! LRANGE over many elements as a streamed reply (`resp::Stream`): the elements are read
//! from the command's snapshot and encoded a few MiB at a time as the client takes them, so
//! `LRANGE k 0 -1` on ten million elements holds one chunk of the reply, not all of it.

use std::ops::Bound;

use bloomkv::{DbIter, Snapshot};

use super::store::{List, elem_key};
use crate::resp::{Stream, Streamed, array_header, push_bulk};

/// Ranges of at least this many elements are streamed (shorter ones are built whole).
pub const STREAM_MIN: u64 = 1024;

/// The elements `from..from + n` of a list, read from a snapshot.
struct ListRange {
    /// Keeps the snapshot the scan reads alive.
    _snap: Snapshot,
    iter: DbIter,
    total: u64,
    left: u64,
    next_pos: u64,
    prefix_len: usize,
    started: bool,
}

/// A streamed reply of the `n` elements from index `from` of list `l` at `key`, read from
/// `snap` (the snapshot the command read the list's metadata from).
pub fn range_stream(snap: Snapshot, key: &[u8], l: List, from: u64, n: u64) -> Stream {
    let first = l.head + from;
    let start = elem_key(key, l.version, first);
    let end = elem_key(key, l.version, first + n);
    let prefix_len = start.len() - 8;
    let iter = snap.scan((Bound::Included(start), Bound::Excluded(end)));
    Stream::new(ListRange {
        _snap: snap,
        iter,
        total: n,
        left: n,
        next_pos: first,
        prefix_len,
        started: false,
    })
}

impl Streamed for ListRange {
    fn fill(&mut self, _proto: u8, out: &mut Vec<u8>, budget: usize) -> Result<bool, String> {
        if !self.started {
            array_header(out, self.total as usize);
            self.started = true;
        }
        while self.left > 0 && out.len() < budget {
            let (k, v) = match self.iter.next() {
                Some(Ok(kv)) => kv,
                Some(Err(e)) => return Err(format!("storage error: {e}")),
                None => return Err("corrupt list in the store: an element is missing".into()),
            };
            let pos = k
                .get(self.prefix_len..)
                .and_then(|p| p.try_into().ok())
                .map(u64::from_be_bytes);
            if pos != Some(self.next_pos) {
                return Err("corrupt list in the store: an element is missing".into());
            }
            push_bulk(out, &v);
            self.next_pos += 1;
            self.left -= 1;
        }
        Ok(self.left == 0)
    }
}
