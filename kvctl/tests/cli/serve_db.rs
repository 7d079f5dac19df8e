//! `kvctl serve` serves the database `--db` (or `$KVCTL_DB`) names, like every command, and
//! accepts the server's own `--dir` as another name for it.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Starts `kvctl serve` with `args` (and `env`) in `cwd`, waits until it listens, then stops
/// it.
fn serve_until_listening(cwd: &Path, args: &[&str], env: Option<&Path>) {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("kvctl"));
    cmd.arg("serve")
        .args(["--port", "0"])
        .args(args)
        .current_dir(cwd)
        .env_remove("KVCTL_DB")
        .stderr(Stdio::piped());
    if let Some(db) = env {
        cmd.env("KVCTL_DB", db);
    }
    let mut child = cmd.spawn().unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("listening") {
        line.clear();
        assert!(
            err.read_line(&mut line).unwrap() > 0,
            "serve exited: {line}"
        );
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn serve_uses_db_and_kvctl_db() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    serve_until_listening(tmp.path(), &["--db", a.to_str().unwrap()], None);
    assert!(bloomkv::Db::exists(&a));
    let b = tmp.path().join("b");
    serve_until_listening(tmp.path(), &[], Some(&b));
    assert!(bloomkv::Db::exists(&b));
    let c = tmp.path().join("c");
    serve_until_listening(tmp.path(), &["--dir", c.to_str().unwrap()], None);
    assert!(bloomkv::Db::exists(&c));
    // Neither the server's default nor kvctl's was touched.
    assert!(!tmp.path().join("bloomkv-data").exists());
    assert!(!tmp.path().join("kvdb").exists());

    // --db and --dir naming different databases: a usage error.
    let out = crate::common::kvctl()
        .args(["serve", "--port", "0", "--db", "x", "--dir", "y"])
        .current_dir(tmp.path())
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Each tool refuses the other's kind of database and says which tool reads it, writing
/// nothing into it: `serve` a database `put` made, or `get`/`put` a server's.
#[test]
fn each_tool_refuses_the_other_kind_of_database() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = tmp.path().join("plain");
    let p = plain.to_str().unwrap();
    crate::common::kvctl()
        .args(["put", "user:1", "alice", "--db", p])
        .assert()
        .success();
    let out = crate::common::kvctl()
        .args(["serve", "--port", "0", "--db", p])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not a bloomkv-server database") && err.contains("user:1"),
        "{err}"
    );
    // Untouched: still a plain database with its key.
    crate::common::kvctl()
        .args(["get", "user:1", "--db", p])
        .assert()
        .success()
        .stdout("alice\n");

    let server = tmp.path().join("server");
    serve_until_listening(tmp.path(), &["--db", server.to_str().unwrap()], None);
    let s = server.to_str().unwrap();
    for args in [
        vec!["get", "user:1"],
        vec!["put", "k", "v"],
        vec!["scan"],
        vec!["delete", "k"],
    ] {
        let out = crate::common::kvctl()
            .args(&args)
            .args(["--db", s])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("is a bloomkv-server database"),
            "{args:?}: {err}"
        );
    }
    // Engine-level commands still work on it.
    crate::common::kvctl()
        .args(["stats", "--db", s])
        .assert()
        .success();
}
