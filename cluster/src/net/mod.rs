//! The transport: HTTP between nodes for openraft's RPCs (AppendEntries, Vote, snapshot
//! streams), forwarded client operations and status.

pub(crate) mod client;
pub(crate) mod health;
pub(crate) mod routes;
pub(crate) mod server;
pub(crate) mod wire;
