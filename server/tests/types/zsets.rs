//! Sorted sets: every command and option against replies recorded from redis-server, byte
//! for byte, plus Redis 7.2's score formatting and ZRANK WITHSCORE, RESP3 shapes, large sets
//! (ranks from either end, range deletions), random members, MULTI, expiry and restart.
//! Geo sets (sorted sets of geohashes): `zsets/geo.rs`.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common;
mod geo;

use std::collections::BTreeMap;

use common::*;
use redis::Value;

/// Recorded from redis-server 7.0.15. Its replies differ from 7.2's only in the formatting
/// of scores that are not short decimals (7.0 prints `%.17g`, 7.2 the shortest round-trip
/// text), which this table avoids (see `scores_format_as_redis_7_2`), and in ZRANK
/// WITHSCORE (new in 7.2, tested below). Lex ranges here are over members of one score, the
/// only case Redis defines.
#[rustfmt::skip]
const TABLE: &[(&str, &str)] = &[
        // ZADD and its options
        ("zadd z 1 a 2 b 3 c", ":3\r\n"),
        ("zadd z 1.5 a", ":0\r\n"),
        ("zadd z ch 1 a 5 d", ":2\r\n"),
        ("zadd z nx 10 a 6 e", ":1\r\n"),
        ("zadd z xx 10 a 7 f", ":0\r\n"),
        ("zadd z gt 0 a", ":0\r\n"),
        ("zadd z lt 0 a", ":0\r\n"),
        ("zadd z gt ch 20 a", ":1\r\n"),
        ("zadd z lt ch 25 a 1 b", ":1\r\n"),
        ("zadd z gt xx ch 30 a 0 b 9 nope", ":1\r\n"),
        ("zadd z incr 1 b", "$1\r\n2\r\n"),
        ("zadd z incr nx 1 b", "$-1\r\n"),
        ("zadd z incr xx 1 nope", "$-1\r\n"),
        ("zadd z incr gt -1 b", "$-1\r\n"),
        ("zadd z incr lt -1 b", "$1\r\n1\r\n"),
        ("zadd z incr 1 b 2 c", "-ERR INCR option supports a single increment-element pair\r\n"),
        ("zadd z nx xx 1 a", "-ERR XX and NX options at the same time are not compatible\r\n"),
        ("zadd z gt lt 1 a", "-ERR GT, LT, and/or NX options at the same time are not compatible\r\n"),
        ("zadd z gt nx 1 a", "-ERR GT, LT, and/or NX options at the same time are not compatible\r\n"),
        ("zadd z lt nx 1 a", "-ERR GT, LT, and/or NX options at the same time are not compatible\r\n"),
        ("zadd z 1", "-ERR wrong number of arguments for 'zadd' command\r\n"),
        ("zadd z 1 a 2", "-ERR syntax error\r\n"),
        ("zadd z ch", "-ERR wrong number of arguments for 'zadd' command\r\n"),
        ("zadd z abc a", "-ERR value is not a valid float\r\n"),
        ("zadd z nan a", "-ERR value is not a valid float\r\n"),
        ("zadd z 1e400 a", "-ERR value is not a valid float\r\n"),
        ("zadd z 1e-400 a", "-ERR value is not a valid float\r\n"),
        ("zadd z \" 1\" a", "-ERR value is not a valid float\r\n"),
        ("zadd z \"1 \" a", "-ERR value is not a valid float\r\n"),
        ("zadd z \"\" a", "-ERR value is not a valid float\r\n"),
        ("zadd z inf ia -inf nia", ":2\r\n"),
        ("zadd z incr inf ia", "$3\r\ninf\r\n"),
        ("zadd z incr -inf ia", "-ERR resulting score is not a number (NaN)\r\n"),
        ("zadd z xx 1 q", ":0\r\n"),
        ("zadd newz xx 1 q", ":0\r\n"),
        ("exists newz", ":0\r\n"),
        ("zadd newz xx incr 1 q", "$-1\r\n"),
        ("zadd z -0 zero", ":1\r\n"),
        ("zscore z zero", "$1\r\n0\r\n"),
        ("zscore z a", "$2\r\n30\r\n"),
        ("zscore z nope", "$-1\r\n"),
        ("zscore nope a", "$-1\r\n"),
        ("zmscore z a nope b", "*3\r\n$2\r\n30\r\n$-1\r\n$1\r\n1\r\n"),
        ("zmscore nope a b", "*2\r\n$-1\r\n$-1\r\n"),
        ("zcard z", ":8\r\n"),
        ("zcard nope", ":0\r\n"),
        // ranges by rank
        ("zrange z 0 -1", "*8\r\n$3\r\nnia\r\n$4\r\nzero\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\na\r\n$2\r\nia\r\n"),
        ("zrange z 0 -1 withscores", "*16\r\n$3\r\nnia\r\n$4\r\n-inf\r\n$4\r\nzero\r\n$1\r\n0\r\n$1\r\nb\r\n$1\r\n1\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\nd\r\n$1\r\n5\r\n$1\r\ne\r\n$1\r\n6\r\n$1\r\na\r\n$2\r\n30\r\n$2\r\nia\r\n$3\r\ninf\r\n"),
        ("zrange z 2 4 withscores", "*6\r\n$1\r\nb\r\n$1\r\n1\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\nd\r\n$1\r\n5\r\n"),
        ("zrange z -3 -1", "*3\r\n$1\r\ne\r\n$1\r\na\r\n$2\r\nia\r\n"),
        ("zrange z 5 2", "*0\r\n"),
        ("zrange z -100 100", "*8\r\n$3\r\nnia\r\n$4\r\nzero\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\na\r\n$2\r\nia\r\n"),
        ("zrange z 0 -1 rev", "*8\r\n$2\r\nia\r\n$1\r\na\r\n$1\r\ne\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\nb\r\n$4\r\nzero\r\n$3\r\nnia\r\n"),
        ("zrange z 0 1 rev withscores", "*4\r\n$2\r\nia\r\n$3\r\ninf\r\n$1\r\na\r\n$2\r\n30\r\n"),
        ("zrevrange z 0 2 withscores", "*6\r\n$2\r\nia\r\n$3\r\ninf\r\n$1\r\na\r\n$2\r\n30\r\n$1\r\ne\r\n$1\r\n6\r\n"),
        ("zrevrange z -2 -1", "*2\r\n$4\r\nzero\r\n$3\r\nnia\r\n"),
        ("zrevrange z 0 2 rev", "-ERR syntax error\r\n"),
        ("zrevrange z 0 2 byscore", "-ERR syntax error\r\n"),
        ("zrange z 0 -1 limit 0 1", "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX\r\n"),
        ("zrange z a 1", "-ERR value is not an integer or out of range\r\n"),
        ("zrange nope 0 -1", "*0\r\n"),
        // ranges by score
        ("zrange z (1 5 byscore", "*2\r\n$1\r\nc\r\n$1\r\nd\r\n"),
        ("zrange z (1 5 byscore withscores limit 1 2", "*2\r\n$1\r\nd\r\n$1\r\n5\r\n"),
        ("zrange z 5 (1 byscore rev", "*2\r\n$1\r\nd\r\n$1\r\nc\r\n"),
        ("zrange z -inf +inf byscore limit 2 -1", "*6\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\na\r\n$2\r\nia\r\n"),
        ("zrange z -inf +inf byscore limit -1 2", "*0\r\n"),
        ("zrange z -inf +inf byscore limit 100 2", "*0\r\n"),
        ("zrange z -inf +inf byscore limit 0 0", "*0\r\n"),
        ("zrange z abc 1 byscore", "-ERR min or max is not a float\r\n"),
        ("zrange z 1 abc byscore", "-ERR min or max is not a float\r\n"),
        ("zrange z (abc 1 byscore", "-ERR min or max is not a float\r\n"),
        ("zrange z 0 1 bylex byscore", "-ERR syntax error\r\n"),
        ("zrange z 0 1 byscore byscore", "-ERR syntax error\r\n"),
        ("zrange z 0 1 limit 1", "-ERR syntax error\r\n"),
        ("zrange z 0 1 limit a b byscore", "-ERR value is not an integer or out of range\r\n"),
        ("zrange z 0 1 bogus", "-ERR syntax error\r\n"),
        ("zrange z 0 5 withscores rev byscore limit 0 2", "*0\r\n"),
        ("zrange z 5 0 withscores rev byscore limit 0 2", "*4\r\n$1\r\nd\r\n$1\r\n5\r\n$1\r\nc\r\n$1\r\n3\r\n"),
        ("zrangebyscore z -inf +inf", "*8\r\n$3\r\nnia\r\n$4\r\nzero\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\na\r\n$2\r\nia\r\n"),
        ("zrangebyscore z 1 5 withscores limit 0 2", "*4\r\n$1\r\nb\r\n$1\r\n1\r\n$1\r\nc\r\n$1\r\n3\r\n"),
        ("zrangebyscore z 1 5 rev", "-ERR syntax error\r\n"),
        ("zrangebyscore z 5 1", "*0\r\n"),
        ("zrangebyscore z (3 (3", "*0\r\n"),
        ("zrangebyscore z 3 3", "*1\r\n$1\r\nc\r\n"),
        ("zrevrangebyscore z 5 1 withscores", "*6\r\n$1\r\nd\r\n$1\r\n5\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\nb\r\n$1\r\n1\r\n"),
        ("zrevrangebyscore z (5 (1", "*1\r\n$1\r\nc\r\n"),
        ("zrevrangebyscore z 1 5", "*0\r\n"),
        ("zrangebyscore z \"\" 5", "*4\r\n$4\r\nzero\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n"),
        ("zrangebyscore z ( 5", "*3\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n"),
        ("zrangebyscore z \" 1\" 5", "*3\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n"),
        ("zrangebyscore z \"1 \" 5", "-ERR min or max is not a float\r\n"),
        ("zrangebyscore z 1e400 inf", "*1\r\n$2\r\nia\r\n"),
        ("zcount z -inf +inf", ":8\r\n"),
        ("zcount z (1 5", ":2\r\n"),
        ("zcount z 5 1", ":0\r\n"),
        ("zcount z a b", "-ERR min or max is not a float\r\n"),
        ("zcount nope 1 2", ":0\r\n"),
        // ranks
        ("zrank z b", ":2\r\n"),
        ("zrank z nope", "$-1\r\n"),
        ("zrank nope b", "$-1\r\n"),
        ("zrevrank z b", ":5\r\n"),
        ("zrevrank z nia", ":7\r\n"),
        ("zrank z ia", ":7\r\n"),
        // removal
        ("zrem z a nope b", ":2\r\n"),
        ("zrem nope a", ":0\r\n"),
        ("zrem z nope", ":0\r\n"),
        ("del z", ":1\r\n"),
        // lex ranges (equal scores)
        ("zadd lx 0 a 0 b 0 c 0 d 0 e 0 f", ":6\r\n"),
        ("zrangebylex lx - +", "*6\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nf\r\n"),
        ("zrangebylex lx [b (e", "*3\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n"),
        ("zrangebylex lx (b [e limit 1 2", "*2\r\n$1\r\nd\r\n$1\r\ne\r\n"),
        ("zrangebylex lx - + limit 2 -1", "*4\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nf\r\n"),
        ("zrangebylex lx - + limit -1 5", "*0\r\n"),
        ("zrangebylex lx - + withscores", "-ERR syntax error, WITHSCORES not supported in combination with BYLEX\r\n"),
        ("zrange lx - + bylex withscores", "-ERR syntax error, WITHSCORES not supported in combination with BYLEX\r\n"),
        ("zrange lx [c - bylex rev", "*3\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n"),
        ("zrange lx + [c bylex rev limit 0 2", "*2\r\n$1\r\nf\r\n$1\r\ne\r\n"),
        ("zrevrangebylex lx + -", "*6\r\n$1\r\nf\r\n$1\r\ne\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n"),
        ("zrevrangebylex lx [e (b", "*3\r\n$1\r\ne\r\n$1\r\nd\r\n$1\r\nc\r\n"),
        ("zrangebylex lx + -", "*0\r\n"),
        ("zrangebylex lx - -", "*0\r\n"),
        ("zrangebylex lx + +", "*0\r\n"),
        ("zrangebylex lx (a (a", "*0\r\n"),
        ("zrangebylex lx [a [a", "*1\r\n$1\r\na\r\n"),
        ("zrangebylex lx a b", "-ERR min or max not valid string range item\r\n"),
        ("zrangebylex lx [b [a", "*0\r\n"),
        ("zrangebylex lx \"\" +", "-ERR min or max not valid string range item\r\n"),
        ("zrangebylex lx \"[\" +", "*6\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nf\r\n"),
        ("zrangebylex lx \"(\" +", "*6\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nf\r\n"),
        ("zrangebylex lx - \"[c\"", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"),
        ("zlexcount lx - +", ":6\r\n"),
        ("zlexcount lx [b (d", ":2\r\n"),
        ("zlexcount lx b d", "-ERR min or max not valid string range item\r\n"),
        ("zlexcount nope - +", ":0\r\n"),
        ("zremrangebylex lx [b (d", ":2\r\n"),
        ("zrange lx 0 -1", "*4\r\n$1\r\na\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nf\r\n"),
        ("zremrangebylex lx x y", "-ERR min or max not valid string range item\r\n"),
        ("zremrangebylex lx [z +", ":0\r\n"),
        ("zremrangebylex nope - +", ":0\r\n"),
        ("zremrangebyrank lx 0 0", ":1\r\n"),
        ("zrange lx 0 -1", "*3\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nf\r\n"),
        ("zremrangebyrank lx a 1", "-ERR value is not an integer or out of range\r\n"),
        ("zremrangebyrank lx 5 6", ":0\r\n"),
        ("zremrangebyrank lx -1 -1", ":1\r\n"),
        ("zrange lx 0 -1", "*2\r\n$1\r\nd\r\n$1\r\ne\r\n"),
        ("zremrangebyrank nope 0 -1", ":0\r\n"),
        ("zadd sc 1 a 2 b 3 c 4 d", ":4\r\n"),
        ("zremrangebyscore sc (1 3", ":2\r\n"),
        ("zrange sc 0 -1 withscores", "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nd\r\n$1\r\n4\r\n"),
        ("zremrangebyscore sc a 1", "-ERR min or max is not a float\r\n"),
        ("zremrangebyscore nope 1 2", ":0\r\n"),
        ("zremrangebyscore sc 5 1", ":0\r\n"),
        ("zremrangebyrank sc 0 -1", ":2\r\n"),
        ("exists sc", ":0\r\n"),
        // pops
        ("zadd pp 1 a 2 b 3 c 4 d 5 e", ":5\r\n"),
        ("zpopmin pp", "*2\r\n$1\r\na\r\n$1\r\n1\r\n"),
        ("zpopmax pp", "*2\r\n$1\r\ne\r\n$1\r\n5\r\n"),
        ("zpopmin pp 2", "*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"),
        ("zpopmax pp 0", "*0\r\n"),
        ("zpopmin pp -1", "-ERR value is out of range, must be positive\r\n"),
        ("zpopmin pp abc", "-ERR value is out of range, must be positive\r\n"),
        ("zpopmin pp 1 2", "-ERR syntax error\r\n"),
        ("zpopmin nope", "*0\r\n"),
        ("zpopmin nope 2", "*0\r\n"),
        ("zpopmax pp 10", "*2\r\n$1\r\nd\r\n$1\r\n4\r\n"),
        ("exists pp", ":0\r\n"),
        ("zadd mp 1 a 2 b 3 c", ":3\r\n"),
        ("zmpop 2 nope mp min", "*2\r\n$2\r\nmp\r\n*1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"),
        ("zmpop 2 nope mp max count 5", "*2\r\n$2\r\nmp\r\n*2\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n"),
        ("zmpop 1 mp min", "*-1\r\n"),
        ("zmpop 0 mp min", "-ERR numkeys should be greater than 0\r\n"),
        ("zmpop -1 mp min", "-ERR numkeys should be greater than 0\r\n"),
        ("zmpop 1 mp middle", "-ERR syntax error\r\n"),
        ("zmpop 1 mp min count 0", "-ERR count should be greater than 0\r\n"),
        ("zmpop 1 mp min count -2", "-ERR count should be greater than 0\r\n"),
        ("zmpop 1 mp min count 1 count 1", "-ERR syntax error\r\n"),
        ("zmpop 1 mp min bogus", "-ERR syntax error\r\n"),
        ("zmpop 3 mp min", "-ERR syntax error\r\n"),
        ("zmpop 2 nope nope2 min", "*-1\r\n"),
        // random members
        ("zrandmember nope", "$-1\r\n"),
        ("zrandmember nope 5", "*0\r\n"),
        ("zrandmember nope 5 withscores", "*0\r\n"),
        ("zadd rm 1 a", ":1\r\n"),
        ("zrandmember rm", "$1\r\na\r\n"),
        ("zrandmember rm 5", "*1\r\n$1\r\na\r\n"),
        ("zrandmember rm -3", "*3\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n"),
        ("zrandmember rm -3 withscores", "*6\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\na\r\n$1\r\n1\r\n"),
        ("zrandmember rm 1 withscores", "*2\r\n$1\r\na\r\n$1\r\n1\r\n"),
        ("zrandmember rm 0", "*0\r\n"),
        ("zrandmember rm abc", "-ERR value is not an integer or out of range\r\n"),
        ("zrandmember rm -9223372036854775808", "-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n"),
        ("zrandmember rm 5 bogus", "-ERR syntax error\r\n"),
        ("zrandmember rm 5 withscores extra", "-ERR syntax error\r\n"),
        ("zrandmember rm 9223372036854775807 withscores", "-ERR value is out of range\r\n"),
        ("zrandmember rm -9223372036854775807 withscores", "-ERR value is out of range\r\n"),
        ("zscan rm 0", "*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"),
        ("zscan nope 0", "*2\r\n$1\r\n0\r\n*0\r\n"),
        ("zscan rm abc", "-ERR invalid cursor\r\n"),
        ("zscan rm 0 count 0", "-ERR syntax error\r\n"),
        ("zscan rm 0 match a*", "*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"),
        ("zscan rm 0 match b*", "*2\r\n$1\r\n0\r\n*0\r\n"),
        // A small sorted set is one listpack in Redis: scanned whole, by score, cursor 0.
        ("zadd zo 3 a 1 b 2 c -1 dd", ":4\r\n"),
        ("zscan zo 0", "*2\r\n$1\r\n0\r\n*8\r\n$2\r\ndd\r\n$2\r\n-1\r\n$1\r\nb\r\n$1\r\n1\r\n$1\r\nc\r\n$1\r\n2\r\n$1\r\na\r\n$1\r\n3\r\n"),
        ("zscan zo 7 count 1", "*2\r\n$1\r\n0\r\n*8\r\n$2\r\ndd\r\n$2\r\n-1\r\n$1\r\nb\r\n$1\r\n1\r\n$1\r\nc\r\n$1\r\n2\r\n$1\r\na\r\n$1\r\n3\r\n"),
        ("zscan zo 0 match ?", "*2\r\n$1\r\n0\r\n*6\r\n$1\r\nb\r\n$1\r\n1\r\n$1\r\nc\r\n$1\r\n2\r\n$1\r\na\r\n$1\r\n3\r\n"),
        // increments
        ("zincrby zi 1.5 m", "$3\r\n1.5\r\n"),
        ("zincrby zi abc m", "-ERR value is not a valid float\r\n"),
        ("zincrby zi 1 m", "$3\r\n2.5\r\n"),
        ("zincrby zi -inf m", "$4\r\n-inf\r\n"),
        ("zincrby zi inf m", "-ERR resulting score is not a number (NaN)\r\n"),
        ("zincrby zi 1 m extra", "-ERR wrong number of arguments for 'zincrby' command\r\n"),
        ("zadd zi 1e400 m", "-ERR value is not a valid float\r\n"),
        ("zadd zi 1e-400 m", "-ERR value is not a valid float\r\n"),
        ("zadd zi 2.5 m", ":0\r\n"),
        ("zscore zi m", "$3\r\n2.5\r\n"),
        ("zincrby zi -2.5 m", "$1\r\n0\r\n"),
        ("zscore zi m", "$1\r\n0\r\n"),
        // wrong types
        ("set str x", "+OK\r\n"),
        ("zadd str 1 a", "WT"),
        ("zincrby str 1 a", "WT"),
        ("zrem str a", "WT"),
        ("zscore str a", "WT"),
        ("zmscore str a", "WT"),
        ("zcard str", "WT"),
        ("zcount str 0 1", "WT"),
        ("zlexcount str - +", "WT"),
        ("zrange str 0 -1", "WT"),
        ("zrevrange str 0 -1", "WT"),
        ("zrangebyscore str 0 1", "WT"),
        ("zrevrangebyscore str 1 0", "WT"),
        ("zrangebylex str - +", "WT"),
        ("zrevrangebylex str + -", "WT"),
        ("zrank str a", "WT"),
        ("zrevrank str a", "WT"),
        ("zremrangebyrank str 0 1", "WT"),
        ("zremrangebyscore str 0 1", "WT"),
        ("zremrangebylex str - +", "WT"),
        ("zpopmin str", "WT"),
        ("zpopmax str 2", "WT"),
        ("zmpop 2 str mp min", "WT"),
        ("zrandmember str", "WT"),
        ("zrandmember str 2", "WT"),
        ("zscan str 0", "WT"),
        ("zadd mp 1 a", ":1\r\n"),
        ("zmpop 2 mp str min", "*2\r\n$2\r\nmp\r\n*1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"),
];

#[test]
fn every_command_answers_as_redis_does() {
    let s = TestServer::start();
    let mut raw = s.raw();
    run_table(&mut raw, TABLE);
}

/// Expected texts from Redis 7.2's `d2string` (integers within 2^62 as integers, else
/// `fpconv_dtoa`): checked against Redis's own fpconv_dtoa.c compiled on this machine.
#[test]
fn scores_format_as_redis_7_2() {
    let s = TestServer::start();
    let mut raw = s.raw();
    run_table(
        &mut raw,
        &[
            (
                "zadd f 0.1 a 1e20 b 1.5e-7 c 0.30000000000000004 d 1.2345e-5 e 4.9e-324 g",
                ":6\r\n",
            ),
            (
                "zadd f 12345678901234567890 h 123.456 i -0 j 3 k 1e-7 l 0.000001 m",
                ":6\r\n",
            ),
            ("zscore f a", "$3\r\n0.1\r\n"),
            ("zscore f b", "$5\r\n1e+20\r\n"),
            ("zscore f c", "$6\r\n1.5e-7\r\n"),
            ("zscore f d", "$19\r\n0.30000000000000004\r\n"),
            ("zscore f e", "$9\r\n1.2345e-5\r\n"),
            ("zscore f g", "$6\r\n5e-324\r\n"),
            ("zscore f h", "$20\r\n12345678901234567000\r\n"),
            ("zscore f i", "$7\r\n123.456\r\n"),
            ("zscore f j", "$1\r\n0\r\n"),
            ("zscore f k", "$1\r\n3\r\n"),
            ("zscore f l", "$4\r\n1e-7\r\n"),
            ("zscore f m", "$8\r\n0.000001\r\n"),
            ("zincrby f 0.2 a", "$19\r\n0.30000000000000004\r\n"),
            ("zadd f incr 1e300 b", "$6\r\n1e+300\r\n"),
            (
                "zrange f 0 2 withscores",
                "*6\r\n$1\r\nj\r\n$1\r\n0\r\n$1\r\ng\r\n$6\r\n5e-324\r\n$1\r\nl\r\n$4\r\n1e-7\r\n",
            ),
            ("zmscore f c nope", "*2\r\n$6\r\n1.5e-7\r\n$-1\r\n"),
            (
                "zscan f 0 match e count 100",
                "*2\r\n$1\r\n0\r\n*2\r\n$1\r\ne\r\n$9\r\n1.2345e-5\r\n",
            ),
            ("zrank f k withscore", "*2\r\n:8\r\n$1\r\n3\r\n"),
            ("zrevrank f k withscore", "*2\r\n:3\r\n$1\r\n3\r\n"),
            ("zrank f nope withscore", "*-1\r\n"),
            ("zrank nope a withscore", "*-1\r\n"),
            ("zrank f k withscores", "-ERR syntax error\r\n"),
            (
                "zrank f k withscore x",
                "-ERR wrong number of arguments for 'zrank' command\r\n",
            ),
        ],
    );
}

#[test]
fn resp3_replies() {
    let s = TestServer::start();
    let mut raw = s.raw();
    raw.cmd(&[b"HELLO", b"3"]);
    raw.read_until(b"modules\r\n*0\r\n");
    run_table(
        &mut raw,
        &[
            ("zadd z 1 a 2.5 b inf c", ":3\r\n"),
            ("zscore z b", ",2.5\r\n"),
            ("zscore z c", ",inf\r\n"),
            ("zscore z nope", "_\r\n"),
            ("zmscore z a nope", "*2\r\n,1\r\n_\r\n"),
            ("zadd z incr 1 a", ",2\r\n"),
            ("zadd z incr nx 1 a", "_\r\n"),
            ("zincrby z 0.5 a", ",2.5\r\n"),
            (
                "zrange z 0 -1 withscores",
                "*3\r\n*2\r\n$1\r\na\r\n,2.5\r\n*2\r\n$1\r\nb\r\n,2.5\r\n*2\r\n$1\r\nc\r\n,inf\r\n",
            ),
            ("zrange z 0 0", "*1\r\n$1\r\na\r\n"),
            (
                "zrangebyscore z -inf +inf withscores limit 0 1",
                "*1\r\n*2\r\n$1\r\na\r\n,2.5\r\n",
            ),
            ("zrank z b withscore", "*2\r\n:1\r\n,2.5\r\n"),
            ("zrank z nope withscore", "_\r\n"),
            ("zrank z nope", "_\r\n"),
            ("zrandmember z -1 withscores", "*1\r\n*2\r\n"),
        ],
    );
    // (the member drawn is random: read the rest of that reply)
    let rest = raw.read_until(b"\r\n");
    assert!(rest.starts_with(b"$1\r\n") || rest == b"$1\r\n", "{rest:?}");
    raw.read_until(b"\r\n");
    raw.read_until(b"\r\n");
    run_table(
        &mut raw,
        &[
            ("zpopmin z", "*2\r\n$1\r\na\r\n,2.5\r\n"),
            ("zpopmax z 1", "*1\r\n*2\r\n$1\r\nc\r\n,inf\r\n"),
            ("zpopmin nope", "*0\r\n"),
            ("zadd z 3 d", ":1\r\n"),
            (
                "zmpop 1 z max count 1",
                "*2\r\n$1\r\nz\r\n*1\r\n*2\r\n$1\r\nd\r\n,3\r\n",
            ),
            ("zmpop 1 nope max", "_\r\n"),
            (
                "zscan z 0",
                "*2\r\n$1\r\n0\r\n*2\r\n$1\r\nb\r\n$3\r\n2.5\r\n",
            ),
        ],
    );
}

fn zrange(c: &mut redis::Connection, args: &[&str]) -> Vec<String> {
    let mut cmd = redis::cmd("ZRANGE");
    for a in args {
        cmd.arg(*a);
    }
    cmd.query(c).unwrap()
}

/// The model's members in Redis's order: score, then member bytes.
fn ordered(m: &BTreeMap<String, f64>) -> Vec<(String, f64)> {
    let mut v: Vec<(String, f64)> = m.iter().map(|(k, s)| (k.clone(), *s)).collect();
    v.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    v
}

#[test]
fn large_sets_rank_and_remove_from_either_end() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut model = BTreeMap::new();
    let mut cmd = redis::cmd("ZADD");
    cmd.arg("z");
    for i in 0..1000u64 {
        let score = ((i * 7919) % 100) as f64 / 4.0 - 10.0;
        let m = format!("m{i:04}");
        cmd.arg(score).arg(&m);
        model.insert(m, score);
    }
    let n: i64 = cmd.query(&mut c).unwrap();
    assert_eq!(n, 1000);
    let all = ordered(&model);
    let names = |v: &[(String, f64)]| v.iter().map(|(m, _)| m.clone()).collect::<Vec<_>>();
    assert_eq!(zrange(&mut c, &["z", "0", "-1"]), names(&all));
    assert_eq!(zrange(&mut c, &["z", "990", "995"]), names(&all[990..996]));
    assert_eq!(zrange(&mut c, &["z", "-3", "-1"]), names(&all[997..]));
    let mut rev: Vec<(String, f64)> = all.clone();
    rev.reverse();
    assert_eq!(zrange(&mut c, &["z", "5", "9", "REV"]), names(&rev[5..10]));
    for i in [0usize, 1, 499, 998, 999] {
        let (m, s) = &all[i];
        assert_eq!(ok(&mut c, &["ZRANK", "z", m]), int(i as i64));
        assert_eq!(ok(&mut c, &["ZREVRANK", "z", m]), int(999 - i as i64));
        let (rank, score): (i64, f64) = redis::cmd("ZRANK")
            .arg("z")
            .arg(m)
            .arg("WITHSCORE")
            .query(&mut c)
            .unwrap();
        assert_eq!((rank, score), (i as i64, *s));
    }
    let between: Vec<String> = redis::cmd("ZRANGEBYSCORE")
        .arg("z")
        .arg("(0")
        .arg(5)
        .query(&mut c)
        .unwrap();
    let want: Vec<String> = all
        .iter()
        .filter(|(_, s)| *s > 0.0 && *s <= 5.0)
        .map(|(m, _)| m.clone())
        .collect();
    assert_eq!(between, want);
    assert_eq!(
        ok(&mut c, &["ZCOUNT", "z", "(0", "5"]),
        int(want.len() as i64)
    );
    // A long run in the middle (one range deletion of index keys), then the ends.
    assert_eq!(
        ok(&mut c, &["ZREMRANGEBYRANK", "z", "100", "399"]),
        int(300)
    );
    let mut left: Vec<(String, f64)> = all[..100].iter().chain(&all[400..]).cloned().collect();
    assert_eq!(zrange(&mut c, &["z", "0", "-1"]), names(&left));
    let popped: Vec<String> = redis::cmd("ZPOPMIN")
        .arg("z")
        .arg(50)
        .query(&mut c)
        .unwrap();
    assert_eq!(popped.len(), 100);
    let popped_max: Vec<String> = redis::cmd("ZPOPMAX")
        .arg("z")
        .arg(40)
        .query(&mut c)
        .unwrap();
    assert_eq!(popped_max[0], left.last().unwrap().0);
    left = left[50..left.len() - 40].to_vec();
    assert_eq!(zrange(&mut c, &["z", "0", "-1"]), names(&left));
    assert_eq!(ok(&mut c, &["ZCARD", "z"]), int(left.len() as i64));
    // Re-adding members whose index keys went with a range deletion brings them back.
    let (m, s) = all[150].clone();
    ok(&mut c, &["ZADD", "z", &s.to_string(), &m]);
    assert_eq!(ok(&mut c, &["ZSCORE", "z", &m]), bulk(&s.to_string()));
    let removed: i64 = redis::cmd("ZREMRANGEBYSCORE")
        .arg("z")
        .arg("-inf")
        .arg("+inf")
        .query(&mut c)
        .unwrap();
    assert_eq!(removed as usize, left.len() + 1);
    assert_eq!(ok(&mut c, &["EXISTS", "z"]), int(0));
}

#[test]
fn huge_limits_and_indexes_are_bounded_by_the_set() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["ZADD", "z", "1", "a", "2", "b"]);
    let max = i64::MAX.to_string();
    let min = i64::MIN.to_string();
    assert_eq!(zrange(&mut c, &["z", &min, &max]), ["a", "b"]);
    assert_eq!(
        zrange(
            &mut c,
            &["z", "-inf", "+inf", "BYSCORE", "LIMIT", "0", &max]
        ),
        ["a", "b"]
    );
    assert_eq!(
        zrange(&mut c, &["z", "-", "+", "BYLEX", "LIMIT", "1", &max]),
        ["b"]
    );
    assert_eq!(
        zrange(
            &mut c,
            &["z", "-inf", "+inf", "BYSCORE", "LIMIT", &max, "1"]
        ),
        Vec::<String>::new()
    );
    let v: Vec<String> = redis::cmd("ZPOPMIN")
        .arg("z")
        .arg(&max)
        .query(&mut c)
        .unwrap();
    assert_eq!(v, ["a", "1", "b", "2"]);
    ok(&mut c, &["ZADD", "z", "1", "a"]);
    let err_text = err(&mut c, &["ZRANDMEMBER", "z", &(-(1i64 << 40)).to_string()]);
    assert!(err_text.starts_with("ERR count too large"), "{err_text}");
    let v: Vec<String> = redis::cmd("ZRANDMEMBER")
        .arg("z")
        .arg(&max)
        .query(&mut c)
        .unwrap();
    assert_eq!(v, ["a"]);
}

#[test]
fn random_members_are_members_and_distinct_when_asked() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut cmd = redis::cmd("ZADD");
    cmd.arg("z");
    for i in 0..200 {
        cmd.arg(i).arg(format!("m{i}"));
    }
    let _: i64 = cmd.query(&mut c).unwrap();
    for count in [1i64, 5, 60, 150, 199, 200, 500] {
        let v: Vec<String> = redis::cmd("ZRANDMEMBER")
            .arg("z")
            .arg(count)
            .query(&mut c)
            .unwrap();
        assert_eq!(v.len() as i64, count.min(200));
        let set: std::collections::HashSet<&String> = v.iter().collect();
        assert_eq!(set.len(), v.len(), "distinct for count {count}");
        assert!(v.iter().all(|m| m.starts_with('m')));
    }
    let v: Vec<(String, f64)> = redis::cmd("ZRANDMEMBER")
        .arg("z")
        .arg(-300)
        .arg("WITHSCORES")
        .query(&mut c)
        .unwrap();
    assert_eq!(v.len(), 300);
    for (m, s) in &v {
        assert_eq!(format!("m{s}"), *m);
    }
    let distinct: std::collections::HashSet<&String> = v.iter().map(|(m, _)| m).collect();
    assert!(
        distinct.len() > 50,
        "draws spread over the set: {}",
        distinct.len()
    );
    let one: String = redis::cmd("ZRANDMEMBER").arg("z").query(&mut c).unwrap();
    assert!(one.starts_with('m'));
}

#[test]
fn a_queue_in_a_transaction_as_scrapy_redis_uses_it() {
    let s = TestServer::start();
    let mut c = s.client();
    for i in 0..10 {
        ok(
            &mut c,
            &["ZADD", "q", &(-i).to_string(), &format!("req{i}")],
        );
    }
    // scrapy-redis's PriorityQueue.pop: ZRANGE 0 0 + ZREMRANGEBYRANK 0 0 in MULTI/EXEC.
    let mut got = Vec::new();
    loop {
        let mut p = redis::pipe();
        p.atomic()
            .cmd("ZRANGE")
            .arg("q")
            .arg(0)
            .arg(0)
            .cmd("ZREMRANGEBYRANK")
            .arg("q")
            .arg(0)
            .arg(0);
        let (items, n): (Vec<String>, i64) = p.query(&mut c).unwrap();
        if items.is_empty() {
            assert_eq!(n, 0);
            break;
        }
        assert_eq!(n, 1);
        got.extend(items);
    }
    let want: Vec<String> = (0..10).rev().map(|i| format!("req{i}")).collect();
    assert_eq!(got, want);
    assert_eq!(ok(&mut c, &["EXISTS", "q"]), int(0));
}

#[test]
fn an_expired_sorted_set_is_gone_and_its_members_stay_gone() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["ZADD", "z", "1", "old1", "2", "old2"]);
    ok(&mut c, &["PEXPIRE", "z", "50"]);
    std::thread::sleep(std::time::Duration::from_millis(120));
    assert_eq!(ok(&mut c, &["ZCARD", "z"]), int(0));
    assert_eq!(ok(&mut c, &["ZADD", "z", "XX", "5", "old1"]), int(0));
    ok(&mut c, &["ZADD", "z", "3", "new"]);
    assert_eq!(zrange(&mut c, &["z", "0", "-1"]), ["new"]);
    assert_eq!(ok(&mut c, &["ZSCORE", "z", "old1"]), Value::Nil);
    assert_eq!(ok(&mut c, &["ZRANK", "z", "old2"]), Value::Nil);
    assert_eq!(ok(&mut c, &["TTL", "z"]), int(-1));
    assert_eq!(ok(&mut c, &["TYPE", "z"]), status("zset"));
}

#[test]
fn sorted_sets_survive_a_restart() {
    let mut s = TestServer::start();
    {
        let mut c = s.client();
        ok(&mut c, &["ZADD", "z", "1", "a", "2.5", "b", "-inf", "c"]);
        ok(&mut c, &["ZINCRBY", "z", "1", "a"]);
        ok(&mut c, &["ZADD", "gone", "1", "x"]);
        ok(&mut c, &["ZPOPMIN", "gone"]);
    }
    s.restart();
    let mut c = s.client();
    let v: Vec<(String, f64)> = redis::cmd("ZRANGE")
        .arg("z")
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .query(&mut c)
        .unwrap();
    assert_eq!(
        v,
        [
            ("c".to_string(), f64::NEG_INFINITY),
            ("a".into(), 2.0),
            ("b".into(), 2.5)
        ]
    );
    assert_eq!(ok(&mut c, &["EXISTS", "gone"]), int(0));
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(1));
}

#[test]
fn long_rank_ranges_stream_in_order_in_both_protocols() {
    let s = TestServer::start();
    let mut c = s.client();
    let n = 20_000usize;
    for chunk in (0..n).collect::<Vec<_>>().chunks(5000) {
        let mut cmd = redis::cmd("ZADD");
        cmd.arg("big");
        for i in chunk {
            cmd.arg(*i as f64 / 2.0).arg(format!("m{i:05}"));
        }
        let _: i64 = cmd.query(&mut c).unwrap();
    }
    let all = zrange(&mut c, &["big", "0", "-1"]);
    assert_eq!(all.len(), n);
    assert!(
        all.iter()
            .enumerate()
            .all(|(i, m)| *m == format!("m{i:05}"))
    );
    let mut p = redis::pipe();
    p.cmd("ZRANGE")
        .arg("big")
        .arg(100)
        .arg(2099)
        .arg("WITHSCORES")
        .cmd("ZREVRANGE")
        .arg("big")
        .arg(0)
        .arg(1999)
        .cmd("ZRANGE")
        .arg("big")
        .arg(10)
        .arg(1033)
        .arg("REV")
        .arg("WITHSCORES")
        .cmd("ZCARD")
        .arg("big");
    type Pairs = Vec<(String, f64)>;
    let (fwd, rev, rev_ws, card): (Pairs, Vec<String>, Pairs, i64) = p.query(&mut c).unwrap();
    assert_eq!(fwd.len(), 2000);
    assert_eq!(fwd[0], ("m00100".to_string(), 50.0));
    assert_eq!(fwd[1999], ("m02099".to_string(), 1049.5));
    assert_eq!(rev.len(), 2000);
    assert_eq!(rev[0], format!("m{:05}", n - 1));
    assert_eq!(rev[1999], format!("m{:05}", n - 2000));
    assert_eq!(rev_ws.len(), 1024);
    assert_eq!(rev_ws[0].0, format!("m{:05}", n - 11));
    assert_eq!(card as usize, n);
    let mut c3 = s.client3();
    let v: Vec<(String, f64)> = redis::cmd("ZRANGE")
        .arg("big")
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .query(&mut c3)
        .unwrap();
    assert_eq!(v.len(), n);
    assert_eq!(v[n - 1], (format!("m{:05}", n - 1), (n - 1) as f64 / 2.0));
}
