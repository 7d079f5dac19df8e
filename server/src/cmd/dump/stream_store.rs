//! A stream's whole value read from and written to this server's stream storage (entries,
//! metadata, consumer groups with their PELs and consumers), for DUMP and RESTORE.

use bytes::Bytes;

use super::stream::{ConsumerValue, GroupValue, StreamValue};
use crate::cmd::streams::groups::{Consumer, Group, Groups, Pending};
use crate::cmd::streams::lag;
use crate::cmd::streams::store::{MAX_ID, all_entries, check_key, put_entry};
use crate::resp::Reply;
use crate::store::meta::StreamMeta;
use crate::store::{Meta, Txn};

/// The stream `key` (metadata `m`) with its groups.
///
/// # Errors
/// Engine errors, damaged records.
pub fn collect(txn: &Txn<'_>, key: &[u8], m: &StreamMeta) -> Result<StreamValue, Reply> {
    let entries = all_entries(txn, key, m)?
        .into_iter()
        .map(|(id, pairs)| (id, pairs.into_iter().flat_map(|(f, v)| [f, v]).collect()))
        .collect();
    let groups = Groups::of(key, m.version);
    let mut out = Vec::new();
    for g in groups.list(txn)? {
        let mut pel = Vec::new();
        groups.for_each_pending(txn, &g.name, (0, 0), MAX_ID, false, |id, p| {
            pel.push((id, p.delivered, p.deliveries));
            Ok(true)
        })?;
        let mut consumers = Vec::new();
        for c in groups.consumers(txn, &g.name)? {
            let mut owned = Vec::new();
            groups.for_each_owned(txn, &g.name, &c.name, (0, 0), MAX_ID, |id| {
                owned.push(id);
                Ok(true)
            })?;
            consumers.push(ConsumerValue {
                name: c.name,
                seen: c.seen,
                active: c.active,
                pel: owned,
            });
        }
        out.push(GroupValue {
            name: g.name,
            last: g.last,
            entries_read: Some(g.entries_read),
            pel,
            consumers,
        });
    }
    Ok(StreamValue {
        entries,
        last: m.last,
        max_deleted: m.max_deleted,
        added: m.added,
        groups: out,
    })
}

/// Writes `v` as the stream `key`, which does not exist now.
///
/// # Errors
/// Engine errors; a key, entry or group and consumer names too long for the engine.
pub fn store(txn: &mut Txn<'_>, key: &Bytes, v: StreamValue) -> Result<(), Reply> {
    check_key(key)?;
    let version = txn.new_version()?;
    for (id, pairs) in &v.entries {
        put_entry(txn, key, version, *id, pairs)?;
    }
    let m = StreamMeta {
        version,
        len: v.entries.len() as u64,
        last: v.last,
        first: v.entries.first().map_or((0, 0), |e| e.0),
        max_deleted: v.max_deleted,
        added: v.added,
    };
    txn.put_meta(key, Meta::Stream(m))?;
    // Readers blocked on the key see its entries, as Redis's RESTORE signals them.
    txn.signal_ready(key);
    let groups = Groups::of(key, version);
    for g in v.groups {
        groups.check_names(&g.name, b"")?;
        for c in &g.consumers {
            groups.check_names(&g.name, &c.name)?;
        }
        groups.put(
            txn,
            &Group {
                name: g.name.clone(),
                last: g.last,
                entries_read: g
                    .entries_read
                    .unwrap_or_else(|| lag::entries_read_at(&m, g.last)),
                pending: g.pel.len() as u64,
                consumers: g.consumers.len() as u64,
            },
        );
        for c in &g.consumers {
            groups.put_consumer(
                txn,
                &g.name,
                &Consumer {
                    name: c.name.clone(),
                    seen: c.seen,
                    active: c.active,
                    pending: c.pel.len() as u64,
                },
            );
            for id in &c.pel {
                // The payload was checked: each owned ID is in the group's PEL.
                let Ok(at) = g.pel.binary_search_by(|p| p.0.cmp(id)) else {
                    continue;
                };
                let (_, delivered, deliveries) = g.pel[at];
                groups.put_pending(
                    txn,
                    &g.name,
                    *id,
                    &Pending {
                        consumer: c.name.clone(),
                        delivered,
                        deliveries,
                    },
                );
            }
        }
    }
    Ok(())
}
