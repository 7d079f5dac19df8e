//! The library half of kvctl: the W1 benchmark runner (`kvctl bench`, the `w1` example and
//! `benches/peers` share it) and the cluster administration client (`kvctl cluster`). The
//! command-line tool itself is `src/main.rs`.

pub mod bench;
pub mod cluster_admin;
