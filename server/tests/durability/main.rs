//! Nothing acknowledged is lost: kill -9 and restart, a full disk, the state machine a cluster
//! replicates, and the RESP parser's fuzz regressions.

#[path = "../common/mod.rs"]
mod common;

mod disk_full;
mod durability;
mod fuzz_regressions;
mod replicated_apply;
