//! Three server processes: every command family through every node, blocking pops, WATCH,
//! pub/sub and expiry across nodes, WAIT, ROLE/INFO/CLUSTER INFO, READONLY, a kill -9 of the
//! leader, and no quorum answered in bounded time.

use std::time::{Duration, Instant};

use crate::procs::ProcCluster;
use crate::resp::{Conn, Value, call_until};

fn conn(c: &ProcCluster, id: u64) -> Conn {
    Conn::connect(c.port(id), Duration::from_secs(10)).unwrap()
}

fn ok(v: Value) {
    assert_eq!(v, Value::Status("OK".into()));
}

fn bulk(s: &str) -> Value {
    Value::Bulk(Some(s.as_bytes().to_vec()))
}

#[test]
fn three_nodes_serve_every_command_from_every_node() {
    let mut c = ProcCluster::start(3, &["--request-timeout-ms", "2000"]);
    let leader = c.wait_leader();
    let follower = c.ids().into_iter().find(|&i| i != leader).unwrap();
    let other = c
        .ids()
        .into_iter()
        .find(|&i| i != leader && i != follower)
        .unwrap();
    let (mut l, mut f, mut o) = (conn(&c, leader), conn(&c, follower), conn(&c, other));

    // Writes through a follower, read back everywhere (reads wait for the read barrier).
    ok(f.call(&["SET", "k", "v1"]).unwrap());
    assert_eq!(f.call(&["INCR", "n"]).unwrap(), Value::Int(1));
    assert_eq!(o.call(&["INCR", "n"]).unwrap(), Value::Int(2));
    for x in [&mut l, &mut f, &mut o] {
        assert_eq!(x.call(&["GET", "k"]).unwrap(), bulk("v1"));
        assert_eq!(x.call(&["GET", "n"]).unwrap(), bulk("2"));
    }
    // WAIT: both replicas apply the writes above (from any node); there is no third.
    assert_eq!(f.call(&["WAIT", "2", "10000"]).unwrap(), Value::Int(2));
    assert_eq!(l.call(&["WAIT", "0", "0"]).unwrap(), Value::Int(2));
    assert_eq!(o.call(&["WAIT", "3", "200"]).unwrap(), Value::Int(2));
    assert_eq!(
        o.call(&["SADD", "s", "a", "b", "c"]).unwrap(),
        Value::Int(3)
    );
    assert_eq!(l.call(&["SCARD", "s"]).unwrap(), Value::Int(3));
    assert_eq!(f.call(&["BF.ADD", "bf", "x"]).unwrap(), Value::Int(1));
    assert_eq!(o.call(&["BF.EXISTS", "bf", "x"]).unwrap(), Value::Int(1));
    assert_eq!(
        f.call(&["RPUSH", "list", "1", "2", "3"]).unwrap(),
        Value::Int(3)
    );
    assert_eq!(f.call(&["HSET", "h", "f", "v"]).unwrap(), Value::Int(1));
    assert_eq!(l.call(&["ZADD", "z", "1", "m"]).unwrap(), Value::Int(1));
    // Data does not move between databases (databases.rs has the rest); renames and
    // sorted-set algebra replicate.
    ok(f.call(&["SELECT", "0"]).unwrap());
    for (x, cmd) in [
        (&mut f, &["SWAPDB", "0", "1"][..]),
        (&mut o, &["MOVE", "h", "1"][..]),
        (&mut l, &["COPY", "h", "h3", "DB", "2"][..]),
    ] {
        let v = x.call(cmd).unwrap();
        assert!(
            matches!(&v, Value::Error(e) if e.contains("not allowed in cluster mode")),
            "{cmd:?}: {v:?}"
        );
    }
    ok(f.call(&["RENAME", "h", "h2"]).unwrap());
    assert_eq!(l.call(&["HGET", "h2", "f"]).unwrap(), bulk("v"));
    assert_eq!(
        o.call(&["ZUNIONSTORE", "z2", "2", "z", "z", "AGGREGATE", "SUM"])
            .unwrap(),
        Value::Int(1)
    );
    assert_eq!(l.call(&["ZSCORE", "z2", "m"]).unwrap(), bulk("2"));
    // SPOP picks the same member on every node: every node's copy ends up equal.
    let popped = o.call(&["SPOP", "s"]).unwrap();
    for x in [&mut l, &mut f, &mut o] {
        x.call(&["READONLY"]).unwrap();
    }
    c.wait_converged();
    let members: Vec<Value> = [&mut l, &mut f, &mut o]
        .into_iter()
        .map(|x| x.call(&["SMEMBERS", "s"]).unwrap())
        .collect();
    assert!(members.iter().all(|m| *m == members[0]), "{members:?}");
    let Value::Array(Some(left)) = &members[0] else {
        panic!("{members:?}")
    };
    assert_eq!(left.len(), 2);
    assert!(!left.contains(&popped), "{popped:?} popped and still there");
    for x in [&mut l, &mut f, &mut o] {
        ok(x.call(&["READWRITE"]).unwrap());
    }

    // A pipelined run of writes is one log entry; its replies come back in order.
    for _ in 0..50 {
        f.send(&["INCR", "pipe"]).unwrap();
    }
    for i in 1..=50 {
        assert_eq!(f.read().unwrap(), Value::Int(i));
    }

    // MULTI/EXEC through a follower, with a connection command queued in the middle.
    ok(f.call(&["MULTI"]).unwrap());
    f.call(&["SET", "t", "1"]).unwrap();
    f.call(&["PING"]).unwrap();
    f.call(&["INCR", "t"]).unwrap();
    assert_eq!(
        f.call(&["EXEC"]).unwrap(),
        Value::Array(Some(vec![
            Value::Status("OK".into()),
            Value::Status("PONG".into()),
            Value::Int(2)
        ]))
    );

    // WATCH on one node, a write on another: EXEC fails; unwatched, it runs.
    ok(l.call(&["WATCH", "w"]).unwrap());
    ok(o.call(&["SET", "w", "theirs"]).unwrap());
    ok(l.call(&["MULTI"]).unwrap());
    l.call(&["SET", "w", "mine"]).unwrap();
    assert_eq!(l.call(&["EXEC"]).unwrap(), Value::Array(None));
    ok(l.call(&["WATCH", "w"]).unwrap());
    ok(l.call(&["MULTI"]).unwrap());
    l.call(&["SET", "w", "mine"]).unwrap();
    assert_eq!(
        l.call(&["EXEC"]).unwrap(),
        Value::Array(Some(vec![Value::Status("OK".into())]))
    );
    assert_eq!(o.call(&["GET", "w"]).unwrap(), bulk("mine"));

    // BLPOP waits on its node; a push through another node serves it.
    let port = c.port(follower);
    let waiter = std::thread::spawn(move || {
        let mut b = Conn::connect(port, Duration::from_secs(20)).unwrap();
        b.call(&["BLPOP", "queue", "10"]).unwrap()
    });
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(o.call(&["RPUSH", "queue", "job"]).unwrap(), Value::Int(1));
    assert_eq!(
        waiter.join().unwrap(),
        Value::Array(Some(vec![bulk("queue"), bulk("job")]))
    );
    assert_eq!(l.call(&["LLEN", "queue"]).unwrap(), Value::Int(0));
    // XREAD BLOCK with `$` waits for entries after the last one when it ran, though each
    // attempt goes through the log again; XREADGROUP BLOCK takes what its group has not
    // delivered.
    ok(
        l.call(&["XGROUP", "CREATE", "jobs", "workers", "$", "MKSTREAM"])
            .unwrap(),
    );
    let readers: Vec<_> = [
        vec!["XREAD", "BLOCK", "10000", "STREAMS", "jobs", "$"],
        vec![
            "XREADGROUP",
            "GROUP",
            "workers",
            "w1",
            "BLOCK",
            "10000",
            "STREAMS",
            "jobs",
            ">",
        ],
    ]
    .into_iter()
    .map(|args| {
        std::thread::spawn(move || {
            let mut b = Conn::connect(port, Duration::from_secs(20)).unwrap();
            b.call(&args).unwrap()
        })
    })
    .collect();
    // Both first attempts answered (so `$` named the stream's last ID before the XADD).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let stats = f.call(&["INFO", "commandstats"]).unwrap().text();
        if stats.contains("cmdstat_xread:calls=1,") && stats.contains("cmdstat_xreadgroup:calls=1,")
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the readers never blocked: {stats}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    o.call(&["XADD", "jobs", "5-1", "task", "a"]).unwrap();
    let entry = Value::Array(Some(vec![
        bulk("5-1"),
        Value::Array(Some(vec![bulk("task"), bulk("a")])),
    ]));
    let served = Value::Array(Some(vec![Value::Array(Some(vec![
        bulk("jobs"),
        Value::Array(Some(vec![entry])),
    ]))]));
    for r in readers {
        assert_eq!(r.join().unwrap(), served);
    }
    assert_eq!(
        l.call(&["XACK", "jobs", "workers", "5-1"]).unwrap(),
        Value::Int(1)
    );
    // And times out in bounded time with nothing pushed.
    let t = Instant::now();
    assert_eq!(
        f.call(&["BLPOP", "empty", "0.3"]).unwrap(),
        Value::Array(None)
    );
    assert!(t.elapsed() < Duration::from_secs(3));

    // PUBLISH on one node reaches a subscriber on another.
    let mut sub = conn(&c, other);
    sub.call(&["SUBSCRIBE", "news"]).unwrap();
    assert_eq!(
        l.call(&["PUBLISH", "news", "hello"]).unwrap(),
        Value::Int(0)
    );
    assert_eq!(
        sub.read().unwrap(),
        Value::Array(Some(vec![bulk("message"), bulk("news"), bulk("hello")]))
    );
    // SPUBLISH too (the nodes are one shard), to shard-channel subscribers only.
    let mut ssub = conn(&c, other);
    ssub.call(&["SSUBSCRIBE", "orders"]).unwrap();
    assert_eq!(
        l.call(&["SPUBLISH", "orders", "o1"]).unwrap(),
        Value::Int(0)
    );
    assert_eq!(
        ssub.read().unwrap(),
        Value::Array(Some(vec![bulk("smessage"), bulk("orders"), bulk("o1")]))
    );
    // A cuckoo filter through a follower, read back on every node.
    assert_eq!(
        f.call(&["CF.INSERT", "cf", "ITEMS", "a", "b", "a"])
            .unwrap(),
        Value::Array(Some(vec![Value::Int(1), Value::Int(1), Value::Int(1)]))
    );
    for id in c.ids() {
        call_until(
            c.port(id),
            &["CF.COUNT", "cf", "a"],
            Duration::from_secs(10),
            |v| *v == Value::Int(2),
        );
    }

    // Expiry: the leader reclaims, every node's key count follows.
    ok(f.call(&["SET", "gone", "x", "PX", "200"]).unwrap());
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(o.call(&["EXISTS", "gone"]).unwrap(), Value::Int(0));
    let dbsize = l.call(&["DBSIZE"]).unwrap();
    for id in c.ids() {
        call_until(c.port(id), &["DBSIZE"], Duration::from_secs(10), |v| {
            *v == dbsize
        });
    }

    // Scripts replicate: one that writes, sent to a follower, is applied by every node
    // alike; TIME and math.random inside it are the log entry's, the same everywhere.
    let script = "local t = redis.call('TIME') \
                  redis.call('SET', KEYS[1], ARGV[1] .. ':' .. t[1] .. ':' .. math.random(1000000)) \
                  return redis.call('GET', KEYS[1])";
    let written = f.call(&["EVAL", script, "1", "scripted", "v"]).unwrap();
    assert!(
        matches!(&written, Value::Bulk(Some(b)) if b.starts_with(b"v:")),
        "{written:?}"
    );
    // The compare-and-delete of redis-py's Lock.release, loaded through one node and run
    // by its SHA through another (SCRIPT LOAD goes through the log).
    ok(o.call(&["SET", "lock", "token"]).unwrap());
    let release = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
    let sha = l.call(&["SCRIPT", "LOAD", release]).unwrap().text();
    c.wait_converged();
    assert_eq!(
        o.call(&["EVALSHA", &sha, "1", "lock", "other"]).unwrap(),
        Value::Int(0)
    );
    assert_eq!(
        o.call(&["EVALSHA", &sha, "1", "lock", "token"]).unwrap(),
        Value::Int(1)
    );
    // A script loaded through a follower runs by its SHA through that follower at once,
    // before the follower has applied the load (Celery's and RQ's redis-py `Script`s do
    // exactly this): the node keeps what it was given.
    for n in 0..20 {
        let body = format!("return {n}");
        let sha = f.call(&["SCRIPT", "LOAD", &body]).unwrap().text();
        assert_eq!(
            f.call(&["EVALSHA", &sha, "0"]).unwrap(),
            Value::Int(n),
            "script {n}"
        );
    }
    match f
        .call(&["EVALSHA", "0000000000000000000000000000000000000000", "0"])
        .unwrap()
    {
        Value::Error(e) => assert!(e.starts_with("NOSCRIPT"), "{e}"),
        other => panic!("{other:?}"),
    }
    c.wait_converged();
    for x in [&mut l, &mut f, &mut o] {
        assert_eq!(x.call(&["GET", "scripted"]).unwrap(), written);
        assert_eq!(x.call(&["EXISTS", "lock"]).unwrap(), Value::Int(0));
    }

    // ROLE, INFO replication and CLUSTER INFO name the leader and every node's progress.
    // Leadership may have moved since the start (a loaded machine misses heartbeats): the
    // roles are taken as they are now, and taken again if the leader changed meanwhile.
    let first = |v: Value| match v {
        Value::Array(Some(items)) => items[0].text(),
        other => panic!("{other:?}"),
    };
    let mut tries = 0;
    let (leader, follower, roles, info, finfo, linfo, ci) = loop {
        let ld = c.wait_leader();
        let fo = c.ids().into_iter().find(|&i| i != ld).unwrap();
        let ot = c.ids().into_iter().find(|&i| i != ld && i != fo).unwrap();
        let (mut l, mut f, mut o) = (conn(&c, ld), conn(&c, fo), conn(&c, ot));
        let roles = (
            first(l.call(&["ROLE"]).unwrap()),
            first(f.call(&["ROLE"]).unwrap()),
        );
        let info = o.call(&["INFO", "replication"]).unwrap().text();
        let finfo = f.call(&["INFO", "replication"]).unwrap().text();
        let linfo = l.call(&["INFO", "replication"]).unwrap().text();
        let ci = f.call(&["CLUSTER", "INFO"]).unwrap().text();
        // A leader elected just now has not heard from both followers yet: looked at again.
        let settled =
            linfo.contains("connected_slaves:2") && finfo.contains("master_link_status:up");
        if c.wait_leader() == ld && settled {
            break (ld, fo, roles, info, finfo, linfo, ci);
        }
        tries += 1;
        assert!(
            tries < 50,
            "no settled leader after {tries} looks:\n{linfo}\n{finfo}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(roles, ("master".to_string(), "slave".to_string()));
    assert!(info.contains(&format!("raft_leader_id:{leader}")), "{info}");
    let field = |text: &str, name: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no numeric {name} in {text}"))
    };
    // A follower knows the commit index and has applied up to it (everything above was
    // acknowledged and the nodes converged).
    assert!(finfo.contains("role:slave\r\n") && finfo.contains("master_link_status:up"));
    let (commit, applied) = (
        field(&finfo, "raft_commit_index"),
        field(&finfo, "raft_applied_index"),
    );
    assert!(commit > 0 && applied >= commit, "{finfo}");
    assert!(field(&finfo, "raft_term") >= 1, "{finfo}");
    // The leader lists both followers with their match index and lag (in entries).
    assert_eq!(field(&linfo, "connected_slaves"), 2, "{linfo}");
    assert_eq!(
        linfo
            .lines()
            .filter(|l| l.starts_with("slave") && l.contains("state=online,offset="))
            .count(),
        2,
        "{linfo}"
    );
    assert!(ci.contains("cluster_state:ok"), "{ci}");
    assert_eq!(
        ci.lines()
            .filter(|l| l.starts_with("node") && l.contains("state=up") && l.contains(",commit="))
            .count(),
        3,
        "{ci}"
    );
    assert_eq!(field(&ci, "cluster_leader"), leader, "{ci}");

    // kill -9 of the leader: writes go on through the others; the old leader catches up.
    c.kill(leader);
    call_until(
        c.port(follower),
        &["SET", "after", "1"],
        Duration::from_secs(15),
        |v| *v == Value::Status("OK".into()),
    );
    c.restart(leader);
    c.wait_converged();
    let mut back = conn(&c, leader);
    back.call(&["READONLY"]).unwrap();
    assert_eq!(back.call(&["GET", "after"]).unwrap(), bulk("1"));
    assert_eq!(back.call(&["GET", "n"]).unwrap(), bulk("2"));

    // Two nodes down: no quorum; a write answers -CLUSTERDOWN/-TRYAGAIN within the request
    // timeout (2 s) instead of hanging.
    let survivor = follower;
    for id in c.ids() {
        if id != survivor {
            c.kill(id);
        }
    }
    let mut s = conn(&c, survivor);
    let t = Instant::now();
    let v = s.call(&["SET", "nope", "1"]).unwrap();
    assert!(
        matches!(&v, Value::Error(e) if e.starts_with("CLUSTERDOWN") || e.starts_with("TRYAGAIN")),
        "{v:?}"
    );
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    let v = s.call(&["GET", "k"]).unwrap();
    assert!(
        matches!(&v, Value::Error(_)),
        "a linearizable read needs a quorum: {v:?}"
    );
    ok(s.call(&["READONLY"]).unwrap());
    assert_eq!(
        s.call(&["GET", "k"]).unwrap(),
        bulk("v1"),
        "stale reads still work"
    );
}

/// Keyspace notifications in cluster mode: every node publishes the events of the writes its
/// state machine applies, to its own subscribers (as a Redis replica does for replicated
/// writes), whichever node took the command.
#[test]
fn every_node_publishes_the_keyspace_events_of_what_it_applies() {
    let c = ProcCluster::start(
        3,
        &[
            "--request-timeout-ms",
            "2000",
            "--notify-keyspace-events",
            "E$gl",
        ],
    );
    let leader = c.wait_leader();
    let mut subs: Vec<Conn> = c
        .ids()
        .into_iter()
        .map(|id| {
            let mut s = conn(&c, id);
            s.call(&["PSUBSCRIBE", "__keyevent@0__:*"]).unwrap();
            s
        })
        .collect();
    let follower = c.ids().into_iter().find(|&i| i != leader).unwrap();
    let mut f = conn(&c, follower);
    ok(f.call(&["SET", "k", "v"]).unwrap());
    assert_eq!(f.call(&["RPUSH", "l", "a"]).unwrap(), Value::Int(1));
    assert_eq!(f.call(&["LPOP", "l"]).unwrap(), bulk("a"));
    // A command that fails sends nothing.
    assert!(matches!(
        f.call(&["LPUSH", "k", "x"]).unwrap(),
        Value::Error(_)
    ));
    assert_eq!(f.call(&["DEL", "k"]).unwrap(), Value::Int(1));
    let event = |name: &str, key: &str| {
        Value::Array(Some(vec![
            bulk("pmessage"),
            bulk("__keyevent@0__:*"),
            bulk(&format!("__keyevent@0__:{name}")),
            bulk(key),
        ]))
    };
    for s in &mut subs {
        for (name, key) in [
            ("set", "k"),
            ("rpush", "l"),
            ("lpop", "l"),
            ("del", "l"),
            ("del", "k"),
        ] {
            assert_eq!(s.read().unwrap(), event(name, key));
        }
    }
}
