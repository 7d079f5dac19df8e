//! The kvctl CLI tests' kit (`tests/cli` includes it): a temporary database directory, a command
//! builder pointed at it.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use tempfile::TempDir;

/// A temporary directory holding (or about to hold) a database at `db`.
pub struct TestDb {
    pub dir: TempDir,
    pub db: PathBuf,
}

impl TestDb {
    pub fn new() -> TestDb {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        TestDb { dir, db }
    }

    /// `kvctl --db <db> args...`, with KVCTL_DB cleared so the environment cannot leak in.
    pub fn kvctl(&self, args: &[&str]) -> Command {
        let mut c = kvctl();
        c.arg("--db").arg(&self.db).args(args);
        c
    }

    /// Runs kvctl and returns stdout, asserting success.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self
            .kvctl(args)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        String::from_utf8(out).unwrap()
    }

    /// The `.sst` files in the database directory.
    pub fn tables(&self) -> Vec<PathBuf> {
        tables_in(&self.db)
    }
}

/// The kvctl binary with a clean environment for the variables it reads.
pub fn kvctl() -> Command {
    let mut c = Command::cargo_bin("kvctl").unwrap();
    c.env_remove("KVCTL_DB");
    c
}

pub fn tables_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sst"))
        .collect();
    v.sort();
    v
}

/// Runs `kvctl dedup` on the database `db` with 200,000 distinct lines on stdin and a stdout
/// whose reader is gone before the first line is written (`dedup | head -0`); returns how it
/// exited and its stderr.
pub fn dedup_into_closed_pipe_with_stderr(
    db: &Path,
    extra: &[&str],
) -> (std::process::ExitStatus, String) {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("kvctl"))
        .arg("--db")
        .arg(db)
        .arg("dedup")
        .args(extra)
        .env_remove("KVCTL_DB")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away at once.
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        for i in 0..200_000 {
            // A write error means kvctl stopped reading: it stopped early, as it should.
            if writeln!(stdin, "https://example.com/page-{i}").is_err() {
                break;
            }
        }
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// As [`dedup_into_closed_pipe_with_stderr`], the exit status only.
pub fn dedup_into_closed_pipe(db: &Path) -> std::process::ExitStatus {
    dedup_into_closed_pipe_with_stderr(db, &[]).0
}

/// `bytes` (a command's stdout) as the one JSON document on one line it must be.
pub fn json_doc(bytes: &[u8]) -> serde_json::Value {
    let text = std::str::from_utf8(bytes).unwrap();
    assert_eq!(text.lines().count(), 1, "not one line of JSON:\n{text}");
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: not JSON:\n{text}"))
}

/// The JSON document on the first line of `bytes` (a command's stderr, where an error line
/// may follow it).
pub fn first_json_line(bytes: &[u8]) -> serde_json::Value {
    let text = std::str::from_utf8(bytes).unwrap();
    let first = text.lines().next().unwrap_or("");
    serde_json::from_str(first).unwrap_or_else(|e| panic!("{e}: not JSON:\n{text}"))
}

/// The text of the backtick span in docs/`doc` that starts with `start`, its line breaks and
/// indentation folded to single spaces (as a reader sees the quoted message).
pub fn doc_quote(doc: &str, start: &str) -> String {
    let path = format!("{}/../docs/{doc}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let (_, rest) = text
        .split_once(&format!("`{start}"))
        .unwrap_or_else(|| panic!("docs/{doc} quotes no text starting with {start:?}"));
    let span = format!("{start}{}", rest.split('`').next().unwrap_or(""));
    span.split_whitespace().collect::<Vec<_>>().join(" ")
}
