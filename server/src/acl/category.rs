//! Redis 7's command categories (`@read`, `@hash`, `@dangerous`, ...): which commands each
//! holds, from a command's group, kind and flags in the command table.

use crate::cmd::{Command, Kind};

/// Redis 7's command categories, in the order `ACL CAT` lists them.
pub const CATEGORIES: &[&str] = &[
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

/// Whether command `c` is in ACL category `cat` (from its group, kind and flags).
pub fn in_category(c: &Command, cat: &str) -> bool {
    let flag = |f: &str| c.flags.contains(&f);
    match cat {
        "keyspace" => matches!(c.group, "generic" | "keyspace"),
        "read" => matches!(c.kind, Kind::Read(_)) || flag("readonly"),
        "write" => matches!(c.kind, Kind::Write(_) | Kind::Exclusive(_)) || flag("write"),
        "set" | "list" | "hash" | "string" | "bitmap" | "hyperloglog" | "geo" | "stream"
        | "pubsub" | "connection" | "scripting" => c.group == cat,
        "sortedset" => c.group == "sorted-set",
        "transaction" => c.group == "transactions",
        "admin" => flag("admin"),
        "dangerous" => flag("admin") || matches!(c.name, "keys" | "flushall" | "flushdb" | "sort"),
        "fast" => flag("fast"),
        "slow" => !flag("fast"),
        "blocking" => matches!(c.kind, Kind::Blocking(_)) || flag("blocking"),
        _ => false,
    }
}
