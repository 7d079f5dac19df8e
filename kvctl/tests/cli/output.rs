//! Reports go to stderr and data to stdout, with singular and plural nouns that agree with
//! their numbers; `--quiet` drops the report, `--json` prints it as one JSON object.

use crate::common::TestDb;

fn split(t: &TestDb, args: &[&str]) -> (String, String) {
    let out = t.kvctl(args).assert().success().get_output().clone();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn reports_on_stderr_quiet_and_json() {
    let t = TestDb::new();
    t.ok(&["put", "k", "v"]);
    let (out, err) = split(&t, &["compact"]);
    assert_eq!(out, "");
    assert!(err.contains("-> 1 table, "), "{err}");
    assert!(err.contains("0 tables, "), "{err}");

    let (out, err) = split(&t, &["verify"]);
    assert_eq!(out, "");
    assert!(err.contains(": 1 table, 1 entry, "), "{err}");
    let (out, err) = split(&t, &["verify", "--quiet"]);
    assert_eq!((out.as_str(), err.as_str()), ("", ""));
    let (out, err) = split(&t, &["verify", "--json"]);
    assert_eq!(err, "");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["tables"].as_u64(), v["entries"].as_u64()),
        (Some(1), Some(1))
    );

    let copy = t.dir.path().join("copy");
    let (out, err) = split(&t, &["checkpoint", "--json", copy.to_str().unwrap()]);
    assert_eq!(err, "");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["tables"].as_u64(), Some(1));

    let (out, err) = {
        let o = t
            .kvctl(&["load", "--json"])
            .write_stdin("a\t1\n")
            .assert()
            .success()
            .get_output()
            .clone();
        (
            String::from_utf8(o.stdout).unwrap(),
            String::from_utf8(o.stderr).unwrap(),
        )
    };
    assert_eq!(err, "");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["entries"].as_u64(), Some(1));
    let o = t
        .kvctl(&["load"])
        .write_stdin("b\t2\n")
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(
        String::from_utf8(o.stderr)
            .unwrap()
            .starts_with("loaded 1 entry from stdin")
    );

    // dedup: stdout is the data, so its JSON report goes to stderr.
    let o = t
        .kvctl(&["dedup", "--json"])
        .write_stdin("x\ny\nx\n")
        .assert()
        .success()
        .get_output()
        .clone();
    assert_eq!(String::from_utf8(o.stdout).unwrap(), "x\ny\n");
    let v: serde_json::Value = serde_json::from_slice(&o.stderr).unwrap();
    assert_eq!((v["lines"].as_u64(), v["new"].as_u64()), (Some(3), Some(2)));
    let o = t
        .kvctl(&["dedup"])
        .write_stdin("z\n")
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(
        String::from_utf8(o.stderr)
            .unwrap()
            .starts_with("dedup: 1 line read from stdin"),
        "plural"
    );
}
