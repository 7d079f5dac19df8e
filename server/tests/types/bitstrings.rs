//! GETRANGE, SUBSTR, SETRANGE, BITOP, BITPOS, BITFIELD, BITFIELD_RO and LCS: replies byte
//! for byte as redis-server 7.0.15 gave them (the tables were recorded from it, RESP2 and
//! RESP3), strings that span chunks, time to live, and a restart.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common;

use common::{Raw, TestServer, bulk, err, int, ints, ok, words};
use redis::Value;

/// Runs `(command line, exact reply)` rows on one connection; `\xNN` in a word is a byte.
fn run(raw: &mut Raw, table: &[(&str, &[u8])]) {
    for (line, want) in table {
        let w: Vec<Vec<u8>> = words(line).iter().map(|w| unescape(w)).collect();
        let refs: Vec<&[u8]> = w.iter().map(Vec::as_slice).collect();
        raw.expect(&refs, want);
    }
}

fn unescape(w: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(w.len());
    let mut i = 0;
    while i < w.len() {
        if w[i] == b'\\' && w.get(i + 1) == Some(&b'x') && i + 4 <= w.len() {
            let hex = std::str::from_utf8(&w[i + 2..i + 4]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 4;
        } else {
            out.push(w[i]);
            i += 1;
        }
    }
    out
}

/// Recorded from redis-server 7.0.15, in order on one connection (RESP2).
#[rustfmt::skip]
const RESP2: &[(&str, &[u8])] = &[
    ("SET mykey \"This is a string\"", b"+OK\r\n"),
    ("GETRANGE mykey 0 3", b"$4\r\nThis\r\n"),
    ("GETRANGE mykey -3 -1", b"$3\r\ning\r\n"),
    ("GETRANGE mykey 0 -1", b"$16\r\nThis is a string\r\n"),
    ("GETRANGE mykey 10 100", b"$6\r\nstring\r\n"),
    ("GETRANGE mykey -1 -3", b"$0\r\n\r\n"),
    ("GETRANGE mykey -100 -50", b"$1\r\nT\r\n"),
    ("GETRANGE mykey 5 2", b"$0\r\n\r\n"),
    ("GETRANGE mykey x 2", b"-ERR value is not an integer or out of range\r\n"),
    ("GETRANGE mykey 0 y", b"-ERR value is not an integer or out of range\r\n"),
    ("GETRANGE nokey 0 10", b"$0\r\n\r\n"),
    ("GETRANGE nokey x 10", b"-ERR value is not an integer or out of range\r\n"),
    ("SUBSTR mykey 0 3", b"$4\r\nThis\r\n"),
    ("SUBSTR mykey 1", b"-ERR wrong number of arguments for 'substr' command\r\n"),
    ("SADD aset m", b":1\r\n"),
    ("GETRANGE aset 0 1", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("GETRANGE aset x 1", b"-ERR value is not an integer or out of range\r\n"),
    ("SET key1 \"Hello World\"", b"+OK\r\n"),
    ("SETRANGE key1 6 Redis", b":11\r\n"),
    ("GET key1", b"$11\r\nHello Redis\r\n"),
    ("SETRANGE key2 6 Redis", b":11\r\n"),
    ("GET key2", b"$11\r\n\x00\x00\x00\x00\x00\x00Redis\r\n"),
    ("SETRANGE key3 0 \"\"", b":0\r\n"),
    ("EXISTS key3", b":0\r\n"),
    ("SETRANGE key1 100 \"\"", b":11\r\n"),
    ("SETRANGE key1 -1 x", b"-ERR offset is out of range\r\n"),
    ("SETRANGE key1 x x", b"-ERR value is not an integer or out of range\r\n"),
    ("SETRANGE aset 0 x", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("SETRANGE aset 0 \"\"", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("SETRANGE aset -1 \"\"", b"-ERR offset is out of range\r\n"),
    ("SETRANGE key1 536870911 x", b":536870912\r\n"),
    ("SETRANGE key1 536870912 x", b"-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n"),
    ("SETRANGE key1 9999999999999 x", b"-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n"),
    ("SETRANGE nokey2 536870912 \"\"", b":0\r\n"),
    ("SET n 123", b"+OK\r\n"),
    ("SETRANGE n 1 9", b":3\r\n"),
    ("GET n", b"$3\r\n193\r\n"),
    ("SET key1 foobar", b"+OK\r\n"),
    ("SET key2 abcdef", b"+OK\r\n"),
    ("BITOP AND dest key1 key2", b":6\r\n"),
    ("GET dest", b"$6\r\n`bc`ab\r\n"),
    ("BITOP OR dest key1 key2", b":6\r\n"),
    ("GET dest", b"$6\r\ngoofev\r\n"),
    ("BITOP XOR dest key1 key2", b":6\r\n"),
    ("GET dest", b"$6\r\n\x07\r\x0c\x06\x04\x14\r\n"),
    ("BITOP NOT dest key1", b":6\r\n"),
    ("GET dest", b"$6\r\n\x99\x90\x90\x9d\x9e\x8d\r\n"),
    ("BITOP NOT dest key1 key2", b"-ERR BITOP NOT must be called with a single source key.\r\n"),
    ("BITOP nand dest key1", b"-ERR syntax error\r\n"),
    ("BITOP AND dest nothere nothere2", b":0\r\n"),
    ("EXISTS dest", b":0\r\n"),
    ("BITOP AND dest key1 aset", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("SET short ab", b"+OK\r\n"),
    ("BITOP AND dest key1 short", b":6\r\n"),
    ("GET dest", b"$6\r\n`b\x00\x00\x00\x00\r\n"),
    ("BITOP OR dest short key1", b":6\r\n"),
    ("GET dest", b"$6\r\ngoobar\r\n"),
    ("BITOP XOR dest short nothere", b":2\r\n"),
    ("GET dest", b"$2\r\nab\r\n"),
    ("SET withttl abc EX 100", b"+OK\r\n"),
    ("BITOP OR withttl key1", b":6\r\n"),
    ("TTL withttl", b":-1\r\n"),
    ("BITOP", b"-ERR wrong number of arguments for 'bitop' command\r\n"),
    ("BITOP AND", b"-ERR wrong number of arguments for 'bitop' command\r\n"),
    ("BITOP AND d", b"-ERR wrong number of arguments for 'bitop' command\r\n"),
    ("BITOP AND dest \"\"", b":0\r\n"),
    ("SET mykey \"\\xff\\xf0\\x00\"", b"+OK\r\n"),
    ("BITPOS mykey 0", b":12\r\n"),
    ("SET mykey \"\\x00\\xff\\xf0\"", b"+OK\r\n"),
    ("BITPOS mykey 1 0", b":8\r\n"),
    ("BITPOS mykey 1 2", b":16\r\n"),
    ("BITPOS mykey 1 2 -1 BYTE", b":16\r\n"),
    ("BITPOS mykey 1 7 15 BIT", b":8\r\n"),
    ("SET mykey \"\\x00\\x00\\x00\"", b"+OK\r\n"),
    ("BITPOS mykey 1", b":-1\r\n"),
    ("BITPOS mykey 1 7 -3 BIT", b":-1\r\n"),
    ("BITPOS mykey 0", b":0\r\n"),
    ("BITPOS mykey 0 1", b":8\r\n"),
    ("BITPOS mykey 0 1 2", b":8\r\n"),
    ("SET ff \"\\xff\\xff\\xff\"", b"+OK\r\n"),
    ("BITPOS ff 0", b":24\r\n"),
    ("BITPOS ff 0 1", b":24\r\n"),
    ("BITPOS ff 0 1 2", b":-1\r\n"),
    ("BITPOS ff 0 0 -1 BIT", b":-1\r\n"),
    ("BITPOS ff 0 3 BIT", b"-ERR value is not an integer or out of range\r\n"),
    ("BITPOS ff 1 3 BIT", b"-ERR value is not an integer or out of range\r\n"),
    ("BITPOS ff 1 30 BIT", b"-ERR value is not an integer or out of range\r\n"),
    ("BITPOS ff 1 -30 BIT", b"-ERR value is not an integer or out of range\r\n"),
    ("BITPOS ff 1 -30 -40 BIT", b":0\r\n"),
    ("BITPOS ff 1 1 0", b":-1\r\n"),
    ("BITPOS ff 2", b"-ERR The bit argument must be 1 or 0.\r\n"),
    ("BITPOS ff x", b"-ERR value is not an integer or out of range\r\n"),
    ("BITPOS ff 1 x", b"-ERR value is not an integer or out of range\r\n"),
    ("BITPOS ff 1 0 x", b"-ERR value is not an integer or out of range\r\n"),
    ("BITPOS ff 1 0 1 BOT", b"-ERR syntax error\r\n"),
    ("BITPOS ff 1 0 1 BIT extra", b"-ERR syntax error\r\n"),
    ("BITPOS nokey 0", b":0\r\n"),
    ("BITPOS nokey 1", b":-1\r\n"),
    ("BITPOS nokey 1 x", b":-1\r\n"),
    ("BITPOS nokey 2", b"-ERR The bit argument must be 1 or 0.\r\n"),
    ("BITPOS aset 1", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("SET empty \"\"", b"+OK\r\n"),
    ("BITPOS empty 0", b":-1\r\n"),
    ("BITPOS empty 1", b":-1\r\n"),
    ("BITPOS empty 0 0", b":-1\r\n"),
    ("BITPOS empty 0 0 -1 BIT", b":-1\r\n"),
    ("BITPOS ff 0 2 BIT", b"-ERR value is not an integer or out of range\r\n"),
    ("BITPOS ff 0 -1 BIT", b"-ERR value is not an integer or out of range\r\n"),
    ("BITPOS ff 0 0 BYTE", b"-ERR value is not an integer or out of range\r\n"),
    ("DEL bf", b":0\r\n"),
    ("BITFIELD bf INCRBY i5 100 1 GET u4 0", b"*2\r\n:1\r\n:0\r\n"),
    ("BITFIELD bf incrby u2 100 1 OVERFLOW SAT incrby u2 102 1", b"*2\r\n:1\r\n:1\r\n"),
    ("BITFIELD bf incrby u2 100 1 OVERFLOW SAT incrby u2 102 1", b"*2\r\n:2\r\n:2\r\n"),
    ("BITFIELD bf incrby u2 100 1 OVERFLOW SAT incrby u2 102 1", b"*2\r\n:3\r\n:3\r\n"),
    ("BITFIELD bf incrby u2 100 1 OVERFLOW SAT incrby u2 102 1", b"*2\r\n:0\r\n:3\r\n"),
    ("BITFIELD bf OVERFLOW FAIL incrby u2 102 1", b"*1\r\n$-1\r\n"),
    ("GET bf", b"$14\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x80\r\n"),
    ("DEL bits", b":0\r\n"),
    ("BITFIELD bits set i8 0 -100", b"*1\r\n:0\r\n"),
    ("BITFIELD bits set i8 0 101", b"*1\r\n:-100\r\n"),
    ("BITFIELD bits get i8 0", b"*1\r\n:101\r\n"),
    ("BITFIELD bits set u8 0 255", b"*1\r\n:101\r\n"),
    ("BITFIELD bits set u8 0 100", b"*1\r\n:255\r\n"),
    ("BITFIELD bits get u8 0", b"*1\r\n:100\r\n"),
    ("BITFIELD bits set u8 #0 65", b"*1\r\n:100\r\n"),
    ("BITFIELD bits set u8 #1 66", b"*1\r\n:0\r\n"),
    ("BITFIELD bits set u8 #2 67", b"*1\r\n:0\r\n"),
    ("GET bits", b"$3\r\nABC\r\n"),
    ("BITFIELD bits set u8 #0 10", b"*1\r\n:65\r\n"),
    ("BITFIELD bits incrby u8 #0 100", b"*1\r\n:110\r\n"),
    ("BITFIELD bits incrby u8 #0 100", b"*1\r\n:210\r\n"),
    ("BITFIELD bits set u8 #0 100", b"*1\r\n:210\r\n"),
    ("BITFIELD bits incrby u8 #0 257", b"*1\r\n:101\r\n"),
    ("BITFIELD bits get u8 #0", b"*1\r\n:101\r\n"),
    ("BITFIELD bits incrby u8 #0 255", b"*1\r\n:100\r\n"),
    ("BITFIELD bits overflow sat incrby u8 #0 257", b"*1\r\n:255\r\n"),
    ("BITFIELD bits overflow sat incrby u8 #0 -255", b"*1\r\n:0\r\n"),
    ("BITFIELD bits set u8 0 100", b"*1\r\n:0\r\n"),
    ("BITFIELD bits overflow wrap incrby i8 0 257", b"*1\r\n:101\r\n"),
    ("BITFIELD bits overflow sat incrby i8 0 257", b"*1\r\n:127\r\n"),
    ("BITFIELD bits overflow sat incrby i8 0 -255", b"*1\r\n:-128\r\n"),
    ("BITFIELD bits overflow fail set u8 0 300", b"*1\r\n$-1\r\n"),
    ("BITFIELD bits overflow fail set u8 0 -1", b"*1\r\n$-1\r\n"),
    ("BITFIELD bits overflow sat set u8 0 -1", b"*1\r\n:128\r\n"),
    ("BITFIELD bits overflow wrap set u8 0 -1", b"*1\r\n:255\r\n"),
    ("BITFIELD bits overflow sat set i8 0 -1000", b"*1\r\n:-1\r\n"),
    ("BITFIELD bits set i64 3 -9223372036854775808", b"*1\r\n:149208125935714304\r\n"),
    ("BITFIELD bits get i64 3 get u63 3 get u63 4", b"*3\r\n:-9223372036854775808\r\n:4611686018427387904\r\n:0\r\n"),
    ("BITFIELD bits overflow wrap incrby i64 3 -1", b"*1\r\n:9223372036854775807\r\n"),
    ("BITFIELD bits overflow sat incrby i64 3 1", b"*1\r\n:9223372036854775807\r\n"),
    ("BITFIELD bits overflow fail incrby i64 3 1", b"*1\r\n$-1\r\n"),
    ("BITFIELD bits overflow sat incrby u63 3 9223372036854775807", b"*1\r\n:9223372036854775807\r\n"),
    ("BITFIELD bits get i1 0 get u1 0 get i2 7 get u17 5", b"*4\r\n:-1\r\n:1\r\n:-1\r\n:131071\r\n"),
    ("BITFIELD bits get u64 0", b"-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.\r\n"),
    ("BITFIELD bits get i65 0", b"-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.\r\n"),
    ("BITFIELD bits get u0 0", b"-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.\r\n"),
    ("BITFIELD bits get I8 0", b"-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.\r\n"),
    ("BITFIELD bits get x8 0", b"-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.\r\n"),
    ("BITFIELD bits get i8 -1", b"-ERR bit offset is not an integer or out of range\r\n"),
    ("BITFIELD bits get i8 4294967295", b"*1\r\n:0\r\n"),
    ("BITFIELD bits get i8 4294967296", b"-ERR bit offset is not an integer or out of range\r\n"),
    ("BITFIELD bits get i8 #536870911", b"*1\r\n:0\r\n"),
    ("BITFIELD bits get i8 #536870912", b"-ERR bit offset is not an integer or out of range\r\n"),
    ("BITFIELD bits get i8 #-1", b"-ERR bit offset is not an integer or out of range\r\n"),
    ("BITFIELD bits get u1 #4294967295", b"*1\r\n:0\r\n"),
    ("BITFIELD bits get i8 x", b"-ERR bit offset is not an integer or out of range\r\n"),
    ("BITFIELD bits set i8 0 x", b"-ERR value is not an integer or out of range\r\n"),
    ("BITFIELD bits set i8 0", b"-ERR syntax error\r\n"),
    ("BITFIELD bits get i8", b"-ERR syntax error\r\n"),
    ("BITFIELD bits foo i8 0", b"-ERR syntax error\r\n"),
    ("BITFIELD bits overflow", b"-ERR syntax error\r\n"),
    ("BITFIELD bits overflow foo get i8 0", b"-ERR Invalid OVERFLOW type specified\r\n"),
    ("BITFIELD bits overflow fail", b"*0\r\n"),
    ("BITFIELD bits", b"*0\r\n"),
    ("BITFIELD nokey", b"*0\r\n"),
    ("BITFIELD nokey get u8 100", b"*1\r\n:0\r\n"),
    ("EXISTS nokey", b":0\r\n"),
    ("BITFIELD nokey overflow fail set u2 100 7", b"*1\r\n$-1\r\n"),
    ("EXISTS nokey", b":1\r\n"),
    ("STRLEN nokey", b":13\r\n"),
    ("BITFIELD aset get u8 0", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("BITFIELD aset set u8 0 1", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("BITFIELD_RO bits get u8 0 get i8 4", b"*2\r\n:159\r\n:-1\r\n"),
    ("BITFIELD_RO bits set u8 0 1", b"-ERR BITFIELD_RO only supports the GET subcommand\r\n"),
    ("BITFIELD_RO bits incrby u8 0 1", b"-ERR BITFIELD_RO only supports the GET subcommand\r\n"),
    ("BITFIELD_RO aset get u8 0", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("BITFIELD_RO aset set u8 0 1", b"-ERR BITFIELD_RO only supports the GET subcommand\r\n"),
    ("BITFIELD_RO nokey2", b"*0\r\n"),
    ("BITFIELD_RO bits overflow sat get u8 0", b"*1\r\n:159\r\n"),
    ("BITFIELD_RO bits bad", b"-ERR syntax error\r\n"),
    ("SET withttl abc EX 100", b"+OK\r\n"),
    ("BITFIELD withttl set u8 0 1", b"*1\r\n:97\r\n"),
    ("TTL withttl", b":100\r\n"),
    ("SETRANGE withttl 1 xx", b":3\r\n"),
    ("TTL withttl", b":100\r\n"),
    ("MSET key1 ohmytext key2 mynewtext", b"+OK\r\n"),
    ("LCS key1 key2", b"$6\r\nmytext\r\n"),
    ("LCS key1 key2 LEN", b":6\r\n"),
    ("LCS key1 key2 IDX", b"*4\r\n$7\r\nmatches\r\n*2\r\n*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n*2\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n$3\r\nlen\r\n:6\r\n"),
    ("LCS key1 key2 IDX MINMATCHLEN 4", b"*4\r\n$7\r\nmatches\r\n*1\r\n*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n$3\r\nlen\r\n:6\r\n"),
    ("LCS key1 key2 IDX MINMATCHLEN 4 WITHMATCHLEN", b"*4\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n$3\r\nlen\r\n:6\r\n"),
    ("LCS key1 key2 IDX WITHMATCHLEN", b"*4\r\n$7\r\nmatches\r\n*2\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n*3\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n:2\r\n$3\r\nlen\r\n:6\r\n"),
    ("LCS key1 key2 IDX MINMATCHLEN -4 WITHMATCHLEN", b"*4\r\n$7\r\nmatches\r\n*2\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n*3\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n:2\r\n$3\r\nlen\r\n:6\r\n"),
    ("LCS key1 key2 IDX LEN", b"-ERR If you want both the length and indexes, please just use IDX.\r\n"),
    ("LCS key1 key2 LEN IDX", b"-ERR If you want both the length and indexes, please just use IDX.\r\n"),
    ("LCS key1 key2 MINMATCHLEN", b"-ERR syntax error\r\n"),
    ("LCS key1 key2 MINMATCHLEN x", b"-ERR value is not an integer or out of range\r\n"),
    ("LCS key1 key2 foo", b"-ERR syntax error\r\n"),
    ("LCS key1 aset", b"-ERR The specified keys must contain string values\r\n"),
    ("LCS aset key1 foo", b"-ERR The specified keys must contain string values\r\n"),
    ("LCS nokey key1", b"$0\r\n\r\n"),
    ("LCS nokey key1 LEN", b":0\r\n"),
    ("LCS nokey key1 IDX", b"*4\r\n$7\r\nmatches\r\n*0\r\n$3\r\nlen\r\n:0\r\n"),
    ("LCS key1 key1 IDX", b"*4\r\n$7\r\nmatches\r\n*1\r\n*2\r\n*2\r\n:0\r\n:7\r\n*2\r\n:0\r\n:7\r\n$3\r\nlen\r\n:8\r\n"),
    ("LCS key1 key2 len withmatchlen", b":6\r\n"),
    ("LCS key1", b"-ERR wrong number of arguments for 'lcs' command\r\n"),
    ("MSET a \"ACCGGTCGAGTGCGCGGAAGCCGGCCGAA\" b \"GTCGTTCGGAATGCCGTTGCTCTGTAAA\"", b"+OK\r\n"),
    ("LCS a b", b"$20\r\nGTCGTCGGAAGCCGGCCGAA\r\n"),
    ("LCS a b IDX WITHMATCHLEN", b"*4\r\n$7\r\nmatches\r\n*8\r\n*3\r\n*2\r\n:27\r\n:28\r\n*2\r\n:26\r\n:27\r\n:2\r\n*3\r\n*2\r\n:26\r\n:26\r\n*2\r\n:23\r\n:23\r\n:1\r\n*3\r\n*2\r\n:25\r\n:25\r\n*2\r\n:21\r\n:21\r\n:1\r\n*3\r\n*2\r\n:23\r\n:24\r\n*2\r\n:18\r\n:19\r\n:2\r\n*3\r\n*2\r\n:19\r\n:22\r\n*2\r\n:12\r\n:15\r\n:4\r\n*3\r\n*2\r\n:14\r\n:18\r\n*2\r\n:6\r\n:10\r\n:5\r\n*3\r\n*2\r\n:9\r\n:10\r\n*2\r\n:3\r\n:4\r\n:2\r\n*3\r\n*2\r\n:4\r\n:6\r\n*2\r\n:0\r\n:2\r\n:3\r\n$3\r\nlen\r\n:20\r\n"),
    ("LCS b a IDX WITHMATCHLEN", b"*4\r\n$7\r\nmatches\r\n*8\r\n*3\r\n*2\r\n:26\r\n:27\r\n*2\r\n:27\r\n:28\r\n:2\r\n*3\r\n*2\r\n:23\r\n:23\r\n*2\r\n:26\r\n:26\r\n:1\r\n*3\r\n*2\r\n:21\r\n:21\r\n*2\r\n:25\r\n:25\r\n:1\r\n*3\r\n*2\r\n:18\r\n:19\r\n*2\r\n:23\r\n:24\r\n:2\r\n*3\r\n*2\r\n:12\r\n:15\r\n*2\r\n:19\r\n:22\r\n:4\r\n*3\r\n*2\r\n:6\r\n:10\r\n*2\r\n:14\r\n:18\r\n:5\r\n*3\r\n*2\r\n:5\r\n:5\r\n*2\r\n:10\r\n:10\r\n:1\r\n*3\r\n*2\r\n:0\r\n:3\r\n*2\r\n:4\r\n:7\r\n:4\r\n$3\r\nlen\r\n:20\r\n"),
    ("LCS a b IDX MINMATCHLEN 3", b"*4\r\n$7\r\nmatches\r\n*3\r\n*2\r\n*2\r\n:19\r\n:22\r\n*2\r\n:12\r\n:15\r\n*2\r\n*2\r\n:14\r\n:18\r\n*2\r\n:6\r\n:10\r\n*2\r\n*2\r\n:4\r\n:6\r\n*2\r\n:0\r\n:2\r\n$3\r\nlen\r\n:20\r\n"),
];

/// Recorded from redis-server 7.0.15 after `HELLO 3` (LCS IDX answers a map).
#[rustfmt::skip]
const RESP3: &[(&str, &[u8])] = &[
    ("SET mykey \"This is a string\"", b"+OK\r\n"),
    ("SADD aset m", b":1\r\n"),
    ("SET key1 \"Hello World\"", b"+OK\r\n"),
    ("SET n 123", b"+OK\r\n"),
    ("SET key1 foobar", b"+OK\r\n"),
    ("SET key2 abcdef", b"+OK\r\n"),
    ("SET short ab", b"+OK\r\n"),
    ("SET withttl abc EX 100", b"+OK\r\n"),
    ("SET mykey \"\\xff\\xf0\\x00\"", b"+OK\r\n"),
    ("BITPOS mykey 0", b":12\r\n"),
    ("SET mykey \"\\x00\\xff\\xf0\"", b"+OK\r\n"),
    ("BITPOS mykey 1 0", b":8\r\n"),
    ("BITPOS mykey 1 2", b":16\r\n"),
    ("BITPOS mykey 1 2 -1 BYTE", b":16\r\n"),
    ("BITPOS mykey 1 7 15 BIT", b":8\r\n"),
    ("SET mykey \"\\x00\\x00\\x00\"", b"+OK\r\n"),
    ("BITPOS mykey 1", b":-1\r\n"),
    ("BITPOS mykey 1 7 -3 BIT", b":-1\r\n"),
    ("BITPOS mykey 0", b":0\r\n"),
    ("BITPOS mykey 0 1", b":8\r\n"),
    ("BITPOS mykey 0 1 2", b":8\r\n"),
    ("SET ff \"\\xff\\xff\\xff\"", b"+OK\r\n"),
    ("BITPOS ff 0", b":24\r\n"),
    ("BITPOS ff 0 1", b":24\r\n"),
    ("BITPOS ff 0 1 2", b":-1\r\n"),
    ("BITPOS ff 0 0 -1 BIT", b":-1\r\n"),
    ("BITPOS ff 0 3 BIT", b"-ERR value is not an integer or out of range\r\n"),
    ("BITPOS ff 1 3 BIT", b"-ERR value is not an integer or out of range\r\n"),
    ("BITPOS ff 1 30 BIT", b"-ERR value is not an integer or out of range\r\n"),
    ("BITPOS ff 1 -30 BIT", b"-ERR value is not an integer or out of range\r\n"),
    ("BITPOS ff 1 -30 -40 BIT", b":0\r\n"),
    ("BITPOS ff 1 1 0", b":-1\r\n"),
    ("BITPOS ff 2", b"-ERR The bit argument must be 1 or 0.\r\n"),
    ("BITPOS ff x", b"-ERR value is not an integer or out of range\r\n"),
    ("BITPOS ff 1 x", b"-ERR value is not an integer or out of range\r\n"),
    ("BITPOS ff 1 0 x", b"-ERR value is not an integer or out of range\r\n"),
    ("BITPOS ff 1 0 1 BOT", b"-ERR syntax error\r\n"),
    ("BITPOS ff 1 0 1 BIT extra", b"-ERR syntax error\r\n"),
    ("BITPOS nokey 0", b":0\r\n"),
    ("BITPOS nokey 1", b":-1\r\n"),
    ("BITPOS nokey 1 x", b":-1\r\n"),
    ("BITPOS nokey 2", b"-ERR The bit argument must be 1 or 0.\r\n"),
    ("BITPOS aset 1", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("SET empty \"\"", b"+OK\r\n"),
    ("BITPOS empty 0", b":-1\r\n"),
    ("BITPOS empty 1", b":-1\r\n"),
    ("BITPOS empty 0 0", b":-1\r\n"),
    ("BITPOS empty 0 0 -1 BIT", b":-1\r\n"),
    ("BITPOS ff 0 2 BIT", b"-ERR value is not an integer or out of range\r\n"),
    ("BITPOS ff 0 -1 BIT", b"-ERR value is not an integer or out of range\r\n"),
    ("BITPOS ff 0 0 BYTE", b"-ERR value is not an integer or out of range\r\n"),
    ("BITFIELD bf INCRBY i5 100 1 GET u4 0", b"*2\r\n:1\r\n:0\r\n"),
    ("BITFIELD bf incrby u2 100 1 OVERFLOW SAT incrby u2 102 1", b"*2\r\n:1\r\n:1\r\n"),
    ("BITFIELD bf incrby u2 100 1 OVERFLOW SAT incrby u2 102 1", b"*2\r\n:2\r\n:2\r\n"),
    ("BITFIELD bf incrby u2 100 1 OVERFLOW SAT incrby u2 102 1", b"*2\r\n:3\r\n:3\r\n"),
    ("BITFIELD bf incrby u2 100 1 OVERFLOW SAT incrby u2 102 1", b"*2\r\n:0\r\n:3\r\n"),
    ("BITFIELD bf OVERFLOW FAIL incrby u2 102 1", b"*1\r\n_\r\n"),
    ("BITFIELD bits set i8 0 -100", b"*1\r\n:0\r\n"),
    ("BITFIELD bits set i8 0 101", b"*1\r\n:-100\r\n"),
    ("BITFIELD bits get i8 0", b"*1\r\n:101\r\n"),
    ("BITFIELD bits set u8 0 255", b"*1\r\n:101\r\n"),
    ("BITFIELD bits set u8 0 100", b"*1\r\n:255\r\n"),
    ("BITFIELD bits get u8 0", b"*1\r\n:100\r\n"),
    ("BITFIELD bits set u8 #0 65", b"*1\r\n:100\r\n"),
    ("BITFIELD bits set u8 #1 66", b"*1\r\n:0\r\n"),
    ("BITFIELD bits set u8 #2 67", b"*1\r\n:0\r\n"),
    ("BITFIELD bits set u8 #0 10", b"*1\r\n:65\r\n"),
    ("BITFIELD bits incrby u8 #0 100", b"*1\r\n:110\r\n"),
    ("BITFIELD bits incrby u8 #0 100", b"*1\r\n:210\r\n"),
    ("BITFIELD bits set u8 #0 100", b"*1\r\n:210\r\n"),
    ("BITFIELD bits incrby u8 #0 257", b"*1\r\n:101\r\n"),
    ("BITFIELD bits get u8 #0", b"*1\r\n:101\r\n"),
    ("BITFIELD bits incrby u8 #0 255", b"*1\r\n:100\r\n"),
    ("BITFIELD bits overflow sat incrby u8 #0 257", b"*1\r\n:255\r\n"),
    ("BITFIELD bits overflow sat incrby u8 #0 -255", b"*1\r\n:0\r\n"),
    ("BITFIELD bits set u8 0 100", b"*1\r\n:0\r\n"),
    ("BITFIELD bits overflow wrap incrby i8 0 257", b"*1\r\n:101\r\n"),
    ("BITFIELD bits overflow sat incrby i8 0 257", b"*1\r\n:127\r\n"),
    ("BITFIELD bits overflow sat incrby i8 0 -255", b"*1\r\n:-128\r\n"),
    ("BITFIELD bits overflow fail set u8 0 300", b"*1\r\n_\r\n"),
    ("BITFIELD bits overflow fail set u8 0 -1", b"*1\r\n_\r\n"),
    ("BITFIELD bits overflow sat set u8 0 -1", b"*1\r\n:128\r\n"),
    ("BITFIELD bits overflow wrap set u8 0 -1", b"*1\r\n:255\r\n"),
    ("BITFIELD bits overflow sat set i8 0 -1000", b"*1\r\n:-1\r\n"),
    ("BITFIELD bits set i64 3 -9223372036854775808", b"*1\r\n:149208125935714304\r\n"),
    ("BITFIELD bits get i64 3 get u63 3 get u63 4", b"*3\r\n:-9223372036854775808\r\n:4611686018427387904\r\n:0\r\n"),
    ("BITFIELD bits overflow wrap incrby i64 3 -1", b"*1\r\n:9223372036854775807\r\n"),
    ("BITFIELD bits overflow sat incrby i64 3 1", b"*1\r\n:9223372036854775807\r\n"),
    ("BITFIELD bits overflow fail incrby i64 3 1", b"*1\r\n_\r\n"),
    ("BITFIELD bits overflow sat incrby u63 3 9223372036854775807", b"*1\r\n:9223372036854775807\r\n"),
    ("BITFIELD bits get i1 0 get u1 0 get i2 7 get u17 5", b"*4\r\n:-1\r\n:1\r\n:-1\r\n:131071\r\n"),
    ("BITFIELD bits get u64 0", b"-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.\r\n"),
    ("BITFIELD bits get i65 0", b"-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.\r\n"),
    ("BITFIELD bits get u0 0", b"-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.\r\n"),
    ("BITFIELD bits get I8 0", b"-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.\r\n"),
    ("BITFIELD bits get x8 0", b"-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.\r\n"),
    ("BITFIELD bits get i8 -1", b"-ERR bit offset is not an integer or out of range\r\n"),
    ("BITFIELD bits get i8 4294967295", b"*1\r\n:0\r\n"),
    ("BITFIELD bits get i8 4294967296", b"-ERR bit offset is not an integer or out of range\r\n"),
    ("BITFIELD bits get i8 #536870911", b"*1\r\n:0\r\n"),
    ("BITFIELD bits get i8 #536870912", b"-ERR bit offset is not an integer or out of range\r\n"),
    ("BITFIELD bits get i8 #-1", b"-ERR bit offset is not an integer or out of range\r\n"),
    ("BITFIELD bits get u1 #4294967295", b"*1\r\n:0\r\n"),
    ("BITFIELD bits get i8 x", b"-ERR bit offset is not an integer or out of range\r\n"),
    ("BITFIELD bits set i8 0 x", b"-ERR value is not an integer or out of range\r\n"),
    ("BITFIELD bits set i8 0", b"-ERR syntax error\r\n"),
    ("BITFIELD bits get i8", b"-ERR syntax error\r\n"),
    ("BITFIELD bits foo i8 0", b"-ERR syntax error\r\n"),
    ("BITFIELD bits overflow", b"-ERR syntax error\r\n"),
    ("BITFIELD bits overflow foo get i8 0", b"-ERR Invalid OVERFLOW type specified\r\n"),
    ("BITFIELD bits overflow fail", b"*0\r\n"),
    ("BITFIELD bits", b"*0\r\n"),
    ("BITFIELD nokey", b"*0\r\n"),
    ("BITFIELD nokey get u8 100", b"*1\r\n:0\r\n"),
    ("BITFIELD nokey overflow fail set u2 100 7", b"*1\r\n_\r\n"),
    ("BITFIELD aset get u8 0", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("BITFIELD aset set u8 0 1", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("BITFIELD_RO bits get u8 0 get i8 4", b"*2\r\n:159\r\n:-1\r\n"),
    ("BITFIELD_RO bits set u8 0 1", b"-ERR BITFIELD_RO only supports the GET subcommand\r\n"),
    ("BITFIELD_RO bits incrby u8 0 1", b"-ERR BITFIELD_RO only supports the GET subcommand\r\n"),
    ("BITFIELD_RO aset get u8 0", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("BITFIELD_RO aset set u8 0 1", b"-ERR BITFIELD_RO only supports the GET subcommand\r\n"),
    ("BITFIELD_RO nokey2", b"*0\r\n"),
    ("BITFIELD_RO bits overflow sat get u8 0", b"*1\r\n:159\r\n"),
    ("BITFIELD_RO bits bad", b"-ERR syntax error\r\n"),
    ("SET withttl abc EX 100", b"+OK\r\n"),
    ("BITFIELD withttl set u8 0 1", b"*1\r\n:97\r\n"),
    ("MSET key1 ohmytext key2 mynewtext", b"+OK\r\n"),
    ("LCS key1 key2", b"$6\r\nmytext\r\n"),
    ("LCS key1 key2 LEN", b":6\r\n"),
    ("LCS key1 key2 IDX", b"%2\r\n$7\r\nmatches\r\n*2\r\n*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n*2\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n$3\r\nlen\r\n:6\r\n"),
    ("LCS key1 key2 IDX MINMATCHLEN 4", b"%2\r\n$7\r\nmatches\r\n*1\r\n*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n$3\r\nlen\r\n:6\r\n"),
    ("LCS key1 key2 IDX MINMATCHLEN 4 WITHMATCHLEN", b"%2\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n$3\r\nlen\r\n:6\r\n"),
    ("LCS key1 key2 IDX WITHMATCHLEN", b"%2\r\n$7\r\nmatches\r\n*2\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n*3\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n:2\r\n$3\r\nlen\r\n:6\r\n"),
    ("LCS key1 key2 IDX MINMATCHLEN -4 WITHMATCHLEN", b"%2\r\n$7\r\nmatches\r\n*2\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n*3\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n:2\r\n$3\r\nlen\r\n:6\r\n"),
    ("LCS key1 key2 IDX LEN", b"-ERR If you want both the length and indexes, please just use IDX.\r\n"),
    ("LCS key1 key2 LEN IDX", b"-ERR If you want both the length and indexes, please just use IDX.\r\n"),
    ("LCS key1 key2 MINMATCHLEN", b"-ERR syntax error\r\n"),
    ("LCS key1 key2 MINMATCHLEN x", b"-ERR value is not an integer or out of range\r\n"),
    ("LCS key1 key2 foo", b"-ERR syntax error\r\n"),
    ("LCS key1 aset", b"-ERR The specified keys must contain string values\r\n"),
    ("LCS aset key1 foo", b"-ERR The specified keys must contain string values\r\n"),
    ("LCS nokey key1", b"$0\r\n\r\n"),
    ("LCS nokey key1 LEN", b":0\r\n"),
    ("LCS nokey key1 IDX", b"%2\r\n$7\r\nmatches\r\n*0\r\n$3\r\nlen\r\n:0\r\n"),
    ("LCS key1 key1 IDX", b"%2\r\n$7\r\nmatches\r\n*1\r\n*2\r\n*2\r\n:0\r\n:7\r\n*2\r\n:0\r\n:7\r\n$3\r\nlen\r\n:8\r\n"),
    ("LCS key1 key2 len withmatchlen", b":6\r\n"),
    ("LCS key1", b"-ERR wrong number of arguments for 'lcs' command\r\n"),
    ("MSET a \"ACCGGTCGAGTGCGCGGAAGCCGGCCGAA\" b \"GTCGTTCGGAATGCCGTTGCTCTGTAAA\"", b"+OK\r\n"),
    ("LCS a b", b"$20\r\nGTCGTCGGAAGCCGGCCGAA\r\n"),
    ("LCS a b IDX WITHMATCHLEN", b"%2\r\n$7\r\nmatches\r\n*8\r\n*3\r\n*2\r\n:27\r\n:28\r\n*2\r\n:26\r\n:27\r\n:2\r\n*3\r\n*2\r\n:26\r\n:26\r\n*2\r\n:23\r\n:23\r\n:1\r\n*3\r\n*2\r\n:25\r\n:25\r\n*2\r\n:21\r\n:21\r\n:1\r\n*3\r\n*2\r\n:23\r\n:24\r\n*2\r\n:18\r\n:19\r\n:2\r\n*3\r\n*2\r\n:19\r\n:22\r\n*2\r\n:12\r\n:15\r\n:4\r\n*3\r\n*2\r\n:14\r\n:18\r\n*2\r\n:6\r\n:10\r\n:5\r\n*3\r\n*2\r\n:9\r\n:10\r\n*2\r\n:3\r\n:4\r\n:2\r\n*3\r\n*2\r\n:4\r\n:6\r\n*2\r\n:0\r\n:2\r\n:3\r\n$3\r\nlen\r\n:20\r\n"),
    ("LCS b a IDX WITHMATCHLEN", b"%2\r\n$7\r\nmatches\r\n*8\r\n*3\r\n*2\r\n:26\r\n:27\r\n*2\r\n:27\r\n:28\r\n:2\r\n*3\r\n*2\r\n:23\r\n:23\r\n*2\r\n:26\r\n:26\r\n:1\r\n*3\r\n*2\r\n:21\r\n:21\r\n*2\r\n:25\r\n:25\r\n:1\r\n*3\r\n*2\r\n:18\r\n:19\r\n*2\r\n:23\r\n:24\r\n:2\r\n*3\r\n*2\r\n:12\r\n:15\r\n*2\r\n:19\r\n:22\r\n:4\r\n*3\r\n*2\r\n:6\r\n:10\r\n*2\r\n:14\r\n:18\r\n:5\r\n*3\r\n*2\r\n:5\r\n:5\r\n*2\r\n:10\r\n:10\r\n:1\r\n*3\r\n*2\r\n:0\r\n:3\r\n*2\r\n:4\r\n:7\r\n:4\r\n$3\r\nlen\r\n:20\r\n"),
    ("LCS a b IDX MINMATCHLEN 3", b"%2\r\n$7\r\nmatches\r\n*3\r\n*2\r\n*2\r\n:19\r\n:22\r\n*2\r\n:12\r\n:15\r\n*2\r\n*2\r\n:14\r\n:18\r\n*2\r\n:6\r\n:10\r\n*2\r\n*2\r\n:4\r\n:6\r\n*2\r\n:0\r\n:2\r\n$3\r\nlen\r\n:20\r\n"),
];

#[test]
fn resp2_replies_match_redis() {
    let s = TestServer::start();
    let mut raw = s.raw();
    run(&mut raw, RESP2);
}

#[test]
fn resp3_replies_match_redis() {
    let s = TestServer::start();
    let mut raw = s.raw();
    raw.cmd(&[b"HELLO", b"3"]);
    raw.read_until(b"modules\r\n*0\r\n");
    run(&mut raw, RESP3);
}

fn bytes_of(v: Value) -> Vec<u8> {
    match v {
        Value::BulkString(b) => b,
        other => panic!("not a bulk string: {other:?}"),
    }
}

/// The unsigned `width`-bit field at bit `at` of `v` (most significant bit first).
fn field(v: &[u8], at: usize, width: usize) -> i64 {
    (at..at + width).fold(0, |acc, b| {
        let bit = v.get(b / 8).is_some_and(|x| x & (0x80 >> (b % 8)) != 0);
        (acc << 1) | i64::from(bit)
    })
}

fn set_field(v: &mut [u8], at: usize, width: usize, value: i64) {
    for k in 0..width {
        let b = at + k;
        let mask = 0x80u8 >> (b % 8);
        if (value >> (width - 1 - k)) & 1 == 1 {
            v[b / 8] |= mask;
        } else {
            v[b / 8] &= !mask;
        }
    }
}

/// Strings past one 4 KiB chunk: ranges, fields, bit searches and BITOP that cross chunk
/// boundaries read and write the right bytes, and the results survive a restart.
#[test]
fn ranges_and_fields_across_chunks_survive_a_restart() {
    let mut s = TestServer::start();
    let mut c = s.client();
    // SETRANGE far out makes a chunked string of zeros ending with the value.
    assert_eq!(
        ok(&mut c, &["SETRANGE", "big", "10000", "hello"]),
        int(10005)
    );
    let mut model = vec![0u8; 10005];
    model[10000..].copy_from_slice(b"hello");
    // A write across the boundary between the first and the second chunk.
    let across = "0123456789abcdefghij";
    assert_eq!(ok(&mut c, &["SETRANGE", "big", "4090", across]), int(10005));
    model[4090..4110].copy_from_slice(across.as_bytes());
    assert_eq!(
        ok(&mut c, &["GETRANGE", "big", "4088", "4111"]),
        Value::BulkString(model[4088..=4111].to_vec())
    );
    assert_eq!(ok(&mut c, &["GETRANGE", "big", "-5", "-1"]), bulk("hello"));
    // A 16-bit field straddling bytes 4095 to 4097 (bit 32764), and an INCRBY past the
    // string's end that grows it.
    let old = field(&model, 32764, 16);
    assert_eq!(
        ok(
            &mut c,
            &[
                "BITFIELD", "big", "SET", "u16", "32764", "65535", "GET", "u16", "32764"
            ]
        ),
        ints(&[old, 65535])
    );
    set_field(&mut model, 32764, 16, 65535);
    assert_eq!(
        ok(&mut c, &["BITFIELD", "big", "INCRBY", "i8", "80048", "-3"]),
        ints(&[-3])
    );
    model.resize(80048 / 8 + 1, 0);
    set_field(&mut model, 80048, 8, 0xfd);
    assert_eq!(ok(&mut c, &["STRLEN", "big"]), int(model.len() as i64));
    // BITPOS finds the first set bit in the second chunk and the first clear bit after the
    // field of ones.
    let first_one = (32768..).find(|&b| field(&model, b, 1) == 1).unwrap();
    assert_eq!(
        ok(&mut c, &["BITPOS", "big", "1", "4096"]),
        int(first_one as i64)
    );
    let first_zero = (32764..).find(|&b| field(&model, b, 1) == 0).unwrap();
    assert_eq!(
        ok(&mut c, &["BITPOS", "big", "0", "32764", "-1", "BIT"]),
        int(first_zero as i64)
    );
    // BITOP over a chunked and an inline source.
    ok(&mut c, &["SET", "small", "\u{1}abc"]);
    let small = bytes_of(ok(&mut c, &["GET", "small"]));
    assert_eq!(
        ok(&mut c, &["BITOP", "XOR", "x", "big", "small"]),
        int(model.len() as i64)
    );
    let mut xor = model.clone();
    for (d, s) in xor.iter_mut().zip(&small) {
        *d ^= s;
    }
    s.restart();
    let mut c = s.client();
    assert_eq!(bytes_of(ok(&mut c, &["GET", "big"])), model);
    assert_eq!(bytes_of(ok(&mut c, &["GET", "x"])), xor);
    assert_eq!(
        ok(&mut c, &["LCS", "big", "small", "LEN"]),
        int(3),
        "\"abc\" is in the big string; no byte 1 comes before it"
    );
}

/// Commands that change a string keep its time to live; BITOP's destination has none.
#[test]
fn modifications_keep_the_ttl_and_bitop_drops_it() {
    let s = TestServer::start();
    let mut c = s.client();
    for (cmd, extra) in [
        ("SETRANGE", vec!["1", "zz"]),
        ("SETRANGE", vec!["9000", "zz"]),
        ("BITFIELD", vec!["SET", "u8", "#3", "7"]),
        ("BITFIELD", vec!["INCRBY", "u8", "#9000", "7"]),
    ] {
        ok(&mut c, &["SET", "t", "abc", "EX", "1000"]);
        let mut words = vec![cmd, "t"];
        words.extend(extra.iter().copied());
        ok(&mut c, &words);
        let Value::Int(ttl) = ok(&mut c, &["TTL", "t"]) else {
            panic!()
        };
        assert!(ttl > 900, "{cmd} {extra:?} kept the ttl: {ttl}");
    }
    ok(&mut c, &["SET", "d", "abc", "EX", "1000"]);
    ok(&mut c, &["BITOP", "OR", "d", "t"]);
    assert_eq!(ok(&mut c, &["TTL", "d"]), int(-1));
    // Every source empty: the destination is deleted.
    assert_eq!(ok(&mut c, &["BITOP", "AND", "d", "none", "none2"]), int(0));
    assert_eq!(ok(&mut c, &["EXISTS", "d"]), int(0));
    // Wrong types.
    ok(&mut c, &["SADD", "set", "m"]);
    assert_eq!(
        err(&mut c, &["LCS", "set", "t"]),
        "ERR The specified keys must contain string values"
    );
    assert!(err(&mut c, &["BITOP", "OR", "d", "t", "set"]).starts_with("WRONGTYPE"));
    assert!(err(&mut c, &["SETRANGE", "set", "0", "x"]).starts_with("WRONGTYPE"));
}

/// A BITFIELD that fails inside MULTI leaves the transaction's other writes in place, as
/// Redis runs every queued command; a failing FAIL-overflow write still grows the string.
#[test]
fn bitfield_in_a_transaction_and_overflow_fail_growth() {
    let s = TestServer::start();
    let mut c = s.client();
    let (a, b): (Value, Value) = redis::pipe()
        .atomic()
        .cmd("SETRANGE")
        .arg("k")
        .arg(0)
        .arg("ab")
        .cmd("BITFIELD")
        .arg("k")
        .arg("OVERFLOW")
        .arg("FAIL")
        .arg("INCRBY")
        .arg("u2")
        .arg(100)
        .arg(9)
        .query(&mut c)
        .unwrap();
    assert_eq!(a, int(2));
    assert_eq!(b, Value::Array(vec![Value::Nil]));
    assert_eq!(ok(&mut c, &["STRLEN", "k"]), int(13));
    assert_eq!(bytes_of(ok(&mut c, &["GETRANGE", "k", "0", "1"])), b"ab");
}
