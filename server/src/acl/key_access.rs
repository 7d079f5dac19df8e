//! What a user's key patterns must grant for each key of a command, as Redis 7 decides it
//! from the command's key specs: a key the command reads the value of needs read access
//! (`%R~` or `~`), one it inserts, updates or deletes needs write access (`%W~` or `~`),
//! one it does both to needs both, and one it only looks at (existence, type, length)
//! needs any pattern that matches it. The lists come from Redis 7.0.15's command tables;
//! commands Redis does not have (the filters) need read access when they only read and
//! write access otherwise.

use bytes::Bytes;

use crate::cmd::{Command, Kind};

/// The access a key needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Need {
    /// The pattern must grant reading.
    pub read: bool,
    /// The pattern must grant writing.
    pub write: bool,
}

const R: Need = Need {
    read: true,
    write: false,
};
const W: Need = Need {
    read: false,
    write: true,
};
const RW: Need = Need {
    read: true,
    write: true,
};
const ANY: Need = Need {
    read: false,
    write: false,
};

/// Commands that read and write their keys (a reply from the value they change).
const READ_WRITE: &[&str] = &[
    "blmpop",
    "blpop",
    "brpop",
    "bzmpop",
    "bzpopmax",
    "bzpopmin",
    "decr",
    "decrby",
    "eval",
    "evalsha",
    "fcall",
    "getdel",
    "getex",
    "getset",
    "hincrby",
    "hincrbyfloat",
    "incr",
    "incrby",
    "incrbyfloat",
    "lmpop",
    "lpop",
    "move",
    "rpop",
    "setbit",
    "spop",
    "zincrby",
    "zmpop",
    "zpopmax",
    "zpopmin",
];

/// Commands that only read their keys' values though this server runs them as writes or
/// blocking commands: XREADGROUP changes the group, not the stream; PFCOUNT may update
/// the cached count; XREAD may block.
const READ_ONLY: &[&str] = &["pfcount", "xread", "xreadgroup"];

/// Commands that neither read nor write their keys' values.
const NEITHER: &[&str] = &[
    "exists",
    "hexists",
    "hlen",
    "hstrlen",
    "llen",
    "scard",
    "sismember",
    "strlen",
    "touch",
    "type",
    "xlen",
    "zcard",
    "watch",
];

/// Container commands whose subcommands neither read nor write their keys' values.
const NEITHER_SUBS: &[&str] = &["object", "memory"];

/// Commands whose first key needs one access and every later key another.
const SPLIT: &[(&str, Need, Need)] = &[
    ("bitop", W, R),
    ("blmove", RW, W),
    ("brpoplpush", RW, W),
    ("copy", R, W),
    ("georadius", R, W),
    ("georadiusbymember", R, W),
    ("geosearchstore", W, R),
    ("lmove", RW, W),
    ("pfmerge", RW, R),
    ("rename", RW, W),
    ("renamenx", RW, W),
    ("rpoplpush", RW, W),
    ("sdiffstore", W, R),
    ("sinterstore", W, R),
    ("smove", RW, W),
    ("sort", R, W),
    ("sunionstore", W, R),
    ("zdiffstore", W, R),
    ("zinterstore", W, R),
    ("zrangestore", W, R),
    ("zunionstore", W, R),
];

/// Whether the arguments COMMAND GETKEYS names for `c` are keys to check against key
/// patterns: a sharded channel is reported as a key (cluster clients route by it) but is
/// checked as a channel, as Redis's `NOT_KEY` specs say.
pub fn has_keys(c: &Command) -> bool {
    !matches!(c.name, "spublish" | "ssubscribe" | "sunsubscribe")
}

/// What the `nth` key (0 for the first) of request `args` for `c` needs.
pub fn need(c: &Command, args: &[Bytes], nth: usize) -> Need {
    let name = c.name;
    // Redis reads these two commands' flags from their arguments: SET only reads the value
    // it replaces with GET, BITFIELD only writes with SET or INCRBY.
    match name {
        "set" if args.iter().skip(3).any(|a| a.eq_ignore_ascii_case(b"get")) => return RW,
        "set" => return W,
        "bitfield" if bitfield_only_reads(args) => return R,
        "bitfield" => return RW,
        _ => {}
    }
    if let Some(&(_, first, rest)) = SPLIT.iter().find(|(n, _, _)| *n == name) {
        return if nth == 0 { first } else { rest };
    }
    if READ_WRITE.contains(&name) {
        RW
    } else if NEITHER.contains(&name) || NEITHER_SUBS.contains(&name) {
        ANY
    } else if READ_ONLY.contains(&name) || matches!(c.kind, Kind::Read(_)) {
        R
    } else {
        W
    }
}

/// Whether a BITFIELD request has only GET and OVERFLOW operations, each with its
/// arguments (anything else is taken as a write, as Redis takes it).
fn bitfield_only_reads(args: &[Bytes]) -> bool {
    let mut i = 2;
    while i < args.len() {
        let left = args.len() - i - 1;
        let op = &args[i];
        if op.eq_ignore_ascii_case(b"get") && left >= 2 {
            i += 3;
        } else if op.eq_ignore_ascii_case(b"overflow") && left >= 1 {
            i += 2;
        } else {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::{COMMANDS, index};

    fn cmd(name: &str) -> &'static Command {
        &COMMANDS[index(name.as_bytes()).unwrap_or_else(|| panic!("{name}"))]
    }

    #[test]
    fn every_listed_command_exists() {
        for name in READ_WRITE
            .iter()
            .chain(NEITHER)
            .chain(NEITHER_SUBS)
            .chain(SPLIT.iter().map(|(n, _, _)| n))
        {
            cmd(name);
        }
    }

    #[test]
    fn keys_need_what_redis_key_specs_say() {
        let need = |line: &str, nth: usize| {
            let args: Vec<Bytes> = line
                .split(' ')
                .map(|w| Bytes::from(w.to_string()))
                .collect();
            super::need(cmd(line.split(' ').next().unwrap_or_default()), &args, nth)
        };
        assert_eq!(need("get k", 0), R);
        assert_eq!(need("incr k", 0), RW);
        assert_eq!(need("lpush k v", 0), W);
        assert_eq!(need("exists k", 0), ANY);
        assert_eq!(need("xreadgroup GROUP g c STREAMS s >", 0), R);
        assert_eq!(need("sunionstore d a b", 0), W);
        assert_eq!(need("sunionstore d a b", 2), R);
        assert_eq!(need("copy a b", 0), R);
        assert_eq!(need("copy a b", 1), W);
        assert_eq!(need("set k v", 0), W);
        assert_eq!(need("set k v EX 10 get", 0), RW);
        assert_eq!(need("bitfield k GET u8 0 OVERFLOW SAT GET u4 8", 0), R);
        assert_eq!(need("bitfield k GET u8 0 INCRBY u8 0 1", 0), RW);
        assert_eq!(need("bitfield k GET u8", 0), RW);
        assert_eq!(need("bf.exists k x", 0), R);
        assert_eq!(need("bf.add k x", 0), W);
    }
    /// Every command of Redis 7.0.15 whose keys all need the same access (its command
    /// table's key specs), against this table.
    #[test]
    fn single_access_commands_need_what_redis_says() {
        let classes: [(&[&str], Need); 4] = [
            (
                &[
                    "bitcount",
                    "bitfield_ro",
                    "bitpos",
                    "dump",
                    "eval_ro",
                    "evalsha_ro",
                    "expiretime",
                    "fcall_ro",
                    "geodist",
                    "geohash",
                    "geopos",
                    "georadius_ro",
                    "georadiusbymember_ro",
                    "geosearch",
                    "get",
                    "getbit",
                    "getrange",
                    "hget",
                    "hgetall",
                    "hkeys",
                    "hmget",
                    "hrandfield",
                    "hscan",
                    "hvals",
                    "lcs",
                    "lindex",
                    "lpos",
                    "lrange",
                    "mget",
                    "pexpiretime",
                    "pfcount",
                    "sdiff",
                    "sinter",
                    "sintercard",
                    "smembers",
                    "smismember",
                    "sort_ro",
                    "srandmember",
                    "sscan",
                    "substr",
                    "sunion",
                    "ttl",
                    "xpending",
                    "xrange",
                    "xread",
                    "xreadgroup",
                    "xrevrange",
                    "zcount",
                    "zdiff",
                    "zinter",
                    "zintercard",
                    "zlexcount",
                    "zmscore",
                    "zrandmember",
                    "zrange",
                    "zrangebylex",
                    "zrangebyscore",
                    "zrank",
                    "zrevrange",
                    "zrevrangebylex",
                    "zrevrangebyscore",
                    "zrevrank",
                    "zscan",
                    "zscore",
                    "zunion",
                ],
                R,
            ),
            (
                &[
                    "append",
                    "del",
                    "expire",
                    "expireat",
                    "geoadd",
                    "hdel",
                    "hmset",
                    "hset",
                    "hsetnx",
                    "linsert",
                    "lpush",
                    "lpushx",
                    "lrem",
                    "lset",
                    "ltrim",
                    "mset",
                    "msetnx",
                    "persist",
                    "pexpire",
                    "pexpireat",
                    "pfadd",
                    "psetex",
                    "restore",
                    "restore-asking",
                    "rpush",
                    "rpushx",
                    "sadd",
                    "setex",
                    "setnx",
                    "setrange",
                    "srem",
                    "unlink",
                    "xack",
                    "xadd",
                    "xautoclaim",
                    "xclaim",
                    "xdel",
                    "xsetid",
                    "xtrim",
                    "zadd",
                    "zrem",
                    "zremrangebylex",
                    "zremrangebyrank",
                    "zremrangebyscore",
                ],
                W,
            ),
            (
                &[
                    "blmpop",
                    "blpop",
                    "brpop",
                    "bzmpop",
                    "bzpopmax",
                    "bzpopmin",
                    "decr",
                    "decrby",
                    "eval",
                    "evalsha",
                    "fcall",
                    "getdel",
                    "getex",
                    "getset",
                    "hincrby",
                    "hincrbyfloat",
                    "incr",
                    "incrby",
                    "incrbyfloat",
                    "lmpop",
                    "lpop",
                    "move",
                    "rpop",
                    "setbit",
                    "spop",
                    "zincrby",
                    "zmpop",
                    "zpopmax",
                    "zpopmin",
                ],
                RW,
            ),
            (
                &[
                    "exists",
                    "hexists",
                    "hlen",
                    "hstrlen",
                    "llen",
                    "scard",
                    "sismember",
                    "strlen",
                    "touch",
                    "type",
                    "watch",
                    "xlen",
                    "zcard",
                ],
                ANY,
            ),
        ];
        let mut checked = 0;
        for (names, want) in classes {
            for name in names {
                let Some(pos) = index(name.as_bytes()) else {
                    continue;
                };
                let args = [Bytes::from(name.to_string()), Bytes::from("k")];
                assert_eq!(super::need(&COMMANDS[pos], &args, 0), want, "{name}");
                checked += 1;
            }
        }
        assert!(checked >= 150, "{checked}");
    }
}
