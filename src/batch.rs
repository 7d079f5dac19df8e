//! Atomic write batches.
