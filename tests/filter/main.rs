//! Filters: the standalone filters, the table filter policies and what they cost and decode.
//!
//! One test binary per layer (linking one binary is cheaper than linking one per scenario);
//! one scenario per file.

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
