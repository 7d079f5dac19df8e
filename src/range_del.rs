//! Range tombstones: what `delete_range(start, end)` leaves behind.
//!
//! A [`RangeTombstone`] hides every version, with a lower sequence number, of every user key
//! in `[start, end)` (bytewise, end excluded). Tombstones live beside the point entries: in
//! a memtable's own list, in a WAL record's batch, and in a table's range-deletion block
//! (see `docs/FORMAT.md`). Readers never scan them one by one: [`Fragments`] cuts a set of
//! possibly overlapping tombstones into disjoint pieces, each with the sequence numbers of
//! every tombstone over it, so "which tombstone covers this key" is one binary search.

use std::sync::Arc;

use crate::util::coding::{Decoder, put_length_prefixed, put_varint64};
use crate::error::{Error, Result};
use crate::util::key::{self, Kind, SeqNo};

/// One range deletion: user keys `start <= k < end`, at sequence number `seq`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RangeTombstone {
    /// The first user key deleted.
    pub start: Vec<u8>,
    /// The first user key after the range (not deleted).
    pub end: Vec<u8>,
    /// The sequence number of the `delete_range`.
    pub seq: SeqNo,
}

impl RangeTombstone {
    /// Whether `user_key` lies in `[start, end)`.
    #[cfg(test)]
    pub fn contains(&self, user_key: &[u8]) -> bool {
        self.start.as_slice() <= user_key && user_key < self.end.as_slice()
    }

    /// The internal key a table's smallest-key bound uses for the tombstone's start.
    pub fn smallest_key(&self) -> Vec<u8> {
        key::encode(&self.start, self.seq, Kind::Delete)
    }

    /// The internal key a table's largest-key bound uses for the tombstone's end: the last
    /// internal key (sequence 0, delete) of the largest user key the tombstone covers when
    /// that is known, which is when `end` is `x ++ 00` (then it is `x`: nothing sorts between
    /// `x` and `x ++ 00`; tables cut a tombstone there); else of `end` itself, which the
    /// tombstone does not delete (a lookup of `end` in that table simply finds nothing).
    pub fn largest_key(&self) -> Vec<u8> {
        match self.end.split_last() {
            Some((0, covered)) => key::encode(covered, 0, Kind::Delete),
            _ => key::encode(&self.end, 0, Kind::Delete),
        }
    }
}

/// Disjoint pieces of a set of range tombstones, in key order; each piece carries the
/// sequence numbers (newest first) of every tombstone that covers it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Fragments {
    pieces: Vec<Piece>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Piece {
    start: Vec<u8>,
    end: Vec<u8>,
    /// Descending, no duplicates, never empty.
    seqs: Vec<SeqNo>,
}

impl Fragments {
    /// Cuts `tombstones` (any order, overlaps allowed) into disjoint pieces. Tombstones with
    /// `start >= end` cover nothing and are ignored.
    pub fn build(tombstones: &[RangeTombstone]) -> Fragments {
        let mut bounds: Vec<&[u8]> = tombstones
            .iter()
            .filter(|t| t.start < t.end)
            .flat_map(|t| [t.start.as_slice(), t.end.as_slice()])
            .collect();
        bounds.sort_unstable();
        bounds.dedup();
        let mut seqs: Vec<Vec<SeqNo>> = vec![Vec::new(); bounds.len().saturating_sub(1)];
        for t in tombstones.iter().filter(|t| t.start < t.end) {
            let from = bounds.partition_point(|b| *b < t.start.as_slice());
            let to = bounds.partition_point(|b| *b < t.end.as_slice());
            for s in &mut seqs[from..to] {
                s.push(t.seq);
            }
        }
        let pieces = seqs
            .into_iter()
            .enumerate()
            .filter(|(_, s)| !s.is_empty())
            .map(|(i, mut s)| {
                s.sort_unstable_by(|a, b| b.cmp(a));
                s.dedup();
                Piece {
                    start: bounds[i].to_vec(),
                    end: bounds[i + 1].to_vec(),
                    seqs: s,
                }
            })
            .collect();
        Fragments { pieces }
    }

    /// True when no key is covered.
    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    fn piece_for(&self, user_key: &[u8]) -> Option<&Piece> {
        let i = self
            .pieces
            .partition_point(|p| p.end.as_slice() <= user_key);
        self.pieces
            .get(i)
            .filter(|p| p.start.as_slice() <= user_key)
    }

    /// The newest sequence number `<= snapshot` of a tombstone covering `user_key`.
    pub fn covering_seq(&self, user_key: &[u8], snapshot: SeqNo) -> Option<SeqNo> {
        let p = self.piece_for(user_key)?;
        p.seqs.iter().copied().find(|&s| s <= snapshot)
    }

    /// The oldest sequence number `> seq` of a tombstone covering `user_key`: the first
    /// tombstone that hides a version of the key written at `seq`.
    pub fn next_covering_above(&self, user_key: &[u8], seq: SeqNo) -> Option<SeqNo> {
        let p = self.piece_for(user_key)?;
        p.seqs.iter().rev().copied().find(|&s| s > seq)
    }

    /// The pieces as tombstones (one per piece and sequence number), in key order, newest
    /// first within a piece, limited to `[lower, upper)` (`None`: unbounded).
    pub fn tombstones_within(
        &self,
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
    ) -> Vec<RangeTombstone> {
        let mut out = Vec::new();
        for p in &self.pieces {
            let start = match lower {
                Some(l) if l > p.start.as_slice() => l,
                _ => p.start.as_slice(),
            };
            let end = match upper {
                Some(u) if u < p.end.as_slice() => u,
                _ => p.end.as_slice(),
            };
            if start >= end {
                continue;
            }
            for &seq in &p.seqs {
                out.push(RangeTombstone {
                    start: start.to_vec(),
                    end: end.to_vec(),
                    seq,
                });
            }
        }
        out
    }

    /// Every tombstone (see [`Fragments::tombstones_within`]).
    pub fn tombstones(&self) -> Vec<RangeTombstone> {
        self.tombstones_within(None, None)
    }
}

/// The tombstones a read must honour, from several sources (memtables, tables), each already
/// cut into [`Fragments`]. Empty for a database that never saw a range delete, so the read
/// path pays nothing then.
#[derive(Debug, Default, Clone)]
pub struct RangeDelView {
    sets: Vec<Arc<Fragments>>,
}

impl RangeDelView {
    /// Adds one source's tombstones (an empty set is skipped).
    pub fn push(&mut self, set: Arc<Fragments>) {
        if !set.is_empty() {
            self.sets.push(set);
        }
    }

    /// True when nothing is covered.
    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    /// Whether a version of `user_key` at `seq` is hidden at `snapshot` by a newer tombstone.
    pub fn covers(&self, user_key: &[u8], seq: SeqNo, snapshot: SeqNo) -> bool {
        self.sets
            .iter()
            .any(|s| s.covering_seq(user_key, snapshot).is_some_and(|t| t > seq))
    }
}

/// Encodes a table's range-deletion block (see `docs/FORMAT.md`, "Range-deletion block"):
/// `varint count`, then per tombstone `lp start | lp end | u64 LE seq`, sorted by start,
/// then sequence number descending.
pub fn encode_block(tombstones: &[RangeTombstone]) -> Vec<u8> {
    let mut out = Vec::new();
    put_varint64(&mut out, tombstones.len() as u64);
    for t in tombstones {
        put_length_prefixed(&mut out, &t.start);
        put_length_prefixed(&mut out, &t.end);
        out.extend_from_slice(&t.seq.to_le_bytes());
    }
    out
}

/// Decodes and checks a range-deletion block. Errors are `Corruption` at the offset within
/// `bytes` of the bad field (the caller locates it in the file).
pub fn decode_block(bytes: &[u8]) -> Result<Vec<RangeTombstone>> {
    let mut d = Decoder::new(bytes);
    let count = d.varint64()?;
    // Each tombstone takes at least 10 bytes: checked before anything is allocated.
    if count > (bytes.len() / 10) as u64 {
        return Err(Error::corrupt_bytes(
            0,
            format!(
                "range-deletion block claims {count} tombstones in {} bytes",
                bytes.len()
            ),
        ));
    }
    let mut out: Vec<RangeTombstone> = Vec::with_capacity(count as usize);
    for i in 0..count {
        let at = d.position() as u64;
        let start = d.length_prefixed()?.to_vec();
        let end = d.length_prefixed()?.to_vec();
        let seq_at = d.position() as u64;
        let seq = d.u64_le()?;
        if start >= end {
            return Err(Error::corrupt_bytes(
                at,
                format!("range tombstone {i} is empty or inverted"),
            ));
        }
        if seq > key::MAX_SEQ {
            return Err(Error::corrupt_bytes(
                seq_at,
                format!("range tombstone {i}: sequence {seq} passes the largest"),
            ));
        }
        let t = RangeTombstone { start, end, seq };
        if let Some(prev) = out.last()
            && (prev.start.as_slice(), std::cmp::Reverse(prev.seq))
                >= (t.start.as_slice(), std::cmp::Reverse(t.seq))
        {
            return Err(Error::corrupt_bytes(
                at,
                format!("range tombstone {i} is out of order"),
            ));
        }
        out.push(t);
    }
    if !d.is_empty() {
        return Err(Error::corrupt_bytes(
            d.position() as u64,
            format!(
                "{} bytes after the last range tombstone",
                d.remaining().len()
            ),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(start: &str, end: &str, seq: SeqNo) -> RangeTombstone {
        RangeTombstone {
            start: start.into(),
            end: end.into(),
            seq,
        }
    }

    #[test]
    fn fragments_answer_like_a_scan_of_every_tombstone() {
        let ts = [t("b", "f", 5), t("d", "k", 9), t("a", "c", 2), t("x", "z", 1)];
        let f = Fragments::build(&ts);
        for k in ["", "a", "b", "bb", "c", "d", "e", "f", "j", "k", "x", "y", "z"] {
            for snap in [0, 1, 2, 4, 5, 8, 9, 100] {
                let naive = ts
                    .iter()
                    .filter(|t| t.contains(k.as_bytes()) && t.seq <= snap)
                    .map(|t| t.seq)
                    .max();
                assert_eq!(f.covering_seq(k.as_bytes(), snap), naive, "{k} @ {snap}");
                let above = ts
                    .iter()
                    .filter(|t| t.contains(k.as_bytes()) && t.seq > snap)
                    .map(|t| t.seq)
                    .min();
                assert_eq!(f.next_covering_above(k.as_bytes(), snap), above);
            }
        }
        // Back to tombstones and fragmented again: the same answers.
        assert_eq!(Fragments::build(&f.tombstones()), f);
    }

    #[test]
    fn block_round_trips_and_rejects_damage() {
        let f = Fragments::build(&[t("b", "f", 5), t("d", "k", 9)]);
        let ts = f.tombstones();
        let bytes = encode_block(&ts);
        assert_eq!(decode_block(&bytes).unwrap(), ts);
        assert!(decode_block(&bytes[..bytes.len() - 1]).is_err());
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(decode_block(&extra).is_err());
        let inverted = encode_block(&[t("f", "b", 1)]);
        assert!(decode_block(&inverted).is_err());
        let unordered = encode_block(&[t("c", "d", 1), t("a", "b", 1)]);
        assert!(decode_block(&unordered).is_err());
    }

    #[test]
    fn clipping_keeps_only_the_part_inside() {
        let f = Fragments::build(&[t("b", "m", 3)]);
        assert_eq!(
            f.tombstones_within(Some(b"d"), Some(b"g")),
            vec![t("d", "g", 3)]
        );
        assert!(f.tombstones_within(Some(b"m"), None).is_empty());
    }
}
