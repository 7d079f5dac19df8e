//! A secondary (`Db::open_secondary`) in this process reads beside a writer in another
//! process that flushes, compacts (deleting the tables the secondary reads) and reopens the
//! database underneath it, and every answer is checked exactly against a model.
//!
//! The writer runs step after step: step `s` writes key `s % KEYS` (a put of `value(s)`, or
//! a delete when `s % 7 == 0`) and the key `progress` = `s`, in one batch. So a consistent
//! state is one step count `p` and nothing else: every key holds what its last step at or
//! before `p` wrote. After each catch-up the secondary reads `p` from `progress`, and every
//! get, every full scan, and an iterator and a snapshot kept across the next catch-up must
//! show exactly the state at their `p`. The writer also publishes, after each `write`
//! returns, the step count in a file (written aside and renamed, every few steps): a
//! catch-up that starts after it read `a` from there must reach `p >= a` (every write that
//! returned is in the WAL), and `p` never goes back.
//!
//! The writer is this test binary again, started with the test's name and an environment
//! variable naming the directory. The CI test runs for 3 seconds; the 30-second one is
//! ignored: `cargo test --release --test secondary_process -- --ignored --nocapture`
//! prints its figures.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bloomkv::{Db, Options};
use common::{NoSyncEnv, Rng};

/// Keys the writer cycles through.
const KEYS: u64 = 1500;
/// The environment variable that makes the test binary the writer: `DIR`.
const WRITER: &str = "BLOOMKV_SECONDARY_PROCESS_WRITER";
/// The file the writer publishes its step count in (beside, not inside, the database).
const ACKED: &str = "acked";

fn key(k: u64) -> Vec<u8> {
    format!("key{k:06}").into_bytes()
}

fn value(step: u64) -> Vec<u8> {
    let mut v = format!("step {step:012} ").into_bytes();
    v.resize(120, b'a' + (step % 26) as u8);
    v
}

/// What key `k` holds once `p` steps are done.
fn expected(k: u64, p: u64) -> Option<Vec<u8>> {
    if p < k {
        return None;
    }
    let last = p - (p - k) % KEYS;
    (last >= 1 && !last.is_multiple_of(7)).then(|| value(last))
}

/// Every entry once `p` steps are done, in key order.
fn expected_scan(p: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out: Vec<(Vec<u8>, Vec<u8>)> = (0..KEYS)
        .filter_map(|k| expected(k, p).map(|v| (key(k), v)))
        .collect();
    if p > 0 {
        out.push((b"progress".to_vec(), p.to_string().into_bytes()));
    }
    out
}

fn writer_options() -> Options {
    Options {
        memtable_bytes: 48 << 10,
        target_file_bytes: 32 << 10,
        max_bytes_for_level_base: 128 << 10,
        level_size_multiplier: 4,
        level0_compaction_trigger: 2,
        background_threads: 2,
        env: NoSyncEnv::shared(),
        ..Options::default()
    }
}

fn publish(path: &Path, step: u64) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, step.to_string()).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn read_acked(path: &Path) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// The writer process: steps for `run_for`, compacting a range every half second and
/// reopening every two seconds.
fn writer(root: &Path, run_for: Duration) {
    let dir = root.join("db");
    let acked = root.join(ACKED);
    let start = Instant::now();
    let mut db = Db::open(&dir, writer_options()).unwrap();
    let (mut step, mut reopens, mut manual) = (0u64, 0u32, 0u32);
    let (mut last_compact, mut last_reopen) = (Instant::now(), Instant::now());
    while start.elapsed() < run_for {
        step += 1;
        let mut batch = bloomkv::WriteBatch::new();
        let k = step % KEYS;
        if step.is_multiple_of(7) {
            batch.delete(key(k));
        } else {
            batch.put(key(k), value(step));
        }
        batch.put("progress", step.to_string());
        db.write(batch).unwrap();
        if step.is_multiple_of(16) {
            publish(&acked, step);
        }
        if last_compact.elapsed() > Duration::from_millis(500) {
            let from = key(step.wrapping_mul(7919) % KEYS);
            db.compact_range(from.as_slice()..).unwrap();
            manual += 1;
            last_compact = Instant::now();
        }
        if last_reopen.elapsed() > Duration::from_secs(2) {
            drop(db);
            db = Db::open(&dir, writer_options()).unwrap();
            reopens += 1;
            last_reopen = Instant::now();
        }
    }
    publish(&acked, step);
    let s = db.stats();
    eprintln!(
        "writer: {step} steps, {} flushes and {} compactions in the last open, {manual} manual \
         compactions, {reopens} reopens",
        s.flushes, s.compactions
    );
}

/// Kills the writer if the reader fails first.
struct Reap(Option<Child>);

impl Drop for Reap {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[derive(Default)]
struct Figures {
    catch_ups: u64,
    gets: u64,
    scans: u64,
    held_iterators: u64,
    snapshots: u64,
    tables_deleted_while_held: u64,
    catch_up_micros: Vec<u64>,
    last_p: u64,
}

fn progress(db: &Db) -> u64 {
    db.get("progress")
        .unwrap()
        .map_or(0, |v| String::from_utf8(v).unwrap().parse().unwrap())
}

fn check_scan(it: bloomkv::DbIter, p: u64, what: &str) {
    let got: Vec<(Vec<u8>, Vec<u8>)> = it.map(Result::unwrap).collect();
    let want = expected_scan(p);
    assert!(
        got == want,
        "{what} at p={p}: {} entries, want {}",
        got.len(),
        want.len()
    );
}

/// What the thread reading beside the catch-ups shares with the main thread.
#[derive(Default)]
struct Shared {
    /// Catch-ups started plus catch-ups finished: odd while one runs.
    round: AtomicU64,
    /// The step count of the last catch-up finished.
    p: AtomicU64,
    stop: AtomicBool,
}

/// Gets while the main thread catches up; returns how many it checked.
fn side_reader(reader: &Db, shared: &Shared) -> u64 {
    let mut rng = Rng::new(26);
    let mut gets = 0;
    while !shared.stop.load(Ordering::SeqCst) {
        let lo = shared.p.load(Ordering::SeqCst);
        let k = rng.below(KEYS);
        let got = reader.get(key(k)).unwrap();
        // The state the get read was installed by a catch-up that had finished by the time
        // `round` is even again, and `p` only grows.
        let hi = loop {
            let r = shared.round.load(Ordering::SeqCst);
            let hi = shared.p.load(Ordering::SeqCst);
            if r.is_multiple_of(2) && shared.round.load(Ordering::SeqCst) == r {
                break hi;
            }
            std::thread::yield_now();
        };
        // The values key k had between steps lo and hi: at lo, and after each step on it.
        let mut ok = got == expected(k, lo);
        let mut s = lo + 1;
        while !ok && s <= hi {
            if s % KEYS == k {
                ok = got == expected(k, s);
                s += KEYS;
            } else {
                s += (k + KEYS - s % KEYS) % KEYS;
            }
        }
        assert!(
            ok,
            "key {k}: {got:?} is no value it had between steps {lo} and {hi}"
        );
        gets += 1;
    }
    gets
}

fn run(test_name: &str, run_for: Duration) {
    if let Ok(root) = std::env::var(WRITER) {
        writer(Path::new(&root), run_for);
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let dir: PathBuf = root.path().join("db");
    let acked = root.path().join(ACKED);
    let log = root.path().join("writer.log");
    let child = Command::new(std::env::current_exe().unwrap())
        .args([test_name, "--exact", "--include-ignored", "--nocapture"])
        .env(WRITER, root.path())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let mut child = Reap(Some(child));
    let waited = Instant::now();
    while read_acked(&acked) == 0 {
        assert!(
            waited.elapsed() < Duration::from_secs(60),
            "the writer never started"
        );
        std::thread::sleep(Duration::from_millis(5));
    }

    let reader = Db::open_secondary(&dir, Options::default()).unwrap();
    // Another thread reads while this one catches up: its every answer must be a value the
    // key had at some step between the last catch-up finished before the get and the first
    // finished after it. `round` is odd while a catch-up runs.
    let shared = Arc::new(Shared::default());
    shared.p.store(progress(&reader), Ordering::SeqCst);
    let side = {
        let (reader, shared) = (reader.clone(), Arc::clone(&shared));
        std::thread::spawn(move || side_reader(&reader, &shared))
    };
    let mut f = Figures {
        last_p: progress(&reader),
        ..Figures::default()
    };
    let mut rng = Rng::new(25);
    let start = Instant::now();
    while start.elapsed() < run_for {
        let before_tables = reader.live_files();
        let held = f
            .catch_ups
            .is_multiple_of(3)
            .then(|| (reader.scan(..), reader.snapshot(), f.last_p));
        let a = read_acked(&acked);
        let t = Instant::now();
        shared.round.fetch_add(1, Ordering::SeqCst);
        reader.try_catch_up().unwrap();
        f.catch_up_micros.push(t.elapsed().as_micros() as u64);
        f.catch_ups += 1;
        let p = progress(&reader);
        shared.p.store(p, Ordering::SeqCst);
        shared.round.fetch_add(1, Ordering::SeqCst);
        assert!(
            p >= a,
            "caught up to step {p}, but the writer had acknowledged {a}"
        );
        assert!(p >= f.last_p, "went back from step {} to {p}", f.last_p);
        f.last_p = p;
        f.tables_deleted_while_held += before_tables
            .iter()
            .filter(|&&n| !dir.join(bloomkv::sstable::table_file_name(n)).exists())
            .count() as u64;

        for _ in 0..200 {
            let k = rng.below(KEYS);
            assert_eq!(
                reader.get(key(k)).unwrap(),
                expected(k, p),
                "key {k} at p={p}"
            );
            f.gets += 1;
        }
        if f.catch_ups.is_multiple_of(4) {
            check_scan(reader.scan(..), p, "scan");
            f.scans += 1;
        }
        if let Some((it, snap, old_p)) = held {
            // Both began before the catch-up, while the writer went on deleting tables.
            check_scan(it, old_p, "iterator kept across a catch-up");
            check_scan(snap.scan(..), old_p, "snapshot kept across a catch-up");
            let k = rng.below(KEYS);
            assert_eq!(snap.get(key(k)).unwrap(), expected(k, old_p));
            f.held_iterators += 1;
            f.snapshots += 1;
        }
    }
    shared.stop.store(true, Ordering::SeqCst);
    let side_gets = side.join().unwrap();
    let status = child.0.take().unwrap().wait().unwrap();
    let writer_said = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(status.success(), "writer failed: {status}\n{writer_said}");
    reader.try_catch_up().unwrap();
    let p = progress(&reader);
    assert_eq!(
        p,
        read_acked(&acked),
        "the last catch-up missed the writer's last steps"
    );
    check_scan(reader.scan(..), p, "final scan");

    f.catch_up_micros.sort_unstable();
    let median = f.catch_up_micros[f.catch_up_micros.len() / 2];
    let p99 = f.catch_up_micros[f.catch_up_micros.len() * 99 / 100];
    eprintln!(
        "reader: {} s, {} catch-ups (median {median} us, p99 {p99} us), {} gets, {} full scans, \
         {} iterators and {} snapshots read across a catch-up, {} tables the reader's state \
         held deleted by the writer during a catch-up, {side_gets} gets by a thread beside the \
         catch-ups; last step {p}",
        run_for.as_secs(),
        f.catch_ups,
        f.gets,
        f.scans,
        f.held_iterators,
        f.snapshots,
        f.tables_deleted_while_held
    );
    eprint!(
        "{}",
        writer_said
            .lines()
            .filter(|l| l.starts_with("writer:"))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    );
    assert!(
        f.tables_deleted_while_held > 0,
        "the writer deleted no table under the reader"
    );
}

#[test]
fn secondary_beside_a_writer_process() {
    run("secondary_beside_a_writer_process", Duration::from_secs(3));
}

#[test]
#[ignore = "30 seconds; run by hand with --ignored --nocapture for its figures"]
fn secondary_beside_a_writer_process_30s() {
    run(
        "secondary_beside_a_writer_process_30s",
        Duration::from_secs(30),
    );
}
