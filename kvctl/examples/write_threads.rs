//! Concurrent writers: `--threads T` threads each put their share of `--puts N` fresh keys
//! (100-byte values) into a new database, with or without `sync_writes`; prints the wall
//! time, puts per second, the latency quantiles and the longest put over all threads, and
//! the engine's stall counters. For measuring group commit (docs/BENCH.md).
//!
//! ```sh
//! cargo run --release -p kvctl --example write_threads -- --threads 16 --puts 20000 --sync
//! ```
//!
//! Flags: `--threads T` (default 1), `--puts N` (default 100000), `--value-bytes B` (default
//! 100), `--sync` (sync_writes on), `--dir PATH` (default: a temporary directory).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use bloomkv::{Db, Options};
use kvctl::bench::Latencies;

struct Args {
    threads: u64,
    puts: u64,
    value_bytes: usize,
    sync: bool,
    dir: Option<PathBuf>,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        threads: 1,
        puts: 100_000,
        value_bytes: 100,
        sync: false,
        dir: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        let num = |s: String| s.parse::<u64>().map_err(|e| format!("{s:?}: {e}"));
        match flag.as_str() {
            "--threads" => a.threads = num(value()?)?.max(1),
            "--puts" => a.puts = num(value()?)?,
            "--value-bytes" => a.value_bytes = num(value()?)? as usize,
            "--sync" => a.sync = true,
            "--dir" => a.dir = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(a)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse()?;
    let tmp = tempfile::tempdir()?;
    let dir = args.dir.clone().unwrap_or_else(|| tmp.path().join("db"));
    let db = Db::open(
        &dir,
        Options {
            sync_writes: args.sync,
            ..Options::default()
        },
    )?;
    let per_thread = args.puts / args.threads;
    let value = Arc::new(vec![0x5au8; args.value_bytes]);
    let start = Instant::now();
    let workers: Vec<_> = (0..args.threads)
        .map(|t| {
            let db = db.clone();
            let value = Arc::clone(&value);
            std::thread::spawn(move || -> bloomkv::Result<Latencies> {
                let mut lat = Latencies::with_capacity(per_thread as usize);
                for i in 0..per_thread {
                    // Keys spread over the key space (a multiplicative hash of the index).
                    let n = (t * per_thread + i).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                    let began = Instant::now();
                    db.put(n.to_be_bytes(), value.as_slice())?;
                    lat.record(began.elapsed().as_nanos());
                }
                Ok(lat)
            })
        })
        .collect();
    let mut all = Latencies::with_capacity(args.puts as usize);
    for w in workers {
        let lat = w.join().map_err(|_| "a writer thread panicked")??;
        all.extend(&lat);
    }
    let secs = start.elapsed().as_secs_f64();
    let done = per_thread * args.threads;
    let s = db.stats();
    let q = |all: &mut Latencies, q: f64| all.quantile(q).unwrap_or(0) as f64 / 1e3;
    println!(
        "threads {} sync_writes {} puts {done}: {secs:.3} s, {:.0} puts/s; latency p50 {:.1} us, \
         p99 {:.1} us, p99.9 {:.1} us, longest {:.1} us; stalls {} us (longest {} us)",
        args.threads,
        args.sync,
        done as f64 / secs,
        q(&mut all, 0.5),
        q(&mut all, 0.99),
        q(&mut all, 0.999),
        q(&mut all, 1.0),
        s.stall_micros,
        s.longest_stall_micros,
    );
    Ok(())
}
