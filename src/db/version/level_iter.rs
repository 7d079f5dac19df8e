//! Iteration over one sorted, non-overlapping level, opening each table only when reached:
//! through the table cache for reads, or with readers of its own for compactions.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::error::Result;
use crate::iter::InternalIterator;
use crate::util::key;
use crate::sstable::{ReadCounters, TableIter};
use super::TableFile;

/// How a [`LevelIter`] opens its tables.
enum Readers {
    /// The file's pinned reader or the table cache's, as lookups and scans read.
    Cached,
    /// A reader of its own per table, outside the table cache, its reads counted in these
    /// counters (a compaction's reads are not lookups).
    Uncached(Arc<ReadCounters>),
}

/// A concatenation of the tables of one level (level 1 or deeper), in key order. It holds
/// one table open at a time: the one before is closed before the next is opened.
pub struct LevelIter {
    files: Vec<Arc<TableFile>>,
    index: usize,
    current: Option<TableIter>,
    readers: Readers,
}

impl LevelIter {
    /// Iterates `files`, which must be sorted by key and not overlap, through the table
    /// cache.
    pub fn new(files: Vec<Arc<TableFile>>) -> LevelIter {
        LevelIter {
            files,
            index: 0,
            current: None,
            readers: Readers::Cached,
        }
    }

    /// Iterates `files` (sorted by key, not overlapping) as a compaction reads its inputs:
    /// each table with a reader of its own, outside the table cache, counted in `counters`.
    /// A compaction holds a few files open this way, not all its inputs.
    pub fn uncached(files: Vec<Arc<TableFile>>, counters: &Arc<ReadCounters>) -> LevelIter {
        LevelIter {
            readers: Readers::Uncached(Arc::clone(counters)),
            ..LevelIter::new(files)
        }
    }

    fn open(&mut self, index: usize) -> Result<()> {
        self.index = index;
        self.current = None;
        let Some(f) = self.files.get(index) else {
            return Ok(());
        };
        self.current = Some(match &self.readers {
            Readers::Cached => f.reader()?.iter(),
            Readers::Uncached(counters) => Arc::new(f.open_uncached(counters)?).iter(),
        });
        Ok(())
    }

    /// Moves past exhausted tables until positioned at an entry or at the end.
    fn skip_empty_tables(&mut self) -> Result<()> {
        while self.current.as_ref().is_some_and(|it| !it.valid()) {
            self.open(self.index + 1)?;
            if let Some(it) = self.current.as_mut() {
                it.seek_to_first()?;
            }
        }
        Ok(())
    }

    /// Moves back past exhausted tables until positioned at an entry or before the first.
    fn skip_empty_tables_back(&mut self) -> Result<()> {
        while self.current.as_ref().is_some_and(|it| !it.valid()) {
            if self.index == 0 {
                self.current = None;
                return Ok(());
            }
            self.open(self.index - 1)?;
            if let Some(it) = self.current.as_mut() {
                it.seek_to_last()?;
            }
        }
        Ok(())
    }
}

impl InternalIterator for LevelIter {
    fn seek_to_first(&mut self) -> Result<()> {
        self.open(0)?;
        if let Some(it) = self.current.as_mut() {
            it.seek_to_first()?;
        }
        self.skip_empty_tables()
    }

    fn seek(&mut self, target: &[u8]) -> Result<()> {
        let i = self
            .files
            .partition_point(|f| key::compare(&f.meta.largest, target) == Ordering::Less);
        self.open(i)?;
        if let Some(it) = self.current.as_mut() {
            it.seek(target)?;
        }
        self.skip_empty_tables()
    }

    fn next(&mut self) -> Result<()> {
        if let Some(it) = self.current.as_mut() {
            it.next()?;
        }
        self.skip_empty_tables()
    }

    fn seek_to_last(&mut self) -> Result<()> {
        let Some(last) = self.files.len().checked_sub(1) else {
            self.current = None;
            return Ok(());
        };
        self.open(last)?;
        if let Some(it) = self.current.as_mut() {
            it.seek_to_last()?;
        }
        self.skip_empty_tables_back()
    }

    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        // The first table whose largest key is >= target holds the answer unless all of its
        // keys are above the target; then the one before it does.
        let i = self
            .files
            .partition_point(|f| key::compare(&f.meta.largest, target) == Ordering::Less);
        if i == self.files.len() {
            return self.seek_to_last();
        }
        self.open(i)?;
        if let Some(it) = self.current.as_mut() {
            it.seek_for_prev(target)?;
        }
        self.skip_empty_tables_back()
    }

    fn prev(&mut self) -> Result<()> {
        if let Some(it) = self.current.as_mut() {
            it.prev()?;
        }
        self.skip_empty_tables_back()
    }

    fn valid(&self) -> bool {
        self.current.as_ref().is_some_and(|it| it.valid())
    }

    fn key(&self) -> &[u8] {
        self.current.as_ref().map_or(&[], |it| it.key())
    }

    fn value(&self) -> &[u8] {
        self.current.as_ref().map_or(&[], |it| it.value())
    }
}

/// An iterator that is empty except for the error it reports on first use: lets a scan
/// surface a table that failed to open as an `Err` item instead of failing up front.
pub struct ErrorIter(Option<crate::error::Error>);

impl ErrorIter {
    /// Wraps `err`.
    pub fn new(err: crate::error::Error) -> ErrorIter {
        ErrorIter(Some(err))
    }
    fn fail(&mut self) -> Result<()> {
        match self.0.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl InternalIterator for ErrorIter {
    fn seek_to_first(&mut self) -> Result<()> {
        self.fail()
    }
    fn seek(&mut self, _target: &[u8]) -> Result<()> {
        self.fail()
    }
    fn next(&mut self) -> Result<()> {
        self.fail()
    }
    fn seek_to_last(&mut self) -> Result<()> {
        self.fail()
    }
    fn seek_for_prev(&mut self, _target: &[u8]) -> Result<()> {
        self.fail()
    }
    fn prev(&mut self) -> Result<()> {
        self.fail()
    }
    fn valid(&self) -> bool {
        false
    }
    fn key(&self) -> &[u8] {
        &[]
    }
    fn value(&self) -> &[u8] {
        &[]
    }
}
