//! Exactly-once application through the state machine: a retried request (same client and
//! id), in the same apply call or a later one, after a restart too, is answered from the
//! dedup table and not applied again; a request below its client's mark is stale. An entry
//! carrying several requests answers each in its place.

use std::sync::Arc;

use bloomkv::Options;
use openraft::storage::RaftStateMachine;
use openraft::{CommittedLeaderId, EntryPayload, LogId};

use crate::kv::{KvMachine, KvRequest, KvResponse};
use crate::state_machine::StateMachine;
use crate::types::{Applied, Entry, Proposal, Reply, Request};

fn request(index: u64, client: u64, id: u64, acked_below: u64, req: &KvRequest) -> Request {
    Request {
        client,
        id,
        acked_below,
        time_ms: 1000 + index,
        body: req.encode(),
    }
}

fn entry_of(index: u64, requests: Vec<Request>) -> Entry {
    Entry {
        log_id: LogId::new(CommittedLeaderId::new(1, 1), index),
        payload: EntryPayload::Normal(Proposal { requests }),
    }
}

fn entry(index: u64, client: u64, id: u64, acked_below: u64, req: &KvRequest) -> Entry {
    entry_of(index, vec![request(index, client, id, acked_below, req)])
}

fn reply_int(r: &Reply) -> i64 {
    match r {
        Reply::Response(b) => match KvResponse::decode(b).unwrap() {
            KvResponse::Int(n) => n,
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

/// The replies of an entry of client requests.
fn replies(a: &Applied) -> &[Reply] {
    match a {
        Applied::Requests(r) => r,
        Applied::Internal => panic!("an internal entry"),
    }
}

/// The one reply of an entry of one request.
fn int(a: &Applied) -> i64 {
    match replies(a) {
        [r] => reply_int(r),
        other => panic!("{} replies", other.len()),
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
async fn a_retried_request_is_applied_once() {
    let dir = tempfile::tempdir().unwrap();
    let m = Arc::new(KvMachine::new());
    let mut sm = open(dir.path(), Arc::clone(&m));
    let incr = KvRequest::incr("n", 1);

    // The same request twice in one apply call, then once more in a later call.
    let r = sm
        .apply(vec![entry(1, 7, 1, 1, &incr), entry(2, 7, 1, 1, &incr)])
        .await
        .unwrap();
    assert_eq!((int(&r[0]), int(&r[1])), (1, 1));
    let r = sm.apply(vec![entry(3, 7, 1, 1, &incr)]).await.unwrap();
    assert_eq!(int(&r[0]), 1, "answered from the table");
    assert_eq!(m.applied_commands(), 1);

    // Another request of the same client is applied; another client's same id too.
    let r = sm
        .apply(vec![entry(4, 7, 2, 1, &incr), entry(5, 8, 1, 1, &incr)])
        .await
        .unwrap();
    assert_eq!((int(&r[0]), int(&r[1])), (2, 3));
    assert_eq!(m.applied_commands(), 3);

    // The table survives a restart (applied with the data, in one batch).
    let db = sm.shared.state_db();
    db.sync_wal().unwrap();
    drop(db);
    drop(sm);
    let m2 = Arc::new(KvMachine::new());
    let mut sm = open(dir.path(), Arc::clone(&m2));
    let r = sm.apply(vec![entry(6, 7, 2, 1, &incr)]).await.unwrap();
    assert_eq!(int(&r[0]), 2);
    assert_eq!(m2.applied_commands(), 0);

    // Client 7 declares everything below 3 answered: id 1 is now stale, its answer gone.
    let r = sm.apply(vec![entry(7, 7, 3, 3, &incr)]).await.unwrap();
    assert_eq!(int(&r[0]), 4);
    let r = sm.apply(vec![entry(8, 7, 1, 1, &incr)]).await.unwrap();
    assert_eq!(replies(&r[0]), [Reply::Stale]);
    let db = sm.shared.state_db();
    assert_eq!(db.get(crate::keys::sm::answer(7, 1)).unwrap(), None);
    assert_eq!(db.get(crate::keys::sm::answer(7, 2)).unwrap(), None);
    assert!(db.get(crate::keys::sm::answer(7, 3)).unwrap().is_some());
    assert_eq!(KvMachine::get(&db, b"n").unwrap(), Some(b"4".to_vec()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_mark_jump_uses_a_range_delete_and_keeps_newer_answers() {
    let dir = tempfile::tempdir().unwrap();
    let m = Arc::new(KvMachine::new());
    let mut sm = open(dir.path(), Arc::clone(&m));
    let entries: Vec<Entry> = (1..=200)
        .map(|i| entry(i, 9, i, 1, &KvRequest::incr("c", 1)))
        .collect();
    sm.apply(entries).await.unwrap();
    // One request whose mark drops the first 150 answers (more than the point-delete limit).
    let r = sm
        .apply(vec![entry(201, 9, 201, 151, &KvRequest::incr("c", 1))])
        .await
        .unwrap();
    assert_eq!(int(&r[0]), 201);
    let db = sm.shared.state_db();
    for id in [1, 100, 150] {
        assert_eq!(
            db.get(crate::keys::sm::answer(9, id)).unwrap(),
            None,
            "{id}"
        );
    }
    for id in [151, 200, 201] {
        assert!(
            db.get(crate::keys::sm::answer(9, id)).unwrap().is_some(),
            "{id}"
        );
    }
    // A request never raises its own client's mark past itself.
    let r = sm
        .apply(vec![entry(202, 9, 202, u64::MAX, &KvRequest::incr("c", 1))])
        .await
        .unwrap();
    assert_eq!(int(&r[0]), 202);
    let r = sm
        .apply(vec![entry(203, 9, 202, 0, &KvRequest::incr("c", 1))])
        .await
        .unwrap();
    assert_eq!(int(&r[0]), 202, "202's answer was kept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entry_of_several_requests_answers_each_in_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let m = Arc::new(KvMachine::new());
    let mut sm = open(dir.path(), Arc::clone(&m));
    let incr = KvRequest::incr("n", 1);
    sm.apply(vec![entry(1, 5, 1, 1, &incr)]).await.unwrap();
    sm.apply(vec![entry(2, 9, 5, 5, &incr)]).await.unwrap();

    // Three clients' requests in one entry: a new one, a retry of an applied one, a new one
    // that reads what the first wrote, the first again (within the entry), a stale one.
    let r = sm
        .apply(vec![entry_of(
            3,
            vec![
                request(3, 7, 1, 1, &incr),
                request(3, 5, 1, 1, &incr),
                request(3, 8, 1, 1, &incr),
                request(3, 7, 1, 1, &incr),
                request(3, 9, 2, 1, &incr),
            ],
        )])
        .await
        .unwrap();
    let r = replies(&r[0]);
    assert_eq!(r.len(), 5);
    assert_eq!(reply_int(&r[0]), 3);
    assert_eq!(reply_int(&r[1]), 1, "answered from the table");
    assert_eq!(reply_int(&r[2]), 4);
    assert_eq!(reply_int(&r[3]), 3, "the same request twice in one entry");
    assert_eq!(r[4], Reply::Stale);
    assert_eq!(m.applied_commands(), 4);
    let db = sm.shared.state_db();
    assert_eq!(KvMachine::get(&db, b"n").unwrap(), Some(b"4".to_vec()));
}
