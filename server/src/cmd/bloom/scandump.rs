//! BF.SCANDUMP and BF.LOADCHUNK: a filter saved and restored in pieces, for backups and
//! migrations of filters too big for one reply.
//!
//! The protocol is RedisBloom's: `BF.SCANDUMP key 0` answers iterator 1 and the header (the
//! filter's parameters and counts); each later call answers the next iterator and a piece of
//! the bits, until iterator 0 with an empty piece. `BF.LOADCHUNK key iter data`, given each
//! pair in turn, rebuilds the filter: iterator 1 creates it from the header on a key that
//! does not exist, the others write their piece.
//!
//! The bytes are this server's own (the sub-filters use the blocked layout, not RedisBloom's):
//! a header is `bkvBF`, a format byte (1), the metadata's encoding and a CRC32 (LE) of what
//! precedes it; a piece is `bkvBC`, the format byte, records `layer u32 LE, chunk index
//! u64 LE, length u32 LE, bytes`, and the CRC32. A piece carries only the chunks that were
//! ever written (a missing chunk is all zeros), so a large, mostly empty reservation dumps
//! small. The iterator after a piece is one past the position of its last chunk, a position
//! being `layer << 31 | chunk index` plus one, so the dump resumes where it stopped.

use std::ops::Bound;

use bytes::Bytes;

use super::{BLOOM_CHUNK_BYTES, BloomMeta, load};
use crate::cmd::parse_i64;
use crate::resp::Reply;
use crate::store::{Meta, R, Txn, bloom_chunk_key, prefix_end, sub_prefix, tag};

const HEADER_MAGIC: &[u8; 5] = b"bkvBF";
const PIECE_MAGIC: &[u8; 5] = b"bkvBC";
const FORMAT: u8 = 1;

/// Chunk bytes per piece: 1 MiB, 2,048 chunks of 512 bytes (RedisBloom sends up to 16 MiB).
const PIECE_BYTES: usize = 1 << 20;

/// Bits of a position that hold the chunk index: a sub-filter has at most 2^42 bits, so
/// fewer than 2^30 chunks of 512 bytes.
const INDEX_BITS: u32 = 31;

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

fn position(layer: u32, idx: u64) -> u64 {
    (u64::from(layer) << INDEX_BITS) | idx
}

fn parse_iter(b: &[u8]) -> Result<i64, Reply> {
    parse_i64(b).ok_or_else(|| Reply::err("Second argument must be numeric"))
}

/// `BF.SCANDUMP key iterator`
pub fn bf_scandump(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let (version, m) = load(txn, &a[1])?.ok_or_else(|| Reply::err("not found"))?;
    let iter = parse_iter(&a[2])?;
    if iter == 0 {
        let mut body = HEADER_MAGIC.to_vec();
        body.push(FORMAT);
        m.encode(&mut body);
        return Ok(pair(1, seal(body)));
    }
    let Ok(from) = u64::try_from(iter - 1) else {
        return Ok(pair(0, Vec::new()));
    };
    let prefix = sub_prefix(tag::BLOOM, &a[1], version);
    let mut body = PIECE_MAGIC.to_vec();
    body.push(FORMAT);
    let (mut bytes, mut next) = (0, None);
    let start = (from >> INDEX_BITS, from & ((1 << INDEX_BITS) - 1));
    let mut first = prefix.clone();
    first.extend_from_slice(&u32::try_from(start.0).unwrap_or(u32::MAX).to_be_bytes());
    first.extend_from_slice(&start.1.to_be_bytes());
    txn.for_each_in(
        Bound::Included(first),
        prefix_end(&prefix).map_or(Bound::Unbounded, Bound::Excluded),
        false,
        |k, v| {
            let Some(rest) = k.strip_prefix(prefix.as_slice()) else {
                return Ok(false);
            };
            let (Some(layer), Some(idx)) = (
                rest.get(..4)
                    .and_then(|b| b.try_into().ok())
                    .map(u32::from_be_bytes),
                rest.get(4..12)
                    .and_then(|b| b.try_into().ok())
                    .map(u64::from_be_bytes),
            ) else {
                return Ok(true);
            };
            body.extend_from_slice(&layer.to_le_bytes());
            body.extend_from_slice(&idx.to_le_bytes());
            body.extend_from_slice(&(v.len() as u32).to_le_bytes());
            body.extend_from_slice(v);
            bytes += v.len();
            next = Some(position(layer, idx) + 1);
            Ok(bytes < PIECE_BYTES)
        },
    )?;
    match next {
        Some(p) => Ok(pair(p as i64 + 1, seal(body))),
        None => Ok(pair(0, Vec::new())),
    }
}

fn pair(iter: i64, data: Vec<u8>) -> Reply {
    Reply::Array(vec![Reply::Int(iter), Reply::Bulk(data.into())])
}

/// `BF.LOADCHUNK key iterator data`
pub fn bf_loadchunk(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let iter = parse_iter(&a[2])?;
    let bad = || Reply::err("received bad data");
    let Some((version, m)) = load(txn, &a[1])? else {
        if iter != 1 {
            return Err(Reply::err("not found"));
        }
        let filter = unseal(&a[3], HEADER_MAGIC)
            .and_then(BloomMeta::decode)
            .ok_or_else(bad)?;
        let version = txn.new_version()?;
        txn.put_meta(&a[1], Meta::Bloom { version, filter })?;
        return Ok(Reply::Ok);
    };
    let mut rest = unseal(&a[3], PIECE_MAGIC).ok_or_else(bad)?;
    let mut writes = Vec::new();
    while !rest.is_empty() {
        let (head, tail) = rest.split_at_checked(16).ok_or_else(bad)?;
        let layer = u32::from_le_bytes(head[..4].try_into().map_err(|_| bad())?);
        let idx = u64::from_le_bytes(head[4..12].try_into().map_err(|_| bad())?);
        let len = u32::from_le_bytes(head[12..16].try_into().map_err(|_| bad())?) as usize;
        let l = m.layers.get(layer as usize).ok_or_else(bad)?;
        if idx >= (l.bits / 8).div_ceil(BLOOM_CHUNK_BYTES as u64) || len != l.chunk_len(idx) {
            return Err(Reply::err("invalid chunk - Too big for current filter"));
        }
        let (chunk, tail) = tail.split_at_checked(len).ok_or_else(bad)?;
        writes.push((bloom_chunk_key(&a[1], version, layer, idx), chunk.to_vec()));
        rest = tail;
    }
    // Nothing is written unless the whole piece is valid.
    for (k, v) in writes {
        txn.put(k, v);
    }
    Ok(Reply::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_damaged_or_foreign_piece_does_not_unseal() {
        let mut body = PIECE_MAGIC.to_vec();
        body.push(FORMAT);
        body.extend_from_slice(b"records");
        let sealed = seal(body);
        assert_eq!(unseal(&sealed, PIECE_MAGIC), Some(&b"records"[..]));
        assert_eq!(unseal(&sealed, HEADER_MAGIC), None);
        for i in 0..sealed.len() {
            let mut bad = sealed.clone();
            bad[i] ^= 0x10;
            assert_eq!(unseal(&bad, PIECE_MAGIC), None, "byte {i}");
        }
        assert_eq!(unseal(&sealed[..3], PIECE_MAGIC), None);
    }

    #[test]
    fn positions_keep_layers_apart() {
        let last_of_0 = position(0, (1 << 30) - 1);
        assert!(last_of_0 < position(1, 0));
        assert_eq!(position(2, 5) >> INDEX_BITS, 2);
        assert_eq!(position(2, 5) & ((1 << INDEX_BITS) - 1), 5);
    }
}
