//! Helpers every layer shares and that know nothing of the layers above: integer encodings
//! ([`coding`]), the internal key format ([`key`]), the names of a database's files
//! ([`filename`]) and a token bucket for pacing background writes ([`rate`]).
//!
//! They depend on [`crate::error`] alone, so `sstable`, `wal`, `memtable` and `db` can all
//! use them without an import pointing back up. The internal key lives here rather than in
//! `db/` (where LevelDB keeps its `dbformat`) because tables store it: `sstable` re-exports
//! it as `sstable::internal_key` for tools that read table files.

internal_modules!(coding, filename, key);
pub(crate) mod rate;
