//! # bloomkv-cluster
//!
//! Raft replication for bloomkv: a replicated log and state machine, each on a bloomkv
//! database, on the [openraft](https://docs.rs/openraft/0.9) engine (0.9, `storage-v2`),
//! with checkpoint snapshots and an HTTP transport. A write is acknowledged only once a
//! majority of the nodes has it on disk; any node accepts any operation and forwards what
//! needs the leader. bloomkv-server plugs its command layer in as a [`Machine`].
//!
//! The library `bloomkv` does not depend on this package, and no openraft type appears in
//! its public API ([`Node`], [`NodeConfig`], [`Machine`], [`Status`], [`Error`]), so moving
//! to openraft 0.10 stays inside it.
//!
//! ## Using it
//!
//! Implement [`Machine`] (deterministic: apply committed requests to the state-machine
//! database, answer each), start a [`Node`] on every member with the same
//! [`NodeConfig::initial_cluster`], then on any node: [`Node::write`] to apply a request
//! through the log, [`Node::linearizable_read_barrier`] followed by a read of
//! [`Node::state_db`] for a linearizable read, or [`Node::state_db`] alone for a stale
//! one; [`Node::add_learner`], [`Node::promote`], [`Node::remove`] to change the
//! membership; [`Node::status`] and [`Node::cluster_status`] for `ROLE` / `INFO` output.
//! The example on [`Node`] runs a one-node cluster with the test machine (`kv::KvMachine`,
//! behind the `test-machine` feature that the package's own tests turn on). The rest of the
//! test kit, the linearizability checker and the link proxy, is the `bloomkv-cluster-testkit`
//! package, which this one does not ship.
//!
//! ## Design: storage
//!
//! Each node has a data directory with two databases, so that installing a snapshot (a
//! checkpoint of the whole state-machine database) never touches the node's own log:
//!
//! * `log/`: the Raft log (`l` + big-endian index -> entry) and the vote. An entry carries
//!   the client requests the leader proposed together: while its earlier entries are in
//!   flight, requests wait and share the next one (group commit). Every `append`
//!   call is one `WriteBatch` (one WAL record); a syncer thread fsyncs the WAL and only then
//!   calls openraft's callback (appends queued behind one fsync share it). The vote is
//!   written and fsynced before `save_vote` returns. Truncation and purging are one batch
//!   each with a range delete; the purged log id is written in the purge's batch. The first
//!   and last log ids are kept in memory.
//! * `sm/gen-NNNNNN/`: the state-machine database, in generations; `sm/POINTER` names the
//!   live one. Each apply call is one batch holding the machine's writes, the dedup table's
//!   changes and the applied log id, membership and clock, so data and applied index agree
//!   after any crash. It is not synced per write: the log is the durable record, and the
//!   state machine is made durable where it matters (below).
//! * `snapshots/snap-*`: the newest snapshot (and older ones only while being sent).
//!
//! **Exactly once.** Each request carries its client's id, a request id and the client's
//! acknowledged mark (every lower id is answered or given up on). The state machine keeps
//! each client's mark and the answers of requests at or above it, in the same batch as the
//! data: a retry of an applied request (a forward retried after a leader change) gets the
//! saved answer and is not applied again; a request below the mark is refused as stale.
//!
//! **Determinism.** The leader stamps each request with its clock; the state machine makes
//! the time non-decreasing along the log and hands it to the machine with a seed derived
//! from the log index and the request's place in its entry ([`Command`]), so expiry times
//! and random choices are the same on every node.
//!
//! ## Design: snapshots
//!
//! A snapshot is a [`bloomkv::Db::checkpoint`] of the live state-machine database (tables
//! hard-linked), with its applied log id and membership read from the checkpoint itself,
//! and a metadata file; it is synced and renamed into place. The checkpoint also makes the
//! live database's WAL durable up to the snapshot, and openraft purges the log only up to a
//! snapshot after building it: **the log is never purged above what this node's state
//! machine holds on disk**. (A prototype that purged above an unsynced state machine could
//! not restart after a power cut: its state machine was behind the first entry its log
//! still had.) As a second guard, a node that starts with its state machine behind its
//! purged log restores it from the local snapshot, and refuses to start with a typed error
//! if none covers the gap.
//!
//! A leader sends a snapshot to a follower that is too far behind as one streamed HTTP
//! body: a header (vote, metadata), every file in chunks, then a manifest of names, sizes
//! and CRC-32s. The follower writes the files into a scratch directory, checks names,
//! sizes and checksums against the manifest, fsyncs, and hands it to openraft, which
//! installs it: the checkpoint is copied (hard links) into the node's snapshot store and
//! into a new generation, the pointer file is switched atomically (temp file, fsync,
//! rename, directory fsync), readers are switched to the new database ([`StateDb`] handles
//! already taken keep reading the old one, whose directory goes when the last drops), and
//! the machine is told to rebuild its in-memory state ([`Machine::reset`]).
//!
//! ## Design: transport and routing
//!
//! Every node serves HTTP (axum; client: reqwest; bodies bincode-encoded, no protoc) at
//! its Raft address: `POST /raft/append`, `/raft/vote`, `/raft/snapshot` for openraft, `POST
//! /client/op` for operations forwarded to the leader, `GET /status` (JSON). A node routes
//! a write to the leader it knows (itself, or over `/client/op`), follows "not the leader,
//! try N" answers and leader changes, and retries with the same request id until
//! [`NodeConfig::request_timeout`]; then [`Error::NoLeader`] if no leader ever took it, or
//! [`Error::Timeout`] if one may have. Linearizable reads ask the leader for its read index
//! (openraft confirms leadership with a quorum) and wait until the local state machine has
//! applied it. No call waits longer than the request timeout plus a few hundred
//! milliseconds.
//!
//! Default timeouts aim at failover (leader killed -> first acknowledged write on the new
//! leader) well under 1.5 s: heartbeat 100 ms, election timeout 250–500 ms, one forward
//! attempt at most 1 s, requests 5 s in all.
//!
//! ## Design: several groups per node
//!
//! A [`ShardedNode`] ([`NodeConfig::shards`] > 1) hosts several Raft groups, each a [`Node`]
//! with its own log, state machine and snapshots in `group-<g>/` of the data directory,
//! owning an even share of Redis Cluster's hash slots (`bloomkv_server::keyslot::SlotMap`).
//! The groups share the node's HTTP endpoint (group g's routes under `/g/<g>`, group 0's
//! where a one-group node has them) and its HTTP client. Each group's preferred leader is
//! the voter at position `g mod voters` in id order: it bootstraps the group, and the other
//! voters stand later the farther they are from it, so the leaders start spread over the
//! nodes. docs/CLUSTER.md "Sharding" has the design.
//!
//! ## Test tools
//!
//! Kept out of this crate's API: the `bloomkv-cluster-testkit` package (`cluster/testkit`)
//! holds `proxy` (a loopback TCP proxy that passes, delays, blackholes or cuts a node pair's
//! link) and `linearizability` (a Wing–Gong/Porcupine checker for recorded per-key histories
//! with unknown outcomes); `kv` (a small SET/INCR/DEL machine) is here only with the
//! `test-machine` feature, which this package's own tests turn on.

mod clock;
mod codec;
mod error;
mod fsutil;
mod keys;
#[cfg(any(test, feature = "test-machine"))]
pub mod kv;
mod log_store;
mod machine;
mod net;
mod node;
pub mod redis_server;
mod sm_meta;
mod snapshot;
mod state_db;
mod state_machine;
mod types;

#[cfg(test)]
mod tests;

pub use error::{Error, Result};
pub use keys::RESERVED_PREFIX;
pub use machine::{Command, Machine, MachineError, request_seed, seed_for};
pub use node::Node;
pub use node::config::{MAX_SHARDS, NodeConfig, parse_initial_cluster};
pub use node::sharded::ShardedNode;
pub use node::status::{Events, Member, PeerStatus, Role, Status};
pub use state_db::StateDb;
