//! The harness's workload and its verdict: concurrent clients doing SET/GET, INCR/GET,
//! SADD/SMEMBERS and BF.ADD/BF.EXISTS on a few hot keys (fresh ones every epoch, so each
//! key's history stays small enough to check), every operation recorded with its call and
//! return times (or as unknown); then final reads through every node, the explicit
//! lost-write check, and the per-key linearizability check.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bloomkv_cluster::seed_for;
use bloomkv_cluster_testkit::linearizability::{
    Operation, Recorder, RedisModel, RedisOp, RedisOut, Verdict, check,
};

use crate::resp::{Conn, Value};

/// How long one set of hot keys is used.
pub const EPOCH: Duration = Duration::from_secs(10);
/// Hot keys of each kind per epoch.
const KEYS: u64 = 2;
/// Search steps allowed per key.
const BUDGET: u64 = 30_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Str,
    Ctr,
    Set,
    Bf,
}

fn kind_of(key: &[u8]) -> Kind {
    match key.split(|&b| b == b':').next() {
        Some(b"str") => Kind::Str,
        Some(b"ctr") => Kind::Ctr,
        Some(b"set") => Kind::Set,
        _ => Kind::Bf,
    }
}

fn args(key: &[u8], op: &RedisOp) -> Vec<Vec<u8>> {
    let k = key.to_vec();
    match op {
        RedisOp::Set(v) => vec![b"SET".to_vec(), k, v.clone()],
        RedisOp::Get => vec![b"GET".to_vec(), k],
        RedisOp::Incr => vec![b"INCR".to_vec(), k],
        RedisOp::SAdd(m) => vec![b"SADD".to_vec(), k, m.clone()],
        RedisOp::SMembers => vec![b"SMEMBERS".to_vec(), k],
        RedisOp::BfAdd(x) => vec![b"BF.ADD".to_vec(), k, x.clone()],
        RedisOp::BfExists(x) => vec![b"BF.EXISTS".to_vec(), k, x.clone()],
        other => panic!("{other:?}"),
    }
}

/// The output a reply stands for; `Err` for a reply no correct server gives.
fn output(op: &RedisOp, v: &Value) -> Result<RedisOut, String> {
    Ok(match (op, v) {
        (RedisOp::Set(_), Value::Status(s)) if s == "OK" => RedisOut::Ok,
        (RedisOp::Get, Value::Bulk(b)) => RedisOut::Value(b.clone()),
        (
            RedisOp::Incr | RedisOp::SAdd(_) | RedisOp::BfAdd(_) | RedisOp::BfExists(_),
            Value::Int(n),
        ) => RedisOut::Int(*n),
        (RedisOp::SMembers, Value::Array(Some(items))) => RedisOut::Members(
            items
                .iter()
                .map(|i| match i {
                    Value::Bulk(Some(b)) => Ok(b.clone()),
                    other => Err(format!("SMEMBERS item {other:?}")),
                })
                .collect::<Result<BTreeSet<_>, _>>()?,
        ),
        _ => return Err(format!("{op:?} answered {v:?}")),
    })
}

/// Counts of what happened to the clients' operations.
#[derive(Debug, Default)]
pub struct Counts {
    pub ok: AtomicU64,
    pub unknown: AtomicU64,
    pub not_applied: AtomicU64,
}

pub struct Workload {
    rec: Recorder<RedisOp, RedisOut>,
    /// Operations answered -CLUSTERDOWN: certainly not applied, left out of the history.
    dropped: Mutex<HashSet<usize>>,
    unexpected: Mutex<Vec<String>>,
    pub counts: Counts,
    ports: Vec<u16>,
    start: Instant,
    timeout: Duration,
}

/// One operation on a connection (made on demand to a random node); the outcome is
/// recorded.
fn run_op(w: &Workload, conn: &mut Option<Conn>, client: u64, port: u16, key: &[u8], op: RedisOp) {
    if conn.is_none() {
        match Conn::connect(port, w.timeout) {
            Ok(c) => *conn = Some(c),
            Err(_) => {
                std::thread::sleep(Duration::from_millis(50));
                return;
            }
        }
    }
    let Some(c) = conn.as_mut() else { return };
    let id = w.rec.call(client, key, op.clone());
    match c.call(&args(key, &op)) {
        Ok(Value::Error(e)) if e.starts_with("CLUSTERDOWN") => {
            w.dropped.lock().unwrap().insert(id);
            w.rec.ret(id, None);
            w.counts.not_applied.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(Value::Error(e)) if e.starts_with("TRYAGAIN") => {
            w.rec.ret(id, None);
            w.counts.unknown.fetch_add(1, Ordering::Relaxed);
        }
        Ok(v) => match output(&op, &v) {
            Ok(out) => {
                w.rec.ret(id, Some(out));
                w.counts.ok.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                w.unexpected.lock().unwrap().push(e);
                w.rec.ret(id, None);
            }
        },
        Err(_) => {
            w.rec.ret(id, None);
            w.counts.unknown.fetch_add(1, Ordering::Relaxed);
            *conn = None;
        }
    }
}

impl Workload {
    /// A workload on the client ports `ports`; a client gives up on a reply (outcome
    /// unknown) after `timeout`.
    pub fn new(ports: Vec<u16>, timeout: Duration) -> Arc<Workload> {
        Arc::new(Workload {
            rec: Recorder::new(),
            dropped: Mutex::new(HashSet::new()),
            unexpected: Mutex::new(Vec::new()),
            counts: Counts::default(),
            ports,
            start: Instant::now(),
            timeout,
        })
    }

    /// Starts `n` client threads that run until `stop` is set.
    pub fn clients(
        self: &Arc<Self>,
        n: u64,
        stop: &Arc<AtomicBool>,
    ) -> Vec<std::thread::JoinHandle<()>> {
        (0..n)
            .map(|client| {
                let (w, stop) = (Arc::clone(self), Arc::clone(stop));
                std::thread::spawn(move || {
                    let mut conn = None;
                    let mut port = w.ports[client as usize % w.ports.len()];
                    let mut i = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        i += 1;
                        let r = seed_for(client << 32 | i);
                        if conn.is_none() {
                            port = w.ports[(r >> 40) as usize % w.ports.len()];
                        }
                        let epoch = w.start.elapsed().as_millis() / EPOCH.as_millis();
                        let k = (r >> 8) % KEYS;
                        let read = (r >> 16).is_multiple_of(3);
                        let pick = (r >> 20) % 100;
                        let (key, op) = match r % 4 {
                            0 => (
                                format!("str:{epoch}:{k}"),
                                if read {
                                    RedisOp::Get
                                } else {
                                    RedisOp::Set(format!("{client}-{i}").into_bytes())
                                },
                            ),
                            1 => (
                                format!("ctr:{epoch}:{k}"),
                                if read { RedisOp::Get } else { RedisOp::Incr },
                            ),
                            2 => (
                                format!("set:{epoch}:{k}"),
                                if read {
                                    RedisOp::SMembers
                                } else {
                                    RedisOp::SAdd(format!("m{}", pick % 24).into_bytes())
                                },
                            ),
                            _ => (
                                format!("bf:{epoch}:{k}"),
                                if read {
                                    RedisOp::BfExists(format!("i{pick}").into_bytes())
                                } else {
                                    RedisOp::BfAdd(format!("i{pick}").into_bytes())
                                },
                            ),
                        };
                        run_op(&w, &mut conn, client, port, key.as_bytes(), op);
                    }
                })
            })
            .collect()
    }

    /// The history without the operations certainly not applied.
    fn history(&self) -> Vec<Operation<RedisOp, RedisOut>> {
        let dropped = self.dropped.lock().unwrap();
        self.rec
            .history()
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !dropped.contains(i))
            .map(|(_, op)| op)
            .collect()
    }

    /// After the faults are healed: reads every key through every node (recorded too),
    /// checks that no acknowledged write is lost, and checks the whole history for
    /// linearizability, key by key. Returns the report; panics with the evidence on a
    /// violation or a lost write.
    pub fn verify(&self, dump_dir: &std::path::Path) -> Report {
        let unexpected = self.unexpected.lock().unwrap().clone();
        assert!(
            unexpected.is_empty(),
            "replies no correct server gives: {unexpected:?}"
        );
        let before = self.history();
        let mut keys: BTreeMap<Vec<u8>, Vec<&Operation<RedisOp, RedisOut>>> = BTreeMap::new();
        for op in &before {
            keys.entry(op.key.clone()).or_default().push(op);
        }
        // Final reads through every node; an answer is required now (the faults are over).
        for (n, &port) in self.ports.iter().enumerate() {
            let client = 10_000 + n as u64;
            let mut conn =
                Conn::connect(port, Duration::from_secs(10)).expect("connect for final reads");
            for (key, ops) in &keys {
                let mut reads = vec![match kind_of(key) {
                    Kind::Str | Kind::Ctr => RedisOp::Get,
                    Kind::Set => RedisOp::SMembers,
                    Kind::Bf => RedisOp::Get, // placeholder, replaced below
                }];
                if kind_of(key) == Kind::Bf {
                    reads = ops
                        .iter()
                        .filter_map(|o| match &o.input {
                            RedisOp::BfAdd(x) => Some(x.clone()),
                            _ => None,
                        })
                        .collect::<BTreeSet<_>>()
                        .into_iter()
                        .map(RedisOp::BfExists)
                        .collect();
                }
                for op in reads {
                    let id = self.rec.call(client, key, op.clone());
                    let v = conn.call(&args(key, &op)).expect("final read");
                    let out = output(&op, &v).unwrap_or_else(|e| panic!("final read: {e}"));
                    self.rec.ret(id, Some(out));
                }
            }
        }
        let history = self.history();
        let lost = lost_writes(&history);
        let t = Instant::now();
        let verdict = check(&RedisModel, &history, BUDGET);
        let check_secs = t.elapsed().as_secs_f64();
        if verdict != Verdict::Ok || !lost.is_empty() {
            let path = dump_dir.join("history.txt");
            let text: String = history.iter().map(|o| format!("{o:?}\n")).collect();
            let _ = std::fs::write(&path, text);
            let key = match &verdict {
                Verdict::Illegal { key, .. } | Verdict::Unknown { key } => key.clone(),
                Verdict::Ok => Vec::new(),
            };
            let of_key: Vec<String> = history
                .iter()
                .filter(|o| o.key == key)
                .take(60)
                .map(|o| format!("{o:?}"))
                .collect();
            panic!(
                "verdict {verdict:?}; lost writes {lost:?}; history in {} ({} ops); first ops of the key:\n{}",
                path.display(),
                history.len(),
                of_key.join("\n")
            );
        }
        let per_key = history
            .iter()
            .fold(BTreeMap::<&[u8], usize>::new(), |mut m, o| {
                *m.entry(&o.key).or_default() += 1;
                m
            });
        Report {
            ops: before.len(),
            ok: self.counts.ok.load(Ordering::Relaxed),
            unknown: self.counts.unknown.load(Ordering::Relaxed),
            not_applied: self.counts.not_applied.load(Ordering::Relaxed),
            keys: per_key.len(),
            max_ops_per_key: per_key.values().copied().max().unwrap_or(0),
            check_secs,
        }
    }
}

/// The longest wait for an acknowledged operation after a heal.
#[derive(Debug, Default)]
pub struct Outages {
    pub longest: Duration,
    /// When that heal was, into the run.
    pub at: Duration,
}

impl Workload {
    /// Return times of the clients' acknowledged operations, sorted, since the start.
    fn acks(&self) -> Vec<Duration> {
        let mut t: Vec<Duration> = self
            .rec
            .history()
            .iter()
            .filter(|o| o.client < 10_000 && o.output.is_some())
            .filter_map(|o| o.ret.map(Duration::from_micros))
            .collect();
        t.sort();
        t
    }

    /// For each heal, the wait until the next acknowledged operation returned (until now
    /// for a heal nothing followed); the longest of them.
    pub fn outages_after(&self, heals: &[Instant]) -> Outages {
        let acks = self.acks();
        let now = self.start.elapsed();
        let mut worst = Outages::default();
        for h in heals {
            let at = h.saturating_duration_since(self.start);
            let next = acks.iter().find(|&&a| a >= at).copied();
            let wait = next.unwrap_or(now).saturating_sub(at);
            if wait > worst.longest {
                worst = Outages { longest: wait, at };
            }
        }
        worst
    }

    /// The longest stretch between two acknowledged operations (faults included).
    pub fn longest_gap(&self) -> Duration {
        self.acks()
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or_default()
    }
}

/// What a run did.
pub struct Report {
    pub ops: usize,
    pub ok: u64,
    pub unknown: u64,
    pub not_applied: u64,
    pub keys: usize,
    pub max_ops_per_key: usize,
    pub check_secs: f64,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} operations ({} answered, {} unknown outcome, {} not applied: -CLUSTERDOWN) on {} keys (at most {} operations per key with the final reads), checked in {:.1} s",
            self.ops,
            self.ok,
            self.unknown,
            self.not_applied,
            self.keys,
            self.max_ops_per_key,
            self.check_secs
        )
    }
}

/// Acknowledged writes missing from the final reads (which come last in the history):
/// an acknowledged SADD's member not in the final SMEMBERS, an acknowledged BF.ADD's item
/// the final BF.EXISTS calls absent, fewer increments in a counter than INCRs acknowledged,
/// a string whose final value was written before an acknowledged SET that followed it.
pub fn lost_writes(history: &[Operation<RedisOp, RedisOut>]) -> Vec<String> {
    let mut lost = Vec::new();
    let mut by_key: BTreeMap<&[u8], Vec<&Operation<RedisOp, RedisOut>>> = BTreeMap::new();
    for o in history {
        by_key.entry(&o.key).or_default().push(o);
    }
    for (key, ops) in by_key {
        let finals: Vec<_> = ops.iter().filter(|o| o.client >= 10_000).collect();
        let name = String::from_utf8_lossy(key);
        for f in &finals {
            match (&f.input, &f.output) {
                (RedisOp::SMembers, Some(RedisOut::Members(m))) => {
                    for o in &ops {
                        if let (RedisOp::SAdd(x), Some(_)) = (&o.input, &o.output)
                            && !m.contains(x)
                        {
                            lost.push(format!("{name}: SADD {}", String::from_utf8_lossy(x)));
                        }
                    }
                }
                (RedisOp::BfExists(x), Some(RedisOut::Int(0)))
                    if ops.iter().any(
                        |o| matches!((&o.input, &o.output), (RedisOp::BfAdd(y), Some(_)) if y == x),
                    ) =>
                {
                    lost.push(format!("{name}: BF.ADD {}", String::from_utf8_lossy(x)));
                }
                (RedisOp::Get, Some(RedisOut::Value(v))) if kind_of(key) == Kind::Ctr => {
                    let acked = ops
                        .iter()
                        .filter(|o| {
                            o.client < 10_000 && o.input == RedisOp::Incr && o.output.is_some()
                        })
                        .count() as i64;
                    let have = v
                        .as_ref()
                        .and_then(|v| std::str::from_utf8(v).ok()?.parse::<i64>().ok())
                        .unwrap_or(0);
                    if have < acked {
                        lost.push(format!("{name}: {have} < {acked} acknowledged INCRs"));
                    }
                }
                (RedisOp::Get, Some(RedisOut::Value(v))) => {
                    let Some(v) = v else {
                        if ops
                            .iter()
                            .any(|o| matches!(o.input, RedisOp::Set(_)) && o.output.is_some())
                        {
                            lost.push(format!("{name}: nil after acknowledged SETs"));
                        }
                        continue;
                    };
                    let writer = ops
                        .iter()
                        .find(|o| matches!(&o.input, RedisOp::Set(x) if x == v));
                    match writer {
                        None => lost.push(format!("{name}: value nobody wrote")),
                        Some(w) => {
                            if let Some(ret) = w.ret
                                && let Some(later) = ops.iter().find(|o| {
                                    matches!(o.input, RedisOp::Set(_))
                                        && o.output.is_some()
                                        && o.call > ret
                                })
                            {
                                lost.push(format!(
                                    "{name}: final value written before acknowledged {later:?}"
                                ));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
    lost
}
