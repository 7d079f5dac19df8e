//! Short index keys: the index stores, per data block, a key `>=` every key of the block and
//! `<` every key of the next block, as short as cheaply possible.
//!
//! The rules matter for [`crate::sstable::Table::get`], which reads exactly one data block:
//! - when the block's last user key equals the next block's first user key, the separator is
//!   the last internal key itself (versions of one user key may straddle blocks);
//! - otherwise it is `u ++ trailer 0`, where `u` is a short user key with
//!   `last_user <= u < next_user`. Trailer 0 (sequence 0, delete) is the largest internal key
//!   of `u`, so every version of `last_user` lies in this block or an earlier one, and a lookup
//!   for `last_user` at any snapshot lands in the block holding its versions.

use crate::util::key;

/// The separator between a block ending with internal key `last` and the next block starting
/// with internal key `next` (`last < next`).
pub fn separator(last: &[u8], next: &[u8]) -> Vec<u8> {
    let (lu, nu) = (key::user_key(last), key::user_key(next));
    if lu == nu {
        return last.to_vec();
    }
    let mut u = shortest_between(lu, nu);
    u.extend_from_slice(&0u64.to_le_bytes());
    u
}

/// The index key for the table's last block, whose last internal key is `last`.
pub fn last_separator(last: &[u8]) -> Vec<u8> {
    let lu = key::user_key(last);
    // Shortest successor: bump the first byte that is not 0xff and cut there.
    let mut u = match lu.iter().position(|&b| b != 0xff) {
        Some(i) => {
            let mut u = lu[..=i].to_vec();
            u[i] += 1;
            u
        }
        None => lu.to_vec(),
    };
    u.extend_from_slice(&0u64.to_le_bytes());
    u
}

/// A short `u` with `lo <= u < hi` (requires `lo < hi`).
fn shortest_between(lo: &[u8], hi: &[u8]) -> Vec<u8> {
    let common = lo.iter().zip(hi).take_while(|(a, b)| a == b).count();
    if common < lo.len() {
        // lo[common] < hi[common]: bump lo[common] if that stays below hi[common].
        let b = lo[common];
        if b < 0xff && b + 1 < hi[common] {
            let mut u = lo[..=common].to_vec();
            u[common] = b + 1;
            return u;
        }
    }
    lo.to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::key::{Kind, compare, encode};
    use std::cmp::Ordering::*;

    #[test]
    fn separators_sit_between() {
        let cases: &[(&[u8], &[u8])] = &[
            (b"abc", b"abd"),
            (b"abc", b"abz"),
            (b"abc", b"b"),
            (b"a", b"a\x00"),
            (b"", b"x"),
            (b"ab\xff\xff", b"ac"),
            (b"helloworld", b"hellozzz"),
        ];
        for (lo, hi) in cases {
            let last = encode(lo, 7, Kind::Put);
            let next = encode(hi, 9, Kind::Put);
            let s = separator(&last, &next);
            assert_ne!(compare(&last, &s), Greater, "{lo:?} {hi:?}");
            assert_eq!(compare(&s, &next), Less, "{lo:?} {hi:?}");
            assert!(s.len() <= last.len());
            // every version of the last user key is <= s
            assert_ne!(compare(&encode(lo, 0, Kind::Delete), &s), Greater);
        }
        let s = separator(
            &encode(b"helloworld", 1, Kind::Put),
            &encode(b"hellozzz", 1, Kind::Put),
        );
        assert_eq!(key::user_key(&s), b"hellox");
        let last = encode(b"k", 9, Kind::Put);
        assert_eq!(separator(&last, &encode(b"k", 3, Kind::Put)), last);
    }

    #[test]
    fn last_separator_is_above() {
        for u in [&b"abc"[..], b"\xff\xff", b"", b"a\xff"] {
            let last = encode(u, 5, Kind::Put);
            assert_ne!(compare(&last, &last_separator(&last)), Greater);
        }
        assert_eq!(
            key::user_key(&last_separator(&encode(b"abc", 5, Kind::Put))),
            b"b"
        );
    }
}
