//! Prefix-scan benchmark for docs/BENCH.md ("Prefix scans with prefix filters"): keys
//! `tNNNNNN/III` of even tenants only, written with a `/` prefix extractor. Then, with the
//! extractor and (reopened) without it: scans of absent tenants (odd, inside every table's key
//! range) counting data blocks per table consulted, and scans of present tenants through
//! `Db::prefix` against the same key range through `Db::range`. Medians of `--runs` runs.
//!
//! `cargo run --release --example prefix_scan -- [--tenants N] [--keys-per-tenant K] [--runs R]`

#![expect(
    clippy::unwrap_used,
    reason = "an example stops at the first error, saying what it was"
)]

use std::sync::Arc;
use std::time::Instant;

use bloomkv::filter::DelimiterPrefix;
use bloomkv::sstable::FilterVerdict;
use bloomkv::{Compression, Db, Options};

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

fn tenant(t: u64) -> String {
    format!("t{t:06}/")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn options(extractor: bool) -> Options {
    Options {
        // LevelDB's sizes, so a million keys make a tree of several levels and many tables.
        memtable_bytes: 4 << 20,
        target_file_bytes: 2 << 20,
        max_bytes_for_level_base: 10 << 20,
        compression: Compression::None,
        block_cache_bytes: 32 << 20,
        prefix_extractor: extractor.then(|| Arc::new(DelimiterPrefix::new(b'/')) as _),
        ..Options::default()
    }
}

/// Blocks read from files and found in the cache so far.
fn blocks(db: &Db) -> u64 {
    let s = db.stats();
    s.data_blocks_read + s.block_cache_hits
}

fn main() -> bloomkv::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str, default: u64| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let tenants = flag("--tenants", 20_000);
    let per = flag("--keys-per-tenant", 100);
    let runs = flag("--runs", 3);
    let probes = 1000u64;
    let dir = tempfile::tempdir()?;
    {
        let db = Db::open(dir.path(), options(true))?;
        // Tenants in scrambled order, keys of one tenant together (one write per key).
        for n in 0..tenants / 2 {
            let t = (mix(n) % (tenants / 2)) * 2;
            for i in 0..per {
                let v: Vec<u8> = (0..100).map(|j| mix(t * 1000 + i * 7 + j) as u8).collect();
                db.put(format!("{}{i:03}", tenant(t)), v)?;
            }
        }
        db.flush()?;
        db.wait_for_compactions()?;
        let s = db.stats();
        let shape: Vec<u64> = s.levels.iter().map(|l| l.files).collect();
        println!(
            "{} keys of {} tenants, {} tables, per level {shape:?}",
            tenants / 2 * per,
            tenants / 2,
            s.total_files()
        );
    }
    for with in [true, false] {
        let db = Db::open(dir.path(), options(with))?;
        let label = if with {
            "with prefix filters"
        } else {
            "without (no extractor)"
        };
        // Absent tenants: blocks touched per table whose key range the scan meets.
        let mut consulted = 0u64;
        let mut skipped = 0u64;
        let before = blocks(&db);
        let before_read = db.stats().data_blocks_read;
        for n in 0..probes {
            let p = tenant((mix(n + 77) % (tenants / 2)) * 2 + 1);
            for probe in db.explain_prefix(&p) {
                match probe.verdict {
                    FilterVerdict::OutOfRange => {}
                    FilterVerdict::Absent => {
                        consulted += 1;
                        skipped += 1;
                    }
                    _ => consulted += 1,
                }
            }
            assert_eq!(db.prefix(&p).count(), 0);
        }
        let touched = blocks(&db) - before;
        let read = db.stats().data_blocks_read - before_read;
        println!(
            "{label}: absent prefixes: {consulted} tables consulted, {skipped} skipped, \
             {:.4} data blocks touched per table consulted ({:.4} read from files)",
            touched as f64 / consulted as f64,
            read as f64 / consulted as f64
        );

        // Present tenants: Db::prefix against Db::range over the same keys.
        let present: Vec<String> = (0..probes)
            .map(|n| tenant((mix(n + 5) % (tenants / 2)) * 2))
            .collect();
        let (mut via_prefix, mut via_range) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            let t = Instant::now();
            let mut got = 0;
            for p in &present {
                for kv in db.prefix(p) {
                    kv?;
                    got += 1;
                }
            }
            via_prefix.push(got as f64 / t.elapsed().as_secs_f64());
            assert_eq!(got, probes * per);
            let t = Instant::now();
            let mut got = 0;
            for p in &present {
                let mut end = p.clone().into_bytes();
                *end.last_mut().unwrap() += 1;
                for kv in db.range(p.as_bytes().to_vec()..end) {
                    kv?;
                    got += 1;
                }
            }
            via_range.push(got as f64 / t.elapsed().as_secs_f64());
        }
        println!(
            "{label}: present prefixes: Db::prefix {:.0} keys/s, Db::range {:.0} keys/s \
             (medians of {runs})",
            median(via_prefix),
            median(via_range)
        );
    }
    Ok(())
}
