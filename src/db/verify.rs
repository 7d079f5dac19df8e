//! `Db::verify`: reads every live table from its file, past the block cache, and checks it
//! whole (RocksDB's `VerifyChecksum`, plus the checks a read makes lazily).

use std::sync::Arc;

use super::core::DbInner;
use crate::error::{Error, Result};
use crate::util::filename;
use crate::filter::{self, FilterPolicy};
use crate::iter::InternalIterator;
use crate::util::key;
use crate::sstable::{ReadCounters, Table, TableReadOptions};
use crate::db::version::TableFile;

/// What [`crate::Db::verify`] checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Tables read.
    pub tables: u64,
    /// Entries (puts and deletes) read in them.
    pub entries: u64,
    /// Bytes of table files read.
    pub bytes: u64,
}

impl DbInner {
    pub(crate) fn verify(&self) -> Result<VerifyReport> {
        // The version keeps its tables on disk while they are read, whatever compactions do.
        let version = self.current_version();
        let mut report = VerifyReport::default();
        for f in version.all_files() {
            report.entries += self.verify_table(f)?;
            report.tables += 1;
            report.bytes += f.meta.size;
        }
        Ok(report)
    }

    /// Checks one table: footer, index, properties and range-deletion block (at open), that
    /// it is the table the MANIFEST names, every data block (checksum, decoding, key order
    /// within and across blocks), the entry count, and that its filter block, if it has one,
    /// is intact. Returns its entries.
    fn verify_table(&self, f: &TableFile) -> Result<u64> {
        let path = filename::table_path(&self.dir, f.meta.number);
        // Opened again with its filter policy, to see whether the filter block loads.
        let with_filter = |policy: Arc<dyn FilterPolicy>| -> Result<Arc<Table>> {
            Ok(Arc::new(Table::open(
                self.env.open_random_access(&path)?,
                TableReadOptions {
                    file_number: f.meta.number,
                    filter: Some(policy),
                    cache: None,
                    counters: Arc::new(ReadCounters::default()),
                },
            )?))
        };
        // No cache: every block comes from the file and is verified as read.
        let table = Arc::new(f.open_uncached(&Arc::new(ReadCounters::default()))?);
        let props = table.properties().clone();
        if props.filter_bytes > 0 {
            let name = props.filter_policy.as_str();
            let policy = if self.opts.filter_policy.name() == name {
                Some(Arc::clone(&self.opts.filter_policy))
            } else {
                filter::builtin_policy(name)
            };
            // A table of an unknown policy is reported by the read path already (opening it
            // fails); here only damage counts.
            if let Some(policy) = policy
                && !with_filter(policy)?.has_filter()
            {
                return Err(Error::corruption(
                    &path,
                    0,
                    format!(
                        "its filter block ({} bytes, policy {name}) is damaged: reads go on \
                         without it, but it no longer saves any",
                        props.filter_bytes
                    ),
                ));
            }
        }
        let mut it = table.iter();
        it.seek_to_first()?;
        let mut entries = 0u64;
        let mut prev: Vec<u8> = Vec::new();
        while it.valid() {
            if entries > 0 && key::compare(&prev, it.key()).is_ge() {
                return Err(Error::corruption(
                    &path,
                    0,
                    format!("entry {entries} is not above the entry before it"),
                ));
            }
            prev.clear();
            prev.extend_from_slice(it.key());
            entries += 1;
            it.next()?;
        }
        if entries != props.entries {
            return Err(Error::corruption(
                &path,
                0,
                format!(
                    "{entries} entries read, but the properties record {}",
                    props.entries
                ),
            ));
        }
        Ok(entries)
    }
}
