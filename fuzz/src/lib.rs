//! The fuzz drivers, shared by the cargo-fuzz targets and (through `#[path]`) by the root
//! crate's unit test `src/fuzz_regressions.rs`, which replays every input kept in
//! `regressions/`.

#[path = "drivers.rs"]
pub mod drivers;
