//! Redis 7.0 functions: FUNCTION LOAD/DELETE/FLUSH/LIST/DUMP/RESTORE/STATS/KILL/HELP, FCALL
//! and FCALL_RO, `redis.register_function` in both forms, the flags; replies and errors byte
//! for byte as redis-server 7.0.15 sends them (recorded with redis-cli and a raw socket),
//! libraries across a restart, a payload dumped by Redis, MULTI, and FUNCTION KILL.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common;

use std::time::Duration;

use common::{TestServer, bulk, err, int, ok, q, run_table};
use redis::Value;

/// A library of every kind of function the tests call.
const LIB: &str = "#!lua name=mylib
redis.register_function('myfunc', function(keys, args) return args[1] end)
redis.register_function{function_name='ro', callback=function(keys, args) return redis.call('GET', keys[1]) end, flags={'no-writes'}, description='desc'}
redis.register_function('wr', function(keys, args) return redis.call('SET', keys[1], args[1]) end)
redis.register_function{function_name='sneaky', callback=function(keys, args) return redis.call('SET', 'a', 'b') end, flags={'NO-WRITES', 'allow-oom'}}
local function helper() return 'helped' end
redis.register_function('h', function(k, a) return {helper(), #k, #a, redis.call('PING')} end)
redis.register_function('err', function(k, a) error('x') end)
redis.register_function('glob', function(k, a) return KEYS end)";

fn load(c: &mut redis::Connection, code: &str) -> Value {
    ok(c, &["FUNCTION", "LOAD", code])
}

/// Loading errors, in Redis's words and order (each row recorded from redis-server 7.0.15).
#[test]
fn load_errors_match_redis() {
    let s = TestServer::start();
    let mut c = s.client();
    let cases: &[(&str, &str)] = &[
        ("return 1", "ERR Missing library metadata"),
        ("#!lua name=x", "ERR Invalid library metadata"),
        ("#!lua\nx", "ERR Library name was not given"),
        (
            "#!lua name=a foo=bar\n",
            "ERR Invalid metadata value given: foo=bar",
        ),
        (
            "#!lua name=a name=b\n",
            "ERR Invalid metadata value, name argument was given multiple times",
        ),
        (
            "#!lua name=lib-4\nredis.register_function('b', function() return 1 end)",
            "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long",
        ),
        ("#!js name=x\n", "ERR Engine 'js' not found"),
        ("#!lua name=z\n", "ERR No functions registered"),
        (
            "#!lua name=z\nsyntax error here",
            "ERR Error compiling function: user_function:2: '=' expected near 'error'",
        ),
        (
            "#!lua name=z\nredis.call('set','x','y')",
            "ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'call'",
        ),
        (
            "#!lua name=z\nlocal x = string",
            "ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'string'",
        ),
        (
            "#!lua name=z\nx = 5",
            "ERR Error registering functions: ERR user_function:2: Attempt to modify a readonly table",
        ),
        (
            "#!lua name=z\nredis.register_function('a', function() end) redis.x = 1",
            "ERR Error registering functions: ERR user_function:2: Attempt to modify a readonly table",
        ),
        (
            "#!lua name=z\nredis.register_function('a', 1)",
            "ERR Error registering functions: ERR second argument to redis.register_function must be a function",
        ),
        (
            "#!lua name=z\nredis.register_function(nil, function() end)",
            "ERR Error registering functions: ERR first argument to redis.register_function must be a string",
        ),
        (
            "#!lua name=z\nredis.register_function()",
            "ERR Error registering functions: ERR wrong number of arguments to redis.register_function",
        ),
        (
            "#!lua name=z\nredis.register_function('x')",
            "ERR Error registering functions: ERR calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).",
        ),
        (
            "#!lua name=z\nredis.register_function({})",
            "ERR Error registering functions: ERR redis.register_function must get a function name argument",
        ),
        (
            "#!lua name=z\nredis.register_function({function_name='a'})",
            "ERR Error registering functions: ERR redis.register_function must get a callback argument",
        ),
        (
            "#!lua name=z\nredis.register_function({function_name='a', callback=function() end, flags='no-writes'})",
            "ERR Error registering functions: ERR flags argument to redis.register_function must be a table representing function flags",
        ),
        (
            "#!lua name=z\nredis.register_function({function_name='a', callback=function() end, flags={'bad'}})",
            "ERR Error registering functions: ERR unknown flag given",
        ),
        (
            "#!lua name=z\nredis.register_function({function_name='a', callback=function() end, description={}})",
            "ERR Error registering functions: ERR description argument given to redis.register_function must be a string",
        ),
        (
            "#!lua name=z\nredis.register_function({function_name={}, callback=function() end})",
            "ERR Error registering functions: ERR function_name argument given to redis.register_function must be a string",
        ),
        (
            "#!lua name=z\nredis.register_function({[1]='x', callback=function() end})",
            "ERR Error registering functions: ERR unknown argument given to redis.register_function",
        ),
        (
            "#!lua name=z\nredis.register_function('b-c', function() return 1 end)",
            "ERR Error registering functions: ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long",
        ),
        (
            "#!lua name=z\nredis.register_function('a', function() end)\nredis.register_function('A', function() end)",
            "ERR Error registering functions: ERR Function already exists in the library",
        ),
        (
            "#!lua name=z\nredis.register_function('a', function() end)\nwhile true do end",
            "ERR Error registering functions: ERR FUNCTION LOAD timeout",
        ),
    ];
    for (code, want) in cases {
        assert_eq!(err(&mut c, &["FUNCTION", "LOAD", code]), *want, "{code}");
    }
    // None of them left a library behind.
    assert_eq!(ok(&mut c, &["FUNCTION", "LIST"]), Value::Array(vec![]));
    assert_eq!(
        err(&mut c, &["FUNCTION", "LOAD", "x", "#!lua name=q"]),
        "ERR Unknown option given: x"
    );
}

/// FCALL, FCALL_RO and FUNCTION's replies and errors, byte for byte.
#[test]
fn replies_and_errors_match_redis() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(load(&mut c, LIB), bulk("mylib"));
    let mut raw = s.raw();
    run_table(
        &mut raw,
        &[
            ("fcall myfunc 0 hello", "$5\r\nhello\r\n"),
            ("fcall MYFUNC 0 hello", "$5\r\nhello\r\n"),
            (
                "fcall h 2 a b c",
                "*4\r\n$6\r\nhelped\r\n:2\r\n:1\r\n+PONG\r\n",
            ),
            ("fcall wr 1 k v", "+OK\r\n"),
            ("fcall_ro ro 1 k", "$1\r\nv\r\n"),
            ("fcall ro 1 k", "$1\r\nv\r\n"),
            (
                "fcall_ro wr 1 k v",
                "-ERR Can not execute a script with write flag using *_ro command.\r\n",
            ),
            (
                "fcall sneaky 0",
                "-ERR Write commands are not allowed from read-only scripts. script: sneaky, on @user_function:5.\r\n",
            ),
            (
                "fcall_ro sneaky 0",
                "-ERR Write commands are not allowed from read-only scripts. script: sneaky, on @user_function:5.\r\n",
            ),
            (
                "fcall err 0",
                "-ERR user_function:8: x script: err, on @user_function:8.\r\n",
            ),
            (
                "fcall glob 0",
                "-ERR user_function:9: Script attempted to access nonexistent global variable 'KEYS' script: glob, on @user_function:9.\r\n",
            ),
            ("fcall nope 0", "-ERR Function not found\r\n"),
            ("fcall nope x", "-ERR Function not found\r\n"),
            ("fcall myfunc x", "-ERR Bad number of keys provided\r\n"),
            (
                "fcall myfunc -1",
                "-ERR Number of keys can't be negative\r\n",
            ),
            (
                "fcall myfunc 5 a",
                "-ERR Number of keys can't be greater than number of args\r\n",
            ),
            (
                "function load \"#!lua name=mylib\nredis.register_function('x', function() return 1 end)\"",
                "-ERR Library 'mylib' already exists\r\n",
            ),
            (
                "function load \"#!lua name=lib2\nredis.register_function('MYFUNC', function() return 1 end)\"",
                "-ERR Function MYFUNC already exists\r\n",
            ),
            ("function delete nope", "-ERR Library not found\r\n"),
            (
                "function flush foo",
                "-ERR FUNCTION FLUSH only supports SYNC|ASYNC option\r\n",
            ),
            (
                "function flush sync x",
                "-ERR unknown subcommand or wrong number of arguments for 'flush'. Try FUNCTION HELP.\r\n",
            ),
            ("function list foo", "-ERR Unknown argument foo\r\n"),
            (
                "function list withcode withcode",
                "-ERR Unknown argument withcode\r\n",
            ),
            (
                "function list libraryname",
                "-ERR library name argument was not given\r\n",
            ),
            (
                "function restore foo",
                "-ERR DUMP payload version or checksum are wrong\r\n",
            ),
            (
                "function restore foo bogus",
                "-ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.\r\n",
            ),
            (
                "function restore foo append x",
                "-ERR unknown subcommand or wrong number of arguments for 'restore'. Try FUNCTION HELP.\r\n",
            ),
            (
                "function restore",
                "-ERR wrong number of arguments for 'function|restore' command\r\n",
            ),
            (
                "function",
                "-ERR wrong number of arguments for 'function' command\r\n",
            ),
            (
                "function foo",
                "-ERR unknown subcommand 'foo'. Try FUNCTION HELP.\r\n",
            ),
            (
                "function kill",
                "-NOTBUSY No scripts in execution right now.\r\n",
            ),
            (
                "function stats",
                "*4\r\n$14\r\nrunning_script\r\n$-1\r\n$7\r\nengines\r\n*2\r\n$3\r\nLUA\r\n*4\r\n$15\r\nlibraries_count\r\n:1\r\n$15\r\nfunctions_count\r\n:7\r\n",
            ),
            (
                "command getkeys fcall myfunc 2 k1 k2 x",
                "*2\r\n$2\r\nk1\r\n$2\r\nk2\r\n",
            ),
            (
                "eval \"return redis.call('fcall', 'myfunc', '0', 'x')\" 0",
                "-ERR This Redis command is not allowed from script script: 55b573ea239f684aa68fec200977c90df40976b4, on @user_script:1.\r\n",
            ),
        ],
    );
    // The library's listing, RESP2 and RESP3 (functions in registration order: Redis lists
    // them in its hash table's order, which differs between runs of Redis itself).
    raw.expect(
        &[b"FUNCTION", b"LOAD", b"#!lua name=small\nredis.register_function{function_name='f1', callback=function() return 1 end, flags={'no-writes', 'allow-stale'}, description='one'}\nredis.register_function('f2', function() return 2 end)"],
        b"$5\r\nsmall\r\n",
    );
    raw.expect(
        &[b"FUNCTION", b"LIST", b"LIBRARYNAME", b"sm*"],
        b"*1\r\n*6\r\n$12\r\nlibrary_name\r\n$5\r\nsmall\r\n$6\r\nengine\r\n$3\r\nLUA\r\n$9\r\nfunctions\r\n*2\r\n*6\r\n$4\r\nname\r\n$2\r\nf1\r\n$11\r\ndescription\r\n$3\r\none\r\n$5\r\nflags\r\n*2\r\n+no-writes\r\n+allow-stale\r\n*6\r\n$4\r\nname\r\n$2\r\nf2\r\n$11\r\ndescription\r\n$-1\r\n$5\r\nflags\r\n*0\r\n",
    );
    raw.expect(&[b"HELLO", b"3"], b"%");
    let _ = raw.read_until(b"modules\r\n*0\r\n");
    raw.expect(
        &[b"FUNCTION", b"LIST", b"LIBRARYNAME", b"small", b"WITHCODE"],
        b"*1\r\n%4\r\n$12\r\nlibrary_name\r\n$5\r\nsmall\r\n$6\r\nengine\r\n$3\r\nLUA\r\n$9\r\nfunctions\r\n*2\r\n%3\r\n$4\r\nname\r\n$2\r\nf1\r\n$11\r\ndescription\r\n$3\r\none\r\n$5\r\nflags\r\n~2\r\n+no-writes\r\n+allow-stale\r\n%3\r\n$4\r\nname\r\n$2\r\nf2\r\n$11\r\ndescription\r\n_\r\n$5\r\nflags\r\n~0\r\n$12\r\nlibrary_code\r\n$204\r\n",
    );
    raw.expect(
        &[b"FUNCTION", b"STATS"],
        b"\
#!lua name=small\nredis.register_function{function_name='f1', callback=function() return 1 end, flags={'no-writes', 'allow-stale'}, description='one'}\nredis.register_function('f2', function() return 2 end)\r\n\
%2\r\n$14\r\nrunning_script\r\n_\r\n$7\r\nengines\r\n%1\r\n$3\r\nLUA\r\n%2\r\n$15\r\nlibraries_count\r\n:2\r\n$15\r\nfunctions_count\r\n:9\r\n",
    );
}

/// LOAD, LIST, REPLACE, DELETE and FLUSH change what FCALL finds; names of functions are
/// any-case and unique across libraries, library names are case-sensitive.
#[test]
fn load_replace_delete_and_flush() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(load(&mut c, LIB), bulk("mylib"));
    assert_eq!(
        load(
            &mut c,
            "#!lua name=MYLIB\nredis.register_function('other', function() return 'other' end)"
        ),
        bulk("MYLIB")
    );
    let listed = |c: &mut redis::Connection| -> Vec<String> {
        let Value::Array(libs) = ok(c, &["FUNCTION", "LIST"]) else {
            panic!("not an array")
        };
        libs.iter()
            .map(|l| match l {
                Value::Array(m) => match &m[1] {
                    Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
                    other => panic!("{other:?}"),
                },
                other => panic!("{other:?}"),
            })
            .collect()
    };
    assert_eq!(listed(&mut c), ["MYLIB", "mylib"]);
    // REPLACE swaps the library's functions as a whole.
    assert_eq!(
        ok(
            &mut c,
            &[
                "FUNCTION",
                "LOAD",
                "REPLACE",
                "#!lua name=mylib\nredis.register_function('myfunc', function() return 'new' end)"
            ]
        ),
        bulk("mylib")
    );
    assert_eq!(ok(&mut c, &["FCALL", "myfunc", "0"]), bulk("new"));
    assert_eq!(
        err(&mut c, &["FCALL", "wr", "1", "k", "v"]),
        "ERR Function not found"
    );
    // A replacement that fails leaves the old library in place.
    assert_eq!(
        err(
            &mut c,
            &[
                "FUNCTION",
                "LOAD",
                "REPLACE",
                "#!lua name=mylib\nredis.register_function('other', function() end)"
            ]
        ),
        "ERR Function other already exists"
    );
    assert_eq!(ok(&mut c, &["FCALL", "myfunc", "0"]), bulk("new"));
    assert_eq!(ok(&mut c, &["FUNCTION", "DELETE", "MYLIB"]), Value::Okay);
    assert_eq!(
        err(&mut c, &["FCALL", "other", "0"]),
        "ERR Function not found"
    );
    assert_eq!(listed(&mut c), ["mylib"]);
    assert_eq!(ok(&mut c, &["FUNCTION", "FLUSH", "ASYNC"]), Value::Okay);
    assert_eq!(listed(&mut c), Vec::<String>::new());
    assert_eq!(
        err(&mut c, &["FCALL", "myfunc", "0"]),
        "ERR Function not found"
    );
    // FLUSHALL leaves functions alone, as in Redis.
    load(&mut c, LIB);
    ok(&mut c, &["FLUSHALL"]);
    assert_eq!(
        ok(&mut c, &["FCALL", "myfunc", "0", "still"]),
        bulk("still")
    );
    let info: String = redis::cmd("INFO").arg("memory").query(&mut c).unwrap();
    assert!(info.contains("number_of_functions:7\r\n"), "{info}");
    assert!(info.contains("number_of_libraries:1\r\n"), "{info}");
}

/// A function runs with the keys and arguments it is given, writes atomically with the
/// rest of an EXEC, and a library loaded inside MULTI is callable later in the same EXEC.
#[test]
fn functions_in_multi_and_with_data() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut raw = s.raw();
    raw.expect(&[b"MULTI"], b"+OK\r\n");
    raw.expect(
        &[b"FUNCTION", b"LOAD", b"#!lua name=m\nredis.register_function('mf', function(k, a) return redis.call('INCRBY', k[1], a[1]) end)"],
        b"+QUEUED\r\n",
    );
    raw.expect(&[b"FCALL", b"mf", b"1", b"cnt", b"5"], b"+QUEUED\r\n");
    raw.expect(&[b"FCALL_RO", b"mf", b"1", b"cnt", b"5"], b"+QUEUED\r\n");
    raw.expect(
        &[b"EXEC"],
        b"*3\r\n$1\r\nm\r\n:5\r\n-ERR Can not execute a script with write flag using *_ro command.\r\n",
    );
    assert_eq!(ok(&mut c, &["GET", "cnt"]), bulk("5"));
    // A DISCARDed load leaves nothing.
    raw.expect(&[b"MULTI"], b"+OK\r\n");
    raw.expect(&[b"FUNCTION", b"DELETE", b"m"], b"+QUEUED\r\n");
    raw.expect(&[b"DISCARD"], b"+OK\r\n");
    assert_eq!(ok(&mut c, &["FCALL", "mf", "1", "cnt", "2"]), int(7));
}

/// Libraries are stored: they outlast a restart, FCALL works at once, and DELETE and
/// FLUSH stay done.
#[test]
fn functions_survive_a_restart() {
    let mut s = TestServer::start();
    let mut c = s.client();
    load(&mut c, LIB);
    load(
        &mut c,
        "#!lua name=gone\nredis.register_function('bye', function() return 1 end)",
    );
    ok(&mut c, &["FUNCTION", "DELETE", "gone"]);
    let before = ok(&mut c, &["FUNCTION", "LIST", "WITHCODE"]);
    drop(c);
    s.restart();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["FUNCTION", "LIST", "WITHCODE"]), before);
    assert_eq!(ok(&mut c, &["FCALL", "myfunc", "0", "back"]), bulk("back"));
    assert_eq!(
        err(&mut c, &["FCALL", "bye", "0"]),
        "ERR Function not found"
    );
    ok(&mut c, &["FUNCTION", "FLUSH"]);
    drop(c);
    s.restart();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["FUNCTION", "LIST"]), Value::Array(vec![]));
}

/// `FUNCTION DUMP` of redis-server 7.0.15 (`redis-cli FUNCTION LOAD` of the library below,
/// then `FUNCTION DUMP`, its bytes as hex): opcode 245, the code LZF-compressed, RDB
/// version 10, CRC-64.
const REDIS_PAYLOAD: &str = "f5c340d8411b1423216c7561206e616d653d66726f6d72656469730a60051b2e72656769737465725f66756e6374696f6e282768656c6c6f272c20e00011126b6579732c2061726773292072657475726e2080240020404d062027202e2e2028401e075b315d206f722027605a06272920656e6429e00f67007bc05e005f609704277065656b20740863616c6c6261636b3dc01e607de000776059002e40240428274745542030409c2077606c20b31a6c6167733d7b276e6f2d777269746573277d2c206465736372697040dd003d209b06616473206f6e65403901277d0a009ddd5ef23201fbff";

/// The library in [`REDIS_PAYLOAD`].
const REDIS_LIB: &str = "#!lua name=fromredis\nredis.register_function('hello', function(keys, args) return 'hello from ' .. (args[1] or 'redis') end)\nredis.register_function{function_name='peek', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}, description='reads one key'}";

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn restore(
    c: &mut redis::Connection,
    payload: &[u8],
    policy: Option<&str>,
) -> redis::RedisResult<Value> {
    let mut cmd = redis::cmd("FUNCTION");
    cmd.arg("RESTORE").arg(payload);
    if let Some(p) = policy {
        cmd.arg(p);
    }
    cmd.query(c)
}

/// A payload Redis dumped restores here, a payload dumped here restores here (and, being
/// Redis's form, in Redis), and the policies behave as Redis's.
#[test]
fn dump_and_restore() {
    let s = TestServer::start();
    let mut c = s.client();
    let payload = hex(REDIS_PAYLOAD);
    assert_eq!(restore(&mut c, &payload, None).unwrap(), Value::Okay);
    assert_eq!(
        ok(&mut c, &["FCALL", "hello", "0"]),
        bulk("hello from redis")
    );
    assert_eq!(ok(&mut c, &["SET", "k", "v"]), Value::Okay);
    assert_eq!(ok(&mut c, &["FCALL_RO", "peek", "1", "k"]), bulk("v"));
    let Value::Array(libs) = ok(&mut c, &["FUNCTION", "LIST", "WITHCODE"]) else {
        panic!("not an array")
    };
    let Value::Array(lib) = &libs[0] else {
        panic!("{libs:?}")
    };
    assert_eq!(lib[7], bulk(REDIS_LIB));
    // APPEND (the default) refuses a library already there; REPLACE takes it.
    let e = restore(&mut c, &payload, None).unwrap_err();
    assert_eq!(e.detail(), Some("Library fromredis already exists"));
    assert_eq!(
        restore(&mut c, &payload, Some("REPLACE")).unwrap(),
        Value::Okay
    );
    // Dumped here, restored here after a flush: the same libraries.
    load(
        &mut c,
        "#!lua name=local1\nredis.register_function('twice', function(keys, args) return args[1] .. args[1] end)",
    );
    let dumped: Vec<u8> = redis::cmd("FUNCTION").arg("DUMP").query(&mut c).unwrap();
    let listing = ok(&mut c, &["FUNCTION", "LIST", "WITHCODE"]);
    ok(&mut c, &["FUNCTION", "FLUSH"]);
    assert_eq!(restore(&mut c, &dumped, None).unwrap(), Value::Okay);
    assert_eq!(ok(&mut c, &["FUNCTION", "LIST", "WITHCODE"]), listing);
    assert_eq!(ok(&mut c, &["FCALL", "twice", "0", "ab"]), bulk("abab"));
    // FLUSH drops what was there; a damaged payload changes nothing.
    assert_eq!(
        restore(&mut c, &payload, Some("FLUSH")).unwrap(),
        Value::Okay
    );
    assert_eq!(
        err(&mut c, &["FCALL", "twice", "0", "ab"]),
        "ERR Function not found"
    );
    let mut bad = dumped.clone();
    let at = bad.len() / 2;
    bad[at] ^= 0x20;
    let e = restore(&mut c, &bad, Some("FLUSH")).unwrap_err();
    assert_eq!(
        e.detail(),
        Some("DUMP payload version or checksum are wrong")
    );
    assert_eq!(
        ok(&mut c, &["FCALL", "hello", "0", "x"]),
        bulk("hello from x")
    );
    // A function name taken by another library fails the restore as a whole.
    ok(&mut c, &["FUNCTION", "FLUSH"]);
    load(
        &mut c,
        "#!lua name=clash\nredis.register_function('HELLO', function() return 1 end)",
    );
    let e = restore(&mut c, &payload, Some("REPLACE")).unwrap_err();
    assert_eq!(e.detail(), Some("Function hello already exists"));
    assert_eq!(
        err(&mut c, &["FCALL", "peek", "1", "k"]),
        "ERR Function not found"
    );
    // An empty dump is byte for byte Redis's: no opcode, version 10, checksum.
    ok(&mut c, &["FUNCTION", "FLUSH"]);
    let empty: Vec<u8> = redis::cmd("FUNCTION").arg("DUMP").query(&mut c).unwrap();
    assert_eq!(empty, hex("0a005d9b5c400f7fa2da"));
}

/// FUNCTION KILL stops a running function (its writes discarded, as SCRIPT KILL's are
/// here); FUNCTION STATS shows it meanwhile; SCRIPT KILL refuses it with Redis's text.
#[test]
fn function_kill_stops_a_running_function() {
    let s = TestServer::start();
    let mut c = s.client();
    load(
        &mut c,
        "#!lua name=busy\nredis.register_function('spin', function(k, a) redis.call('SET', 'spun', '1') while true do end end)",
    );
    let mut runner = s.raw();
    runner.cmd(&[b"FCALL", b"spin", b"0", b"x"]);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let running = loop {
        let Value::Array(stats) = ok(&mut c, &["FUNCTION", "STATS"]) else {
            panic!("not an array")
        };
        if stats[1] != Value::Nil {
            break stats[1].clone();
        }
        assert!(std::time::Instant::now() < deadline, "never ran");
        std::thread::sleep(Duration::from_millis(20));
    };
    let Value::Array(r) = running else {
        panic!("{running:?}")
    };
    assert_eq!(r[1], bulk("spin"));
    assert_eq!(
        r[3],
        Value::Array(vec![bulk("FCALL"), bulk("spin"), bulk("0"), bulk("x")])
    );
    assert_eq!(
        err(&mut c, &["SCRIPT", "KILL"]),
        "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
    );
    assert_eq!(ok(&mut c, &["FUNCTION", "KILL"]), Value::Okay);
    let reply = runner.read_until(b".\r\n");
    assert_eq!(
        String::from_utf8_lossy(&reply),
        "-ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:2.\r\n"
    );
    assert_eq!(ok(&mut c, &["GET", "spun"]), Value::Nil);
    assert_eq!(
        err(&mut c, &["FUNCTION", "KILL"]),
        "NOTBUSY No scripts in execution right now."
    );
    // FUNCTION KILL does not stop an EVAL.
    runner.cmd(&[b"EVAL", b"while true do end", b"0"]);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        err(&mut c, &["FUNCTION", "KILL"]),
        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
    );
    assert_eq!(
        err(&mut c, &["FUNCTION", "STATS"]),
        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
    );
    assert_eq!(ok(&mut c, &["SCRIPT", "KILL"]), Value::Okay);
    let _ = runner.read_until(b".\r\n");
    assert_eq!(
        q(&mut c, &["PING"]).unwrap(),
        Value::SimpleString("PONG".into())
    );
}

/// `CLIENT PAUSE WRITE` holds the FUNCTION subcommands that write, not those that read.
#[test]
fn a_write_pause_holds_function_loads_not_listings() {
    let s = TestServer::start();
    let mut admin = s.client();
    let mut c = s.client();
    ok(&mut admin, &["CLIENT", "PAUSE", "1500", "WRITE"]);
    let t = std::time::Instant::now();
    assert_eq!(ok(&mut c, &["FUNCTION", "LIST"]), Value::Array(vec![]));
    assert_eq!(
        err(&mut c, &["FUNCTION", "KILL"]),
        "NOTBUSY No scripts in execution right now."
    );
    assert!(
        t.elapsed() < Duration::from_millis(1000),
        "{:?}",
        t.elapsed()
    );
    load(
        &mut c,
        "#!lua name=p\nredis.register_function('p', function() return 1 end)",
    );
    assert!(
        t.elapsed() >= Duration::from_millis(1000),
        "{:?}",
        t.elapsed()
    );
}
