//! The receiving side: an axum router over a node's [`Core`].
//!
//! | route | body | answer |
//! |---|---|---|
//! | `POST /raft/append` | AppendEntries request | `Result<response, RaftError>` |
//! | `POST /raft/vote` | Vote request | `Result<response, RaftError>` |
//! | `POST /raft/snapshot` | a snapshot stream ([`crate::snapshot::stream`]) | `Result<response, String>` |
//! | `POST /raft/prevote` | [`PreVote`] | [`crate::node::election::PreVoteAnswer`] |
//! | `POST /client/op` | a forwarded operation ([`wire::OpCall`]) | [`wire::Answer`] |
//! | `GET /status` | — | this node's [`crate::Status`] as JSON |
//!
//! Bodies are [`crate::codec`]-encoded, except the status.
//!
//! A node hosting several Raft groups serves group 0 at these routes and group g under
//! `/g/<g>` ([`groups_router`]); a route of a group it does not host answers 404.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use openraft::raft::AppendEntriesResponse;
use serde::Serialize;

use super::wire::{self, OpCall};
use crate::codec;
use crate::node::core::Core;
use crate::node::election::{self, PreVote};
use crate::snapshot::stream;
use crate::types::TypeConfig;

/// The longest a forwarded operation may ask this node to wait.
const MAX_OP_WAIT: Duration = Duration::from_secs(60);

pub(crate) fn router(core: Arc<Core>) -> Router {
    Router::new()
        .route("/raft/append", post(append))
        .route("/raft/vote", post(vote))
        .route("/raft/snapshot", post(snapshot))
        .route("/raft/prevote", post(prevote))
        .route("/client/op", post(op))
        .route("/status", get(status))
        .layer(DefaultBodyLimit::max(codec::MAX_ENCODED as usize))
        .with_state(core)
}

/// The router of a node hosting `cores`, group g's at index g: group 0's routes as a
/// one-group node has them, group g's under `/g/<g>` (`net::client::group_prefix`).
pub(crate) fn groups_router(cores: &[Arc<Core>]) -> Router {
    let mut app = Router::new();
    for (g, core) in cores.iter().enumerate() {
        let routes = router(Arc::clone(core));
        let prefix = super::client::group_prefix(u32::try_from(g).unwrap_or(u32::MAX));
        app = if prefix.is_empty() {
            app.merge(routes)
        } else {
            app.nest(&prefix, routes)
        };
    }
    app
}

fn encoded<T: Serialize>(v: &T) -> Response {
    match codec::encode(v) {
        Ok(b) => b.into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
    }
}

fn bad_request(e: String) -> Response {
    (StatusCode::BAD_REQUEST, e).into_response()
}

async fn append(State(core): State<Arc<Core>>, body: Bytes) -> Response {
    match codec::decode::<openraft::raft::AppendEntriesRequest<TypeConfig>>(&body) {
        Ok(req) => {
            let answer = core.raft.append_entries(req).await;
            // Accepted from the leader (a conflict too: the sender is our leader, only the
            // logs differ): this node has a live leader.
            if matches!(&answer, Ok(r) if !matches!(r, AppendEntriesResponse::HigherVote(_))) {
                core.contact.touch();
            }
            encoded(&answer)
        }
        Err(e) => bad_request(e),
    }
}

async fn prevote(State(core): State<Arc<Core>>, body: Bytes) -> Response {
    match codec::decode::<PreVote>(&body) {
        Ok(req) => encoded(&election::judge(&core, &req)),
        Err(e) => bad_request(e),
    }
}

async fn vote(State(core): State<Arc<Core>>, body: Bytes) -> Response {
    match codec::decode::<openraft::raft::VoteRequest<u64>>(&body) {
        Ok(req) => encoded(&core.raft.vote(req).await),
        Err(e) => bad_request(e),
    }
}

async fn snapshot(State(core): State<Arc<Core>>, body: Body) -> Response {
    let started = std::time::Instant::now();
    let received = std::sync::Mutex::new(None::<(u64, u64, u64)>);
    let result: Result<openraft::raft::SnapshotResponse<u64>, String> = async {
        let sm = Arc::clone(&core.sm);
        let into = tokio::task::spawn_blocking(move || sm.incoming_snapshot())
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        let (vote, meta, data) = stream::receive(
            Arc::clone(&core.env),
            stream::idle_bounded(body.into_data_stream(), stream::IDLE),
            into,
            |vote| {
                if *vote >= core.raft.metrics().borrow().vote {
                    core.contact.touch();
                }
            },
        )
        .await?;
        let from = vote.leader_id().voted_for().unwrap_or(0);
        let index = meta.last_log_id.map_or(0, |l| l.index);
        let bytes = crate::snapshot::dir_bytes(core.env.as_ref(), &data.dir);
        if let Ok(mut r) = received.lock() {
            *r = Some((from, index, bytes));
        }
        let snap = openraft::Snapshot {
            meta,
            snapshot: Box::new(data),
        };
        core.raft
            .install_full_snapshot(vote, snap)
            .await
            .map_err(|e| e.to_string())
    }
    .await;
    let got = received.lock().ok().and_then(|r| *r);
    match (&result, got) {
        (Ok(_), Some((from, index, bytes))) => tracing::info!(
            target: "bloomkv_cluster::snapshots",
            "installed the snapshot at log index {index} from node {from} ({:.1} MiB) in {:.2} s",
            bytes as f64 / 1_048_576.0,
            started.elapsed().as_secs_f64()
        ),
        (Ok(_), None) => {}
        (Err(e), _) => tracing::warn!(
            target: "bloomkv_cluster::snapshots",
            "a snapshot from {} was not installed after {:.2} s: {e}",
            got.map_or("a leader".to_string(), |(from, _, _)| format!("node {from}")),
            started.elapsed().as_secs_f64()
        ),
    }
    encoded(&result)
}

async fn op(State(core): State<Arc<Core>>, body: Bytes) -> Response {
    match codec::decode::<OpCall>(&body) {
        Ok(call) => {
            let wait = Duration::from_millis(call.timeout_ms).min(MAX_OP_WAIT);
            let answer: wire::Answer = core.serve(&call.op, wait).await;
            encoded(&answer)
        }
        Err(e) => bad_request(e),
    }
}

async fn status(State(core): State<Arc<Core>>) -> Response {
    match serde_json::to_vec(&core.status()) {
        Ok(b) => ([(header::CONTENT_TYPE, "application/json")], b).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}
