//! W1 (docs/BENCH.md) against bloomkv, fjall and (with `--features rocksdb`) RocksDB in one
//! process run, printing per phase ops/s, read syscalls per op, and bloomkv / peer ratios.
//!
//! `cargo run --release -- [--keys N] [--gets N] [--bits-per-key B] [--monkey]
//! [--peer-bits-per-key B]`
//! (from benches/peers; `--features rocksdb` adds RocksDB, whose C++ build takes ~20 min on
//! 2 cores and needs libclang).

use std::path::Path;
use std::time::Instant;

use kvctl::bench::{KeySpace, ProcIo, SplitMix64, distinct_indices, mix};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// What W1 needs from an engine.
trait Engine {
    fn name(&self) -> &'static str;
    fn put(&mut self, k: &[u8], v: &[u8]) -> Res<()>;
    fn get(&mut self, k: &[u8]) -> Res<Option<Vec<u8>>>;
    /// Reads up to `n` keys from `start` on; returns how many.
    fn scan(&mut self, start: &[u8], n: u64) -> Res<u64>;
    /// Flush and wait for background work.
    fn settle(&mut self) -> Res<()>;
    /// Close and open again.
    fn reopen(&mut self) -> Res<()>;
}

struct Bloomkv {
    dir: std::path::PathBuf,
    opts: bloomkv::Options,
    db: Option<bloomkv::Db>,
}

impl Bloomkv {
    fn db(&self) -> Res<&bloomkv::Db> {
        self.db.as_ref().ok_or_else(|| "closed".into())
    }
}

impl Engine for Bloomkv {
    fn name(&self) -> &'static str {
        "bloomkv"
    }
    fn put(&mut self, k: &[u8], v: &[u8]) -> Res<()> {
        Ok(self.db()?.put(k, v)?)
    }
    fn get(&mut self, k: &[u8]) -> Res<Option<Vec<u8>>> {
        Ok(self.db()?.get(k)?)
    }
    fn scan(&mut self, start: &[u8], n: u64) -> Res<u64> {
        let mut c = 0;
        for kv in self.db()?.scan(start..).take(n as usize) {
            kv?;
            c += 1;
        }
        Ok(c)
    }
    fn settle(&mut self) -> Res<()> {
        let db = self.db()?;
        db.flush()?;
        Ok(db.wait_for_compactions()?)
    }
    fn reopen(&mut self) -> Res<()> {
        self.db = None;
        self.db = Some(bloomkv::Db::open(&self.dir, self.opts.clone())?);
        Ok(())
    }
}

struct Fjall {
    dir: std::path::PathBuf,
    cache: u64,
    /// Bloom bits per key on every level; `None`: fjall's default (0.01% FPR on L0, 10
    /// bits/key below).
    bits: Option<f32>,
    db: Option<(fjall::Database, fjall::Keyspace)>,
}

impl Fjall {
    fn open(dir: &Path, cache: u64, bits: Option<f32>) -> Res<(fjall::Database, fjall::Keyspace)> {
        use fjall::config::{BloomConstructionPolicy, FilterPolicy, FilterPolicyEntry};
        let db = fjall::Database::builder(dir).cache_size(cache).open()?;
        let ks = db.keyspace("w1", || {
            let o = fjall::KeyspaceCreateOptions::default();
            match bits {
                Some(b) => o.filter_policy(FilterPolicy::new([FilterPolicyEntry::Bloom(
                    BloomConstructionPolicy::BitsPerKey(b),
                )])),
                None => o,
            }
        })?;
        Ok((db, ks))
    }
    fn ks(&self) -> Res<&fjall::Keyspace> {
        self.db
            .as_ref()
            .map(|d| &d.1)
            .ok_or_else(|| "closed".into())
    }
}

impl Engine for Fjall {
    fn name(&self) -> &'static str {
        "fjall"
    }
    fn put(&mut self, k: &[u8], v: &[u8]) -> Res<()> {
        Ok(self.ks()?.insert(k, v)?)
    }
    fn get(&mut self, k: &[u8]) -> Res<Option<Vec<u8>>> {
        Ok(self.ks()?.get(k)?.map(|v| v.to_vec()))
    }
    fn scan(&mut self, start: &[u8], n: u64) -> Res<u64> {
        let mut c = 0;
        for g in self.ks()?.range(start.to_vec()..).take(n as usize) {
            g.into_inner()?;
            c += 1;
        }
        Ok(c)
    }
    fn settle(&mut self) -> Res<()> {
        let (db, ks) = self.db.as_ref().ok_or("closed")?;
        ks.rotate_memtable_and_wait()?;
        // fjall has no "wait until compactions are idle": poll its counters.
        let t = Instant::now();
        while (db.outstanding_flushes() > 0 || db.active_compactions() > 0)
            && t.elapsed().as_secs() < 120
        {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Ok(())
    }
    fn reopen(&mut self) -> Res<()> {
        self.db = None;
        self.db = Some(Self::open(&self.dir, self.cache, self.bits)?);
        Ok(())
    }
}

#[cfg(feature = "rocksdb")]
struct Rocks {
    dir: std::path::PathBuf,
    cache: usize,
    bits: f64,
    db: Option<rocksdb::DB>,
}

#[cfg(feature = "rocksdb")]
impl Rocks {
    fn open(dir: &Path, cache: usize, bits: f64) -> Res<rocksdb::DB> {
        let mut o = rocksdb::Options::default();
        o.create_if_missing(true);
        let mut t = rocksdb::BlockBasedOptions::default();
        t.set_block_cache(&rocksdb::Cache::new_lru_cache(cache));
        t.set_bloom_filter(bits, false);
        o.set_block_based_table_factory(&t);
        Ok(rocksdb::DB::open(&o, dir)?)
    }
    fn db(&self) -> Res<&rocksdb::DB> {
        self.db.as_ref().ok_or_else(|| "closed".into())
    }
}

#[cfg(feature = "rocksdb")]
impl Engine for Rocks {
    fn name(&self) -> &'static str {
        "rocksdb"
    }
    fn put(&mut self, k: &[u8], v: &[u8]) -> Res<()> {
        Ok(self.db()?.put(k, v)?)
    }
    fn get(&mut self, k: &[u8]) -> Res<Option<Vec<u8>>> {
        Ok(self.db()?.get(k)?)
    }
    fn scan(&mut self, start: &[u8], n: u64) -> Res<u64> {
        let mode = rocksdb::IteratorMode::From(start, rocksdb::Direction::Forward);
        let mut c = 0;
        for kv in self.db()?.iterator(mode).take(n as usize) {
            kv?;
            c += 1;
        }
        Ok(c)
    }
    fn settle(&mut self) -> Res<()> {
        let db = self.db()?;
        db.flush()?;
        // W1's settle: wait until background flushes and compactions are idle (not a full
        // manual compaction, which would leave RocksDB a one-level tree the others lack).
        let busy = |db: &rocksdb::DB| -> Res<bool> {
            let mut any = false;
            for p in [
                "rocksdb.num-running-compactions",
                "rocksdb.compaction-pending",
                "rocksdb.num-running-flushes",
                "rocksdb.mem-table-flush-pending",
            ] {
                any |= db.property_int_value(p)?.unwrap_or(0) > 0;
            }
            Ok(any)
        };
        let t = Instant::now();
        while busy(db)? && t.elapsed().as_secs() < 120 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Ok(())
    }
    fn reopen(&mut self) -> Res<()> {
        self.db = None;
        self.db = Some(Self::open(&self.dir, self.cache, self.bits)?);
        Ok(())
    }
}

struct PhaseResult {
    name: &'static str,
    ops: u64,
    secs: f64,
    syscr: Option<u64>,
}

impl PhaseResult {
    fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.secs.max(1e-9)
    }
    fn syscr_per_op(&self) -> Option<f64> {
        self.syscr.map(|s| s as f64 / self.ops.max(1) as f64)
    }
}

struct Sizes {
    keys: u64,
    gets: u64,
    scan: u64,
    seed: u64,
}

fn phase(name: &'static str, ops: u64, body: impl FnOnce() -> Res<u64>) -> Res<PhaseResult> {
    let io0 = ProcIo::now();
    let t = Instant::now();
    let done = body()?;
    let secs = t.elapsed().as_secs_f64();
    let syscr = ProcIo::now().zip(io0).map(|(b, a)| b.since(a).syscr);
    Ok(PhaseResult {
        name,
        ops: if done > 0 { done } else { ops },
        secs,
        syscr,
    })
}

fn w1(e: &mut dyn Engine, s: &Sizes) -> Res<Vec<PhaseResult>> {
    let ks = KeySpace::new(s.seed);
    let mut rng = SplitMix64::new(mix(s.seed ^ 0x5731));
    let mut v = [0u8; 100];
    let mut out = Vec::new();
    out.push(phase("fillrandom", s.keys, || {
        for i in 0..s.keys {
            ks.value(i, 0, &mut v);
            e.put(&ks.key(i), &v)?;
        }
        Ok(0)
    })?);
    out.push(phase("flush", 1, || e.settle().map(|_| 0))?);
    out.push(phase("reopen", 1, || e.reopen().map(|_| 0))?);
    let present = distinct_indices(s.keys, s.gets, &mut rng);
    out.push(phase("get_present", present.len() as u64, || {
        for &i in &present {
            ks.value(i, 0, &mut v);
            if e.get(&ks.key(i))?.as_deref() != Some(&v[..]) {
                return Err(format!("{}: wrong value", e.name()).into());
            }
        }
        Ok(0)
    })?);
    out.push(phase("get_absent", s.gets, || {
        for j in 0..s.gets {
            if e.get(&ks.key(s.keys + j))?.is_some() {
                return Err(format!("{}: absent key found", e.name()).into());
            }
        }
        Ok(0)
    })?);
    let start = ks.key(rng.below(s.keys));
    out.push(phase("scan", s.scan, || e.scan(&start, s.scan))?);
    let targets = distinct_indices(s.keys, s.gets, &mut rng);
    out.push(phase("overwrite", targets.len() as u64, || {
        for &i in &targets {
            ks.value(i, 1, &mut v);
            e.put(&ks.key(i), &v)?;
        }
        Ok(0)
    })?);
    Ok(out)
}

fn main() -> Res<()> {
    let mut s = Sizes {
        keys: 1_000_000,
        gets: 200_000,
        scan: 100_000,
        seed: 42,
    };
    let mut bits = 10.0;
    // Filter bits per key for the peers on every level; default: fjall's own default
    // policy, RocksDB at 10.
    let mut peer_bits: Option<f64> = None;
    // bloomkv with Monkey allocation of the same average bits per key.
    let mut monkey = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut v = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--keys" => s.keys = v()?.parse()?,
            "--gets" => s.gets = v()?.parse()?,
            "--scan" => s.scan = v()?.parse()?,
            "--seed" => s.seed = v()?.parse()?,
            "--bits-per-key" => bits = v()?.parse()?,
            "--peer-bits-per-key" => peer_bits = Some(v()?.parse()?),
            "--monkey" => monkey = true,
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    let tmp = tempfile::tempdir()?;
    let cache = 32u64 << 20;
    let opts = bloomkv::Options {
        filter_bits_per_key: bits,
        filter_allocation: if monkey {
            bloomkv::FilterAllocation::Monkey { bits_per_key: bits }
        } else {
            bloomkv::FilterAllocation::Uniform
        },
        block_cache_bytes: cache as usize,
        ..Default::default()
    };
    let dir = tmp.path().join("bloomkv");
    let mut engines: Vec<Box<dyn Engine>> = vec![
        Box::new(Bloomkv {
            db: Some(bloomkv::Db::open(&dir, opts.clone())?),
            dir,
            opts,
        }),
        Box::new(Fjall {
            db: Some(Fjall::open(
                &tmp.path().join("fjall"),
                cache,
                peer_bits.map(|b| b as f32),
            )?),
            dir: tmp.path().join("fjall"),
            cache,
            bits: peer_bits.map(|b| b as f32),
        }),
    ];
    #[cfg(feature = "rocksdb")]
    engines.push(Box::new(Rocks {
        db: Some(Rocks::open(
            &tmp.path().join("rocksdb"),
            cache as usize,
            peer_bits.unwrap_or(10.0),
        )?),
        dir: tmp.path().join("rocksdb"),
        cache: cache as usize,
        bits: peer_bits.unwrap_or(10.0),
    }));
    let mut results = Vec::new();
    for e in engines.iter_mut() {
        eprintln!("W1 on {} ({} keys)", e.name(), s.keys);
        results.push((e.name(), w1(e.as_mut(), &s)?));
    }
    println!(
        "W1, {} keys, 32 MiB cache, bloomkv at {bits} bits/key{}, peers at {}",
        s.keys,
        if monkey { " (Monkey)" } else { "" },
        peer_bits.map_or("their defaults (RocksDB 10 bits/key)".to_string(), |b| {
            format!("{b} bits/key on every level")
        })
    );
    for (name, r) in &results {
        println!("\n{name}");
        println!("{:<12} {:>12} {:>10}", "phase", "ops/s", "syscr/op");
        for p in r {
            println!(
                "{:<12} {:>12.0} {:>10}",
                p.name,
                p.ops_per_sec(),
                p.syscr_per_op().map_or("-".into(), |x| format!("{x:.4}"))
            );
        }
    }
    let (_, ours) = &results[0];
    for (name, theirs) in results.iter().skip(1) {
        println!("\nbloomkv / {name}");
        println!(
            "{:<12} {:>12} {:>16}",
            "phase", "ops/s ratio", "syscr/op ratio"
        );
        for (a, b) in ours.iter().zip(theirs) {
            let sys = match (a.syscr_per_op(), b.syscr_per_op()) {
                (Some(x), Some(y)) if y > 0.0 => format!("{:.3}", x / y),
                _ => "-".into(),
            };
            println!(
                "{:<12} {:>12.2} {:>16}",
                a.name,
                a.ops_per_sec() / b.ops_per_sec(),
                sys
            );
        }
    }
    Ok(())
}
