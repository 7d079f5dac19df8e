//! How a set lives in the engine: the metadata holds its version and cardinality, and each
//! member is one engine key under that version with an empty value:
//!
//! ```text
//! 's' be32(len) key be64(version) member  ->  (empty)
//! ```
//!
//! A member of any length fits (`store::members`: a long one is kept hashed, whole in the
//! value). Membership is one point lookup, every member one prefix scan; a write touches
//! only the members it names, plus the metadata when the cardinality changes.

use std::borrow::Cow;

use crate::cmd::WRONGTYPE;
use crate::resp::Reply;
use crate::store::members::{self, Slot};
use crate::store::{Entry, Meta, Record, Txn, sub_prefix, tag};

/// Set `key`'s version and cardinality: `None` if missing, WRONGTYPE for other types.
///
/// # Errors
/// WRONGTYPE, engine errors.
pub fn card(txn: &Txn<'_>, key: &[u8]) -> Result<Option<(u64, u64)>, Reply> {
    match txn.meta(key)? {
        None => Ok(None),
        Some(Meta::Set { version, card }) => Ok(Some((version, card))),
        Some(_) => Err(Reply::Error(WRONGTYPE.into())),
    }
}

/// The prefix of every member's engine key in version `version` of set `key`.
pub fn member_prefix(key: &[u8], version: u64) -> Vec<u8> {
    sub_prefix(tag::MEMBER, key, version)
}

/// The member of an engine entry found by a scan of set `key`'s `prefix`
/// ([`member_prefix`]).
///
/// # Errors
/// A damaged entry.
pub fn decode_member<'v>(
    key: &[u8],
    prefix: &[u8],
    engine_key: &'v [u8],
    value: &'v [u8],
) -> Result<Cow<'v, [u8]>, Reply> {
    Ok(members::decode(key, prefix.len(), engine_key, value)?.0)
}

/// The member of an entry a sampler (`cmd::random`) drew from set `key`'s `prefix`.
///
/// # Errors
/// A damaged entry.
pub fn member_of(key: &[u8], prefix: &[u8], (k, v): &Entry) -> Result<Vec<u8>, Reply> {
    Ok(decode_member(key, prefix, k, v)?.into_owned())
}

/// Adds `members` to set `key` (creating it); returns how many were new.
///
/// # Errors
/// WRONGTYPE, a member too large for one engine value, engine errors.
pub fn add_members<'m>(
    txn: &mut Txn<'_>,
    key: &[u8],
    members: impl IntoIterator<Item = &'m [u8]> + Clone,
) -> Result<i64, Reply> {
    if members
        .clone()
        .into_iter()
        .any(|m| !members::fits(key, m, 0))
    {
        return Err(members::too_large());
    }
    let (version, mut n) = match card(txn, key)? {
        Some(vc) => vc,
        None => (txn.new_version()?, 0),
    };
    let mut added = 0;
    for m in members {
        if let Slot::Free(k) = members::locate(txn, tag::MEMBER, key, version, m)? {
            txn.put(k, members::entry_value(key, m, b""));
            added += 1;
            n += 1;
        }
    }
    if added > 0 {
        txn.put_meta(key, Meta::Set { version, card: n })?;
    }
    Ok(added)
}

/// Removes `members` from set `key`; the key goes with its last member. Returns how many
/// were there.
///
/// # Errors
/// WRONGTYPE, engine errors.
pub fn remove_members<'m>(
    txn: &mut Txn<'_>,
    key: &[u8],
    members: impl IntoIterator<Item = &'m [u8]>,
) -> Result<i64, Reply> {
    let Some((version, n)) = card(txn, key)? else {
        return Ok(0);
    };
    let removed = delete_present(txn, tag::MEMBER, key, version, members)?;
    if removed > 0 {
        store_set(txn, key, version, n.saturating_sub(removed))?;
    }
    Ok(removed as i64)
}

/// Deletes each of `items` present in version `version` of collection `key` (sub-key tag
/// `tag`): set members here, and hash fields, which live in the same form
/// (`store::members`). Returns how many were present; the metadata is the caller's.
///
/// # Errors
/// Engine errors.
pub fn delete_present<'m>(
    txn: &mut Txn<'_>,
    tag: u8,
    key: &[u8],
    version: u64,
    items: impl IntoIterator<Item = &'m [u8]>,
) -> Result<u64, Reply> {
    let mut removed = 0;
    for m in items {
        if let Slot::Found(k, _) = members::locate(txn, tag, key, version, m)? {
            txn.delete(k);
            removed += 1;
        }
    }
    Ok(removed)
}

/// Deletes `engine_keys`, entries a sampler drew from version `version` of set `key` (of
/// cardinality `card`, each key present and named once); the key goes with its last member.
///
/// # Errors
/// Engine errors.
pub fn remove_entries(
    txn: &mut Txn<'_>,
    key: &[u8],
    version: u64,
    card: u64,
    engine_keys: impl IntoIterator<Item = Vec<u8>>,
) -> Result<(), Reply> {
    let mut removed = 0u64;
    for k in engine_keys {
        txn.delete(k);
        removed += 1;
    }
    store_set(txn, key, version, card.saturating_sub(removed))
}

/// Writes set `key`'s metadata (`card` members under `version`), or removes the key when no
/// member is left.
fn store_set(txn: &mut Txn<'_>, key: &[u8], version: u64, card: u64) -> Result<(), Reply> {
    if card == 0 {
        txn.remove_key(key)?;
    } else {
        txn.put_meta(key, Meta::Set { version, card })?;
    }
    Ok(())
}

/// Replaces `dst`, whatever it held, with a new set of `members` (at least one, each once);
/// returns its cardinality.
///
/// # Errors
/// Engine errors.
pub fn replace(txn: &mut Txn<'_>, dst: &[u8], members: Vec<Vec<u8>>) -> Result<u64, Reply> {
    // The new record replaces the old one whole (its members, under their version, go with
    // it): no removal first, so an existing destination is overwritten, not created anew
    // (Redis's `new` event is for keys that did not exist).
    let version = txn.new_version()?;
    let n = members.len() as u64;
    for m in members {
        // Members come from sets, each once: they need no lookup, only their slot (a long
        // member's bucket holds just the members written here before it).
        match members::locate(txn, tag::MEMBER, dst, version, &m)? {
            Slot::Free(k) => txn.put(k, members::entry_value(dst, &m, b"")),
            Slot::Found(..) => {}
        }
    }
    txn.put_record(
        dst,
        Record {
            expire_at: 0,
            meta: Meta::Set { version, card: n },
        },
    )?;
    Ok(n)
}

/// Whether `member` is in the set of version `version` of `key`.
///
/// # Errors
/// Engine errors.
pub fn has(txn: &Txn<'_>, key: &[u8], version: u64, member: &[u8]) -> Result<bool, Reply> {
    Ok(matches!(
        members::locate(txn, tag::MEMBER, key, version, member)?,
        Slot::Found(..)
    ))
}

/// Calls `f` with each member of version `version` of set `key`, in engine key order, until
/// it returns `false`.
///
/// # Errors
/// Engine errors, damaged members, or `f`'s.
pub fn for_each_member(
    txn: &Txn<'_>,
    key: &[u8],
    version: u64,
    mut f: impl FnMut(&[u8]) -> Result<bool, Reply>,
) -> Result<(), Reply> {
    let prefix = member_prefix(key, version);
    txn.for_each_prefix(&prefix, None, false, |k, v| {
        let m = decode_member(key, &prefix, k, v)?;
        f(&m)
    })
}

/// Every member of version `version` of set `key`.
///
/// # Errors
/// Engine errors, damaged members.
pub fn all_members(txn: &Txn<'_>, key: &[u8], version: u64) -> Result<Vec<Vec<u8>>, Reply> {
    let mut out = Vec::new();
    for_each_member(txn, key, version, |m| {
        out.push(m.to_vec());
        Ok(true)
    })?;
    Ok(out)
}
