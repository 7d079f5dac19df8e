//! The counters behind INFO's `stats`, `commandstats` and `errorstats` sections, as Redis 7
//! keeps them: calls, time, rejections and failures per command, error replies per error
//! code, commands, bytes and reads of the network, and their rates over the last 1.6 s.
//!
//! Every command updates them, so they live per thread: an I/O thread adds to its own
//! counters with plain loads and stores (one writer each: no locked instruction, no cache
//! line shared between threads), and INFO sums the threads'. A thread's counters stay in
//! the sum after it ends (they are folded into `retired`). `CONFIG RESETSTAT` records the
//! current sums as the new zero.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use parking_lot::Mutex;

use crate::cmd::COMMANDS;
use crate::fasthash::FastMap;

/// Most distinct error codes tracked (Redis's `ERROR_STATS_NUMBER`); errors with other
/// codes still count in `total_error_replies`.
pub const MAX_ERROR_CODES: usize = 128;

/// Samples kept for the `instantaneous_*` rates (Redis: 16, one every 100 ms).
const SAMPLES: usize = 16;

/// A counter written by one thread only: a load and a store, no read-modify-write.
#[derive(Debug, Default)]
struct Cell(AtomicU64);

impl Cell {
    fn add(&self, n: u64) {
        self.0.store(
            self.0.load(Ordering::Relaxed).wrapping_add(n),
            Ordering::Relaxed,
        );
    }

    fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// One command's counters.
#[derive(Debug, Default)]
struct PerCommand {
    calls: Cell,
    usec: Cell,
    rejected: Cell,
    failed: Cell,
}

/// One thread's counters.
#[derive(Debug)]
struct Counters {
    commands: Box<[PerCommand]>,
    /// Requests processed (known commands or not).
    processed: Cell,
    errors: Cell,
    net_in: Cell,
    net_out: Cell,
    reads: Cell,
    writes: Cell,
}

impl Counters {
    fn new() -> Counters {
        Counters {
            commands: COMMANDS.iter().map(|_| PerCommand::default()).collect(),
            processed: Cell::default(),
            errors: Cell::default(),
            net_in: Cell::default(),
            net_out: Cell::default(),
            reads: Cell::default(),
            writes: Cell::default(),
        }
    }
}

/// Sums of the counters (what INFO shows, before the reset baseline is taken off).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Per command (by position in [`COMMANDS`]): calls, microseconds, rejected, failed.
    pub commands: Vec<[u64; 4]>,
    /// Requests processed.
    pub processed: u64,
    /// Error replies.
    pub errors: u64,
    /// Bytes read from clients.
    pub net_in: u64,
    /// Bytes written to clients.
    pub net_out: u64,
    /// Socket reads that brought data.
    pub reads: u64,
    /// Socket writes.
    pub writes: u64,
}

impl Totals {
    fn zero() -> Totals {
        Totals {
            commands: vec![[0; 4]; COMMANDS.len()],
            ..Totals::default()
        }
    }

    fn add(&mut self, c: &Counters) {
        for (t, p) in self.commands.iter_mut().zip(c.commands.iter()) {
            t[0] += p.calls.get();
            t[1] += p.usec.get();
            t[2] += p.rejected.get();
            t[3] += p.failed.get();
        }
        self.processed += c.processed.get();
        self.errors += c.errors.get();
        self.net_in += c.net_in.get();
        self.net_out += c.net_out.get();
        self.reads += c.reads.get();
        self.writes += c.writes.get();
    }

    fn minus(mut self, base: &Totals) -> Totals {
        for (t, b) in self.commands.iter_mut().zip(&base.commands) {
            for i in 0..4 {
                t[i] = t[i].saturating_sub(b[i]);
            }
        }
        self.processed = self.processed.saturating_sub(base.processed);
        self.errors = self.errors.saturating_sub(base.errors);
        self.net_in = self.net_in.saturating_sub(base.net_in);
        self.net_out = self.net_out.saturating_sub(base.net_out);
        self.reads = self.reads.saturating_sub(base.reads);
        self.writes = self.writes.saturating_sub(base.writes);
        self
    }
}

/// Error replies by error code (the reply's first word), at most [`MAX_ERROR_CODES`].
#[derive(Debug, Default)]
struct ErrorCodes {
    counts: FastMap<String, u64>,
}

/// Rates from samples of the totals taken every 100 ms.
#[derive(Debug, Default)]
struct Rates {
    /// (when, requests, bytes in, bytes out)
    samples: VecDeque<(Instant, u64, u64, u64)>,
}

/// A server's statistics (one per [`crate::Shared`]).
#[derive(Debug)]
pub struct Stats {
    id: u64,
    threads: Mutex<Vec<Arc<Counters>>>,
    /// Counters of threads that have ended.
    retired: Mutex<Totals>,
    /// The sums at the last `CONFIG RESETSTAT`.
    baseline: Mutex<Totals>,
    errors: Mutex<ErrorCodes>,
    rates: Mutex<Rates>,
}

impl Default for Stats {
    fn default() -> Stats {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Stats {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            threads: Mutex::new(Vec::new()),
            retired: Mutex::new(Totals::zero()),
            baseline: Mutex::new(Totals::zero()),
            errors: Mutex::default(),
            rates: Mutex::default(),
        }
    }
}

thread_local! {
    /// This thread's counters, per server (a process may run several servers; a thread
    /// serves one at a time, so this holds one entry almost always).
    static MINE: RefCell<Vec<(u64, Arc<Counters>)>> = const { RefCell::new(Vec::new()) };
}

/// The error code of an error reply's text: its first word (Redis takes it from the first
/// 32 bytes, and counts a text without a space as `ERR`).
pub fn error_code(text: &str) -> &str {
    let head = &text.as_bytes()[..text.len().min(32)];
    match head.iter().position(|&b| b == b' ') {
        Some(i) if i > 0 => &text[..i],
        _ => "ERR",
    }
}

impl Stats {
    /// Runs `f` on this thread's counters, registering them on first use.
    fn with<R>(&self, f: impl FnOnce(&Counters) -> R) -> R {
        MINE.with(|mine| {
            let mut mine = mine.borrow_mut();
            if let Some((_, c)) = mine.iter().find(|(id, _)| *id == self.id) {
                return f(c);
            }
            let c = Arc::new(Counters::new());
            self.register(&c);
            let r = f(&c);
            mine.push((self.id, c));
            r
        })
    }

    fn register(&self, c: &Arc<Counters>) {
        let mut threads = self.threads.lock();
        // Threads that have ended (only this list still holds their counters) are folded
        // into `retired`, so the list stays as long as the threads alive.
        let mut retired = None;
        threads.retain(|t| {
            if Arc::strong_count(t) > 1 {
                return true;
            }
            retired.get_or_insert_with(|| self.retired.lock()).add(t);
            false
        });
        threads.push(Arc::clone(c));
    }

    /// A request arrived (known command or not).
    pub fn processed(&self) {
        self.with(|c| c.processed.add(1));
    }

    /// Command `cmd` (its position in [`COMMANDS`]) ran for `usec` µs; `failed` when it
    /// answered an error.
    pub fn call(&self, cmd: usize, usec: u64, failed: bool) {
        self.with(|c| {
            let p = &c.commands[cmd];
            p.calls.add(1);
            p.usec.add(usec);
            if failed {
                p.failed.add(1);
            }
        });
    }

    /// Command `cmd`, counted as a call that succeeded, failed after all (its write group's
    /// commit did).
    pub fn failed(&self, cmd: usize) {
        self.with(|c| c.commands[cmd].failed.add(1));
    }

    /// Command `cmd` was refused before it ran (arity, authentication, MISCONF, ...).
    pub fn rejected(&self, cmd: usize) {
        self.with(|c| c.commands[cmd].rejected.add(1));
    }

    /// An error reply went to a client.
    pub fn error(&self, text: &str) {
        self.with(|c| c.errors.add(1));
        let code = error_code(text);
        let mut e = self.errors.lock();
        if let Some(n) = e.counts.get_mut(code) {
            *n += 1;
        } else if e.counts.len() < MAX_ERROR_CODES {
            e.counts.insert(code.to_string(), 1);
        }
    }

    /// `n` bytes read from a client.
    pub fn read(&self, n: usize) {
        self.with(|c| {
            c.reads.add(1);
            c.net_in.add(n as u64);
        });
    }

    /// `n` bytes written to a client.
    pub fn wrote(&self, n: usize) {
        self.with(|c| {
            c.writes.add(1);
            c.net_out.add(n as u64);
        });
    }

    /// The sums since start (locks in `register`'s order: a thread folded meanwhile is
    /// counted once).
    fn sums(&self) -> Totals {
        let threads = self.threads.lock();
        let mut t = self.retired.lock().clone();
        for c in threads.iter() {
            t.add(c);
        }
        t
    }

    /// The sums since start or the last reset.
    pub fn totals(&self) -> Totals {
        let t = self.sums();
        t.minus(&self.baseline.lock())
    }

    /// Error replies by code, sorted by code.
    pub fn error_codes(&self) -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = self
            .errors
            .lock()
            .counts
            .iter()
            .map(|(k, n)| (k.clone(), *n))
            .collect();
        v.sort();
        v
    }

    /// `CONFIG RESETSTAT`: every counter starts again from zero.
    pub fn reset(&self) {
        *self.baseline.lock() = self.sums();
        self.errors.lock().counts.clear();
        self.rates.lock().samples.clear();
    }

    /// Takes a sample for the rates (the server calls this every 100 ms).
    pub fn sample(&self) {
        let t = self.totals();
        let mut r = self.rates.lock();
        r.samples
            .push_back((Instant::now(), t.processed, t.net_in, t.net_out));
        while r.samples.len() > SAMPLES + 1 {
            r.samples.pop_front();
        }
    }

    /// Requests per second, and kilobytes per second read and written, over the samples
    /// (Redis's `instantaneous_ops_per_sec`, `instantaneous_input_kbps`, `..._output_kbps`).
    pub fn rates(&self) -> (u64, f64, f64) {
        let r = self.rates.lock();
        let (Some(first), Some(last)) = (r.samples.front(), r.samples.back()) else {
            return (0, 0.0, 0.0);
        };
        let secs = last.0.duration_since(first.0).as_secs_f64();
        if secs <= 0.0 {
            return (0, 0.0, 0.0);
        }
        let per = |a: u64, b: u64| b.saturating_sub(a) as f64 / secs;
        (
            per(first.1, last.1).round() as u64,
            per(first.2, last.2) / 1024.0,
            per(first.3, last.3) / 1024.0,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position(name: &str) -> usize {
        crate::cmd::index(name.as_bytes()).unwrap()
    }

    #[test]
    fn counts_sum_over_threads_and_survive_them() {
        let s = Arc::new(Stats::default());
        let get = position("get");
        s.call(get, 3, false);
        let s2 = Arc::clone(&s);
        std::thread::spawn(move || {
            s2.call(get, 5, true);
            s2.rejected(get);
        })
        .join()
        .unwrap();
        // A new thread registering folds the ended one into the retired sums.
        let s3 = Arc::clone(&s);
        std::thread::spawn(move || s3.processed()).join().unwrap();
        let t = s.totals();
        assert_eq!(t.commands[get], [2, 8, 1, 1]);
        assert_eq!(t.processed, 1);
        assert!(s.threads.lock().len() <= 2);
    }

    #[test]
    fn reset_starts_from_zero() {
        let s = Stats::default();
        let set = position("set");
        s.call(set, 10, false);
        s.error("WRONGTYPE Operation against a key holding the wrong kind of value");
        s.reset();
        assert_eq!(s.totals().commands[set], [0; 4]);
        assert_eq!(s.totals().errors, 0);
        assert!(s.error_codes().is_empty());
        s.call(set, 1, false);
        assert_eq!(s.totals().commands[set], [1, 1, 0, 0]);
    }

    #[test]
    fn error_codes_as_redis_takes_them() {
        assert_eq!(error_code("WRONGTYPE Operation against a key"), "WRONGTYPE");
        assert_eq!(error_code("ERR syntax error"), "ERR");
        assert_eq!(error_code("NOSPACE"), "ERR");
        assert_eq!(error_code(&format!("{} x", "A".repeat(40))), "ERR");
        let s = Stats::default();
        for i in 0..MAX_ERROR_CODES + 10 {
            s.error(&format!("E{i} text"));
        }
        s.error("E0 again");
        let codes = s.error_codes();
        assert_eq!(codes.len(), MAX_ERROR_CODES);
        assert!(codes.contains(&("E0".to_string(), 2)));
        assert_eq!(s.totals().errors, MAX_ERROR_CODES as u64 + 11);
    }
}
