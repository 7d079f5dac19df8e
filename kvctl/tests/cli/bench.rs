//! `kvctl bench`: the W1 runner behind the CLI, on tiny sizes (the real 1M-key default takes
//! about a minute and is a benchmark, not a test).

use crate::common::kvctl;
use predicates::prelude::*;

const PHASES: [&str; 7] = [
    "fillrandom",
    "flush",
    "reopen",
    "get_present",
    "get_absent",
    "scan",
    "overwrite",
];

const TINY: [&str; 8] = [
    "--keys",
    "20000",
    "--gets",
    "2000",
    "--scan",
    "1000",
    "--overwrite",
    "2000",
];

fn stdout_of(args: &[&str], tmp: &std::path::Path) -> String {
    let out = kvctl()
        .arg("bench")
        .args(args)
        .env("TMPDIR", tmp)
        .current_dir(tmp)
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

/// kvctl run in `dir`, where a bench writes its results directory.
fn kvctl_at(dir: &std::path::Path) -> assert_cmd::Command {
    let mut c = kvctl();
    c.current_dir(dir);
    c
}

fn entries(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect()
}

/// What a run left in its working directory: only the results directory.
fn only_results_left(tmp: &std::path::Path) {
    assert_eq!(
        entries(tmp),
        vec![tmp.join("bench-out")],
        "temporary database left behind"
    );
    let json = std::fs::read_to_string(tmp.join("bench-out/results.json")).unwrap();
    assert!(
        serde_json::from_str::<serde_json::Value>(&json)
            .unwrap()
            .is_array()
    );
    let svg = std::fs::read_to_string(tmp.join("bench-out/read_amplification.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
        "{svg}"
    );
}

#[test]
fn single_run_prints_the_headline_then_every_phase_and_deletes_its_temp_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let text = stdout_of(&[&TINY[..], &["--single"]].concat(), tmp.path());
    let mut lines = text.lines();
    let first = lines.next().unwrap();
    assert!(first.starts_with("headline: an absent get reads"), "{text}");
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("W1: 20000 keys, 10 bits/key"),
        "{text}"
    );
    for p in PHASES {
        assert!(
            text.lines().any(|l| l.starts_with(p)),
            "phase {p} missing:\n{text}"
        );
    }
    // Flush and reopen are one operation each: a duration, not a rate.
    for p in ["flush", "reopen"] {
        let row: Vec<&str> = text
            .lines()
            .find(|l| l.starts_with(p))
            .unwrap()
            .split_whitespace()
            .collect();
        assert_eq!(row[1], "1", "{row:?}");
        assert!(["s", "ms", "us"].contains(&row[3]), "{row:?}: no duration");
        assert_eq!(row[4], "-", "{row:?}: a rate for one operation");
    }
    assert!(text.contains("absent get:"), "{text}");
    assert!(text.contains("wrote "), "{text}");
    only_results_left(tmp.path());
}

#[test]
fn no_files_writes_nothing_and_zero_keys_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    stdout_of(
        &[&TINY[..], &["--single", "--no-files"]].concat(),
        tmp.path(),
    );
    assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));
    kvctl_at(tmp.path())
        .args(["bench", "--keys", "0", "--no-files"])
        .current_dir(tmp.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--keys 0"));
    assert!(entries(tmp.path()).is_empty());
}

#[test]
fn default_trio_compares_filters_off_and_monkey() {
    let tmp = tempfile::tempdir().unwrap();
    let text = stdout_of(&TINY, tmp.path());
    // The headline first: blocks per absent get with and without filters, and the speed-up.
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("headline: an absent get reads")
            && first.contains("with filters (")
            && first.contains(" without: ")
            && first.contains("x as fast)"),
        "{first}"
    );
    assert!(text.contains("filters on vs off:"), "{text}");
    // The saving as one number: "absent get: A vs B data blocks per get (...), Nx fewer".
    let saving = text
        .lines()
        .find(|l| l.contains("data blocks per get (10 bits/key vs no filters)"))
        .unwrap_or_else(|| panic!("no saving line:\n{text}"));
    assert!(saving.ends_with("x fewer"), "{saving}");
    assert!(
        text.contains("uniform vs Monkey at the same memory"),
        "{text}"
    );
    only_results_left(tmp.path());
    let svg = std::fs::read_to_string(tmp.path().join("bench-out/read_amplification.svg")).unwrap();
    assert!(
        svg.contains("no filters") && svg.contains("10 bits/key"),
        "{svg}"
    );
}

#[test]
fn json_parses_and_holds_the_phases() {
    let tmp = tempfile::tempdir().unwrap();
    let one = stdout_of(&[&TINY[..], &["--single", "--json"]].concat(), tmp.path());
    let v: serde_json::Value = serde_json::from_str(&one).unwrap();
    assert_eq!(v["keys"], 20000);
    let names: Vec<&str> = v["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, PHASES);
    let get_absent = &v["phases"][4];
    assert_eq!(get_absent["ops"], 2000);
    assert!(get_absent["ops_per_sec"].as_f64().unwrap() > 0.0);
    assert!(v["absent"]["tables_probed_per_get"].as_f64().unwrap() > 0.0);
    assert_eq!(v["filter_kinds"], "default");

    // Filter kinds per level: Ribbon from level 1 down, under Monkey.
    let mixed = stdout_of(
        &[
            &TINY[..],
            &["--single", "--json", "--monkey", "--filter", "bloom,ribbon"],
        ]
        .concat(),
        tmp.path(),
    );
    let v: serde_json::Value = serde_json::from_str(&mixed).unwrap();
    assert_eq!(v["filter_kinds"], "bloom,ribbon");
    assert!(
        v["label"]
            .as_str()
            .unwrap()
            .ends_with("Monkey bloom,ribbon")
    );
    // Within the memory budget (sized per distinct key; entries include overwrites).
    assert!(v["filter_bits_per_key"].as_f64().unwrap() <= 10.5, "{v}");

    // Without --single: an array, filters on, off, Monkey.
    let three = stdout_of(
        &[
            "--keys",
            "5000",
            "--gets",
            "500",
            "--scan",
            "100",
            "--overwrite",
            "100",
            "--json",
        ],
        tmp.path(),
    );
    let v: serde_json::Value = serde_json::from_str(&three).unwrap();
    let runs = v.as_array().unwrap();
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[1]["bits_per_key"], 0.0);
    assert_eq!(runs[2]["monkey"], true);
    for r in runs {
        assert_eq!(r["phases"].as_array().unwrap().len(), PHASES.len());
    }
}

#[test]
fn sweep_writes_csv_and_svg() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("results");
    let text = stdout_of(
        &[
            "--keys",
            "3000",
            "--gets",
            "300",
            "--scan",
            "100",
            "--overwrite",
            "100",
            "--sweep",
            "--out",
            out_dir.to_str().unwrap(),
        ],
        tmp.path(),
    );
    assert!(text.contains("wrote"), "{text}");
    let csv = std::fs::read_to_string(out_dir.join("results.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert!(rows[0].starts_with("bits_per_key,"), "{csv}");
    let bits: Vec<&str> = rows[1..]
        .iter()
        .map(|r| r.split(',').next().unwrap())
        .collect();
    assert_eq!(bits, ["0", "2", "4", "6", "8", "10", "12", "14", "16"]);
    let svg = std::fs::read_to_string(out_dir.join("read_amplification.svg")).unwrap();
    assert!(svg.starts_with("<svg") || svg.starts_with("<?xml"), "{svg}");
    assert!(svg.trim_end().ends_with("</svg>"));

    // Default output directory: bench-out/ under the working directory.
    let cwd = tempfile::tempdir().unwrap();
    stdout_of(
        &[
            "--keys",
            "1000",
            "--gets",
            "100",
            "--scan",
            "10",
            "--overwrite",
            "10",
            "--sweep",
        ],
        cwd.path(),
    );
    assert!(cwd.path().join("bench-out/results.csv").is_file());
    assert!(
        cwd.path()
            .join("bench-out/read_amplification.svg")
            .is_file()
    );
}

#[test]
fn dir_is_kept_and_ignores_db_and_errors_have_their_exit_codes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("w1");
    let db = tmp.path().join("db");
    kvctl_at(tmp.path())
        .args(["--db", db.to_str().unwrap(), "bench", "--single"])
        .args(["--keys", "1000", "--gets", "100", "--scan", "10"])
        .args(["--overwrite", "10", "--dir", dir.to_str().unwrap()])
        .current_dir(tmp.path())
        .assert()
        .code(0);
    assert!(!db.exists(), "bench must not touch --db");
    assert!(
        std::fs::read_dir(&dir)
            .unwrap()
            .any(|e| { e.unwrap().path().extension().is_some_and(|x| x == "sst") }),
        "--dir must keep the database"
    );
    // The same --dir again: not fresh, a usage error.
    kvctl_at(tmp.path())
        .args(["bench", "--single", "--keys", "1000", "--dir"])
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not empty"));
    // A directory that cannot be created (its parent is a file): an I/O error, exit 3.
    let file = tmp.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    kvctl_at(tmp.path())
        .args(["bench", "--single", "--keys", "1000", "--dir"])
        .arg(file.join("sub"))
        .assert()
        .code(3);
    kvctl_at(tmp.path())
        .args(["bench", "--sweep", "--keys", "1000", "--out"])
        .arg(file.join("out"))
        .assert()
        .code(3)
        .stderr(predicate::str::contains("out"));
    // Bad flag values are usage errors.
    kvctl_at(tmp.path())
        .args(["bench", "--keys", "many"])
        .assert()
        .code(2);
    kvctl_at(tmp.path())
        .args(["bench", "--bits-per-key", "100"])
        .assert()
        .code(2);
    kvctl_at(tmp.path())
        .args(["bench", "--filter", "bloom,cuckoo"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cuckoo"));
    // Its help shows its own flags only, none of the database commands'.
    kvctl_at(tmp.path())
        .args(["bench", "--help"])
        .assert()
        .code(0)
        .stdout(
            predicate::str::contains("never touches a database of yours")
                .and(predicate::str::contains("--db").not())
                .and(predicate::str::contains("--hex").not())
                .and(predicate::str::contains("--prefix-len").not()),
        );
}

#[test]
fn workload_w2_runs_once_with_its_compression_and_json_shape() {
    let tmp = tempfile::tempdir().unwrap();
    let text = stdout_of(
        &[
            &TINY[..],
            &["--workload", "w2", "--compression", "zstd:1", "--json"],
        ]
        .concat(),
        tmp.path(),
    );
    let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(v["workload"], "W2", "{text}");
    assert_eq!(v["compression"], "zstd:1");
    assert_eq!(v["keys"], 20000);
    assert_eq!(v["block_cache_bytes"], 64 << 20);
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(phases.len(), PHASES.len());
    for (p, name) in phases.iter().zip(PHASES) {
        assert_eq!(p["name"], name);
    }
    assert!(v["bytes_on_disk"].as_u64().unwrap() > 0);
    // The temporary database is gone.
    assert!(entries(tmp.path()).iter().all(|p| {
        !p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("kvctl-bench-")
    }));
    kvctl_at(tmp.path())
        .args(["bench", "--workload", "w3"])
        .assert()
        .code(2);
    kvctl_at(tmp.path())
        .args(["bench", "--compression", "gzip"])
        .assert()
        .code(2);
}
