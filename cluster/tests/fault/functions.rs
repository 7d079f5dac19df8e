//! Redis functions on three server processes: a library loaded through a follower is
//! callable through every node, FCALL's writes (random numbers, the time) are the same on
//! every node, FCALL_RO and FUNCTION LIST read on each node, a node killed with -9 comes
//! back with the libraries, and DELETE reaches every node.

use std::time::Duration;

use crate::procs::ProcCluster;
use crate::resp::{Conn, Value, call_until};

fn conn(c: &ProcCluster, id: u64) -> Conn {
    Conn::connect(c.port(id), Duration::from_secs(10)).unwrap()
}

fn bulk(s: &str) -> Value {
    Value::Bulk(Some(s.as_bytes().to_vec()))
}

const LIB: &str = "#!lua name=dice\n\
    redis.register_function('roll', function(keys, args) \
      local v = math.random(1000000) .. ':' .. redis.call('TIME')[1] \
      redis.call('RPUSH', keys[1], v) return v end)\n\
    redis.register_function{function_name='peek', callback=function(keys) \
      return redis.call('LRANGE', keys[1], 0, -1) end, flags={'no-writes'}}";

#[test]
fn functions_replicate_and_survive_a_kill() {
    // `other` must stay a follower until it is killed: an election timeout of 2-4 s keeps a
    // loaded machine's missed heartbeats from moving the leader meanwhile.
    let mut c = ProcCluster::start(
        3,
        &[
            "--request-timeout-ms",
            "2000",
            "--election-timeout-ms",
            "2000-4000",
        ],
    );
    let leader = c.wait_leader();
    let ids = c.ids();
    let follower = ids.iter().copied().find(|&i| i != leader).unwrap();
    let other = ids
        .iter()
        .copied()
        .find(|&i| i != leader && i != follower)
        .unwrap();
    let mut f = conn(&c, follower);
    assert_eq!(f.call(&["FUNCTION", "LOAD", LIB]).unwrap(), bulk("dice"));
    let mut o = conn(&c, other);
    // Loaded through the follower, known to another node at once (reads wait for the
    // read barrier; writes go through the log).
    let rolled = o.call(&["FCALL", "roll", "1", "rolls"]).unwrap();
    assert!(matches!(&rolled, Value::Bulk(Some(_))), "{rolled:?}");
    let mut l = conn(&c, leader);
    assert!(matches!(
        l.call(&["FCALL", "ROLL", "1", "rolls"]).unwrap(),
        Value::Bulk(Some(_))
    ));
    assert_eq!(
        f.call(&["FUNCTION", "LOAD", LIB]).unwrap(),
        Value::Error("ERR Library 'dice' already exists".into())
    );
    assert_eq!(
        o.call(&["FCALL_RO", "roll", "1", "rolls"]).unwrap(),
        Value::Error("ERR Can not execute a script with write flag using *_ro command.".into())
    );
    // Every node holds the same rolls, read on its own data.
    c.wait_converged();
    let seen: Vec<Value> = ids
        .iter()
        .map(|&id| {
            let mut x = conn(&c, id);
            x.call(&["READONLY"]).unwrap();
            x.call(&["FCALL_RO", "peek", "1", "rolls"]).unwrap()
        })
        .collect();
    assert!(seen.iter().all(|s| *s == seen[0]), "{seen:?}");
    let Value::Array(Some(rolls)) = &seen[0] else {
        panic!("{seen:?}")
    };
    assert_eq!(rolls.len(), 2);
    assert_eq!(rolls[0], rolled);
    let listing = f.call(&["FUNCTION", "LIST", "WITHCODE"]).unwrap();
    for &id in &ids {
        assert_eq!(
            conn(&c, id)
                .call(&["FUNCTION", "LIST", "WITHCODE"])
                .unwrap(),
            listing
        );
    }
    // FUNCTION KILL and STATS answer on the node itself.
    assert_eq!(
        o.call(&["FUNCTION", "KILL"]).unwrap(),
        Value::Error("NOTBUSY No scripts in execution right now.".into())
    );

    // A kill -9 of a follower: it comes back with the library.
    drop(o);
    c.kill(other);
    c.restart(other);
    let back = call_until(
        c.port(other),
        &["FUNCTION", "LIST", "WITHCODE"],
        Duration::from_secs(30),
        |v| *v == listing,
    );
    assert_eq!(back, listing);
    assert!(matches!(
        conn(&c, other)
            .call(&["FCALL", "roll", "1", "rolls"])
            .unwrap(),
        Value::Bulk(Some(_))
    ));

    // DELETE through the leader reaches every node.
    assert_eq!(
        l.call(&["FUNCTION", "DELETE", "dice"]).unwrap(),
        Value::Status("OK".into())
    );
    for &id in &ids {
        assert_eq!(
            conn(&c, id).call(&["FCALL", "roll", "1", "rolls"]).unwrap(),
            Value::Error("ERR Function not found".into())
        );
    }
}
