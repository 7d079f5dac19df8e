//! Iterators over internal keys, and the merging that turns many sources into one sorted view.

use crate::error::Result;

/// A cursor over entries sorted by internal key (see [`crate::key::compare`]).
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
}

pub mod db_iter;
pub mod level;
pub mod merge;

#[cfg(test)]
mod tests;
