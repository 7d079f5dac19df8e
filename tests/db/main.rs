//! The public `Db` API, scenario by scenario, and the model tests of its reads and writes.
//!
//! One test binary per layer (linking one binary is cheaper than linking one per scenario);
//! one scenario per file.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

#[path = "../common/mod.rs"]
mod common;

mod background_panic;
mod basic;
mod checkpoint;
mod cursor_model;
mod cursor_prefix;
mod filter_policy;
mod flush_during_compaction;
mod index_filter_kept;
mod many_tables_few_handles;
mod mmap_reads;
mod model;
mod multi_get;
mod prefix;
mod range_delete;
mod range_delete_model;
mod read_amp;
mod read_only;
mod repeated_writes_same_key;
mod snapshot_outlives_db;
mod stats_write_causes;
mod verify;
mod write_delay;
mod write_delay_ends;
mod write_pressure;
