//! The script cache (SHA1 -> body, as `SCRIPT LOAD` and `EVAL` fill it) and the scripts
//! running now, `EVAL`s and `FCALL`s (for `SCRIPT KILL`, `FUNCTION KILL`, `FUNCTION STATS`
//! and the busy state). In memory only: a restart forgets the scripts, as Redis's does, and
//! clients reload them on `NOSCRIPT` (function libraries are stored: `script::functions`).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use parking_lot::Mutex;

/// The scripts a server knows and runs.
#[derive(Debug, Default)]
pub struct Scripts {
    /// Bodies by lowercase hex SHA1.
    bodies: Mutex<HashMap<[u8; 40], Bytes>>,
    running: Mutex<Vec<Running>>,
    /// `running.len()`, read without the lock (every write command looks at it).
    count: AtomicUsize,
    next_id: AtomicU64,
}

#[derive(Debug)]
struct Running {
    id: u64,
    started: Instant,
    writes: bool,
    kill: Arc<AtomicBool>,
    what: Program,
}

/// What a running script is: Redis keeps `SCRIPT KILL` for `EVAL`s and `FUNCTION KILL` for
/// functions, and `FUNCTION STATS` names the function and its command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Program {
    /// `EVAL`, `EVALSHA` and their `_RO` forms.
    Eval,
    /// `FCALL` or `FCALL_RO` of the function `name`; `command` is the request, as sent.
    Function {
        /// The function's name as registered.
        name: Vec<u8>,
        /// The request that called it.
        command: Vec<Bytes>,
    },
}

impl Program {
    fn is_eval(&self) -> bool {
        matches!(self, Program::Eval)
    }
}

/// What `SCRIPT KILL` or `FUNCTION KILL` found.
#[derive(Debug, PartialEq, Eq)]
pub enum Killed {
    /// Scripts of the kind asked for were running: they stop at their next check.
    Some,
    /// Nothing runs.
    NotBusy,
    /// Only scripts of the other kind run (Redis answers `BUSY` naming the other command).
    OtherKind,
}

/// A running function, as `FUNCTION STATS` shows it.
#[derive(Clone, Debug)]
pub struct RunningFunction {
    /// The function's name.
    pub name: Vec<u8>,
    /// The request that called it.
    pub command: Vec<Bytes>,
    /// How long it has run.
    pub duration: Duration,
}

/// A script registered as running; unregisters it when dropped.
#[derive(Debug)]
pub struct RunGuard<'a> {
    scripts: &'a Scripts,
    id: u64,
    /// Set by `SCRIPT KILL` (or a shutdown): the script stops at its next check.
    pub kill: Arc<AtomicBool>,
}

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        let mut running = self.scripts.running.lock();
        running.retain(|r| r.id != self.id);
        self.scripts.count.store(running.len(), Ordering::Release);
    }
}

/// The lowercase hex SHA1 of `body` (the script's name, as Redis computes it).
pub fn sha1_hex(body: &[u8]) -> [u8; 40] {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let digest = sha1_smol::Sha1::from(body).digest().bytes();
    let mut out = [0u8; 40];
    for (pair, b) in out.chunks_exact_mut(2).zip(digest) {
        pair[0] = DIGITS[usize::from(b >> 4)];
        pair[1] = DIGITS[usize::from(b & 15)];
    }
    out
}

/// `sha` as a cache key: 40 hex digits, lowercased; `None` for anything else.
pub fn key(sha: &[u8]) -> Option<[u8; 40]> {
    let mut k: [u8; 40] = sha.try_into().ok()?;
    k.make_ascii_lowercase();
    Some(k)
}

impl Scripts {
    /// An empty cache.
    pub fn new() -> Scripts {
        Scripts::default()
    }

    /// Remembers `body` under `sha` (its SHA1).
    pub fn insert(&self, sha: [u8; 40], body: Bytes) {
        self.bodies.lock().entry(sha).or_insert(body);
    }

    /// The body of the script named `sha` (any case).
    pub fn get(&self, sha: &[u8]) -> Option<Bytes> {
        self.bodies.lock().get(&key(sha)?).cloned()
    }

    /// Whether the script named `sha` is cached.
    pub fn contains(&self, sha: &[u8]) -> bool {
        key(sha).is_some_and(|k| self.bodies.lock().contains_key(&k))
    }

    /// Forgets every script (`SCRIPT FLUSH`).
    pub fn flush(&self) {
        self.bodies.lock().clear();
    }

    /// Number of cached scripts (INFO's `number_of_cached_scripts`).
    pub fn len(&self) -> usize {
        self.bodies.lock().len()
    }

    /// True when no script is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Registers a script starting to run (`writes`: it may write, so it holds every writer
    /// out).
    pub fn start(&self, writes: bool) -> RunGuard<'_> {
        self.start_program(writes, Program::Eval)
    }

    /// [`Scripts::start`] for a run of `what`.
    pub fn start_program(&self, writes: bool, what: Program) -> RunGuard<'_> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let kill = Arc::new(AtomicBool::new(false));
        let mut running = self.running.lock();
        running.push(Running {
            id,
            started: Instant::now(),
            writes,
            kill: Arc::clone(&kill),
            what,
        });
        self.count.store(running.len(), Ordering::Release);
        drop(running);
        RunGuard {
            scripts: self,
            id,
            kill,
        }
    }

    /// Asks every running script to stop (`SCRIPT KILL`, shutdown); false when none runs.
    pub fn kill_all(&self) -> bool {
        let running = self.running.lock();
        for r in running.iter() {
            r.kill.store(true, Ordering::Relaxed);
        }
        !running.is_empty()
    }

    /// Asks the running scripts of one kind to stop: `EVAL`s (`SCRIPT KILL`, `functions`
    /// false) or functions (`FUNCTION KILL`).
    pub fn kill_kind(&self, functions: bool) -> Killed {
        let running = self.running.lock();
        if running.is_empty() {
            return Killed::NotBusy;
        }
        let mut found = false;
        for r in running.iter().filter(|r| r.what.is_eval() != functions) {
            r.kill.store(true, Ordering::Relaxed);
            found = true;
        }
        if found {
            Killed::Some
        } else {
            Killed::OtherKind
        }
    }

    /// How long the oldest running script that may write has run (`None`: none runs).
    pub fn busy_for(&self) -> Option<Duration> {
        self.busy().map(|(t, _)| t)
    }

    /// [`Scripts::busy_for`], and whether that script is a function (Redis's `BUSY` text
    /// names the command that can kill it).
    pub fn busy(&self) -> Option<(Duration, bool)> {
        if self.running() == 0 {
            return None;
        }
        self.running
            .lock()
            .iter()
            .filter(|r| r.writes)
            .map(|r| (r.started.elapsed(), !r.what.is_eval()))
            .max_by_key(|(t, _)| *t)
    }

    /// Whether an `EVAL` runs now (`FUNCTION STATS` answers `BUSY` then, as Redis does).
    pub fn eval_running(&self) -> bool {
        self.running() > 0 && self.running.lock().iter().any(|r| r.what.is_eval())
    }

    /// The longest-running function, if one runs (`FUNCTION STATS`).
    pub fn running_function(&self) -> Option<RunningFunction> {
        if self.running() == 0 {
            return None;
        }
        self.running
            .lock()
            .iter()
            .filter_map(|r| match &r.what {
                Program::Function { name, command } => Some(RunningFunction {
                    name: name.clone(),
                    command: command.clone(),
                    duration: r.started.elapsed(),
                }),
                Program::Eval => None,
            })
            .max_by_key(|f| f.duration)
    }

    /// Number of scripts running now.
    pub fn running(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_is_redis_script_name() {
        assert_eq!(&sha1_hex(b""), b"da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(
            &sha1_hex(b"return 1"),
            b"e0e1f9fabfc9d4800c877a703b823ac0578ff8db"
        );
    }

    #[test]
    fn lookups_ignore_case_and_kill_reaches_running_scripts() {
        let s = Scripts::new();
        let sha = sha1_hex(b"return 1");
        s.insert(sha, Bytes::from_static(b"return 1"));
        assert!(s.contains(b"E0E1F9FABFC9D4800C877A703B823AC0578FF8DB"));
        assert!(!s.contains(b"e0e1"));
        assert_eq!(s.get(&sha).as_deref(), Some(&b"return 1"[..]));
        assert!(!s.kill_all());
        let g = s.start(true);
        assert!(s.busy_for().is_some());
        assert!(s.kill_all());
        assert!(g.kill.load(Ordering::Relaxed));
        drop(g);
        assert_eq!(s.running(), 0);
        s.flush();
        assert!(s.is_empty());
    }
}
