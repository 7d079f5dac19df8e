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
//! use bloomkv::filter::{BloomFilter, FilterSize};
//!
//! let mut seen = BloomFilter::new(FilterSize::for_items(1_000_000, 0.01))?;
//! assert!(seen.insert(b"https://example.com/")); // new
//! assert!(!seen.insert(b"https://example.com/")); // seen before
//! assert!(seen.contains(b"https://example.com/"));
//! assert_eq!((seen.len(), seen.capacity()), (1, 1_000_000));
//! let bytes = seen.to_bytes(); // versioned, checksummed
//! assert!(BloomFilter::from_bytes(&bytes)?.contains(b"https://example.com/"));
//! # Ok(())
//! # }
//! ```
//!
//! ## What is public
//!
//! [`Db`] with its [`Options`], [`WriteBatch`], [`Snapshot`], [`DbIter`], [`Error`], the
//! statistics ([`Stats`]) and lookup traces ([`GetExplain`]); [`env`](mod@env) (the file system the
//! engine runs on); [`filter`] (the Bloom filters, usable on their own); [`sstable`] (reading a
//! table file block by block); and [`repair()`]. Everything else is internal.
//!
//! Cargo features: `fault-injection` adds `env::fault`, an [`env::Env`] that injects I/O
//! failures and power cuts, for testing programs built on bloomkv; `internals` exposes the
//! engine's modules, hidden and with no stability promise, for the fuzz targets and benches.

/// A function (or method) that is `pub` but hidden with the `internals` feature, for the fuzz
/// targets and the internal benchmarks, and `pub(crate)` otherwise.
macro_rules! internal_item {
    ($(#[$meta:meta])* fn $($rest:tt)*) => {
        $(#[$meta])*
        #[cfg(feature = "internals")]
        #[doc(hidden)]
        pub fn $($rest)*
        $(#[$meta])*
        #[cfg(not(feature = "internals"))]
        pub(crate) fn $($rest)*
    };
}

/// Declares the engine's internal modules: `pub(crate)`, or public but hidden with the
/// `internals` feature, which the fuzz targets and the internal benchmarks build with.
/// Nothing reached only through them is covered by semver.
macro_rules! internal_modules {
    ($($name:ident),* $(,)?) => {
        $(
            #[cfg(feature = "internals")]
            #[doc(hidden)]
            pub mod $name;
            #[cfg(not(feature = "internals"))]
            pub(crate) mod $name;
        )*
    };
}

// The public API: the database, its options and answers, the environment, the standalone
// filters, table files and repair.
mod compaction_filter;
pub mod env;
mod error;
pub mod filter;
mod options;
pub mod sstable;
mod stats;

// The engine (`db`) and what every layer shares (`iter`, `range_del`, `util`).
internal_modules!(db, iter, range_del, util);

/// The README's Rust snippets, run as doc tests so the README stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeSnippets;

#[cfg(test)]
extern crate self as bloomkv;
#[cfg(test)]
mod design_doc;
#[cfg(test)]
mod fuzz_regressions;
#[cfg(test)]
mod test_util;

pub use compaction_filter::{CompactionDecision, CompactionFilter, CompactionFilterContext};
/// What one operation of a write batch does (for the fuzz targets and internal benches).
#[cfg(feature = "internals")]
#[doc(hidden)]
pub use db::batch::OpKind;
pub use db::batch::WriteBatch;
pub use db::repair::{RepairReport, repair};
pub use db::{
    Db, GetExplain, KeyRange, ReadOptions, RecoveryReport, Snapshot, StallCause, TableProbe,
    VerifyReport, WritePressure,
};
pub use error::{Error, LockConflict, LockHolder, Result};
pub use iter::cursor::Cursor;
pub use iter::db_iter::DbIter;
pub use options::{
    CompactionPri, Compression, FilterAllocation, MAX_BATCH_BYTES, MAX_KEY_BYTES, MAX_VALUE_BYTES,
    NUM_LEVELS, Options,
};
pub use stats::{LevelStats, Stats, TableStats};
