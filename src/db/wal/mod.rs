//! The write-ahead log: a sequence of byte records, each framed with a length, a type and a
//! CRC-32, laid out in 32 KiB blocks so a reader can resynchronise after damage.
//!
//! The same framing carries the MANIFEST (see [`crate::db::manifest`]). The exact bytes are in
//! `docs/FORMAT.md`, section "Write-ahead log".

mod format;
mod reader;
mod sync_tracker;
mod writer;

#[cfg(any(test, feature = "internals"))]
pub use format::{BLOCK_SIZE, HEADER_SIZE, RecordType};
pub(crate) use format::{Physical, Problem, parse_at};
pub use reader::{LogReader, RecoveryMode};
pub(crate) use sync_tracker::LogSyncHandle;
pub use writer::LogWriter;

#[cfg(test)]
mod tests;
