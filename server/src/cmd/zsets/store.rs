//! How a sorted set lives in the engine: the metadata holds the cardinality, and each member
//! has two keys under the set's version:
//!
//! ```text
//! 'z' be32(len) key be64(version) member             ->  score (f64 bits, LE)
//! 'r' be32(len) key be64(version) score(8) member    ->  empty
//! ```
//!
//! A score of -0.0 is stored as 0.0, as Redis's compact encoding (every set under 128
//! members) stores it, so ZSCORE answers `0` as Redis does.
//!
//! The member key answers ZSCORE and membership with one point lookup; the score index
//! (`score::encode`: byte order = numeric order, -0.0 stored as 0.0) keeps the members in
//! Redis's order (score, then member bytes), so a score range or the ends of the set are one
//! scan. Ranks are not stored: a rank is counted by a scan from the nearer end it can know.

use std::ops::Bound;

use super::score;
use crate::cmd::WRONGTYPE;
use crate::resp::Reply;
use crate::store::{Meta, Txn, prefix_end, sub_key, sub_prefix, tag};

/// Runs of score-index keys at least this long are removed with one range deletion.
const RANGE_DELETE_MIN: usize = 32;

/// A sorted set's version and cardinality.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Zset {
    /// Version its members live under.
    pub version: u64,
    /// Number of members.
    pub card: u64,
}

/// The sorted set at `key`: `None` if missing, WRONGTYPE for other types.
///
/// # Errors
/// WRONGTYPE, engine errors.
pub fn get_zset(txn: &Txn<'_>, key: &[u8]) -> Result<Option<Zset>, Reply> {
    match txn.meta(key)? {
        None => Ok(None),
        Some(Meta::Zset { version, card }) => Ok(Some(Zset { version, card })),
        Some(_) => Err(Reply::Error(WRONGTYPE.into())),
    }
}

/// Writes the set's metadata, or removes the key when it has no members left.
///
/// # Errors
/// Engine errors.
pub fn store_zset(txn: &mut Txn<'_>, key: &[u8], z: Zset) -> Result<(), Reply> {
    if z.card == 0 {
        txn.remove_key(key)?;
        Ok(())
    } else {
        txn.put_meta(
            key,
            Meta::Zset {
                version: z.version,
                card: z.card,
            },
        )
    }
}

/// The engine key of `member`'s score.
pub fn member_key(key: &[u8], version: u64, member: &[u8]) -> Vec<u8> {
    sub_key(tag::ZMEMBER, key, version, member)
}

/// The prefix of every member's key of the set (what follows it is the member).
pub fn member_prefix(key: &[u8], version: u64) -> Vec<u8> {
    sub_prefix(tag::ZMEMBER, key, version)
}

/// The score-index key of `member` at `score`.
pub fn index_key(key: &[u8], version: u64, score: f64, member: &[u8]) -> Vec<u8> {
    let mut k = index_prefix(key, version);
    k.extend_from_slice(&score::encode(score));
    k.extend_from_slice(member);
    k
}

/// The prefix of every score-index key of the set.
pub fn index_prefix(key: &[u8], version: u64) -> Vec<u8> {
    sub_prefix(tag::ZSCORE, key, version)
}

/// The prefix of the score-index keys of members scored `score`.
pub fn score_prefix(key: &[u8], version: u64, score: f64) -> Vec<u8> {
    let mut k = index_prefix(key, version);
    k.extend_from_slice(&score::encode(score));
    k
}

/// The error for a set whose keys disagree with its metadata.
pub fn corrupt(key: &[u8]) -> Reply {
    Reply::err(format!(
        "corrupt sorted set '{}' in the store",
        String::from_utf8_lossy(key)
    ))
}

/// The score a member key's value holds.
///
/// # Errors
/// A damaged value.
pub fn decode_member_value(key: &[u8], v: &[u8]) -> Result<f64, Reply> {
    let b: [u8; 8] = v.try_into().map_err(|_| corrupt(key))?;
    Ok(f64::from_le_bytes(b))
}

/// `member`'s score, if it is in the set.
///
/// # Errors
/// Engine errors, damage.
pub fn score_of(txn: &Txn<'_>, key: &[u8], z: Zset, member: &[u8]) -> Result<Option<f64>, Reply> {
    if !crate::store::member_fits(key, member) {
        return Ok(None);
    }
    match txn.get(&member_key(key, z.version, member))? {
        Some(v) => Ok(Some(decode_member_value(key, &v)?)),
        None => Ok(None),
    }
}

/// Sets `member`'s score to `new` (its old score `old`, if it had one; -0.0 is stored as
/// 0.0); the caller keeps the cardinality.
pub fn set_score(
    txn: &mut Txn<'_>,
    key: &[u8],
    z: Zset,
    member: &[u8],
    old: Option<f64>,
    new: f64,
) {
    let new = if new == 0.0 { 0.0 } else { new };
    if let Some(o) = old {
        txn.delete(index_key(key, z.version, o, member));
    }
    txn.put(
        member_key(key, z.version, member),
        new.to_le_bytes().to_vec(),
    );
    txn.put(index_key(key, z.version, new, member), Vec::new());
}

/// Removes `member` (scored `score`); the caller keeps the cardinality.
pub fn remove_member(txn: &mut Txn<'_>, key: &[u8], z: Zset, member: &[u8], score: f64) {
    txn.delete(index_key(key, z.version, score, member));
    txn.delete(member_key(key, z.version, member));
}

/// Splits a score-index entry into its member and score.
///
/// # Errors
/// A damaged key.
pub fn parse_index<'k>(
    key: &[u8],
    prefix_len: usize,
    k: &'k [u8],
) -> Result<(&'k [u8], f64), Reply> {
    let rest = k.get(prefix_len..).ok_or_else(|| corrupt(key))?;
    let (s, member) = rest.split_at_checked(8).ok_or_else(|| corrupt(key))?;
    let score = score::decode(s.try_into().map_err(|_| corrupt(key))?);
    Ok((member, score))
}

/// Bounds on scores, as ZRANGEBYSCORE's `min max` give them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreRange {
    /// Lowest score.
    pub min: f64,
    /// `min` itself is excluded.
    pub minex: bool,
    /// Highest score.
    pub max: f64,
    /// `max` itself is excluded.
    pub maxex: bool,
}

impl ScoreRange {
    /// The index keys of the members in range, as engine key bounds.
    fn bounds(&self, key: &[u8], version: u64) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
        let after_score = |s: f64| match prefix_end(&score_prefix(key, version, s)) {
            Some(e) => Bound::Excluded(e),
            None => Bound::Unbounded,
        };
        let start = if self.minex {
            match after_score(self.min) {
                Bound::Excluded(e) => Bound::Included(e),
                _ => Bound::Excluded(score_prefix(key, version, self.min)),
            }
        } else {
            Bound::Included(score_prefix(key, version, self.min))
        };
        let end = if self.maxex {
            Bound::Excluded(score_prefix(key, version, self.max))
        } else {
            after_score(self.max)
        };
        // Keep the scan inside this set's index.
        let end = match end {
            Bound::Unbounded => match prefix_end(&index_prefix(key, version)) {
                Some(e) => Bound::Excluded(e),
                None => Bound::Unbounded,
            },
            e => e,
        };
        (start, end)
    }

    /// True when no score can be in the range (Redis checks this before any lookup).
    pub fn is_empty(&self) -> bool {
        self.min > self.max || (self.min == self.max && (self.minex || self.maxex))
    }
}

/// Calls `f` with the members (and scores) in `range`, lowest first or, when `reverse`,
/// highest first, until `f` returns `false`.
///
/// # Errors
/// Engine errors, damage, `f`'s errors.
pub fn for_each_in_score_range(
    txn: &Txn<'_>,
    key: &[u8],
    z: Zset,
    range: &ScoreRange,
    reverse: bool,
    mut f: impl FnMut(&[u8], f64) -> Result<bool, Reply>,
) -> Result<(), Reply> {
    if range.is_empty() {
        return Ok(());
    }
    let (start, end) = range.bounds(key, z.version);
    let plen = index_prefix(key, z.version).len();
    txn.for_each_in(start, end, reverse, |k, _| {
        let (m, s) = parse_index(key, plen, k)?;
        f(m, s)
    })
}

/// Calls `f` with every member in score order (lowest first, or highest first when
/// `reverse`), with its rank counted from that end, until `f` returns `false`.
///
/// # Errors
/// Engine errors, damage, `f`'s errors.
pub fn for_each_ranked(
    txn: &Txn<'_>,
    key: &[u8],
    z: Zset,
    reverse: bool,
    mut f: impl FnMut(u64, &[u8], f64) -> Result<bool, Reply>,
) -> Result<(), Reply> {
    let prefix = index_prefix(key, z.version);
    let plen = prefix.len();
    let mut rank = 0u64;
    txn.for_each_prefix(&prefix, None, reverse, |k, _| {
        let (m, s) = parse_index(key, plen, k)?;
        let go_on = f(rank, m, s)?;
        rank += 1;
        Ok(go_on)
    })
}

/// Up to `n` members from rank `start` (0 = lowest score), lowest first. Scans from the
/// nearer end of the set, so the cost is the distance from that end plus `n`; allocates
/// for the members the set really holds.
///
/// # Errors
/// Engine errors, damage.
pub fn rank_window(
    txn: &Txn<'_>,
    key: &[u8],
    z: Zset,
    start: u64,
    n: u64,
) -> Result<Vec<(Vec<u8>, f64)>, Reply> {
    if start >= z.card {
        return Ok(Vec::new());
    }
    let n = n.min(z.card - start);
    let mut out = Vec::with_capacity(n.min(1 << 16) as usize);
    let from_back = z.card - (start + n);
    if start <= from_back {
        for_each_ranked(txn, key, z, false, |r, m, s| {
            if r >= start {
                out.push((m.to_vec(), s));
            }
            Ok((out.len() as u64) < n)
        })?;
    } else {
        for_each_ranked(txn, key, z, true, |r, m, s| {
            if r >= from_back {
                out.push((m.to_vec(), s));
            }
            Ok((out.len() as u64) < n)
        })?;
        out.reverse();
    }
    if (out.len() as u64) < n {
        return Err(corrupt(key));
    }
    Ok(out)
}

/// Removes the members in `gone` (member, score), adjusting the cardinality and removing
/// the key with its last member. When `gone` is a contiguous run of the score index (a rank
/// or score range), a long run of index keys goes as one range deletion.
///
/// # Errors
/// Engine errors.
pub fn remove_all(
    txn: &mut Txn<'_>,
    key: &[u8],
    mut z: Zset,
    gone: &[(Vec<u8>, f64)],
    contiguous: bool,
) -> Result<(), Reply> {
    let n = gone.len() as u64;
    if n == 0 {
        return Ok(());
    }
    if n >= z.card {
        txn.remove_key(key)?;
        return Ok(());
    }
    if contiguous && gone.len() >= RANGE_DELETE_MIN {
        let (first, last) = (&gone[0], &gone[gone.len() - 1]);
        let a = index_key(key, z.version, first.1, &first.0);
        let b = index_key(key, z.version, last.1, &last.0);
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        let mut end = hi;
        end.push(0); // the smallest key after `hi`
        txn.delete_range(lo, end);
        for (m, _) in gone {
            txn.delete(member_key(key, z.version, m));
        }
    } else {
        for (m, s) in gone {
            remove_member(txn, key, z, m, *s);
        }
    }
    z.card -= n;
    store_zset(txn, key, z)
}

#[cfg(test)]
mod damage_tests {
    use super::*;

    /// A sorted set whose score index holds fewer members than its cardinality (damage)
    /// answers an error when a window runs past the index's end, never fewer members than
    /// asked. (Ranks counted from the other end trust the cardinality: finding a lost member
    /// there would take a scan of the whole set.)
    #[test]
    fn a_missing_index_key_is_an_error_not_a_short_answer() {
        let (_dir, store) = crate::store::temp_store();
        let mut txn = store.txn();
        let mut z = Zset {
            version: txn.new_version().unwrap(),
            card: 0,
        };
        for i in 0..10u8 {
            set_score(&mut txn, b"z", z, &[b'a' + i], None, f64::from(i));
            z.card += 1;
        }
        store_zset(&mut txn, b"z", z).unwrap();
        txn.commit().unwrap();
        store
            .db()
            .delete(index_key(b"z", z.version, 3.0, b"d"))
            .unwrap();
        let r = store.reader();
        assert!(rank_window(&r, b"z", z, 0, 10).is_err());
        assert_eq!(rank_window(&r, b"z", z, 0, 3).unwrap().len(), 3);
    }
}
