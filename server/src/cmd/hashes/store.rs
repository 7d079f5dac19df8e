//! How a hash lives in the engine: the metadata holds its version and field count, and each
//! field is one engine key under that version whose value is the field's value:
//!
//! ```text
//! 'h' be32(len) key be64(version) field  ->  value
//! ```
//!
//! A field of any length fits (`store::members`: a long one is kept hashed, whole in the
//! value). A field is one point lookup, every field one prefix scan; a write touches only
//! the fields it names, plus the metadata when the count changes.

use std::borrow::Cow;

use crate::cmd::WRONGTYPE;
use crate::cmd::sets::store::delete_present;
use crate::resp::Reply;
use crate::store::members::{self, Slot};
use crate::store::{Meta, Txn, sub_prefix, tag};

/// A field and its value.
pub type Pair<'a> = (&'a [u8], &'a [u8]);

/// Hash `key`'s version and field count: `None` if missing, WRONGTYPE for other types.
///
/// # Errors
/// WRONGTYPE, engine errors.
pub fn hash(txn: &Txn<'_>, key: &[u8]) -> Result<Option<(u64, u64)>, Reply> {
    match txn.meta(key)? {
        None => Ok(None),
        Some(Meta::Hash { version, len }) => Ok(Some((version, len))),
        Some(_) => Err(Reply::Error(WRONGTYPE.into())),
    }
}

/// The prefix of every field's engine key in version `version` of hash `key`.
pub fn field_prefix(key: &[u8], version: u64) -> Vec<u8> {
    sub_prefix(tag::FIELD, key, version)
}

/// The field and value of an engine entry found by a scan of hash `key`'s `prefix`
/// ([`field_prefix`]).
///
/// # Errors
/// A damaged entry.
pub fn decode_field<'v>(
    key: &[u8],
    prefix: &[u8],
    engine_key: &'v [u8],
    value: &'v [u8],
) -> Result<(Cow<'v, [u8]>, &'v [u8]), Reply> {
    members::decode(key, prefix.len(), engine_key, value)
}

/// The value of `field` in version `version` of hash `key`.
pub(crate) fn get_field(
    txn: &Txn<'_>,
    key: &[u8],
    version: u64,
    field: &[u8],
) -> Result<Option<Vec<u8>>, Reply> {
    Ok(
        match members::locate(txn, tag::FIELD, key, version, field)? {
            Slot::Found(_, v) => Some(v),
            Slot::Free(_) => None,
        },
    )
}

/// Whether `field` is in version `version` of hash `key`.
///
/// # Errors
/// Engine errors.
pub fn has_field(txn: &Txn<'_>, key: &[u8], version: u64, field: &[u8]) -> Result<bool, Reply> {
    Ok(matches!(
        members::locate(txn, tag::FIELD, key, version, field)?,
        Slot::Found(..)
    ))
}

/// Sets each `(field, value)` of `pairs` in hash `key` (creating it); returns how many fields
/// were new. Sizes are checked before anything is written.
///
/// # Errors
/// WRONGTYPE, a field and value too large for one engine value, engine errors.
pub fn set_fields(txn: &mut Txn<'_>, key: &[u8], pairs: &[Pair<'_>]) -> Result<i64, Reply> {
    if pairs.iter().any(|(f, v)| !members::fits(key, f, v.len())) {
        return Err(members::too_large());
    }
    let (version, mut len) = match hash(txn, key)? {
        Some(h) => h,
        None => (txn.new_version()?, 0),
    };
    let mut added = 0;
    for (f, v) in pairs {
        let slot = members::locate(txn, tag::FIELD, key, version, f)?;
        if matches!(slot, Slot::Free(_)) {
            added += 1;
            len += 1;
        }
        let k = match slot {
            Slot::Found(k, _) | Slot::Free(k) => k,
        };
        txn.put(k, members::entry_value(key, f, v));
    }
    if added > 0 {
        txn.put_meta(key, Meta::Hash { version, len })?;
    }
    Ok(added)
}

/// Removes `fields` from hash `key`; the key goes with its last field. Returns how many were
/// there.
///
/// # Errors
/// WRONGTYPE, engine errors.
pub fn remove_fields<'f>(
    txn: &mut Txn<'_>,
    key: &[u8],
    fields: impl IntoIterator<Item = &'f [u8]>,
) -> Result<i64, Reply> {
    let Some((version, len)) = hash(txn, key)? else {
        return Ok(0);
    };
    let removed = delete_present(txn, tag::FIELD, key, version, fields)?;
    if removed > 0 {
        store_hash(txn, key, version, len.saturating_sub(removed))?;
    }
    Ok(removed as i64)
}

/// Writes hash `key`'s metadata (`len` fields under `version`), or removes the key when no
/// field is left.
fn store_hash(txn: &mut Txn<'_>, key: &[u8], version: u64, len: u64) -> Result<(), Reply> {
    if len == 0 {
        txn.remove_key(key)?;
    } else {
        txn.put_meta(key, Meta::Hash { version, len })?;
    }
    Ok(())
}

/// Calls `f` with each field and value of version `version` of hash `key`, in engine key
/// order, until it returns `false`.
///
/// # Errors
/// Engine errors, damaged fields, or `f`'s.
pub fn for_each_field(
    txn: &Txn<'_>,
    key: &[u8],
    version: u64,
    mut f: impl FnMut(&[u8], &[u8]) -> Result<bool, Reply>,
) -> Result<(), Reply> {
    let prefix = field_prefix(key, version);
    txn.for_each_prefix(&prefix, None, false, |k, v| {
        let (field, value) = decode_field(key, &prefix, k, v)?;
        f(&field, value)
    })
}
