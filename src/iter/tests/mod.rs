//! The iterators' tests: the merging iterator and the user-facing `DbIter`.

mod db;
mod merge;
