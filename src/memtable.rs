//! The in-memory table of recent writes.
