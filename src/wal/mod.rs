//! The write-ahead log: a sequence of byte records, each framed with a length, a type and a
//! CRC-32, laid out in 32 KiB blocks so a reader can resynchronise after damage.
//!
//! The same framing carries the MANIFEST (see [`crate::manifest`]). The exact bytes are in
//! `docs/FORMAT.md`, section "Write-ahead log".
//!
//! ```
//! # fn main() -> bloomkv::Result<()> {
//! use bloomkv::env::{Env, StdEnv};
//! use bloomkv::wal::{LogReader, LogWriter, RecoveryMode};
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("000001.log");
//! let mut w = LogWriter::new(StdEnv.create_writable(&path)?);
//! w.add_record(b"first")?;
//! w.add_record(b"second")?;
//! w.sync()?;
//! let mut r = LogReader::new(StdEnv.read_all(&path)?, path, RecoveryMode::Strict);
//! assert_eq!(r.next_record()?.as_deref(), Some(&b"first"[..]));
//! assert_eq!(r.next_record()?.as_deref(), Some(&b"second"[..]));
//! assert_eq!(r.next_record()?, None);
//! # Ok(())
//! # }
//! ```

mod format;
mod reader;
mod writer;

#[cfg(any(test, feature = "internals"))]
pub use format::{BLOCK_SIZE, HEADER_SIZE, RecordType};
pub(crate) use format::{Physical, Problem, parse_at};
pub use reader::{LogReader, RecoveryMode};
pub use writer::LogWriter;

#[cfg(test)]
mod tests;
