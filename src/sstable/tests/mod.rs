//! The table tests: round trips, damage, filter read amplification and a property test.

mod compression;
mod corruption;
mod proptest;
mod read_amp;
mod roundtrip;
