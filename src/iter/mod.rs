//! Iterators over internal keys, and the merging that turns many sources into one sorted view.

use crate::error::Result;

/// A cursor over entries sorted by internal key (see [`crate::util::key::compare`]).
///
/// After any positioning call, either [`InternalIterator::valid`] is true and `key`/`value`
/// describe the current entry, or the iterator is exhausted. Errors are returned by the call
/// that hit them; the iterator is then invalid.
pub trait InternalIterator: Send {
    /// Positions at the first entry.
    fn seek_to_first(&mut self) -> Result<()>;
    /// Positions at the first entry whose internal key is `>= target`.
    fn seek(&mut self, target: &[u8]) -> Result<()>;
    /// Moves to the next entry. REQUIRES: `valid()`.
    fn next(&mut self) -> Result<()>;
    /// Whether the iterator is positioned at an entry.
    fn valid(&self) -> bool;
    /// The current internal key. REQUIRES: `valid()`.
    fn key(&self) -> &[u8];
    /// The current value. REQUIRES: `valid()`.
    fn value(&self) -> &[u8];

    /// Positions at the last entry.
    ///
    /// Reverse iteration is optional for implementors: the default reports
    /// [`crate::Error::InvalidArgument`], so forward-only iterators keep compiling.
    fn seek_to_last(&mut self) -> Result<()> {
        Err(reverse_unsupported())
    }

    /// Moves to the previous entry (the iterator becomes invalid before the first one).
    /// REQUIRES: `valid()`. The default reports [`crate::Error::InvalidArgument`].
    fn prev(&mut self) -> Result<()> {
        Err(reverse_unsupported())
    }

    /// Positions at the last entry whose internal key is `<= target`.
    ///
    /// The default seeks forward and steps back once (or goes to the last entry), which is
    /// right for any iterator that implements [`InternalIterator::prev`] and
    /// [`InternalIterator::seek_to_last`].
    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        self.seek(target)?;
        if !self.valid() {
            return self.seek_to_last();
        }
        if crate::util::key::compare(self.key(), target) == std::cmp::Ordering::Greater {
            self.prev()?;
        }
        Ok(())
    }
}

fn reverse_unsupported() -> crate::error::Error {
    crate::error::Error::InvalidArgument("this iterator does not support reverse iteration".into())
}

pub mod cursor;
pub mod db_iter;
pub mod merge;

#[cfg(test)]
mod tests;
