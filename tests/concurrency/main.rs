//! Concurrency: threads and processes using one database at once.
//!
//! One test binary per layer (linking one binary is cheaper than linking one per scenario);
//! one scenario per file.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

#[path = "../common/mod.rs"]
mod common;

mod checkpoints;
mod lock_holder_pid;
mod mixed_operations;
mod readers_and_writers;
mod reopen_beside_spawns;
mod secondary_process;
