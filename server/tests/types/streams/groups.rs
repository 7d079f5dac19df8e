//! Consumer groups: XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM, XINFO and
//! XSETID with Redis's exact replies and errors (recorded from redis-server 7.0.15; where
//! 7.2 differs, and this server answers as 7.2, the test says so), XREADGROUP BLOCK served by
//! XADD and ended by XGROUP DESTROY or DEL, groups through RENAME and a restart, and a model
//! test of the pending-entries list.

use std::collections::BTreeMap;

use super::common::model::Rng;
use super::common::{TestServer, bulk, err, int, ok, q, run_bytes_table, wait_blocked};
use redis::Value;

/// Recorded from redis-server 7.0.15, in order on one connection (RESP2). Left out: replies
/// holding idle times or generated IDs, and XINFO GROUPS after an XREADGROUP that served a
/// consumer nothing (7.0 creates the consumer only when it is served, 7.2 always).
#[rustfmt::skip]
const RECORDED: &[(&str, &[u8])] = &[
    ("FLUSHALL", b"+OK\r\n"),
    ("XGROUP CREATE missing g 0", b"-ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.\r\n"),
    ("XGROUP SETID missing g 0", b"-ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.\r\n"),
    ("XGROUP DESTROY missing g", b"-ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.\r\n"),
    ("XGROUP CREATECONSUMER missing g c", b"-ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.\r\n"),
    ("XGROUP DELCONSUMER missing g c", b"-ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.\r\n"),
    ("XGROUP CREATE missing g $ MKSTREAM", b"+OK\r\n"),
    ("XLEN missing", b":0\r\n"),
    ("TYPE missing", b"+stream\r\n"),
    ("XGROUP CREATE missing g $ MKSTREAM", b"-BUSYGROUP Consumer Group name already exists\r\n"),
    ("XGROUP CREATE missing g2 $ BOGUS", b"-ERR unknown subcommand or wrong number of arguments for 'CREATE'. Try XGROUP HELP.\r\n"),
    ("XGROUP CREATE missing g2 $ ENTRIESREAD -2", b"-ERR value for ENTRIESREAD must be positive or -1\r\n"),
    ("XGROUP CREATE missing g2 $ ENTRIESREAD x", b"-ERR value is not an integer or out of range\r\n"),
    ("XGROUP CREATE missing g2 -", b"-ERR Invalid stream ID specified as stream command argument\r\n"),
    ("XGROUP CREATE missing g2 +", b"-ERR Invalid stream ID specified as stream command argument\r\n"),
    ("XGROUP CREATE missing g2 1", b"+OK\r\n"),
    ("XGROUP CREATE missing g3 1-x", b"-ERR Invalid stream ID specified as stream command argument\r\n"),
    ("XGROUP SETID missing g -", b"+OK\r\n"),
    ("XGROUP SETID missing g +", b"+OK\r\n"),
    ("XGROUP SETID missing g 5 ENTRIESREAD 3", b"+OK\r\n"),
    ("XGROUP SETID missing g 5 ENTRIESREAD", b"-ERR unknown subcommand or wrong number of arguments for 'SETID'. Try XGROUP HELP.\r\n"),
    ("XGROUP SETID missing g 5 FOO 3", b"-ERR unknown subcommand or wrong number of arguments for 'SETID'. Try XGROUP HELP.\r\n"),
    ("XGROUP SETID missing nog 5", b"-NOGROUP No such consumer group 'nog' for key name 'missing'\r\n"),
    ("XGROUP DESTROY missing g3", b":0\r\n"),
    ("XGROUP DESTROY missing g2", b":1\r\n"),
    ("XGROUP DESTROY missing g", b":1\r\n"),
    ("XGROUP", b"-ERR wrong number of arguments for 'xgroup' command\r\n"),
    ("XGROUP HELP", b"*17\r\n+XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+CREATE <key> <groupname> <id|$> [option]\r\n+    Create a new consumer group. Options are:\r\n+    * MKSTREAM\r\n+      Create the empty stream if it does not exist.\r\n+    * ENTRIESREAD entries_read\r\n+      Set the group's entries_read counter (internal use).\r\n+CREATECONSUMER <key> <groupname> <consumer>\r\n+    Create a new consumer in the specified group.\r\n+DELCONSUMER <key> <groupname> <consumer>\r\n+    Remove the specified consumer.\r\n+DESTROY <key> <groupname>\r\n+    Remove the specified group.\r\n+SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]\r\n+    Set the current group ID and entries_read counter.\r\n+HELP\r\n+    Prints this help.\r\n"),
    ("XGROUP HELP extra", b"-ERR wrong number of arguments for 'xgroup|help' command\r\n"),
    ("XGROUP FOO", b"-ERR unknown subcommand 'FOO'. Try XGROUP HELP.\r\n"),
    ("XGROUP CREATE", b"-ERR wrong number of arguments for 'xgroup|create' command\r\n"),
    ("XGROUP CREATE a b", b"-ERR wrong number of arguments for 'xgroup|create' command\r\n"),
    ("XGROUP DESTROY a b c", b"-ERR wrong number of arguments for 'xgroup|destroy' command\r\n"),
    ("SET str v", b"+OK\r\n"),
    ("XGROUP CREATE str g 0", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("XGROUP CREATE str g 0 MKSTREAM", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("XADD s 1-1 f 1", b"$3\r\n1-1\r\n"),
    ("XADD s 2-1 f 2", b"$3\r\n2-1\r\n"),
    ("XADD s 3-1 f 3", b"$3\r\n3-1\r\n"),
    ("XGROUP CREATE s g 0", b"+OK\r\n"),
    ("XGROUP CREATE s g 0", b"-BUSYGROUP Consumer Group name already exists\r\n"),
    ("XGROUP CREATECONSUMER s g alice", b":1\r\n"),
    ("XGROUP CREATECONSUMER s g alice", b":0\r\n"),
    ("XREADGROUP GROUP g alice COUNT 1 STREAMS s >", b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\n1\r\n"),
    ("XREADGROUP GROUP g bob STREAMS s >", b"*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nf\r\n$1\r\n2\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\nf\r\n$1\r\n3\r\n"),
    ("XREADGROUP GROUP g bob STREAMS s >", b"*-1\r\n"),
    ("XREADGROUP GROUP g bob STREAMS s 0", b"*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nf\r\n$1\r\n2\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\nf\r\n$1\r\n3\r\n"),
    ("XREADGROUP GROUP g alice STREAMS s 0", b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\n1\r\n"),
    ("XREADGROUP GROUP g alice STREAMS s 1-1", b"*1\r\n*2\r\n$1\r\ns\r\n*0\r\n"),
    ("XREADGROUP GROUP g carol STREAMS s 0", b"*1\r\n*2\r\n$1\r\ns\r\n*0\r\n"),
    ("XPENDING s g", b"*4\r\n:3\r\n$3\r\n1-1\r\n$3\r\n3-1\r\n*2\r\n*2\r\n$5\r\nalice\r\n$1\r\n1\r\n*2\r\n$3\r\nbob\r\n$1\r\n2\r\n"),
    ("XPENDING s g - + 10 nobody", b"*0\r\n"),
    ("XPENDING s g - + 0", b"*0\r\n"),
    ("XPENDING s g - + -5", b"*0\r\n"),
    ("XPENDING s g ( + 10 x", b"-ERR Invalid stream ID specified as stream command argument\r\n"),
    ("XPENDING s g - + x", b"-ERR value is not an integer or out of range\r\n"),
    ("XPENDING s g - +", b"-ERR syntax error\r\n"),
    ("XPENDING s g IDLE 5 - +", b"-ERR syntax error\r\n"),
    ("XPENDING s nog", b"-NOGROUP No such key 's' or consumer group 'nog'\r\n"),
    ("XPENDING nokey g", b"-NOGROUP No such key 'nokey' or consumer group 'g'\r\n"),
    ("XPENDING str g", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("XACK s g 1-1 1-1 9-9", b":1\r\n"),
    ("XACK s g x", b"-ERR Invalid stream ID specified as stream command argument\r\n"),
    ("XACK s nog x", b":0\r\n"),
    ("XACK nokey g x", b":0\r\n"),
    ("XPENDING s g", b"*4\r\n:2\r\n$3\r\n2-1\r\n$3\r\n3-1\r\n*1\r\n*2\r\n$3\r\nbob\r\n$1\r\n2\r\n"),
    ("XDEL s 2-1", b":1\r\n"),
    ("XREADGROUP GROUP g bob STREAMS s 0", b"*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n2-1\r\n*-1\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\nf\r\n$1\r\n3\r\n"),
    ("XREADGROUP GROUP g bob COUNT 1 STREAMS s 0", b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*-1\r\n"),
    ("XCLAIM s g alice 0 2-1 3-1 JUSTID", b"*1\r\n$3\r\n3-1\r\n"),
    ("XPENDING s g", b"*4\r\n:1\r\n$3\r\n3-1\r\n$3\r\n3-1\r\n*1\r\n*2\r\n$5\r\nalice\r\n$1\r\n1\r\n"),
    ("XINFO GROUPS s", b"*1\r\n*12\r\n$4\r\nname\r\n$1\r\ng\r\n$9\r\nconsumers\r\n:3\r\n$7\r\npending\r\n:1\r\n$17\r\nlast-delivered-id\r\n$3\r\n3-1\r\n$12\r\nentries-read\r\n:3\r\n$3\r\nlag\r\n:0\r\n"),
    ("XGROUP DELCONSUMER s g alice", b":1\r\n"),
    ("XGROUP DELCONSUMER s g alice", b":0\r\n"),
    ("XPENDING s g", b"*4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n"),
    ("XINFO GROUPS s", b"*1\r\n*12\r\n$4\r\nname\r\n$1\r\ng\r\n$9\r\nconsumers\r\n:2\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n3-1\r\n$12\r\nentries-read\r\n:3\r\n$3\r\nlag\r\n:0\r\n"),
    ("XREADGROUP GROUP g bob STREAMS s $", b"-ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.\r\n"),
    ("XREAD GROUP g bob STREAMS s >", b"-ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.\r\n"),
    ("XREAD STREAMS s >", b"-ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.\r\n"),
    ("XREADGROUP GROUP g bob STREAMS s", b"-ERR wrong number of arguments for 'xreadgroup' command\r\n"),
    ("XREADGROUP GROUP g bob STREAMS s > 0", b"-ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.\r\n"),
    ("XREADGROUP GROUP g bob NOACK STREAMS s nokey > >", b"-NOGROUP No such key 'nokey' or consumer group 'g' in XREADGROUP with GROUP option\r\n"),
    ("XREADGROUP GROUP nog bob STREAMS s >", b"-NOGROUP No such key 's' or consumer group 'nog' in XREADGROUP with GROUP option\r\n"),
    ("XREADGROUP STREAMS s >", b"-ERR wrong number of arguments for 'xreadgroup' command\r\n"),
    ("XREADGROUP GROUP g STREAMS s >", b"-ERR wrong number of arguments for 'xreadgroup' command\r\n"),
    ("XREADGROUP GROUP g c COUNT x STREAMS s >", b"-ERR value is not an integer or out of range\r\n"),
    ("XREADGROUP GROUP g c BLOCK -1 STREAMS s >", b"-ERR timeout is negative\r\n"),
    ("XREADGROUP GROUP g c STREAMS s 1-x", b"-ERR Invalid stream ID specified as stream command argument\r\n"),
    ("XADD s 4-1 f 4", b"$3\r\n4-1\r\n"),
    ("XADD s 5-1 f 5", b"$3\r\n5-1\r\n"),
    ("XREADGROUP GROUP g dave NOACK STREAMS s >", b"*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n4-1\r\n*2\r\n$1\r\nf\r\n$1\r\n4\r\n*2\r\n$3\r\n5-1\r\n*2\r\n$1\r\nf\r\n$1\r\n5\r\n"),
    ("XPENDING s g", b"*4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n"),
    ("XINFO GROUPS s", b"*1\r\n*12\r\n$4\r\nname\r\n$1\r\ng\r\n$9\r\nconsumers\r\n:3\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n5-1\r\n$12\r\nentries-read\r\n:5\r\n$3\r\nlag\r\n:0\r\n"),
    ("XGROUP SETID s g 0", b"+OK\r\n"),
    ("XINFO GROUPS s", b"*1\r\n*12\r\n$4\r\nname\r\n$1\r\ng\r\n$9\r\nconsumers\r\n:3\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n0-0\r\n$12\r\nentries-read\r\n$-1\r\n$3\r\nlag\r\n$-1\r\n"),
    ("XREADGROUP GROUP g erin STREAMS s >", b"*1\r\n*2\r\n$1\r\ns\r\n*4\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\n1\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\nf\r\n$1\r\n3\r\n*2\r\n$3\r\n4-1\r\n*2\r\n$1\r\nf\r\n$1\r\n4\r\n*2\r\n$3\r\n5-1\r\n*2\r\n$1\r\nf\r\n$1\r\n5\r\n"),
    ("XINFO GROUPS s", b"*1\r\n*12\r\n$4\r\nname\r\n$1\r\ng\r\n$9\r\nconsumers\r\n:4\r\n$7\r\npending\r\n:4\r\n$17\r\nlast-delivered-id\r\n$3\r\n5-1\r\n$12\r\nentries-read\r\n:5\r\n$3\r\nlag\r\n:0\r\n"),
    ("XPENDING s g", b"*4\r\n:4\r\n$3\r\n1-1\r\n$3\r\n5-1\r\n*1\r\n*2\r\n$4\r\nerin\r\n$1\r\n4\r\n"),
    ("XCLAIM s g frank 0 1-1 2-1 3-1 4-1 5-1 9-9 JUSTID", b"*4\r\n$3\r\n1-1\r\n$3\r\n3-1\r\n$3\r\n4-1\r\n$3\r\n5-1\r\n"),
    ("XPENDING s g", b"*4\r\n:4\r\n$3\r\n1-1\r\n$3\r\n5-1\r\n*1\r\n*2\r\n$5\r\nfrank\r\n$1\r\n4\r\n"),
    ("XCLAIM s g frank 0 9-9 FORCE JUSTID", b"*0\r\n"),
    ("XCLAIM s g frank 0 4-1 JUSTID RETRYCOUNT 7", b"*1\r\n$3\r\n4-1\r\n"),
    ("XCLAIM s g frank x 4-1", b"-ERR Invalid min-idle-time argument for XCLAIM\r\n"),
    ("XCLAIM s g frank 0 4-1 IDLE x", b"-ERR Invalid IDLE option argument for XCLAIM\r\n"),
    ("XCLAIM s g frank 0 4-1 TIME x", b"-ERR Invalid TIME option argument for XCLAIM\r\n"),
    ("XCLAIM s g frank 0 4-1 RETRYCOUNT x", b"-ERR Invalid RETRYCOUNT option argument for XCLAIM\r\n"),
    ("XCLAIM s g frank 0 4-1 BOGUS", b"-ERR Unrecognized XCLAIM option 'BOGUS'\r\n"),
    ("XCLAIM s g frank 0 4-1 LASTID x", b"-ERR Invalid stream ID specified as stream command argument\r\n"),
    ("XCLAIM s g frank 0 4-1 LASTID 99-0 JUSTID", b"*1\r\n$3\r\n4-1\r\n"),
    ("XINFO GROUPS s", b"*1\r\n*12\r\n$4\r\nname\r\n$1\r\ng\r\n$9\r\nconsumers\r\n:5\r\n$7\r\npending\r\n:4\r\n$17\r\nlast-delivered-id\r\n$4\r\n99-0\r\n$12\r\nentries-read\r\n:5\r\n$3\r\nlag\r\n:0\r\n"),
    ("XCLAIM s nog frank 0 4-1", b"-NOGROUP No such key 's' or consumer group 'nog'\r\n"),
    ("XCLAIM nokey g frank 0 4-1", b"-NOGROUP No such key 'nokey' or consumer group 'g'\r\n"),
    ("XCLAIM str g frank 0 4-1", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("XAUTOCLAIM s g gina 0 0", b"*3\r\n$3\r\n0-0\r\n*4\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\n1\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\nf\r\n$1\r\n3\r\n*2\r\n$3\r\n4-1\r\n*2\r\n$1\r\nf\r\n$1\r\n4\r\n*2\r\n$3\r\n5-1\r\n*2\r\n$1\r\nf\r\n$1\r\n5\r\n*0\r\n"),
    ("XAUTOCLAIM s g gina 0 0 COUNT 1", b"*3\r\n$3\r\n3-1\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\n1\r\n*0\r\n"),
    ("XAUTOCLAIM s g gina 0 0 COUNT 1 JUSTID", b"*3\r\n$3\r\n3-1\r\n*1\r\n$3\r\n1-1\r\n*0\r\n"),
    ("XAUTOCLAIM s g gina 0 (3-1 COUNT 1 JUSTID", b"*3\r\n$3\r\n5-1\r\n*1\r\n$3\r\n4-1\r\n*0\r\n"),
    ("XAUTOCLAIM s g gina 0 0 COUNT 0", b"-ERR COUNT must be > 0\r\n"),
    ("XAUTOCLAIM s g gina 0 0 COUNT x", b"-ERR COUNT must be > 0\r\n"),
    ("XAUTOCLAIM s g gina x 0", b"-ERR Invalid min-idle-time argument for XAUTOCLAIM\r\n"),
    ("XAUTOCLAIM s g gina 0 x", b"-ERR Invalid stream ID specified as stream command argument\r\n"),
    ("XAUTOCLAIM s g gina 0 0 BOGUS", b"-ERR syntax error\r\n"),
    ("XAUTOCLAIM s nog gina 0 0", b"-NOGROUP No such key 's' or consumer group 'nog'\r\n"),
    ("XAUTOCLAIM nokey g gina 0 0", b"-NOGROUP No such key 'nokey' or consumer group 'g'\r\n"),
    ("XDEL s 3-1 5-1", b":2\r\n"),
    ("XAUTOCLAIM s g gina 0 0", b"*3\r\n$3\r\n0-0\r\n*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\n1\r\n*2\r\n$3\r\n4-1\r\n*2\r\n$1\r\nf\r\n$1\r\n4\r\n*2\r\n$3\r\n3-1\r\n$3\r\n5-1\r\n"),
    ("XPENDING s g", b"*4\r\n:2\r\n$3\r\n1-1\r\n$3\r\n4-1\r\n*1\r\n*2\r\n$4\r\ngina\r\n$1\r\n2\r\n"),
    ("XINFO STREAM s", b"*20\r\n$6\r\nlength\r\n:2\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n5-1\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n5-1\r\n$13\r\nentries-added\r\n:5\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n1-1\r\n$6\r\ngroups\r\n:1\r\n$11\r\nfirst-entry\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\n1\r\n$10\r\nlast-entry\r\n*2\r\n$3\r\n4-1\r\n*2\r\n$1\r\nf\r\n$1\r\n4\r\n"),
    ("XINFO STREAM nokey", b"-ERR no such key\r\n"),
    ("XINFO STREAM str", b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    ("XINFO STREAM s FULL COUNT x", b"-ERR value is not an integer or out of range\r\n"),
    ("XINFO STREAM s FULL x", b"-ERR unknown subcommand or wrong number of arguments for 'STREAM'. Try XINFO HELP.\r\n"),
    ("XINFO STREAM s BOGUS", b"-ERR unknown subcommand or wrong number of arguments for 'STREAM'. Try XINFO HELP.\r\n"),
    ("XINFO GROUPS nokey", b"-ERR no such key\r\n"),
    ("XINFO CONSUMERS s nog", b"-NOGROUP No such consumer group 'nog' for key name 's'\r\n"),
    ("XINFO CONSUMERS nokey g", b"-ERR no such key\r\n"),
    ("XINFO FOO", b"-ERR unknown subcommand 'FOO'. Try XINFO HELP.\r\n"),
    ("XINFO", b"-ERR wrong number of arguments for 'xinfo' command\r\n"),
    ("XINFO HELP", b"*9\r\n+XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+CONSUMERS <key> <groupname>\r\n+    Show consumers of <groupname>.\r\n+GROUPS <key>\r\n+    Show the stream consumer groups.\r\n+STREAM <key> [FULL [COUNT <count>]\r\n+    Show information about the stream.\r\n+HELP\r\n+    Prints this help.\r\n"),
    ("XINFO STREAM", b"-ERR wrong number of arguments for 'xinfo|stream' command\r\n"),
    ("XGROUP DESTROY s g", b":1\r\n"),
    ("XINFO GROUPS s", b"*0\r\n"),
    ("XINFO STREAM s", b"*20\r\n$6\r\nlength\r\n:2\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n5-1\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n5-1\r\n$13\r\nentries-added\r\n:5\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n1-1\r\n$6\r\ngroups\r\n:0\r\n$11\r\nfirst-entry\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\n1\r\n$10\r\nlast-entry\r\n*2\r\n$3\r\n4-1\r\n*2\r\n$1\r\nf\r\n$1\r\n4\r\n"),
    ("XADD e 1-1 a b", b"$3\r\n1-1\r\n"),
    ("XDEL e 1-1", b":1\r\n"),
    ("XINFO STREAM e", b"*20\r\n$6\r\nlength\r\n:0\r\n$15\r\nradix-tree-keys\r\n:0\r\n$16\r\nradix-tree-nodes\r\n:1\r\n$17\r\nlast-generated-id\r\n$3\r\n1-1\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n1-1\r\n$13\r\nentries-added\r\n:1\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n0-0\r\n$6\r\ngroups\r\n:0\r\n$11\r\nfirst-entry\r\n$-1\r\n$10\r\nlast-entry\r\n$-1\r\n"),
    ("XGROUP CREATE e g $", b"+OK\r\n"),
    ("XINFO STREAM e FULL", b"*18\r\n$6\r\nlength\r\n:0\r\n$15\r\nradix-tree-keys\r\n:0\r\n$16\r\nradix-tree-nodes\r\n:1\r\n$17\r\nlast-generated-id\r\n$3\r\n1-1\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n1-1\r\n$13\r\nentries-added\r\n:1\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n0-0\r\n$7\r\nentries\r\n*0\r\n$6\r\ngroups\r\n*1\r\n*14\r\n$4\r\nname\r\n$1\r\ng\r\n$17\r\nlast-delivered-id\r\n$3\r\n1-1\r\n$12\r\nentries-read\r\n$-1\r\n$3\r\nlag\r\n:0\r\n$9\r\npel-count\r\n:0\r\n$7\r\npending\r\n*0\r\n$9\r\nconsumers\r\n*0\r\n"),
    ("XINFO GROUPS e", b"*1\r\n*12\r\n$4\r\nname\r\n$1\r\ng\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n1-1\r\n$12\r\nentries-read\r\n$-1\r\n$3\r\nlag\r\n:0\r\n"),
    ("DEL s", b":1\r\n"),
    ("XGROUP CREATE s g $ MKSTREAM ENTRIESREAD 5", b"+OK\r\n"),
    ("XINFO GROUPS s", b"*1\r\n*12\r\n$4\r\nname\r\n$1\r\ng\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n0-0\r\n$12\r\nentries-read\r\n:5\r\n$3\r\nlag\r\n:0\r\n"),
    ("FLUSHALL", b"+OK\r\n"),
    ("XADD s 1-1 f 1 g x", b"$3\r\n1-1\r\n"),
    ("XADD s 2-1 f 2", b"$3\r\n2-1\r\n"),
    ("XADD s 3-1 f 3", b"$3\r\n3-1\r\n"),
    ("XADD t 1-5 a b", b"$3\r\n1-5\r\n"),
    ("XGROUP CREATE s g 0", b"+OK\r\n"),
    ("XGROUP CREATE t g 0", b"+OK\r\n"),
    ("XREADGROUP GROUP g c1 COUNT 2 STREAMS s t > >", b"*2\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n1-1\r\n*4\r\n$1\r\nf\r\n$1\r\n1\r\n$1\r\ng\r\n$1\r\nx\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nf\r\n$1\r\n2\r\n*2\r\n$1\r\nt\r\n*1\r\n*2\r\n$3\r\n1-5\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    ("XREADGROUP GROUP g c1 STREAMS s t 0 0", b"*2\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n1-1\r\n*4\r\n$1\r\nf\r\n$1\r\n1\r\n$1\r\ng\r\n$1\r\nx\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nf\r\n$1\r\n2\r\n*2\r\n$1\r\nt\r\n*1\r\n*2\r\n$3\r\n1-5\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    ("XREADGROUP GROUP g c2 STREAMS s t > >", b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\nf\r\n$1\r\n3\r\n"),
    ("XREADGROUP GROUP g c2 STREAMS s t > >", b"*-1\r\n"),
    ("XREADGROUP GROUP g c2 STREAMS s s > >", b"*-1\r\n"),
    ("XCLAIM s g c3 0 1-1 2-1", b"*2\r\n*2\r\n$3\r\n1-1\r\n*4\r\n$1\r\nf\r\n$1\r\n1\r\n$1\r\ng\r\n$1\r\nx\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nf\r\n$1\r\n2\r\n"),
    ("XCLAIM s g c3 0 1-1 TIME 123 RETRYCOUNT 4", b"*1\r\n*2\r\n$3\r\n1-1\r\n*4\r\n$1\r\nf\r\n$1\r\n1\r\n$1\r\ng\r\n$1\r\nx\r\n"),
    ("XAUTOCLAIM s g c4 0 - COUNT 5", b"*3\r\n$3\r\n0-0\r\n*3\r\n*2\r\n$3\r\n1-1\r\n*4\r\n$1\r\nf\r\n$1\r\n1\r\n$1\r\ng\r\n$1\r\nx\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nf\r\n$1\r\n2\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\nf\r\n$1\r\n3\r\n*0\r\n"),
    ("XINFO STREAM s", b"*20\r\n$6\r\nlength\r\n:3\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n3-1\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n0-0\r\n$13\r\nentries-added\r\n:3\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n1-1\r\n$6\r\ngroups\r\n:1\r\n$11\r\nfirst-entry\r\n*2\r\n$3\r\n1-1\r\n*4\r\n$1\r\nf\r\n$1\r\n1\r\n$1\r\ng\r\n$1\r\nx\r\n$10\r\nlast-entry\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\nf\r\n$1\r\n3\r\n"),
    ("XINFO GROUPS s", b"*1\r\n*12\r\n$4\r\nname\r\n$1\r\ng\r\n$9\r\nconsumers\r\n:4\r\n$7\r\npending\r\n:3\r\n$17\r\nlast-delivered-id\r\n$3\r\n3-1\r\n$12\r\nentries-read\r\n:3\r\n$3\r\nlag\r\n:0\r\n"),
    ("XSETID s 2-1", b"-ERR The ID specified in XSETID is smaller than the target stream top item\r\n"),
    ("XSETID s 3-1", b"+OK\r\n"),
    ("XSETID s 10-1 ENTRIESADDED 2", b"-ERR The entries_added specified in XSETID is smaller than the target stream length\r\n"),
    ("XSETID s 10-1 ENTRIESADDED -1", b"-ERR entries_added must be positive\r\n"),
    ("XSETID s 10-1 ENTRIESADDED 5 MAXDELETEDID 11-0", b"-ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id\r\n"),
    ("XSETID s 10-1 ENTRIESADDED 5 MAXDELETEDID 9-0", b"+OK\r\n"),
    ("XSETID s 10-1 BOGUS", b"-ERR syntax error\r\n"),
    ("XSETID s x", b"-ERR Invalid stream ID specified as stream command argument\r\n"),
    ("XSETID nokey 1-1", b"-ERR no such key\r\n"),
    ("XINFO STREAM s", b"*20\r\n$6\r\nlength\r\n:3\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$4\r\n10-1\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n9-0\r\n$13\r\nentries-added\r\n:5\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n1-1\r\n$6\r\ngroups\r\n:1\r\n$11\r\nfirst-entry\r\n*2\r\n$3\r\n1-1\r\n*4\r\n$1\r\nf\r\n$1\r\n1\r\n$1\r\ng\r\n$1\r\nx\r\n$10\r\nlast-entry\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\nf\r\n$1\r\n3\r\n"),
    ("XDEL s 1-1 2-1 3-1", b":3\r\n"),
    ("XADD e 5-5 a b", b"$3\r\n5-5\r\n"),
    ("XDEL e 5-5", b":1\r\n"),
    ("XSETID e 1-1", b"+OK\r\n"),
    ("XINFO STREAM e", b"*20\r\n$6\r\nlength\r\n:0\r\n$15\r\nradix-tree-keys\r\n:0\r\n$16\r\nradix-tree-nodes\r\n:1\r\n$17\r\nlast-generated-id\r\n$3\r\n1-1\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n5-5\r\n$13\r\nentries-added\r\n:1\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n0-0\r\n$6\r\ngroups\r\n:0\r\n$11\r\nfirst-entry\r\n$-1\r\n$10\r\nlast-entry\r\n$-1\r\n"),
    ("XGROUP CREATE e g $", b"+OK\r\n"),
    ("XGROUP SETID e g 0 ENTRIESREAD 0", b"+OK\r\n"),
    ("XINFO GROUPS e", b"*1\r\n*12\r\n$4\r\nname\r\n$1\r\ng\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n0-0\r\n$12\r\nentries-read\r\n:0\r\n$3\r\nlag\r\n:1\r\n"),
];

#[test]
fn replies_and_errors_match_redis() {
    let s = TestServer::start();
    run_bytes_table(&mut s.raw(), RECORDED);
}

/// RESP3: XINFO's maps, XREADGROUP's map of streams, nil for an unknown lag.
#[test]
fn resp3_shapes() {
    let s = TestServer::start();
    let mut raw = s.raw();
    raw.cmd(&[b"HELLO", b"3"]);
    raw.read_until(b"modules\r\n*0\r\n");
    #[rustfmt::skip]
    run_bytes_table(&mut raw, &[
        ("XADD s 1-1 f v", b"$3\r\n1-1\r\n"),
        ("XGROUP CREATE s g 0", b"+OK\r\n"),
        ("XREADGROUP GROUP g c STREAMS s >", b"%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"),
        ("XREADGROUP GROUP g c STREAMS s >", b"_\r\n"),
        ("XINFO GROUPS s", b"*1\r\n%6\r\n$4\r\nname\r\n$1\r\ng\r\n$9\r\nconsumers\r\n:1\r\n$7\r\npending\r\n:1\r\n$17\r\nlast-delivered-id\r\n$3\r\n1-1\r\n$12\r\nentries-read\r\n:1\r\n$3\r\nlag\r\n:0\r\n"),
        ("XDEL s 1-1", b":1\r\n"),
        ("XREADGROUP GROUP g c STREAMS s 0", b"%1\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n_\r\n"),
        ("XPENDING s nog", b"-NOGROUP No such key 's' or consumer group 'nog'\r\n"),
    ]);
}

#[test]
fn xreadgroup_block_is_served_by_xadd_one_entry_per_consumer() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
    let readers: Vec<_> = ["alice", "bob"]
        .iter()
        .map(|name| {
            let mut r = s.client();
            let name = name.to_string();
            std::thread::spawn(move || {
                q(
                    &mut r,
                    &[
                        "XREADGROUP",
                        "GROUP",
                        "g",
                        &name,
                        "COUNT",
                        "1",
                        "BLOCK",
                        "20000",
                        "STREAMS",
                        "s",
                        ">",
                    ],
                )
                .unwrap()
            })
        })
        .collect();
    wait_blocked(&mut c, 2);
    // The consumers exist while they wait (Redis 7.2).
    let info = ok(&mut c, &["XINFO", "CONSUMERS", "s", "g"]);
    assert_eq!(info.as_sequence().map(|v| v.len()), Some(2), "{info:?}");
    ok(&mut c, &["XADD", "s", "1-1", "f", "a"]);
    ok(&mut c, &["XADD", "s", "2-1", "f", "b"]);
    let mut got: Vec<String> = readers
        .into_iter()
        .map(|h| format!("{:?}", h.join().unwrap()))
        .collect();
    got.sort();
    assert!(got.iter().any(|r| r.contains("1-1")), "{got:?}");
    assert!(got.iter().any(|r| r.contains("2-1")), "{got:?}");
    // Each entry went to one consumer, and is pending for it.
    let summary = ok(&mut c, &["XPENDING", "s", "g"]);
    assert_eq!(summary.as_sequence().unwrap()[0], int(2));
    let owners = format!("{:?}", summary.as_sequence().unwrap()[3]);
    assert!(
        owners.contains("alice") && owners.contains("bob"),
        "{owners}"
    );
}

#[test]
fn a_blocked_xreadgroup_learns_that_its_group_or_stream_went() {
    let s = TestServer::start();
    let mut c = s.client();
    for (end, want) in [
        (
            vec!["XGROUP", "DESTROY", "s", "g"],
            "NOGROUP the consumer group this client was blocked on no longer exists",
        ),
        (
            vec!["DEL", "s"],
            "UNBLOCKED the stream key no longer exists",
        ),
    ] {
        ok(&mut c, &["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
        let mut r = s.client();
        let h = std::thread::spawn(move || {
            err(
                &mut r,
                &[
                    "XREADGROUP",
                    "GROUP",
                    "g",
                    "c",
                    "BLOCK",
                    "20000",
                    "STREAMS",
                    "s",
                    ">",
                ],
            )
        });
        wait_blocked(&mut c, 1);
        ok(&mut c, &end);
        assert!(h.join().unwrap().contains(want));
        wait_blocked(&mut c, 0);
        ok(&mut c, &["DEL", "s"]);
    }
}

#[test]
fn idle_times_and_delivery_times_follow_the_commands() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["XADD", "s", "1-1", "f", "v"]);
    ok(&mut c, &["XADD", "s", "2-1", "f", "v"]);
    ok(&mut c, &["XGROUP", "CREATE", "s", "g", "0"]);
    ok(&mut c, &["XGROUP", "CREATECONSUMER", "s", "g", "idle"]);
    ok(
        &mut c,
        &["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"],
    );
    // A consumer that never got an entry is inactive -1 (Redis 7.2's field).
    let rows = ok(&mut c, &["XINFO", "CONSUMERS", "s", "g"]);
    let text = format!("{rows:?}");
    assert!(text.contains("inactive"), "{text}");
    let rows = rows.as_sequence().unwrap().to_vec();
    let field = |row: &Value, name: &str| -> Value {
        let kv: Vec<Value> = match row {
            Value::Array(v) => v.clone(),
            Value::Map(m) => m.iter().flat_map(|(k, v)| [k.clone(), v.clone()]).collect(),
            other => panic!("{other:?}"),
        };
        let at = kv.iter().position(|k| *k == bulk(name)).unwrap();
        kv[at + 1].clone()
    };
    assert_eq!(field(&rows[1], "name"), bulk("idle"));
    assert_eq!(field(&rows[1], "inactive"), int(-1));
    assert_eq!(field(&rows[0], "pending"), int(2));
    // TIME sets the delivery time: 1 ms after the epoch is idle for decades, so IDLE keeps it.
    ok(
        &mut c,
        &["XCLAIM", "s", "g", "c", "0", "1-1", "TIME", "1", "JUSTID"],
    );
    let long_idle = ok(
        &mut c,
        &["XPENDING", "s", "g", "IDLE", "1000000", "-", "+", "10"],
    );
    let long_idle = long_idle.as_sequence().unwrap();
    assert_eq!(long_idle.len(), 1);
    assert_eq!(long_idle[0].as_sequence().unwrap()[0], bulk("1-1"));
    // XAUTOCLAIM with that idle time takes only the old one.
    let r = ok(
        &mut c,
        &["XAUTOCLAIM", "s", "g", "d", "1000000", "-", "JUSTID"],
    );
    assert_eq!(
        r,
        Value::Array(vec![
            bulk("0-0"),
            Value::Array(vec![bulk("1-1")]),
            Value::Array(vec![])
        ])
    );
    let full = format!("{:?}", ok(&mut c, &["XINFO", "STREAM", "s", "FULL"]));
    assert!(
        full.contains("active-time") && full.contains("seen-time"),
        "{full}"
    );
}

#[test]
fn groups_follow_rename_and_survive_a_restart() {
    let mut s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["XADD", "s", "1-1", "f", "v"]);
    ok(&mut c, &["XGROUP", "CREATE", "s", "g", "0"]);
    ok(
        &mut c,
        &["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"],
    );
    ok(&mut c, &["RENAME", "s", "t"]);
    s.restart();
    let mut c = s.client();
    let summary = ok(&mut c, &["XPENDING", "t", "g"]);
    assert_eq!(summary.as_sequence().unwrap()[0], int(1));
    assert_eq!(
        ok(&mut c, &["XACK", "t", "g", "1-1"]),
        int(1),
        "the PEL entry came through"
    );
    assert!(err(&mut c, &["XPENDING", "s", "g"]).starts_with("NOGROUP"));
    // A new stream under the old name has no groups.
    ok(&mut c, &["XADD", "s", "1-1", "f", "v"]);
    assert_eq!(ok(&mut c, &["XINFO", "GROUPS", "s"]), Value::Array(vec![]));
}

type Id = (u64, u64);

fn id_str(id: Id) -> String {
    format!("{}-{}", id.0, id.1)
}

/// The model of one group: the stream's entries, its position and its PEL.
#[derive(Default)]
struct Model {
    entries: BTreeMap<Id, ()>,
    last_added: u64,
    delivered: Id,
    pending: BTreeMap<Id, (String, i64)>,
}

impl Model {
    fn pel(&self) -> Value {
        Value::Array(
            self.pending
                .iter()
                .map(|(id, (c, n))| Value::Array(vec![bulk(&id_str(*id)), bulk(c), int(*n)]))
                .collect(),
        )
    }
}

/// XPENDING's rows without the idle time (the one field a model cannot know).
fn pel_of(c: &mut redis::Connection) -> Value {
    let rows = ok(c, &["XPENDING", "s", "g", "-", "+", "100000"]);
    Value::Array(
        rows.as_sequence()
            .unwrap()
            .iter()
            .map(|r| {
                let r = r.as_sequence().unwrap();
                Value::Array(vec![r[0].clone(), r[1].clone(), r[3].clone()])
            })
            .collect(),
    )
}

/// Random XADD, XREADGROUP (new entries and a consumer's history), XACK, XCLAIM, XDEL and
/// DELCONSUMER against a model of the PEL, compared after every step.
#[test]
fn model() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
    let mut m = Model::default();
    let mut rng = Rng(0x5eed_cafe);
    let consumers = ["c0", "c1", "c2"];
    for step in 0..1200 {
        let who = consumers[rng.below(3) as usize];
        match rng.below(12) {
            0..=3 => {
                m.last_added += 1;
                let id = (m.last_added, 0);
                ok(&mut c, &["XADD", "s", &id_str(id), "f", "v"]);
                m.entries.insert(id, ());
            }
            4 | 5 => {
                let count = 1 + rng.below(3);
                let got = ok(
                    &mut c,
                    &[
                        "XREADGROUP",
                        "GROUP",
                        "g",
                        who,
                        "COUNT",
                        &count.to_string(),
                        "STREAMS",
                        "s",
                        ">",
                    ],
                );
                let want: Vec<Id> = m
                    .entries
                    .range((m.delivered.0, m.delivered.1 + 1)..)
                    .take(count as usize)
                    .map(|(id, _)| *id)
                    .collect();
                for id in &want {
                    m.pending.insert(*id, (who.to_string(), 1));
                    m.delivered = *id;
                }
                let text = format!("{got:?}");
                for id in &want {
                    assert!(
                        text.contains(&id_str(*id)),
                        "step {step}: {text} lacks {id:?}"
                    );
                }
                if want.is_empty() {
                    assert_eq!(got, Value::Nil, "step {step}");
                }
            }
            6 => {
                // The consumer's history: its pending entries, nil fields for deleted ones.
                let got = ok(
                    &mut c,
                    &["XREADGROUP", "GROUP", "g", who, "STREAMS", "s", "0"],
                );
                let mine: Vec<Id> = m
                    .pending
                    .iter()
                    .filter(|(_, (o, _))| o == who)
                    .map(|(id, _)| *id)
                    .collect();
                let rows = &got.as_sequence().unwrap()[0].as_sequence().unwrap()[1];
                let rows = rows.as_sequence().unwrap();
                assert_eq!(rows.len(), mine.len(), "step {step}");
                for (row, id) in rows.iter().zip(&mine) {
                    let row = row.as_sequence().unwrap();
                    assert_eq!(row[0], bulk(&id_str(*id)));
                    let present = m.entries.contains_key(id);
                    assert_eq!(row[1] != Value::Nil, present, "step {step}: {row:?}");
                    if present {
                        m.pending.get_mut(id).unwrap().1 += 1;
                    }
                }
            }
            7 | 8 => {
                let mut ids: Vec<Id> = m.pending.keys().copied().take(2).collect();
                ids.push((rng.below(m.last_added + 2), 0));
                let want = ids
                    .iter()
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
                    .filter(|id| m.pending.remove(id).is_some())
                    .count();
                let mut args = vec!["XACK".to_string(), "s".into(), "g".into()];
                args.extend(ids.iter().map(|i| id_str(*i)));
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                assert_eq!(ok(&mut c, &args), int(want as i64), "step {step}");
            }
            9 => {
                let ids: Vec<Id> = m.pending.keys().copied().collect();
                if ids.is_empty() {
                    continue;
                }
                let id = ids[rng.below(ids.len() as u64) as usize];
                let got = ok(&mut c, &["XCLAIM", "s", "g", who, "0", &id_str(id)]);
                if m.entries.contains_key(&id) {
                    let p = m.pending.get_mut(&id).unwrap();
                    *p = (who.to_string(), p.1 + 1);
                    assert_eq!(got.as_sequence().unwrap().len(), 1, "step {step}");
                } else {
                    m.pending.remove(&id);
                    assert_eq!(got, Value::Array(vec![]), "step {step}");
                }
            }
            10 => {
                if m.entries.is_empty() {
                    continue;
                }
                let keys: Vec<Id> = m.entries.keys().copied().collect();
                let id = keys[rng.below(keys.len() as u64) as usize];
                assert_eq!(ok(&mut c, &["XDEL", "s", &id_str(id)]), int(1));
                m.entries.remove(&id);
            }
            _ => {
                if rng.below(4) != 0 {
                    continue;
                }
                let n = m.pending.values().filter(|(o, _)| o == who).count();
                m.pending.retain(|_, (o, _)| o != who);
                assert_eq!(
                    ok(&mut c, &["XGROUP", "DELCONSUMER", "s", "g", who]),
                    int(n as i64),
                    "step {step}"
                );
            }
        }
        assert_eq!(pel_of(&mut c), m.pel(), "step {step}");
        let summary = ok(&mut c, &["XPENDING", "s", "g"]);
        assert_eq!(
            summary.as_sequence().unwrap()[0],
            int(m.pending.len() as i64),
            "step {step}"
        );
    }
}
