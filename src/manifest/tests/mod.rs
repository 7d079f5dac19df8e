//! The manifest's tests: CURRENT, version edits and the manifest log.

mod current;
mod edit;
mod log;
