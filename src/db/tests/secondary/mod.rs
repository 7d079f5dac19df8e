//! Secondary instances (`Db::open_secondary`) beside a writer in this process: one scenario
//! per file. The test beside a writer in another process is `tests/secondary_process.rs`.

mod catches_up;
mod iterator_outlives_deleted_tables;
mod not_a_secondary;
mod snapshot_survives_catch_up;
mod stale_sequence_reads_the_view;
mod table_gone_before_open;
mod torn_wal_tail;
mod writer_reopens;

use crate::Options;

/// A writer that flushes and compacts often: small memtables and level-0 trigger.
fn busy_writer_options() -> Options {
    Options {
        memtable_bytes: 8 << 10,
        level0_compaction_trigger: 2,
        ..Options::default()
    }
}

/// The value key `i` gets in round `round`.
fn value(i: u32, round: u32) -> Vec<u8> {
    format!("value {i} of round {round} {}", "x".repeat(40)).into_bytes()
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}
