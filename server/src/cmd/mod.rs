//! The command table: names, arities, flags and key positions (what COMMAND reports and
//! what the dispatcher checks and locks), and the data commands' handlers.

pub mod blocking;
pub mod bloom;
pub mod cuckoo;
pub mod dump;
pub mod expiry;
pub mod filter_dump;
pub mod functions;
pub mod geo;
pub mod getkeys;
pub mod hashes;
pub mod hll;
pub mod keyspace;
pub mod lists;
pub mod longdouble;
pub mod memory;
pub mod object;
pub mod random;
pub mod scan;
pub mod sets;
pub mod sort;
pub mod streams;
pub mod strings;
pub mod zsets;

use bytes::Bytes;

use crate::resp::Reply;
use crate::script;
use crate::store::{R, Txn};

/// Redis's type error.
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
/// Redis's integer error (without the `ERR ` code).
pub const NOT_INT: &str = "value is not an integer or out of range";

/// A data command's handler: runs against a write set; the dispatcher commits it.
pub type Handler = fn(&mut Txn<'_>, &[Bytes]) -> R;

/// How a command runs.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// Reads only: runs without locks.
    Read(Handler),
    /// Writes its keys: runs under their stripe locks.
    Write(Handler),
    /// Writes anything: runs with every other writer locked out.
    Exclusive(Handler),
    /// Pops, or blocks the client until a push serves it (`crate::blocking`); runs as a
    /// write command, and inside MULTI answers as if it timed out.
    Blocking(blocking::BlockHandler),
    /// Handled by the connection (connection state, server info, transactions).
    Conn,
}

/// One command of the table.
#[derive(Clone, Copy, Debug)]
pub struct Command {
    /// Lowercase name.
    pub name: &'static str,
    /// Redis arity: `n` exactly `n` arguments (name included), `-n` at least `n`.
    pub arity: i32,
    /// How it runs.
    pub kind: Kind,
    /// Position of the first key (0: no keys).
    pub first_key: i32,
    /// Position of the last key (-1: the last argument).
    pub last_key: i32,
    /// Step between keys.
    pub step: i32,
    /// Group for COMMAND DOCS.
    pub group: &'static str,
    /// One-line summary for COMMAND DOCS.
    pub summary: &'static str,
    /// Flags for COMMAND INFO.
    pub flags: &'static [&'static str],
}

impl Command {
    /// True when `argc` arguments (name included) satisfy the arity.
    pub fn arity_ok(&self, argc: usize) -> bool {
        let a = self.arity;
        if a >= 0 {
            argc == a as usize
        } else {
            argc >= (-a) as usize
        }
    }

    /// Indices of the key arguments in a request of `argc` arguments.
    pub fn key_positions(&self, argc: usize) -> impl Iterator<Item = usize> {
        let first = self.first_key.max(0) as usize;
        let last = if self.last_key < 0 {
            (argc as i64 + i64::from(self.last_key)).max(0) as usize
        } else {
            self.last_key as usize
        };
        let step = self.step.max(1) as usize;
        let n = if first == 0 || first >= argc {
            0
        } else {
            last.min(argc - 1).saturating_sub(first) / step + 1
        };
        (0..n).map(move |i| first + i * step)
    }
}

const W: &[&str] = &["write"];
const RO: &[&str] = &["readonly", "fast"];
const C: &[&str] = &["fast"];

macro_rules! cmd {
    ($name:expr, $arity:expr, $kind:expr, $f:expr, $l:expr, $s:expr, $group:expr, $flags:expr, $sum:expr) => {
        Command {
            name: $name,
            arity: $arity,
            kind: $kind,
            first_key: $f,
            last_key: $l,
            step: $s,
            group: $group,
            flags: $flags,
            summary: $sum,
        }
    };
}

use Kind::{Blocking, Conn, Exclusive, Read, Write};

/// Every command the server knows.
#[rustfmt::skip]
pub static COMMANDS: &[Command] = &[
    // connection and server
    cmd!("ping", -1, Conn, 0, 0, 0, "connection", C, "Returns the server's liveliness response."),
    cmd!("echo", 2, Conn, 0, 0, 0, "connection", C, "Returns the given string."),
    cmd!("hello", -1, Conn, 0, 0, 0, "connection", C, "Handshakes with the server (protocol version, auth, name)."),
    cmd!("auth", -2, Conn, 0, 0, 0, "connection", C, "Authenticates the connection."),
    cmd!("select", 2, Conn, 0, 0, 0, "connection", C, "Changes the selected database."),
    cmd!("quit", -1, Conn, 0, 0, 0, "connection", C, "Closes the connection."),
    cmd!("shutdown", -1, Conn, 0, 0, 0, "server", &["admin", "noscript", "loading", "stale"], "Stops the server (the WAL is synced; every acknowledged write stays)."),
    cmd!("reset", 1, Conn, 0, 0, 0, "connection", C, "Resets the connection."),
    cmd!("client", -2, Conn, 0, 0, 0, "connection", C, "CLIENT SETNAME, GETNAME, ID, SETINFO."),
    cmd!("command", -1, Conn, 0, 0, 0, "server", &["loading", "stale"], "Returns information about commands."),
    cmd!("config", -2, Conn, 0, 0, 0, "server", &["admin", "loading", "stale"], "CONFIG GET of a few settings (read-only)."),
    cmd!("info", -1, Conn, 0, 0, 0, "server", &["loading", "stale"], "Returns information and statistics about the server."),
    cmd!("role", 1, Conn, 0, 0, 0, "server", &["noscript", "loading", "stale", "fast"], "Returns the node's replication role (cluster mode: its Raft role)."),
    cmd!("save", 1, Conn, 0, 0, 0, "server", &["admin", "noscript", "noasync", "no_async_loading"], "Flushes the memtable into a table and syncs (every write is already in the log)."),
    cmd!("bgsave", -1, Conn, 0, 0, 0, "server", &["admin", "noscript", "no_async_loading"], "SAVE on a thread of its own (SCHEDULE: after the running one)."),
    cmd!("bgrewriteaof", 1, Conn, 0, 0, 0, "server", &["admin", "noscript", "no_async_loading"], "Shortens the write-ahead log: a background save."),
    cmd!("lastsave", 1, Conn, 0, 0, 0, "server", &["loading", "stale", "fast"], "Returns the Unix time of the last successful save."),
    cmd!("wait", 3, Conn, 0, 0, 0, "generic", &["noscript"], "Blocks until the writes before it are on numreplicas replicas or the timeout passes; answers how many."),
    cmd!("latency", -2, Conn, 0, 0, 0, "server", &["admin", "noscript", "loading", "stale"], "Reads or resets the latency monitor's events (LATEST, HISTORY, RESET, HELP)."),
    cmd!("monitor", 1, Conn, 0, 0, 0, "server", &["admin", "noscript", "loading", "stale"], "Listens for all requests received by the server in real time."),
    cmd!("acl", -2, Conn, 0, 0, 0, "server", &["noscript", "loading", "stale"], "The one user, default: WHOAMI, USERS, LIST, GETUSER, CAT, DRYRUN, GENPASS, HELP."),
    cmd!("slowlog", -2, Conn, 0, 0, 0, "server", &["admin", "loading", "stale"], "Reads or resets the log of slow commands (GET, LEN, RESET, HELP)."),
    cmd!("cluster", -2, Conn, 0, 0, 0, "cluster", &["stale"], "Cluster mode: INFO, MYID, LEADER, ADDLEARNER, PROMOTE, REMOVE, SLOTS, SHARDS, NODES, KEYSLOT, COUNTKEYSINSLOT, GETKEYSINSLOT."),
    cmd!("readonly", 1, Conn, 0, 0, 0, "cluster", &["loading", "stale", "fast"], "Cluster mode: serve this connection's reads from the node's own data, without a read barrier."),
    cmd!("readwrite", 1, Conn, 0, 0, 0, "cluster", &["loading", "stale", "fast"], "Cluster mode: linearizable reads again (ends READONLY)."),
    cmd!("asking", 1, Conn, 0, 0, 0, "cluster", &["fast"], "Cluster mode: lets the next command address a slot being moved here (accepted; slots do not move yet)."),
    cmd!("dbsize", 1, Read(keyspace::dbsize), 0, 0, 0, "server", RO, "Returns the number of keys."),
    cmd!("randomkey", 1, Read(keyspace::randomkey), 0, 0, 0, "generic", &["readonly"], "Returns a random key of the selected database."),
    cmd!("flushdb", -1, Exclusive(keyspace::flushdb), 0, 0, 0, "server", W, "Removes all keys from the current database."),
    cmd!("swapdb", 3, Conn, 0, 0, 0, "keyspace", W, "Swaps two databases."),
    cmd!("flushall", -1, Exclusive(keyspace::flushall), 0, 0, 0, "server", W, "Removes all keys from all databases."),
    cmd!("multi", 1, Conn, 0, 0, 0, "transactions", C, "Starts a transaction."),
    cmd!("exec", 1, Conn, 0, 0, 0, "transactions", C, "Executes the queued commands as one atomic write batch."),
    cmd!("discard", 1, Conn, 0, 0, 0, "transactions", C, "Discards a transaction."),
    cmd!("watch", -2, Conn, 1, -1, 1, "transactions", C, "Makes EXEC fail if any of the keys changes before it."),
    cmd!("unwatch", 1, Conn, 0, 0, 0, "transactions", C, "Forgets every watched key."),
    // scripting (keys follow numkeys; EVAL locks every writer out, EVAL_RO reads a snapshot)
    cmd!("eval", -3, Exclusive(script::eval), 0, 0, 0, "scripting", &["noscript", "stale", "skip_monitor", "may_replicate", "no_mandatory_keys", "movablekeys"], "Runs a Lua script atomically."),
    cmd!("evalsha", -3, Exclusive(script::evalsha), 0, 0, 0, "scripting", &["noscript", "stale", "skip_monitor", "may_replicate", "no_mandatory_keys", "movablekeys"], "Runs a cached Lua script by its SHA1."),
    cmd!("eval_ro", -3, Read(script::eval_ro), 0, 0, 0, "scripting", &["readonly", "noscript", "stale", "skip_monitor", "no_mandatory_keys", "movablekeys"], "Runs a read-only Lua script."),
    cmd!("evalsha_ro", -3, Read(script::evalsha_ro), 0, 0, 0, "scripting", &["readonly", "noscript", "stale", "skip_monitor", "no_mandatory_keys", "movablekeys"], "Runs a cached read-only Lua script."),
    cmd!("script", -2, Conn, 0, 0, 0, "scripting", &["noscript"], "SCRIPT LOAD, EXISTS, FLUSH, KILL, HELP."),
    // functions (FUNCTION's LIST, DUMP, STATS, KILL and HELP run without the lock: cmd::functions)
    cmd!("function", -2, Exclusive(functions::function), 0, 0, 0, "scripting", &["noscript"], "FUNCTION LOAD, DELETE, FLUSH, LIST, DUMP, RESTORE, STATS, KILL, HELP."),
    cmd!("fcall", -3, Exclusive(functions::fcall), 0, 0, 0, "scripting", &["noscript", "stale", "skip_monitor", "no_mandatory_keys", "movablekeys"], "Invokes a function."),
    cmd!("fcall_ro", -3, Read(functions::fcall_ro), 0, 0, 0, "scripting", &["readonly", "noscript", "stale", "skip_monitor", "no_mandatory_keys", "movablekeys"], "Invokes a read-only function."),
    cmd!("time", 1, Read(keyspace::time), 0, 0, 0, "server", &["loading", "stale", "fast"], "Returns the server time (seconds, microseconds)."),
    // pub/sub
    cmd!("subscribe", -2, Conn, 0, 0, 0, "pubsub", &["pubsub"], "Listens for messages published to channels."),
    cmd!("psubscribe", -2, Conn, 0, 0, 0, "pubsub", &["pubsub"], "Listens for messages published to channels matching patterns."),
    cmd!("unsubscribe", -1, Conn, 0, 0, 0, "pubsub", &["pubsub"], "Stops listening to channels (all without arguments)."),
    cmd!("punsubscribe", -1, Conn, 0, 0, 0, "pubsub", &["pubsub"], "Stops listening to patterns (all without arguments)."),
    cmd!("publish", 3, Conn, 0, 0, 0, "pubsub", &["pubsub", "fast"], "Posts a message to a channel."),
    cmd!("pubsub", -2, Conn, 0, 0, 0, "pubsub", &["pubsub"], "PUBSUB CHANNELS, NUMSUB, NUMPAT, SHARDCHANNELS, SHARDNUMSUB."),
    cmd!("ssubscribe", -2, Conn, 1, -1, 1, "pubsub", &["pubsub"], "Listens for messages published to shard channels."),
    cmd!("sunsubscribe", -1, Conn, 1, -1, 1, "pubsub", &["pubsub"], "Stops listening to shard channels (all without arguments)."),
    cmd!("spublish", 3, Conn, 1, 1, 1, "pubsub", &["pubsub", "fast"], "Posts a message to a shard channel."),
    // strings and bitmaps
    cmd!("get", 2, Read(strings::get), 1, 1, 1, "string", RO, "Returns the string value of a key."),
    cmd!("set", -3, Write(strings::set), 1, 1, 1, "string", W, "Sets the string value of a key (NX, XX, GET, EX, PX, EXAT, PXAT, KEEPTTL)."),
    cmd!("setex", 4, Write(strings::setex), 1, 1, 1, "string", W, "Sets a key with a time to live in seconds."),
    cmd!("psetex", 4, Write(strings::psetex), 1, 1, 1, "string", W, "Sets a key with a time to live in milliseconds."),
    cmd!("getdel", 2, Write(strings::getdel), 1, 1, 1, "string", W, "Returns a string and deletes its key."),
    cmd!("getex", -2, Write(strings::getex), 1, 1, 1, "string", W, "Returns a string and sets or removes its time to live."),
    cmd!("setnx", 3, Write(strings::setnx), 1, 1, 1, "string", W, "Sets a key only if it does not exist."),
    cmd!("getset", 3, Write(strings::getset), 1, 1, 1, "string", W, "Sets a key and returns its previous value."),
    cmd!("mget", -2, Read(strings::mget), 1, -1, 1, "string", RO, "Returns the values of keys."),
    cmd!("mset", -3, Write(strings::mset), 1, -1, 2, "string", W, "Sets several keys atomically."),
    cmd!("msetnx", -3, Write(strings::msetnx), 1, -1, 2, "string", W, "Sets several keys only if none exists."),
    cmd!("incr", 2, Write(strings::incr), 1, 1, 1, "string", W, "Increments an integer value by one."),
    cmd!("incrby", 3, Write(strings::incrby), 1, 1, 1, "string", W, "Increments an integer value."),
    cmd!("decr", 2, Write(strings::decr), 1, 1, 1, "string", W, "Decrements an integer value by one."),
    cmd!("decrby", 3, Write(strings::decrby), 1, 1, 1, "string", W, "Decrements an integer value."),
    cmd!("incrbyfloat", 3, Write(strings::incrbyfloat), 1, 1, 1, "string", W, "Increments a floating-point value."),
    cmd!("append", 3, Write(strings::append), 1, 1, 1, "string", W, "Appends to a string."),
    cmd!("strlen", 2, Read(strings::strlen), 1, 1, 1, "string", RO, "Returns the length of a string."),
    cmd!("setbit", 4, Write(strings::setbit), 1, 1, 1, "bitmap", W, "Sets a bit of a string; returns its old value."),
    cmd!("getbit", 3, Read(strings::getbit), 1, 1, 1, "bitmap", RO, "Returns a bit of a string."),
    cmd!("bitcount", -2, Read(strings::bitcount), 1, 1, 1, "bitmap", RO, "Counts set bits."),
    cmd!("getrange", 4, Read(strings::getrange), 1, 1, 1, "string", &["readonly"], "Returns a substring of a string."),
    cmd!("substr", 4, Read(strings::getrange), 1, 1, 1, "string", &["readonly"], "Returns a substring of a string (GETRANGE's old name)."),
    cmd!("setrange", 4, Write(strings::setrange), 1, 1, 1, "string", W, "Overwrites part of a string from an offset."),
    cmd!("lcs", -3, Read(strings::lcs), 1, 2, 1, "string", &["readonly"], "Returns the longest common subsequence of two strings (LEN, IDX)."),
    cmd!("bitop", -4, Write(strings::bitop), 2, -1, 1, "bitmap", W, "Stores the AND, OR, XOR or NOT of strings."),
    cmd!("bitpos", -3, Read(strings::bitpos), 1, 1, 1, "bitmap", &["readonly"], "Returns the first set or clear bit in a range."),
    cmd!("bitfield", -2, Write(strings::bitfield), 1, 1, 1, "bitmap", W, "Gets, sets and increments integers at bit offsets (OVERFLOW)."),
    cmd!("bitfield_ro", -2, Read(strings::bitfield_ro), 1, 1, 1, "bitmap", RO, "Gets integers at bit offsets."),
    // HyperLogLog (PFCOUNT writes the cached estimate into the sketch, as Redis does)
    cmd!("pfadd", -2, Write(hll::pfadd), 1, 1, 1, "hyperloglog", &["write", "denyoom", "fast"], "Adds elements to a HyperLogLog sketch."),
    cmd!("pfcount", -2, Write(hll::pfcount), 1, -1, 1, "hyperloglog", &["readonly", "may_replicate"], "Estimates the distinct elements of the union of sketches."),
    cmd!("pfmerge", -2, Write(hll::pfmerge), 1, -1, 1, "hyperloglog", &["write", "denyoom"], "Merges sketches into a destination."),
    // keyspace
    cmd!("del", -2, Write(keyspace::del), 1, -1, 1, "generic", W, "Deletes keys with all their members."),
    cmd!("unlink", -2, Write(keyspace::del), 1, -1, 1, "generic", W, "Deletes keys (one metadata write each, as DEL)."),
    cmd!("exists", -2, Read(keyspace::exists), 1, -1, 1, "generic", RO, "Counts existing keys."),
    cmd!("touch", -2, Read(keyspace::exists), 1, -1, 1, "generic", RO, "Counts existing keys (access times are not tracked, so that is all it does)."),
    cmd!("type", 2, Read(keyspace::type_), 1, 1, 1, "generic", RO, "Returns the type of a key."),
    cmd!("rename", 3, Write(keyspace::rename), 1, 2, 1, "generic", W, "Renames a key (a collection's members are copied)."),
    cmd!("renamenx", 3, Write(keyspace::renamenx), 1, 2, 1, "generic", W, "Renames a key unless the new name exists."),
    cmd!("copy", -3, Write(keyspace::copy), 1, 2, 1, "generic", W, "Copies a key's value, to another database with DB."),
    cmd!("sort", -2, Exclusive(sort::sort), 1, 1, 1, "generic", &["write", "denyoom", "movablekeys"], "Sorts the elements of a list, set or sorted set, optionally storing the result."),
    cmd!("sort_ro", -2, Read(sort::sort_ro), 1, 1, 1, "generic", &["readonly", "movablekeys"], "Sorts the elements of a list, set or sorted set (read-only SORT)."),
    cmd!("move", 3, Write(keyspace::move_), 1, 1, 1, "generic", W, "Moves a key to another database."),
    cmd!("debug", -2, Read(object::debug), 0, 0, 0, "server", &["admin", "noscript", "loading", "stale"], "DEBUG OBJECT key, DEBUG SLEEP seconds (the subset clients and test suites use)."),
    cmd!("dump", 2, Read(dump::dump), 1, 1, 1, "generic", &["readonly"], "Serializes a value as Redis does (RDB object, version, CRC-64)."),
    cmd!("restore", -4, Write(dump::restore), 1, 1, 1, "generic", &["write", "denyoom"], "Creates a key from a DUMP payload (REPLACE, ABSTTL, IDLETIME, FREQ)."),
    cmd!("object", -2, Read(object::object), 2, 2, 1, "generic", RO, "Inspects a value (ENCODING, REFCOUNT as Redis 7.0 would answer)."),
    cmd!("memory", -2, Read(memory::memory), 2, 2, 1, "server", &["readonly"], "Bytes a key takes in the engine (USAGE [SAMPLES n]), STATS, DOCTOR, PURGE, MALLOC-STATS."),
    cmd!("keys", 2, Read(keyspace::keys), 0, 0, 0, "generic", &["readonly"], "Returns all keys matching a pattern."),
    cmd!("scan", -2, Read(keyspace::scan), 0, 0, 0, "generic", &["readonly"], "Iterates over the keys."),
    // expiry
    cmd!("expire", -3, Write(expiry::expire), 1, 1, 1, "generic", W, "Sets a key's time to live in seconds."),
    cmd!("pexpire", -3, Write(expiry::pexpire), 1, 1, 1, "generic", W, "Sets a key's time to live in milliseconds."),
    cmd!("expireat", -3, Write(expiry::expireat), 1, 1, 1, "generic", W, "Sets a key's expiry as a Unix time in seconds."),
    cmd!("pexpireat", -3, Write(expiry::pexpireat), 1, 1, 1, "generic", W, "Sets a key's expiry as a Unix time in milliseconds."),
    cmd!("ttl", 2, Read(expiry::ttl), 1, 1, 1, "generic", RO, "Returns a key's time to live in seconds."),
    cmd!("pttl", 2, Read(expiry::pttl), 1, 1, 1, "generic", RO, "Returns a key's time to live in milliseconds."),
    cmd!("expiretime", 2, Read(expiry::expiretime), 1, 1, 1, "generic", RO, "Returns a key's expiry as a Unix time in seconds."),
    cmd!("pexpiretime", 2, Read(expiry::pexpiretime), 1, 1, 1, "generic", RO, "Returns a key's expiry as a Unix time in milliseconds."),
    cmd!("persist", 2, Write(expiry::persist), 1, 1, 1, "generic", W, "Removes a key's time to live."),
    // sets
    cmd!("sadd", -3, Write(sets::sadd), 1, 1, 1, "set", W, "Adds members to a set."),
    cmd!("srem", -3, Write(sets::srem), 1, 1, 1, "set", W, "Removes members from a set."),
    cmd!("sismember", 3, Read(sets::sismember), 1, 1, 1, "set", RO, "Tests set membership."),
    cmd!("smismember", -3, Read(sets::smismember), 1, 1, 1, "set", RO, "Tests membership of several members."),
    cmd!("scard", 2, Read(sets::scard), 1, 1, 1, "set", RO, "Returns the number of members."),
    cmd!("smembers", 2, Read(sets::smembers), 1, 1, 1, "set", &["readonly"], "Returns all members."),
    cmd!("sscan", -3, Read(sets::sscan), 1, 1, 1, "set", &["readonly"], "Iterates over the members."),
    cmd!("spop", -2, Write(sets::spop), 1, 1, 1, "set", W, "Removes and returns random members."),
    cmd!("srandmember", -2, Read(sets::srandmember), 1, 1, 1, "set", &["readonly"], "Returns random members."),
    cmd!("smove", 4, Write(sets::smove), 1, 2, 1, "set", W, "Moves a member from one set to another."),
    cmd!("sinter", -2, Read(sets::sinter), 1, -1, 1, "set", &["readonly"], "Returns the intersection of sets."),
    cmd!("sintercard", -3, Read(sets::sintercard), 2, -1, 1, "set", &["readonly"], "Returns the size of the intersection of sets (LIMIT)."),
    cmd!("sinterstore", -3, Write(sets::sinterstore), 1, -1, 1, "set", W, "Stores the intersection of sets."),
    cmd!("sunion", -2, Read(sets::sunion), 1, -1, 1, "set", &["readonly"], "Returns the union of sets."),
    cmd!("sunionstore", -3, Write(sets::sunionstore), 1, -1, 1, "set", W, "Stores the union of sets."),
    cmd!("sdiff", -2, Read(sets::sdiff), 1, -1, 1, "set", &["readonly"], "Returns the members of a set missing from others."),
    cmd!("sdiffstore", -3, Write(sets::sdiffstore), 1, -1, 1, "set", W, "Stores the difference of sets."),
    // hashes
    cmd!("hset", -4, Write(hashes::hset), 1, 1, 1, "hash", W, "Sets fields of a hash."),
    cmd!("hmset", -4, Write(hashes::hmset), 1, 1, 1, "hash", W, "Sets fields of a hash (answers OK)."),
    cmd!("hsetnx", 4, Write(hashes::hsetnx), 1, 1, 1, "hash", W, "Sets a field only if it does not exist."),
    cmd!("hget", 3, Read(hashes::hget), 1, 1, 1, "hash", RO, "Returns the value of a field."),
    cmd!("hmget", -3, Read(hashes::hmget), 1, 1, 1, "hash", RO, "Returns the values of fields."),
    cmd!("hgetall", 2, Read(hashes::hgetall), 1, 1, 1, "hash", &["readonly"], "Returns every field and value."),
    cmd!("hdel", -3, Write(hashes::hdel), 1, 1, 1, "hash", W, "Deletes fields."),
    cmd!("hexists", 3, Read(hashes::hexists), 1, 1, 1, "hash", RO, "Tests whether a field exists."),
    cmd!("hincrby", 4, Write(hashes::hincrby), 1, 1, 1, "hash", W, "Increments the integer value of a field."),
    cmd!("hincrbyfloat", 4, Write(hashes::hincrbyfloat), 1, 1, 1, "hash", W, "Increments the floating-point value of a field."),
    cmd!("hlen", 2, Read(hashes::hlen), 1, 1, 1, "hash", RO, "Returns the number of fields."),
    cmd!("hkeys", 2, Read(hashes::hkeys), 1, 1, 1, "hash", &["readonly"], "Returns every field."),
    cmd!("hvals", 2, Read(hashes::hvals), 1, 1, 1, "hash", &["readonly"], "Returns every value."),
    cmd!("hstrlen", 3, Read(hashes::hstrlen), 1, 1, 1, "hash", RO, "Returns the length of a field's value."),
    cmd!("hrandfield", -2, Read(hashes::hrandfield), 1, 1, 1, "hash", &["readonly"], "Returns random fields (count, WITHVALUES)."),
    cmd!("hscan", -3, Read(hashes::hscan), 1, 1, 1, "hash", &["readonly"], "Iterates over fields and values."),
    // lists (LMPOP's keys follow numkeys: every argument after it is locked)
    cmd!("lpush", -3, Write(lists::lpush), 1, 1, 1, "list", W, "Prepends elements to a list."),
    cmd!("rpush", -3, Write(lists::rpush), 1, 1, 1, "list", W, "Appends elements to a list."),
    cmd!("lpushx", -3, Write(lists::lpushx), 1, 1, 1, "list", W, "Prepends elements to an existing list."),
    cmd!("rpushx", -3, Write(lists::rpushx), 1, 1, 1, "list", W, "Appends elements to an existing list."),
    cmd!("lpop", -2, Write(lists::lpop), 1, 1, 1, "list", W, "Removes and returns the first elements of a list."),
    cmd!("rpop", -2, Write(lists::rpop), 1, 1, 1, "list", W, "Removes and returns the last elements of a list."),
    cmd!("llen", 2, Read(lists::llen), 1, 1, 1, "list", RO, "Returns the length of a list."),
    cmd!("lrange", 4, Read(lists::lrange), 1, 1, 1, "list", &["readonly"], "Returns a range of elements of a list."),
    cmd!("lindex", 3, Read(lists::lindex), 1, 1, 1, "list", &["readonly"], "Returns an element of a list by its index."),
    cmd!("lset", 4, Write(lists::lset), 1, 1, 1, "list", W, "Sets an element of a list by its index."),
    cmd!("ltrim", 4, Write(lists::ltrim), 1, 1, 1, "list", W, "Keeps only a range of a list."),
    cmd!("lrem", 4, Write(lists::lrem), 1, 1, 1, "list", W, "Removes elements equal to a value from a list."),
    cmd!("linsert", 5, Write(lists::linsert), 1, 1, 1, "list", W, "Inserts an element before or after another."),
    cmd!("lpos", -3, Read(lists::lpos), 1, 1, 1, "list", &["readonly"], "Returns the indexes of matching elements."),
    cmd!("lmove", 5, Write(lists::lmove), 1, 2, 1, "list", W, "Pops an element from a list and pushes it to another."),
    cmd!("rpoplpush", 3, Write(lists::rpoplpush), 1, 2, 1, "list", W, "Pops the last element of a list and prepends it to another."),
    cmd!("lmpop", -4, Write(lists::lmpop), 2, -1, 1, "list", W, "Pops elements from the first non-empty list."),
    cmd!("blpop", -3, Blocking(blocking::blpop), 1, -2, 1, "list", W, "Pops the first element of the first non-empty list, or blocks until one is pushed."),
    cmd!("brpop", -3, Blocking(blocking::brpop), 1, -2, 1, "list", W, "Pops the last element of the first non-empty list, or blocks until one is pushed."),
    cmd!("blmove", 6, Blocking(blocking::blmove), 1, 2, 1, "list", W, "Moves an element between lists, or blocks until one is pushed."),
    cmd!("brpoplpush", 4, Blocking(blocking::brpoplpush), 1, 2, 1, "list", W, "Moves the last element of a list to another's head, or blocks."),
    cmd!("blmpop", -5, Blocking(blocking::blmpop), 3, -1, 1, "list", W, "Pops elements from the first non-empty list, or blocks."),
    // sorted sets (ZMPOP's keys follow numkeys: every argument after it is locked)
    cmd!("zadd", -4, Write(zsets::zadd), 1, 1, 1, "sorted-set", W, "Adds members or updates their scores (NX, XX, GT, LT, CH, INCR)."),
    cmd!("zincrby", 4, Write(zsets::zincrby), 1, 1, 1, "sorted-set", W, "Increments a member's score."),
    cmd!("zrem", -3, Write(zsets::zrem), 1, 1, 1, "sorted-set", W, "Removes members."),
    cmd!("zscore", 3, Read(zsets::zscore), 1, 1, 1, "sorted-set", RO, "Returns a member's score."),
    cmd!("zmscore", -3, Read(zsets::zmscore), 1, 1, 1, "sorted-set", RO, "Returns several members' scores."),
    cmd!("zcard", 2, Read(zsets::zcard), 1, 1, 1, "sorted-set", RO, "Returns the number of members."),
    cmd!("zcount", 4, Read(zsets::zcount), 1, 1, 1, "sorted-set", RO, "Counts the members in a score range."),
    cmd!("zlexcount", 4, Read(zsets::zlexcount), 1, 1, 1, "sorted-set", RO, "Counts the members in a lexicographical range."),
    cmd!("zrange", -4, Read(zsets::zrange), 1, 1, 1, "sorted-set", &["readonly"], "Returns members by rank, score or lexicographical range."),
    cmd!("zrevrange", -4, Read(zsets::zrevrange), 1, 1, 1, "sorted-set", &["readonly"], "Returns members by rank, highest score first."),
    cmd!("zrangebyscore", -4, Read(zsets::zrangebyscore), 1, 1, 1, "sorted-set", &["readonly"], "Returns members in a score range."),
    cmd!("zrevrangebyscore", -4, Read(zsets::zrevrangebyscore), 1, 1, 1, "sorted-set", &["readonly"], "Returns members in a score range, highest first."),
    cmd!("zrangebylex", -4, Read(zsets::zrangebylex), 1, 1, 1, "sorted-set", &["readonly"], "Returns members in a lexicographical range."),
    cmd!("zrevrangebylex", -4, Read(zsets::zrevrangebylex), 1, 1, 1, "sorted-set", &["readonly"], "Returns members in a lexicographical range, reversed."),
    cmd!("zrank", -3, Read(zsets::zrank), 1, 1, 1, "sorted-set", RO, "Returns a member's rank (WITHSCORE)."),
    cmd!("zrevrank", -3, Read(zsets::zrevrank), 1, 1, 1, "sorted-set", RO, "Returns a member's rank from the highest score (WITHSCORE)."),
    cmd!("zremrangebyrank", 4, Write(zsets::zremrangebyrank), 1, 1, 1, "sorted-set", W, "Removes the members in a rank range."),
    cmd!("zremrangebyscore", 4, Write(zsets::zremrangebyscore), 1, 1, 1, "sorted-set", W, "Removes the members in a score range."),
    cmd!("zremrangebylex", 4, Write(zsets::zremrangebylex), 1, 1, 1, "sorted-set", W, "Removes the members in a lexicographical range."),
    cmd!("zpopmin", -2, Write(zsets::zpopmin), 1, 1, 1, "sorted-set", W, "Removes and returns the members with the lowest scores."),
    cmd!("zpopmax", -2, Write(zsets::zpopmax), 1, 1, 1, "sorted-set", W, "Removes and returns the members with the highest scores."),
    cmd!("zmpop", -4, Write(zsets::zmpop), 2, -1, 1, "sorted-set", W, "Pops members from the first non-empty sorted set."),
    cmd!("bzpopmin", -3, Blocking(blocking::bzpopmin), 1, -2, 1, "sorted-set", W, "Pops the lowest-scored member of the first non-empty set, or blocks."),
    cmd!("bzpopmax", -3, Blocking(blocking::bzpopmax), 1, -2, 1, "sorted-set", W, "Pops the highest-scored member of the first non-empty set, or blocks."),
    cmd!("bzmpop", -5, Blocking(blocking::bzmpop), 3, -1, 1, "sorted-set", W, "Pops members from the first non-empty sorted set, or blocks."),
    cmd!("zrandmember", -2, Read(zsets::zrandmember), 1, 1, 1, "sorted-set", &["readonly"], "Returns random members (WITHSCORES)."),
    cmd!("zscan", -3, Read(zsets::zscan), 1, 1, 1, "sorted-set", &["readonly"], "Iterates over members and scores."),
    cmd!("zunion", -3, Read(zsets::zunion), 2, -1, 1, "sorted-set", &["readonly"], "Returns the union of sorted sets (WEIGHTS, AGGREGATE, WITHSCORES)."),
    cmd!("zinter", -3, Read(zsets::zinter), 2, -1, 1, "sorted-set", &["readonly"], "Returns the intersection of sorted sets."),
    cmd!("zdiff", -3, Read(zsets::zdiff), 2, -1, 1, "sorted-set", &["readonly"], "Returns the members of the first sorted set not in the others."),
    cmd!("zunionstore", -4, Write(zsets::zunionstore), 1, -1, 1, "sorted-set", W, "Stores the union of sorted sets."),
    cmd!("zinterstore", -4, Write(zsets::zinterstore), 1, -1, 1, "sorted-set", W, "Stores the intersection of sorted sets."),
    cmd!("zdiffstore", -4, Write(zsets::zdiffstore), 1, -1, 1, "sorted-set", W, "Stores the difference of sorted sets."),
    cmd!("zintercard", -3, Read(zsets::zintercard), 2, -1, 1, "sorted-set", &["readonly"], "Counts the intersection of sorted sets (LIMIT)."),
    cmd!("zrangestore", -5, Write(zsets::zrangestore), 1, 2, 1, "sorted-set", W, "Stores a range of a sorted set."),
    // streams (XREAD's keys follow STREAMS: every argument is locked)
    cmd!("xadd", -5, Write(streams::xadd), 1, 1, 1, "stream", W, "Appends an entry to a stream (NOMKSTREAM, MAXLEN, MINID)."),
    cmd!("xlen", 2, Read(streams::xlen), 1, 1, 1, "stream", RO, "Returns the number of entries of a stream."),
    cmd!("xrange", -4, Read(streams::xrange), 1, 1, 1, "stream", &["readonly"], "Returns the entries in a range of IDs."),
    cmd!("xrevrange", -4, Read(streams::xrevrange), 1, 1, 1, "stream", &["readonly"], "Returns the entries in a range of IDs, newest first."),
    cmd!("xdel", -3, Write(streams::xdel), 1, 1, 1, "stream", W, "Deletes entries by ID."),
    cmd!("xtrim", -4, Write(streams::xtrim), 1, 1, 1, "stream", W, "Removes the oldest entries (MAXLEN, MINID)."),
    cmd!("xread", -4, Blocking(streams::xread), 1, -1, 1, "stream", &["readonly", "blocking"], "Reads entries after IDs from streams, or blocks until one is added."),
    cmd!("xsetid", -3, Write(streams::xsetid), 1, 1, 1, "stream", W, "Sets a stream's last ID (ENTRIESADDED, MAXDELETEDID)."),
    cmd!("xgroup", -2, Write(streams::group_cmds::xgroup), 2, 2, 1, "stream", W, "Creates, moves or destroys consumer groups and their consumers (CREATE, SETID, DESTROY, CREATECONSUMER, DELCONSUMER)."),
    cmd!("xreadgroup", -7, Blocking(streams::group_cmds::xreadgroup), 1, -1, 1, "stream", &["write", "blocking"], "Reads entries for a consumer of a group (new ones with >, its pending ones with an ID), or blocks until one is added."),
    cmd!("xack", -4, Write(streams::group_cmds::xack), 1, 1, 1, "stream", &["write", "fast"], "Acknowledges pending entries of a group."),
    cmd!("xpending", -3, Read(streams::group_cmds::xpending), 1, 1, 1, "stream", &["readonly"], "Summarizes or lists a group's pending entries (IDLE, consumer)."),
    cmd!("xclaim", -6, Write(streams::group_cmds::xclaim), 1, 1, 1, "stream", &["write", "fast"], "Gives pending entries to another consumer (IDLE, TIME, RETRYCOUNT, FORCE, JUSTID, LASTID)."),
    cmd!("xautoclaim", -6, Write(streams::group_cmds::xautoclaim), 1, 1, 1, "stream", &["write", "fast"], "Claims the pending entries idle for long enough, from a cursor (COUNT, JUSTID)."),
    cmd!("xinfo", -2, Read(streams::info::xinfo), 2, 2, 1, "stream", &["readonly"], "Describes a stream, its groups or a group's consumers (STREAM [FULL], GROUPS, CONSUMERS)."),
    // geo sets (sorted sets of geohashes; GEORADIUS[BYMEMBER] may STORE into any key, so it
    // runs with the other writers held out, as SORT does)
    cmd!("geoadd", -5, Write(geo::geoadd), 1, 1, 1, "geo", W, "Adds members at longitude, latitude (NX, XX, CH)."),
    cmd!("geopos", -2, Read(geo::geopos), 1, 1, 1, "geo", &["readonly"], "Returns members' longitude and latitude."),
    cmd!("geodist", -4, Read(geo::geodist), 1, 1, 1, "geo", &["readonly"], "Returns the distance between two members (M, KM, FT, MI)."),
    cmd!("geohash", -2, Read(geo::geohash), 1, 1, 1, "geo", &["readonly"], "Returns members' standard 11-character geohashes."),
    cmd!("geosearch", -7, Read(geo::geosearch), 1, 1, 1, "geo", &["readonly"], "Returns members within a radius or a box of a member or a point."),
    cmd!("geosearchstore", -8, Write(geo::geosearchstore), 1, 2, 1, "geo", W, "Stores GEOSEARCH's members (or their distances, STOREDIST) in a sorted set."),
    cmd!("georadius", -6, Exclusive(geo::georadius), 1, 1, 1, "geo", W, "Returns or stores members within a radius of a point (deprecated form of GEOSEARCH)."),
    cmd!("georadius_ro", -6, Read(geo::georadius_ro), 1, 1, 1, "geo", &["readonly"], "GEORADIUS without STORE."),
    cmd!("georadiusbymember", -5, Exclusive(geo::georadiusbymember), 1, 1, 1, "geo", W, "Returns or stores members within a radius of a member."),
    cmd!("georadiusbymember_ro", -5, Read(geo::georadiusbymember_ro), 1, 1, 1, "geo", &["readonly"], "GEORADIUSBYMEMBER without STORE."),
    // Bloom filters
    cmd!("bf.reserve", -4, Write(bloom::reserve), 1, 1, 1, "bf", W, "Creates a scalable Bloom filter."),
    cmd!("bf.add", 3, Write(bloom::bf_add), 1, 1, 1, "bf", W, "Adds an item to a Bloom filter."),
    cmd!("bf.madd", -3, Write(bloom::bf_madd), 1, 1, 1, "bf", W, "Adds items to a Bloom filter."),
    cmd!("bf.insert", -4, Write(bloom::bf_insert), 1, 1, 1, "bf", W, "Adds items, creating the filter with options."),
    cmd!("bf.exists", 3, Read(bloom::bf_exists), 1, 1, 1, "bf", RO, "Tests whether an item may be in a filter."),
    cmd!("bf.mexists", -3, Read(bloom::bf_mexists), 1, 1, 1, "bf", RO, "Tests several items."),
    cmd!("bf.info", -2, Read(bloom::bf_info), 1, 1, 1, "bf", RO, "Returns a filter's parameters and counts."),
    cmd!("bf.card", 2, Read(bloom::bf_card), 1, 1, 1, "bf", RO, "Returns the number of items added."),
    cmd!("bf.scandump", 3, Read(bloom::bf_scandump), 1, 1, 1, "bf", RO, "Returns the next piece of a filter's incremental save."),
    cmd!("bf.loadchunk", 4, Write(bloom::bf_loadchunk), 1, 1, 1, "bf", W, "Restores a piece of a filter saved with BF.SCANDUMP."),
    // Cuckoo filters
    cmd!("cf.reserve", -3, Write(cuckoo::cf_reserve), 1, 1, 1, "cf", W, "Creates a cuckoo filter."),
    cmd!("cf.add", 3, Write(cuckoo::cf_add), 1, 1, 1, "cf", W, "Adds an item to a cuckoo filter."),
    cmd!("cf.addnx", 3, Write(cuckoo::cf_addnx), 1, 1, 1, "cf", W, "Adds an item to a cuckoo filter if it may not be there."),
    cmd!("cf.insert", -4, Write(cuckoo::cf_insert), 1, 1, 1, "cf", W, "Adds items, creating the filter with options."),
    cmd!("cf.insertnx", -4, Write(cuckoo::cf_insertnx), 1, 1, 1, "cf", W, "Adds items that may not be there, creating the filter with options."),
    cmd!("cf.exists", 3, Read(cuckoo::cf_exists), 1, 1, 1, "cf", RO, "Tests whether an item may be in a cuckoo filter."),
    cmd!("cf.mexists", -3, Read(cuckoo::cf_mexists), 1, 1, 1, "cf", RO, "Tests several items."),
    cmd!("cf.count", 3, Read(cuckoo::cf_count), 1, 1, 1, "cf", RO, "Returns how many times an item may be in a cuckoo filter."),
    cmd!("cf.del", 3, Write(cuckoo::cf_del), 1, 1, 1, "cf", W, "Deletes one copy of an item from a cuckoo filter."),
    cmd!("cf.compact", 2, Write(cuckoo::cf_compact), 1, 1, 1, "cf", W, "Moves items into older sub-filters and drops empty ones."),
    cmd!("cf.info", 2, Read(cuckoo::cf_info), 1, 1, 1, "cf", RO, "Returns a cuckoo filter's parameters and counts."),
    cmd!("cf.scandump", 3, Read(cuckoo::cf_scandump), 1, 1, 1, "cf", RO, "Returns the next piece of a cuckoo filter's incremental save."),
    cmd!("cf.loadchunk", 4, Write(cuckoo::cf_loadchunk), 1, 1, 1, "cf", W, "Restores a piece of a cuckoo filter saved with CF.SCANDUMP."),
];

/// Redis's arity error.
pub fn wrong_arity(name: &str) -> Reply {
    Reply::err(format!("wrong number of arguments for '{name}' command"))
}

/// Redis's unknown-command error: the name and the first arguments, up to about 128 bytes.
pub fn unknown_command(a: &[Bytes]) -> Reply {
    let name: String = String::from_utf8_lossy(&a[0]).chars().take(128).collect();
    let mut args = String::new();
    for arg in &a[1..] {
        if args.len() >= 128 {
            break;
        }
        let room = 128 - args.len();
        let text = String::from_utf8_lossy(arg);
        let mut cut = text.len().min(room);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        args.push_str(&format!("'{}' ", &text[..cut]));
    }
    Reply::err(format!(
        "unknown command '{name}', with args beginning with: {args}"
    ))
}

/// The position of a command in [`COMMANDS`], by name, ignoring case.
pub fn index(name: &[u8]) -> Option<usize> {
    // A connection sends the same command many times in a row (a pipeline, a benchmark, a
    // queue's consumer), and a request's name is looked up several times on its way: the
    // last name this thread found is checked first.
    thread_local! {
        static LAST: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }
    let last = LAST.with(std::cell::Cell::get);
    if COMMANDS[last].name.as_bytes().eq_ignore_ascii_case(name) {
        return Some(last);
    }
    let found = index_by_map(name)?;
    LAST.with(|l| l.set(found));
    Some(found)
}

fn index_by_map(name: &[u8]) -> Option<usize> {
    static BY_NAME: std::sync::OnceLock<crate::fasthash::FastMap<&'static [u8], usize>> =
        std::sync::OnceLock::new();
    let map = BY_NAME.get_or_init(|| {
        COMMANDS
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.as_bytes(), i))
            .collect()
    });
    if name.len() > 32 {
        return None;
    }
    let mut lower = [0u8; 32];
    let lower = &mut lower[..name.len()];
    for (d, s) in lower.iter_mut().zip(name) {
        *d = s.to_ascii_lowercase();
    }
    map.get(&*lower).copied()
}

/// Looks a command up by name, ignoring case.
pub fn lookup(name: &[u8]) -> Option<&'static Command> {
    index(name).map(|i| &COMMANDS[i])
}

/// The database index `arg` names for SELECT, MOVE or COPY ... DB, checked as Redis checks
/// it: an integer in Redis's strict form (no sign `+`, no spaces, no leading zeros), below
/// `--databases`.
///
/// # Errors
/// `ERR value is not an integer or out of range`; `ERR DB index is out of range`.
pub fn db_index(store: &crate::store::Store, arg: &[u8]) -> Result<crate::store::DbIndex, Reply> {
    let n = parse_i64(arg).ok_or_else(|| Reply::err(NOT_INT))?;
    if n < 0 || n >= i64::from(store.databases()) {
        return Err(Reply::err("DB index is out of range"));
    }
    Ok(n as crate::store::DbIndex)
}

/// Parses a decimal `i64` as Redis's `string2ll`: optional '-', digits, no leading zeros, no
/// '+', no spaces.
pub fn parse_i64(b: &[u8]) -> Option<i64> {
    if b.is_empty() || b.len() > 20 {
        return None;
    }
    if b == b"0" {
        return Some(0);
    }
    let (neg, digits) = match b[0] {
        b'-' => (true, &b[1..]),
        _ => (false, b),
    };
    if digits.is_empty() || digits[0] == b'0' || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: i64 = 0;
    for &d in digits {
        let d = i64::from(d - b'0');
        v = v.checked_mul(10)?;
        v = if neg {
            v.checked_sub(d)?
        } else {
            v.checked_add(d)?
        };
    }
    Some(v)
}

/// Parses a float argument as Redis's `strtold`-based parsing does: decimal or exponent
/// notation, `inf` / `-inf` / `+inf`; no spaces, no NaN.
pub fn parse_f64(b: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(b).ok()?;
    if s.is_empty()
        || s.starts_with(|c: char| c.is_whitespace())
        || s.ends_with(|c: char| c.is_whitespace())
    {
        return None;
    }
    let v: f64 = s.parse().ok()?;
    (!v.is_nan()).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_parse_like_redis() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-12"), Some(-12));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            &b""[..],
            b"+1",
            b"01",
            b" 1",
            b"1 ",
            b"9223372036854775808",
            b"-",
            b"-0",
            b"1.5",
        ] {
            assert_eq!(parse_i64(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn lookups_ignore_case_and_the_last_hit() {
        for _ in 0..2 {
            assert_eq!(lookup(b"GeT").map(|c| c.name), Some("get"));
            assert_eq!(lookup(b"get").map(|c| c.name), Some("get"));
            assert_eq!(lookup(b"ge").map(|c| c.name), None);
            assert_eq!(lookup(b"gett").map(|c| c.name), None);
            assert_eq!(lookup(b"SET").map(|c| c.name), Some("set"));
        }
        for (i, c) in COMMANDS.iter().enumerate() {
            assert_eq!(index(c.name.to_uppercase().as_bytes()), Some(i));
        }
    }

    #[test]
    fn key_positions_follow_the_table() {
        let mset = lookup(b"MSET").unwrap();
        assert_eq!(mset.key_positions(5).collect::<Vec<_>>(), vec![1, 3]);
        let del = lookup(b"del").unwrap();
        assert_eq!(del.key_positions(4).collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_eq!(lookup(b"ping").unwrap().key_positions(1).count(), 0);
        assert!(lookup(b"nope").is_none());
    }
}
