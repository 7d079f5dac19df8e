//! Lua scripting: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT, with Redis's exact replies and
//! errors (recorded from redis-server 7.0.15; where 7.2 differs, the note says so), atomicity,
//! the script cache across a restart, blocked clients served by a script's pushes, and a
//! runaway script stopped by SCRIPT KILL.

use crate::common;

use std::time::Duration;

use common::{TestServer, bulk, err, int, ok, q, run_table};
use redis::Value;

/// Replies and errors byte for byte as redis-server 7.0.15 sends them.
#[test]
fn replies_and_errors_match_redis() {
    let s = TestServer::start();
    let mut raw = s.raw();
    run_table(
        &mut raw,
        &[
            (
                r#"eval "return x" 0"#,
                "-ERR user_script:1: Script attempted to access nonexistent global variable 'x' script: 03c387736bb5cc009ff35151572cee04677aa374, on @user_script:1.\r\n",
            ),
            (
                r#"eval "x = 5" 0"#,
                "-ERR user_script:1: Attempt to modify a readonly table script: 818a330663e3c3e78469660421595218e5ab5c48, on @user_script:1.\r\n",
            ),
            // Redis 7's read-only globals and libraries.
            (
                r#"eval "string.foo = 1 return 1" 0"#,
                "-ERR user_script:1: Attempt to modify a readonly table script: 61574b4b91ec75f725f3a3a2d314d3dcd1c1b577, on @user_script:1.\r\n",
            ),
            (
                r#"eval "local t = string; rawset(t, 'x', 1) return 1" 0"#,
                "-ERR Attempt to modify a readonly table script: d0982fd53499141cc5cd1ea2fd9efae4fa2cba86, on @user_script:1.\r\n",
            ),
            (
                r#"eval "table.insert(string, 'x') return 1" 0"#,
                "-ERR Attempt to modify a readonly table script: 005ab18fa6eae4cf45c460960e7f7ed29ad15d6c, on @user_script:1.\r\n",
            ),
            (
                r#"eval "KEYS = 5 return 1" 0"#,
                "-ERR user_script:1: Attempt to modify a readonly table script: 3b3f01067be1c0f02fca241e6a469637430d4eec, on @user_script:1.\r\n",
            ),
            (
                r#"eval "setmetatable(_G, nil) return 1" 0"#,
                "-ERR Attempt to modify a readonly table script: c122f21771d632cc334af0c2a37dd028f1a230b7, on @user_script:1.\r\n",
            ),
            (
                r#"eval "return tostring(rawget(_G, 'string') ~= nil)" 0"#,
                "$4\r\ntrue\r\n",
            ),
            (
                r#"eval "local n = 0 for k in pairs(string) do n = n + 1 end return n" 0"#,
                ":15\r\n",
            ),
            (
                r#"eval "return type(getmetatable(string))" 0"#,
                "$3\r\nnil\r\n",
            ),
            (
                r#"eval "error('boom')" 0"#,
                "-ERR user_script:1: boom script: 82903a0434f1503e152f89c03c9acd881a0e8150, on @user_script:1.\r\n",
            ),
            (
                r#"eval "error({err='MY custom'})" 0"#,
                "-MY custom script: 784d3ae9e6566ecb57138d89d618d989007a9bc6, on @user_script:1.\r\n",
            ),
            (
                r#"eval "return redis.call('nosuch')" 0"#,
                "-ERR Unknown Redis command called from script script: 206396248e12c6e742fd7296250433c8d7343b74, on @user_script:1.\r\n",
            ),
            ("set s abc", "+OK\r\n"),
            (
                r#"eval "return redis.call('incr',KEYS[1])" 1 s"#,
                "-ERR value is not an integer or out of range script: 6f5ade10a69975e903c6d07b10ea44c6382381a5, on @user_script:1.\r\n",
            ),
            (
                r#"eval "return redis.pcall('incr',KEYS[1])" 1 s"#,
                "-ERR value is not an integer or out of range\r\n",
            ),
            (
                r#"eval "local r = redis.pcall('incr',KEYS[1]); return type(r) .. ':' .. tostring(r.err)" 1 s"#,
                "$49\r\ntable:ERR value is not an integer or out of range\r\n",
            ),
            (
                r#"eval "return {1,2,3.7,'x',false,nil,5}" 0"#,
                "*5\r\n:1\r\n:2\r\n:3\r\n$1\r\nx\r\n$-1\r\n",
            ),
            (r#"eval "return {ok='fine'}" 0"#, "+fine\r\n"),
            (r#"eval "return {err='bad thing'}" 0"#, "-bad thing\r\n"),
            (
                r#"eval "return redis.error_reply('My err')" 0"#,
                "-My err\r\n",
            ),
            (
                r#"eval "return redis.error_reply('-My err')" 0"#,
                "-My err\r\n",
            ),
            (r#"eval "return redis.status_reply('STAT')" 0"#, "+STAT\r\n"),
            (
                r#"eval "return {1, {2, {3, 'a'}}, redis.status_reply('x'), redis.error_reply('e')}" 0"#,
                "*4\r\n:1\r\n*2\r\n:2\r\n*2\r\n:3\r\n$1\r\na\r\n+x\r\n-ERR e\r\n",
            ),
            (r#"eval "return 3.99" 0"#, ":3\r\n"),
            (r#"eval "return 1e20" 0"#, ":-9223372036854775808\r\n"),
            (r#"eval "return true" 0"#, ":1\r\n"),
            (r#"eval "return false" 0"#, "$-1\r\n"),
            (r#"eval "return nil" 0"#, "$-1\r\n"),
            (r#"eval "return {ok=5}" 0"#, "*0\r\n"),
            (r#"eval "return {1,2,n=3}" 0"#, "*2\r\n:1\r\n:2\r\n"),
            (r#"eval "return {double=1.5}" 0"#, "$3\r\n1.5\r\n"),
            (
                r#"eval "return 'a' .. " 0"#,
                "-ERR Error compiling script (new function): user_script:1: unexpected symbol near '<eof>'\r\n",
            ),
            (
                "evalsha ffffffffffffffffffffffffffffffffffffffff 0",
                "-NOSCRIPT No matching script. Please use EVAL.\r\n",
            ),
            (
                "evalsha abc 0",
                "-NOSCRIPT No matching script. Please use EVAL.\r\n",
            ),
            (
                r#"eval "return 1" -1"#,
                "-ERR Number of keys can't be negative\r\n",
            ),
            (
                r#"eval "return 1" 2 a"#,
                "-ERR Number of keys can't be greater than number of args\r\n",
            ),
            (
                r#"eval "return 1" x"#,
                "-ERR value is not an integer or out of range\r\n",
            ),
            (
                "eval",
                "-ERR wrong number of arguments for 'eval' command\r\n",
            ),
            (
                r#"eval "return redis.call('subscribe','c')" 0"#,
                "-ERR This Redis command is not allowed from script script: 7f02cffe90778c7abbcc0c8698c70a4ab5da2c45, on @user_script:1.\r\n",
            ),
            (
                r#"eval "return redis.call('eval','return 1', 0)" 0"#,
                "-ERR This Redis command is not allowed from script script: 498b5081e21f7e3039493da0ab415ae08f116868, on @user_script:1.\r\n",
            ),
            (
                r#"eval "return redis.call('multi')" 0"#,
                "-ERR This Redis command is not allowed from script script: c329a1a294be6bf95b44144f7502610661ae925a, on @user_script:1.\r\n",
            ),
            (
                r#"eval "return redis.call('get', 'a', 'b')" 0"#,
                "-ERR Wrong number of args calling Redis command from script script: 83fb1f3d3ef84eb4eebaa00386befdba32e9f237, on @user_script:1.\r\n",
            ),
            (
                r#"eval "return redis.call('set', 'a', {})" 0"#,
                "-ERR Lua redis lib command arguments must be strings or integers script: f37b5e7bcfb7cec825b302c88928083ea5eb6fdd, on @user_script:1.\r\n",
            ),
            (
                r#"eval "return redis.call()" 0"#,
                "-ERR Please specify at least one argument for this redis lib call script: 0a907e1429221a4d85516cab7fd219a82a9439d8, on @user_script:1.\r\n",
            ),
            // Numbers are passed to commands as %.17g.
            (r#"eval "return redis.call('set', 'a', 0.1)" 0"#, "+OK\r\n"),
            ("get a", "$19\r\n0.10000000000000001\r\n"),
            (
                r#"eval "return redis.call('set', 'a', 12345678901234567)" 0"#,
                "+OK\r\n",
            ),
            ("get a", "$17\r\n12345678901234568\r\n"),
            (r#"eval "return redis.call('set', 'a', 1e20)" 0"#, "+OK\r\n"),
            ("get a", "$5\r\n1e+20\r\n"),
            (r#"eval "return redis.call('get', 'nokey')" 0"#, "$-1\r\n"),
            (
                r#"eval "return type(redis.call('get', 'nokey'))" 0"#,
                "$7\r\nboolean\r\n",
            ),
            (r#"eval "return redis.call('ping')" 0"#, "+PONG\r\n"),
            (r#"eval "return redis.call('ping').ok" 0"#, "$4\r\nPONG\r\n"),
            (
                r#"eval "return {KEYS[1], ARGV[1], ARGV[2], #KEYS, #ARGV}" 1 k1 a1 a2"#,
                "*5\r\n$2\r\nk1\r\n$2\r\na1\r\n$2\r\na2\r\n:1\r\n:2\r\n",
            ),
            (
                r#"eval "local ok, e = pcall(redis.call, 'incr', 's'); return {tostring(ok), e}" 0"#,
                "*2\r\n$5\r\nfalse\r\n$43\r\nERR value is not an integer or out of range\r\n",
            ),
            (
                "eval \"\n\nredis.call('incr', 's')\" 0",
                "-ERR value is not an integer or out of range script: 547e0a81d8e61b3f6fc46b5a41b05a1dbb35cab5, on @user_script:3.\r\n",
            ),
            (
                r#"eval "redis.log(99, 'x')" 0"#,
                "-ERR Invalid debug level. script: 565e201a96e8ec463b56090cf8419fce86ea26cf, on @user_script:1.\r\n",
            ),
            (
                r#"eval "redis.log(redis.LOG_WARNING)" 0"#,
                "-ERR redis.log() requires two arguments or more. script: 49ca850ffc5e5c988724c7c053ac0e63c6043790, on @user_script:1.\r\n",
            ),
            (
                r#"eval "redis.log(redis.LOG_WARNING, 'a line from a script')" 0"#,
                "$-1\r\n",
            ),
            (
                r#"eval "return redis.sha1hex('')" 0"#,
                "$40\r\nda39a3ee5e6b4b0d3255bfef95601890afd80709\r\n",
            ),
            (
                r#"eval "return redis.setresp(4)" 0"#,
                "-ERR RESP version must be 2 or 3. script: 921c0a48021d97dfd5884aeea41875972c7804d9, on @user_script:1.\r\n",
            ),
            (r#"eval "return redis.replicate_commands()" 0"#, ":1\r\n"),
            // The sandbox: no file system, no process, no bytecode.
            (
                r#"eval "return tostring(os)" 0"#,
                "-ERR user_script:1: Script attempted to access nonexistent global variable 'os' script: 19abc3a3c6e39bcbd69db9d57d6fd72cc4fcc793, on @user_script:1.\r\n",
            ),
            (
                r#"eval "return tostring(io)" 0"#,
                "-ERR user_script:1: Script attempted to access nonexistent global variable 'io' script: 57035b08a487eae6d9b6bc0aeb60861a44125298, on @user_script:1.\r\n",
            ),
            (
                r#"eval "return tostring(dofile)" 0"#,
                "-ERR user_script:1: Script attempted to access nonexistent global variable 'dofile' script: 4245a06a3296a81bbc3451d04873b2cca059b86e, on @user_script:1.\r\n",
            ),
            (
                r#"eval "return tostring(require)" 0"#,
                "-ERR user_script:1: Script attempted to access nonexistent global variable 'require' script: 395f66357e2f3d4ce2021875deccd75f1fffc311, on @user_script:1.\r\n",
            ),
            (r#"eval "return bit.band(7, 3)" 0"#, ":3\r\n"),
            (r#"eval "return bit.tohex(65535)" 0"#, "$8\r\n0000ffff\r\n"),
            (r#"eval "return loadstring('return 5')()" 0"#, ":5\r\n"),
            (
                r#"eval "return loadstring('return KEYS[1]')()" 1 k"#,
                "$1\r\nk\r\n",
            ),
            // `loadstring` is a C-side function, as Lua's: a tail call to it keeps the
            // script's frame, so its errors still name the script's line.
            (
                r#"eval "return loadstring(nil)" 0"#,
                "-ERR bad argument #1: error converting Lua nil to string (expected string or number) script: f2a3535376d65c94af2825ca50e892f34558e37d, on @user_script:1.\r\n",
            ),
            // EVAL_RO refuses writes.
            (
                r#"eval_ro "return redis.call('set','a','b')" 0"#,
                "-ERR Write commands are not allowed from read-only scripts. script: ff967d0ae0e68b4f9e360fa91c54598bc25ad9b6, on @user_script:1.\r\n",
            ),
            (
                r#"eval_ro "return redis.call('get','a')" 1 a"#,
                "$5\r\n1e+20\r\n",
            ),
            // SCRIPT.
            (
                r#"script load "return 1""#,
                "$40\r\ne0e1f9fabfc9d4800c877a703b823ac0578ff8db\r\n",
            ),
            (
                "script exists e0e1f9fabfc9d4800c877a703b823ac0578ff8db ffffffffffffffffffffffffffffffffffffffff",
                "*2\r\n:1\r\n:0\r\n",
            ),
            (
                "evalsha E0E1F9FABFC9D4800C877A703B823AC0578FF8DB 0",
                ":1\r\n",
            ),
            ("script flush", "+OK\r\n"),
            (
                "script exists e0e1f9fabfc9d4800c877a703b823ac0578ff8db",
                "*1\r\n:0\r\n",
            ),
            ("script flush async", "+OK\r\n"),
            (
                "script flush bad",
                "-ERR SCRIPT FLUSH only support SYNC|ASYNC option\r\n",
            ),
            (
                "script kill",
                "-NOTBUSY No scripts in execution right now.\r\n",
            ),
            (
                "script foo",
                "-ERR unknown subcommand 'foo'. Try SCRIPT HELP.\r\n",
            ),
            (
                "script",
                "-ERR wrong number of arguments for 'script' command\r\n",
            ),
            (
                r#"script load "return 'a' .. ""#,
                "-ERR Error compiling script (new function): user_script:1: unexpected symbol near '<eof>'\r\n",
            ),
            // An EVAL caches its script.
            (r#"eval "return 2" 0"#, ":2\r\n"),
            (
                "evalsha 7f923f79fe76194c868d7e1d0820de36700eb649 0",
                ":2\r\n",
            ),
            // Shebang flags (Redis 7).
            (
                "eval \"#!lua flags=no-writes\nreturn redis.call('set','a','b')\" 0",
                "-ERR Write commands are not allowed from read-only scripts. script: 6acb400a50fe96e33eca4e0af6e9dcfb21193726, on @user_script:2.\r\n",
            ),
            (
                "eval \"#!lua flags=bogus\nreturn 1\" 0",
                "-ERR Unexpected flag in script shebang: bogus\r\n",
            ),
            (
                "eval \"#!python\nreturn 1\" 0",
                "-ERR Unexpected engine in script shebang: #!python\r\n",
            ),
        ],
    );
}

/// Redis 7.2 runs a blocking pop inside a script as its non-blocking form (7.0 refused it).
#[test]
fn blocking_pops_do_not_block_in_scripts() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(
        ok(
            &mut c,
            &["EVAL", "return redis.call('blpop', 'nolist', 0)", "0"]
        ),
        Value::Nil
    );
    ok(&mut c, &["RPUSH", "l", "a"]);
    assert_eq!(
        ok(&mut c, &["EVAL", "return redis.call('blpop', 'l', 0)", "0"]),
        Value::Array(vec![bulk("l"), bulk("a")])
    );
}

/// RESP3 callers get booleans; `redis.setresp(3)` gives the script RESP3 types.
#[test]
fn resp3_conversions() {
    let s = TestServer::start();
    let mut raw = s.raw();
    raw.expect(&[b"HELLO", b"3"], b"%");
    raw.read_until(b"modules\r\n*0\r\n");
    run_table(
        &mut raw,
        &[
            // Booleans follow the script's protocol, not the client's (redis-server 7.0.15).
            (r#"eval "return true" 0"#, ":1\r\n"),
            (r#"eval "return false" 0"#, "_\r\n"),
            (r#"eval "return {1,false,3}" 0"#, "*3\r\n:1\r\n_\r\n:3\r\n"),
            (r#"eval "return redis.call('get','nokey')" 0"#, "_\r\n"),
            (r#"eval "redis.setresp(3) return true" 0"#, "#t\r\n"),
            (
                r#"eval "redis.setresp(3) return {1, false}" 0"#,
                "*2\r\n:1\r\n#f\r\n",
            ),
            ("hset h f v", ":1\r\n"),
            ("zadd z 1.5 m", ":1\r\n"),
            (
                r#"eval "redis.setresp(3); local r = redis.call('hgetall','h'); return r.map.f" 0"#,
                "$1\r\nv\r\n",
            ),
            (
                r#"eval "redis.setresp(3); return redis.call('zscore','z','m').double" 0"#,
                ":1\r\n",
            ),
            (
                r#"eval "redis.setresp(3); return type(redis.call('get','nokey'))" 0"#,
                "$3\r\nnil\r\n",
            ),
            (r#"eval "return {double=1.5}" 0"#, ",1.5\r\n"),
            (r#"eval "return {map={a=1}}" 0"#, "%1\r\n$1\r\na\r\n:1\r\n"),
        ],
    );
}

/// A script that reads and writes lists, hashes, sorted sets and sets answers from its own
/// writes, and readers never see part of it.
#[test]
fn scripts_are_atomic_across_types() {
    let s = TestServer::start();
    let mut c = s.client();
    let script = "local n = redis.call('INCR', KEYS[1]) \
         redis.call('RPUSH', KEYS[2], n) \
         redis.call('HSET', KEYS[3], 'last', n) \
         redis.call('ZADD', KEYS[4], n, 'm' .. n) \
         redis.call('SADD', KEYS[5], n) \
         return {n, redis.call('LLEN', KEYS[2]), redis.call('HGET', KEYS[3], 'last'), \
                 redis.call('ZCARD', KEYS[4]), redis.call('SCARD', KEYS[5])}";
    let sha = match ok(&mut c, &["SCRIPT", "LOAD", script]) {
        Value::BulkString(b) => String::from_utf8(b).unwrap(),
        v => panic!("{v:?}"),
    };
    let keys = ["n", "list", "hash", "zset", "set"];
    let rounds = 300;
    let writer = {
        let mut w = s.client();
        let sha = sha.clone();
        std::thread::spawn(move || {
            for i in 1..=rounds {
                let mut args = vec!["EVALSHA", sha.as_str(), "5"];
                args.extend(keys);
                let v = ok(&mut w, &args);
                let want = Value::Array(vec![int(i), int(i), bulk(&i.to_string()), int(i), int(i)]);
                assert_eq!(v, want);
            }
        })
    };
    // A reader sees every type at the same count, whatever moment it reads.
    let check = "return {redis.call('GET', KEYS[1]), redis.call('LLEN', KEYS[2]), \
         redis.call('HGET', KEYS[3], 'last'), redis.call('ZCARD', KEYS[4]), \
         redis.call('SCARD', KEYS[5])}";
    let mut seen = 0;
    while !writer.is_finished() {
        let mut args = vec!["EVAL_RO", check, "5"];
        args.extend(keys);
        if let Value::Array(v) = ok(&mut c, &args) {
            let n = match &v[0] {
                Value::BulkString(b) => String::from_utf8_lossy(b).parse::<i64>().unwrap(),
                Value::Nil => 0,
                other => panic!("{other:?}"),
            };
            let hash = match &v[2] {
                Value::Nil => 0,
                Value::BulkString(b) => String::from_utf8_lossy(b).parse::<i64>().unwrap(),
                other => panic!("{other:?}"),
            };
            assert_eq!(
                (v[1].clone(), hash, v[3].clone(), v[4].clone()),
                (int(n), n, int(n), int(n)),
                "a reader saw part of a script"
            );
            seen += 1;
        }
    }
    writer.join().unwrap();
    assert!(seen > 0);
    assert_eq!(ok(&mut c, &["GET", "n"]), bulk(&rounds.to_string()));
}

/// An error part-way keeps the writes made before it (Redis's rule); an EVAL inside MULTI
/// runs in the transaction's write set.
#[test]
fn an_error_keeps_earlier_writes_and_eval_runs_inside_multi() {
    let s = TestServer::start();
    let mut c = s.client();
    let e = err(
        &mut c,
        &["EVAL", "redis.call('SET', 'w', '1'); error('late')", "0"],
    );
    assert!(e.starts_with("ERR user_script:1: late script: "), "{e}");
    assert_eq!(ok(&mut c, &["GET", "w"]), bulk("1"));
    let e = err(
        &mut c,
        &[
            "EVAL",
            "redis.call('SET', 'w2', '1'); redis.call('INCR', 'w3', 'x')",
            "0",
        ],
    );
    assert!(e.starts_with("ERR Wrong number of args"), "{e}");
    assert_eq!(ok(&mut c, &["GET", "w2"]), bulk("1"));

    let mut raw = s.raw();
    run_table(
        &mut raw,
        &[
            ("multi", "+OK\r\n"),
            (r#"eval "return redis.call('incr', 'm')" 0"#, "+QUEUED\r\n"),
            (r#"eval "return redis.call('incr', 'm')" 0"#, "+QUEUED\r\n"),
            ("exec", "*2\r\n:1\r\n:2\r\n"),
        ],
    );
}

/// EVALSHA works after SCRIPT LOAD; the cache is in memory, so after a restart the script
/// answers NOSCRIPT (as Redis's does) until it is loaded again, while its writes stay.
#[test]
fn evalsha_after_load_and_noscript_after_restart() {
    let mut s = TestServer::start();
    let mut c = s.client();
    let body = "return redis.call('INCRBY', KEYS[1], ARGV[1])";
    let sha = ok(&mut c, &["SCRIPT", "LOAD", body]);
    let Value::BulkString(sha) = sha else {
        panic!("{sha:?}")
    };
    let sha = String::from_utf8(sha).unwrap();
    assert_eq!(ok(&mut c, &["EVALSHA", &sha, "1", "k", "5"]), int(5));
    // EVALSHA_RO refuses the write.
    let e = err(&mut c, &["EVALSHA_RO", &sha, "1", "k", "5"]);
    assert!(e.starts_with("ERR Write commands are not allowed"), "{e}");
    s.restart();
    let mut c = s.client();
    assert_eq!(
        err(&mut c, &["EVALSHA", &sha, "1", "k", "5"]),
        "NOSCRIPT No matching script. Please use EVAL."
    );
    assert_eq!(
        ok(&mut c, &["SCRIPT", "EXISTS", &sha]),
        Value::Array(vec![int(0)])
    );
    assert_eq!(ok(&mut c, &["EVAL", body, "1", "k", "1"]), int(6));
    assert_eq!(ok(&mut c, &["EVALSHA", &sha, "1", "k", "1"]), int(7));
}

/// A push made by a script serves a client blocked on the list once the script commits.
#[test]
fn a_scripts_push_serves_blocked_clients() {
    let s = TestServer::start();
    let mut waiter = s.client();
    let t = std::thread::spawn(move || q(&mut waiter, &["BLPOP", "jobs", "10"]).unwrap());
    let mut c = s.client();
    common::wait_blocked(&mut c, 1);
    ok(
        &mut c,
        &[
            "EVAL",
            "redis.call('RPUSH', KEYS[1], 'job-1'); redis.call('RPUSH', KEYS[1], 'job-2')",
            "1",
            "jobs",
        ],
    );
    assert_eq!(
        t.join().unwrap(),
        Value::Array(vec![bulk("jobs"), bulk("job-1")])
    );
    assert_eq!(
        ok(&mut c, &["LRANGE", "jobs", "0", "-1"]),
        Value::Array(vec![bulk("job-2")])
    );
}

/// A runaway script holds every writer out (readers go on); after the busy threshold other
/// writers get BUSY; SCRIPT KILL stops it, and its writes are discarded (Redis cannot undo
/// them and answers UNKILLABLE instead); then the waiting writer runs.
#[test]
fn a_runaway_script_is_killed_and_leaves_nothing() {
    let s = TestServer::start();
    let mut runner = s.raw();
    runner.cmd(&[
        b"EVAL",
        b"redis.call('SET', 'runaway', '1'); local i = 0; while true do i = i + 1 end",
        b"0",
    ]);
    std::thread::sleep(Duration::from_millis(300));
    // A writer waits for the script.
    let mut writer = s.raw();
    writer
        .s
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    writer.cmd(&[b"SET", b"other", b"1"]);
    assert_eq!(writer.read_n(5), b"", "a writer ran beside the script");
    // Readers go on, and do not see the script's uncommitted write.
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["GET", "runaway"]), Value::Nil);
    std::thread::sleep(Duration::from_millis(5000));
    assert_eq!(
        err(&mut c, &["SET", "x", "1"]),
        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
    );
    assert_eq!(ok(&mut c, &["SCRIPT", "KILL"]), Value::Okay);
    let reply = runner.read_until(b".\r\n");
    let reply = String::from_utf8_lossy(&reply);
    assert!(
        reply.starts_with("-ERR Script killed by user with SCRIPT KILL... script: "),
        "{reply}"
    );
    writer
        .s
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    assert_eq!(writer.read_n(5), b"+OK\r\n");
    assert_eq!(ok(&mut c, &["GET", "runaway"]), Value::Nil);
    assert_eq!(ok(&mut c, &["GET", "other"]), bulk("1"));
    // A script that catches the kill with pcall is killed all the same.
    runner.cmd(&[
        b"EVAL",
        b"while true do pcall(function() while true do end end) end",
        b"0",
    ]);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(ok(&mut c, &["SCRIPT", "KILL"]), Value::Okay);
    let reply = runner.read_until(b".\r\n");
    assert!(
        String::from_utf8_lossy(&reply).starts_with("-ERR Script killed by user"),
        "{}",
        String::from_utf8_lossy(&reply)
    );
    assert_eq!(
        err(&mut c, &["SCRIPT", "KILL"]),
        "NOTBUSY No scripts in execution right now."
    );
}

/// A script that allocates without bound is stopped by the memory limit, not the server.
#[test]
fn memory_is_bounded() {
    let s = TestServer::start();
    let mut c = s.client();
    // Filling the scripts' 1 GiB limit takes a few seconds of CPU, several times that on a
    // loaded machine: the read timeout only guards against a hang.
    c.set_read_timeout(Some(Duration::from_secs(300))).unwrap();
    let e = err(
        &mut c,
        &[
            "EVAL",
            "local t = {} local s = string.rep('x', 1048576) for i = 1, 100000 do t[i] = s .. i end",
            "0",
        ],
    );
    assert!(e.contains("not enough memory"), "{e}");
    assert_eq!(ok(&mut c, &["PING"]), Value::SimpleString("PONG".into()));
}
