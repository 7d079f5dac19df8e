//! kvctl's command-line tests: the built `kvctl` binary run as a user runs it, one module per
//! command or concern, grouped below by command family. One test binary (linking one binary
//! is cheaper than linking one per file); the shared kit is `tests/common`.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test that cannot go on panics with the error"
)]

#[path = "../common/mod.rs"]
mod common;

// Keys and values: put / get / delete / scan, ranges, bulk input, byte-exact I/O.
mod aliases;
mod basic;
mod bulk;
mod dedup_pipe;
mod delete_range;
mod oversized_key;
mod prefix_filter;

// Looking inside: stats, sst dump, explain traces, verify, repair, checkpoint.
mod checkpoint;
mod get_explain_json;
mod inspect;
mod repair;
mod scan_explain_json;
mod sst_dump_json;
mod verify;

// Standalone filters (`kvctl filter`).
mod filter;

// Serving: `kvctl serve`.
mod serve_db;
mod serve_options;

// Benchmarks: `kvctl bench` as a command.
mod bench;

// What every command shares: creating or refusing a database, read-only opens, errors and
// exit statuses, output and JSON conventions, help, and the README's session.
mod create;
mod errors;
mod exit_codes;
mod help;
mod json_format;
mod output;
mod read_only;
mod readme_session;
