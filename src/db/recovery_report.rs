//! [`RecoveryReport`]: what opening a database found in its logs and did about it. Its own
//! file because the open path (`recover`), the shared state (`core`) and secondaries all
//! hold one, and none of them should import the others for it.

/// What `open` found and did while recovering.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecoveryReport {
    /// WAL files replayed.
    pub logs_replayed: usize,
    /// WAL records (write batches) replayed.
    pub records: u64,
    /// Level-0 tables written from replayed WAL contents (a memtable's worth each).
    pub tables_written: usize,
    /// Replayed records copied into the new WAL: they stay in the memtable rather than
    /// becoming a small table.
    pub records_carried: u64,
    /// What was dropped: torn WAL tails (a crash mid-write; never acknowledged data when
    /// `sync_writes` is on) and, with `best_effort_recovery`, damaged records.
    pub dropped: Vec<String>,
    /// Table files no MANIFEST named (left by a flush or compaction that crashed), removed.
    pub orphan_tables_removed: Vec<String>,
}
