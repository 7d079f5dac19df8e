//! The incremental save of a filter kept in chunks (BF.SCANDUMP / CF.SCANDUMP and their
//! LOADCHUNK), shared by the Bloom and cuckoo filters.
//!
//! The protocol is RedisBloom's: `SCANDUMP key 0` answers iterator 1 and the header (the
//! filter's metadata); each later call answers the next iterator and a piece of the
//! chunks, until iterator 0. `LOADCHUNK key iter data`, given each pair in turn, rebuilds
//! the filter: iterator 1 creates it from the header on a key that does not exist, the
//! others write their piece.
//!
//! The bytes are this server's own: a header is a 5-byte magic, a format byte (1), the
//! metadata's encoding and a CRC32 (LE) of what precedes it; a piece is another magic, the
//! format byte, records `sub-filter u32 LE, chunk index u64 LE, length u32 LE, bytes`, and
//! the CRC32. A piece carries only the chunks that were ever written (a missing chunk is all
//! zeros), so a large, mostly empty filter dumps small. The iterator after a piece is one
//! past the position of its last chunk, a position being `sub-filter << 31 | chunk index`
//! plus one, so the dump resumes where it stopped.

use std::ops::Bound;

use crate::cmd::parse_i64;
use crate::resp::Reply;
use crate::store::{Txn, prefix_end, sub_prefix};

const FORMAT: u8 = 1;

/// Chunk bytes per piece: 1 MiB (RedisBloom sends up to 16 MiB).
const PIECE_BYTES: usize = 1 << 20;

/// Bits of a position that hold the chunk index: every filter keeps fewer than 2^30 chunks
/// per sub-filter.
const INDEX_BITS: u32 = 31;

/// One filter type's dump: its magics and the tag its chunks live under.
pub struct DumpKind {
    /// Starts a header.
    pub header_magic: &'static [u8; 5],
    /// Starts a piece.
    pub piece_magic: &'static [u8; 5],
    /// The sub-key tag of the filter's chunks.
    pub tag: u8,
}

/// One chunk of a piece.
pub struct Record<'a> {
    /// Its sub-filter.
    pub filter: u32,
    /// Its index in the sub-filter.
    pub idx: u64,
    /// Its bytes.
    pub bytes: &'a [u8],
}

fn seal(mut body: Vec<u8>) -> Vec<u8> {
    let crc = crc32fast::hash(&body);
    body.extend_from_slice(&crc.to_le_bytes());
    body
}

/// The body between the magic and format byte and the checksum, if both hold.
fn unseal<'a>(data: &'a [u8], magic: &[u8; 5]) -> Option<&'a [u8]> {
    let (body, crc) = data.split_last_chunk::<4>()?;
    if crc32fast::hash(body) != u32::from_le_bytes(*crc) {
        return None;
    }
    let rest = body.strip_prefix(magic.as_slice())?;
    let (&format, rest) = rest.split_first()?;
    (format == FORMAT).then_some(rest)
}

fn position(filter: u32, idx: u64) -> u64 {
    (u64::from(filter) << INDEX_BITS) | idx
}

/// The iterator argument; RedisBloom's error when it is not a number.
pub fn parse_iter(b: &[u8]) -> Result<i64, Reply> {
    parse_i64(b).ok_or_else(|| Reply::err("Second argument must be numeric"))
}

impl DumpKind {
    /// The header holding `meta` (the metadata's encoding).
    pub fn header(&self, meta: &[u8]) -> Vec<u8> {
        let mut body = self.header_magic.to_vec();
        body.push(FORMAT);
        body.extend_from_slice(meta);
        seal(body)
    }

    /// The metadata encoding a header holds; `None` if damaged or of another kind.
    pub fn read_header<'a>(&self, data: &'a [u8]) -> Option<&'a [u8]> {
        unseal(data, self.header_magic)
    }

    /// The piece that starts at iterator `iter` (> 0) of the filter at `key` (`version`):
    /// the next iterator and the piece, or `None` once every chunk was sent.
    pub fn piece(
        &self,
        txn: &mut Txn<'_>,
        key: &[u8],
        version: u64,
        iter: i64,
    ) -> Result<Option<(i64, Vec<u8>)>, Reply> {
        let Ok(from) = u64::try_from(iter - 1) else {
            return Ok(None);
        };
        let prefix = sub_prefix(self.tag, key, version);
        let mut body = self.piece_magic.to_vec();
        body.push(FORMAT);
        let (mut bytes, mut next) = (0, None);
        let mut first = prefix.clone();
        first.extend_from_slice(
            &u32::try_from(from >> INDEX_BITS)
                .unwrap_or(u32::MAX)
                .to_be_bytes(),
        );
        first.extend_from_slice(&(from & ((1 << INDEX_BITS) - 1)).to_be_bytes());
        txn.for_each_in(
            Bound::Included(first),
            prefix_end(&prefix).map_or(Bound::Unbounded, Bound::Excluded),
            false,
            |k, v| {
                let Some(rest) = k.strip_prefix(prefix.as_slice()) else {
                    return Ok(false);
                };
                let (Some(filter), Some(idx)) = (
                    rest.get(..4)
                        .and_then(|b| b.try_into().ok())
                        .map(u32::from_be_bytes),
                    rest.get(4..12)
                        .and_then(|b| b.try_into().ok())
                        .map(u64::from_be_bytes),
                ) else {
                    return Ok(true);
                };
                body.extend_from_slice(&filter.to_le_bytes());
                body.extend_from_slice(&idx.to_le_bytes());
                body.extend_from_slice(&(v.len() as u32).to_le_bytes());
                body.extend_from_slice(v);
                bytes += v.len();
                next = Some(position(filter, idx) + 1);
                Ok(bytes < PIECE_BYTES)
            },
        )?;
        Ok(next.map(|p| (p as i64 + 1, seal(body))))
    }

    /// The chunks a piece holds; `None` if it is damaged or of another kind.
    pub fn read_piece<'a>(&self, data: &'a [u8]) -> Option<Vec<Record<'a>>> {
        let mut rest = unseal(data, self.piece_magic)?;
        let mut out = Vec::new();
        while !rest.is_empty() {
            let (head, tail) = rest.split_at_checked(16)?;
            let filter = u32::from_le_bytes(head[..4].try_into().ok()?);
            let idx = u64::from_le_bytes(head[4..12].try_into().ok()?);
            let len = u32::from_le_bytes(head[12..16].try_into().ok()?) as usize;
            let (bytes, tail) = tail.split_at_checked(len)?;
            out.push(Record { filter, idx, bytes });
            rest = tail;
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIND: DumpKind = DumpKind {
        header_magic: b"testH",
        piece_magic: b"testP",
        tag: b'f',
    };

    #[test]
    fn a_damaged_or_foreign_piece_does_not_unseal() {
        let mut body = KIND.piece_magic.to_vec();
        body.push(FORMAT);
        body.extend_from_slice(b"records");
        let sealed = seal(body);
        assert_eq!(unseal(&sealed, KIND.piece_magic), Some(&b"records"[..]));
        assert_eq!(unseal(&sealed, KIND.header_magic), None);
        for i in 0..sealed.len() {
            let mut bad = sealed.clone();
            bad[i] ^= 0x10;
            assert_eq!(unseal(&bad, KIND.piece_magic), None, "byte {i}");
        }
        assert_eq!(unseal(&sealed[..3], KIND.piece_magic), None);
    }

    #[test]
    fn a_piece_with_a_cut_record_is_refused() {
        let mut body = KIND.piece_magic.to_vec();
        body.push(FORMAT);
        body.extend_from_slice(&1u32.to_le_bytes());
        body.extend_from_slice(&2u64.to_le_bytes());
        body.extend_from_slice(&3u32.to_le_bytes());
        body.extend_from_slice(b"abc");
        let sealed = seal(body.clone());
        let whole = KIND.read_piece(&sealed).unwrap();
        assert_eq!(
            (whole[0].filter, whole[0].idx, whole[0].bytes),
            (1, 2, &b"abc"[..])
        );
        body.pop();
        assert!(KIND.read_piece(&seal(body)).is_none());
    }

    #[test]
    fn positions_keep_sub_filters_apart() {
        let last_of_0 = position(0, (1 << 30) - 1);
        assert!(last_of_0 < position(1, 0));
        assert_eq!(position(2, 5) >> INDEX_BITS, 2);
        assert_eq!(position(2, 5) & ((1 << INDEX_BITS) - 1), 5);
    }
}
