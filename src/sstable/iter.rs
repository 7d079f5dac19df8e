//! Iterating a whole table: the index picks the data block, a [`BlockIter`] walks it, and
//! reaching a block's end moves to the next block.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::sstable::block::BlockIter;
use crate::sstable::table::Table;
use crate::util::key;

/// A forward iterator over a table's entries, owning a reference to the table.
#[derive(Debug)]
pub struct TableIter {
    table: Arc<Table>,
    /// Index position of the block `data` walks (== index.len() when exhausted).
    block_pos: usize,
    data: Option<BlockIter>,
    /// The last key of the previous block, to check order across block boundaries.
    boundary_key: Vec<u8>,
}

// Made here rather than in table.rs so that the table reader does not import its iterator,
// which imports it.
impl Table {
    internal_item! {
        /// An iterator over all entries (reads blocks through the cache; ignores the filter).
        fn iter(self: &Arc<Self>) -> TableIter {
            TableIter::new(self.clone())
        }
    }
}

impl TableIter {
    pub(crate) fn new(table: Arc<Table>) -> Self {
        let end = table.index.len();
        TableIter {
            table,
            block_pos: end,
            data: None,
            boundary_key: Vec::new(),
        }
    }

    fn invalidate(&mut self) {
        self.data = None;
        self.block_pos = self.table.index.len();
    }

    fn locate(&self, e: Error) -> Error {
        match self.table.index.get(self.block_pos) {
            Some(handle) => e.located(self.table.path(), handle.offset),
            None => e.located(self.table.path(), 0),
        }
    }

    /// Opens the block at `block_pos` (no positioning inside it).
    fn open_block(&mut self) -> Result<()> {
        if self.block_pos >= self.table.index.len() {
            self.data = None;
            return Ok(());
        }
        let (block, _) = self.table.data_block(self.block_pos)?;
        self.data = Some(BlockIter::new(block, key::compare));
        Ok(())
    }

    /// While the current block is exhausted, moves to the start of the next one.
    fn skip_exhausted_blocks(&mut self) -> Result<()> {
        while self.data.as_ref().is_some_and(|d| !d.valid()) {
            self.block_pos += 1;
            self.open_block()?;
            if let Some(d) = &mut self.data {
                d.seek_to_first()?;
                if d.valid()
                    && !self.boundary_key.is_empty()
                    && key::compare(&self.boundary_key, d.key()) != Ordering::Less
                {
                    return Err(Error::corrupt_bytes(
                        0,
                        "first key of block does not sort after the previous block's last key",
                    ));
                }
            }
        }
        Ok(())
    }

    /// While the current block is exhausted backwards, moves to the end of the previous one.
    fn skip_exhausted_blocks_back(&mut self) -> Result<()> {
        while self.data.as_ref().is_some_and(|d| !d.valid()) {
            if self.block_pos == 0 {
                self.data = None;
                return Ok(());
            }
            self.block_pos -= 1;
            self.open_block()?;
            if let Some(d) = &mut self.data {
                d.seek_to_last()?;
            }
        }
        Ok(())
    }

    fn guarded(&mut self, f: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        match f(self) {
            Ok(()) => Ok(()),
            Err(e) => {
                let e = self.locate(e);
                self.invalidate();
                Err(e)
            }
        }
    }
}

impl InternalIterator for TableIter {
    fn seek_to_first(&mut self) -> Result<()> {
        self.guarded(|it| {
            it.block_pos = 0;
            it.boundary_key.clear();
            it.open_block()?;
            if let Some(d) = &mut it.data {
                d.seek_to_first()?;
            }
            it.skip_exhausted_blocks()
        })
    }

    fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.guarded(|it| {
            it.block_pos = it.table.index_seek(target);
            it.boundary_key.clear();
            it.open_block()?;
            if let Some(d) = &mut it.data {
                d.seek(target)?;
            }
            it.skip_exhausted_blocks()
        })
    }

    fn next(&mut self) -> Result<()> {
        self.guarded(|it| {
            let Some(d) = &mut it.data else {
                return Ok(());
            };
            d.advance()?;
            if !d.valid() {
                // Remember the block's last key to check the next block against it.
                it.boundary_key.clear();
                it.boundary_key.extend_from_slice(d.last_key_seen());
            }
            it.skip_exhausted_blocks()
        })
    }

    fn seek_to_last(&mut self) -> Result<()> {
        self.guarded(|it| {
            it.boundary_key.clear();
            let Some(last) = it.table.index.len().checked_sub(1) else {
                it.data = None;
                return Ok(());
            };
            it.block_pos = last;
            it.open_block()?;
            if let Some(d) = &mut it.data {
                d.seek_to_last()?;
            }
            it.skip_exhausted_blocks_back()
        })
    }

    fn prev(&mut self) -> Result<()> {
        self.guarded(|it| {
            // Cross-block order is checked going forward only; a block's own order is checked
            // whichever way it is walked.
            it.boundary_key.clear();
            let Some(d) = &mut it.data else {
                return Ok(());
            };
            d.prev()?;
            it.skip_exhausted_blocks_back()
        })
    }

    fn valid(&self) -> bool {
        self.data.as_ref().is_some_and(|d| d.valid())
    }

    fn key(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |d| d.key())
    }

    fn value(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |d| d.value())
    }
}
