//! The keyspace across types: databases, renames and DUMP/RESTORE, expiry, WATCH, atomic
//! multi-key reads, OBJECT, and a model of the whole keyspace under random commands.

#[path = "../common/mod.rs"]
mod common;

mod databases;
mod expiry;
mod memory_usage;
mod mget_atomicity;
mod model;
mod object_encoding;
mod renames;
mod watch;
