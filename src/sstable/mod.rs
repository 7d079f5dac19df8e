//! Sorted string tables: immutable files of sorted internal keys with a Bloom filter block.
//! See `docs/FORMAT.md`.
