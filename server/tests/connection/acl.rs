//! ACL for the one user, `default`: what Redis 7 answers for a user allowed everything, with
//! and without a password (redis-server 7.0.15's replies), and the refusals.

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
    for refused in ["SETUSER", "LOG"] {
        let e = err(&mut c, &["ACL", refused, "x"]);
        assert!(e.contains("one user, 'default'"), "{refused}: {e}");
    }
    assert_eq!(
        err(&mut c, &["ACL", "BOGUS"]),
        "ERR unknown subcommand 'BOGUS'. Try ACL HELP."
    );
}
