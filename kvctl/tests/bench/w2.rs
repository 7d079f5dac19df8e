//! W2 at 200k keys (the workload's shape at a size a test can afford): compressible values,
//! evicted page cache, every phase run and reported, progress for every phase, and the
//! report's W2 figures (bytes on disk, space amplification, device reads, p99.9).

use std::sync::{Arc, Mutex};

use bloomkv::Compression;
use kvctl::bench::{Progress, W1Config, Workload, json_string, run_w1};

#[test]
fn w2_at_200k_keys_runs_every_phase_with_progress() {
    let tmp = tempfile::tempdir().unwrap();
    let seen = Arc::new(Mutex::new(Vec::<(String, u64, u64)>::new()));
    let log = Arc::clone(&seen);
    let cfg = W1Config {
        keys: 200_000,
        get_present: 20_000,
        get_absent: 20_000,
        scan: 200_000,
        overwrite: 20_000,
        explain_sample: 200,
        compression: Compression::Lz4,
        progress: Some(Progress(Arc::new(move |phase, done, total| {
            log.lock().unwrap().push((phase.to_string(), done, total));
        }))),
        ..W1Config::w2(tmp.path().join("db"))
    };
    assert_eq!(cfg.workload, Workload::W2);
    assert!(cfg.compressible_values && cfg.evict_page_cache);
    assert_eq!(cfg.block_cache_bytes, 64 << 20);
    let r = run_w1(&cfg).unwrap();
    assert_eq!(r.workload, "W2");
    assert_eq!(r.compression, "lz4");
    let names: Vec<&str> = r.phases.iter().map(|p| p.name).collect();
    assert_eq!(
        names,
        [
            "fillrandom",
            "flush",
            "reopen",
            "get_present",
            "get_absent",
            "scan",
            "overwrite"
        ]
    );
    assert_eq!(r.phase("scan").unwrap().ops, 200_000);
    let get = r.phase("get_present").unwrap();
    assert!(get.p999_ns.is_some() && get.p999_ns >= get.p99_ns);
    // Values compress about 2:1: the database is smaller than the user data.
    let user = 200_000.0 * 116.0;
    assert!(
        r.bytes_on_disk > 0 && (r.bytes_on_disk as f64) < 0.85 * user,
        "{r}"
    );
    assert!(
        r.space_amplification > 0.3 && r.space_amplification < 0.85,
        "{r}"
    );
    // Tables are compressed (W2 uses the engine's default codec): a tree that is one flush
    // deep writes less than the user data.
    assert!(r.tables >= 1 && r.write_amplification > 0.3, "{r}");
    // Every phase reported its start and its end.
    let seen = seen.lock().unwrap();
    for name in &names {
        assert!(
            seen.iter().any(|(p, d, _)| p == name && *d == 0),
            "no start for {name}"
        );
        assert!(
            seen.iter().any(|(p, d, t)| p == name && d == t),
            "no end for {name}"
        );
    }
    let json = json_string(&r);
    for field in [
        "\"workload\":\"W2\"",
        "\"compression\":\"lz4\"",
        "\"bytes_on_disk\"",
        "\"space_amplification\"",
        "\"p999_ns\"",
        "\"device_read_bytes_per_op\"",
        "\"read_calls_per_op\"",
        "\"stall_micros\"",
        "\"longest_stall_micros\"",
        "\"longest_put_ns\"",
    ] {
        assert!(json.contains(field), "{field} missing in {json}");
    }
}
