//! A lock held by another process is reported with that process's id (which a writer
//! writes into the LOCK file, docs/FORMAT.md) and what to do: a read-only open meeting a
//! writer points to a secondary, which does open beside it.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use bloomkv::{Db, Error, LockHolder, Options};

const HOLDER: &str = "BLOOMKV_LOCK_HOLDER_DIR";

/// The child: opens the database for writing, says so, and holds it until stdin closes.
fn hold(dir: &Path) {
    let db = Db::open(dir, Options::default()).unwrap();
    db.put("k", "v").unwrap();
    println!("ready");
    std::io::stdout().flush().unwrap();
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

#[test]
fn the_lock_error_names_the_writer_process() {
    if let Ok(dir) = std::env::var(HOLDER) {
        hold(Path::new(&dir));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "the_lock_error_names_the_writer_process",
            "--exact",
            "--nocapture",
        ])
        .env(HOLDER, dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("ready") {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "the holder exited");
    }
    let pid = child.id();
    let lock = std::fs::read_to_string(dir.path().join("LOCK")).unwrap();
    assert_eq!(lock, format!("{pid}\n"));

    for err in [
        Db::open_read_only(dir.path(), Options::default()).unwrap_err(),
        Db::open(dir.path(), Options::default()).unwrap_err(),
    ] {
        let Error::Locked(c) = &err else {
            panic!("{err}")
        };
        assert_eq!(c.holder, LockHolder::Writer);
        assert_eq!(c.pids, vec![pid], "{err}");
        let text = err.to_string();
        assert!(text.contains(&format!("process {pid}")), "{text}");
        assert!(text.contains("Db::open_secondary"), "{text}");
    }
    let reader = Db::open_secondary(dir.path(), Options::default()).unwrap();
    assert_eq!(reader.get("k").unwrap(), Some(b"v".to_vec()));

    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    // The lock went with the process; the stale id in the file means nothing.
    drop(Db::open(dir.path(), Options::default()).unwrap());
}

#[test]
fn read_only_holders_are_named_where_the_system_lists_them() {
    let dir = tempfile::tempdir().unwrap();
    drop(Db::open(dir.path(), Options::default()).unwrap());
    let reader = Db::open_read_only(dir.path(), Options::default()).unwrap();
    let err = Db::open(dir.path(), Options::default()).unwrap_err();
    let Error::Locked(c) = &err else {
        panic!("{err}")
    };
    assert_eq!(c.holder, LockHolder::ReadOnly);
    if cfg!(target_os = "linux") && !c.pids.is_empty() {
        assert_eq!(c.pids, vec![std::process::id()]);
        assert!(err.to_string().contains("1 Db handle"), "{err}");
    }
    drop(reader);
}
