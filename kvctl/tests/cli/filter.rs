//! kvctl filter new / add / check / info / remove, and dedup --approx: output, exit codes,
//! and errors naming the file.

use crate::common::kvctl;
use bloomkv::filter::math;
use predicates::prelude::*;

fn run(args: &[&str], stdin: &str) -> (i32, String, String) {
    let out = kvctl().args(args).write_stdin(stdin).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn new_add_check_info_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("seen.bloom");
    let fs = f.to_str().unwrap();
    kvctl()
        .args([
            "filter",
            "new",
            fs,
            "--capacity",
            "1000",
            "--error-rate",
            "0.01",
        ])
        .assert()
        .code(0)
        .stdout("");
    kvctl()
        .args(["filter", "add", fs, "apple", "pear", "apple"])
        .assert()
        .code(0)
        .stdout("")
        .stderr(format!(
            "{fs}: 2 new, 1 already present (or false positives)\n"
        ));
    // Lines on stdin; the report as JSON on stdout; no report at all.
    let (code, out, err) = run(&["filter", "add", fs, "--json"], "plum\napple\nfig\n");
    assert_eq!((code, err.as_str()), (0, ""));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["new"].as_u64(), v["present"].as_u64()),
        (Some(2), Some(1))
    );
    kvctl()
        .args(["filter", "add", fs, "--quiet", "apple"])
        .assert()
        .code(0)
        .stdout("")
        .stderr("");
    // One item: exit 0 for maybe, 1 for no, like grep.
    kvctl()
        .args(["filter", "check", fs, "apple"])
        .assert()
        .code(0)
        .stdout("maybe\n");
    kvctl()
        .args(["filter", "check", fs, "cherry"])
        .assert()
        .code(1)
        .stdout("no\n")
        .stderr("");
    // Several items, or stdin: one verdict per item, exit 0.
    kvctl()
        .args(["filter", "check", fs, "pear", "cherry", "fig"])
        .assert()
        .code(0)
        .stdout("maybe\nno\nmaybe\n");
    kvctl()
        .args(["filter", "check", fs])
        .write_stdin("cherry\nplum\n")
        .assert()
        .code(0)
        .stdout("no\nmaybe\n");

    // BloomFilter::new(FilterSize::for_items(1000, 0.01)): the bits and probes that keep 1% at 1000
    // items (a little over the textbook 9586 bits).
    let (bits, k) = math::standard_sizing(1000, 0.01).unwrap();
    let (code, info, _) = run(&["filter", "info", fs], "");
    assert_eq!(code, 0);
    for want in [
        "kind            bloom".to_string(),
        "capacity        1000".to_string(),
        "count           4".to_string(),
        "distinct (est.) 4".to_string(),
        format!("bits            {bits}"),
        format!("k               {k}"),
        "error rate      0.01".to_string(),
        "fill ratio".to_string(),
        "estimated FPR".to_string(),
    ] {
        assert!(info.contains(&want), "{want:?} missing from\n{info}");
    }
    let (code, json, _) = run(&["filter", "info", fs, "--json"], "");
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["kind"], "bloom");
    assert_eq!(v["capacity"], 1000);
    assert_eq!(v["count"], 4);
    assert_eq!(v["estimated_len"], 4);
    assert_eq!(v["bits"], bits);
    assert_eq!(v["k"], k);
    let fill = v["fill_ratio"].as_f64().unwrap();
    assert!(fill > 0.0025 && fill <= 28.0 / bits as f64, "{fill}");
    // fill^k, plus the keys whose probes repeat bits (which dominate so empty a filter).
    let fpr = v["estimated_fpr"].as_f64().unwrap();
    let expected = fill.powi(k as i32) + math::standard_stride_excess(bits, k, fill);
    assert!((fpr - expected).abs() < 1e-15, "{fpr} vs {expected}");
}

#[test]
fn hex_items() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("h");
    let fs = f.to_str().unwrap();
    kvctl()
        .args(["filter", "new", fs, "--capacity", "10"])
        .assert()
        .success();
    kvctl()
        .args(["--hex", "filter", "add", fs, "00ff"])
        .assert()
        .success();
    kvctl()
        .args(["--hex", "filter", "check", fs, "00ff"])
        .assert()
        .code(0);
    kvctl()
        .args(["--hex", "filter", "check", fs, "zz"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("ITEM"));
}

#[test]
fn counting_filter_remove_and_others_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("live.cbf");
    let cs = c.to_str().unwrap();
    kvctl()
        .args(["filter", "new", cs, "--capacity", "100", "--counting"])
        .assert()
        .success();
    kvctl()
        .args(["filter", "add", cs, "a", "b"])
        .assert()
        .success();
    kvctl()
        .args(["filter", "remove", cs, "a", "zz"])
        .assert()
        .code(0)
        .stdout("")
        .stderr(format!("{cs}: 1 removed, 1 not present\n"));
    kvctl().args(["filter", "check", cs, "a"]).assert().code(1);
    kvctl().args(["filter", "check", cs, "b"]).assert().code(0);
    let (_, info, _) = run(&["filter", "info", cs], "");
    assert!(info.contains("kind            counting"), "{info}");
    assert!(info.contains("count           1"), "{info}");

    let b = dir.path().join("plain");
    let bs = b.to_str().unwrap();
    kvctl()
        .args(["filter", "new", bs, "--capacity", "100"])
        .assert()
        .success();
    kvctl()
        .args(["filter", "remove", bs, "a"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("plain")
                .and(predicate::str::contains("only counting filters")),
        );
}

#[test]
fn counting_filters_warn_on_distinct_load_not_insertions() {
    // Regression: a counting filter's len counts every insertion, and the capacity warning
    // compared it with the capacity, so one item added 11 times to a 10-item filter warned.
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("c");
    let cs = c.to_str().unwrap();
    kvctl()
        .args(["filter", "new", cs, "--capacity", "10", "--counting"])
        .assert()
        .success();
    let same = vec!["same"; 11];
    let (code, out, err) = run(&[&["filter", "add", cs][..], &same].concat(), "");
    assert_eq!((code, out.as_str()), (0, ""));
    assert_eq!(
        err,
        format!("{cs}: 1 new, 10 already present (or false positives)\n")
    );
    assert!(!err.contains("warning"), "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&run(&["filter", "info", cs, "--json"], "").1).unwrap();
    assert_eq!(
        (v["count"].as_u64(), v["estimated_len"].as_u64()),
        (Some(11), Some(1))
    );
    // Each insertion can be removed: ten removals leave it present, the eleventh not.
    let (_, _, err) = run(&[&["filter", "remove", cs][..], &same[..10]].concat(), "");
    assert_eq!(err, format!("{cs}: 10 removed, 0 not present\n"));
    kvctl()
        .args(["filter", "check", cs, "same"])
        .assert()
        .code(0);
    kvctl()
        .args(["filter", "remove", cs, "same"])
        .assert()
        .success();
    kvctl()
        .args(["filter", "check", cs, "same"])
        .assert()
        .code(1);
    // Twenty distinct items in a 10-item filter: that is past capacity, and it says so.
    let items: String = (0..20).map(|i| format!("item{i}\n")).collect();
    let (_, _, err) = run(&["filter", "add", cs], &items);
    assert!(
        err.contains("distinct items (estimated), past its capacity of 10"),
        "{err}"
    );
}

#[test]
fn approximate_dedup_with_a_counting_state_counts_each_line_once() {
    // Regression: dedup inserted every line, so a counting state counted the duplicates it
    // dropped: 3000 distinct lines sent three times made a count of 9000 and a warning.
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("seen.cbf");
    let st = state.to_str().unwrap();
    kvctl()
        .args(["filter", "new", st, "--capacity", "5000", "--counting"])
        .assert()
        .success();
    let once: String = (0..3000).map(|i| format!("https://e.com/{i}\n")).collect();
    let (code, out, err) = run(&["dedup", "--approx", "--state", st], &once.repeat(3));
    assert_eq!(code, 0, "{err}");
    let printed = out.lines().count() as u64;
    assert!(printed > 2950 && printed <= 3000, "{printed}");
    assert!(
        err.contains(&format!("{} dropped", 9000 - printed)),
        "{err}"
    );
    assert!(!err.contains("warning"), "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&run(&["filter", "info", st, "--json"], "").1).unwrap();
    assert_eq!(v["kind"], "counting");
    assert_eq!(v["count"].as_u64(), Some(printed));
    // A second run drops everything and adds nothing.
    let (_, out, err) = run(&["dedup", "--approx", "--state", st], &once);
    assert_eq!(out, "");
    assert!(err.contains("3000 dropped"), "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&run(&["filter", "info", st, "--json"], "").1).unwrap();
    assert_eq!(v["count"].as_u64(), Some(printed));
}

#[test]
fn scalable_filter_grows_and_keeps_its_rate() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s");
    let ss = s.to_str().unwrap();
    kvctl()
        .args([
            "filter",
            "new",
            ss,
            "--capacity",
            "100",
            "--error-rate",
            "0.01",
            "--scalable",
        ])
        .assert()
        .success();
    let items: String = (0..10_000).map(|i| format!("item{i}\n")).collect();
    let (code, _, err) = run(&["filter", "add", ss], &items);
    assert_eq!(code, 0);
    let new: u64 = err
        .split(": ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(new > 9900 && new <= 10_000, "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&run(&["filter", "info", ss, "--json"], "").1).unwrap();
    assert_eq!(v["kind"], "scalable");
    assert_eq!(v["count"], new);
    assert!(v["stages"].as_u64().unwrap() >= 7);
    assert!(v["estimated_fpr"].as_f64().unwrap() < 0.01);
    let absent: String = (0..10_000).map(|i| format!("other{i}\n")).collect();
    let (_, verdicts, _) = run(&["filter", "check", ss], &absent);
    let maybes = verdicts.lines().filter(|l| *l == "maybe").count();
    assert!(maybes < 150, "{maybes} false positives in 10000");
}

#[test]
fn errors_name_the_file_with_documented_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    let fs = f.to_str().unwrap();
    // Missing file: exit 3, named.
    for cmd in ["add", "check", "info"] {
        kvctl()
            .args(
                ["filter", cmd, fs, "x"]
                    .iter()
                    .take(if cmd == "info" { 3 } else { 4 }),
            )
            .assert()
            .code(3)
            .stderr(predicate::str::contains(fs).and(predicate::str::contains("no such")));
    }
    // Bad arguments: exit 2.
    kvctl()
        .args(["filter", "new", fs, "--capacity", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--capacity"));
    kvctl()
        .args([
            "filter",
            "new",
            fs,
            "--capacity",
            "10",
            "--error-rate",
            "1.5",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--error-rate"));
    kvctl()
        .args([
            "filter",
            "new",
            fs,
            "--capacity",
            "10",
            "--scalable",
            "--counting",
        ])
        .assert()
        .code(2);
    assert!(!f.exists());
    kvctl()
        .args(["filter", "new", fs, "--capacity", "10"])
        .assert()
        .success();
    // An existing file is not replaced without --force.
    kvctl()
        .args(["filter", "new", fs, "--capacity", "10"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists"));
    kvctl()
        .args(["filter", "new", fs, "--capacity", "20", "--force"])
        .assert()
        .success();
    // Damaged: truncated, and a flipped bit. Exit 3, the file and the problem named; the
    // file is left as it was.
    let good = std::fs::read(&f).unwrap();
    let mut flipped = good.clone();
    flipped[45] ^= 4;
    for (bad, why) in [
        (good[..good.len() - 3].to_vec(), "does not match"),
        (flipped, "checksum mismatch"),
        (b"hello world".to_vec(), "truncated"),
    ] {
        std::fs::write(&f, &bad).unwrap();
        for args in [
            vec!["filter", "check", fs, "x"],
            vec!["filter", "add", fs, "x"],
            vec!["filter", "info", fs],
        ] {
            kvctl()
                .args(&args)
                .assert()
                .code(3)
                .stderr(predicate::str::contains(fs).and(predicate::str::contains(why)));
        }
        assert_eq!(std::fs::read(&f).unwrap(), bad);
    }
}

#[test]
fn approximate_dedup_keeps_its_state_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("urls.bloom");
    let st = state.to_str().unwrap();
    let first: String = (0..5000).map(|i| format!("https://e.com/{i}\n")).collect();
    let second: String = (2500..10_000)
        .map(|i| format!("https://e.com/{i}\n"))
        .collect();
    // Missing state and no --capacity: usage error naming the file.
    kvctl()
        .args(["dedup", "--approx", "--state", st])
        .write_stdin(first.clone())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(st).and(predicate::str::contains("--capacity")));
    // --state without --approx is a usage error too.
    kvctl()
        .args(["dedup", "--state", st])
        .write_stdin("")
        .assert()
        .code(2);
    let args = [
        "dedup",
        "--approx",
        "--state",
        st,
        "--capacity",
        "20000",
        "--error-rate",
        "0.001",
    ];
    let (code, out, err) = run(&args, &first);
    assert_eq!(code, 0, "{err}");
    // A fresh, large filter: every line printed, in order, byte-exact.
    assert_eq!(out, first);
    assert!(err.contains("5000 lines read"), "{err}");
    assert!(err.contains("5000 new"), "{err}");
    assert!(err.contains("0 dropped"), "{err}");
    assert!(state.exists());
    // Same input again: everything dropped (parameters of an existing file are ignored).
    let (_, out, err) = run(&args, &first);
    assert_eq!(out, "");
    assert!(err.contains("5000 dropped"), "{err}");
    // Overlapping input: the old half dropped, the new half printed but for false positives.
    let (_, out, err) = run(&["dedup", "--approx", "--state", st], &second);
    let printed: Vec<&str> = out.lines().collect();
    let lost = 7500 - 2500 - printed.len();
    assert!(lost <= 10, "{lost} new lines lost");
    assert!(printed.iter().all(|l| {
        let n: u32 = l.rsplit('/').next().unwrap().parse().unwrap();
        n >= 5000
    }));
    let dropped = 7500 - printed.len();
    assert!(
        err.contains(&format!("{dropped} dropped")),
        "{dropped}: {err}"
    );
    // The expected number of false positives is stated, and plausible.
    let expected: f64 = err
        .split("of those about ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(expected < 1.0, "{expected}");
    // The state is an ordinary filter file.
    let v: serde_json::Value =
        serde_json::from_str(&run(&["filter", "info", st, "--json"], "").1).unwrap();
    assert_eq!(v["capacity"], 20000);
    assert_eq!(v["count"].as_u64().unwrap(), 5000 + printed.len() as u64);
    // No temporary file left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

    // At its capacity a plain state stops the run (exit 2), saving what was printed.
    let crowded = dir.path().join("crowded");
    let cs = crowded.to_str().unwrap();
    let distinct: String = (0..20_000).map(|i| format!("line{i}\n")).collect();
    let sized = ["--capacity", "5000", "--error-rate", "0.01"];
    let (code, out, err) = run(
        &[&["dedup", "--approx", "--state", cs][..], &sized].concat(),
        &distinct,
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is full") && err.contains("--force"), "{err}");
    let printed_before_full = out.lines().count() as u64;
    let v: serde_json::Value =
        serde_json::from_str(&run(&["filter", "info", cs, "--json"], "").1).unwrap();
    assert_eq!(v["count"].as_u64(), Some(5000));
    assert_eq!(printed_before_full, 5000);
    std::fs::remove_file(&crowded).unwrap();
    // A scalable state grows instead and loses about its rate's share.
    let (code, out, err) = run(
        &[
            &["dedup", "--approx", "--state", cs, "--scalable"][..],
            &sized,
        ]
        .concat(),
        &distinct,
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().count() > 19_700, "{}", out.lines().count());
    std::fs::remove_file(&crowded).unwrap();

    // With --force, past capacity, lines are lost: the stated expectation matches what
    // happened.
    let (_, out, err) = run(
        &[&["dedup", "--approx", "--state", cs, "--force"][..], &sized].concat(),
        &distinct,
    );
    let lost = 20_000 - out.lines().count();
    let expected: f64 = err
        .split("of those about ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(lost > 500, "{lost}");
    assert!(
        (expected - lost as f64).abs() / (lost as f64) < 0.2,
        "expected {expected}, lost {lost}"
    );
    assert!(err.contains("past its capacity of 5000"), "{err}");
    std::fs::remove_file(&crowded).unwrap();

    // A damaged state file: exit 3, named, nothing printed.
    std::fs::write(&state, b"garbage").unwrap();
    kvctl()
        .args(["dedup", "--approx", "--state", st])
        .write_stdin("x\n")
        .assert()
        .code(3)
        .stdout("")
        .stderr(predicate::str::contains(st));
}
