//! The startup guard against the hazard in the crate docs: a state machine found behind
//! the purged log (it lost applies the log no longer holds) is restored from the local
//! snapshot; with no snapshot covering the purge point, opening fails with a typed error.

use std::sync::Arc;

use bloomkv::Options;
use openraft::storage::RaftStateMachine;
use openraft::{CommittedLeaderId, EntryPayload, LogId, RaftSnapshotBuilder};

use crate::Error;
use crate::kv::{KvMachine, KvRequest};
use crate::state_machine::StateMachine;
use crate::types::{Entry, Proposal, Request};

fn set(index: u64) -> Entry {
    Entry {
        log_id: LogId::new(CommittedLeaderId::new(1, 1), index),
        payload: EntryPayload::Normal(Proposal {
            requests: vec![Request {
                client: 1,
                id: index,
                acked_below: index,
                time_ms: index,
                body: KvRequest::set(format!("k{index}"), "v").encode(),
            }],
        }),
    }
}

fn open(dir: &std::path::Path, m: Arc<KvMachine>) -> StateMachine {
    StateMachine::open(
        1,
        dir.join("sm"),
        dir.join("snapshots"),
        Options::default(),
        m,
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_machine_behind_the_purged_log_is_restored_from_the_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let mut sm = open(dir.path(), Arc::new(KvMachine::new()));
    sm.apply((1..=50).map(set).collect::<Vec<_>>())
        .await
        .unwrap();
    // What a power cut could leave of the live database if it were not made durable up to
    // the snapshot: its state at index 50.
    let old = dir.path().join("old");
    sm.shared.state_db().checkpoint(&old).unwrap();
    sm.apply((51..=100).map(set).collect::<Vec<_>>())
        .await
        .unwrap();
    let snap = sm.build_snapshot().await.unwrap();
    assert_eq!(snap.meta.last_log_id.unwrap().index, 100);
    let purged = snap.meta.last_log_id;
    drop(snap);
    let live = sm.shared.state_db().path().to_path_buf();
    drop(sm);
    std::fs::remove_dir_all(&live).unwrap();
    std::fs::rename(&old, &live).unwrap();

    let m = Arc::new(KvMachine::new());
    let sm = open(dir.path(), Arc::clone(&m));
    assert_eq!(sm.shared.applied().unwrap().index, 50);
    sm.shared.restore_if_behind(purged).unwrap();
    assert_eq!(sm.shared.applied().unwrap().index, 100);
    assert_eq!(
        m.len(),
        100,
        "the machine was reset onto the restored database"
    );
    assert_eq!(m.resets(), 2);
    let db = sm.shared.state_db();
    assert_eq!(KvMachine::get(&db, b"k77").unwrap(), Some(b"v".to_vec()));
    drop(db);
    drop(sm);
    // The restored generation is the live one after a restart.
    let sm = open(dir.path(), Arc::new(KvMachine::new()));
    assert_eq!(sm.shared.applied().unwrap().index, 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_covering_snapshot_the_node_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let mut sm = open(dir.path(), Arc::new(KvMachine::new()));
    sm.apply((1..=10).map(set).collect::<Vec<_>>())
        .await
        .unwrap();
    let purged = Some(LogId::new(CommittedLeaderId::new(1, 1), 20));
    let e = sm.shared.restore_if_behind(purged).unwrap_err();
    assert!(matches!(e, Error::Storage(_)), "{e}");
    assert!(e.to_string().contains("behind the purged log"), "{e}");
    // Not behind: nothing to do.
    let purged = Some(LogId::new(CommittedLeaderId::new(1, 1), 10));
    sm.shared.restore_if_behind(purged).unwrap();
}
