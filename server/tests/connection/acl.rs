//! ACL: the `default` user as Redis 7 shows it, with and without a password (redis-server
//! 7.0.15's replies), and users of one's own: their rules, logging in, what they are refused
//! (Redis 7.2's `NOPERM` texts), ACL LOG, and a removed user's connections closed.

use crate::common;

use common::{TestServer, bulk, err, ok};
use redis::Value;

fn texts(v: Value) -> Vec<String> {
    match v {
        Value::Array(items) => items
            .into_iter()
            .map(|i| match i {
                Value::BulkString(b) => String::from_utf8_lossy(&b).into_owned(),
                other => panic!("{other:?}"),
            })
            .collect(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_default_user_as_redis_shows_it() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["ACL", "WHOAMI"]), bulk("default"));
    assert_eq!(texts(ok(&mut c, &["ACL", "USERS"])), ["default"]);
    assert_eq!(
        texts(ok(&mut c, &["ACL", "LIST"])),
        ["user default on nopass ~* &* +@all"]
    );
    assert_eq!(ok(&mut c, &["ACL", "GETUSER", "nobody"]), Value::Nil);
    let Value::Array(user) = ok(&mut c, &["ACL", "GETUSER", "default"]) else {
        panic!("GETUSER")
    };
    assert_eq!(user[0], bulk("flags"));
    assert_eq!(texts(user[1].clone()), ["on", "nopass"]);

    // With a password: its SHA-256, as Redis shows it (SHA-256 of "foo").
    ok(&mut c, &["CONFIG", "SET", "requirepass", "foo"]);
    let mut c = s.client();
    ok(&mut c, &["AUTH", "foo"]);
    assert_eq!(
        texts(ok(&mut c, &["ACL", "LIST"])),
        [
            "user default on #2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae ~* &* +@all"
        ]
    );
    let Value::Array(user) = ok(&mut c, &["ACL", "GETUSER", "default"]) else {
        panic!("GETUSER")
    };
    assert_eq!(texts(user[1].clone()), ["on"]);
    assert_eq!(
        texts(user[3].clone()),
        ["2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"]
    );
}

#[test]
fn categories_dry_runs_passwords_and_refusals() {
    let s = TestServer::start();
    let mut c = s.client();
    let cats = texts(ok(&mut c, &["ACL", "CAT"]));
    assert_eq!(cats.len(), 21);
    assert!(cats.contains(&"sortedset".to_string()));
    let mut hll = texts(ok(&mut c, &["ACL", "CAT", "hyperloglog"]));
    hll.sort();
    assert_eq!(hll, ["pfadd", "pfcount", "pfmerge"]);
    let reads = texts(ok(&mut c, &["ACL", "CAT", "read"]));
    assert!(reads.contains(&"get".to_string()) && !reads.contains(&"set".to_string()));
    assert_eq!(
        err(&mut c, &["ACL", "CAT", "nosuch"]),
        "ERR Unknown category 'nosuch'"
    );
    assert_eq!(
        ok(&mut c, &["ACL", "DRYRUN", "default", "GET", "k"]),
        Value::Okay
    );
    assert_eq!(
        err(&mut c, &["ACL", "DRYRUN", "default", "nosuch"]),
        "ERR Command 'nosuch' not found"
    );
    assert_eq!(
        err(&mut c, &["ACL", "DRYRUN", "nobody", "GET", "k"]),
        "ERR User 'nobody' not found"
    );
    let Value::BulkString(p) = ok(&mut c, &["ACL", "GENPASS"]) else {
        panic!("GENPASS")
    };
    assert_eq!(p.len(), 64);
    assert!(p.iter().all(u8::is_ascii_hexdigit));
    let Value::BulkString(q) = ok(&mut c, &["ACL", "GENPASS"]) else {
        panic!("GENPASS")
    };
    assert_ne!(p, q);
    let Value::BulkString(short) = ok(&mut c, &["ACL", "GENPASS", "10"]) else {
        panic!("GENPASS 10")
    };
    assert_eq!(short.len(), 3);
    assert_eq!(
        ok(&mut c, &["ACL", "DELUSER", "nobody", "other"]),
        common::int(0)
    );
    assert_eq!(
        err(&mut c, &["ACL", "DELUSER", "nobody", "default"]),
        "ERR The 'default' user cannot be removed"
    );
    for no_file in ["LOAD", "SAVE"] {
        let e = err(&mut c, &["ACL", no_file]);
        assert!(
            e.contains("not configured to use an ACL file"),
            "{no_file}: {e}"
        );
    }
    assert_eq!(
        err(&mut c, &["ACL", "BOGUS"]),
        "ERR unknown subcommand 'BOGUS'. Try ACL HELP."
    );
}

fn words(line: &str) -> Vec<&str> {
    line.split(' ').collect()
}

#[test]
fn users_log_in_and_are_refused_what_their_rules_do_not_allow() {
    let s = TestServer::start();
    let mut admin = s.client();
    let set = |c: &mut redis::Connection, rules: &str| {
        let mut w = vec!["ACL", "SETUSER"];
        w.extend(words(rules));
        ok(c, &w)
    };
    assert_eq!(
        set(
            &mut admin,
            "app on >secret ~cache:* &news:* +get +set +publish +acl +multi +exec"
        ),
        Value::Okay
    );
    assert_eq!(
        err(&mut admin, &["ACL", "SETUSER", "app", "+nosuch"]),
        "ERR Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL"
    );
    assert_eq!(
        texts(ok(&mut admin, &["ACL", "LIST"])),
        [
            "user app on #2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b ~cache:* resetchannels &news:* -@all +get +set +publish +acl +multi +exec",
            "user default on nopass ~* &* +@all",
        ]
    );
    let mut app = s.client();
    assert_eq!(
        err(&mut app, &["AUTH", "app", "wrong"]),
        "WRONGPASS invalid username-password pair or user is disabled."
    );
    assert_eq!(ok(&mut app, &["AUTH", "app", "secret"]), Value::Okay);
    assert_eq!(ok(&mut app, &["ACL", "WHOAMI"]), bulk("app"));
    assert_eq!(ok(&mut app, &["SET", "cache:1", "v"]), Value::Okay);
    assert_eq!(
        err(&mut app, &["GET", "other"]),
        "NOPERM No permissions to access a key"
    );
    assert_eq!(
        err(&mut app, &["HSET", "cache:h", "f", "v"]),
        "NOPERM User app has no permissions to run the 'hset' command"
    );
    assert_eq!(
        err(&mut app, &["PUBLISH", "sports", "m"]),
        "NOPERM No permissions to access a channel"
    );
    assert_eq!(ok(&mut app, &["PUBLISH", "news:1", "m"]), common::int(0));
    // A refused command inside MULTI aborts the transaction, as any refused command does.
    assert_eq!(ok(&mut app, &["MULTI"]), Value::Okay);
    assert!(err(&mut app, &["DEL", "cache:1"]).starts_with("NOPERM"));
    assert!(err(&mut app, &["EXEC"]).starts_with("EXECABORT"));
    // The log, newest first; the same refusal again counts in its entry.
    assert!(err(&mut app, &["GET", "other"]).starts_with("NOPERM"));
    let Value::Array(log) = ok(&mut admin, &["ACL", "LOG"]) else {
        panic!("ACL LOG")
    };
    let field = |entry: &Value, name: &str| -> Value {
        let pairs: Vec<(Value, Value)> = match entry {
            Value::Map(m) => m.clone(),
            Value::Array(a) => a.chunks(2).map(|p| (p[0].clone(), p[1].clone())).collect(),
            other => panic!("{other:?}"),
        };
        pairs
            .into_iter()
            .find(|(k, _)| *k == bulk(name))
            .map(|(_, v)| v)
            .unwrap_or(Value::Nil)
    };
    let summary: Vec<(Value, Value, Value)> = log
        .iter()
        .map(|e| (field(e, "reason"), field(e, "object"), field(e, "count")))
        .collect();
    assert_eq!(
        summary,
        [
            (bulk("command"), bulk("del"), common::int(1)),
            (bulk("channel"), bulk("sports"), common::int(1)),
            (bulk("command"), bulk("hset"), common::int(1)),
            (bulk("key"), bulk("other"), common::int(2)),
            (bulk("auth"), bulk("AUTH"), common::int(1)),
        ]
    );
    assert_eq!(field(&log[0], "username"), bulk("app"));
    assert_eq!(ok(&mut admin, &["ACL", "LOG", "RESET"]), Value::Okay);
    assert_eq!(ok(&mut admin, &["ACL", "LOG"]), Value::Array(vec![]));
    // Changed rules reach a connection already logged in.
    set(&mut admin, "app +hset");
    assert_eq!(ok(&mut app, &["HSET", "cache:h", "f", "v"]), common::int(1));
    assert_eq!(
        ok(&mut admin, &["ACL", "DRYRUN", "app", "GET", "x"]),
        bulk("This user has no permissions to access the 'x' key")
    );
    // A subcommand may be allowed alone.
    set(&mut admin, "app +client|info");
    assert!(err(&mut app, &["CLIENT", "LIST"]).contains("'client|list'"));
    let info = ok(&mut app, &["CLIENT", "INFO"]);
    let Value::BulkString(info) = info else {
        panic!("{info:?}")
    };
    assert!(String::from_utf8_lossy(&info).contains(" user=app "));
    // A user turned off cannot log in; removing it closes its connections.
    set(&mut admin, "app off");
    let mut late = s.client();
    assert!(err(&mut late, &["AUTH", "app", "secret"]).starts_with("WRONGPASS"));
    assert_eq!(ok(&mut admin, &["ACL", "DELUSER", "app"]), common::int(1));
    assert!(redis::cmd("PING").query::<Value>(&mut app).is_err());
    assert_eq!(texts(ok(&mut admin, &["ACL", "USERS"])), ["default"]);
}

#[test]
fn the_default_user_can_be_restricted_and_turned_off() {
    let s = TestServer::start();
    let mut admin = s.client();
    ok(
        &mut admin,
        &["ACL", "SETUSER", "root", "on", ">r", "+@all", "~*", "&*"],
    );
    ok(&mut admin, &["AUTH", "root", "r"]);
    ok(&mut admin, &["ACL", "SETUSER", "default", "-@all", "+ping"]);
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["PING"]), Value::SimpleString("PONG".into()));
    assert!(err(&mut c, &["GET", "k"]).starts_with("NOPERM User default"));
    ok(&mut admin, &["ACL", "SETUSER", "default", "off"]);
    let mut d = s.client();
    assert!(err(&mut d, &["PING"]).starts_with("NOAUTH"));
    assert_eq!(ok(&mut d, &["AUTH", "root", "r"]), Value::Okay);
    assert_eq!(ok(&mut d, &["GET", "k"]), Value::Nil);
}

/// A script runs its commands as the user that called it (Redis 7.0.15's texts).
#[test]
fn a_script_calls_commands_as_its_user() {
    let s = TestServer::start();
    let mut admin = s.client();
    ok(
        &mut admin,
        &[
            "ACL", "SETUSER", "s", "on", "nopass", "+eval", "+get", "~a*",
        ],
    );
    let mut c = s.client();
    ok(&mut c, &["AUTH", "s", "x"]);
    let e = err(&mut c, &["EVAL", "return redis.call('set','a1','v')", "0"]);
    assert!(
        e.starts_with(
            "ERR The user executing the script can't run this command or subcommand script: "
        ),
        "{e}"
    );
    let e = err(&mut c, &["EVAL", "return redis.call('get','b1')", "0"]);
    assert!(
        e.starts_with("ERR The user executing the script can't access at least one of the keys mentioned in the command arguments script: "),
        "{e}"
    );
    assert_eq!(
        ok(&mut c, &["EVAL", "return redis.call('get','a1')", "0"]),
        Value::Nil
    );
    let Value::Array(log) = ok(&mut admin, &["ACL", "LOG", "1"]) else {
        panic!("ACL LOG")
    };
    let text = format!("{:?}", log[0]);
    assert!(text.contains("lua") && text.contains("b1"), "{text}");
    // The default user's scripts are not checked (and cost nothing for it).
    assert_eq!(
        ok(
            &mut admin,
            &["EVAL", "return redis.call('set','b1','v')", "0"]
        ),
        Value::Okay
    );
}

/// Rules changed between MULTI and EXEC: the commands now refused answer NOPERM in their
/// place, the others run (redis-server 7.0.15's text).
#[test]
fn exec_checks_each_queued_command_again() {
    let s = TestServer::start();
    let mut admin = s.client();
    ok(
        &mut admin,
        &[
            "ACL", "SETUSER", "ex", "on", "nopass", "+get", "+set", "+multi", "+exec", "allkeys",
        ],
    );
    let mut u = s.raw();
    u.expect(&[b"AUTH", b"ex", b"x"], b"+OK\r\n");
    u.expect(&[b"MULTI"], b"+OK\r\n");
    u.expect(&[b"SET", b"a1", b"v"], b"+QUEUED\r\n");
    u.expect(&[b"GET", b"a1"], b"+QUEUED\r\n");
    ok(&mut admin, &["ACL", "SETUSER", "ex", "-get"]);
    u.expect(
        &[b"EXEC"],
        b"*2\r\n+OK\r\n-NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: no permission to execute the command or subcommand\r\n",
    );
    assert_eq!(ok(&mut admin, &["GET", "a1"]), bulk("v"));
}

/// A user's rules may hold passwords: the slow log keeps ACL SETUSER's arguments hidden, as
/// Redis does.
#[test]
fn the_slow_log_hides_setuser_rules() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["CONFIG", "SET", "slowlog-log-slower-than", "0"]);
    ok(
        &mut c,
        &["ACL", "SETUSER", "hidden", "on", ">secret", "+get"],
    );
    let log = format!("{:?}", ok(&mut c, &["SLOWLOG", "GET", "5"]));
    assert!(log.contains("(redacted)"), "{log}");
    assert!(!log.contains("secret"), "{log}");
}

#[test]
fn the_acl_file_is_read_at_start_and_by_load_and_written_by_save() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("users.acl");
    std::fs::write(
        &path,
        "user default on nopass ~* &* +@all\n\nuser app on >pw ~app:* +get (+set ~w:*)\n",
    )
    .unwrap();
    let file = path.clone();
    let s = TestServer::with(move |c| c.aclfile = Some(file));
    let mut admin = s.client();
    assert_eq!(texts(ok(&mut admin, &["ACL", "USERS"])), ["app", "default"]);
    assert_eq!(
        texts(ok(&mut admin, &["CONFIG", "GET", "aclfile"])),
        ["aclfile", path.to_str().unwrap()]
    );
    assert_eq!(
        err(&mut admin, &["CONFIG", "SET", "aclfile", "/tmp/x"]),
        "ERR CONFIG SET failed (possibly related to argument 'aclfile') - can't set immutable config"
    );
    let mut app = s.client();
    ok(&mut app, &["AUTH", "app", "pw"]);
    ok(&mut app, &["SET", "w:1", "v"]);
    assert!(err(&mut app, &["SET", "app:1", "v"]).starts_with("NOPERM"));

    // SAVE writes what ACL LIST shows, a line per user.
    ok(
        &mut admin,
        &["ACL", "SETUSER", "ops", "on", "nopass", "+info"],
    );
    assert_eq!(ok(&mut admin, &["ACL", "SAVE"]), Value::Okay);
    let listed = texts(ok(&mut admin, &["ACL", "LIST"]));
    let saved = std::fs::read_to_string(&path).unwrap();
    assert_eq!(saved, listed.join("\n") + "\n");

    // A file with errors: every one reported, nothing changes.
    std::fs::write(&path, "user ops on +nosuch\nusr x\nuser y on\nuser y off\n").unwrap();
    assert_eq!(
        err(&mut admin, &["ACL", "LOAD"]),
        format!(
            "ERR {p}:1: Error in applying operation '+nosuch': Unknown command or category name in ACL. \
             {p}:2 should start with user keyword followed by the username. \
             WARNING: Duplicate user 'y' found on line 4. \
             WARNING: ACL errors detected, no change to the previously active ACL rules was performed",
            p = path.display()
        )
    );
    assert_eq!(
        texts(ok(&mut admin, &["ACL", "USERS"])),
        ["app", "default", "ops"]
    );
    ok(&mut app, &["SET", "w:2", "v"]);

    // A good file replaces every user; the replaced users' connections close, default's
    // stay with its new rules, and a file without `default` gives it a new server's.
    std::fs::write(&path, "user ops on >x +@all ~*\n").unwrap();
    assert_eq!(ok(&mut admin, &["ACL", "LOAD"]), Value::Okay);
    assert_eq!(texts(ok(&mut admin, &["ACL", "USERS"])), ["default", "ops"]);
    assert!(redis::cmd("PING").query::<Value>(&mut app).is_err());
    assert_eq!(ok(&mut admin, &["PING"]), common::status("PONG"));
    std::fs::write(&path, "user default on nopass -@all +ping +acl\n").unwrap();
    assert_eq!(ok(&mut admin, &["ACL", "LOAD"]), Value::Okay);
    assert!(err(&mut admin, &["GET", "k"]).starts_with("NOPERM"));
}

#[test]
fn a_server_whose_acl_file_is_bad_does_not_start() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.acl");
    let Err(e) = bloomkv_server::Server::start(bloomkv_server::Config {
        dir: dir.path().join("db"),
        port: 0,
        aclfile: Some(missing.clone()),
        ..bloomkv_server::Config::default()
    }) else {
        panic!("started without its ACL file")
    };
    assert_eq!(
        e.to_string(),
        format!(
            "ACL errors: Error loading ACLs, opening file '{}': No such file or directory",
            missing.display()
        )
    );
    let bad = dir.path().join("bad.acl");
    std::fs::write(&bad, "user a on +nosuch\n").unwrap();
    let Err(e) = bloomkv_server::Server::start(bloomkv_server::Config {
        dir: dir.path().join("db"),
        port: 0,
        aclfile: Some(bad),
        ..bloomkv_server::Config::default()
    }) else {
        panic!("started with a bad ACL file")
    };
    assert!(
        e.to_string()
            .contains("Unknown command or category name in ACL"),
        "{e}"
    );
    // Nothing was created on disk.
    assert!(!dir.path().join("db").exists());
}

/// Each key needs what the command does to it (Redis 7's key specs), not what the command
/// is: the decisions below are redis-server 7.0.15's for the same user and requests.
#[test]
fn each_key_needs_the_access_the_command_uses_it_with() {
    let s = TestServer::start();
    let mut admin = s.client();
    ok(
        &mut admin,
        &[
            "ACL", "SETUSER", "u", "on", ">pw", "%R~r*", "%W~w*", "~x*", "+@all",
        ],
    );
    ok(
        &mut admin,
        &["XGROUP", "CREATE", "r4", "g", "$", "MKSTREAM"],
    );
    let mut u = s.client();
    ok(&mut u, &["AUTH", "u", "pw"]);
    let table: &[(&str, bool)] = &[
        ("set w1 v", true),
        ("set w1 v get", false),
        ("set r1 v", false),
        ("get r1", true),
        ("get w1", false),
        ("incr w1", false),
        ("lpush w2 a", true),
        ("exists w1", true),
        ("exists r1", true),
        ("type w1", true),
        ("strlen w1", true),
        ("object encoding w1", true),
        ("touch x", true),
        ("sunionstore w3 r2 r3", true),
        ("sunionstore r3 w2", false),
        ("sinterstore w3 r2 x", true),
        ("zunionstore w3 2 r1 r2", true),
        ("zunionstore w3 2 r1 w2", false),
        ("copy r1 w9", true),
        ("copy w1 w8", false),
        ("rename w1 w7", false),
        ("lmove w2 w5 left right", false),
        ("bitfield r6 get u8 0", true),
        ("bitfield w6 get u8 0", false),
        ("bitfield w6 set u8 0 1", false),
        ("getset w1 x", false),
        ("del r1", false),
        ("del w1", true),
        ("xreadgroup group g c streams r4 >", true),
        ("sort r5 store w4", true),
        ("sort w5", false),
        ("pfmerge w1 r1", false),
        ("bitop and w1 r1 r2", true),
        ("eval return 1 1 w1", false),
        ("xread streams r4 0", true),
        ("xread streams w4 0", false),
        ("pfcount r7", true),
        ("pfcount w7", false),
    ];
    for (line, allowed) in table {
        let mut words: Vec<&str> = line.split(' ').collect();
        if words[0] == "eval" {
            words = vec!["eval", "return 1", "1", words[4]];
        }
        let reply = common::q(&mut u, &words);
        let refused =
            matches!(&reply, Err(e) if e.to_string().to_ascii_lowercase().contains("noperm"));
        assert_eq!(!refused, *allowed, "{line}: {reply:?}");
    }
}
