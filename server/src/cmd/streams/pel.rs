//! What the group commands do to a group over the stream's storage: its stream and record
//! looked up together, new entries delivered to a consumer (the group's position, read
//! counter and PEL moved on), a consumer's pending entries delivered again, and a pending
//! entry claimed by another consumer.

use bytes::Bytes;

use super::groups::{Group, Groups, Pending, Session, UNKNOWN_READ};
use super::lag::entries_read_at;
use super::store::{Entry, Id, decode_entry, entry_key, get_stream, next_id, range};
use super::{entry_reply, fmt_id};
use crate::resp::Reply;
use crate::store::Txn;
use crate::store::meta::StreamMeta;

const MAX_ID: Id = (u64::MAX, u64::MAX);

/// The stream at `key` and its group `group`, or `None` when either is missing (WRONGTYPE
/// for a key of another type).
pub(super) fn stream_and_group(
    txn: &Txn<'_>,
    key: &[u8],
    group: &[u8],
) -> Result<Option<(StreamMeta, Group)>, Reply> {
    let Some(m) = get_stream(txn, key)? else {
        return Ok(None);
    };
    Ok(Groups::of(key, m.version).get(txn, group)?.map(|g| (m, g)))
}

/// The entry `id` of the stream, if it is still there.
pub(super) fn read_entry(
    txn: &Txn<'_>,
    key: &[u8],
    m: &StreamMeta,
    id: Id,
) -> Result<Option<Entry>, Reply> {
    match txn.get(&entry_key(key, m.version, id))? {
        Some(v) => Ok(Some((id, decode_entry(&v)?))),
        None => Ok(None),
    }
}

/// Delivers the entries after the group's last delivered one (up to `count`) to
/// `consumer`: moves the group's position and read counter, and makes each pending unless
/// `noack`.
#[expect(
    clippy::too_many_arguments,
    reason = "the stream, the group's session, the reader and its options: one call site each"
)]
pub(super) fn deliver_new(
    txn: &mut Txn<'_>,
    key: &[u8],
    m: &StreamMeta,
    session: &mut Session<'_>,
    consumer: &Bytes,
    count: Option<u64>,
    noack: bool,
    now: u64,
) -> Result<Vec<Entry>, Reply> {
    let Some(from) = next_id(session.group.last) else {
        return Ok(Vec::new());
    };
    let entries = range(txn, key, m, from, MAX_ID, false, count)?;
    for (id, _) in &entries {
        let g = &mut session.group;
        if *id > g.last {
            g.entries_read =
                if g.entries_read != UNKNOWN_READ && !super::lag::tombstones_from(m, *id) {
                    g.entries_read + 1
                } else if m.added > 0 {
                    entries_read_at(m, *id)
                } else {
                    g.entries_read
                };
            g.last = *id;
            session.group_changed();
        }
        if !noack {
            let old = session.groups.pending(txn, &session.group.name, *id)?;
            session.assign(
                txn,
                *id,
                old.as_ref(),
                Pending {
                    consumer: consumer.clone(),
                    delivered: now,
                    deliveries: 1,
                },
            )?;
        }
    }
    if !noack && !entries.is_empty() {
        let (c, _) = session.consumer(txn, consumer, now)?;
        c.active = now as i64;
    }
    Ok(entries)
}

/// Delivers `consumer`'s own pending entries after `after` again (up to `count`): each
/// entry, or `[id, nil]` for one deleted from the stream since.
#[expect(
    clippy::too_many_arguments,
    reason = "the stream, the group's session, the reader and its options: one call site each"
)]
pub(super) fn deliver_history(
    txn: &mut Txn<'_>,
    key: &[u8],
    m: &StreamMeta,
    session: &mut Session<'_>,
    consumer: &Bytes,
    after: Id,
    count: Option<u64>,
    now: u64,
) -> Result<Reply, Reply> {
    let mut ids = Vec::new();
    if let Some(from) = next_id(after) {
        let limit = count.unwrap_or(u64::MAX);
        session
            .groups
            .for_each_owned(txn, &session.group.name, consumer, from, MAX_ID, |id| {
                ids.push(id);
                Ok((ids.len() as u64) < limit)
            })?;
    }
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        match read_entry(txn, key, m, id)? {
            None => out.push(Reply::Array(vec![Reply::bulk(fmt_id(id)), Reply::NilArray])),
            Some(e) => {
                out.push(entry_reply(e));
                let name = session.group.name.clone();
                if let Some(p) = session.groups.pending(txn, &name, id)? {
                    let again = Pending {
                        delivered: now,
                        deliveries: p.deliveries + 1,
                        ..p.clone()
                    };
                    session.assign(txn, id, Some(&p), again)?;
                }
            }
        }
    }
    Ok(Reply::Array(out))
}

/// How XCLAIM sets a claimed entry's delivery count.
#[derive(Clone, Copy)]
pub(super) enum Retries {
    /// One more delivery (XCLAIM and XAUTOCLAIM without JUSTID).
    Increment,
    /// Unchanged (JUSTID).
    Keep,
    /// RETRYCOUNT.
    Set(u64),
}

/// Moves the pending entry `id` to `consumer`, delivered at `at`: XCLAIM's and
/// XAUTOCLAIM's common step.
pub(super) fn claim_one(
    txn: &mut Txn<'_>,
    session: &mut Session<'_>,
    id: Id,
    old: Option<&Pending>,
    consumer: &Bytes,
    at: u64,
    retries: Retries,
) -> Result<(), Reply> {
    let deliveries = old.map_or(1, |p| p.deliveries);
    let deliveries = match retries {
        Retries::Increment => deliveries + 1,
        Retries::Keep => deliveries,
        Retries::Set(n) => n,
    };
    session.assign(
        txn,
        id,
        old,
        Pending {
            consumer: consumer.clone(),
            delivered: at,
            deliveries,
        },
    )
}
