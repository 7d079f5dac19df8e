//! SELECT and the numbered databases: a client that connects to `redis://host:port/N` sees
//! only database N's keys, of every type; FLUSHDB, DBSIZE, KEYS, SCAN, INFO keyspace, WATCH,
//! blocking pops, expiry and scripts all keep to one database; data survives restarts.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common;

use std::time::{Duration, Instant};

use common::{TestServer, bulk, err, int, ok};
use redis::Value;

fn strings(v: Value) -> Vec<String> {
    let mut out: Vec<String> = redis::from_redis_value(v).unwrap();
    out.sort();
    out
}

/// Writes one key of every type, each value naming `tag`.
fn fill(c: &mut redis::Connection, tag: &str) {
    ok(c, &["SET", "str", tag]);
    ok(c, &["SETBIT", "bits", "70000", "1"]);
    ok(c, &["SADD", "set", tag, "common"]);
    ok(c, &["HSET", "hash", "f", tag]);
    ok(c, &["RPUSH", "list", tag]);
    ok(c, &["ZADD", "zset", "1", tag]);
    ok(c, &["XADD", "stream", "1-1", "f", tag]);
    ok(c, &["BF.ADD", "bloom", tag]);
    ok(c, &["PFADD", "hll", tag]);
}

/// Checks that every key `fill` wrote holds `tag`'s values and nothing of `other`'s.
fn check(c: &mut redis::Connection, tag: &str, other: &str) {
    assert_eq!(ok(c, &["GET", "str"]), bulk(tag));
    assert_eq!(ok(c, &["GETBIT", "bits", "70000"]), int(1));
    assert_eq!(strings(ok(c, &["SMEMBERS", "set"])), {
        let mut v = vec![tag.to_string(), "common".to_string()];
        v.sort();
        v
    });
    assert_eq!(ok(c, &["HGET", "hash", "f"]), bulk(tag));
    assert_eq!(strings(ok(c, &["LRANGE", "list", "0", "-1"])), vec![tag]);
    assert_eq!(strings(ok(c, &["ZRANGE", "zset", "0", "-1"])), vec![tag]);
    assert_eq!(ok(c, &["XLEN", "stream"]), int(1));
    assert_eq!(ok(c, &["BF.EXISTS", "bloom", tag]), int(1));
    assert_eq!(ok(c, &["BF.EXISTS", "bloom", other]), int(0));
    assert_eq!(ok(c, &["PFCOUNT", "hll"]), int(1));
    assert_eq!(ok(c, &["SISMEMBER", "set", other]), int(0));
    assert_eq!(ok(c, &["DBSIZE"]), int(9));
}

#[test]
fn a_url_with_a_database_connects_and_its_keys_stay_apart() {
    let mut s = TestServer::start();
    let (mut zero, mut one) = (s.client(), s.client_db(1));
    fill(&mut zero, "zero");
    fill(&mut one, "one");
    check(&mut zero, "zero", "one");
    check(&mut one, "one", "zero");
    let mut five = s.client_db(5);
    assert_eq!(ok(&mut five, &["DBSIZE"]), int(0));
    assert_eq!(ok(&mut five, &["KEYS", "*"]), Value::Array(vec![]));
    assert_eq!(ok(&mut five, &["EXISTS", "str", "set"]), int(0));
    assert_eq!(strings(ok(&mut one, &["KEYS", "*"])).len(), 9);
    assert_eq!(ok(&mut five, &["RANDOMKEY"]), Value::Nil);
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..200 {
        let k: String = redis::from_redis_value(ok(&mut one, &["RANDOMKEY"])).unwrap();
        seen.insert(k);
    }
    assert_eq!(seen.len(), 9, "every key of database 1 drawn: {seen:?}");
    ok(&mut five, &["SET", "only", "x", "PX", "1"]);
    std::thread::sleep(std::time::Duration::from_millis(5));
    ok(&mut five, &["SET", "live", "y"]);
    for _ in 0..20 {
        assert_eq!(
            ok(&mut five, &["RANDOMKEY"]),
            bulk("live"),
            "an expired key drawn"
        );
    }
    ok(&mut five, &["FLUSHDB"]);
    let scan: (String, Vec<String>) =
        redis::from_redis_value(ok(&mut one, &["SCAN", "0", "COUNT", "1000"])).unwrap();
    assert_eq!(scan.1.len(), 9);
    let info: String = redis::from_redis_value(ok(&mut zero, &["INFO", "keyspace"])).unwrap();
    assert!(
        info.contains("db0:keys=9,") && info.contains("db1:keys=9,"),
        "{info}"
    );
    assert!(!info.contains("db5:"), "{info}");

    // A collection overwritten in one database leaves the other's alone.
    ok(&mut one, &["DEL", "set", "list"]);
    assert_eq!(ok(&mut zero, &["SCARD", "set"]), int(2));
    assert_eq!(ok(&mut zero, &["LLEN", "list"]), int(1));
    ok(&mut one, &["SADD", "set", "again"]);
    assert_eq!(strings(ok(&mut one, &["SMEMBERS", "set"])), vec!["again"]);

    // Every database, and the counts, come back after a restart.
    s.restart();
    let (mut zero, mut one) = (s.client(), s.client_db(1));
    check(&mut zero, "zero", "one");
    assert_eq!(strings(ok(&mut one, &["SMEMBERS", "set"])), vec!["again"]);
    assert_eq!(ok(&mut one, &["DBSIZE"]), int(8));
    assert_eq!(ok(&mut one, &["GET", "str"]), bulk("one"));
}

#[test]
fn select_checks_its_index_as_redis_does() {
    let s = TestServer::with(|c| c.databases = 4);
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["SELECT", "3"]), Value::Okay);
    assert_eq!(
        err(&mut c, &["SELECT", "4"]),
        "ERR DB index is out of range"
    );
    assert_eq!(
        err(&mut c, &["SELECT", "-1"]),
        "ERR DB index is out of range"
    );
    assert_eq!(
        err(&mut c, &["SELECT", "x"]),
        "ERR value is not an integer or out of range"
    );
    // Redis's strict integers: no sign, no spaces, no leading zeros.
    for bad in ["+1", " 1", "01"] {
        assert_eq!(
            err(&mut c, &["SELECT", bad]),
            "ERR value is not an integer or out of range",
            "{bad:?}"
        );
    }
    // A failed SELECT keeps the database selected before.
    ok(&mut c, &["SET", "k", "3"]);
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(1));
    let list: String = redis::from_redis_value(ok(&mut c, &["CLIENT", "INFO"])).unwrap();
    assert!(list.contains(" db=3 "), "{list}");
    let cfg = ok(&mut c, &["CONFIG", "GET", "databases"]);
    assert_eq!(cfg, Value::Array(vec![bulk("databases"), bulk("4")]));
    // The parameters clients ask for answer with this server's values, not an empty list.
    let cfg = ok(
        &mut c,
        &["CONFIG", "GET", "maxmemory*", "notify-keyspace-events"],
    );
    let Value::Array(items) = cfg else {
        panic!("{cfg:?}")
    };
    assert_eq!(items.len(), 6, "{items:?}");
    assert!(items.contains(&bulk("noeviction")), "{items:?}");
    // RESET goes back to database 0.
    ok(&mut c, &["RESET"]);
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(0));
}

#[test]
fn flushdb_empties_one_database_and_flushall_every_one() {
    let s = TestServer::start();
    let (mut zero, mut two, mut three) = (s.client(), s.client_db(2), s.client_db(3));
    fill(&mut zero, "zero");
    fill(&mut two, "two");
    ok(&mut three, &["SET", "k", "v", "EX", "100"]);
    assert_eq!(ok(&mut two, &["FLUSHDB"]), Value::Okay);
    assert_eq!(ok(&mut two, &["DBSIZE"]), int(0));
    assert_eq!(ok(&mut two, &["SMEMBERS", "set"]), Value::Array(vec![]));
    check(&mut zero, "zero", "two");
    assert_eq!(ok(&mut three, &["GET", "k"]), bulk("v"));
    // Written again after the flush: only the new members.
    ok(&mut two, &["SADD", "set", "new"]);
    assert_eq!(strings(ok(&mut two, &["SMEMBERS", "set"])), vec!["new"]);
    let info: String = redis::from_redis_value(ok(&mut zero, &["INFO", "keyspace"])).unwrap();
    assert!(info.contains("db3:keys=1,expires=1,"), "{info}");
    assert!(info.contains("db2:keys=1,expires=0,"), "{info}");
    assert_eq!(ok(&mut three, &["FLUSHALL"]), Value::Okay);
    for c in [&mut zero, &mut two, &mut three] {
        assert_eq!(ok(c, &["DBSIZE"]), int(0));
        assert_eq!(ok(c, &["KEYS", "*"]), Value::Array(vec![]));
    }
    let info: String = redis::from_redis_value(ok(&mut zero, &["INFO", "keyspace"])).unwrap();
    assert!(!info.contains("keys="), "{info}");
}

#[test]
fn keys_expire_in_their_own_database() {
    let s = TestServer::start();
    let (mut zero, mut seven) = (s.client(), s.client_db(7));
    ok(&mut zero, &["SET", "k", "stays"]);
    ok(&mut seven, &["SET", "k", "goes", "PX", "50"]);
    ok(&mut seven, &["SADD", "s", "a"]);
    ok(&mut seven, &["PEXPIRE", "s", "50"]);
    assert_eq!(ok(&mut seven, &["DBSIZE"]), int(2));
    // The reclaimer removes them without a command touching them (DBSIZE counts expired
    // keys until then, as Redis does).
    let deadline = Instant::now() + Duration::from_secs(30);
    while ok(&mut seven, &["DBSIZE"]) != int(0) {
        assert!(
            Instant::now() < deadline,
            "database 7's keys never reclaimed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(ok(&mut zero, &["GET", "k"]), bulk("stays"));
    assert_eq!(ok(&mut zero, &["DBSIZE"]), int(1));
}

#[test]
fn select_inside_multi_moves_the_later_commands_and_the_connection() {
    let s = TestServer::start();
    let mut c = s.client();
    ok(&mut c, &["MULTI"]);
    ok(&mut c, &["SET", "a", "0"]);
    ok(&mut c, &["SELECT", "4"]);
    ok(&mut c, &["SET", "a", "4"]);
    let r = ok(&mut c, &["EXEC"]);
    assert_eq!(r, Value::Array(vec![Value::Okay, Value::Okay, Value::Okay]));
    assert_eq!(ok(&mut c, &["GET", "a"]), bulk("4"), "still in database 4");
    assert_eq!(ok(&mut s.client(), &["GET", "a"]), bulk("0"));
}

#[test]
fn watch_sees_writes_to_its_own_database_only() {
    let s = TestServer::start();
    let (mut a, mut zero, mut one) = (s.client_db(1), s.client(), s.client_db(1));
    ok(&mut a, &["WATCH", "k"]);
    ok(&mut zero, &["SET", "k", "database 0"]);
    ok(&mut a, &["MULTI"]);
    ok(&mut a, &["SET", "k", "mine"]);
    assert_eq!(ok(&mut a, &["EXEC"]), Value::Array(vec![Value::Okay]));
    ok(&mut a, &["WATCH", "k"]);
    ok(&mut one, &["SET", "k", "database 1"]);
    ok(&mut a, &["MULTI"]);
    ok(&mut a, &["SET", "k", "mine again"]);
    assert_eq!(ok(&mut a, &["EXEC"]), Value::Nil);
    // FLUSHDB of another database does not touch it either.
    ok(&mut a, &["WATCH", "k"]);
    ok(&mut zero, &["FLUSHDB"]);
    ok(&mut a, &["MULTI"]);
    ok(&mut a, &["GET", "k"]);
    assert_eq!(
        ok(&mut a, &["EXEC"]),
        Value::Array(vec![bulk("database 1")])
    );
}

#[test]
fn a_blocked_pop_wakes_for_a_push_to_its_own_database() {
    let s = TestServer::start();
    let mut waiter = s.client_db(6);
    let mut admin = s.client();
    let (mut zero, mut six) = (s.client(), s.client_db(6));
    let t = std::thread::spawn(move || ok(&mut waiter, &["BLPOP", "q", "0"]));
    common::wait_blocked(&mut admin, 1);
    ok(&mut zero, &["RPUSH", "q", "zero"]);
    assert_eq!(common::blocked(&mut admin), 1, "woken by database 0's push");
    ok(&mut six, &["RPUSH", "q", "six"]);
    assert_eq!(
        t.join().unwrap(),
        Value::Array(vec![bulk("q"), bulk("six")])
    );
    assert_eq!(
        ok(&mut zero, &["LRANGE", "q", "0", "-1"]),
        Value::Array(vec![bulk("zero")])
    );
    assert_eq!(ok(&mut six, &["EXISTS", "q"]), int(0));
}

#[test]
fn a_select_inside_a_script_lasts_until_it_ends() {
    let s = TestServer::start();
    let mut c = s.client_db(3);
    let r = ok(
        &mut c,
        &[
            "EVAL",
            "redis.call('SET', 'k', 'three'); redis.call('SELECT', 4); \
             redis.call('SET', 'k', 'four'); return redis.call('GET', 'k')",
            "0",
        ],
    );
    assert_eq!(r, bulk("four"));
    assert_eq!(ok(&mut c, &["GET", "k"]), bulk("three"));
    assert_eq!(ok(&mut s.client_db(4), &["GET", "k"]), bulk("four"));
    let e = err(&mut c, &["EVAL", "return redis.call('SELECT', 99)", "0"]);
    assert!(e.contains("DB index is out of range"), "{e}");
}

/// SWAPDB: two database indexes exchange their data for every client, every type, TTLs
/// included; it survives restarts; writes after it land where the index now points;
/// WATCHed keys of either database fail their EXEC; inside MULTI the commands after it see
/// the swap; errors as Redis words them.
#[test]
fn swapdb_exchanges_two_databases_for_every_client() {
    let mut s = TestServer::start();
    let (mut zero, mut one) = (s.client(), s.client_db(1));
    fill(&mut zero, "zero");
    fill(&mut one, "one");
    ok(&mut one, &["EXPIRE", "hash", "1000"]);
    let mut watcher = s.client();
    ok(&mut watcher, &["WATCH", "str"]);
    assert_eq!(ok(&mut zero, &["SWAPDB", "0", "1"]), Value::Okay);
    check(&mut zero, "one", "zero");
    check(&mut one, "zero", "one");
    let ttl: i64 = redis::from_redis_value(ok(&mut zero, &["TTL", "hash"])).unwrap();
    assert!((990..=1000).contains(&ttl), "{ttl}");
    let info: String = redis::from_redis_value(ok(&mut zero, &["INFO", "keyspace"])).unwrap();
    assert!(
        info.contains("db0:keys=9,expires=1,") && info.contains("db1:keys=9,expires=0,"),
        "{info}"
    );
    // A WATCH on a key of either database fails its EXEC.
    let mut p = redis::pipe();
    p.atomic().cmd("SET").arg("str").arg("w");
    let r: Value = p.query(&mut watcher).unwrap();
    assert_eq!(
        r,
        Value::Nil,
        "EXEC after SWAPDB of the watched key's database"
    );
    // Writes, MOVE and COPY after the swap address what the indexes name now.
    ok(&mut zero, &["SET", "after", "0"]);
    assert_eq!(ok(&mut zero, &["MOVE", "after", "1"]), int(1));
    assert_eq!(ok(&mut one, &["GET", "after"]), bulk("0"));
    assert_eq!(
        ok(&mut one, &["COPY", "after", "copied", "DB", "0"]),
        int(1)
    );
    assert_eq!(ok(&mut zero, &["GET", "copied"]), bulk("0"));
    assert_eq!(ok(&mut zero, &["RPUSH", "list", "more"]), int(2));

    // Restarted, the swap holds.
    drop((zero, one, watcher));
    s.restart();
    let (mut zero, mut one) = (s.client(), s.client_db(1));
    assert_eq!(ok(&mut zero, &["GET", "str"]), bulk("one"));
    assert_eq!(ok(&mut one, &["GET", "after"]), bulk("0"));
    assert_eq!(
        ok(&mut zero, &["LRANGE", "list", "0", "-1"]),
        Value::Array(vec![bulk("one"), bulk("more")])
    );
    // Inside MULTI: the commands after SWAPDB see the swap.
    let mut p = redis::pipe();
    p.atomic()
        .cmd("SWAPDB")
        .arg(0)
        .arg(1)
        .cmd("GET")
        .arg("str")
        .cmd("SWAPDB")
        .arg(1)
        .arg(0);
    let r: Value = p.query(&mut zero).unwrap();
    assert_eq!(
        r,
        Value::Array(vec![Value::Okay, bulk("zero"), Value::Okay])
    );
    assert_eq!(ok(&mut zero, &["GET", "str"]), bulk("one"));
    // A key with a time to live expires where it now is.
    ok(&mut one, &["SET", "brief", "x", "PX", "50"]);
    ok(&mut zero, &["SWAPDB", "1", "0"]);
    assert_eq!(ok(&mut zero, &["GET", "str"]), bulk("zero"));
    let t = Instant::now();
    while ok(&mut zero, &["DBSIZE"]) != int(10) {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the expired key stays counted"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(ok(&mut zero, &["EXISTS", "brief"]), int(0));
    // Errors as Redis 7 words them; the same index twice changes nothing.
    assert_eq!(
        err(&mut zero, &["SWAPDB", "x", "1"]),
        "ERR invalid first DB index"
    );
    assert_eq!(
        err(&mut zero, &["SWAPDB", "0", "y"]),
        "ERR invalid second DB index"
    );
    assert_eq!(
        err(&mut zero, &["SWAPDB", "0", "16"]),
        "ERR DB index is out of range"
    );
    assert!(err(&mut zero, &["SWAPDB", "0"]).contains("wrong number of arguments"));
    assert_eq!(ok(&mut zero, &["SWAPDB", "3", "3"]), Value::Okay);
}

/// SWAPDB moves blocked clients with their database, as Redis 7 does: a client blocked on
/// `q` in database 1 waits on database 1's `q` after the swap too, and is served at once
/// when the swap brings a `q` with elements; also when the SWAPDB runs inside MULTI.
#[test]
fn swapdb_serves_a_client_blocked_on_a_key_it_brings() {
    let s = TestServer::start();
    let mut zero = s.client();
    for in_multi in [false, true] {
        let mut waiter = s.client_db(1);
        let t = std::thread::spawn(move || ok(&mut waiter, &["BLPOP", "q", "0"]));
        common::wait_blocked(&mut zero, 1);
        // A push to database 0 is not database 1's: the client stays blocked.
        assert_eq!(ok(&mut zero, &["RPUSH", "q", "a", "b"]), int(2));
        assert_eq!(common::blocked(&mut zero), 1);
        if in_multi {
            ok(&mut zero, &["MULTI"]);
            ok(&mut zero, &["SWAPDB", "0", "1"]);
            assert_eq!(ok(&mut zero, &["EXEC"]), Value::Array(vec![Value::Okay]));
        } else {
            assert_eq!(ok(&mut zero, &["SWAPDB", "0", "1"]), Value::Okay);
        }
        assert_eq!(t.join().unwrap(), Value::Array(vec![bulk("q"), bulk("a")]));
        common::wait_blocked(&mut zero, 0);
        // The list is database 1's now, less what the client popped; database 0 has none.
        assert_eq!(
            ok(&mut s.client_db(1), &["LRANGE", "q", "0", "-1"]),
            Value::Array(vec![bulk("b")])
        );
        assert_eq!(ok(&mut zero, &["EXISTS", "q"]), int(0));
        ok(&mut s.client_db(1), &["DEL", "q"]);
    }
}
