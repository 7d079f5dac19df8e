//! The MANIFEST log of version edits and the CURRENT pointer. See `docs/FORMAT.md`.
