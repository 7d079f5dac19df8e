//! The write-ahead log. See `docs/FORMAT.md`.
