//! Kill during compaction: a child process writes under compaction pressure (tiny tables,
//! L0 trigger 2, and a thread asking for full compactions in a loop) and reports each
//! acknowledged write; the parent SIGKILLs it at a random moment, reopens, and checks every
//! acknowledged write is there and no table file is left that the manifest does not list.
//! Rounds: `BLOOMKV_COMPACTION_CRASH_ROUNDS` (default 8).

use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use bloomkv::{Db, Options};

use crate::common::{self, sst_files};

const CHILD_ENV: &str = "BLOOMKV_COMPACTION_CRASH_DIR";

fn options() -> Options {
    // A process kill loses nothing the OS has: writes are handed to it before they return.
    Options {
        memtable_bytes: 16 << 10,
        target_file_bytes: 16 << 10,
        max_bytes_for_level_base: 64 << 10,
        level_size_multiplier: 4,
        level0_compaction_trigger: 2,
        block_bytes: 1024,
        ..Default::default()
    }
}

fn value(i: u64) -> String {
    format!("{i}-{}", "v".repeat((i % 90) as usize))
}

/// Not a test on its own: the body of the child process (does nothing without the env var).
#[test]
fn compaction_crash_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let start: u64 = std::env::var("BLOOMKV_COMPACTION_CRASH_START")
        .unwrap()
        .parse()
        .unwrap();
    let db = Db::open(&dir, options()).unwrap();
    {
        let db = db.clone();
        std::thread::spawn(move || {
            loop {
                db.compact().unwrap();
                std::thread::sleep(Duration::from_millis(5));
            }
        });
    }
    let mut out = std::io::stdout().lock();
    // libtest prints "test ... " without a newline before the body runs.
    writeln!(out).unwrap();
    for i in start.. {
        let k = format!("key{:05}", (i * 7919) % 4000);
        if i % 5 == 2 {
            writeln!(out, "T del {k}").unwrap();
            out.flush().unwrap();
            db.delete(&k).unwrap();
        } else {
            writeln!(out, "T put {k} {}", value(i)).unwrap();
            out.flush().unwrap();
            db.put(&k, value(i)).unwrap();
        }
        writeln!(out, "A").unwrap();
        out.flush().unwrap();
    }
}

fn parse_write(line: &str) -> Option<(String, Option<String>)> {
    let parts: Vec<&str> = line.split(' ').collect();
    match parts.as_slice() {
        ["T", "put", k, v] => Some((k.to_string(), Some(v.to_string()))),
        ["T", "del", k] => Some((k.to_string(), None)),
        _ => None,
    }
}

#[cfg(unix)]
#[test]
fn kill_during_compaction_loses_nothing_and_leaves_no_orphans() {
    let rounds: u64 = std::env::var("BLOOMKV_COMPACTION_CRASH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8);
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut expected: HashMap<String, Option<String>> = HashMap::new();
    let mut rng = common::Rng::new(0x2545_f491_4f6c_dd1d);
    let mut next_start = 0u64;
    let mut rounds_with_deep_levels = 0;
    for round in 0..rounds {
        let run_for = Duration::from_millis(80 + rng.below(300));
        let mut child = Command::new(&exe)
            .args(["--nocapture", "--test-threads=1"])
            .args(common::child_test_args(
                module_path!(),
                "compaction_crash_child",
            ))
            .env(CHILD_ENV, dir.path())
            .env("BLOOMKV_COMPACTION_CRASH_START", next_start.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            BufReader::new(stdout)
                .lines()
                .map_while(|l| l.ok())
                .collect::<Vec<_>>()
        });
        std::thread::sleep(run_for);
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let lines = reader.join().unwrap();
        let mut acked = 0u64;
        let mut pending = None;
        for line in &lines {
            if line == "A" {
                if let Some((k, v)) = pending.take() {
                    expected.insert(k, v);
                }
                acked += 1;
            } else if let Some(w) = parse_write(line) {
                pending = Some(w);
            }
        }
        next_start += acked + 1;
        let db = Db::open(dir.path(), options())
            .unwrap_or_else(|e| panic!("round {round}: reopen failed: {e}"));
        if let Some((k, v)) = pending {
            // The unacknowledged write may or may not have landed.
            let got = db.get(&k).unwrap().map(|b| String::from_utf8(b).unwrap());
            if got == v {
                expected.insert(k, v);
            }
        }
        for (k, v) in &expected {
            let got = db.get(k).unwrap().map(|b| String::from_utf8(b).unwrap());
            assert_eq!(&got, v, "round {round}: key {k}");
        }
        // Background compactions may start right after open; let them settle first.
        db.wait_for_compactions().unwrap();
        let stats = db.stats();
        let live: BTreeSet<u64> = stats.tables.iter().map(|t| t.file_number).collect();
        assert_eq!(sst_files(dir.path()), live, "round {round}: orphan tables");
        let manifests = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                name.to_string_lossy().starts_with("MANIFEST-")
            })
            .count();
        assert_eq!(manifests, 1, "round {round}: stale manifests");
        rounds_with_deep_levels += stats.levels.iter().skip(1).filter(|l| l.files > 0).count();
    }
    assert!(rounds_with_deep_levels > 0, "the children never compacted");
}
