//! Versions of tables that exist only as MANIFEST records, for tests of what compaction
//! plans from a version's shape.

use std::sync::Arc;

use crate::env::{Env, StdEnv};
use crate::util::key::{self, Kind};
use crate::db::manifest::{FileMeta, VersionEdit};
use crate::sstable::ReadCounters;
use crate::db::table_cache::TableCache;
use crate::db::version::{TableFile, Version};

/// A version of meta-only tables: `(level, number, lo, hi, entries, bits/key)`, each entry
/// counted as 100 bytes of table.
pub(crate) fn version(tables: &[(usize, u64, &str, &str, u64, f64)]) -> Version {
    let dir = std::env::temp_dir();
    let env: Arc<dyn Env> = Arc::new(StdEnv);
    let cache = Arc::new(TableCache::new(
        Arc::clone(&env),
        dir.clone(),
        10,
        None,
        Arc::new(ReadCounters::default()),
    ));
    let mut edit = VersionEdit::default();
    for &(level, number, lo, hi, entries, bits) in tables {
        edit.new_files.push((
            level,
            FileMeta {
                number,
                size: entries * 100,
                smallest: key::encode(lo.as_bytes(), 1, Kind::Put),
                largest: key::encode(hi.as_bytes(), 1, Kind::Put),
                entries,
                deletions: 0,
                filter_bits_per_key: bits,
                filter_bytes: (entries as f64 * bits / 8.0) as u64,
                expected_fpr: 0.01,
                range_deletions: 0,
            },
        ));
    }
    Version::default()
        .apply(&edit, |m| {
            // Never opened and never marked obsolete: no file is touched.
            let path = dir.join(format!("never-{}.sst", m.number));
            Arc::new(TableFile::new(
                m,
                path,
                Arc::clone(&env),
                Arc::clone(&cache),
            ))
        })
        .unwrap()
}
