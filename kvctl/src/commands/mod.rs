//! One module per subcommand: its `Args` and its `run`.

pub mod bench;
pub mod checkpoint;
pub mod cluster;
pub mod compact;
pub mod dedup;
pub mod dedup_approx;
pub mod delete;
pub mod delete_range;
pub mod explain;
pub mod filter;
pub mod get;
pub mod load;
pub mod put;
pub mod repair;
pub mod scan;
pub mod serve;
pub mod sst;
pub mod sst_dump;
pub mod stats;
pub mod verify;
