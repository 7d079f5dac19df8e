//! placeholder docs
#![deny(missing_docs)]
#![deny(unsafe_code)]
#![warn(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::dbg_macro,
    clippy::todo
)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        reason = "a test that cannot go on panics with the error"
    )
)]

mod codec;
mod error;
mod fsutil;
mod keys;
pub mod kv;
pub mod linearizability;
mod log_store;
mod machine;
mod net;
mod node;
pub mod proxy;
mod sm_meta;
mod snapshot;
mod state_db;
mod state_machine;
mod types;

#[cfg(test)]
mod tests;

pub use error::{Error, Result};
pub use keys::RESERVED_PREFIX;
pub use machine::{Command, Machine, MachineError, seed_for};
pub use node::Node;
pub use node::config::{NodeConfig, parse_initial_cluster};
pub use node::status::{Member, PeerStatus, Role, Status};
pub use state_db::StateDb;
