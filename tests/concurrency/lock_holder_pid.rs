//! A lock held by another process is reported with that process's id, as the system gives
//! it (the id a writer writes into the LOCK file, docs/FORMAT.md, only where it does not),
//! and what to do: a read-only open meeting a writer points to a secondary, which does open
//! beside it. A refused second open in the holding process leaves its lock in force for the
//! others.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{ChildStdout, Command, Stdio};

use bloomkv::{Db, Error, LockHolder, Options};

use crate::common;

const HOLDER: &str = "BLOOMKV_LOCK_HOLDER_DIR";
/// How the child opens the database: `write`, `read` (read-only), or `probe` (a writer that
/// reports whether it got the lock and exits).
const MODE: &str = "BLOOMKV_LOCK_HOLDER_MODE";

/// The child: opens the database as `MODE` says, says so, and holds it until stdin closes.
fn child(dir: &Path) {
    let mode = std::env::var(MODE).unwrap();
    let _db = match mode.as_str() {
        "write" => {
            let db = Db::open(dir, Options::default()).unwrap();
            db.put("k", "v").unwrap();
            db
        }
        "read" => Db::open_read_only(dir, Options::default()).unwrap(),
        "probe" => {
            match Db::open(dir, Options::default()) {
                Err(Error::Locked(c)) => println!("locked by {:?}", c.pids),
                Err(e) => println!("failed: {e}"),
                Ok(_) => println!("opened"),
            }
            return;
        }
        _ => panic!("{MODE}={mode}"),
    };
    println!("ready");
    std::io::stdout().flush().unwrap();
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

/// A child process running one of these tests on a database.
struct Child {
    process: std::process::Child,
    /// Its output, read to the end before it is waited for (dropped, the child's later
    /// output would fail).
    out: BufReader<ChildStdout>,
    /// The first line it printed after its test harness's own.
    said: String,
}

/// Re-runs `test` in a child process on `dir` in `mode`, once it has said how it went.
fn start(test: &str, dir: &Path, mode: &str) -> Child {
    let mut process = Command::new(std::env::current_exe().unwrap())
        .arg("--nocapture")
        .args(common::child_test_args(module_path!(), test))
        .env(HOLDER, dir)
        .env(MODE, mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(process.stdout.take().unwrap());
    let mut line = String::new();
    while !["ready", "locked", "failed", "opened"]
        .iter()
        .any(|w| line.starts_with(w))
    {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "the child exited");
    }
    Child {
        process,
        out,
        said: line.trim().to_string(),
    }
}

impl Child {
    fn id(&self) -> u32 {
        self.process.id()
    }

    /// Lets the child go (it lets go of the database), and checks it exited cleanly.
    fn finish(mut self) {
        drop(self.process.stdin.take());
        std::io::copy(&mut self.out, &mut std::io::sink()).unwrap();
        assert!(self.process.wait().unwrap().success());
    }
}

#[test]
fn the_lock_error_names_the_writer_process() {
    if let Ok(dir) = std::env::var(HOLDER) {
        return child(Path::new(&dir));
    }
    let dir = tempfile::tempdir().unwrap();
    let holder = start(
        "the_lock_error_names_the_writer_process",
        dir.path(),
        "write",
    );
    let pid = holder.id();
    let lock = dir.path().join("LOCK");
    assert_eq!(std::fs::read_to_string(&lock).unwrap(), format!("{pid}\n"));
    // The id comes from the system, not from the file: it is named with the file emptied.
    std::fs::write(&lock, "").unwrap();

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
        // What an operator can run beside the writer: kvctl's read commands (secondaries).
        assert!(
            text.contains("use kvctl's read commands (get, scan, stats, verify, checkpoint"),
            "{text}"
        );
    }
    let reader = Db::open_secondary(dir.path(), Options::default()).unwrap();
    assert_eq!(reader.get("k").unwrap(), Some(b"v".to_vec()));

    holder.finish();
    // The lock went with the process.
    drop(Db::open(dir.path(), Options::default()).unwrap());
}

#[test]
fn read_only_holders_in_other_processes_are_named() {
    if let Ok(dir) = std::env::var(HOLDER) {
        return child(Path::new(&dir));
    }
    let dir = tempfile::tempdir().unwrap();
    drop(Db::open(dir.path(), Options::default()).unwrap());
    let test = "read_only_holders_in_other_processes_are_named";
    let a = start(test, dir.path(), "read");
    let b = start(test, dir.path(), "read");
    let err = Db::open(dir.path(), Options::default()).unwrap_err();
    let Error::Locked(c) = &err else {
        panic!("{err}")
    };
    assert_eq!(c.holder, LockHolder::ReadOnly, "{err}");
    let mut both = vec![a.id(), b.id()];
    both.sort_unstable();
    if cfg!(target_os = "linux") {
        // /proc/locks lists every reader.
        assert_eq!(c.pids, both, "{err}");
    } else {
        // The system names one of them.
        assert!(c.pids.len() == 1 && both.contains(&c.pids[0]), "{err}");
    }
    assert!(
        err.to_string().contains("held by read-only openers"),
        "{err}"
    );
    // Readers share.
    drop(Db::open_read_only(dir.path(), Options::default()).unwrap());
    a.finish();
    b.finish();
    drop(Db::open(dir.path(), Options::default()).unwrap());
}

/// In one process, a second holder of a record lock would be granted it by the system, and
/// closing a second descriptor of the file would release the first holder's lock: the
/// refused opens here must leave the lock in force for other processes.
#[test]
fn a_refused_second_open_keeps_the_lock_for_other_processes() {
    if let Ok(dir) = std::env::var(HOLDER) {
        return child(Path::new(&dir));
    }
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let names = tempfile::tempdir().unwrap();
    let mut paths = vec![dir.path().to_path_buf()];
    #[cfg(unix)]
    {
        // The same directory under another name.
        let link = names.path().join("link");
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        paths.push(link);
    }
    for path in &paths {
        for err in [
            Db::open(path, Options::default()).unwrap_err(),
            Db::open_read_only(path, Options::default()).unwrap_err(),
            bloomkv::repair(path).unwrap_err(),
        ] {
            let Error::Locked(c) = &err else {
                panic!("{err}")
            };
            assert_eq!(c.pids, vec![std::process::id()], "{err}");
        }
    }
    let test = "a_refused_second_open_keeps_the_lock_for_other_processes";
    let probe = start(test, dir.path(), "probe");
    assert_eq!(probe.said, format!("locked by [{}]", std::process::id()));
    probe.finish();
    drop(db);
    let probe = start(test, dir.path(), "probe");
    assert_eq!(probe.said, "opened");
    probe.finish();
}
