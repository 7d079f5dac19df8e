//! The receiving side: an axum router over a node's [`Core`].
//!
//! | route | body | answer |
//! |---|---|---|
//! | `POST /raft/append` | AppendEntries request | `Result<response, RaftError>` |
//! | `POST /raft/vote` | Vote request | `Result<response, RaftError>` |
//! | `POST /raft/snapshot` | a snapshot stream ([`crate::snapshot::stream`]) | `Result<response, String>` |
//! | `POST /client/op` | a forwarded operation ([`wire::OpCall`]) | [`wire::Answer`] |
//! | `GET /status` | — | this node's [`crate::Status`] as JSON |
//!
//! Bodies are [`crate::codec`]-encoded, except the status.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Serialize;

use super::wire::{self, OpCall};
use crate::codec;
use crate::node::core::Core;
use crate::snapshot::stream;
use crate::types::TypeConfig;

/// The longest a forwarded operation may ask this node to wait.
const MAX_OP_WAIT: Duration = Duration::from_secs(60);

pub(crate) fn router(core: Arc<Core>) -> Router {
    Router::new()
        .route("/raft/append", post(append))
        .route("/raft/vote", post(vote))
        .route("/raft/snapshot", post(snapshot))
        .route("/client/op", post(op))
        .route("/status", get(status))
        .layer(DefaultBodyLimit::max(codec::MAX_ENCODED as usize))
        .with_state(core)
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
        Ok(req) => encoded(&core.raft.append_entries(req).await),
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
    let result: Result<openraft::raft::SnapshotResponse<u64>, String> = async {
        let sm = Arc::clone(&core.sm);
        let into = tokio::task::spawn_blocking(move || sm.incoming_snapshot())
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        let (vote, meta, data) =
            stream::receive(Arc::clone(&core.env), body.into_data_stream(), into).await?;
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
