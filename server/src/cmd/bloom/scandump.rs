//! BF.SCANDUMP and BF.LOADCHUNK: a filter saved and restored in pieces, for backups and
//! migrations of filters too big for one reply (`cmd::filter_dump` has the protocol and the
//! bytes). A Bloom header is `bkvBF`, a piece `bkvBC`; the header holds the `BloomMeta`
//! encoding.

use bytes::Bytes;

use super::{BLOOM_CHUNK_BYTES, BloomMeta, MAX_LAYER_BITS, load};
use crate::cmd::filter_dump::{DumpKind, parse_iter};
use crate::resp::Reply;
use crate::store::{Meta, R, Txn, bloom_chunk_key, tag};

const KIND: DumpKind = DumpKind {
    header_magic: b"bkvBF",
    piece_magic: b"bkvBC",
    tag: tag::BLOOM,
};

/// `BF.SCANDUMP key iterator`
pub fn bf_scandump(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let (version, m) = load(txn, &a[1])?.ok_or_else(|| Reply::err("not found"))?;
    let iter = parse_iter(&a[2])?;
    if iter == 0 {
        let mut meta = Vec::new();
        m.encode(&mut meta);
        return Ok(pair(1, KIND.header(&meta)));
    }
    Ok(match KIND.piece(txn, &a[1], version, iter)? {
        Some((next, piece)) => pair(next, piece),
        None => pair(0, Vec::new()),
    })
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
        let filter = KIND
            .read_header(&a[3])
            .and_then(BloomMeta::decode)
            // A sub-filter larger than BF.RESERVE makes would have chunk indexes past what a
            // dump's iterator holds.
            .filter(|m| m.layers.iter().all(|l| l.bits <= MAX_LAYER_BITS))
            .ok_or_else(bad)?;
        let version = txn.new_version()?;
        txn.put_meta(&a[1], Meta::Bloom { version, filter })?;
        return Ok(Reply::Ok);
    };
    let records = KIND.read_piece(&a[3]).ok_or_else(bad)?;
    for r in &records {
        let l = m.layers.get(r.filter as usize).ok_or_else(bad)?;
        if r.idx >= (l.bits / 8).div_ceil(BLOOM_CHUNK_BYTES as u64)
            || r.bytes.len() != l.chunk_len(r.idx)
        {
            return Err(Reply::err("invalid chunk - Too big for current filter"));
        }
    }
    // Nothing is written unless the whole piece is valid.
    for r in records {
        txn.put(
            bloom_chunk_key(&a[1], version, r.filter, r.idx),
            r.bytes.to_vec(),
        );
    }
    Ok(Reply::Ok)
}
