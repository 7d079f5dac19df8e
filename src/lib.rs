//! # bloomkv
//!
//! An embedded key-value storage engine in the LevelDB/RocksDB line (write-ahead log, memtable,
//! sorted immutable SSTables, leveled compaction) whose every table carries a Bloom filter, so
//! that a point lookup reads data blocks only from tables that may hold the key.
//!
//! ## Quick start
//!
//! ```
//! # fn main() -> bloomkv::Result<()> {
//! use bloomkv::{Db, Options, WriteBatch};
//!
//! let dir = tempfile::tempdir()?;
//! let db = Db::open(dir.path(), Options::default())?;
//! db.put(b"user:1", b"ada")?;
//! let mut batch = WriteBatch::new();
//! batch.put(b"user:2", b"grace");
//! batch.delete(b"user:1");
//! db.write(batch)?; // atomic, also across a crash
//! assert_eq!(db.get(b"user:1")?, None);
//!
//! let snap = db.snapshot();
//! db.put(b"user:2", b"hopper")?;
//! assert_eq!(snap.get(b"user:2")?, Some(b"grace".to_vec()));
//!
//! db.flush()?; // memtable -> level-0 table with a Bloom filter
//! let keys: Vec<Vec<u8>> = db.scan(..).map(|kv| kv.map(|(k, _)| k)).collect::<Result<_, _>>()?;
//! assert_eq!(keys, vec![b"user:2".to_vec()]);
//! # Ok(())
//! # }
//! ```
//!
//! ## The filter module on its own
//!
//! ```
//! # fn main() -> bloomkv::Result<()> {
//! use bloomkv::filter::BloomFilter;
//!
//! let mut seen = BloomFilter::with_rate(1_000_000, 0.01)?;
//! seen.insert(b"https://example.com/");
//! assert!(seen.contains(b"https://example.com/"));
//! let bytes = seen.to_bytes(); // versioned, checksummed
//! assert!(BloomFilter::from_bytes(&bytes)?.contains(b"https://example.com/"));
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
mod metrics;
pub mod options;
pub mod repair;
pub mod sstable;
pub mod stats;
pub mod table_cache;
mod table_writer;
pub mod version;
pub mod wal;

pub use batch::WriteBatch;
pub use db::{Db, GetExplain, KeyRange, RecoveryReport, Snapshot, TableProbe};
pub use error::{Error, Result};
pub use iter::db_iter::DbIter;
pub use options::{Compression, FilterAllocation, Options};
pub use repair::{RepairReport, repair};
pub use stats::{LevelStats, Stats, TableStats};
