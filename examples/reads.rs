//! Read benchmarks for docs/BENCH.md ("Reads: seek, reverse, multi_get"): W1 keys and values,
//! then seekrandom (seek + 10 nexts), a forward and a reverse full scan, and multi_get of 100
//! random present keys against 100 single gets. Prints the median of `--runs` runs.
//!
//! `cargo run --release --example reads -- [--keys N] [--runs R]`

use std::time::Instant;

use bloomkv::{Db, Options, ReadOptions};

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

fn key(i: u64) -> Vec<u8> {
    format!(
        "{:016x}",
        mix(i.wrapping_add(42u64.wrapping_mul(0x9e3779b97f4a7c15)))
    )
    .into_bytes()
}

fn value(i: u64) -> Vec<u8> {
    (0..100u64).map(|j| mix(i * 131 + j) as u8).collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
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
    let n = flag("--keys", 200_000);
    let runs = flag("--runs", 3) as usize;
    // 1: multi_get only, 2: gets only (for profiling); 0: everything.
    let only = flag("--only", 0);
    let dir = tempfile::tempdir()?;
    let db = Db::open(
        dir.path(),
        Options {
            block_cache_bytes: 32 << 20,
            ..Options::default()
        },
    )?;
    for i in 0..n {
        db.put(key(i), value(i))?;
    }
    db.flush()?;
    db.wait_for_compactions()?;
    let mut sorted: Vec<Vec<u8>> = (0..n).map(key).collect();
    sorted.sort();
    let (mut mget_near, mut gets_near) = (vec![], vec![]);
    let mut rng = 7u64;
    let mut next_key = || {
        rng = mix(rng);
        key(rng % n)
    };

    let (mut seek, mut fwd, mut rev, mut cfwd, mut crev, mut mget, mut gets) =
        (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
    for _ in 0..runs {
        if only != 0 {
            let sets: Vec<Vec<Vec<u8>>> = (0..5_000)
                .map(|_| (0..100).map(|_| next_key()).collect())
                .collect();
            let t = Instant::now();
            for s in &sets {
                if only == 3 {
                } else if only == 4 {
                    if !std::ptr::eq(s, &sets[0]) {
                        continue;
                    }
                    let mut c = db.cursor(&ReadOptions::default());
                    c.seek_to_last()?;
                    while c.valid() {
                        c.prev()?;
                    }
                } else if only == 1 {
                    db.multi_get(s)?;
                } else {
                    for k in s {
                        db.get(k)?;
                    }
                }
            }
            mget.push(500_000.0 / t.elapsed().as_secs_f64());
            continue;
        }
        // seekrandom: one cursor, seek to a random present key, read it and 10 more.
        let ops = 20_000;
        let mut c = db.cursor(&ReadOptions::default());
        let t = Instant::now();
        let mut bytes = 0usize;
        for _ in 0..ops {
            c.seek(next_key())?;
            for _ in 0..10 {
                if !c.valid() {
                    break;
                }
                bytes += c.key().len() + c.value().len();
                c.next()?;
            }
        }
        seek.push(ops as f64 / t.elapsed().as_secs_f64());
        assert!(bytes > 0);

        let t = Instant::now();
        let count = db.iter().try_fold(0u64, |n, kv| kv.map(|_| n + 1))?;
        fwd.push(count as f64 / t.elapsed().as_secs_f64());
        let t = Instant::now();
        let count = db.iter().rev().try_fold(0u64, |n, kv| kv.map(|_| n + 1))?;
        rev.push(count as f64 / t.elapsed().as_secs_f64());
        assert_eq!(count, n);

        let mut c = db.cursor(&ReadOptions::default());
        let t = Instant::now();
        c.seek_to_first()?;
        let mut count = 0u64;
        while c.valid() {
            count += 1;
            c.next()?;
        }
        cfwd.push(count as f64 / t.elapsed().as_secs_f64());
        let t = Instant::now();
        c.seek_to_last()?;
        let mut count = 0u64;
        while c.valid() {
            count += 1;
            c.prev()?;
        }
        crev.push(count as f64 / t.elapsed().as_secs_f64());

        // Interleaved batch by batch, on the same keys, so that load from other processes
        // on this shared machine falls on both sides alike.
        let batches = 2_000;
        let sets: Vec<Vec<Vec<u8>>> = (0..batches)
            .map(|_| (0..100).map(|_| next_key()).collect())
            .collect();
        let (mut t_multi, mut t_single) = (0.0, 0.0);
        for (i, s) in sets.iter().enumerate() {
            for pass in 0..2 {
                let t = Instant::now();
                if (i + pass) % 2 == 0 {
                    let got = db.multi_get(s)?;
                    assert!(got.iter().all(Option::is_some));
                    t_multi += t.elapsed().as_secs_f64();
                } else {
                    for k in s {
                        assert!(db.get(k)?.is_some());
                    }
                    t_single += t.elapsed().as_secs_f64();
                }
            }
        }
        mget.push((batches * 100) as f64 / t_multi);
        gets.push((batches * 100) as f64 / t_single);

        // The same with 100 neighbouring keys (a window of the sorted key space): they share
        // data blocks.
        let (mut t_multi, mut t_single) = (0.0, 0.0);
        for i in 0..batches {
            let start = (mix(i as u64 + 99) % (n - 100)) as usize;
            let s = &sorted[start..start + 100];
            for pass in 0..2 {
                let t = Instant::now();
                if (i + pass) % 2 == 0 {
                    let got = db.multi_get(s)?;
                    assert!(got.iter().all(Option::is_some));
                    t_multi += t.elapsed().as_secs_f64();
                } else {
                    for k in s {
                        assert!(db.get(k)?.is_some());
                    }
                    t_single += t.elapsed().as_secs_f64();
                }
            }
        }
        mget_near.push((batches * 100) as f64 / t_multi);
        gets_near.push((batches * 100) as f64 / t_single);
    }
    if only != 0 {
        println!("only {only}: {:.0} keys/s", median(mget));
        return Ok(());
    }
    let s = db.stats();
    println!(
        "keys {n}, runs {runs} (medians); levels: {:?}",
        s.levels.iter().map(|l| l.files).collect::<Vec<_>>()
    );
    println!(
        "seekrandom (seek + 10 next), cursor   {:>12.0} seeks/s",
        median(seek)
    );
    println!(
        "full scan forward,  DbIter            {:>12.0} keys/s",
        median(fwd)
    );
    println!(
        "full scan reverse,  DbIter::rev       {:>12.0} keys/s",
        median(rev)
    );
    println!(
        "full scan forward,  cursor next       {:>12.0} keys/s",
        median(cfwd)
    );
    println!(
        "full scan reverse,  cursor prev       {:>12.0} keys/s",
        median(crev)
    );
    println!(
        "multi_get (100 present keys)          {:>12.0} keys/s",
        median(mget)
    );
    println!(
        "get x 100 (present keys)              {:>12.0} keys/s",
        median(gets)
    );
    println!(
        "multi_get (100 neighbouring keys)     {:>12.0} keys/s",
        median(mget_near)
    );
    println!(
        "get x 100 (neighbouring keys)         {:>12.0} keys/s",
        median(gets_near)
    );
    Ok(())
}
