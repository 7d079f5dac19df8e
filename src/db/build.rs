//! Writing a new table (for a flush or a compaction) and describing it for the manifest.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::env::Env;
use crate::error::Result;
use crate::filename;
use crate::filter::{BloomPolicy, FilterPolicy};
use crate::manifest::FileMeta;
use crate::options::Options;
use crate::sstable::{TableBuildOptions, TableBuilder};
use crate::table_cache::TableCache;

/// The filter policy for tables written to `level`, or `None` when filters are off there.
pub(crate) fn filter_for_level(opts: &Options, level: usize) -> Option<Arc<dyn FilterPolicy>> {
    let bits = opts.bits_per_key_for_level(level);
    (bits > 0.0).then(|| Arc::new(BloomPolicy::new(bits)) as Arc<dyn FilterPolicy>)
}

/// A table being written.
pub(crate) struct OutputTable {
    builder: TableBuilder,
    number: u64,
    path: PathBuf,
}

impl OutputTable {
    /// Creates table file `number` for `level`.
    pub fn create(
        env: &dyn Env,
        dir: &Path,
        opts: &Options,
        number: u64,
        level: usize,
    ) -> Result<OutputTable> {
        let path = filename::table_path(dir, number);
        let file = env.create_writable(&path)?;
        let builder = TableBuilder::new(
            file,
            path.clone(),
            TableBuildOptions {
                block_bytes: opts.block_bytes,
                restart_interval: opts.block_restart_interval,
                filter: filter_for_level(opts, level),
            },
        );
        Ok(OutputTable {
            builder,
            number,
            path,
        })
    }

    pub fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        self.builder.add(ikey, value)
    }

    pub fn estimated_size(&self) -> u64 {
        self.builder.estimated_file_size()
    }

    pub fn is_empty(&self) -> bool {
        self.builder.num_entries() == 0
    }

    /// Finishes (and fsyncs) the file, then opens it through the table cache, which both
    /// verifies what was written and reads the filter's own expected false-positive rate.
    pub fn finish(self, env: &dyn Env, cache: &TableCache) -> Result<FileMeta> {
        let number = self.number;
        let path = self.path.clone();
        let result = self.builder.finish().and_then(|props| {
            let table = cache.get(number)?;
            Ok(FileMeta {
                number,
                size: props.file_size,
                smallest: props.smallest_key.clone(),
                largest: props.largest_key.clone(),
                entries: props.entries,
                deletions: props.deletions,
                filter_bits_per_key: if table.has_filter() {
                    props.filter_bits_per_key
                } else {
                    0.0
                },
                filter_bytes: props.filter_bytes,
                expected_fpr: table.expected_fp_rate().unwrap_or(1.0),
            })
        });
        if result.is_err() {
            cache.evict(number);
            let _ = env.remove_file(&path);
        }
        result
    }

    /// Gives up on the table and deletes its file.
    pub fn abandon(self, env: &dyn Env) {
        drop(self.builder);
        let _ = env.remove_file(&self.path);
    }
}
