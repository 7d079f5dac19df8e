//! Copying a key's value to another key, in the same database or another (RENAME, COPY,
//! MOVE). A string is its metadata record; a collection's members are copied under a fresh
//! version of the destination's database, since a sub-key holds its key's name and its
//! version names the database (`keys`). So the copy costs one write per member, not one as
//! a DEL does.

use super::gc::tags_of;
use super::keys::{DbIndex, sub_key, sub_prefix, tag};
use super::members::{self, Slot};
use super::{Record, Txn, member_too_long};
use crate::resp::Reply;

/// Copies the live value of `src` in database `src_db` to `dst` in database `dst_db`,
/// replacing whatever `dst` held, with time to live `expire_at` (ms since the Unix epoch, 0
/// for none). Returns `false`, changing nothing, when `src` does not exist. The write set
/// addresses its database again afterwards.
///
/// # Errors
/// Engine errors; a member too long to sit under the longer `dst` name (nothing written
/// then: the caller rolls back).
pub fn copy_value(
    txn: &mut Txn<'_>,
    (src_db, src): (DbIndex, &[u8]),
    (dst_db, dst): (DbIndex, &[u8]),
    expire_at: u64,
) -> Result<bool, Reply> {
    let db = txn.db();
    let r = copy_in(txn, (src_db, src), (dst_db, dst), expire_at);
    txn.select_stored(db);
    r
}

fn copy_in(
    txn: &mut Txn<'_>,
    (src_db, src): (DbIndex, &[u8]),
    (dst_db, dst): (DbIndex, &[u8]),
    expire_at: u64,
) -> Result<bool, Reply> {
    txn.select_stored(src_db);
    let Some(rec) = txn.live(src)? else {
        return Ok(false);
    };
    // The members, read before anything is written (the source may be the destination's
    // old value in another database, or a key this write set changes next).
    let mut entries: Vec<(u8, Vec<u8>, Vec<u8>)> = Vec::new();
    if let Some(version) = rec.meta.version() {
        for &t in tags_of(&rec.meta) {
            let prefix = sub_prefix(t, src, version);
            txn.for_each_prefix(&prefix, None, false, |k, v| {
                entries.push((t, k[prefix.len()..].to_vec(), v.to_vec()));
                Ok(true)
            })?;
        }
    }
    txn.select_stored(dst_db);
    let meta = match rec.meta.version() {
        None => rec.meta,
        Some(_) => {
            let version = txn.new_version()?;
            let prefix_len = sub_prefix(tag::MEMBER, src, 0).len();
            for (t, suffix, value) in entries {
                if matches!(t, tag::MEMBER | tag::FIELD) {
                    // Members and fields take the inline or the hashed form by the room
                    // the key's name leaves (`members`): decoded, then placed anew.
                    let mut k = sub_prefix(t, src, 0);
                    k.extend_from_slice(&suffix);
                    let (member, payload) = members::decode(src, prefix_len, &k, &value)?;
                    let slot = members::locate(txn, t, dst, version, &member)?;
                    let (Slot::Free(k) | Slot::Found(k, _)) = slot;
                    txn.put(k, members::entry_value(dst, &member, payload));
                } else {
                    let k = sub_key(t, dst, version, &suffix);
                    if k.len() > bloomkv::MAX_KEY_BYTES {
                        return Err(member_too_long(dst, &suffix));
                    }
                    txn.put(k, value);
                }
            }
            rec.meta.with_version(version)
        }
    };
    let ready = matches!(
        meta,
        super::Meta::List { .. } | super::Meta::Zset { .. } | super::Meta::Stream(_)
    );
    // Redis deletes the destination and adds the copy as a key of its own (`new` is sent
    // for it even when the destination existed).
    txn.remove_key(dst)?;
    txn.put_record(dst, Record { expire_at, meta })?;
    if ready {
        txn.signal_ready(dst);
    }
    Ok(true)
}
