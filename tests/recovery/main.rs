//! Recovery: crashes, power cuts, damaged files, injected I/O faults and old formats.
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

mod compaction_crash;
mod corruption;
mod crash;
mod current_unreadable_after_a_failed_manifest_switch;
mod current_unreadable_after_a_failed_open;
mod failed_removals;
mod format_v1_fixture;
mod table_identity;
mod table_identity_compaction;
mod unlistable_directory;
mod wal_replay;
