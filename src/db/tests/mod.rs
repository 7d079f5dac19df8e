//! Engine tests that reach below the public API: injected file-system faults, hand-written
//! WAL and manifest files, and the examples of `docs/FORMAT.md`.

mod checkpoint;
mod faults;
mod format_doc;
mod on_disk;
mod outcome_unknown;
mod read_only;
mod sync_wal;
mod write_failures;
mod zero_seq;
