//! The log's tests: round trips, torn tails, damage, and a property test over all three.

mod corruption;
mod proptest;
mod roundtrip;
mod truncation;
