//! Keyspace notifications: `notify-keyspace-events` by CONFIG SET / GET and at start-up, and
//! the events of every command family, compared line by line with what redis-server 7.0.15
//! sent for the same commands (the fixtures in `notify/`: the commands, then, after a `---`
//! line, each message a `PSUBSCRIBE __key*__:*` client received, as `channel | payload`).

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common;

use std::time::Duration;

use common::{TestServer, bulk, err, ok, q, words};
use redis::Value;

/// The channel the tests publish last: every event published before it arrived before it.
const END: &str = "notify-test-end";

/// A subscriber to every keyspace channel (and to [`END`]): a thread holds the subscribed
/// connection (the crate unsubscribes when its `PubSub` is dropped) and forwards each
/// message as `channel | payload`.
struct Subscriber {
    rx: std::sync::mpsc::Receiver<String>,
}

impl Subscriber {
    fn new(s: &TestServer) -> Subscriber {
        let mut con = s.client();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut ps = con.as_pubsub();
            ps.psubscribe("__key*__:*").unwrap();
            ps.subscribe(END).unwrap();
            // Subscribed: the test may run its commands.
            tx.send(String::new()).unwrap();
            // Until the server goes (the test ended).
            while let Ok(m) = ps.get_message() {
                let payload: Vec<u8> = m.get_payload().unwrap();
                let line = if m.get_channel_name() == END {
                    END.to_string()
                } else {
                    assert_eq!(m.get_pattern::<String>().unwrap(), "__key*__:*");
                    format!(
                        "{} | {}",
                        m.get_channel_name(),
                        String::from_utf8_lossy(&payload)
                    )
                };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        rx.recv_timeout(Duration::from_secs(10)).unwrap();
        Subscriber { rx }
    }

    /// The next message, waiting at most 10 s.
    fn next(&self) -> String {
        self.rx.recv_timeout(Duration::from_secs(10)).unwrap()
    }

    /// The keyspace messages received until [`END`]'s.
    fn until_end(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            let m = self.next();
            if m == END {
                return out;
            }
            out.push(m);
        }
    }
}

/// Runs `commands` on `con` (errors are replies like any other: a failed command sends
/// nothing), then publishes [`END`].
fn run(con: &mut redis::Connection, commands: &[&str]) {
    for line in commands {
        let w = words(line);
        let mut c = redis::cmd(std::str::from_utf8(&w[0]).unwrap());
        for a in &w[1..] {
            c.arg(a.as_slice());
        }
        let _: redis::RedisResult<Value> = c.query(con);
    }
    ok(con, &["PUBLISH", END, "."]);
}

/// The events of `commands` with `flags` set, on a fresh server.
fn events_of(flags: &str, commands: &[&str]) -> Vec<String> {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["CONFIG", "SET", "notify-keyspace-events", flags]);
    let mut sub = Subscriber::new(&s);
    run(&mut c, commands);
    sub.until_end()
}

/// Runs fixture `text` (recorded with `KEAn`) with `flags` and checks the events against it:
/// without `n`, the recorded `new` events are left out of what is expected.
fn check_fixture(name: &str, text: &str, flags: &str) {
    let (commands, recorded) = text.split_once("\n--- ").unwrap();
    let commands: Vec<&str> = commands.lines().filter(|l| !l.is_empty()).collect();
    let want: Vec<String> = recorded
        .lines()
        .skip(1)
        .filter(|l| flags.contains('n') || !l.ends_with("| new") && !l.contains(":new |"))
        .map(str::to_string)
        .collect();
    let got = events_of(flags, &commands);
    assert_eq!(got, want, "fixture {name} with {flags}");
}

macro_rules! fixture_test {
    ($name:ident, $file:literal, $flags:literal) => {
        #[test]
        fn $name() {
            check_fixture(
                $file,
                include_str!(concat!("notify/", $file, ".txt")),
                $flags,
            );
        }
    };
}

fixture_test!(generic_commands_as_redis, "generic", "KEA");
fixture_test!(string_commands_as_redis, "strings", "KEA");
fixture_test!(list_commands_as_redis, "lists", "KEA");
fixture_test!(set_commands_as_redis, "sets", "KEA");
fixture_test!(hash_commands_as_redis, "hashes", "KEA");
fixture_test!(zset_commands_as_redis, "zsets", "KEA");
fixture_test!(stream_commands_as_redis, "streams", "KEA");
fixture_test!(stream_group_commands_as_redis, "stream_groups", "KEAn");
fixture_test!(geo_hll_bitop_as_redis, "geo", "KEA");
fixture_test!(selected_databases_as_redis, "databases", "KEA");
fixture_test!(new_keys_as_redis, "new", "KEAn");
fixture_test!(overwrites_multi_and_scripts_as_redis, "overwrites", "KEAn");

#[test]
fn config_set_get_normalises_as_redis() {
    let s = TestServer::start();
    let mut c = s.client();
    let get = |c: &mut redis::Connection| match ok(c, &["CONFIG", "GET", "notify-keyspace-events"])
    {
        Value::Array(v) => v[1].clone(),
        Value::Map(v) => v[0].1.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(get(&mut c), bulk(""), "off by default");
    // What redis-server 7.0.15 answers CONFIG GET with after each CONFIG SET.
    for (set, shown) in [
        ("KEA", "AKE"),
        ("Kx", "xK"),
        ("gE", "gE"),
        ("A$", "A"),
        ("Aznm", "Am"),
        ("g$lshzxetd", "A"),
        ("KEAm", "AKEm"),
        ("En", "nE"),
        ("", ""),
    ] {
        ok(&mut c, &["CONFIG", "SET", "notify-keyspace-events", set]);
        assert_eq!(get(&mut c), bulk(shown), "after {set:?}");
    }
    ok(&mut c, &["CONFIG", "SET", "notify-keyspace-events", "KEl"]);
    for bad in ["Q", "KEq", "K E"] {
        assert_eq!(
            err(&mut c, &["CONFIG", "SET", "notify-keyspace-events", bad]),
            "ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
        );
    }
    assert_eq!(get(&mut c), bulk("lKE"), "a refused value changes nothing");
}

#[test]
fn start_up_flag_sets_the_classes() {
    let s = TestServer::with(|c| c.notify_keyspace_events = 0b11 | (1 << 4));
    let mut c = s.client();
    let v = ok(&mut c, &["CONFIG", "GET", "notify-keyspace-events"]);
    assert_eq!(
        v,
        Value::Array(vec![bulk("notify-keyspace-events"), bulk("lKE")])
    );
    let mut sub = Subscriber::new(&s);
    run(&mut c, &["rpush l a", "set s 1"]);
    assert_eq!(
        sub.until_end(),
        ["__keyspace@0__:l | rpush", "__keyevent@0__:rpush | l"]
    );
}

#[test]
fn nothing_is_published_when_off_or_without_a_channel_class() {
    let cmds = ["set a 1", "lpush l x", "del a", "hset h f v", "expire l 0"];
    for flags in ["", "A", "gl$h", "Km", "Ex"] {
        assert_eq!(events_of(flags, &cmds), Vec::<String>::new(), "{flags:?}");
    }
}

#[test]
fn only_the_enabled_classes_and_channels() {
    let cmds = ["set a 1", "lpush l x", "del a", "hset h f v"];
    assert_eq!(
        events_of("Kl", &cmds),
        ["__keyspace@0__:l | lpush"],
        "keyspace channel, lists only"
    );
    assert_eq!(
        events_of("Eg$", &cmds),
        ["__keyevent@0__:set | a", "__keyevent@0__:del | a"],
        "keyevent channel, generic and strings"
    );
}

#[test]
fn multi_exec_events_come_at_exec_in_order_and_failed_commands_send_none() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut watcher = s.client();
    ok(&mut c, &["CONFIG", "SET", "notify-keyspace-events", "E$lg"]);
    let mut sub = Subscriber::new(&s);
    ok(&mut c, &["SET", "str", "x"]);
    ok(&mut c, &["MULTI"]);
    ok(&mut c, &["SET", "a", "1"]);
    ok(&mut c, &["LPUSH", "str", "x"]); // WRONGTYPE at EXEC: nothing sent for it
    ok(&mut c, &["INCR", "str"]); // not an integer: nothing either
    ok(&mut c, &["RPUSH", "l", "1"]);
    ok(&mut c, &["DEL", "a"]);
    // Queued, not run: a publish from another client now comes before their events.
    ok(&mut watcher, &["PUBLISH", END, "."]);
    assert_eq!(sub.until_end(), ["__keyevent@0__:set | str"]);
    // The reply holds the two commands' errors (the crate reads it as an error).
    assert!(q(&mut c, &["EXEC"]).is_err());
    ok(&mut c, &["PUBLISH", END, "."]);
    assert_eq!(
        sub.until_end(),
        [
            "__keyevent@0__:set | a",
            "__keyevent@0__:rpush | l",
            "__keyevent@0__:del | a"
        ]
    );
    // A discarded transaction and one a WATCH broke send nothing.
    ok(&mut c, &["MULTI"]);
    ok(&mut c, &["SET", "b", "1"]);
    ok(&mut c, &["DISCARD"]);
    ok(&mut c, &["WATCH", "w"]);
    ok(&mut watcher, &["SET", "w", "1"]);
    ok(&mut c, &["MULTI"]);
    ok(&mut c, &["SET", "b", "1"]);
    assert_eq!(ok(&mut c, &["EXEC"]), Value::Nil);
    ok(&mut c, &["PUBLISH", END, "."]);
    assert_eq!(sub.until_end(), ["__keyevent@0__:set | w"]);
}

#[test]
fn a_script_failing_part_way_keeps_what_ran() {
    // Redis does not roll a script back: the commands before the error took effect, and
    // their events are sent (redis-server 7.0.15 sends `set a` here).
    let got = events_of(
        "E$l",
        &["eval \"redis.call('set','a','1'); redis.call('lpush','a','x')\" 0"],
    );
    assert_eq!(got, ["__keyevent@0__:set | a"]);
}

#[test]
fn restore_sends_restore_only() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["RPUSH", "src", "a", "b"]);
    ok(&mut c, &["HSET", "h", "f", "v"]);
    let list: Vec<u8> = redis::cmd("DUMP").arg("src").query(&mut c).unwrap();
    let hash: Vec<u8> = redis::cmd("DUMP").arg("h").query(&mut c).unwrap();
    ok(&mut c, &["CONFIG", "SET", "notify-keyspace-events", "KEAn"]);
    let mut sub = Subscriber::new(&s);
    let restore = |c: &mut redis::Connection, key: &str, p: &[u8], more: &[&str]| {
        let _: Value = redis::cmd("RESTORE")
            .arg(key)
            .arg(0)
            .arg(p)
            .arg(more)
            .query(c)
            .unwrap();
    };
    restore(&mut c, "l2", &list, &[]);
    restore(&mut c, "h", &hash, &["REPLACE"]);
    ok(&mut c, &["PUBLISH", END, "."]);
    // As redis-server 7.0.15: a replaced key is deleted and added anew, so `new` too.
    assert_eq!(
        sub.until_end(),
        [
            "__keyspace@0__:l2 | new",
            "__keyevent@0__:new | l2",
            "__keyspace@0__:l2 | restore",
            "__keyevent@0__:restore | l2",
            "__keyspace@0__:h | new",
            "__keyevent@0__:new | h",
            "__keyspace@0__:h | restore",
            "__keyevent@0__:restore | h",
        ]
    );
}

#[test]
fn expired_keys_are_told_by_the_reclaimer_and_by_writes() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["CONFIG", "SET", "notify-keyspace-events", "Exn$"]);
    let mut sub = Subscriber::new(&s);
    ok(&mut c, &["SET", "gone", "1", "PX", "30"]);
    // The reclaimer runs ten times a second: the key goes without anyone asking for it.
    let seen: Vec<String> = (0..3).map(|_| sub.next()).collect();
    assert_eq!(
        seen,
        [
            "__keyevent@0__:new | gone",
            "__keyevent@0__:set | gone",
            "__keyevent@0__:expired | gone"
        ]
    );
    // A write meeting a key expired before the reclaimer came: `expired`, then the key is
    // new again (as redis-server 7.0.15, whose lookup deletes it first). The reclaimer is
    // kept out by a time to live it cannot have reached: the write's own clock decides.
    ok(&mut c, &["SET", "k", "1", "PX", "1"]);
    std::thread::sleep(Duration::from_millis(5));
    let r = q(&mut c, &["SET", "k", "2"]);
    ok(&mut c, &["PUBLISH", END, "."]);
    assert!(r.is_ok());
    let got = sub.until_end();
    // Either the reclaimer or the SET removed it: `expired` once, before the SET's `new`.
    assert_eq!(
        got,
        [
            "__keyevent@0__:new | k",
            "__keyevent@0__:set | k",
            "__keyevent@0__:expired | k",
            "__keyevent@0__:new | k",
            "__keyevent@0__:set | k"
        ]
    );
}

#[test]
fn resp3_subscribers_get_push_frames_as_from_redis() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["CONFIG", "SET", "notify-keyspace-events", "KE$"]);
    let mut raw = s.raw();
    raw.cmd(&[b"HELLO", b"3"]);
    raw.read_until(b"modules\r\n*0\r\n");
    raw.cmd(&[b"SUBSCRIBE", b"__keyevent@0__:set"]);
    raw.read_n(b">3\r\n$9\r\nsubscribe\r\n$18\r\n__keyevent@0__:set\r\n:1\r\n".len());
    ok(&mut c, &["SET", "key", "v"]);
    // Bytes as redis-server 7.0.15 wrote them.
    let want = b">3\r\n$7\r\nmessage\r\n$18\r\n__keyevent@0__:set\r\n$3\r\nkey\r\n";
    assert_eq!(
        String::from_utf8_lossy(&raw.read_n(want.len())),
        String::from_utf8_lossy(want)
    );
}

#[test]
fn blocked_pops_served_by_a_push_tell_of_both() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["CONFIG", "SET", "notify-keyspace-events", "KEAn"]);
    let mut sub = Subscriber::new(&s);
    let port = s.port;
    let popper = std::thread::spawn(move || {
        let mut b = common::client_at(&format!("redis://127.0.0.1:{port}/"));
        ok(&mut b, &["BLPOP", "q", "0"])
    });
    common::wait_blocked(&mut c, 1);
    ok(&mut c, &["LPUSH", "q", "a"]);
    popper.join().unwrap();
    ok(&mut c, &["PUBLISH", END, "."]);
    // redis-server 7.0.15: the push, the served pop, and the key emptied by it.
    assert_eq!(
        sub.until_end(),
        [
            "__keyspace@0__:q | new",
            "__keyevent@0__:new | q",
            "__keyspace@0__:q | lpush",
            "__keyevent@0__:lpush | q",
            "__keyspace@0__:q | lpop",
            "__keyevent@0__:lpop | q",
            "__keyspace@0__:q | del",
            "__keyevent@0__:del | q",
        ]
    );
}
