//! What the group commands do to a group over the stream's storage, through a
//! [`Session`]: its stream and record looked up together, new entries delivered to a
//! consumer (the group's position, read counter and PEL moved on), a consumer's pending
//! entries delivered again, entries acknowledged, and pending entries claimed by another
//! consumer (XCLAIM's IDs, XAUTOCLAIM's scan from a cursor). Replies are the commands'
//! ([`group_cmds`](super::group_cmds)).

use bytes::Bytes;

use super::groups::{Group, Groups, Pending, Session, UNKNOWN_READ};
use super::lag::{entries_read_at, tombstones_from};
use super::store::{Entry, Id, MAX_ID, entries_after, get_stream, next_id, read_entry};
use crate::resp::Reply;
use crate::store::Txn;
use crate::store::meta::StreamMeta;

/// Entries XAUTOCLAIM looks at per entry it may return (Redis's attempts factor).
const ATTEMPTS_PER_COUNT: u64 = 10;

/// The stream at `key` and its group `group`, or `None` when either is missing (WRONGTYPE
/// for a key of another type).
///
/// # Errors
/// WRONGTYPE, engine errors, a damaged record.
#[inline]
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

/// Delivers the entries after the group's last delivered one (up to `count`) to
/// `consumer`: moves the group's position and read counter, and makes each pending unless
/// `noack`.
///
/// # Errors
/// Engine errors, a damaged record or entry.
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
    let entries = entries_after(txn, key, m, session.group.last, count)?;
    for (id, _) in &entries {
        let g = &mut session.group;
        if *id > g.last {
            g.entries_read = if g.entries_read != UNKNOWN_READ && !tombstones_from(m, *id) {
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
        session.active(txn, consumer, now)?;
    }
    Ok(entries)
}

/// Delivers `consumer`'s own pending entries after `after` again (up to `count`): each
/// entry's ID and the entry, `None` for one deleted from the stream since.
///
/// # Errors
/// Engine errors, a damaged record or entry.
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
) -> Result<Vec<(Id, Option<Entry>)>, Reply> {
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
            None => out.push((id, None)),
            Some(e) => {
                out.push((id, Some(e)));
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
    Ok(out)
}

/// Acknowledges `ids` (XACK): each pending one leaves the PELs. Returns how many were.
///
/// # Errors
/// Engine errors, a damaged record.
#[inline]
pub(super) fn ack(
    txn: &mut Txn<'_>,
    session: &mut Session<'_>,
    ids: Vec<Id>,
) -> Result<i64, Reply> {
    let mut acked = 0;
    for id in ids {
        if let Some(p) = session.groups.pending(txn, &session.group.name, id)? {
            session.release(txn, id, &p)?;
            acked += 1;
        }
    }
    Ok(acked)
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
fn claim_one(
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

/// Opens the claim of XCLAIM or XAUTOCLAIM for `consumer`: its names checked, and the
/// claimer exists from here on, seen now, even if it claims nothing (Redis 7.2).
fn claimer(
    txn: &Txn<'_>,
    session: &mut Session<'_>,
    consumer: &Bytes,
    now: u64,
) -> Result<(), Reply> {
    session.groups.check_names(&session.group.name, consumer)?;
    session.seen(txn, consumer, now)
}

/// How XCLAIM or XAUTOCLAIM claims, as the command parsed it.
#[derive(Clone, Copy)]
pub(super) struct Claim {
    /// Only entries idle this long (ms) move.
    pub(super) min_idle: u64,
    /// XCLAIM's FORCE: IDs in no PEL are claimed too (if still in the stream).
    pub(super) force: bool,
    /// The delivery time the claimed entries take (IDLE, TIME or now).
    pub(super) at: u64,
    /// How their delivery counts change.
    pub(super) retries: Retries,
    /// The command's time.
    pub(super) now: u64,
}

/// Gives `consumer` (created if new) the entries `ids` that `how` allows (XCLAIM); an ID
/// deleted from the stream leaves the PEL. Returns the claimed entries.
///
/// # Errors
/// Engine errors, a damaged record or entry.
pub(super) fn claim(
    txn: &mut Txn<'_>,
    session: &mut Session<'_>,
    (key, m): (&[u8], &StreamMeta),
    ids: Vec<Id>,
    consumer: &Bytes,
    how: Claim,
) -> Result<Vec<Entry>, Reply> {
    let Claim {
        min_idle,
        force,
        at,
        retries,
        now,
    } = how;
    claimer(txn, session, consumer, now)?;
    let mut out = Vec::new();
    for id in ids {
        let name = session.group.name.clone();
        let pending = session.groups.pending(txn, &name, id)?;
        let entry = read_entry(txn, key, m, id)?;
        let Some(entry) = entry else {
            // Gone from the stream: gone from the PEL too.
            if let Some(p) = pending {
                session.release(txn, id, &p)?;
            }
            continue;
        };
        if pending.is_none() && !force {
            continue;
        }
        if let Some(p) = &pending
            && min_idle > 0
            && now.saturating_sub(p.delivered) < min_idle
        {
            continue;
        }
        // An entry FORCE puts in the PEL counts as delivered once before this claim.
        claim_one(txn, session, id, pending.as_ref(), consumer, at, retries)?;
        session.active(txn, consumer, now)?;
        out.push(entry);
    }
    Ok(out)
}

/// What XAUTOCLAIM did.
pub(super) struct AutoClaimed {
    /// Where the next call starts (0-0: the scan reached the PEL's end).
    pub(super) cursor: Id,
    /// The entries claimed.
    pub(super) claimed: Vec<Entry>,
    /// The IDs found deleted from the stream (and removed from the PEL).
    pub(super) deleted: Vec<Id>,
}

/// Gives `consumer` (created if new) the entries pending from the cursor `start` that `how`
/// allows (XAUTOCLAIM): at most `count` of them, looking at most at `count` x 10 PEL
/// entries.
///
/// # Errors
/// Engine errors, a damaged record or entry.
pub(super) fn autoclaim(
    txn: &mut Txn<'_>,
    session: &mut Session<'_>,
    (key, m): (&[u8], &StreamMeta),
    consumer: &Bytes,
    how: Claim,
    (start, count): (Id, u64),
) -> Result<AutoClaimed, Reply> {
    let now = how.now;
    claimer(txn, session, consumer, now)?;
    // The candidates: at most `attempts` PEL entries from `start`, and the one after them
    // (the next call's cursor).
    let attempts = count.saturating_mul(ATTEMPTS_PER_COUNT);
    let mut scanned: Vec<(Id, Pending)> = Vec::new();
    let name = session.group.name.clone();
    session
        .groups
        .for_each_pending(txn, &name, start, MAX_ID, false, |id, p| {
            scanned.push((id, p));
            Ok((scanned.len() as u64) <= attempts)
        })?;
    let mut claimed = Vec::new();
    let mut deleted = Vec::new();
    let mut cursor = (0, 0);
    let mut left = count;
    for (n, (id, p)) in scanned.iter().enumerate() {
        if left == 0 || n as u64 == attempts {
            cursor = *id;
            break;
        }
        let Some(entry) = read_entry(txn, key, m, *id)? else {
            session.release(txn, *id, p)?;
            deleted.push(*id);
            left -= 1;
            continue;
        };
        if how.min_idle > 0 && now.saturating_sub(p.delivered) < how.min_idle {
            continue;
        }
        claim_one(txn, session, *id, Some(p), consumer, how.at, how.retries)?;
        session.active(txn, consumer, now)?;
        claimed.push(entry);
        left -= 1;
    }
    Ok(AutoClaimed {
        cursor,
        claimed,
        deleted,
    })
}
