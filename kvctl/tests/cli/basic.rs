//! kvctl put / get / delete / scan, --hex, escaping, exit codes 0, 1 and 2, `--db` and
//! `$KVCTL_DB`.

use crate::common::{TestDb, doc_quote, kvctl};
use predicates::prelude::*;

#[test]
fn put_get_delete_round_trip_with_exit_codes() {
    let t = TestDb::new();
    t.kvctl(&["put", "apple", "red"])
        .assert()
        .code(0)
        .stdout("");
    assert_eq!(t.ok(&["get", "apple"]), "red\n");
    t.kvctl(&["get", "pear"])
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains("pear").and(predicate::str::contains("not found")));
    t.kvctl(&["delete", "apple"]).assert().code(0);
    t.kvctl(&["get", "apple"]).assert().code(1);
    // Deleting an absent key is not an error.
    t.kvctl(&["delete", "apple"]).assert().code(0);
    // Overwrite wins.
    t.ok(&["put", "k", "v1"]);
    t.ok(&["put", "k", "v2"]);
    assert_eq!(t.ok(&["get", "k"]), "v2\n");
}

#[test]
fn usage_errors_exit_2() {
    let t = TestDb::new();
    t.kvctl(&["frobnicate"]).assert().code(2);
    t.kvctl(&["put", "only-key"]).assert().code(2);
    t.kvctl(&["scan", "--limit", "many"]).assert().code(2);
    // Bad hex is a usage error naming the argument; nothing is created.
    t.kvctl(&["--hex", "put", "abc", "00"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("KEY abc"));
    t.kvctl(&["--hex", "get", "zz"]).assert().code(2);
    assert!(!t.db.exists(), "a usage error must not create the database");
    kvctl()
        .arg("--help")
        .assert()
        .code(0)
        .stdout(predicate::str::contains("dedup"));
}

#[test]
fn binary_keys_and_values_round_trip_with_hex() {
    let t = TestDb::new();
    // Every byte value, in the key and the value.
    let key = "00ff0a09005c";
    let all: String = (0..=255u8).map(|b| format!("{b:02x}")).collect();
    t.ok(&["--hex", "put", key, &all]);
    // --hex works after the subcommand too (global flag); upper case is accepted.
    assert_eq!(t.ok(&["get", "--hex", "00FF0A09005C"]), format!("{all}\n"));
    assert_eq!(t.ok(&["--hex", "scan"]), format!("{key}\t{all}\n"));
    // Without --hex the same entry is printed escaped: one line, no raw control bytes.
    let out = t.ok(&["scan"]);
    assert_eq!(out.lines().count(), 1);
    assert!(out.starts_with("\\x00\\xff\\n\\t\\x00\\\\\t"), "{out:?}");
    assert!(
        !out.trim_end_matches('\n')
            .bytes()
            .any(|b| b < 0x20 && b != b'\t')
    );
}

#[test]
fn output_escapes_non_printable_bytes() {
    let t = TestDb::new();
    // Literal arguments may hold any bytes but NUL; put control bytes in via hex.
    t.ok(&["--hex", "put", "6b", "61096209630a645c651b"]);
    assert_eq!(t.ok(&["get", "k"]), "a\\tb\\tc\\nd\\\\e\\x1b\n");
    t.ok(&["put", "unicode", "héllo wörld"]);
    assert_eq!(t.ok(&["get", "unicode"]), "héllo wörld\n");
}

/// A negative `--limit` gets a reason (not clap's "unexpected argument"), the one docs/CLI.md
/// quotes; `--limit 0` prints nothing.
#[test]
fn scan_refuses_a_negative_limit_saying_why() {
    let t = TestDb::new();
    t.ok(&["put", "a", "1"]);
    let quoted = doc_quote("CLI.md", "error: invalid value '-1' for '--limit <N>'");
    for args in [&["scan", "--limit", "-1"][..], &["scan", "--limit=-1"]] {
        let out = t.kvctl(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(stderr.lines().next(), Some(quoted.as_str()), "{args:?}");
    }
    assert_eq!(t.ok(&["scan", "--limit", "0"]), "");
}

#[test]
fn scan_start_end_prefix_limit() {
    let t = TestDb::new();
    for k in ["a", "b1", "b2", "b3", "c", "d"] {
        t.ok(&["put", k, &format!("v{k}")]);
    }
    let keys = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["scan"];
        all.extend_from_slice(args);
        t.ok(&all)
            .lines()
            .map(|l| l.split('\t').next().unwrap().to_string())
            .collect()
    };
    assert_eq!(keys(&[]), ["a", "b1", "b2", "b3", "c", "d"]);
    assert_eq!(t.ok(&["scan", "--limit", "1"]), "a\tva\n");
    assert_eq!(keys(&["--start", "b2"]), ["b2", "b3", "c", "d"]);
    assert_eq!(keys(&["--end", "b2"]), ["a", "b1"]);
    assert_eq!(keys(&["--start", "b1", "--end", "c"]), ["b1", "b2", "b3"]);
    assert_eq!(keys(&["--prefix", "b"]), ["b1", "b2", "b3"]);
    assert_eq!(keys(&["--prefix", "b", "--start", "b2"]), ["b2", "b3"]);
    assert_eq!(keys(&["--prefix", "b", "--end", "b3"]), ["b1", "b2"]);
    assert_eq!(keys(&["--prefix", "b", "--limit", "2"]), ["b1", "b2"]);
    assert_eq!(keys(&["--prefix", "zz"]), Vec::<String>::new());
    assert_eq!(keys(&["--hex", "--prefix", "62"]), ["6231", "6232", "6233"]);
}

#[test]
fn scan_reverse() {
    let t = TestDb::new();
    for k in ["a", "b1", "b2", "b3", "c", "d"] {
        t.ok(&["put", k, &format!("v{k}")]);
    }
    t.ok(&["delete", "c"]);
    let keys = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["scan", "--reverse"];
        all.extend_from_slice(args);
        t.ok(&all)
            .lines()
            .map(|l| l.split('\t').next().unwrap().to_string())
            .collect()
    };
    assert_eq!(keys(&[]), ["d", "b3", "b2", "b1", "a"]);
    assert_eq!(t.ok(&["scan", "-r", "--limit", "1"]), "d\tvd\n");
    assert_eq!(keys(&["--start", "b2"]), ["d", "b3", "b2"]);
    assert_eq!(keys(&["--end", "b2"]), ["b1", "a"]);
    assert_eq!(keys(&["--prefix", "b"]), ["b3", "b2", "b1"]);
    assert_eq!(keys(&["--prefix", "b", "--limit", "2"]), ["b3", "b2"]);
    assert_eq!(keys(&["--prefix", "zz"]), Vec::<String>::new());
    // The same after the entries moved into a table.
    t.ok(&["compact"]);
    assert_eq!(
        keys(&["--start", "a", "--end", "c"]),
        ["b3", "b2", "b1", "a"]
    );
}

#[test]
fn db_defaults_to_env_var_then_kvdb() {
    let t = TestDb::new();
    kvctl()
        .env("KVCTL_DB", &t.db)
        .args(["put", "from-env", "1"])
        .assert()
        .success();
    assert_eq!(t.ok(&["get", "from-env"]), "1\n");
    // Without --db or KVCTL_DB: ./kvdb in the working directory.
    kvctl()
        .current_dir(t.dir.path())
        .args(["put", "x", "y"])
        .assert()
        .success();
    assert!(t.dir.path().join("kvdb").join("CURRENT").is_file());
}

#[test]
fn get_explain_traces_the_lookup_on_stderr() {
    let t = TestDb::new();
    t.ok(&["put", "a", "1"]);
    t.ok(&["put", "m", "2"]);
    // Recovery keeps small WAL contents in the memtable; compact writes them to a table.
    t.ok(&["compact"]);
    let out = t.kvctl(&["get", "m", "--explain"]).assert().code(0);
    let out = out.get_output();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "2\n");
    let err = String::from_utf8_lossy(&out.stderr);
    for needle in [
        "memtable",
        "immutable memtable",
        "L1",
        ".sst",
        "totals:",
        "answer: found",
    ] {
        assert!(err.contains(needle), "missing {needle:?} in:\n{err}");
    }
    let missing = t.kvctl(&["get", "zzz", "--explain"]).assert().code(1);
    let err = String::from_utf8_lossy(&missing.get_output().stderr).to_string();
    assert!(err.contains("answer: not found"), "{err}");
    assert!(err.contains("not found in"), "{err}");
}
