//! Redis Cluster's hash slots: a key belongs to slot `CRC16(key) mod 16384`, where only the
//! part between the first `{` and the next `}` is hashed when that part is not empty (a
//! hash tag, so that related keys share a slot).
//!
//! A [`SlotMap`] says which group (a Raft group in cluster mode, docs/CLUSTER.md
//! "Sharding") owns each slot.

use std::ops::RangeInclusive;

/// How many hash slots a Redis Cluster has.
pub const SLOTS: u16 = 16384;

/// The hash slot of `key`.
pub fn key_slot(key: &[u8]) -> u16 {
    crc16(hash_tag(key)) % SLOTS
}

/// The part of `key` that is hashed: its hash tag when it has a non-empty one.
fn hash_tag(key: &[u8]) -> &[u8] {
    let Some(open) = key.iter().position(|&b| b == b'{') else {
        return key;
    };
    match key[open + 1..].iter().position(|&b| b == b'}') {
        Some(len) if len > 0 => &key[open + 1..open + 1 + len],
        _ => key,
    }
}

/// CRC-16/XMODEM (polynomial 0x1021, initial value 0), the checksum Redis Cluster uses.
fn crc16(data: &[u8]) -> u16 {
    let mut crc = 0u16;
    for &b in data {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// Which group owns each hash slot: contiguous ranges covering `0..SLOTS` exactly once,
/// each owned by one group, with a version that only grows as ownership changes.
///
/// # Examples
/// ```
/// use bloomkv_server::keyslot::{SlotMap, key_slot};
///
/// let map = SlotMap::even(3);
/// assert_eq!(map.ranges()[1], (5461..=10921, 1));
/// assert_eq!(map.group_of(key_slot(b"foo")), 2); // slot 12182
/// assert_eq!(map.group_of_key(b"{foo}.bar"), 2);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotMap {
    version: u64,
    /// `(first slot, group)` for each range, by first slot; a range ends where the next
    /// begins (the last at `SLOTS - 1`). Never empty; the first starts at slot 0.
    starts: Vec<(u16, u32)>,
    groups: u32,
}

/// Why a slot map was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotMapError(pub String);

impl std::fmt::Display for SlotMapError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SlotMapError {}

impl SlotMap {
    /// The static map of `groups` groups (at least 1; 0 is taken as 1), version 1: group
    /// `g` owns slots `[g * SLOTS / groups, (g + 1) * SLOTS / groups)`. With one group,
    /// group 0 owns every slot.
    pub fn even(groups: u32) -> SlotMap {
        let groups = groups.clamp(1, u32::from(SLOTS));
        let starts = (0..groups)
            .map(|g| {
                let first = u64::from(g) * u64::from(SLOTS) / u64::from(groups);
                (u16::try_from(first).unwrap_or(SLOTS - 1), g)
            })
            .collect();
        SlotMap {
            version: 1,
            starts,
            groups,
        }
    }

    /// A map from explicit ranges `(slots, group)` at `version`.
    ///
    /// # Errors
    /// When the ranges do not cover `0..SLOTS` exactly once (a gap, an overlap, a slot past
    /// the last, an empty range), or the version is 0.
    pub fn from_ranges(
        version: u64,
        ranges: &[(RangeInclusive<u16>, u32)],
    ) -> Result<SlotMap, SlotMapError> {
        if version == 0 {
            return Err(SlotMapError("a slot map's version starts at 1".into()));
        }
        let mut sorted: Vec<_> = ranges.to_vec();
        sorted.sort_by_key(|(r, _)| *r.start());
        let mut next = 0u32;
        let mut starts = Vec::with_capacity(sorted.len());
        for (r, g) in &sorted {
            if r.is_empty() {
                return Err(SlotMapError(format!("empty slot range {r:?}")));
            }
            if u32::from(*r.start()) != next {
                return Err(SlotMapError(format!(
                    "slot {next} is {} (range {r:?} starts there)",
                    if u32::from(*r.start()) > next {
                        "not covered"
                    } else {
                        "covered twice"
                    }
                )));
            }
            if *r.end() >= SLOTS {
                return Err(SlotMapError(format!(
                    "slot range {r:?} goes past slot {}",
                    SLOTS - 1
                )));
            }
            // Two adjacent ranges of one group are one range.
            if starts.last().is_none_or(|&(_, last)| last != *g) {
                starts.push((*r.start(), *g));
            }
            next = u32::from(*r.end()) + 1;
        }
        if next != u32::from(SLOTS) {
            return Err(SlotMapError(format!("slot {next} is not covered")));
        }
        let groups = starts
            .iter()
            .map(|&(_, g)| g.saturating_add(1))
            .max()
            .unwrap_or(1);
        Ok(SlotMap {
            version,
            starts,
            groups,
        })
    }

    /// The version: a map with a higher one supersedes this one.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// One more than the highest group id owning a range.
    pub fn groups(&self) -> u32 {
        self.groups
    }

    /// The group owning `slot` (slots past the last count as the last).
    pub fn group_of(&self, slot: u16) -> u32 {
        let i = self.starts.partition_point(|&(first, _)| first <= slot);
        self.starts[i.saturating_sub(1)].1
    }

    /// The group owning `key`'s slot.
    pub fn group_of_key(&self, key: &[u8]) -> u32 {
        self.group_of(key_slot(key))
    }

    /// Every range with its group, by first slot.
    pub fn ranges(&self) -> Vec<(RangeInclusive<u16>, u32)> {
        self.starts
            .iter()
            .enumerate()
            .map(|(i, &(first, g))| {
                let last = self
                    .starts
                    .get(i + 1)
                    .map_or(SLOTS - 1, |&(next, _)| next - 1);
                (first..=last, g)
            })
            .collect()
    }

    /// The ranges group `group` owns.
    pub fn ranges_of(&self, group: u32) -> Vec<RangeInclusive<u16>> {
        self.ranges()
            .into_iter()
            .filter(|(_, g)| *g == group)
            .map(|(r, _)| r)
            .collect()
    }

    /// Takes `other` if it is newer; says whether it did.
    pub fn update(&mut self, other: SlotMap) -> bool {
        if other.version > self.version {
            *self = other;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_redis_clusters() {
        // The check value of CRC-16/XMODEM.
        assert_eq!(crc16(b"123456789"), 0x31C3);
        // What redis-server 7.0.15 answers to CLUSTER KEYSLOT.
        for (key, slot) in [
            (&b"foo"[..], 12182),
            (b"{user1000}.following", 3443),
            (b"{user1000}.followers", 3443),
            (b"a{}b", 13694),
            (b"", 0),
        ] {
            assert_eq!(key_slot(key), slot, "{}", String::from_utf8_lossy(key));
        }
        // Only the first tag counts, and `{}` is no tag.
        assert_eq!(key_slot(b"x{foo}{bar}"), key_slot(b"foo"));
        assert_eq!(key_slot(b"{}{foo}"), crc16(b"{}{foo}") % SLOTS);
        assert_eq!(key_slot(b"{foo"), crc16(b"{foo") % SLOTS);
    }

    #[test]
    fn even_maps_split_the_slots_in_order() {
        let one = SlotMap::even(1);
        assert_eq!(one.ranges(), vec![(0..=16383, 0)]);
        assert_eq!(one.group_of(0), 0);
        assert_eq!(one.group_of(16383), 0);
        assert_eq!(SlotMap::even(0), one);
        let three = SlotMap::even(3);
        assert_eq!(three.version(), 1);
        assert_eq!(three.groups(), 3);
        assert_eq!(
            three.ranges(),
            vec![(0..=5460, 0), (5461..=10921, 1), (10922..=16383, 2)]
        );
        for (slot, g) in [
            (0, 0),
            (5460, 0),
            (5461, 1),
            (10921, 1),
            (10922, 2),
            (16383, 2),
        ] {
            assert_eq!(three.group_of(slot), g, "slot {slot}");
        }
        // Every slot has a group and the ranges cover each slot once.
        for n in [1, 2, 3, 5, 7, 16, 1000, 16384] {
            let m = SlotMap::even(n);
            let total: usize = m.ranges().iter().map(|(r, _)| r.len()).sum();
            assert_eq!(total, usize::from(SLOTS), "{n} groups");
            assert_eq!(m.ranges().len(), n as usize);
            for (r, g) in m.ranges() {
                assert_eq!(m.group_of(*r.start()), g);
                assert_eq!(m.group_of(*r.end()), g);
            }
        }
        // Keys follow their hash tags to one group.
        assert_eq!(three.group_of_key(b"foo"), 2);
        assert_eq!(
            three.group_of_key(b"{user1000}.following"),
            three.group_of_key(b"{user1000}.followers")
        );
        assert_eq!(three.group_of_key(b"{user1000}.following"), 0); // slot 3443
    }

    #[test]
    fn explicit_maps_must_cover_every_slot_once_and_only_grow() {
        let m = SlotMap::from_ranges(4, &[(100..=16383, 1), (0..=99, 0)]).unwrap();
        assert_eq!(m.ranges(), vec![(0..=99, 0), (100..=16383, 1)]);
        assert_eq!(m.ranges_of(1), vec![100..=16383]);
        // Adjacent ranges of one group merge; a group may own several ranges.
        let m2 = SlotMap::from_ranges(
            5,
            &[(0..=9, 0), (10..=19, 0), (20..=29, 1), (30..=16383, 0)],
        )
        .unwrap();
        assert_eq!(m2.ranges_of(0), vec![0..=19, 30..=16383]);
        assert_eq!(m2.group_of(25), 1);
        for bad in [
            vec![(0..=99, 0)],
            vec![(1..=16383, 0)],
            vec![(0..=100, 0), (100..=16383, 1)],
            vec![(0..=16384, 0)],
        ] {
            assert!(SlotMap::from_ranges(2, &bad).is_err(), "{bad:?}");
        }
        assert!(SlotMap::from_ranges(0, &[(0..=16383, 0)]).is_err());
        // Only a newer version replaces a map.
        let mut held = m.clone();
        assert!(!held.update(SlotMap::even(2)));
        assert_eq!(held, m);
        assert!(held.update(m2.clone()));
        assert_eq!(held, m2);
    }
}
