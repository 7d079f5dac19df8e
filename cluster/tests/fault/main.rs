//! The fault-injection harness of the replicated bloomkv-server: `bloomkv-cluster`
//! processes on loopback, links through proxies the tests control, concurrent recorded
//! clients, a nemesis; histories checked for linearizability and lost writes. One
//! scenario per file; the shared tools in `procs`, `resp` and `history`.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test that cannot go on panics with the error"
)]

mod history;
mod procs;
mod resp;

mod catch_up;
mod cluster_protocol;
mod databases;
mod failover;
mod functions;
mod gc;
mod membership;
mod nemesis;
mod planted;
mod power_cut;
mod smoke;
mod stalled_snapshot;
mod wedge;
