//! The sending side: openraft's `RaftNetwork` over HTTP (reqwest), and forwarding.

use std::sync::Arc;
use std::time::Duration;

use bloomkv::env::Env;
use futures_util::StreamExt;
use openraft::error::{
    Fatal, NetworkError, RPCError, RaftError, RemoteError, ReplicationClosed, StreamingError,
    Timeout, Unreachable,
};
use openraft::network::{RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, SnapshotResponse, VoteRequest, VoteResponse,
};
use openraft::{AnyError, RPCTypes};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::health::Health;
use super::routes::Routes;
use super::wire::{Answer, Op, OpCall};
use crate::codec;
use crate::snapshot::stream;
use crate::types::{Node, NodeId, TypeConfig, Vote};

/// A failed call.
#[derive(Clone, Debug)]
pub(crate) enum CallError {
    /// The request never left (connection refused, no route): it was certainly not handled.
    NotSent(String),
    /// No answer within the time allowed.
    Timeout,
    /// Anything else (connection broken mid-call, bad answer): it may have been handled.
    Broken(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::NotSent(e) => write!(f, "not sent: {e}"),
            CallError::Timeout => write!(f, "timed out"),
            CallError::Broken(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for CallError {}

fn classify(e: reqwest::Error) -> CallError {
    if e.is_timeout() {
        CallError::Timeout
    } else if e.is_connect() {
        CallError::NotSent(e.to_string())
    } else {
        CallError::Broken(e.to_string())
    }
}

/// The HTTP client every call of a node goes through. The groups of a node share one
/// (one connection pool per peer): each has a copy that puts its group's path prefix
/// before every route ([`Transport::for_group`]).
#[derive(Clone)]
pub(crate) struct Transport {
    http: reqwest::Client,
    pub(crate) routes: Arc<Routes>,
    /// Which peers the Raft calls cannot reach, for the log.
    pub(crate) health: Arc<Health>,
    /// Before every path: empty for group 0 (today's routes), `/g/<g>` for group g.
    prefix: Arc<str>,
}

/// The path prefix of group `group`'s routes: none for group 0, so that a one-group
/// cluster speaks the routes it always did.
pub(crate) fn group_prefix(group: u32) -> String {
    if group == 0 {
        String::new()
    } else {
        format!("/g/{group}")
    }
}

impl Transport {
    pub(crate) fn new(routes: Arc<Routes>, connect_timeout: Duration) -> Result<Transport, String> {
        let http = reqwest::Client::builder()
            .connect_timeout(connect_timeout)
            .tcp_nodelay(true)
            .pool_idle_timeout(Duration::from_secs(30))
            .no_proxy()
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Transport {
            http,
            routes,
            health: Arc::default(),
            prefix: Arc::from(""),
        })
    }

    /// The same client (connection pool, routes, peers' health) calling group `group`'s
    /// routes.
    pub(crate) fn for_group(&self, group: u32) -> Transport {
        Transport {
            prefix: Arc::from(group_prefix(group)),
            ..self.clone()
        }
    }

    /// The URL of `path` of this transport's group at `addr`.
    pub(crate) fn url(&self, addr: &str, path: &str) -> String {
        format!("http://{addr}{}{path}", self.prefix)
    }

    /// POSTs an encoded body to `addr` and decodes the answer.
    pub(crate) async fn call<Req: Serialize + ?Sized, Resp: DeserializeOwned>(
        &self,
        addr: &str,
        path: &str,
        req: &Req,
        timeout: Duration,
    ) -> Result<Resp, CallError> {
        let body = codec::encode(req).map_err(CallError::NotSent)?;
        let resp = self
            .http
            .post(self.url(addr, path))
            .timeout(timeout)
            .body(body)
            .send()
            .await
            .map_err(classify)?;
        let status = resp.status();
        let bytes = resp.bytes().await.map_err(classify)?;
        if !status.is_success() {
            return Err(CallError::Broken(format!(
                "{addr}{path} answered {status}: {}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
            )));
        }
        codec::decode(&bytes).map_err(|e| CallError::Broken(format!("{addr}{path}: {e}")))
    }

    /// GETs `path` from `addr` (JSON).
    pub(crate) async fn get_json<Resp: DeserializeOwned>(
        &self,
        addr: &str,
        path: &str,
        timeout: Duration,
    ) -> Result<Resp, CallError> {
        let resp = self
            .http
            .get(self.url(addr, path))
            .timeout(timeout)
            .send()
            .await
            .map_err(classify)?;
        let bytes = resp.bytes().await.map_err(classify)?;
        serde_json::from_slice(&bytes).map_err(|e| CallError::Broken(format!("{addr}{path}: {e}")))
    }

    /// Forwards an operation to the node at `addr`.
    pub(crate) async fn forward(
        &self,
        addr: &str,
        op: &Op,
        timeout: Duration,
    ) -> Result<Answer, CallError> {
        let call = OpCall {
            op: op.clone(),
            timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        };
        // A little longer than the leader waits, so its own "unknown" answer can arrive.
        self.call(
            addr,
            "/client/op",
            &call,
            timeout + Duration::from_millis(200),
        )
        .await
    }
}

/// Makes one [`Peer`] per target for openraft.
pub(crate) struct NetworkFactory {
    pub(crate) id: NodeId,
    pub(crate) transport: Transport,
    pub(crate) env: Arc<dyn Env>,
    pub(crate) snapshot_timeout: Duration,
}

impl RaftNetworkFactory<TypeConfig> for NetworkFactory {
    type Network = Peer;

    async fn new_client(&mut self, target: NodeId, node: &Node) -> Peer {
        Peer {
            id: self.id,
            target,
            addr: node.addr.clone(),
            transport: self.transport.clone(),
            env: Arc::clone(&self.env),
            snapshot_timeout: self.snapshot_timeout,
            answer_wait: stream::ANSWER_WAIT,
        }
    }
}

/// openraft's connection to one peer.
pub(crate) struct Peer {
    id: NodeId,
    target: NodeId,
    addr: String,
    transport: Transport,
    env: Arc<dyn Env>,
    snapshot_timeout: Duration,
    /// How long a snapshot's answer may take after its last byte left, beside the time its
    /// size allows: doubled after each stalled send (a receiver slower than allowed still
    /// gets there), back to [`stream::ANSWER_WAIT`] after a send that succeeded.
    answer_wait: Duration,
}

type RpcErr = RPCError<NodeId, Node, RaftError<NodeId>>;

impl Peer {
    fn addr(&self) -> String {
        self.transport.routes.resolve(self.target, &self.addr)
    }

    async fn rpc<Req: Serialize, Resp: DeserializeOwned>(
        &self,
        path: &str,
        action: RPCTypes,
        req: &Req,
        option: &RPCOption,
    ) -> Result<Resp, RpcErr> {
        let ttl = option.hard_ttl();
        let addr = self.addr();
        // openraft drops this future when its own timeout (the same TTL) fires first: the
        // guard reports the timeout then.
        let mut pending = Pending {
            health: &self.transport.health,
            target: self.target,
            addr: &addr,
            action,
            ttl,
            done: false,
        };
        let answer = self.transport.call(&addr, path, req, ttl).await;
        pending.done = true;
        let health = &self.transport.health;
        match &answer {
            Ok(_) => health.ok(self.target, &addr),
            Err(CallError::Timeout) => pending.timed_out(),
            Err(e) => health.failed(self.target, &addr, &e.to_string()),
        }
        let answer: Result<Resp, RaftError<NodeId>> = answer.map_err(|e| match e {
            CallError::NotSent(_) => RPCError::Unreachable(Unreachable::new(&e)),
            CallError::Timeout => RPCError::Timeout(Timeout {
                action,
                id: self.id,
                target: self.target,
                timeout: ttl,
            }),
            CallError::Broken(_) => RPCError::Network(NetworkError::new(&e)),
        })?;
        answer.map_err(|e| RPCError::RemoteError(RemoteError::new(self.target, e)))
    }
}

/// A Raft call under way, for the peers' health.
struct Pending<'a> {
    health: &'a Health,
    target: NodeId,
    addr: &'a str,
    action: RPCTypes,
    ttl: Duration,
    done: bool,
}

impl Pending<'_> {
    fn timed_out(&self) {
        if self.action == RPCTypes::AppendEntries {
            self.health.append_timed_out(self.target, self.ttl);
        }
        self.health.failed(self.target, self.addr, "timed out");
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.timed_out();
        }
    }
}

impl RaftNetwork<TypeConfig> for Peer {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<NodeId>, RpcErr> {
        self.rpc("/raft/append", RPCTypes::AppendEntries, &rpc, &option)
            .await
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<NodeId>,
        option: RPCOption,
    ) -> Result<VoteResponse<NodeId>, RpcErr> {
        self.rpc("/raft/vote", RPCTypes::Vote, &rpc, &option).await
    }

    async fn full_snapshot(
        &mut self,
        vote: Vote,
        snapshot: openraft::Snapshot<TypeConfig>,
        cancel: impl std::future::Future<Output = ReplicationClosed> + openraft::OptionalSend + 'static,
        _option: RPCOption,
    ) -> Result<SnapshotResponse<NodeId>, StreamingError<TypeConfig, Fatal<NodeId>>> {
        let addr = self.addr();
        let started = std::time::Instant::now();
        let index = snapshot.meta.last_log_id.map_or(0, |l| l.index);
        // The snapshot's directory stays on disk while `snapshot` lives: keep it past the send.
        let data = snapshot.snapshot;
        let bytes = crate::snapshot::dir_bytes(self.env.as_ref(), &data.dir);
        // Given up when no frame is taken for `stream::IDLE` (the connection pushes back and
        // never drains), or when no answer comes within this peer's answer wait plus the
        // snapshot's size at `stream::INSTALL_RATE` after the last frame left (a link that
        // swallows bytes takes the whole body at once and never answers).
        let moved = Arc::new(crate::clock::Stamp::new());
        let sent = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let answer_wait =
            self.answer_wait + Duration::from_millis(bytes * 1000 / stream::INSTALL_RATE);
        let body = {
            let (moved, done, sent) = (Arc::clone(&moved), Arc::clone(&moved), Arc::clone(&sent));
            let end = futures_util::stream::once(async move {
                done.touch();
                sent.store(true, std::sync::atomic::Ordering::Relaxed);
            })
            .filter_map(|()| std::future::ready(None::<Result<bytes::Bytes, std::io::Error>>));
            stream::send(
                Arc::clone(&self.env),
                data.dir.clone(),
                vote,
                snapshot.meta.clone(),
            )
            .inspect(move |_| moved.touch())
            .chain(end)
        };
        let stalled = async {
            loop {
                tokio::time::sleep(Duration::from_millis(100)).await;
                let whole = sent.load(std::sync::atomic::Ordering::Relaxed);
                let bound = if whole { answer_wait } else { stream::IDLE };
                if moved.elapsed() > bound {
                    tracing::warn!(
                        target: "bloomkv_cluster::snapshots",
                        "the snapshot stream to node {} stalled: {} for {:.1} s; giving it up to send it again",
                        self.target,
                        if whole { "sent whole, no answer" } else { "no bytes taken" },
                        bound.as_secs_f64()
                    );
                    return CallError::Timeout;
                }
            }
        };
        // A snapshot may be large: one overall bound, longer than any RPC's, beside the
        // bound on a stall.
        let send = async {
            let resp = self
                .transport
                .http
                .post(self.transport.url(&addr, "/raft/snapshot"))
                .timeout(self.snapshot_timeout)
                .body(reqwest::Body::wrap_stream(body))
                .send()
                .await
                .map_err(classify)?;
            let status = resp.status();
            let bytes = resp.bytes().await.map_err(classify)?;
            if !status.is_success() {
                return Err(CallError::Broken(format!("snapshot answered {status}")));
            }
            codec::decode::<Result<SnapshotResponse<NodeId>, String>>(&bytes)
                .map_err(CallError::Broken)
        };
        let result = tokio::select! {
            r = send => r,
            e = stalled => Err(e),
            closed = cancel => return Err(StreamingError::Closed(closed)),
        };
        drop(data);
        self.answer_wait = match &result {
            Ok(_) => stream::ANSWER_WAIT,
            Err(CallError::Timeout) => (self.answer_wait * 2).min(self.snapshot_timeout),
            Err(_) => self.answer_wait,
        };
        match &result {
            Ok(Ok(_)) => tracing::info!(
                target: "bloomkv_cluster::snapshots",
                "sent the snapshot at log index {index} ({:.1} MiB) to node {} in {:.2} s",
                bytes as f64 / 1_048_576.0,
                self.target,
                started.elapsed().as_secs_f64()
            ),
            Ok(Err(why)) => tracing::warn!(
                target: "bloomkv_cluster::snapshots",
                "node {} refused the snapshot at log index {index} after {:.2} s: {why}",
                self.target,
                started.elapsed().as_secs_f64()
            ),
            Err(e) => tracing::warn!(
                target: "bloomkv_cluster::snapshots",
                "sending the snapshot at log index {index} ({:.1} MiB) to node {} failed after {:.2} s: {e}",
                bytes as f64 / 1_048_576.0,
                self.target,
                started.elapsed().as_secs_f64()
            ),
        }
        match result {
            Ok(Ok(resp)) => Ok(resp),
            Ok(Err(why)) => Err(StreamingError::Network(NetworkError::new(
                &AnyError::error(format!("node {} refused the snapshot: {why}", self.target)),
            ))),
            // Unreachable: openraft waits a moment before sending again (`backoff`), where
            // a connection reset on accept once had it resend a snapshot every millisecond.
            // A snapshot is only installed whole, so a failed one is safe to resend.
            Err(e @ (CallError::NotSent(_) | CallError::Broken(_))) => {
                Err(StreamingError::Unreachable(Unreachable::new(&e)))
            }
            Err(CallError::Timeout) => Err(StreamingError::Timeout(Timeout {
                action: RPCTypes::InstallSnapshot,
                id: self.id,
                target: self.target,
                timeout: self.snapshot_timeout,
            })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_zero_keeps_the_routes_and_other_groups_add_their_id() {
        let t = Transport::new(Arc::default(), Duration::from_secs(1)).unwrap();
        assert_eq!(t.url("h:1", "/raft/append"), "http://h:1/raft/append");
        assert_eq!(t.for_group(0).url("h:1", "/status"), "http://h:1/status");
        let g2 = t.for_group(2);
        assert_eq!(g2.url("h:1", "/raft/append"), "http://h:1/g/2/raft/append");
        // The groups share one client: one connection pool per peer.
        assert!(Arc::ptr_eq(&g2.routes, &t.routes));
        assert!(Arc::ptr_eq(&g2.health, &t.health));
    }
}
