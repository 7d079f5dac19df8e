//! Tests of the storage layer against openraft's own suite and of the state machine's
//! exactly-once application and startup restore, on the crate's private types.

mod dedup;
mod log_gc;
mod log_upgrade;
mod restore;
mod suite;
