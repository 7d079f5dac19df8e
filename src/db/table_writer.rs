//! [`TableWriter`]: the one way the engine writes tables (flush, compaction, re-filter and
//! repair all go through it).
//!
//! It numbers and creates each table file, cuts a new table once the current one reaches the
//! target size (only where the caller says a user key ends, so one key's versions never
//! straddle two tables), builds each table's filter, syncs each file, and opens it back
//! through the table cache, which verifies what was written and reads the filter's own
//! expected false-positive rate. Until [`TableWriter::finish`] returns, every file it created
//! is its own: on any error, or if the writer is dropped unfinished, all of them are removed.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::env::Env;
use crate::error::{Error, Result};
use crate::util::filename;
use crate::filter::FilterPolicy;
use crate::iter::InternalIterator;
use crate::util::key;
use crate::db::manifest::FileMeta;
use crate::options::Options;
use crate::range_del::Fragments;
use crate::util::rate::RateLimiter;
use crate::sstable::{TableBuildOptions, TableBuilder};
use crate::db::table_cache::TableCache;

/// Writes a run of tables. See the module documentation.
pub(crate) struct TableWriter<'a> {
    env: &'a dyn Env,
    dir: &'a Path,
    cache: &'a TableCache,
    build: TableBuildOptions,
    target_bytes: u64,
    next_number: &'a mut dyn FnMut() -> u64,
    current: Option<Current>,
    done: Vec<FileMeta>,
    /// The last entry's internal key: order is checked across tables, and a table is cut
    /// only where a new user key begins.
    last_key: Vec<u8>,
    finished: bool,
    /// Paces what this writer writes (compactions and re-filters, never flushes).
    limiter: Option<&'a RateLimiter>,
    /// Bytes of the current table already charged to `limiter`.
    charged: u64,
    /// Range tombstones to spread over the tables written: each table holds the part of
    /// them between the previous table's cut and its own.
    range_dels: Option<Arc<Fragments>>,
    /// Where the next table's share of the range tombstones begins (`None`: unbounded).
    range_lower: Option<Vec<u8>>,
}

/// Bytes written between charges to a rate limiter: often enough to keep the pace smooth,
/// seldom enough that its lock costs nothing.
const CHARGE_EVERY: u64 = 64 << 10;

struct Current {
    builder: TableBuilder,
    number: u64,
    path: PathBuf,
}

impl<'a> TableWriter<'a> {
    /// A writer of tables for `level` in `dir` with `opts`' block settings, the level's
    /// compression and `filter` (`None`: no filter), each numbered by `next_number`, cut at
    /// `target_bytes` (`u64::MAX`: one table).
    #[expect(clippy::too_many_arguments, reason = "each caller names every one")]
    pub fn new(
        env: &'a dyn Env,
        dir: &'a Path,
        cache: &'a TableCache,
        opts: &Options,
        level: usize,
        filter: Option<Arc<dyn FilterPolicy>>,
        target_bytes: u64,
        next_number: &'a mut dyn FnMut() -> u64,
    ) -> TableWriter<'a> {
        TableWriter {
            env,
            dir,
            cache,
            build: TableBuildOptions {
                block_bytes: opts.block_bytes,
                restart_interval: opts.block_restart_interval,
                filter,
                compression: opts.compression_for_level(level),
                file_number: None,
                prefix_extractor: opts.prefix_extractor.clone(),
            },
            target_bytes,
            next_number,
            current: None,
            done: Vec::new(),
            last_key: Vec::new(),
            finished: false,
            limiter: None,
            charged: 0,
            range_dels: None,
            range_lower: None,
        }
    }

    /// Paces the tables' writing to `limiter`'s rate (`None`: unpaced).
    pub fn rate_limited(mut self, limiter: Option<&'a RateLimiter>) -> TableWriter<'a> {
        self.limiter = limiter;
        self
    }

    /// Range tombstones to write with the entries (`None` or empty: none). Tables are cut
    /// between user keys; a cut after user key `u` gives the earlier table the tombstones'
    /// part up to `u ++ 00` (exclusive: up to and including `u`) and the later one the rest,
    /// so every table's key range covers its tombstones and tables stay disjoint. Tombstones
    /// past the last entry go to the last table (or a table of their own).
    #[must_use]
    pub fn with_range_tombstones(mut self, range_dels: Option<Arc<Fragments>>) -> Self {
        self.range_dels = range_dels.filter(|f| !f.is_empty());
        self
    }

    /// Adds one entry (internal key order). A new table is started first if the current one
    /// is full and `ikey` begins a new user key.
    pub fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        let user_key = key::parse(ikey)?.user_key;
        let started = !self.last_key.is_empty();
        if started && key::compare(&self.last_key, ikey).is_ge() {
            return Err(Error::InvalidArgument(format!(
                "table writer in {}: keys out of order: {ikey:?} after {:?}",
                self.dir.display(),
                self.last_key
            )));
        }
        if let Some(c) = &self.current
            && c.builder.estimated_file_size() >= self.target_bytes
            && user_key != key::user_key(&self.last_key)
        {
            self.finish_current(false)?;
        }
        if self.current.is_none() {
            self.start_table()?;
        }
        self.last_key.clear();
        self.last_key.extend_from_slice(ikey);
        let Some(c) = self.current.as_mut() else {
            return Ok(());
        };
        c.builder.add(ikey, value)?;
        if let Some(limiter) = self.limiter {
            let size = c.builder.estimated_file_size();
            if size >= self.charged + CHARGE_EVERY {
                limiter.wrote(size - self.charged);
                self.charged = size;
            }
        }
        Ok(())
    }

    fn start_table(&mut self) -> Result<()> {
        let number = (self.next_number)();
        let path = filename::table_path(self.dir, number);
        let file = self.env.create_writable(&path)?;
        self.current = Some(Current {
            builder: TableBuilder::new(
                file,
                path.clone(),
                TableBuildOptions {
                    file_number: Some(number),
                    ..self.build.clone()
                },
            ),
            number,
            path,
        });
        Ok(())
    }

    /// Copies every entry of `input` from its start.
    pub fn copy_all(&mut self, input: &mut dyn InternalIterator) -> Result<()> {
        input.seek_to_first()?;
        while input.valid() {
            self.add(input.key(), input.value())?;
            input.next()?;
        }
        Ok(())
    }

    /// Finishes the current table now, so the next entry starts a new one. The caller must
    /// call it only between user keys.
    pub fn cut(&mut self) -> Result<()> {
        self.finish_current(false)
    }

    /// Finishes the current table; `last`: no entry follows, so it takes every range
    /// tombstone left.
    fn finish_current(&mut self, last: bool) -> Result<()> {
        if let Some(f) = self.range_dels.clone() {
            let upper = match last {
                true => None,
                false => Some(key::user_key(&self.last_key).to_vec()).map(|mut u| {
                    u.push(0);
                    u
                }),
            };
            if self.current.is_some() || last {
                let share = f.tombstones_within(self.range_lower.as_deref(), upper.as_deref());
                if !share.is_empty() {
                    if self.current.is_none() {
                        self.start_table()?;
                    }
                    if let Some(c) = self.current.as_mut() {
                        c.builder.set_range_tombstones(share)?;
                    }
                }
                if self.current.is_some() {
                    self.range_lower = upper;
                }
            }
        }
        let Some(c) = self.current.take() else {
            return Ok(());
        };
        let Current {
            builder,
            number,
            path,
        } = c;
        if builder.num_entries() == 0 && !builder.has_range_tombstones() {
            drop(builder);
            let _ = self.env.remove_file(&path);
            return Ok(());
        }
        let charged = std::mem::take(&mut self.charged);
        let result = builder.finish().and_then(|props| {
            if let Some(limiter) = self.limiter {
                limiter.wrote(props.file_size.saturating_sub(charged));
            }
            let table = self.cache.get(number)?;
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
                range_deletions: props.range_deletions,
            })
        });
        match result {
            Ok(meta) => {
                self.done.push(meta);
                Ok(())
            }
            Err(e) => {
                self.cache.evict(number);
                let _ = self.env.remove_file(&path);
                Err(e)
            }
        }
    }

    /// Finishes the last table and returns every table written, in key order. The files are
    /// synced; their directory entry is the caller's to sync (before naming them anywhere).
    pub fn finish(mut self) -> Result<Vec<FileMeta>> {
        self.finish_current(true)?;
        self.finished = true;
        Ok(std::mem::take(&mut self.done))
    }
}

impl Drop for TableWriter<'_> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        if let Some(c) = self.current.take() {
            drop(c.builder);
            let _ = self.env.remove_file(&c.path);
        }
        for meta in self.done.drain(..) {
            self.cache.evict(meta.number);
            let _ = self
                .env
                .remove_file(&filename::table_path(self.dir, meta.number));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::env::StdEnv;
    use crate::util::key::{self, Kind};
    use crate::sstable::ReadCounters;

    fn tables_in(dir: &Path) -> usize {
        std::fs::read_dir(dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "sst")
            })
            .count()
    }

    fn setup() -> (tempfile::TempDir, Arc<dyn Env>, TableCache, Options) {
        let dir = tempfile::tempdir().unwrap();
        let env: Arc<dyn Env> = Arc::new(StdEnv);
        let cache = TableCache::new(
            Arc::clone(&env),
            dir.path().into(),
            16,
            None,
            Arc::new(ReadCounters::default()),
        );
        (dir, env, cache, Options::default())
    }

    #[test]
    fn cuts_at_the_target_between_user_keys_and_finishes_every_table() {
        let (dir, env, cache, opts) = setup();
        let mut n = 10;
        let mut numbers = || {
            n += 1;
            n
        };
        let mut w = TableWriter::new(
            env.as_ref(),
            dir.path(),
            &cache,
            &opts,
            1,
            opts.filter_with_bits(0, 10.0),
            4096,
            &mut numbers,
        );
        for i in 0..2000u32 {
            let k = format!("key{i:06}");
            // Two versions of each key: a cut must never fall between them.
            w.add(&key::encode(k.as_bytes(), 10, Kind::Put), &[7; 50])
                .unwrap();
            w.add(&key::encode(k.as_bytes(), 5, Kind::Put), &[8; 50])
                .unwrap();
        }
        let metas = w.finish().unwrap();
        assert!(metas.len() > 5, "{} tables", metas.len());
        assert_eq!(tables_in(dir.path()), metas.len());
        for pair in metas.windows(2) {
            assert!(key::user_key(&pair[0].largest) < key::user_key(&pair[1].smallest));
        }
        assert!(metas.iter().all(|m| m.filter_bits_per_key == 10.0));
        assert_eq!(metas.iter().map(|m| m.entries).sum::<u64>(), 4000);
    }

    /// A tombstone spanning many output tables is cut where the tables are: each table holds
    /// the part between its neighbours' cuts, its key range covers that part, the tables stay
    /// disjoint, and together they hold the whole tombstone (plus the part past the last key).
    #[test]
    fn range_tombstones_are_cut_at_table_boundaries() {
        use crate::range_del::{Fragments, RangeTombstone};
        let (dir, env, cache, opts) = setup();
        let mut n = 10;
        let mut numbers = || {
            n += 1;
            n
        };
        let whole = RangeTombstone {
            start: b"key000100".to_vec(),
            end: b"zzz".to_vec(),
            seq: 99,
        };
        let mut w = TableWriter::new(
            env.as_ref(),
            dir.path(),
            &cache,
            &opts,
            1,
            None,
            4096,
            &mut numbers,
        )
        .with_range_tombstones(Some(Arc::new(Fragments::build(std::slice::from_ref(
            &whole,
        )))));
        for i in 0..2000u32 {
            let k = format!("key{i:06}");
            w.add(&key::encode(k.as_bytes(), 10, Kind::Put), &[7; 50])
                .unwrap();
        }
        let metas = w.finish().unwrap();
        assert!(metas.len() > 5, "{} tables", metas.len());
        let mut pieces: Vec<RangeTombstone> = Vec::new();
        for m in &metas {
            let t = cache.get(m.number).unwrap();
            let got = t
                .range_fragments()
                .map(|f| f.tombstones())
                .unwrap_or_default();
            assert_eq!(m.range_deletions, got.len() as u64);
            for p in &got {
                assert!(key::user_key(&m.smallest) <= p.start.as_slice());
                assert!(key::compare(&p.largest_key(), &m.largest).is_le());
            }
            pieces.extend(got);
        }
        for pair in metas.windows(2) {
            assert!(key::compare(&pair[0].largest, &pair[1].smallest).is_lt());
            assert!(key::user_key(&pair[0].largest) < key::user_key(&pair[1].smallest));
        }
        // The pieces meet end to start and add up to the tombstone.
        assert_eq!(pieces.first().unwrap().start, whole.start);
        assert_eq!(pieces.last().unwrap().end, whole.end);
        for pair in pieces.windows(2) {
            assert_eq!(pair[0].end, pair[1].start);
        }
        assert!(pieces.len() > 3 && pieces.iter().all(|p| p.seq == 99));
    }

    /// Regression: the flush loop leaked a half-written table when its input failed.
    #[test]
    fn an_error_or_an_unfinished_writer_leaves_no_file_behind() {
        let (dir, env, cache, opts) = setup();
        let mut n = 10;
        let mut numbers = || {
            n += 1;
            n
        };
        let mut w = TableWriter::new(
            env.as_ref(),
            dir.path(),
            &cache,
            &opts,
            1,
            None,
            1024,
            &mut numbers,
        );
        for i in 0..500u32 {
            let k = format!("key{i:06}");
            w.add(&key::encode(k.as_bytes(), 1, Kind::Put), &[1; 40])
                .unwrap();
        }
        assert!(tables_in(dir.path()) > 2);
        // Out of order: the writer refuses it; the caller's `?` drops the writer.
        assert!(w.add(&key::encode(b"a", 1, Kind::Put), b"x").is_err());
        drop(w);
        assert_eq!(tables_in(dir.path()), 0);
    }
}
