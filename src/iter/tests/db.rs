//! DbIter against a model of the visible view: random multi-version entries, snapshots and
//! bounds; laziness, read-ahead, errors and the keep-alive guard.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use crate::iter::InternalIterator;
use crate::iter::cursor::Cursor;
use crate::iter::db_iter::DbIter;
use crate::iter::merge::MergingIterator;
use crate::util::key::{self, Kind, SeqNo};
use crate::db::memtable::MemTable;
use crate::test_util::iter::VecIter;
use proptest::prelude::*;

/// A logical write: (user key, seq, kind, value).
type Write = (Vec<u8>, SeqNo, Kind, Vec<u8>);

fn user_key(i: u8) -> Vec<u8> {
    // Index 0 is the empty key; odd lengths interleave ("k1" < "k1a" < "k2").
    match i {
        0 => Vec::new(),
        i if i % 2 == 1 => format!("k{}", i / 2).into_bytes(),
        i => format!("k{}a", i / 2 - 1).into_bytes(),
    }
}

/// Writes with globally unique sequence numbers, each assigned to one of `children` sources.
fn writes_strategy() -> impl Strategy<Value = Vec<(Write, usize)>> {
    proptest::collection::vec((0..12u8, any::<bool>(), 0..4usize, any::<u8>()), 0..60).prop_map(
        |raw| {
            raw.into_iter()
                .enumerate()
                .map(|(i, (k, put, child, v))| {
                    let seq = i as u64 + 1;
                    let (kind, value) = if put {
                        (Kind::Put, vec![v; (v % 5) as usize])
                    } else {
                        (Kind::Delete, Vec::new())
                    };
                    ((user_key(k), seq, kind, value), child)
                })
                .collect()
        },
    )
}

fn bound_strategy() -> impl Strategy<Value = Bound<Vec<u8>>> {
    prop_oneof![
        Just(Bound::Unbounded),
        (0..14u8).prop_map(|k| Bound::Included(user_key(k))),
        (0..14u8).prop_map(|k| Bound::Excluded(user_key(k))),
    ]
}

/// The user's view at `snapshot` within the bounds.
fn model(
    writes: &[Write],
    snapshot: SeqNo,
    start: &Bound<Vec<u8>>,
    end: &Bound<Vec<u8>>,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut newest: BTreeMap<Vec<u8>, (SeqNo, Kind, Vec<u8>)> = BTreeMap::new();
    for (k, seq, kind, v) in writes {
        if *seq > snapshot {
            continue;
        }
        let e = newest
            .entry(k.clone())
            .or_insert((0, Kind::Delete, Vec::new()));
        if *seq >= e.0 {
            *e = (*seq, *kind, v.clone());
        }
    }
    let in_range = |k: &Vec<u8>| {
        let after_start = match start {
            Bound::Included(s) => k >= s,
            Bound::Excluded(s) => k > s,
            Bound::Unbounded => true,
        };
        let before_end = match end {
            Bound::Included(e) => k <= e,
            Bound::Excluded(e) => k < e,
            Bound::Unbounded => true,
        };
        after_start && before_end
    };
    newest
        .into_iter()
        .filter(|(k, (_, kind, _))| *kind == Kind::Put && in_range(k))
        .map(|(k, (_, _, v))| (k, v))
        .collect()
}

fn entry(w: &Write) -> (Vec<u8>, Vec<u8>) {
    (key::encode(&w.0, w.1, w.2), w.3.clone())
}

fn collect_ok(it: DbIter) -> Vec<(Vec<u8>, Vec<u8>)> {
    it.map(|r| r.unwrap()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn merged_sources_match_model(
        writes in writes_strategy(),
        snap_pick in any::<u64>(),
        start in bound_strategy(),
        end in bound_strategy(),
    ) {
        let snapshot = snap_pick % (writes.len() as u64 + 2);
        let mut children: Vec<Vec<(Vec<u8>, Vec<u8>)>> = vec![Vec::new(); 4];
        for (w, c) in &writes {
            children[*c].push(entry(w));
        }
        let inner = MergingIterator::new(children.into_iter().map(VecIter::boxed).collect());
        let plain: Vec<Write> = writes.iter().map(|(w, _)| w.clone()).collect();
        let want = model(&plain, snapshot, &start, &end);
        let got = collect_ok(DbIter::new(Box::new(inner), snapshot, start, end));
        prop_assert_eq!(got, want);
    }

    #[test]
    fn reads_at_most_one_entry_past_the_end(
        writes in writes_strategy(),
        snap_pick in any::<u64>(),
        start in bound_strategy(),
        end in bound_strategy(),
    ) {
        let snapshot = snap_pick % (writes.len() as u64 + 2);
        let plain: Vec<Write> = writes.iter().map(|(w, _)| w.clone()).collect();
        let inner = VecIter::new(plain.iter().map(entry).collect());
        let furthest = inner.furthest.clone();
        // Sorted like the iterator. The scan seeks to the start bound, then may read up to
        // the first entry past the end bound at or after that position, and no further.
        let mut sorted: Vec<Vec<u8>> = plain.iter().map(|w| entry(w).0).collect();
        sorted.sort_by(|a, b| key::compare(a, b));
        let seek_at = match &start {
            Bound::Included(s) => Some(key::encode(s, snapshot, key::KIND_SEEK)),
            Bound::Excluded(s) => Some(key::encode(s, 0, Kind::Delete)),
            Bound::Unbounded => None,
        }
        .map_or(0, |t| sorted.partition_point(|k| key::compare(k, &t).is_lt()));
        let first_past = (seek_at..sorted.len()).find(|&i| {
            let uk = key::user_key(&sorted[i]);
            match &end {
                Bound::Included(e) => uk > e.as_slice(),
                Bound::Excluded(e) => uk >= e.as_slice(),
                Bound::Unbounded => false,
            }
        });
        let want = model(&plain, snapshot, &start, &end);
        let mut it = DbIter::new(Box::new(inner), snapshot, start, end);
        prop_assert_eq!(furthest.load(Ordering::Relaxed), 0, "positioned before the first next");
        let got: Vec<_> = it.by_ref().map(|r| r.unwrap()).collect();
        prop_assert_eq!(got, want);
        prop_assert!(it.next().is_none());
        if let Some(p) = first_past {
            prop_assert!(furthest.load(Ordering::Relaxed) <= p + 1, "read past the first out-of-range entry");
        }
    }
}

/// A cursor step: 0 first, 1 last, 2 seek, 3 seek_for_prev, 4 next, 5 prev.
fn cursor_steps() -> impl Strategy<Value = Vec<(u8, u8)>> {
    proptest::collection::vec((0..6u8, 0..14u8), 0..40)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// The same merged sources walked backward, and in a random mix of directions and seeks
    /// through a cursor (so the merging iterator turns around over and over).
    #[test]
    fn reverse_and_mixed_walks_match_model(
        writes in writes_strategy(),
        snap_pick in any::<u64>(),
        start in bound_strategy(),
        end in bound_strategy(),
        steps in cursor_steps(),
        ends in proptest::collection::vec(any::<bool>(), 0..30),
    ) {
        let snapshot = snap_pick % (writes.len() as u64 + 2);
        let merged = || {
            let mut children: Vec<Vec<(Vec<u8>, Vec<u8>)>> = vec![Vec::new(); 4];
            for (w, c) in &writes {
                children[*c].push(entry(w));
            }
            Box::new(MergingIterator::new(children.into_iter().map(VecIter::boxed).collect()))
        };
        let plain: Vec<Write> = writes.iter().map(|(w, _)| w.clone()).collect();
        let want = model(&plain, snapshot, &start, &end);

        let mut back = want.clone();
        back.reverse();
        let got: Vec<_> = DbIter::new(merged(), snapshot, start.clone(), end.clone())
            .rev()
            .map(|r| r.unwrap())
            .collect();
        prop_assert_eq!(got, back);

        // next / next_back mixed: the two ends meet without repeating a key.
        let mut it = DbIter::new(merged(), snapshot, start.clone(), end.clone());
        let (mut front, mut tail) = (Vec::new(), Vec::new());
        for from_front in ends.into_iter().chain(std::iter::repeat_n(true, want.len() + 1)) {
            match if from_front { it.next() } else { it.next_back() } {
                Some(kv) if from_front => front.push(kv.unwrap()),
                Some(kv) => tail.push(kv.unwrap()),
                None => break,
            }
        }
        tail.reverse();
        front.extend(tail);
        prop_assert_eq!(front, want.clone());

        let mut c = Cursor::new(merged(), snapshot, start, end);
        let mut pos: Option<usize> = None;
        for (op, k) in steps {
            let k = user_key(k);
            match op {
                0 => { c.seek_to_first().unwrap(); pos = (!want.is_empty()).then_some(0); }
                1 => { c.seek_to_last().unwrap(); pos = want.len().checked_sub(1); }
                2 => {
                    c.seek(&k).unwrap();
                    let i = want.partition_point(|(x, _)| *x < k);
                    pos = (i < want.len()).then_some(i);
                }
                3 => {
                    c.seek_for_prev(&k).unwrap();
                    pos = want.partition_point(|(x, _)| *x <= k).checked_sub(1);
                }
                4 => { c.next().unwrap(); pos = pos.and_then(|i| (i + 1 < want.len()).then_some(i + 1)); }
                _ => { c.prev().unwrap(); pos = pos.and_then(|i| i.checked_sub(1)); }
            }
            match pos {
                Some(i) => {
                    prop_assert!(c.valid(), "op {} expected {:?}", op, want[i].0);
                    prop_assert_eq!(c.key(), want[i].0.as_slice());
                    prop_assert_eq!(c.value(), want[i].1.as_slice());
                }
                None => prop_assert!(!c.valid(), "op {} expected invalid, at {:?}", op, c.key()),
            }
        }
    }
}

#[test]
fn hides_newer_versions_tombstones_and_older_versions() {
    let writes: Vec<Write> = vec![
        (b"a".to_vec(), 1, Kind::Put, b"a1".to_vec()),
        (b"a".to_vec(), 4, Kind::Put, b"a4".to_vec()),
        (b"b".to_vec(), 2, Kind::Put, b"b2".to_vec()),
        (b"b".to_vec(), 3, Kind::Delete, vec![]),
        (b"c".to_vec(), 5, Kind::Put, b"c5".to_vec()),
    ];
    let run = |snap: SeqNo| {
        let inner = VecIter::boxed(writes.iter().map(entry).collect());
        collect_ok(DbIter::new(inner, snap, Bound::Unbounded, Bound::Unbounded))
    };
    let kv = |k: &str, v: &str| (k.as_bytes().to_vec(), v.as_bytes().to_vec());
    assert_eq!(run(0), vec![]);
    assert_eq!(run(2), vec![kv("a", "a1"), kv("b", "b2")]);
    assert_eq!(run(3), vec![kv("a", "a1")]);
    assert_eq!(run(4), vec![kv("a", "a4")]);
    assert_eq!(run(u64::MAX), vec![kv("a", "a4"), kv("c", "c5")]);
}

#[test]
fn over_a_memtable() {
    let mem = Arc::new(MemTable::new());
    mem.add(1, Kind::Put, b"", b"empty");
    mem.add(2, Kind::Put, b"x", b"1");
    mem.add(3, Kind::Put, b"y", b"2");
    mem.add(4, Kind::Delete, b"x", b"");
    let it = DbIter::new(
        Box::new(mem.iter()),
        10,
        Bound::Included(Vec::new()),
        Bound::Included(b"y".to_vec()),
    );
    assert_eq!(
        collect_ok(it),
        vec![
            (b"".to_vec(), b"empty".to_vec()),
            (b"y".to_vec(), b"2".to_vec())
        ]
    );
    // Adds after creation, before the first next, above the snapshot, stay hidden.
    let it = DbIter::new(Box::new(mem.iter()), 4, Bound::Unbounded, Bound::Unbounded);
    mem.add(5, Kind::Put, b"z", b"late");
    assert_eq!(collect_ok(it).len(), 2);
}

#[test]
fn an_error_is_yielded_once_then_it_ends() {
    let writes: Vec<(Vec<u8>, Vec<u8>)> = (0..5u8)
        .map(|i| (key::encode(&[i], 1, Kind::Put), vec![i]))
        .collect();
    let mut inner = VecIter::new(writes);
    inner.fail_after = Some(3); // seek + 2 nexts succeed
    let mut it = DbIter::new(Box::new(inner), 9, Bound::Unbounded, Bound::Unbounded);
    assert_eq!(it.next().unwrap().unwrap().0, vec![0]);
    assert_eq!(it.next().unwrap().unwrap().0, vec![1]);
    assert_eq!(it.next().unwrap().unwrap().0, vec![2]);
    assert!(it.next().unwrap().unwrap_err().is_corruption());
    assert!(it.next().is_none());
    assert!(it.next().is_none());

    // A failing seek surfaces on the first next.
    let mut inner = VecIter::new(Vec::new());
    inner.fail_after = Some(0);
    let mut it = DbIter::new(Box::new(inner), 9, Bound::Unbounded, Bound::Unbounded);
    assert!(it.next().unwrap().is_err());
    assert!(it.next().is_none());
}

#[test]
fn a_malformed_internal_key_is_an_error_not_a_panic() {
    let inner = VecIter::boxed(vec![(b"short".to_vec(), Vec::new())]);
    let mut it = DbIter::new(inner, 9, Bound::Unbounded, Bound::Unbounded);
    assert!(it.next().unwrap().unwrap_err().is_corruption());
    assert!(it.next().is_none());
}

struct Logged(&'static str, Arc<Mutex<Vec<&'static str>>>);

impl Drop for Logged {
    fn drop(&mut self) {
        self.1.lock().unwrap().push(self.0);
    }
}

struct LoggedIter(
    VecIter,
    #[expect(dead_code, reason = "held only for its Drop, which logs the drop order")] Logged,
);

impl InternalIterator for LoggedIter {
    fn seek_to_first(&mut self) -> crate::Result<()> {
        self.0.seek_to_first()
    }
    fn seek(&mut self, t: &[u8]) -> crate::Result<()> {
        self.0.seek(t)
    }
    fn next(&mut self) -> crate::Result<()> {
        self.0.next()
    }
    fn valid(&self) -> bool {
        self.0.valid()
    }
    fn key(&self) -> &[u8] {
        self.0.key()
    }
    fn value(&self) -> &[u8] {
        self.0.value()
    }
}

#[test]
fn keep_alive_guard_drops_after_the_inner_iterator() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let inner = LoggedIter(VecIter::new(Vec::new()), Logged("inner", log.clone()));
    let it = DbIter::new(Box::new(inner), 1, Bound::Unbounded, Bound::Unbounded)
        .with_keep_alive(Box::new(Logged("guard", log.clone())));
    assert!(log.lock().unwrap().is_empty());
    drop(it);
    assert_eq!(*log.lock().unwrap(), vec!["inner", "guard"]);
}

#[test]
fn db_iter_is_send() {
    fn assert_send<T: Send>() {}
    assert_send::<DbIter>();
}

#[test]
fn a_cursor_error_is_returned_kept_in_status_and_cleared_by_a_good_seek() {
    let writes: Vec<(Vec<u8>, Vec<u8>)> = (0..5u8)
        .map(|i| (key::encode(&[i], 1, Kind::Put), vec![i]))
        .collect();
    let mut inner = VecIter::new(writes.clone());
    inner.fail_after = Some(2); // seek + 1 move succeed
    let mut c = Cursor::new(Box::new(inner), 9, Bound::Unbounded, Bound::Unbounded);
    assert!(c.status().is_ok() && !c.valid());
    c.seek_to_last().unwrap();
    assert_eq!(c.key(), [4]);
    assert!(c.prev().unwrap_err().is_corruption());
    assert!(!c.valid());
    assert_eq!(c.key(), b"");
    assert!(c.status().unwrap_err().is_corruption());
    // Moving an invalid cursor is a no-op that keeps the error.
    c.next().unwrap();
    assert!(c.status().is_err());

    let mut c = Cursor::new(
        VecIter::boxed(writes),
        9,
        Bound::Unbounded,
        Bound::Unbounded,
    );
    c.seek([2u8]).unwrap();
    assert_eq!((c.key(), c.value()), (&[2u8][..], &[2u8][..]));
    c.status().unwrap();
}
