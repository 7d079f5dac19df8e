//! What an operator sees and does: CLIENT LIST / INFO / KILL / HELP, CONFIG HELP, INFO's
//! memory, cpu and replication sections (what `redis-cli --stat` reads), commandstats,
//! errorstats and the stats counters with CONFIG RESETSTAT, unknown
//! subcommands, BF.INFO's per-protocol field reply, and a port already in use.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common;

use std::time::Duration;

use bloomkv_server::{Config, Server, ServerError};
use common::{TestServer, bulk, err, int, ok, q};
use redis::Value;

fn text(v: Value) -> String {
    match v {
        Value::BulkString(b) => String::from_utf8(b).unwrap(),
        Value::VerbatimString { text, .. } => text,
        v => panic!("not text: {v:?}"),
    }
}

#[test]
fn client_list_info_and_kill() {
    let s = TestServer::start();
    let mut a = s.client();
    let mut b = s.client();
    ok(&mut a, &["CLIENT", "SETNAME", "alpha"]);
    ok(&mut b, &["CLIENT", "SETNAME", "beta"]);
    ok(&mut b, &["SET", "k", "v"]);
    let list = text(ok(&mut a, &["CLIENT", "LIST"]));
    assert_eq!(list.lines().count(), 2, "{list}");
    assert!(
        list.contains("name=alpha") && list.contains("name=beta"),
        "{list}"
    );
    assert!(list.lines().all(|l| l.contains(" db=0 ")), "{list}");
    let beta = list.lines().find(|l| l.contains("name=beta")).unwrap();
    assert!(beta.contains("cmd=set"), "{beta}");
    let info = text(ok(&mut a, &["CLIENT", "INFO"]));
    assert!(info.contains("name=alpha") && info.contains(" db=0 ") && info.contains("cmd=client"));
    let id_b = match ok(&mut b, &["CLIENT", "ID"]) {
        Value::Int(n) => n,
        v => panic!("{v:?}"),
    };
    let only = text(ok(&mut a, &["CLIENT", "LIST", "ID", &id_b.to_string()]));
    assert!(only.contains("name=beta") && !only.contains("name=alpha"));
    assert_eq!(
        text(ok(&mut a, &["CLIENT", "LIST", "TYPE", "pubsub"])),
        String::new()
    );
    assert_eq!(
        err(&mut a, &["CLIENT", "LIST", "TYPE", "bogus"]),
        "ERR Unknown client type 'bogus'"
    );
    // Kill b by id: its connection closes; a's goes on. SKIPME keeps the caller.
    assert_eq!(
        ok(&mut a, &["CLIENT", "KILL", "ID", &id_b.to_string()]),
        int(1)
    );
    b.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert!(
        common::q(&mut b, &["PING"]).is_err(),
        "killed client still served"
    );
    assert_eq!(ok(&mut a, &["CLIENT", "KILL", "ID", "999999"]), int(0));
    assert_eq!(ok(&mut a, &["CLIENT", "KILL", "TYPE", "normal"]), int(0));
    // redis-server 7.0.15's answers for the filters' bad values.
    assert_eq!(
        err(&mut a, &["CLIENT", "KILL", "USER", "nosuchuser"]),
        "ERR No such user 'nosuchuser'"
    );
    assert_eq!(
        err(&mut a, &["CLIENT", "KILL", "TYPE", "bogus"]),
        "ERR Unknown client type 'bogus'"
    );
    assert_eq!(
        err(&mut a, &["CLIENT", "KILL", "SKIPME", "bogus"]),
        "ERR syntax error"
    );
    assert_eq!(
        ok(&mut a, &["CLIENT", "KILL", "USER", "default"]),
        int(0),
        "skips itself"
    );
    assert_eq!(
        err(&mut a, &["CLIENT", "KILL", "127.0.0.1:1"]),
        "ERR No such client"
    );
    let mut c = s.client();
    let c_addr = text(ok(&mut c, &["CLIENT", "INFO"]))
        .split_whitespace()
        .find_map(|f| f.strip_prefix("addr=").map(str::to_string))
        .unwrap();
    assert_eq!(ok(&mut a, &["CLIENT", "KILL", &c_addr]), Value::Okay);
    assert!(common::q(&mut c, &["PING"]).is_err());
    assert_eq!(ok(&mut a, &["PING"]), Value::SimpleString("PONG".into()));
}

/// A killed client is gone for LIST and KILL the moment CLIENT KILL answers, as in Redis,
/// even while its connection is still busy closing (here: in the middle of a DEBUG SLEEP).
#[test]
fn a_killed_client_is_gone_at_once() {
    let s = TestServer::start();
    let mut a = s.client();
    let mut b = s.client();
    let id_b = match ok(&mut b, &["CLIENT", "ID"]) {
        Value::Int(n) => n,
        v => panic!("{v:?}"),
    };
    // b sleeps; wait until CLIENT LIST shows it in the command.
    let sleeper = std::thread::spawn(move || {
        let _ = q(&mut b, &["DEBUG", "SLEEP", "3"]);
    });
    let busy = format!("id={id_b} ");
    loop {
        let list = text(ok(&mut a, &["CLIENT", "LIST"]));
        if list
            .lines()
            .any(|l| l.starts_with(&busy) && l.contains("cmd=debug"))
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        ok(&mut a, &["CLIENT", "KILL", "ID", &id_b.to_string()]),
        int(1)
    );
    let list = text(ok(&mut a, &["CLIENT", "LIST"]));
    assert!(!list.contains(&busy), "{list}");
    assert_eq!(
        ok(&mut a, &["CLIENT", "KILL", "ID", &id_b.to_string()]),
        int(0)
    );
    assert_eq!(ok(&mut a, &["CLIENT", "KILL", "TYPE", "normal"]), int(0));
    sleeper.join().unwrap();
}

#[test]
fn help_and_unknown_subcommands() {
    let s = TestServer::start();
    let mut c = s.client();
    for cmd in ["CLIENT", "CONFIG"] {
        match ok(&mut c, &[cmd, "HELP"]) {
            Value::Array(lines) => assert!(lines.len() > 3, "{cmd} HELP: {lines:?}"),
            v => panic!("{cmd} HELP: {v:?}"),
        }
    }
    let long = "x".repeat(300);
    let e = err(&mut c, &["CLIENT", &long]);
    assert_eq!(
        e,
        format!(
            "ERR unknown subcommand '{}'. Try CLIENT HELP.",
            "x".repeat(128)
        )
    );
    let e = err(&mut c, &["CONFIG", "SETX"]);
    assert_eq!(e, "ERR unknown subcommand 'SETX'. Try CONFIG HELP.");
}

#[test]
fn info_sections_for_monitoring_tools() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["SET", "k", "v"]);
    let info = text(ok(&mut c, &["INFO"]));
    for field in [
        "# Memory",
        "used_memory:",
        "used_memory_rss:",
        "used_memory_peak:",
        "# CPU",
        "used_cpu_sys:",
        "used_cpu_user:",
        "# Replication",
        "role:master",
        "connected_slaves:0",
        "blocked_clients:",
        "total_commands_processed:",
        "connected_clients:1",
    ] {
        assert!(info.contains(field), "INFO lacks {field}: {info}");
    }
    let mem = text(ok(&mut c, &["INFO", "memory"]));
    let used: u64 = mem
        .lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(used > 1 << 20, "{mem}");
    // used_memory leaves out the mapped tables' pages, which used_memory_rss counts.
    let rss: u64 = field(&mem, "used_memory_rss").unwrap().parse().unwrap();
    assert!(used <= rss, "{mem}");
    assert!(!text(ok(&mut c, &["INFO", "cpu"])).contains("# Memory"));
    assert!(text(ok(&mut c, &["INFO", "replication"])).contains("role:master"));
}

/// The value of `field` in an INFO text.
fn field<'a>(info: &'a str, field: &str) -> Option<&'a str> {
    info.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .map(str::trim)
}

/// A `cmdstat_` line's numbers, checking its shape is Redis 7's:
/// `calls=N,usec=N,usec_per_call=N.NN,rejected_calls=N,failed_calls=N`.
fn cmdstat(info: &str, name: &str) -> Option<[u64; 4]> {
    let v = field(info, &format!("cmdstat_{name}"))?;
    let parts: Vec<(&str, &str)> = v.split(',').filter_map(|p| p.split_once('=')).collect();
    let keys: Vec<&str> = parts.iter().map(|p| p.0).collect();
    assert_eq!(
        keys,
        [
            "calls",
            "usec",
            "usec_per_call",
            "rejected_calls",
            "failed_calls"
        ],
        "{v}"
    );
    let per_call = parts[2].1;
    assert!(
        per_call.split_once('.').is_some_and(|(_, d)| d.len() == 2),
        "{v}"
    );
    let n = |i: usize| parts[i].1.parse::<u64>().unwrap();
    Some([n(0), n(1), n(3), n(4)])
}

#[test]
fn command_and_error_stats_as_redis_7() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["SET", "k", "v"]);
    ok(&mut c, &["GET", "k"]);
    err(&mut c, &["GET"]);
    err(&mut c, &["LPUSH", "k", "x"]);
    err(&mut c, &["NOSUCHCOMMAND"]);
    ok(&mut c, &["MULTI"]);
    ok(&mut c, &["SET", "a", "b"]);
    ok(&mut c, &["INCR", "a"]);
    // The reply holds INCR's error (the client library reports the whole EXEC as failed).
    assert!(q(&mut c, &["EXEC"]).is_err());
    let stats = text(ok(&mut c, &["INFO", "commandstats"]));
    assert!(stats.starts_with("# Commandstats\r\n"), "{stats}");
    // [calls, usec, rejected, failed]
    let set = cmdstat(&stats, "set").unwrap();
    assert_eq!((set[0], set[2], set[3]), (2, 0, 0), "{stats}");
    let get = cmdstat(&stats, "get").unwrap();
    assert_eq!((get[0], get[2], get[3]), (1, 1, 0), "{stats}");
    let lpush = cmdstat(&stats, "lpush").unwrap();
    assert_eq!((lpush[0], lpush[2], lpush[3]), (1, 0, 1), "{stats}");
    let incr = cmdstat(&stats, "incr").unwrap();
    assert_eq!((incr[0], incr[3]), (1, 1), "{stats}");
    assert_eq!(cmdstat(&stats, "exec").map(|e| e[0]), Some(1));
    assert_eq!(
        cmdstat(&stats, "hset"),
        None,
        "commands never called are left out"
    );

    let errors = text(ok(&mut c, &["INFO", "errorstats"]));
    assert!(errors.starts_with("# Errorstats\r\n"), "{errors}");
    // The arity error, the unknown command and INCR of a non-integer (inside EXEC); LPUSH's.
    assert_eq!(field(&errors, "errorstat_ERR"), Some("count=3"), "{errors}");
    assert_eq!(
        field(&errors, "errorstat_WRONGTYPE"),
        Some("count=1"),
        "{errors}"
    );
    let info = text(ok(&mut c, &["INFO", "stats"]));
    assert_eq!(field(&info, "total_error_replies"), Some("4"), "{info}");
    for f in [
        "total_connections_received",
        "total_commands_processed",
        "instantaneous_ops_per_sec",
        "total_net_input_bytes",
        "total_net_output_bytes",
        "instantaneous_input_kbps",
        "instantaneous_output_kbps",
        "total_reads_processed",
        "total_writes_processed",
    ] {
        assert!(field(&info, f).is_some(), "INFO stats lacks {f}: {info}");
    }
    assert!(
        field(&info, "total_net_input_bytes")
            .unwrap()
            .parse::<u64>()
            .unwrap()
            > 50
    );

    // INFO (default) shows errorstats but not commandstats, as Redis does; ALL shows both.
    let default = text(ok(&mut c, &["INFO"]));
    assert!(default.contains("# Errorstats") && !default.contains("# Commandstats"));
    let all = text(ok(&mut c, &["INFO", "all"]));
    assert!(all.contains("# Errorstats") && all.contains("# Commandstats"));

    assert_eq!(ok(&mut c, &["CONFIG", "RESETSTAT"]), Value::Okay);
    let stats = text(ok(&mut c, &["INFO", "commandstats"]));
    assert_eq!(cmdstat(&stats, "set"), None, "{stats}");
    assert_eq!(cmdstat(&stats, "config").map(|s| s[0]), Some(1), "{stats}");
    let errors = text(ok(&mut c, &["INFO", "errorstats"]));
    assert_eq!(errors.trim_end(), "# Errorstats");
    let info = text(ok(&mut c, &["INFO", "stats"]));
    assert_eq!(field(&info, "total_error_replies"), Some("0"), "{info}");
    assert!(err(&mut c, &["CONFIG", "RESETSTAT", "x"]).contains("wrong number of arguments"));

    // Commands over more than the rate's 100 ms sampling period show in the rate.
    for _ in 0..100 {
        ok(&mut c, &["PING"]);
        std::thread::sleep(Duration::from_millis(5));
    }
    let info = text(ok(&mut c, &["INFO", "stats"]));
    let ops: u64 = field(&info, "instantaneous_ops_per_sec")
        .unwrap()
        .parse()
        .unwrap();
    assert!(ops > 0, "{info}");
}

#[test]
fn bf_info_field_by_protocol() {
    let s = TestServer::start();
    let mut c2 = s.client();
    ok(&mut c2, &["BF.RESERVE", "bf", "0.01", "1000"]);
    assert_eq!(
        ok(&mut c2, &["BF.INFO", "bf", "CAPACITY"]),
        Value::Array(vec![int(1000)])
    );
    let mut raw = s.raw();
    raw.expect(&[b"HELLO", b"3"], b"%7\r\n");
    raw.read_until(b"modules\r\n*0\r\n");
    raw.expect(
        &[b"BF.INFO", b"bf", b"CAPACITY"],
        b"%1\r\n+Capacity\r\n:1000\r\n",
    );
}

#[test]
fn a_port_in_use_names_the_address_and_creates_nothing() {
    let s = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let e = Server::start(Config {
        dir: db.clone(),
        port: s.port,
        ..Config::default()
    })
    .unwrap_err();
    assert!(matches!(e, ServerError::Bind { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains(&format!("127.0.0.1:{}", s.port)), "{msg}");
    assert!(
        !db.exists(),
        "a server that could not listen created its database"
    );
}

#[test]
fn shutdown_stops_the_server_and_keeps_the_data() {
    let mut s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["SET", "k", "v"]);
    assert_eq!(
        err(&mut c, &["SHUTDOWN", "ABORT"]),
        "ERR No shutdown in progress."
    );
    assert!(
        common::q(&mut c, &["SHUTDOWN", "NOSAVE"]).is_err(),
        "no reply expected"
    );
    // The server stops by itself; the data is there after a start on the same directory.
    s.server.take().unwrap().wait().unwrap();
    s.restart();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["GET", "k"]), Value::BulkString(b"v".to_vec()));
}

/// `--logfile` and `--loglevel`: Redis's line format in the file, nothing on stderr, the
/// level readable and settable with CONFIG.
#[test]
fn the_log_goes_to_the_logfile_in_redis_format_at_the_level_asked() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_bloomkv-server"))
        .arg("--dir")
        .arg(dir.path().join("db"))
        .args(["--port", &port.to_string(), "--loglevel", "verbose"])
        .arg("--logfile")
        .arg(&log)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut c = loop {
        if let Ok(c) = redis::Client::open(format!("redis://127.0.0.1:{port}/"))
            .and_then(|cl| cl.get_connection())
        {
            break c;
        }
        assert!(
            std::time::Instant::now() < until,
            "the server did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let get = |c: &mut redis::Connection| -> Vec<String> {
        redis::cmd("CONFIG")
            .arg("GET")
            .arg("log*")
            .query(c)
            .unwrap()
    };
    let got = get(&mut c);
    assert!(
        got.windows(2).any(|w| w == ["loglevel", "verbose"]),
        "{got:?}"
    );
    assert!(
        got.windows(2)
            .any(|w| w[0] == "logfile" && w[1] == log.display().to_string()),
        "{got:?}"
    );
    let set: String = redis::cmd("CONFIG")
        .arg("SET")
        .arg("loglevel")
        .arg("WARNING")
        .query(&mut c)
        .unwrap();
    assert_eq!(set, "OK");
    assert!(get(&mut c).windows(2).any(|w| w == ["loglevel", "warning"]));
    let bad: redis::RedisResult<String> = redis::cmd("CONFIG")
        .arg("SET")
        .arg("loglevel")
        .arg("loud")
        .query(&mut c);
    assert!(bad.is_err());
    let _: redis::RedisResult<()> = redis::cmd("SHUTDOWN").query(&mut c);
    let child_pid = child.id();
    let out = child.wait_with_output().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    let first = text.lines().next().unwrap_or_default();
    // "pid:M 28 Nov 2026 09:09:19.208 * bloomkv-server listening on 127.0.0.1:PORT"
    let (pid, rest) = first.split_once(":M ").unwrap_or_else(|| panic!("{text}"));
    assert_eq!(pid.parse::<u32>().ok(), Some(child_pid), "{first}");
    assert!(rest.contains(" * bloomkv-server listening on "), "{first}");
    // At warning, the shutdown notices are not written.
    assert!(!text.contains("shutting down"), "{text}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// SAVE and BGSAVE flush the memtable into a table (INFO's bloomkv section counts flushes),
/// LASTSAVE moves forward with them, INFO persistence reports the background save, and the
/// data is still there after a restart.
#[test]
fn save_bgsave_and_lastsave() {
    let mut s = TestServer::start();
    let mut c = s.client();
    let flushes = |c: &mut redis::Connection| -> u64 {
        let info = text(ok(c, &["INFO", "bloomkv"]));
        field(&info, "flushes").unwrap().parse().unwrap()
    };
    let lastsave = |c: &mut redis::Connection| match ok(c, &["LASTSAVE"]) {
        Value::Int(t) => t,
        v => panic!("LASTSAVE: {v:?}"),
    };
    let started = lastsave(&mut c);
    assert!(
        started > 1_700_000_000,
        "LASTSAVE is Unix seconds: {started}"
    );
    ok(&mut c, &["SET", "k", "v"]);
    let before = flushes(&mut c);
    assert_eq!(ok(&mut c, &["SAVE"]), Value::Okay);
    assert_eq!(flushes(&mut c), before + 1);
    assert!(lastsave(&mut c) >= started);

    ok(&mut c, &["SET", "k2", "v2"]);
    let before = flushes(&mut c);
    let first = ok(&mut c, &["BGSAVE"]);
    assert_eq!(
        first,
        Value::SimpleString("Background saving started".into())
    );
    // The background save ends (INFO says so; the bound only guards against a hang).
    let mut waited = 0;
    loop {
        let info = text(ok(&mut c, &["INFO", "persistence"]));
        if field(&info, "rdb_bgsave_in_progress") == Some("0") {
            assert_eq!(field(&info, "rdb_last_bgsave_status"), Some("ok"));
            break;
        }
        waited += 1;
        assert!(waited < 6000, "the background save never ended");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(flushes(&mut c), before + 1);
    assert_eq!(err(&mut c, &["BGSAVE", "NOW"]), "ERR syntax error");
    assert_eq!(
        ok(&mut c, &["BGREWRITEAOF"]),
        Value::SimpleString("Background append only file rewriting started".into())
    );
    s.restart();
    let mut c = s.client();
    assert_eq!(
        ok(&mut c, &["MGET", "k", "k2"]),
        Value::Array(vec![bulk("v"), bulk("v2")])
    );
}

/// CLIENT REPLY OFF leaves out every reply until ON, SKIP leaves out its own and the next
/// command's; the commands still run. The bytes are redis-server 7.0.15's for the same
/// pipeline.
#[test]
fn client_reply_off_on_and_skip() {
    let s = TestServer::start();
    let mut raw = s.raw();
    raw.send(
        b"CLIENT REPLY OFF\r\nSET a 1\r\nPING\r\nCLIENT REPLY ON\r\nGET a\r\nCLIENT REPLY SKIP\r\n\
          SET b 2\r\nPING\r\nCLIENT REPLY BOGUS\r\nGET b\r\n",
    );
    let want = b"+OK\r\n$1\r\n1\r\n+PONG\r\n-ERR syntax error\r\n$1\r\n2\r\n";
    assert_eq!(
        String::from_utf8_lossy(&raw.read_n(want.len())),
        String::from_utf8_lossy(want)
    );
}

/// SLOWLOG with CONFIG SET's threshold: every command at 0, none at -1; entries newest
/// first with Redis's six fields, long arguments cut to 128 bytes, AUTH never logged;
/// LEN, RESET and the max length.
#[test]
fn slowlog_logs_what_the_threshold_lets_through() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["CLIENT", "SETNAME", "slowpoke"]);
    assert_eq!(
        ok(&mut c, &["CONFIG", "GET", "slowlog-*"]),
        ok(
            &mut c,
            &[
                "CONFIG",
                "GET",
                "slowlog-log-slower-than",
                "slowlog-max-len"
            ]
        )
    );
    ok(&mut c, &["CONFIG", "SET", "slowlog-log-slower-than", "0"]);
    let long = "v".repeat(200);
    ok(&mut c, &["SET", "k", &long]);
    let _ = q(&mut c, &["AUTH", "secret"]);
    // Newest first: the SET (AUTH after it is never logged), then the CONFIG SET that
    // lowered the threshold (logged once it had run).
    let Value::Array(entries) = ok(&mut c, &["SLOWLOG", "GET", "2"]) else {
        panic!("SLOWLOG GET answers an array");
    };
    assert_eq!(entries.len(), 2);
    let args_of = |e: &Value| -> Vec<Value> {
        let Value::Array(fields) = e else {
            panic!("an entry is an array: {e:?}");
        };
        assert_eq!(
            fields.len(),
            6,
            "id, time, duration, arguments, address, name"
        );
        assert_eq!(fields[5], bulk("slowpoke"));
        let Value::Array(args) = &fields[3] else {
            panic!("the arguments are an array");
        };
        args.clone()
    };
    let set = args_of(&entries[0]);
    assert_eq!(set[0], bulk("SET"));
    assert_eq!(
        set[2],
        bulk(&format!("{}... (72 more bytes)", "v".repeat(128)))
    );
    assert_eq!(args_of(&entries[1])[0], bulk("CONFIG"));
    ok(&mut c, &["CONFIG", "SET", "slowlog-log-slower-than", "-1"]);
    ok(&mut c, &["SLOWLOG", "RESET"]);
    ok(&mut c, &["SET", "k", "v"]);
    assert_eq!(ok(&mut c, &["SLOWLOG", "LEN"]), int(0));
    ok(
        &mut c,
        &[
            "CONFIG",
            "SET",
            "slowlog-log-slower-than",
            "0",
            "slowlog-max-len",
            "3",
        ],
    );
    for _ in 0..5 {
        ok(&mut c, &["PING"]);
    }
    assert_eq!(ok(&mut c, &["SLOWLOG", "LEN"]), int(3));
    assert_eq!(
        err(&mut c, &["SLOWLOG", "GET", "-2"]),
        "ERR count should be greater than or equal to -1"
    );
}

/// CLIENT NO-EVICT and NO-TOUCH show as flags `e` and `T` in CLIENT INFO (Redis 7.2's
/// letters), and RESET clears them.
#[test]
fn no_evict_and_no_touch_show_as_flags_until_reset() {
    let s = TestServer::start();
    let mut c = s.client();
    let flags = |c: &mut redis::Connection| -> String {
        let info = text(ok(c, &["CLIENT", "INFO"]));
        info.split_whitespace()
            .find_map(|f| f.strip_prefix("flags="))
            .unwrap()
            .to_string()
    };
    assert_eq!(flags(&mut c), "N");
    ok(&mut c, &["CLIENT", "NO-TOUCH", "ON"]);
    assert_eq!(flags(&mut c), "T");
    ok(&mut c, &["CLIENT", "NO-EVICT", "ON"]);
    assert_eq!(flags(&mut c), "eT");
    ok(&mut c, &["CLIENT", "NO-TOUCH", "OFF"]);
    assert_eq!(flags(&mut c), "e");
    ok(&mut c, &["CLIENT", "NO-TOUCH", "ON"]);
    ok(&mut c, &["RESET"]);
    assert_eq!(flags(&mut c), "N");
}

/// CONFIG SET of the settings that change at run time: a password asked of new connections
/// (those already in stay in), maxclients, and the settings this server has one value of
/// (accepted at that value, refused at another); several pairs apply all or none.
#[test]
fn config_set_password_maxclients_and_fixed_settings() {
    let s = TestServer::start();
    let mut admin = s.client();
    ok(&mut admin, &["CONFIG", "SET", "requirepass", "s3cret"]);
    assert_eq!(
        ok(&mut admin, &["CONFIG", "GET", "requirepass"]),
        Value::Array(vec![bulk("requirepass"), bulk("s3cret")])
    );
    assert_eq!(
        ok(&mut admin, &["PING"]),
        Value::SimpleString("PONG".into())
    );
    let mut newcomer = s.raw();
    newcomer.expect(&[b"GET", b"k"], b"-NOAUTH Authentication required.\r\n");
    newcomer.expect(&[b"AUTH", b"s3cret"], b"+OK\r\n");
    newcomer.expect(&[b"GET", b"k"], b"$-1\r\n");
    ok(&mut admin, &["CONFIG", "SET", "requirepass", ""]);
    let mut free = s.raw();
    free.expect(&[b"GET", b"k"], b"$-1\r\n");

    ok(&mut admin, &["CONFIG", "SET", "maxclients", "3"]);
    let info = text(ok(&mut admin, &["INFO", "clients"]));
    assert_eq!(field(&info, "maxclients"), Some("3"));
    // admin, newcomer and free are 3: a fourth is refused.
    let mut fourth = s.raw();
    fourth.expect(&[b"PING"], b"-ERR max number of clients reached\r\n");
    drop((newcomer, free));
    ok(&mut admin, &["CONFIG", "SET", "maxclients", "10000"]);

    for (name, value) in [
        ("save", ""),
        ("appendonly", "yes"),
        ("maxmemory", "0"),
        ("maxmemory-policy", "noeviction"),
    ] {
        assert_eq!(ok(&mut admin, &["CONFIG", "SET", name, value]), Value::Okay);
    }
    assert!(
        err(&mut admin, &["CONFIG", "SET", "save", "900 1"]).contains("only runs with save ''")
    );
    assert!(
        err(
            &mut admin,
            &["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"]
        )
        .contains("only runs with maxmemory-policy 'noeviction'")
    );
    // A bad pair refuses the whole command: the good one before it is not applied.
    assert!(
        err(
            &mut admin,
            &["CONFIG", "SET", "maxclients", "7", "appendonly", "no"]
        )
        .contains("appendonly")
    );
    assert_eq!(
        ok(&mut admin, &["CONFIG", "GET", "maxclients"]),
        Value::Array(vec![bulk("maxclients"), bulk("10000")])
    );
    assert!(err(&mut admin, &["CONFIG", "SET", "maxclients", "0"]).contains("maxclients"));
}
