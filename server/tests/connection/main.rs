//! What a client sees of the server as a whole: the protocol, the command table, server and
//! client administration, flags, pub/sub, blocking commands and scripts.

#[path = "../common/mod.rs"]
mod common;

mod acl;
mod blocking;
mod cli;
mod commands;
mod functions;
mod latency;
mod lua_libs;
mod monitor;
mod notify;
mod pause;
mod protocol;
mod pubsub;
mod scripting;
mod server_admin;
mod wait;
