//! Crash test: a child process writes with `sync_writes: true` and reports each acknowledged
//! write on stdout; the parent kills it with SIGKILL at a random moment, reopens, and checks
//! every acknowledged write is there. Rounds: `BLOOMKV_CRASH_ROUNDS` (default 12).

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bloomkv::{Db, Options, WriteBatch};

const CHILD_ENV: &str = "BLOOMKV_CRASH_CHILD_DIR";

fn options() -> Options {
    Options {
        sync_writes: true,
        memtable_bytes: 8 * 1024,
        target_file_bytes: 16 * 1024,
        max_bytes_for_level_base: 32 * 1024,
        level0_compaction_trigger: 2,
        ..Default::default()
    }
}

/// Not a test on its own: the body of the child process (does nothing without the env var).
#[test]
fn crash_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let start: u64 = std::env::var("BLOOMKV_CRASH_START")
        .unwrap()
        .parse()
        .unwrap();
    let db = Db::open(&dir, options()).unwrap();
    let mut out = std::io::stdout().lock();
    use std::io::Write;
    // libtest prints "test crash_child ... " without a newline before the body runs.
    writeln!(out).unwrap();
    // Each write is announced ("T ...") before it is made and acknowledged ("A") after it
    // returns; a kill can land between the two, so the last announced write may or may not
    // be in the database.
    for i in start.. {
        let k = format!("key{:04}", i % 700);
        if i % 7 == 3 {
            writeln!(out, "T del {k}").unwrap();
            out.flush().unwrap();
            db.delete(&k).unwrap();
        } else if i % 11 == 5 {
            // A batch: both keys or neither.
            let (a, b) = (
                format!("pair{:03}a", i % 300),
                format!("pair{:03}b", i % 300),
            );
            writeln!(out, "T batch {a} {b} {i}").unwrap();
            out.flush().unwrap();
            let mut batch = WriteBatch::new();
            batch.put(&a, i.to_string());
            batch.put(&b, i.to_string());
            db.write(batch).unwrap();
        } else {
            let v = format!("{i}-{}", "x".repeat((i % 50) as usize));
            writeln!(out, "T put {k} {v}").unwrap();
            out.flush().unwrap();
            db.put(&k, &v).unwrap();
        }
        writeln!(out, "A").unwrap();
        out.flush().unwrap();
    }
}

/// One announced write: the (key, new state) pairs it sets.
fn parse_write(line: &str) -> Option<Vec<(String, Option<String>)>> {
    let parts: Vec<&str> = line.split(' ').collect();
    match parts.as_slice() {
        ["T", "put", k, v] => Some(vec![(k.to_string(), Some(v.to_string()))]),
        ["T", "del", k] => Some(vec![(k.to_string(), None)]),
        ["T", "batch", a, b, i] => Some(vec![
            (a.to_string(), Some(i.to_string())),
            (b.to_string(), Some(i.to_string())),
        ]),
        _ => None,
    }
}

#[cfg(unix)]
#[test]
fn acknowledged_writes_survive_sigkill() {
    let rounds: u64 = std::env::var("BLOOMKV_CRASH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12);
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    // What each key must hold: Some(value) or None (deleted), as acknowledged.
    let mut expected: HashMap<String, Option<String>> = HashMap::new();
    let mut seed = 0x9e3779b97f4a7c15u64;
    let mut next_start = 0u64;
    for round in 0..rounds {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let run_for = Duration::from_millis(30 + seed % 250);
        let mut child = Command::new(&exe)
            .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, dir.path())
            .env("BLOOMKV_CRASH_START", next_start.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut lines = Vec::new();
            for line in BufReader::new(stdout).lines() {
                match line {
                    Ok(l) => lines.push(l),
                    Err(_) => break,
                }
            }
            lines
        });
        let t = Instant::now();
        while t.elapsed() < run_for {
            std::thread::sleep(Duration::from_millis(5));
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let lines = reader.join().unwrap();
        let mut acked = 0u64;
        let mut pending: Option<Vec<(String, Option<String>)>> = None;
        for line in &lines {
            if line == "A" {
                for (k, v) in pending.take().unwrap_or_default() {
                    expected.insert(k, v);
                }
                acked += 1;
            } else if let Some(w) = parse_write(line) {
                pending = Some(w);
            }
        }
        next_start += acked + 1000;
        let db = Db::open(dir.path(), options())
            .unwrap_or_else(|e| panic!("round {round}: reopen failed: {e}"));
        let in_flight = pending.take().unwrap_or_default();
        for (k, v) in &in_flight {
            let got = db.get(k).unwrap().map(|b| String::from_utf8(b).unwrap());
            // The unacknowledged write is either fully there or not at all.
            if &got == v {
                expected.insert(k.clone(), v.clone());
            }
        }
        for (k, v) in &expected {
            let got = db.get(k).unwrap().map(|b| String::from_utf8(b).unwrap());
            assert_eq!(&got, v, "round {round}: key {k}");
        }
        // Batches are all or nothing.
        for i in 0..300 {
            let a = db.get(format!("pair{i:03}a")).unwrap();
            let b = db.get(format!("pair{i:03}b")).unwrap();
            assert_eq!(a, b, "round {round}: half-applied batch {i}");
        }
    }
}
