//! # bloomkv
//!
//! An embedded key-value storage engine in the LevelDB/RocksDB line (write-ahead log, memtable,
//! sorted immutable SSTables, leveled compaction) whose every table carries a Bloom filter, so
//! that a point lookup reads data blocks only from tables that may hold the key.
//!
//! The [`filter`] module also stands alone:
//!
//! ```
//! # fn main() -> bloomkv::Result<()> {
//! use bloomkv::filter::FilterPolicy;
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]
#![deny(unsafe_code)]
#![warn(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::dbg_macro,
    clippy::todo
)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod batch;
pub mod cache;
pub mod coding;
pub mod compaction;
mod db;
pub mod env;
pub mod error;
pub mod fault_env;
pub mod filename;
pub mod filter;
pub mod iter;
pub mod key;
pub mod manifest;
pub mod memtable;
pub mod options;
pub mod repair;
pub mod sstable;
pub mod stats;
pub mod table_cache;
pub mod version;
pub mod wal;

pub use batch::WriteBatch;
pub use db::{Db, GetExplain, KeyRange, RecoveryReport, Snapshot, TableProbe};
pub use error::{Error, Result};
pub use iter::db_iter::DbIter;
pub use options::Options;
pub use repair::{RepairReport, repair};
pub use stats::{LevelStats, Stats};
