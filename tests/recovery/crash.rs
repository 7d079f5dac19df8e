//! Crash test: a child process (this test binary, re-executed) runs a random mix of puts,
//! deletes, range deletes and batches with `sync_writes: true`, a tiny memtable and tiny target files so
//! flushes and compactions run all the time, and reports each write before making it ("T")
//! and when it is acknowledged ("A"). The parent SIGKILLs it at a random moment (sometimes
//! before it has even finished opening, so recovery itself gets killed too), reopens, and
//! checks: the database opens, every acknowledged write is visible with its value or its
//! deletion, the write in flight is all there or not at all (no half batch), and the
//! directory holds no table, log or manifest that the recovered state does not use.
//!
//! Rounds: `BLOOMKV_CRASH_ROUNDS` (default 200).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bloomkv::{Db, Options, WriteBatch};

use crate::common::{self, Rng};

const CHILD_ENV: &str = "BLOOMKV_CRASH_CHILD_DIR";
const SEED_ENV: &str = "BLOOMKV_CRASH_SEED";
const KEYS: u64 = 500;

fn options() -> Options {
    Options {
        sync_writes: true,
        memtable_bytes: 8 * 1024,
        target_file_bytes: 8 * 1024,
        max_bytes_for_level_base: 24 * 1024,
        level0_compaction_trigger: 2,
        block_bytes: 1024,
        ..Default::default()
    }
}

/// One write: (key, Some(value) | None for a delete), applied in order. A range delete of
/// `[a, b)` is the key `a..b` with `None`.
type Ops = Vec<(String, Option<String>)>;

fn encode(ops: &Ops) -> String {
    let parts: Vec<String> = ops
        .iter()
        .map(|(k, v)| match v {
            Some(v) => format!("p:{k}={v}"),
            None => format!("d:{k}"),
        })
        .collect();
    format!("T {}", parts.join(" "))
}

fn decode(line: &str) -> Option<Ops> {
    let rest = line.strip_prefix("T ")?;
    rest.split(' ')
        .map(|op| {
            if let Some(pv) = op.strip_prefix("p:") {
                let (k, v) = pv.split_once('=')?;
                Some((k.to_string(), Some(v.to_string())))
            } else {
                op.strip_prefix("d:").map(|k| (k.to_string(), None))
            }
        })
        .collect()
}

fn random_write(rng: &mut Rng, tag: u64) -> Ops {
    let key = |rng: &mut Rng| format!("k{:04}", rng.below(KEYS));
    let value = |rng: &mut Rng| format!("{tag}-{}", "v".repeat(rng.below(120) as usize));
    match rng.below(10) {
        0..=5 => vec![(key(rng), Some(value(rng)))],
        6 => vec![(key(rng), None)],
        7 => {
            let a = rng.below(KEYS);
            let b = (a + 1 + rng.below(30)).min(KEYS);
            vec![(format!("k{a:04}..k{b:04}"), None)]
        }
        _ => (0..2 + rng.below(5))
            .map(|_| {
                if rng.below(4) == 0 {
                    (key(rng), None)
                } else {
                    (key(rng), Some(value(rng)))
                }
            })
            .collect(),
    }
}

/// Not a test on its own: the body of the child process (does nothing without the env var).
#[test]
fn crash_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let seed: u64 = std::env::var(SEED_ENV).unwrap().parse().unwrap();
    let mut rng = Rng::new(seed | 1);
    let mut out = std::io::stdout().lock();
    // libtest prints "test crash_child ... " without a newline before the body runs.
    writeln!(out).unwrap();
    let db = Db::open(&dir, options()).unwrap();
    writeln!(out, "OPEN").unwrap();
    out.flush().unwrap();
    for tag in 0.. {
        let ops = random_write(&mut rng, seed.wrapping_add(tag) % 1_000_000);
        writeln!(out, "{}", encode(&ops)).unwrap();
        out.flush().unwrap();
        let mut batch = WriteBatch::new();
        for (k, v) in &ops {
            match (v, k.split_once("..")) {
                (Some(v), _) => batch.put(k, v),
                (None, Some((a, b))) => batch.delete_range(a, b),
                (None, None) => batch.delete(k),
            }
        }
        db.write(batch).unwrap();
        writeln!(out, "A").unwrap();
        out.flush().unwrap();
    }
}

/// The state each key of `ops` ends in when the whole write applies (last op wins; a range
/// delete sets every key of its range to absent).
fn effect(ops: &Ops) -> BTreeMap<String, Option<String>> {
    let mut out = BTreeMap::new();
    for (k, v) in ops {
        match k.split_once("..") {
            Some((a, b)) => {
                for i in 0..KEYS {
                    let key = format!("k{i:04}");
                    if a <= key.as_str() && key.as_str() < b {
                        out.insert(key, None);
                    }
                }
            }
            None => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

fn get(db: &Db, k: &str) -> Option<String> {
    db.get(k).unwrap().map(|b| String::from_utf8(b).unwrap())
}

/// Every file in the directory is used by the recovered state: live tables only, the one
/// WAL and the one MANIFEST in use, no temp files.
fn check_no_orphans(db: &Db, round: u64) {
    let live: BTreeSet<u64> = db.live_files().into_iter().collect();
    let mut logs = 0;
    let mut manifests = 0;
    for entry in std::fs::read_dir(db.path()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if let Some(n) = name.strip_suffix(".sst") {
            let n: u64 = n.parse().unwrap();
            assert!(live.contains(&n), "round {round}: orphan table {name}")
        } else if name.ends_with(".log") {
            logs += 1;
        } else if name.starts_with("MANIFEST-") {
            manifests += 1;
        } else if name.ends_with(".dbtmp") {
            panic!("round {round}: leftover temp file {name}");
        }
    }
    assert_eq!(logs, 1, "round {round}: WAL files after recovery");
    assert_eq!(manifests, 1, "round {round}: MANIFEST files after recovery");
    for n in &live {
        assert!(
            db.path().join(format!("{n:06}.sst")).exists(),
            "round {round}: live table {n} missing"
        );
    }
}

#[cfg(unix)]
#[test]
fn acknowledged_writes_survive_sigkill() {
    let rounds: u64 = std::env::var("BLOOMKV_CRASH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut expected: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    let (mut acked_total, mut in_flight_applied, mut in_flight_lost, mut killed_in_open) =
        (0u64, 0u64, 0u64, 0u64);
    let started = Instant::now();
    for round in 0..rounds {
        // Mostly short runs; now and then a longer one so the tree grows deeper levels.
        let run_for = if rng.below(10) == 0 {
            Duration::from_millis(100 + rng.below(200))
        } else {
            Duration::from_millis(2 + rng.below(60))
        };
        let mut child = Command::new(&exe)
            .args(["--nocapture", "--test-threads=1"])
            .args(common::child_test_args(module_path!(), "crash_child"))
            .env(CHILD_ENV, dir.path())
            .env(SEED_ENV, rng.next_u64().to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
                .collect::<Vec<String>>()
        });
        std::thread::sleep(run_for);
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let lines = reader.join().unwrap();
        if !lines.iter().any(|l| l == "OPEN") {
            killed_in_open += 1;
        }
        let mut pending: Option<Ops> = None;
        for line in &lines {
            if line == "A" {
                expected.extend(effect(&pending.take().unwrap()));
                acked_total += 1;
            } else if let Some(ops) = decode(line) {
                pending = Some(ops);
            }
        }

        let db = Db::open(dir.path(), options())
            .unwrap_or_else(|e| panic!("round {round}: reopen failed: {e}"));
        if let Some(ops) = pending {
            // The write in flight is all there or not at all.
            let new = effect(&ops);
            let all_new = new.iter().all(|(k, v)| &get(&db, k) == v);
            let all_old = new
                .keys()
                .all(|k| get(&db, k) == expected.get(k).cloned().flatten());
            assert!(
                all_new || all_old,
                "round {round}: write in flight half applied: {ops:?}"
            );
            if all_new {
                expected.extend(new);
                in_flight_applied += 1;
            } else {
                in_flight_lost += 1;
            }
        }
        for (k, v) in &expected {
            assert_eq!(&get(&db, k), v, "round {round}: key {k}");
        }
        // Nothing that was never written shows up either.
        let scanned: Vec<String> = db
            .scan(..)
            .map(|kv| String::from_utf8(kv.unwrap().0).unwrap())
            .collect();
        let want: Vec<&String> = expected
            .iter()
            .filter(|(_, v)| v.is_some())
            .map(|(k, _)| k)
            .collect();
        assert_eq!(
            scanned.iter().collect::<Vec<_>>(),
            want,
            "round {round}: scan"
        );
        // Recovery may have started a compaction; its output files are not live until it is
        // installed, so let it finish before listing the directory.
        db.wait_for_compactions().unwrap();
        check_no_orphans(&db, round);
    }
    eprintln!(
        "crash test: {rounds} rounds survived in {:.1?}: {acked_total} acknowledged writes, \
         in-flight write applied {in_flight_applied} / lost {in_flight_lost}, \
         {killed_in_open} kills before open finished",
        started.elapsed()
    );
}
