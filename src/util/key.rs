//! Internal keys: a user key tagged with a sequence number and a kind.
//!
//! ## Format
//! ```text
//! +----------------+-------------------------------+
//! | user key bytes | trailer: u64 little-endian     |
//! |                | = (sequence << 8) | kind       |
//! +----------------+-------------------------------+
//! ```
//! Internal keys order by user key ascending (bytewise), then by trailer *descending*, so the
//! newest version of a user key comes first. A seek to `(user_key, snapshot_seq, KIND_SEEK)`
//! therefore lands on the newest version visible at `snapshot_seq`.

use std::cmp::Ordering;

use crate::error::{Error, Result};

/// A sequence number: every write gets the next one. Only the low 56 bits are usable.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::sstable::internal_key::SeqNo;
/// let dir = tempfile::tempdir()?;
/// let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
/// db.put("k", "v")?;
/// let seq: SeqNo = db.snapshot().sequence();
/// assert_eq!(seq, 1);
/// # Ok(())
/// # }
/// ```
pub type SeqNo = u64;

/// The largest sequence number that fits in a trailer.
///
/// # Examples
/// ```
/// use bloomkv::sstable::internal_key::{self, Kind, MAX_SEQ};
/// let k = internal_key::encode(b"k", MAX_SEQ, Kind::Put);
/// assert_eq!(internal_key::parse(&k).unwrap().seq, MAX_SEQ);
/// ```
pub const MAX_SEQ: SeqNo = (1 << 56) - 1;

/// Bytes in the trailer appended to every user key.
///
/// # Examples
/// ```
/// use bloomkv::sstable::internal_key::{self, Kind, TRAILER_LEN};
/// assert_eq!(internal_key::encode(b"abc", 1, Kind::Put).len(), 3 + TRAILER_LEN);
/// ```
pub const TRAILER_LEN: usize = 8;

/// What an entry records about its user key. DO NOT CHANGE THESE VALUES: they are on disk.
///
/// # Examples
/// ```
/// use bloomkv::sstable::internal_key::{self, Kind};
/// let tombstone = internal_key::encode(b"k", 5, Kind::Delete);
/// assert_eq!(internal_key::parse(&tombstone).unwrap().kind, Kind::Delete);
/// assert_eq!(Kind::Put as u8, 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Kind {
    /// A tombstone: the key was deleted.
    Delete = 0,
    /// A value.
    Put = 1,
}

/// The kind used in seek targets: the highest kind value, so the target sorts before every
/// entry of the same user key and sequence number.
///
/// # Examples
/// ```
/// use bloomkv::sstable::internal_key::{self, KIND_SEEK, Kind};
/// // A seek target at sequence 5 sorts before both kinds of entry at 5.
/// let target = internal_key::encode(b"k", 5, KIND_SEEK);
/// assert!(internal_key::compare(&target, &internal_key::encode(b"k", 5, Kind::Delete)).is_le());
/// ```
pub const KIND_SEEK: Kind = Kind::Put;

impl TryFrom<u8> for Kind {
    type Error = Error;
    fn try_from(b: u8) -> Result<Kind> {
        match b {
            0 => Ok(Kind::Delete),
            1 => Ok(Kind::Put),
            other => Err(Error::corrupt_bytes(
                0,
                format!("unknown entry kind {other}"),
            )),
        }
    }
}

/// Packs a sequence number and kind into a trailer.
pub fn pack_trailer(seq: SeqNo, kind: Kind) -> u64 {
    debug_assert!(seq <= MAX_SEQ);
    (seq << 8) | kind as u64
}

/// Builds an internal key.
///
/// # Examples
/// ```
/// use bloomkv::sstable::internal_key::{self, Kind};
/// let k = internal_key::encode(b"ab", 1, Kind::Put);
/// assert_eq!(k, [b'a', b'b', 1, 1, 0, 0, 0, 0, 0, 0]);
/// ```
pub fn encode(user_key: &[u8], seq: SeqNo, kind: Kind) -> Vec<u8> {
    let mut out = Vec::with_capacity(user_key.len() + TRAILER_LEN);
    out.extend_from_slice(user_key);
    out.extend_from_slice(&pack_trailer(seq, kind).to_le_bytes());
    out
}

/// A borrowed, validated internal key.
///
/// # Examples
/// ```
/// use bloomkv::sstable::internal_key::{self, Kind, ParsedKey};
/// let k = internal_key::encode(b"user", 9, Kind::Put);
/// let p: ParsedKey<'_> = internal_key::parse(&k).unwrap();
/// assert_eq!((p.user_key, p.seq, p.kind), (&b"user"[..], 9, Kind::Put));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParsedKey<'a> {
    /// The user's key.
    pub user_key: &'a [u8],
    /// The sequence number of the write.
    pub seq: SeqNo,
    /// Put or delete.
    pub kind: Kind,
}

/// Splits an internal key, checking its length and kind.
///
/// # Examples
/// ```
/// use bloomkv::sstable::internal_key;
/// assert!(internal_key::parse(b"short").unwrap_err().is_corruption());
/// assert!(internal_key::parse(&[7, 0, 0, 0, 0, 0, 0, 0]).is_err()); // kind 7
/// ```
pub fn parse(ikey: &[u8]) -> Result<ParsedKey<'_>> {
    if ikey.len() < TRAILER_LEN {
        return Err(Error::corrupt_bytes(
            0,
            format!(
                "internal key of {} bytes is shorter than its trailer",
                ikey.len()
            ),
        ));
    }
    let split = ikey.len() - TRAILER_LEN;
    let trailer = read_trailer(&ikey[split..]);
    Ok(ParsedKey {
        user_key: &ikey[..split],
        seq: trailer >> 8,
        kind: Kind::try_from((trailer & 0xff) as u8)?,
    })
}

/// The user-key part of an internal key (the whole slice if it is too short to have a trailer).
///
/// # Examples
/// ```
/// use bloomkv::sstable::internal_key::{self, Kind};
/// assert_eq!(internal_key::user_key(&internal_key::encode(b"k", 1, Kind::Put)), b"k");
/// ```
pub fn user_key(ikey: &[u8]) -> &[u8] {
    &ikey[..ikey.len().saturating_sub(TRAILER_LEN)]
}

fn read_trailer(b: &[u8]) -> u64 {
    let mut t = [0u8; 8];
    t.copy_from_slice(&b[..8]);
    u64::from_le_bytes(t)
}

fn trailer(ikey: &[u8]) -> u64 {
    if ikey.len() < TRAILER_LEN {
        0
    } else {
        read_trailer(&ikey[ikey.len() - TRAILER_LEN..])
    }
}

/// The total order on internal keys: user key ascending, then trailer descending.
///
/// # Examples
/// ```
/// use bloomkv::sstable::internal_key::{self, Kind};
/// let a1 = internal_key::encode(b"a", 1, Kind::Put);
/// let a2 = internal_key::encode(b"a", 2, Kind::Put);
/// let b1 = internal_key::encode(b"b", 1, Kind::Put);
/// assert!(internal_key::compare(&a2, &a1).is_lt()); // newer first
/// assert!(internal_key::compare(&a1, &b1).is_lt()); // then by user key
/// ```
pub fn compare(a: &[u8], b: &[u8]) -> Ordering {
    user_key(a)
        .cmp(user_key(b))
        .then_with(|| trailer(b).cmp(&trailer(a)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_version_sorts_first() {
        let a = encode(b"k", 5, Kind::Put);
        let b = encode(b"k", 9, Kind::Delete);
        let c = encode(b"ka", 1, Kind::Put);
        let d = encode(b"", 100, Kind::Put);
        assert_eq!(compare(&b, &a), Ordering::Less);
        assert_eq!(compare(&a, &c), Ordering::Less);
        assert_eq!(compare(&d, &a), Ordering::Less);
        // A seek target at seq 7 sorts after seq 9 and before seq 5.
        let t = encode(b"k", 7, KIND_SEEK);
        assert_eq!(compare(&b, &t), Ordering::Less);
        assert_eq!(compare(&t, &a), Ordering::Less);
    }

    #[test]
    fn parse_round_trips_and_rejects() -> Result<()> {
        let k = encode(b"user", 42, Kind::Delete);
        let p = parse(&k)?;
        assert_eq!(
            (p.user_key, p.seq, p.kind),
            (&b"user"[..], 42, Kind::Delete)
        );
        assert!(parse(b"short").is_err());
        let mut bad = k.clone();
        bad[4] = 7; // kind byte
        assert!(parse(&bad).is_err());
        Ok(())
    }
}
