//! Consumer groups as engine keys: the groups of a stream, their consumers and their
//! pending-entries lists (PELs), all sub-keys under the stream's version with tag `g`, so
//! DEL, expiry, RENAME, COPY and compaction treat them as they treat the stream's entries:
//!
//! ```text
//! 'g' be32(len) key be64(ver) 0x01 group                       group -> last ID (2 x u64),
//!                                                             entries read i64, pending u64,
//!                                                             consumers u64
//! 'g' be32(len) key be64(ver) 0x02 be32(len) group consumer   consumer -> seen u64,
//!                                                             active i64, pending u64
//! 'g' be32(len) key be64(ver) 0x03 be32(len) group be64(ms) be64(seq)
//!                                                             pending entry -> delivered
//!                                                             at u64, deliveries u64, consumer
//! 'g' be32(len) key be64(ver) 0x04 be32(len) group be32(len) consumer be64(ms) be64(seq)
//!                                                             the consumer's PEL (empty value)
//! ```
//!
//! Values' integers are little-endian. Group records follow the group's name directly, so
//! they sort by name as Redis lists them; a group's consumers sort by name and its PELs by
//! ID. The counters kept in the group and consumer records answer XPENDING's and XINFO's
//! counts without a scan.

use std::collections::BTreeMap;
use std::ops::Bound;

use bytes::Bytes;

use super::store::{Id, MAX_ID};
use crate::resp::Reply;
use crate::store::{Txn, prefix_end, sub_key, tag};

const GROUP: u8 = 1;
const CONSUMER: u8 = 2;
const PENDING: u8 = 3;
const OWNED: u8 = 4;

/// `entries-read` when it is not known (Redis's `SCG_INVALID_ENTRIES_READ`).
pub const UNKNOWN_READ: i64 = -1;

fn corrupt() -> Reply {
    Reply::err("corrupt consumer group record in the store")
}

fn u64_at(v: &[u8], at: usize) -> Result<u64, Reply> {
    v.get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .ok_or_else(corrupt)
}

fn id_bytes(id: Id) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&id.0.to_be_bytes());
    b[8..].copy_from_slice(&id.1.to_be_bytes());
    b
}

fn id_at_end(k: &[u8]) -> Result<Id, Reply> {
    let n = k.len();
    let tail = k.get(n.wrapping_sub(16)..).filter(|t| t.len() == 16);
    let tail = tail.ok_or_else(corrupt)?;
    Ok((
        u64::from_be_bytes(tail[..8].try_into().map_err(|_| corrupt())?),
        u64::from_be_bytes(tail[8..].try_into().map_err(|_| corrupt())?),
    ))
}

fn with_len(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_be_bytes());
    out.extend_from_slice(b);
}

/// A consumer group's record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// Its name.
    pub name: Bytes,
    /// The last entry delivered to it (`last-delivered-id`).
    pub last: Id,
    /// Entries it has read, or [`UNKNOWN_READ`] (`entries-read`).
    pub entries_read: i64,
    /// Entries in its PEL.
    pub pending: u64,
    /// Its consumers.
    pub consumers: u64,
}

impl Group {
    fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(40);
        v.extend_from_slice(&self.last.0.to_le_bytes());
        v.extend_from_slice(&self.last.1.to_le_bytes());
        v.extend_from_slice(&self.entries_read.to_le_bytes());
        v.extend_from_slice(&self.pending.to_le_bytes());
        v.extend_from_slice(&self.consumers.to_le_bytes());
        v
    }

    fn decode(name: &[u8], v: &[u8]) -> Result<Group, Reply> {
        if v.len() != 40 {
            return Err(corrupt());
        }
        Ok(Group {
            name: Bytes::copy_from_slice(name),
            last: (u64_at(v, 0)?, u64_at(v, 8)?),
            entries_read: u64_at(v, 16)? as i64,
            pending: u64_at(v, 24)?,
            consumers: u64_at(v, 32)?,
        })
    }
}

/// A consumer's record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Consumer {
    /// Its name.
    pub name: Bytes,
    /// When it last read or claimed, successfully or not (ms since the Unix epoch).
    pub seen: u64,
    /// When it last got an entry, or -1 never.
    pub active: i64,
    /// Entries in its PEL.
    pub pending: u64,
}

impl Consumer {
    fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(24);
        v.extend_from_slice(&self.seen.to_le_bytes());
        v.extend_from_slice(&self.active.to_le_bytes());
        v.extend_from_slice(&self.pending.to_le_bytes());
        v
    }

    fn decode(name: &[u8], v: &[u8]) -> Result<Consumer, Reply> {
        if v.len() != 24 {
            return Err(corrupt());
        }
        Ok(Consumer {
            name: Bytes::copy_from_slice(name),
            seen: u64_at(v, 0)?,
            active: u64_at(v, 8)? as i64,
            pending: u64_at(v, 16)?,
        })
    }
}

/// An entry delivered and not yet acknowledged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    /// The consumer it was last delivered to.
    pub consumer: Bytes,
    /// When (ms since the Unix epoch).
    pub delivered: u64,
    /// How many times it was delivered.
    pub deliveries: u64,
}

impl Pending {
    fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(16 + self.consumer.len());
        v.extend_from_slice(&self.delivered.to_le_bytes());
        v.extend_from_slice(&self.deliveries.to_le_bytes());
        v.extend_from_slice(&self.consumer);
        v
    }

    fn decode(v: &[u8]) -> Result<Pending, Reply> {
        Ok(Pending {
            delivered: u64_at(v, 0)?,
            deliveries: u64_at(v, 8)?,
            consumer: Bytes::copy_from_slice(v.get(16..).ok_or_else(corrupt)?),
        })
    }
}

/// The consumer groups of one stream (its key and version).
#[derive(Clone, Copy, Debug)]
pub struct Groups<'k> {
    key: &'k [u8],
    version: u64,
}

impl<'k> Groups<'k> {
    /// The groups of the stream `key` whose entries live under `version`.
    pub fn of(key: &'k [u8], version: u64) -> Groups<'k> {
        Groups { key, version }
    }

    fn key_of(&self, rest: &[u8]) -> Vec<u8> {
        sub_key(tag::GROUP, self.key, self.version, rest)
    }

    fn group_key(&self, name: &[u8]) -> Vec<u8> {
        let mut rest = Vec::with_capacity(1 + name.len());
        rest.push(GROUP);
        rest.extend_from_slice(name);
        self.key_of(&rest)
    }

    /// The prefix of the sub-keys of `kind` belonging to group `name`.
    fn scoped(&self, kind: u8, name: &[u8]) -> Vec<u8> {
        let mut rest = Vec::with_capacity(5 + name.len());
        rest.push(kind);
        with_len(&mut rest, name);
        self.key_of(&rest)
    }

    fn pending_key(&self, group: &[u8], id: Id) -> Vec<u8> {
        let mut k = self.scoped(PENDING, group);
        k.extend_from_slice(&id_bytes(id));
        k
    }

    fn owned_prefix(&self, group: &[u8], consumer: &[u8]) -> Vec<u8> {
        let mut k = self.scoped(OWNED, group);
        with_len(&mut k, consumer);
        k
    }

    fn owned_key(&self, group: &[u8], consumer: &[u8], id: Id) -> Vec<u8> {
        let mut k = self.owned_prefix(group, consumer);
        k.extend_from_slice(&id_bytes(id));
        k
    }

    fn consumer_key(&self, group: &[u8], consumer: &[u8]) -> Vec<u8> {
        let mut k = self.scoped(CONSUMER, group);
        k.extend_from_slice(consumer);
        k
    }

    /// Refuses names that would make an engine key too long.
    ///
    /// # Errors
    /// The error a client gets.
    pub fn check_names(&self, group: &[u8], consumer: &[u8]) -> Result<(), Reply> {
        let longest = self.owned_key(group, consumer, (0, 0)).len();
        if longest > bloomkv::MAX_KEY_BYTES {
            return Err(Reply::err(format!(
                "consumer group and consumer names too long for key '{}' (bloomkv-server holds {} bytes of key, group and consumer names together)",
                String::from_utf8_lossy(self.key),
                bloomkv::MAX_KEY_BYTES - (longest - self.key.len() - group.len() - consumer.len())
            )));
        }
        Ok(())
    }

    /// Group `name`, if it exists.
    ///
    /// # Errors
    /// Engine errors, a damaged record.
    pub fn get(&self, txn: &Txn<'_>, name: &[u8]) -> Result<Option<Group>, Reply> {
        txn.get(&self.group_key(name))?
            .map(|v| Group::decode(name, &v))
            .transpose()
    }

    /// Writes group `g`'s record.
    pub fn put(&self, txn: &mut Txn<'_>, g: &Group) {
        txn.put(self.group_key(&g.name), g.encode());
    }

    /// Every group, by name.
    ///
    /// # Errors
    /// Engine errors, a damaged record.
    pub fn list(&self, txn: &Txn<'_>) -> Result<Vec<Group>, Reply> {
        let prefix = self.key_of(&[GROUP]);
        let mut out = Vec::new();
        txn.for_each_prefix(&prefix, None, false, |k, v| {
            out.push(Group::decode(&k[prefix.len()..], v)?);
            Ok(true)
        })?;
        Ok(out)
    }

    /// Removes group `name` with its consumers and PEL: four range deletions.
    pub fn destroy(&self, txn: &mut Txn<'_>, name: &[u8]) {
        txn.delete(self.group_key(name));
        for kind in [CONSUMER, PENDING, OWNED] {
            let start = self.scoped(kind, name);
            if let Some(end) = prefix_end(&start) {
                txn.delete_range(start, end);
            }
        }
    }

    /// Consumer `name` of group `group`, if it exists.
    ///
    /// # Errors
    /// Engine errors, a damaged record.
    pub fn consumer(
        &self,
        txn: &Txn<'_>,
        group: &[u8],
        name: &[u8],
    ) -> Result<Option<Consumer>, Reply> {
        txn.get(&self.consumer_key(group, name))?
            .map(|v| Consumer::decode(name, &v))
            .transpose()
    }

    /// Writes consumer `c`'s record in group `group`.
    pub fn put_consumer(&self, txn: &mut Txn<'_>, group: &[u8], c: &Consumer) {
        txn.put(self.consumer_key(group, &c.name), c.encode());
    }

    /// Every consumer of `group`, by name.
    ///
    /// # Errors
    /// Engine errors, a damaged record.
    pub fn consumers(&self, txn: &Txn<'_>, group: &[u8]) -> Result<Vec<Consumer>, Reply> {
        let prefix = self.scoped(CONSUMER, group);
        let mut out = Vec::new();
        txn.for_each_prefix(&prefix, None, false, |k, v| {
            out.push(Consumer::decode(&k[prefix.len()..], v)?);
            Ok(true)
        })?;
        Ok(out)
    }

    /// The pending entry `id` of `group`, if any.
    ///
    /// # Errors
    /// Engine errors, a damaged record.
    pub fn pending(&self, txn: &Txn<'_>, group: &[u8], id: Id) -> Result<Option<Pending>, Reply> {
        txn.get(&self.pending_key(group, id))?
            .map(|v| Pending::decode(&v))
            .transpose()
    }

    /// Calls `f` with `group`'s pending entries from `from` to `to` (inclusive), in ID
    /// order, until it returns false.
    ///
    /// # Errors
    /// Engine errors, a damaged record, `f`'s.
    pub fn for_each_pending(
        &self,
        txn: &Txn<'_>,
        group: &[u8],
        from: Id,
        to: Id,
        reverse: bool,
        mut f: impl FnMut(Id, Pending) -> Result<bool, Reply>,
    ) -> Result<(), Reply> {
        if from > to {
            return Ok(());
        }
        let start = Bound::Included(self.pending_key(group, from));
        let end = Bound::Included(self.pending_key(group, to));
        txn.for_each_in(start, end, reverse, |k, v| {
            f(id_at_end(k)?, Pending::decode(v)?)
        })
    }

    /// Writes pending entry `id` of `group` and its place in its consumer's PEL (the
    /// counters in the group and consumer records are the caller's).
    pub fn put_pending(&self, txn: &mut Txn<'_>, group: &[u8], id: Id, p: &Pending) {
        txn.put(self.owned_key(group, &p.consumer, id), Vec::new());
        txn.put(self.pending_key(group, id), p.encode());
    }

    /// Calls `f` with the IDs pending for `consumer` of `group` from `from` to `to`
    /// (inclusive), in order, until it returns false.
    ///
    /// # Errors
    /// Engine errors, a damaged key, `f`'s.
    pub fn for_each_owned(
        &self,
        txn: &Txn<'_>,
        group: &[u8],
        consumer: &[u8],
        from: Id,
        to: Id,
        mut f: impl FnMut(Id) -> Result<bool, Reply>,
    ) -> Result<(), Reply> {
        if from > to {
            return Ok(());
        }
        let start = Bound::Included(self.owned_key(group, consumer, from));
        let end = Bound::Included(self.owned_key(group, consumer, to));
        txn.for_each_in(start, end, false, |k, _| f(id_at_end(k)?))
    }

    /// Calls `f` with the pending entries of `consumer` of `group` from `from` to `to`
    /// (inclusive), in ID order, until it returns false: the first `scan_limit` IDs of the
    /// consumer's PEL, each looked up in the group's.
    ///
    /// # Errors
    /// Engine errors, a damaged record, `f`'s.
    #[expect(
        clippy::too_many_arguments,
        reason = "the group and consumer, the range, the scan's limit and the visitor"
    )]
    pub fn for_each_owned_pending(
        &self,
        txn: &Txn<'_>,
        group: &[u8],
        consumer: &[u8],
        from: Id,
        to: Id,
        scan_limit: u64,
        mut f: impl FnMut(Id, Pending) -> Result<bool, Reply>,
    ) -> Result<(), Reply> {
        let mut ids = Vec::new();
        self.for_each_owned(txn, group, consumer, from, to, |id| {
            ids.push(id);
            Ok((ids.len() as u64) < scan_limit)
        })?;
        for id in ids {
            if let Some(p) = self.pending(txn, group, id)?
                && !f(id, p)?
            {
                break;
            }
        }
        Ok(())
    }

    /// The smallest and largest IDs pending in `group`, if any.
    ///
    /// # Errors
    /// Engine errors, a damaged record.
    pub fn pending_bounds(&self, txn: &Txn<'_>, group: &[u8]) -> Result<Option<(Id, Id)>, Reply> {
        let mut edges = Vec::new();
        for reverse in [false, true] {
            self.for_each_pending(txn, group, (0, 0), MAX_ID, reverse, |id, _| {
                edges.push(id);
                Ok(false)
            })?;
        }
        Ok(match (edges.first(), edges.get(1)) {
            (Some(first), Some(last)) => Some((*first, *last)),
            _ => None,
        })
    }
}

/// One group being changed by a command: its record and the consumers it touched, written
/// back by [`Session::finish`], with the PEL changes keeping every counter right.
#[derive(Debug)]
pub struct Session<'k> {
    /// The stream's groups.
    pub groups: Groups<'k>,
    /// The group's record (counters included).
    pub group: Group,
    consumers: BTreeMap<Bytes, (Consumer, bool)>,
    group_changed: bool,
}

impl<'k> Session<'k> {
    /// A session on group `group` of `groups`.
    pub fn new(groups: Groups<'k>, group: Group) -> Session<'k> {
        Session {
            groups,
            group,
            consumers: BTreeMap::new(),
            group_changed: false,
        }
    }

    /// Marks the group record for writing.
    pub fn group_changed(&mut self) {
        self.group_changed = true;
    }

    /// Moves the group's last delivered ID up to `id` if it is below (XCLAIM's LASTID).
    pub fn raise_last(&mut self, id: Id) {
        if id > self.group.last {
            self.group.last = id;
            self.group_changed();
        }
    }

    /// Consumer `name` has read or claimed now (its `seen` time), created if new.
    ///
    /// # Errors
    /// Engine errors, a damaged record.
    #[inline]
    pub fn seen(&mut self, txn: &Txn<'_>, name: &Bytes, now: u64) -> Result<(), Reply> {
        self.consumer(txn, name, now)?.0.seen = now;
        Ok(())
    }

    /// Consumer `name` got an entry now (its `active` time).
    ///
    /// # Errors
    /// Engine errors, a damaged record.
    #[inline]
    pub fn active(&mut self, txn: &Txn<'_>, name: &Bytes, now: u64) -> Result<(), Reply> {
        self.consumer(txn, name, now)?.0.active = now as i64;
        Ok(())
    }

    /// Consumer `name`, created (with `seen` now) if it does not exist; `created` tells.
    ///
    /// # Errors
    /// Engine errors, a damaged record.
    pub fn consumer(
        &mut self,
        txn: &Txn<'_>,
        name: &Bytes,
        now: u64,
    ) -> Result<(&mut Consumer, bool), Reply> {
        let mut created = false;
        if !self.consumers.contains_key(name) {
            let c = match self.groups.consumer(txn, &self.group.name, name)? {
                Some(c) => c,
                None => {
                    created = true;
                    self.group.consumers += 1;
                    self.group_changed = true;
                    Consumer {
                        name: name.clone(),
                        seen: now,
                        active: -1,
                        pending: 0,
                    }
                }
            };
            self.consumers.insert(name.clone(), (c, created));
        }
        let (c, dirty) = self.consumers.get_mut(name).ok_or_else(corrupt)?;
        *dirty = true;
        Ok((c, created))
    }

    /// Makes `id` pending for `consumer` (delivered now, once more or for the first time):
    /// a new entry, or one moved from another consumer.
    ///
    /// # Errors
    /// Engine errors, a damaged record.
    pub fn assign(
        &mut self,
        txn: &mut Txn<'_>,
        id: Id,
        old: Option<&Pending>,
        new: Pending,
    ) -> Result<(), Reply> {
        let g = self.groups;
        let name = self.group.name.clone();
        match old {
            None => {
                self.group.pending += 1;
                self.group_changed = true;
            }
            Some(o) if o.consumer != new.consumer => {
                txn.delete(g.owned_key(&name, &o.consumer, id));
                let (prev, _) = self.consumer(txn, &o.consumer.clone(), new.delivered)?;
                prev.pending = prev.pending.saturating_sub(1);
            }
            Some(_) => {}
        }
        if old.is_none_or(|o| o.consumer != new.consumer) {
            txn.put(g.owned_key(&name, &new.consumer, id), Vec::new());
            let (c, _) = self.consumer(txn, &new.consumer.clone(), new.delivered)?;
            c.pending += 1;
        }
        txn.put(g.pending_key(&name, id), new.encode());
        Ok(())
    }

    /// Removes `id` (pending as `p`) from the PELs.
    ///
    /// # Errors
    /// Engine errors, a damaged record.
    pub fn release(&mut self, txn: &mut Txn<'_>, id: Id, p: &Pending) -> Result<(), Reply> {
        let g = self.groups;
        let name = self.group.name.clone();
        txn.delete(g.pending_key(&name, id));
        txn.delete(g.owned_key(&name, &p.consumer, id));
        self.group.pending = self.group.pending.saturating_sub(1);
        self.group_changed = true;
        let (c, _) = self.consumer(txn, &p.consumer.clone(), p.delivered)?;
        c.pending = c.pending.saturating_sub(1);
        Ok(())
    }

    /// Deletes consumer `name` and its pending entries; returns how many it had (`None`:
    /// no such consumer).
    ///
    /// # Errors
    /// Engine errors, a damaged record.
    pub fn delete_consumer(
        &mut self,
        txn: &mut Txn<'_>,
        name: &[u8],
    ) -> Result<Option<u64>, Reply> {
        let g = self.groups;
        let gname = self.group.name.clone();
        let Some(c) = g.consumer(txn, &gname, name)? else {
            return Ok(None);
        };
        let mut ids = Vec::new();
        g.for_each_owned(txn, &gname, name, (0, 0), MAX_ID, |id| {
            ids.push(id);
            Ok(true)
        })?;
        for &id in &ids {
            txn.delete(g.pending_key(&gname, id));
        }
        let start = g.owned_prefix(&gname, name);
        if let Some(end) = prefix_end(&start) {
            txn.delete_range(start, end);
        }
        txn.delete(g.consumer_key(&gname, name));
        self.consumers.remove(name);
        self.group.pending = self.group.pending.saturating_sub(ids.len() as u64);
        self.group.consumers = self.group.consumers.saturating_sub(1);
        self.group_changed = true;
        Ok(Some(c.pending.max(ids.len() as u64)))
    }

    /// Writes back the group record and every consumer touched.
    pub fn finish(self, txn: &mut Txn<'_>) {
        let name = &self.group.name;
        for (c, dirty) in self.consumers.values() {
            if *dirty {
                self.groups.put_consumer(txn, name, c);
            }
        }
        if self.group_changed {
            self.groups.put(txn, &self.group);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let g = Group {
            name: Bytes::from_static(b"g"),
            last: (5, u64::MAX),
            entries_read: UNKNOWN_READ,
            pending: 3,
            consumers: 2,
        };
        assert_eq!(Group::decode(b"g", &g.encode()), Ok(g));
        let c = Consumer {
            name: Bytes::from_static(b"c"),
            seen: 7,
            active: -1,
            pending: 1,
        };
        assert_eq!(Consumer::decode(b"c", &c.encode()), Ok(c));
        let p = Pending {
            consumer: Bytes::from_static(b"alice"),
            delivered: 9,
            deliveries: 2,
        };
        assert_eq!(Pending::decode(&p.encode()), Ok(p));
        assert!(Group::decode(b"g", &[0; 39]).is_err());
        assert!(Pending::decode(&[0; 15]).is_err());
    }

    #[test]
    fn group_records_sort_by_name_and_pels_by_id() {
        let g = Groups::of(b"s", 1);
        assert!(g.group_key(b"b") < g.group_key(b"ba"));
        assert!(g.group_key(b"ba") < g.group_key(b"c"));
        assert!(g.pending_key(b"g", (1, 9)) < g.pending_key(b"g", (2, 0)));
        assert_eq!(id_at_end(&g.pending_key(b"g", (3, 4))), Ok((3, 4)));
        // One group's sub-keys never fall under another's prefix.
        assert!(
            !g.pending_key(b"ab", (0, 0))
                .starts_with(&g.scoped(PENDING, b"a"))
        );
    }
}
