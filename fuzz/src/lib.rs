//! The fuzz drivers, shared by the cargo-fuzz targets and (through `#[path]`) by the root
//! crate's `tests/fuzz_regressions.rs`, which replays every input kept in `regressions/`.

#[path = "drivers.rs"]
pub mod drivers;
