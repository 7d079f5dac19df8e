//! Set members and hash fields as engine keys, of any length (docs/SERVER.md, "Long members").
//!
//! A member lives under its collection's prefix (`tag be32(len) key be64(version)`). The
//! engine holds keys to 64 KiB, so a member is kept in one of two forms, told apart by the
//! length of what follows the prefix (`room` = [`inline_max`] of the Redis key, so that the
//! whole engine key of either form is at most 64 KiB):
//!
//! ```text
//! inline  (member up to room bytes)  prefix member                         -> payload
//! hashed  (longer members)           prefix member[..room] be64(h) be32(n) -> le32(len) member payload
//! ```
//!
//! `h` is the xxh3 hash of the whole member and `n` tells apart members whose first `room`
//! bytes and hash are equal. A hashed suffix is exactly `room + 12` bytes and an inline one
//! at most `room`, so a suffix's length says its form, and a scan of
//! `prefix member[..room] be64(h)` (a "bucket") finds exactly the members that share both;
//! lookups compare the full member stored in the value, so a collision costs a longer bucket
//! and never a wrong answer. The payload is empty for set members and the value for hash
//! fields.

use std::borrow::Cow;

use super::keys::sub_prefix;
use super::{MAX_MEMBER_KEY, Txn};
use crate::resp::Reply;

/// Bytes the hashed form adds after the member's first `room` bytes: hash and chain index.
const HASHED_TAIL: usize = 12;

/// Longest member kept whole in its engine key, for members of Redis key `key`.
pub fn inline_max(key: &[u8]) -> usize {
    MAX_MEMBER_KEY.saturating_sub(key.len())
}

/// Whether `member` of `key` and a payload (hash value) of `payload_len` bytes fit in one
/// engine value (a hashed member is stored in the value too).
pub fn fits(key: &[u8], member: &[u8], payload_len: usize) -> bool {
    let extra = if member.len() <= inline_max(key) {
        0
    } else {
        4 + member.len()
    };
    extra + payload_len <= bloomkv::MAX_VALUE_BYTES
}

/// Redis's error for a member, field or value the engine cannot hold in one value.
pub fn too_large() -> Reply {
    Reply::err(format!(
        "element too large: a set member, or a hash field and its value, may take at most {} bytes",
        bloomkv::MAX_VALUE_BYTES - 4
    ))
}

/// Where a member is, or would go, in the engine.
#[derive(Debug, PartialEq, Eq)]
pub enum Slot {
    /// Present: its engine key and its payload.
    Found(Vec<u8>, Vec<u8>),
    /// Absent: the engine key a new entry for it takes.
    Free(Vec<u8>),
}

fn hash_member(member: &[u8]) -> u64 {
    bloomkv::filter::hash_key(member)
}

/// Finds `member` of version `version` of collection `key` (sub-key tag `tag`).
///
/// # Errors
/// Engine errors; a damaged hashed entry.
pub fn locate(
    txn: &Txn<'_>,
    tag: u8,
    key: &[u8],
    version: u64,
    member: &[u8],
) -> Result<Slot, Reply> {
    locate_with(txn, tag, key, version, member, hash_member)
}

fn locate_with(
    txn: &Txn<'_>,
    tag: u8,
    key: &[u8],
    version: u64,
    member: &[u8],
    hash: fn(&[u8]) -> u64,
) -> Result<Slot, Reply> {
    let mut k = sub_prefix(tag, key, version);
    let room = inline_max(key);
    if member.len() <= room {
        k.extend_from_slice(member);
        return Ok(match txn.get(&k)? {
            Some(v) => Slot::Found(k, v),
            None => Slot::Free(k),
        });
    }
    k.extend_from_slice(&member[..room]);
    k.extend_from_slice(&hash(member).to_be_bytes());
    let bucket_len = k.len();
    let mut found = None;
    let mut next_n = 0u32;
    let mut damaged = false;
    txn.for_each_prefix(&k, None, false, |ek, v| {
        let Some(n) = ek
            .get(bucket_len..)
            .and_then(|s| <[u8; 4]>::try_from(s).ok())
            .map(u32::from_be_bytes)
        else {
            damaged = true;
            return Ok(false);
        };
        next_n = next_n.max(n.saturating_add(1));
        let (m, payload) = split_value(v)?;
        if m == member {
            found = Some(Slot::Found(ek.to_vec(), payload.to_vec()));
            return Ok(false);
        }
        Ok(true)
    })?;
    if damaged {
        return Err(damaged_entry());
    }
    if let Some(f) = found {
        return Ok(f);
    }
    if next_n == u32::MAX {
        return Err(Reply::err("too many members share one hash bucket"));
    }
    k.extend_from_slice(&next_n.to_be_bytes());
    Ok(Slot::Free(k))
}

/// The engine value that stores `payload` for `member` of `key`.
pub fn entry_value(key: &[u8], member: &[u8], payload: &[u8]) -> Vec<u8> {
    if member.len() <= inline_max(key) {
        return payload.to_vec();
    }
    let mut v = Vec::with_capacity(4 + member.len() + payload.len());
    v.extend_from_slice(&(member.len() as u32).to_le_bytes());
    v.extend_from_slice(member);
    v.extend_from_slice(payload);
    v
}

fn damaged_entry() -> Reply {
    Reply::err("corrupt collection member in the store")
}

/// A hashed entry's value taken apart: the member and the payload.
fn split_value(v: &[u8]) -> Result<(&[u8], &[u8]), Reply> {
    let len = v
        .get(..4)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map(u32::from_le_bytes)
        .ok_or_else(damaged_entry)? as usize;
    let member = v.get(4..4 + len).ok_or_else(damaged_entry)?;
    Ok((member, &v[4 + len..]))
}

/// An entry of a prefix scan over a collection taken apart: the member and its payload.
/// `prefix_len` is the length of the collection's prefix, `key` the Redis key.
///
/// # Errors
/// A damaged entry (a suffix of neither form, or a hashed value that does not decode).
pub fn decode<'v>(
    key: &[u8],
    prefix_len: usize,
    engine_key: &'v [u8],
    value: &'v [u8],
) -> Result<(Cow<'v, [u8]>, &'v [u8]), Reply> {
    let suffix = engine_key.get(prefix_len..).ok_or_else(damaged_entry)?;
    let room = inline_max(key);
    if suffix.len() <= room {
        return Ok((Cow::Borrowed(suffix), value));
    }
    if suffix.len() != room + HASHED_TAIL {
        return Err(damaged_entry());
    }
    let (m, payload) = split_value(value)?;
    if m.len() <= room || m[..room] != suffix[..room] {
        return Err(damaged_entry());
    }
    Ok((Cow::Borrowed(m), payload))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    fn store(dir: &std::path::Path) -> Store {
        crate::store::store_at(dir)
    }

    fn put(txn: &mut Txn<'_>, key: &[u8], m: &[u8], payload: &[u8], h: fn(&[u8]) -> u64) {
        match locate_with(txn, b'h', key, 1, m, h).unwrap() {
            Slot::Free(k) => txn.put(k, entry_value(key, m, payload)),
            Slot::Found(k, _) => txn.put(k, entry_value(key, m, payload)),
        }
    }

    #[test]
    fn long_members_collide_without_wrong_answers() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        let key = vec![b'k'; 100];
        let room = inline_max(&key);
        // Three long members with the same first `room` bytes, all in one bucket (a constant
        // hash), and one short member.
        let mut a = vec![b'x'; room + 5];
        let mut b = a.clone();
        let mut c = a.clone();
        a.push(1);
        b.push(2);
        c.push(3);
        let same: fn(&[u8]) -> u64 = |_| 42;
        let mut txn = s.txn();
        put(&mut txn, &key, &a, b"va", same);
        put(&mut txn, &key, &b, b"vb", same);
        put(&mut txn, &key, b"short", b"vs", same);
        txn.commit().unwrap();
        let mut txn = s.txn();
        for (m, want) in [(&a, &b"va"[..]), (&b, b"vb")] {
            match locate_with(&txn, b'h', &key, 1, m, same).unwrap() {
                Slot::Found(k, v) => {
                    assert_eq!(v, want);
                    assert_eq!(k.len(), bloomkv::MAX_KEY_BYTES, "a full-size engine key");
                }
                other => panic!("{other:?}"),
            }
        }
        let free = locate_with(&txn, b'h', &key, 1, &c, same).unwrap();
        assert!(matches!(free, Slot::Free(_)));
        // The free slot is a new chain index, not one of the taken ones.
        put(&mut txn, &key, &c, b"vc", same);
        match locate_with(&txn, b'h', &key, 1, &a, same).unwrap() {
            Slot::Found(_, v) => assert_eq!(v, b"va"),
            other => panic!("{other:?}"),
        }
        // A scan decodes every form back.
        let prefix = sub_prefix(b'h', &key, 1);
        let mut seen = Vec::new();
        txn.for_each_prefix(&prefix, None, false, |k, v| {
            let (m, p) = decode(&key, prefix.len(), k, v)?;
            seen.push((m.into_owned(), p.to_vec()));
            Ok(true)
        })
        .unwrap();
        seen.sort();
        let mut want = vec![
            (a.clone(), b"va".to_vec()),
            (b.clone(), b"vb".to_vec()),
            (c.clone(), b"vc".to_vec()),
            (b"short".to_vec(), b"vs".to_vec()),
        ];
        want.sort();
        assert_eq!(seen, want);
        // Overwriting a member in a bucket keeps the others.
        put(&mut txn, &key, &b, b"vb2", same);
        match locate_with(&txn, b'h', &key, 1, &b, same).unwrap() {
            Slot::Found(_, v) => assert_eq!(v, b"vb2"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn forms_are_told_apart_by_length() {
        let key = b"key";
        let room = inline_max(key);
        assert_eq!(entry_value(key, &vec![0; room], b"p"), b"p");
        let long = vec![7u8; room + 1];
        let v = entry_value(key, &long, b"p");
        assert_eq!(v.len(), 4 + long.len() + 1);
        let mut ek = sub_prefix(b's', key, 9);
        let plen = ek.len();
        ek.extend_from_slice(&long[..room]);
        ek.extend_from_slice(&[0; HASHED_TAIL]);
        assert_eq!(ek.len(), bloomkv::MAX_KEY_BYTES);
        let (m, p) = decode(key, plen, &ek, &v).unwrap();
        assert_eq!((&m[..], p), (&long[..], &b"p"[..]));
        // A suffix of neither form, or a value that does not match its key, is damage.
        ek.push(0);
        assert!(decode(key, plen, &ek, &v).is_err());
        ek.pop();
        assert!(decode(key, plen, &ek, b"\x05\0\0\0ab").is_err());
        let mut other = long.clone();
        other[0] = 8;
        assert!(decode(key, plen, &ek, &entry_value(key, &other, b"")).is_err());
    }
}
