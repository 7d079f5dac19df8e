//! A log written in layout 1 (one request per entry) opens in layout 2 (a proposal of
//! requests per entry): its entries are rewritten, their meaning kept. The bytes below
//! were encoded by the layout-1 build (main at ff1b33b), not by this code.

use std::collections::BTreeSet;

use bloomkv::{Db, Options};
use openraft::storage::RaftLogStorage;
use openraft::{EntryPayload, RaftLogReader};

use crate::codec;
use crate::keys::{LOG_FORMAT_VERSION, log as k};
use crate::log_store::LogStore;
use crate::types::{Proposal, Request};

/// Index 1: blank; 2: membership {1, 2}; 3: a request of client 77. Term 3, leader 2.
const V1_ENTRIES: [&str; 3] = [
    "03000000000000000200000000000000010000000000000000000000",
    "030000000000000002000000000000000200000000000000020000000100000000000000020000000000000001000000000000000200000000000000020000000000000001000000000000000e000000000000003132372e302e302e313a3730303102000000000000000e000000000000003132372e302e302e313a37303032",
    "030000000000000002000000000000000300000000000000010000004d00000000000000050000000000000004000000000000007b68e5cf8b0100000700000000000000534554206b2076",
];

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn write_v1_log(dir: &std::path::Path, entries: &[Vec<u8>]) {
    let db = Db::open(dir, Options::default()).unwrap();
    db.put(k::FORMAT, codec::encode(&1u32).unwrap()).unwrap();
    for (i, e) in entries.iter().enumerate() {
        db.put(k::entry(i as u64 + 1), e).unwrap();
    }
    db.sync_wal().unwrap();
}

#[tokio::test]
async fn a_format_1_log_is_rewritten_and_reads_the_same() {
    let dir = tempfile::tempdir().unwrap();
    write_v1_log(dir.path(), &V1_ENTRIES.map(unhex));

    let mut log = LogStore::open(dir.path(), Options::default()).unwrap();
    let entries = log.try_get_log_entries(1..4).await.unwrap();
    assert_eq!(entries.len(), 3);
    for (i, e) in entries.iter().enumerate() {
        assert_eq!(e.log_id.index, i as u64 + 1);
        assert_eq!(e.log_id.leader_id.term, 3);
    }
    assert!(matches!(entries[0].payload, EntryPayload::Blank));
    match &entries[1].payload {
        EntryPayload::Membership(m) => {
            assert_eq!(
                m.voter_ids().collect::<BTreeSet<_>>(),
                BTreeSet::from([1, 2])
            );
            assert_eq!(m.get_node(&2).unwrap().addr, "127.0.0.1:7002");
        }
        other => panic!("{other:?}"),
    }
    match &entries[2].payload {
        EntryPayload::Normal(p) => assert_eq!(
            *p,
            Proposal {
                requests: vec![Request {
                    client: 77,
                    id: 5,
                    acked_below: 4,
                    time_ms: 1_700_000_000_123,
                    body: b"SET k v".to_vec(),
                }]
            }
        ),
        other => panic!("{other:?}"),
    }
    let state = log.get_log_state().await.unwrap();
    assert_eq!(state.last_log_id.map(|l| l.index), Some(3));
    let format: u32 = codec::decode(&log.db().get(k::FORMAT).unwrap().unwrap()).unwrap();
    assert_eq!(format, LOG_FORMAT_VERSION);
    drop(log);

    // Opened again, it is read as it is (nothing left to upgrade).
    let mut log = LogStore::open(dir.path(), Options::default()).unwrap();
    assert_eq!(log.try_get_log_entries(1..4).await.unwrap(), entries);
}

#[test]
fn a_damaged_format_1_entry_is_named_and_nothing_is_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let mut entries = V1_ENTRIES.map(unhex).to_vec();
    entries[2].truncate(30);
    write_v1_log(dir.path(), &entries);
    let err = LogStore::open(dir.path(), Options::default())
        .err()
        .expect("a damaged entry fails the open")
        .to_string();
    assert!(
        err.contains("entry Some(3)") && err.contains("format-1"),
        "{err}"
    );
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let format: u32 = codec::decode(&db.get(k::FORMAT).unwrap().unwrap()).unwrap();
    assert_eq!(format, 1, "the log is left as it was");
}

#[test]
fn a_format_from_a_newer_build_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    db.put(k::FORMAT, codec::encode(&9u32).unwrap()).unwrap();
    db.sync_wal().unwrap();
    drop(db);
    let err = LogStore::open(dir.path(), Options::default())
        .err()
        .expect("refused")
        .to_string();
    assert!(err.contains("format version 9"), "{err}");
}
