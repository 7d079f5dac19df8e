//! The cluster package's integration tests: one test binary (it links the whole stack
//! once), one scenario per file.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test that cannot go on panics with the error"
)]

mod harness;

mod checker;
mod forward;
mod group_commit;
mod linearizable;
mod membership;
mod no_leader;
mod power_cut;
mod proxy;
mod retry_once;
mod sharded;
mod shared_reads;
mod slow_storage;
mod snapshot_catch_up;
