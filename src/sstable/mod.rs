//! Sorted string tables: immutable files of sorted internal keys with a Bloom filter block.
//! See `docs/FORMAT.md`, section "SSTable".
//!
//! [`TableBuilder`] writes a table, [`Table`] reads one: [`Table::get`] consults the table's
//! filter first and reads no data block when it rules the key out; [`Table::iter`] walks all
//! entries. Reads are positional, so one open table serves many threads.

pub mod block;
mod builder;
pub mod compression;
pub mod format;
mod iter;
mod properties;
mod separator;
mod table;

pub use crate::metrics::{ReadCounters, ReadCountersSnapshot};
pub use block::Block;
pub use builder::{FILTER_BLOCK_PREFIX, PROPERTIES_BLOCK_NAME, TableBuildOptions, TableBuilder};
pub use compression::Compression;
pub use iter::TableIter;
pub use properties::TableProperties;
pub use table::{FilterVerdict, Table, TableGet, TableReadOptions};

/// The file name of table `number` inside a database directory: `NNNNNN.sst`.
pub fn table_file_name(number: u64) -> String {
    format!("{number:06}.sst")
}
