//! W1 or W2 (docs/WORKLOAD.md) against bloomkv, fjall and (with `--features rocksdb`)
//! RocksDB in one process run, printing per phase ops/s, read syscalls per op, and bloomkv /
//! peer ratios (W2 adds latency percentiles, device bytes per op, write and space
//! amplification and stalls).
//!
//! `cargo run --release -- [--workload w1|w2] [--keys N] [--gets N] [--scan N]
//! [--overwrite N] [--bits-per-key B] [--monkey] [--peer-bits-per-key B]
//! [--compression none|lz4|zstd] [--memtable-mib N] [--table-mib N] [--level1-mib N]
//! [--filter default|bloom|ribbon] [--mmap-reads] [--only bloomkv,fjall,rocksdb]`
//! (from benches/peers; `--features rocksdb` adds RocksDB, whose C++ build takes ~20 min on
//! 2 cores and needs libclang).

mod engines;
mod w1;
mod w2;

use engines::{Bloomkv, Engine, Fjall, Res};

/// The command line.
struct Args {
    w2: bool,
    keys: Option<u64>,
    gets: u64,
    scan: Option<u64>,
    overwrite: u64,
    seed: u64,
    bits: f64,
    /// Filter bits per key for the peers on every level; `None`: fjall's own default
    /// policy, RocksDB at 10.
    peer_bits: Option<f64>,
    /// bloomkv with Monkey allocation of the same average bits per key.
    monkey: bool,
    /// bloomkv's block compression; `None`: none for W1, the engine's default (LZ4) for W2.
    compression: Option<bloomkv::Compression>,
    /// bloomkv's memtable, target table and level-1 sizes in MiB (engine defaults if unset).
    memtable_mib: Option<usize>,
    table_mib: Option<u64>,
    level1_mib: Option<u64>,
    /// Run only the engines named (comma-separated); all when unset.
    only: Option<Vec<String>>,
    /// bloomkv's filter kind on every level (`--filter bloom|ribbon`); `None`: its default
    /// (`LeveledPolicy`: Bloom on level 0, Ribbon below).
    filter: Option<&'static str>,
    /// bloomkv (`Options::mmap_reads`) and RocksDB (`allow_mmap_reads`) read table files through
    /// memory maps; fjall has no such mode.
    mmap: bool,
}

fn parse_args() -> Res<Args> {
    let mut a = Args {
        w2: false,
        keys: None,
        gets: 200_000,
        scan: None,
        overwrite: 1_000_000,
        seed: 42,
        bits: 10.0,
        peer_bits: None,
        monkey: false,
        compression: None,
        memtable_mib: None,
        table_mib: None,
        level1_mib: None,
        only: None,
        filter: None,
        mmap: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut v = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--workload" => {
                a.w2 = match v()?.as_str() {
                    "w1" => false,
                    "w2" => true,
                    w => return Err(format!("unknown workload {w} (w1 or w2)").into()),
                }
            }
            "--keys" => a.keys = Some(v()?.parse()?),
            "--gets" => a.gets = v()?.parse()?,
            "--scan" => a.scan = Some(v()?.parse()?),
            "--overwrite" => a.overwrite = v()?.parse()?,
            "--seed" => a.seed = v()?.parse()?,
            "--bits-per-key" => a.bits = v()?.parse()?,
            "--peer-bits-per-key" => a.peer_bits = Some(v()?.parse()?),
            "--monkey" => a.monkey = true,
            "--mmap-reads" => a.mmap = true,
            "--compression" => {
                let c = v()?;
                a.compression = Some(c.parse().map_err(|e| format!("--compression {c}: {e:?}"))?);
            }
            "--memtable-mib" => a.memtable_mib = Some(v()?.parse()?),
            "--table-mib" => a.table_mib = Some(v()?.parse()?),
            "--level1-mib" => a.level1_mib = Some(v()?.parse()?),
            "--filter" => {
                a.filter = match v()?.as_str() {
                    "default" => None,
                    "bloom" => Some("Bloom"),
                    "ribbon" => Some("Ribbon"),
                    other => {
                        return Err(format!("--filter {other}: default, bloom or ribbon").into());
                    }
                }
            }
            "--only" => a.only = Some(v()?.split(',').map(str::to_string).collect()),
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    Ok(a)
}

fn main() -> Res<()> {
    let a = parse_args()?;
    let cache: u64 = if a.w2 { 64 << 20 } else { 32 << 20 };
    let mut opts = bloomkv::Options {
        filter_bits_per_key: a.bits,
        filter_allocation: if a.monkey {
            bloomkv::FilterAllocation::Monkey {
                bits_per_key: a.bits,
            }
        } else {
            bloomkv::FilterAllocation::Uniform
        },
        block_cache_bytes: cache as usize,
        mmap_reads: a.mmap,
        ..Default::default()
    };
    if !a.w2 {
        // W1 keeps LevelDB's sizes (as `kvctl bench` does), so its 1M keys make a tree of
        // several levels.
        opts.memtable_bytes = 4 << 20;
        opts.target_file_bytes = 2 << 20;
        opts.max_bytes_for_level_base = 10 << 20;
        opts.compression = bloomkv::Compression::None;
    }
    if let Some(m) = a.memtable_mib {
        opts.memtable_bytes = m << 20;
    }
    if let Some(m) = a.table_mib {
        opts.target_file_bytes = m << 20;
    }
    if let Some(m) = a.level1_mib {
        opts.max_bytes_for_level_base = m << 20;
    }
    if let Some(c) = a.compression {
        opts.compression = c;
    }
    if a.filter == Some("Bloom") {
        opts.filter_policy = std::sync::Arc::new(bloomkv::filter::BloomPolicy::new(a.bits));
    }
    if a.filter == Some("Ribbon") {
        opts.filter_policy = std::sync::Arc::new(bloomkv::filter::RibbonPolicy::new(a.bits));
    }
    let compression = opts.compression;
    let tmp = tempfile::tempdir_in(std::env::var_os("PEERS_DIR").unwrap_or(".".into()))?;
    let peer_bits = a.peer_bits.map(|b| b as f32);
    let mut engines: Vec<Box<dyn Engine>> = vec![
        Box::new(Bloomkv::new(tmp.path().join("bloomkv"), opts)?),
        Box::new(Fjall::new(tmp.path().join("fjall"), cache, peer_bits)?),
    ];
    #[cfg(feature = "rocksdb")]
    engines.push(Box::new(engines::Rocks::new(
        tmp.path().join("rocksdb"),
        cache as usize,
        a.peer_bits.unwrap_or(10.0),
        a.mmap,
    )?));
    if let Some(only) = &a.only {
        engines.retain(|e| only.iter().any(|n| n == e.name()));
    }
    let peers = a
        .peer_bits
        .map_or("their defaults (RocksDB 10 bits/key)".to_string(), |b| {
            format!("{b} bits/key on every level")
        });
    let monkey = if a.monkey { " (Monkey)" } else { "" };
    if a.w2 {
        let s = w2::Sizes {
            keys: a.keys.unwrap_or(50_000_000),
            gets: a.gets,
            scan: a.scan.unwrap_or(1_000_000),
            overwrite: a.overwrite,
            seed: a.seed,
        };
        let mut reports = Vec::new();
        for e in engines.iter_mut() {
            eprintln!("W2 on {} ({} keys)", e.name(), s.keys);
            let base = w2::memory_baseline();
            reports.push(w2::run(e.as_mut(), &s, base)?);
            // Free the disk and the page cache for the next engine.
            e.close();
        }
        println!(
            "W2, {} keys, page cache evicted before reopen, 64 MiB block cache, bloomkv at \
                 {} bits/key{monkey} ({} filters) with {} compression, peers at {peers} and default \
                 compression",
            s.keys,
            a.bits,
            a.filter.unwrap_or("default: Bloom on L0, Ribbon below"),
            compression.name()
        );
        w2::print(&reports);
        return Ok(());
    }
    let s = w1::Sizes {
        keys: a.keys.unwrap_or(1_000_000),
        gets: a.gets,
        scan: a.scan.unwrap_or(100_000),
        seed: a.seed,
    };
    let mut results = Vec::new();
    for e in engines.iter_mut() {
        eprintln!("W1 on {} ({} keys)", e.name(), s.keys);
        results.push((e.name(), w1::run(e.as_mut(), &s)?));
    }
    println!(
        "W1, {} keys, 32 MiB cache, bloomkv at {} bits/key{monkey} ({} filters), peers at {peers}",
        s.keys,
        a.bits,
        a.filter.unwrap_or("default: Bloom on L0, Ribbon below")
    );
    w1::print(&results);
    Ok(())
}
