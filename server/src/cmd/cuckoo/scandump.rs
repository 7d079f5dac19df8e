//! CF.SCANDUMP and CF.LOADCHUNK: a cuckoo filter saved and restored in pieces
//! (`cmd::filter_dump` has the protocol and the bytes). A cuckoo header is `bkvCF`, a piece
//! `bkvCC`; the header holds the metadata's encoding (`store::cuckoo_meta`). As in
//! RedisBloom, a filter holding no item dumps as nothing (iterator 0 at once), and the end of
//! a dump is iterator 0 with a nil piece.

use bytes::Bytes;

use bloomkv::filter::CuckooState;

use super::slots::{MAX_FILTER_BYTES, chunk_len, chunks};
use super::{MAX_FILTERS, load};
use crate::cmd::filter_dump::DumpKind;
use crate::cmd::parse_i64;
use crate::resp::Reply;
use crate::store::{Meta, R, Txn, cuckoo_chunk_key, cuckoo_meta, tag};

const KIND: DumpKind = DumpKind {
    header_magic: b"bkvCF",
    piece_magic: b"bkvCC",
    tag: tag::CUCKOO,
};

/// Whether a header's filter is one this server could have made: at most 32 sub-filters, none
/// over the largest size. A bigger one would have chunk indexes past what a dump's iterator
/// holds (`cmd::filter_dump`), so its dump could not resume where it stopped.
fn within_limits(s: &CuckooState) -> bool {
    let size = u64::from(s.params().bucket_size);
    s.sub_filters() <= MAX_FILTERS
        && s.filter_buckets()
            .iter()
            .all(|b| b.checked_mul(size).is_some_and(|n| n <= MAX_FILTER_BYTES))
}

fn position(b: &[u8]) -> Result<i64, Reply> {
    parse_i64(b).ok_or_else(|| Reply::err("Invalid position"))
}

fn pair(iter: i64, data: Option<Vec<u8>>) -> Reply {
    Reply::Array(vec![
        Reply::Int(iter),
        data.map_or(Reply::Nil, |d| Reply::Bulk(d.into())),
    ])
}

/// `CF.SCANDUMP key iterator`
pub fn cf_scandump(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let iter = position(&a[2])?;
    let (version, s) = load(txn, &a[1])?.ok_or_else(|| Reply::err("not found"))?;
    if s.is_empty() {
        return Ok(pair(0, None));
    }
    if iter == 0 {
        let mut meta = Vec::new();
        cuckoo_meta::encode(&s, &mut meta);
        return Ok(pair(1, Some(KIND.header(&meta))));
    }
    Ok(match KIND.piece(txn, &a[1], version, iter)? {
        Some((next, piece)) => pair(next, Some(piece)),
        None => pair(0, None),
    })
}

/// `CF.LOADCHUNK key iterator data`
pub fn cf_loadchunk(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let iter = position(&a[2])?;
    if iter == 0 {
        return Err(Reply::err("Invalid position"));
    }
    let existing = load(txn, &a[1])?;
    if iter == 1 {
        if existing.is_some() {
            return Err(Reply::err("item exists"));
        }
        let filter = KIND
            .read_header(&a[3])
            .and_then(cuckoo_meta::decode)
            .filter(within_limits)
            .ok_or_else(|| Reply::err("Invalid header"))?;
        let version = txn.new_version()?;
        txn.put_meta(&a[1], Meta::Cuckoo { version, filter })?;
        return Ok(Reply::Ok);
    }
    let (version, s) = existing.ok_or_else(|| Reply::err("not found"))?;
    let bad = || Reply::err("Couldn't load chunk!");
    let records = KIND.read_piece(&a[3]).ok_or_else(bad)?;
    let size = s.params().bucket_size;
    for r in &records {
        let buckets = *s.filter_buckets().get(r.filter as usize).ok_or_else(bad)?;
        if r.idx >= chunks(buckets, size) || r.bytes.len() as u64 != chunk_len(buckets, size, r.idx)
        {
            return Err(bad());
        }
    }
    // Nothing is written unless the whole piece is valid.
    for r in records {
        txn.put(
            cuckoo_chunk_key(&a[1], version, r.filter, r.idx),
            r.bytes.to_vec(),
        );
    }
    Ok(Reply::Ok)
}
