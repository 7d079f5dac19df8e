//! A consumer group's `entries-read` and `lag` (XINFO GROUPS), worked out as Redis 7.0-7.2
//! does: from the stream's count of entries ever added, when no deleted entry (a
//! tombstone) lies where the count would have to cross it; otherwise unknown (nil).
//! Trimming leaves no tombstones, only XDEL does.

use super::groups::{Group, UNKNOWN_READ};
use super::store::Id;
use crate::store::meta::StreamMeta;

/// True when a deleted entry may lie at or after `from` among the stream's entries.
pub fn tombstones_from(m: &StreamMeta, from: Id) -> bool {
    if m.len == 0 || m.max_deleted == (0, 0) || m.first > m.max_deleted {
        return false;
    }
    from <= m.max_deleted
}

/// How many entries had been added up to and including `id` (its position counted from
/// the first entry ever added), or [`UNKNOWN_READ`] when deletions or a position between
/// the first and last entry make that unknowable.
pub fn entries_read_at(m: &StreamMeta, id: Id) -> i64 {
    let added = m.added as i64;
    if m.added == 0 {
        return 0;
    }
    if m.len == 0 && id <= m.last {
        return added;
    }
    if id == m.last {
        return added;
    }
    if id > m.last {
        return UNKNOWN_READ;
    }
    if m.max_deleted == (0, 0) || m.max_deleted < m.first {
        if id < m.first {
            return added - m.len as i64;
        }
        if id == m.first {
            return added - m.len as i64 + 1;
        }
    }
    UNKNOWN_READ
}

/// The group's lag: entries added to the stream it has not read yet, or `None` when
/// unknown.
pub fn lag(m: &StreamMeta, g: &Group) -> Option<i64> {
    if m.added == 0 {
        return Some(0);
    }
    if g.entries_read != UNKNOWN_READ && !tombstones_from(m, g.last) {
        return Some(m.added as i64 - g.entries_read);
    }
    match entries_read_at(m, g.last) {
        UNKNOWN_READ => None,
        read => Some(m.added as i64 - read),
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    fn stream(len: u64, first: Id, last: Id, max_deleted: Id, added: u64) -> StreamMeta {
        StreamMeta {
            version: 1,
            len,
            last,
            first,
            max_deleted,
            added,
        }
    }

    fn group(last: Id, entries_read: i64) -> Group {
        Group {
            name: Bytes::from_static(b"g"),
            last,
            entries_read,
            pending: 0,
            consumers: 0,
        }
    }

    #[test]
    fn counts_hold_until_a_deletion_lies_ahead() {
        // Ten entries 1-1..10-1, none deleted.
        let m = stream(10, (1, 1), (10, 1), (0, 0), 10);
        assert_eq!(entries_read_at(&m, (0, 0)), 0);
        assert_eq!(entries_read_at(&m, (1, 1)), 1);
        assert_eq!(entries_read_at(&m, (10, 1)), 10);
        assert_eq!(entries_read_at(&m, (5, 1)), UNKNOWN_READ);
        assert_eq!(entries_read_at(&m, (11, 0)), UNKNOWN_READ);
        assert_eq!(lag(&m, &group((3, 1), 3)), Some(7));
        assert_eq!(lag(&m, &group((0, 0), UNKNOWN_READ)), Some(10));
        // 6-1 deleted: a group before it has no known lag, one past it has.
        let m = stream(9, (1, 1), (10, 1), (6, 1), 10);
        assert!(tombstones_from(&m, (3, 1)));
        assert!(!tombstones_from(&m, (7, 1)));
        assert_eq!(lag(&m, &group((3, 1), 3)), None);
        assert_eq!(lag(&m, &group((0, 0), UNKNOWN_READ)), None);
        assert_eq!(lag(&m, &group((10, 1), 10)), Some(0));
        // Every entry deleted: the stream has no tombstones left to cross.
        let m = stream(0, (0, 0), (11, 1), (11, 1), 11);
        assert_eq!(lag(&m, &group((10, 1), 10)), Some(1));
        assert_eq!(entries_read_at(&m, (3, 0)), 11);
    }

    #[test]
    fn trimmed_entries_are_not_tombstones() {
        // 1-1..10-1 added, trimmed to 8-1..10-1: a group at 6-1 still knows its count.
        let m = stream(3, (8, 1), (10, 1), (0, 0), 10);
        assert_eq!(lag(&m, &group((6, 1), 6)), Some(4));
        assert_eq!(entries_read_at(&m, (6, 1)), 7);
        assert_eq!(entries_read_at(&m, (8, 1)), 8);
    }
}
