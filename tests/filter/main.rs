//! Filters: the standalone filters, the table filter policies and what they cost and decode.
//!
//! One test binary per layer (linking one binary is cheaper than linking one per scenario);
//! one scenario per file.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

#[path = "../common/mod.rs"]
mod common;

mod bytes;
mod fpr;
mod kinds_model;
mod large;
mod policy;
mod prefix_model;
mod props;
mod set_ops;
mod size;
mod standalone;
mod static_sets;
