//! How big a filter should be: the Bloom formulas ([`math`]), a filter's parameters from what
//! its caller asks for (`params`), what a filled filter's bits say (`estimate`), and how a
//! tree's filter memory is split over its levels (Monkey, [`monkey`]: in closed form for Bloom
//! filters everywhere, numerically across kinds in `monkey::kinds`). The engine's use of
//! Monkey (the tree's shape, the bits per key a table gets) is `compaction::filter_budget`.

pub(crate) mod estimate;
pub mod math;
pub mod monkey;
pub(crate) mod params;
