//! # bloomkv-cluster-testkit
//!
//! What the cluster's tests use to break a cluster and to judge what it answered, kept out of
//! the shipped `bloomkv-cluster` crate (as TiKV keeps `test_raftstore` apart):
//!
//! * [`linearizability`]: a checker for recorded histories (Wing–Gong search with Lowe's
//!   memoization, partitioned per key), with a register-and-counter model and a model of the
//!   Redis commands the fault tests send;
//! * [`proxy`]: a loopback TCP proxy a test puts on a link between two nodes to cut it, slow
//!   it, blackhole it one way or reset its connections.

pub mod linearizability;
pub mod proxy;
