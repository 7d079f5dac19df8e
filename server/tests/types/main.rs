//! Each data type's commands, replies and errors as Redis 7's, and a model-based test per type
//! that checks random command sequences against an in-memory model.

#[path = "../common/mod.rs"]
mod common;

mod bitstring_model;
mod bitstrings;
mod bloom_dump;
mod cuckoo;
mod hash_model;
mod hashes;
mod hll;
mod incrbyfloat;
mod list_model;
mod lists;
mod setops;
mod sort;
mod streams;
mod zset_algebra;
mod zset_model;
mod zsets;
