//! One run of W1 or W2, as named steps in their order: fill, flush and settle, reopen (cold
//! with `evict_page_cache`), present gets, absent gets (then traced), scan, overwrite; then
//! the report. Each timed step is one [`Phase`].

use std::time::Instant;

use bloomkv::{Db, Error, Result, Stats};

use super::{
    AbsentReport, EngineDelta, KEY_BYTES, KeySpace, Latencies, Memory, Phase, ProcIo, SplitMix64,
    W1Config, W1Report, WriteBreakdown, distinct_indices, evict_dir, explain_absent, level_reports,
    mix,
};

/// Runs W1 (or W2) as `cfg` says.
///
/// # Errors
/// [`Error::InvalidArgument`] if `cfg.dir` holds files; any engine error; a `Corruption`
/// error if a lookup returns a wrong value.
pub fn run_w1(cfg: &W1Config) -> Result<W1Report> {
    check_dir(cfg)?;
    let mut run = Run {
        cfg,
        ks: KeySpace::new(cfg.seed),
        rng: SplitMix64::new(mix(cfg.seed ^ 0x5731)),
        value: vec![0u8; cfg.value_bytes],
        phases: Vec::new(),
    };
    let db = Db::open(&cfg.dir, cfg.options())?;
    let io_before_fill = ProcIo::now();
    run.fill(&db)?;
    run.flush_and_settle(&db)?;
    let fill_io = ProcIo::now().zip(io_before_fill).map(|(b, a)| b.since(a));
    let settled = db.stats();
    let bytes_on_disk = dir_bytes(&cfg.dir)?;
    let db = run.reopen(db)?;
    run.get_present(&db)?;
    let absent = run.get_absent(&db)?;
    run.scan(&db)?;
    run.overwrite(&db)?;
    let after = db.stats();
    Ok(run.report(
        &settled,
        &after,
        absent,
        fill_io.map_or(0, |io| io.write_bytes),
        bytes_on_disk,
    ))
}

/// What the steps of one run share: the configuration, the key space, the random choices
/// (drawn in step order, so a seed gives the same run), a value buffer, the phases so far.
struct Run<'a> {
    cfg: &'a W1Config,
    ks: KeySpace,
    rng: SplitMix64,
    value: Vec<u8>,
    phases: Vec<Phase>,
}

impl Run<'_> {
    /// fillrandom: every key once, in the key space's random order.
    fn fill(&mut self, db: &Db) -> Result<()> {
        let (cfg, ks, value) = (self.cfg, &self.ks, &mut self.value);
        let n = cfg.keys;
        let lat = Latencies::with_capacity(n as usize);
        self.phases
            .push(timed(db, "fillrandom", n, Some(lat), |lat| {
                cfg.tick("fillrandom", 0, n);
                for i in 0..n {
                    cfg.fill_value(ks, i, 0, value);
                    let t = Instant::now();
                    db.put(ks.key(i), &value[..])?;
                    record(lat, t);
                    cfg.tick("fillrandom", i + 1, n);
                }
                Ok(())
            })?);
        Ok(())
    }

    /// flush: the memtable out, then every compaction the tree wants.
    fn flush_and_settle(&mut self, db: &Db) -> Result<()> {
        let cfg = self.cfg;
        self.phases.push(timed(db, "flush", 1, None, |_| {
            cfg.tick("flush", 0, 1);
            db.flush()?;
            db.wait_for_compactions()?;
            cfg.tick("flush", 1, 1);
            Ok(())
        })?);
        Ok(())
    }

    /// reopen: closes `db` and opens it again (the page cache evicted first when asked); the
    /// phase's counters are the new handle's, which start at 0.
    fn reopen(&mut self, db: Db) -> Result<Db> {
        let cfg = self.cfg;
        cfg.tick("reopen", 0, 1);
        let t0 = Instant::now();
        let io0 = ProcIo::now();
        Memory::reset_peak();
        drop(db);
        if cfg.evict_page_cache {
            evict_dir(&cfg.dir)?;
        }
        let db = Db::open(&cfg.dir, cfg.options())?;
        cfg.tick("reopen", 1, 1);
        self.phases.push(Phase {
            name: "reopen",
            ops: 1,
            elapsed: t0.elapsed(),
            p50_ns: None,
            p99_ns: None,
            p999_ns: None,
            max_ns: None,
            engine: EngineDelta::between(&db.stats(), &db.stats()),
            io: ProcIo::now().zip(io0).map(|(b, a)| b.since(a)),
            memory: Memory::now(),
        });
        Ok(db)
    }

    /// get_present: distinct present keys, each answer checked against its value.
    fn get_present(&mut self, db: &Db) -> Result<()> {
        let present = distinct_indices(self.cfg.keys, self.cfg.get_present, &mut self.rng);
        let (cfg, ks, value) = (self.cfg, &self.ks, &mut self.value);
        let lat = Latencies::with_capacity(present.len());
        let total = present.len() as u64;
        self.phases
            .push(timed(db, "get_present", total, Some(lat), |lat| {
                for (done, &i) in present.iter().enumerate() {
                    cfg.tick("get_present", done as u64, total);
                    let key = ks.key(i);
                    let t = Instant::now();
                    let got = db.get(key)?;
                    record(lat, t);
                    cfg.fill_value(ks, i, 0, value);
                    if got.as_deref() != Some(&value[..]) {
                        return Err(wrong_answer(cfg, &key, "get_present"));
                    }
                }
                cfg.tick("get_present", total, total);
                Ok(())
            })?);
        Ok(())
    }

    /// get_absent: keys past the key space, each answer checked to be "absent"; then traced
    /// lookups (outside the timed phase). Returns the report and the tables probed per lookup
    /// per level.
    fn get_absent(&mut self, db: &Db) -> Result<(AbsentReport, Vec<f64>)> {
        let (cfg, ks) = (self.cfg, &self.ks);
        let n = cfg.keys;
        let lat = Latencies::with_capacity(cfg.get_absent as usize);
        let phase = timed(db, "get_absent", cfg.get_absent, Some(lat), |lat| {
            for j in 0..cfg.get_absent {
                cfg.tick("get_absent", j, cfg.get_absent);
                let key = ks.key(n + j);
                let t = Instant::now();
                let got = db.get(key)?;
                record(lat, t);
                if got.is_some() {
                    return Err(wrong_answer(cfg, &key, "get_absent"));
                }
            }
            cfg.tick("get_absent", cfg.get_absent, cfg.get_absent);
            Ok(())
        })?;
        let absent = explain_absent(cfg, db, ks, &phase)?;
        self.phases.push(phase);
        Ok(absent)
    }

    /// scan: `cfg.scan` entries from a random key on (wrapping to the start), their sizes
    /// checked; the phase counts the entries read.
    fn scan(&mut self, db: &Db) -> Result<()> {
        let cfg = self.cfg;
        let start = self.ks.key(self.rng.below(cfg.keys.max(1)));
        let mut scanned = 0u64;
        let mut phase = timed(db, "scan", cfg.scan, None, |_| {
            cfg.tick("scan", 0, cfg.scan);
            // From a random key to the end, then (if that held fewer keys) from the beginning.
            for kv in db.scan(start..).chain(db.scan(..start)) {
                if scanned >= cfg.scan {
                    break;
                }
                let (k, v) = kv?;
                if k.len() != KEY_BYTES || v.len() != cfg.value_bytes {
                    return Err(wrong_answer(cfg, &k, "scan"));
                }
                scanned += 1;
                cfg.tick("scan", scanned, cfg.scan);
            }
            cfg.tick("scan", cfg.scan, cfg.scan);
            Ok(())
        })?;
        phase.ops = scanned;
        self.phases.push(phase);
        Ok(())
    }

    /// overwrite: distinct present keys written again with new values.
    fn overwrite(&mut self, db: &Db) -> Result<()> {
        let targets = distinct_indices(self.cfg.keys, self.cfg.overwrite, &mut self.rng);
        let (cfg, ks, value) = (self.cfg, &self.ks, &mut self.value);
        let lat = Latencies::with_capacity(targets.len());
        let total = targets.len() as u64;
        self.phases
            .push(timed(db, "overwrite", total, Some(lat), |lat| {
                for (done, &i) in targets.iter().enumerate() {
                    cfg.tick("overwrite", done as u64, total);
                    cfg.fill_value(ks, i, 1, value);
                    let t = Instant::now();
                    db.put(ks.key(i), &value[..])?;
                    record(lat, t);
                }
                cfg.tick("overwrite", total, total);
                Ok(())
            })?);
        Ok(())
    }

    /// The report: the phases, the settled tree (`settled`, taken before the reopen) and its
    /// filters, write and space amplification, stalls over both handles' lives (`after` is
    /// the reopened handle's stats at the end).
    fn report(
        self,
        settled: &Stats,
        after: &Stats,
        absent: (AbsentReport, Vec<f64>),
        fill_write_bytes: u64,
        bytes_on_disk: u64,
    ) -> W1Report {
        let cfg = self.cfg;
        let phases = self.phases;
        let levels = level_reports(settled, &absent.1, &phases);
        let entries: u64 = settled.levels.iter().map(|l| l.entries).sum();
        let filter_bytes: u64 = settled.levels.iter().map(|l| l.filter_bytes).sum();
        let user_bytes = cfg.keys * (KEY_BYTES + cfg.value_bytes) as u64;
        let ratio = |x: u64| {
            if user_bytes > 0 {
                x as f64 / user_bytes as f64
            } else {
                0.0
            }
        };
        let longest_put_ns = phases
            .iter()
            .filter(|p| p.name == "fillrandom" || p.name == "overwrite")
            .filter_map(|p| p.max_ns)
            .max()
            .unwrap_or(0);
        W1Report {
            workload: cfg.workload.name(),
            compression: cfg.compression.to_string(),
            device_write_amplification: ratio(fill_write_bytes),
            bytes_on_disk,
            space_amplification: ratio(bytes_on_disk),
            tables: settled.tables.len() as u64,
            stall_micros: after.stall_micros + settled.stall_micros,
            stop_micros: after.write_stop_micros + settled.write_stop_micros,
            longest_stall_micros: after.longest_stall_micros.max(settled.longest_stall_micros),
            longest_put_ns,
            label: cfg.label(),
            keys: cfg.keys,
            bits_per_key: cfg.bits_per_key,
            monkey: cfg.monkey,
            filter_kinds: cfg.filter_kinds_label(),
            block_cache_bytes: cfg.block_cache_bytes,
            mmap_reads: cfg.mmap_reads,
            dynamic_levels: cfg.dynamic_levels,
            seed: cfg.seed,
            phases,
            levels,
            filter_bytes,
            filter_bits_per_key: if entries > 0 {
                (filter_bytes * 8) as f64 / entries as f64
            } else {
                0.0
            },
            write_amplification: settled.write_amplification(),
            writes: WriteBreakdown::of(settled, user_bytes),
            absent: absent.0,
        }
    }
}

/// Measures one phase: counters before and after, wall-clock time around `body`.
fn timed(
    db: &Db,
    name: &'static str,
    ops: u64,
    mut lat: Option<Latencies>,
    body: impl FnOnce(&mut Option<Latencies>) -> Result<()>,
) -> Result<Phase> {
    let s0 = db.stats();
    Memory::reset_peak();
    let io0 = ProcIo::now();
    let t0 = Instant::now();
    body(&mut lat)?;
    let elapsed = t0.elapsed();
    let io = ProcIo::now().zip(io0).map(|(b, a)| b.since(a));
    let memory = Memory::now();
    let s1 = db.stats();
    let mut q = |q: f64| lat.as_mut().and_then(|l| l.quantile(q));
    let (p50_ns, p99_ns, p999_ns, max_ns) = (q(0.5), q(0.99), q(0.999), q(1.0));
    Ok(Phase {
        name,
        ops,
        elapsed,
        p50_ns,
        p99_ns,
        p999_ns,
        max_ns,
        engine: EngineDelta::between(&s0, &s1),
        io,
        memory,
    })
}

fn check_dir(cfg: &W1Config) -> Result<()> {
    let occupied = std::fs::read_dir(&cfg.dir).is_ok_and(|mut d| d.next().is_some());
    if occupied {
        return Err(Error::InvalidArgument(format!(
            "{} is not empty; {} needs a fresh database directory",
            cfg.dir.display(),
            cfg.workload.name()
        )));
    }
    Ok(())
}

/// Bytes of every file directly in `dir`.
fn dir_bytes(dir: &std::path::Path) -> Result<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let meta = entry
            .and_then(|e| e.metadata())
            .map_err(|e| Error::io(dir, e))?;
        if meta.is_file() {
            total += meta.len();
        }
    }
    Ok(total)
}

fn record(lat: &mut Option<Latencies>, since: Instant) {
    if let Some(l) = lat {
        l.record(since.elapsed().as_nanos());
    }
}

fn wrong_answer(cfg: &W1Config, key: &[u8], phase: &str) -> Error {
    Error::Corruption {
        file: cfg.dir.clone(),
        offset: 0,
        why: format!(
            "{} {phase}: wrong answer for key {}",
            cfg.workload.name(),
            String::from_utf8_lossy(key)
        ),
    }
}
