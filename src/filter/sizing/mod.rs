//! How big a filter should be: the Bloom formulas ([`math`]), a filter's parameters from what
//! its caller asks for (`params`), what a filled one's bits say (`estimate`), and how a tree's filter memory
//! is split over its levels (Monkey: [`monkey`] for Bloom filters everywhere, `monkey_kinds`
//! across kinds). The engine's use of Monkey (the tree's shape, the bits per key a table gets)
//! is `compaction::filter_budget`.

pub(crate) mod estimate;
pub mod math;
pub mod monkey;
pub(crate) mod monkey_kinds;
pub(crate) mod params;
