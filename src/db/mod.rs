//! The database: open, write, read, scan, snapshot, flush, compact, stats.
//!
//! This folder is the engine, as LevelDB's `db/` is. The files directly in it are the `Db`
//! itself: opening and recovery, the write and read paths, background work, secondaries and
//! checkpoints. The subfolders and the other files are the parts it drives, each below it:
//!
//! * [`compaction`]: what to compact and the merge that does it; it gets a version, the
//!   options and a table cache from the `Db` and returns an edit, so it never calls back up.
//! * [`version`]: the live tables per level; [`manifest`]: the log of edits between versions;
//!   [`table_cache`]: the open table readers a version's files go through.
//! * [`table_writer`]: the one way tables are written (flush, compaction, re-filter, repair).
//! * [`wal`]: the write-ahead log (whose framing the MANIFEST shares); [`memtable`]: recent
//!   writes in memory; [`batch`]: a group of writes, applied to the WAL and the memtable.
//! * [`repair`](mod@repair): rebuilding a database from what can still be read, out of the
//!   same parts.
//!
//! They live here rather than beside `sstable` because they know a database's lifecycle
//! (file numbers, sequence numbers, recovery). `compaction` is among them because it edits
//! versions and writes tables through `table_writer`: outside this folder it would import
//! from it while the `Db` imports it, a loop between two folders. Only `sstable`, `filter`,
//! `iter`, `range_del`, `env` and `util` are below the whole folder, and none of them
//! imports from it.

pub(crate) mod batch;
pub(crate) mod compaction;
internal_modules!(manifest, memtable, version, wal);
pub(crate) mod repair;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod table_cache;
#[cfg(not(feature = "internals"))]
#[expect(
    dead_code,
    reason = "TableCache::{pinned, len, is_empty} serve its tests only; table_cache.rs is being reworked separately"
)]
pub(crate) mod table_cache;
pub(crate) mod table_writer;

mod background;
mod checkpoint;
mod core;
mod cursor;
mod database;
mod handle;
mod idle;
mod key_range;
mod manifest_switch;
mod multi_get;
mod open_handles;
mod prefix;
mod read;
mod recover;
mod recovery_report;
mod secondary;
mod secondary_files;
mod secondary_tail;
mod snapshot;
mod verify;

pub use verify::VerifyReport;
mod wal_sync;
mod write;
mod write_delay;
mod write_pressure;
mod write_queue;

pub use write_pressure::{StallCause, WritePressure};

pub use self::cursor::ReadOptions;
pub use self::database::Db;
pub use self::key_range::KeyRange;
pub use self::read::{GetExplain, TableProbe};
pub use self::recovery_report::RecoveryReport;
pub use self::snapshot::Snapshot;


#[cfg(test)]
mod tests;
