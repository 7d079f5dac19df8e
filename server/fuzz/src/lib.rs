//! The fuzz driver, shared by the cargo-fuzz target and (through `#[path]`) by
//! `server/tests/durability/fuzz_regressions.rs`, which replays every input kept in `regressions/`.

#[path = "drivers.rs"]
pub mod drivers;
