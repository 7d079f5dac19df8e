//! # bloomkv-server
//!
//! A Redis-protocol server in front of the [`bloomkv`] engine: every Redis client, `redis-cli`
//! and `redis-benchmark` work unchanged, and the data lives in the LSM tree on disk. Speaks
//! RESP2 and RESP3, pipelines, serves many clients, and offers strings, bitmaps, sets, hashes,
//! lists, sorted sets, streams and RedisBloom-compatible scalable Bloom filters (`BF.*`) that
//! persist, with expiry, transactions (MULTI/EXEC, WATCH), Lua scripting (EVAL) and pub/sub.
//!
//! ```no_run
//! # fn main() -> Result<(), bloomkv_server::ServerError> {
//! use bloomkv_server::{Config, Server};
//!
//! let server = Server::start(Config { dir: "/tmp/kv".into(), port: 0, ..Config::default() })?;
//! println!("redis-cli -p {}", server.local_addr().port());
//! server.shutdown()?;
//! # Ok(())
//! # }
//! ```
//!
//! [`run`] is what the `bloomkv-server` binary calls: it serves until SIGINT or SIGTERM.
//! See `docs/SERVER.md` for the flags, commands, data model and durability.

mod acl;
mod blocking;
mod clients;
pub mod cmd;
pub mod config;
mod conn;
mod fasthash;
mod glob;
mod housekeeping;
mod info;
pub mod keyslot;
mod latency;
pub mod log;
mod notify;
mod pause;
mod pubsub;
pub mod replica;
pub mod resp;
mod saves;
mod script;
mod server;
mod slowlog;
mod stats;
mod store;

pub use config::{AppendFsync, Config};
pub use server::{Server, ServerError, Shared, run};
