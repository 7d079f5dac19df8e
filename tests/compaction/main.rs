//! Compaction: tree shape, bounds, pacing, parallelism, snapshots, compaction filters and the model tests under compaction pressure.
//!
//! One test binary per layer (linking one binary is cheaper than linking one per scenario);
//! one scenario per file.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test that cannot go on panics with the error"
)]

#[path = "../common/mod.rs"]
mod common;

mod bounds;
mod dynamic;
mod filter_above_bottom;
mod filter_change_value;
mod filter_model;
mod filter_reads;
mod idle;
mod load;
mod model;
mod monkey_refilter;
mod parallel;
mod rate_limit;
mod read_amp;
mod regressions;
mod shape;
mod snapshot;
mod trivial_move;
mod zero_seq;
