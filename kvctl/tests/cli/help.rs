//! Each command's help shows its own flags only: a benchmark or a filter file has no `--db`,
//! and `get` no prefix filter.

use crate::common::kvctl;

fn help(args: &[&str]) -> String {
    let out = kvctl().args(args).arg("--help").output().unwrap();
    assert!(out.status.success(), "{args:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn per_command_help_lists_only_the_flags_it_takes() {
    for cmd in [
        &["bench"][..],
        &["filter", "new"],
        &["filter", "info"],
        &["sst", "dump"],
    ] {
        let h = help(cmd);
        for flag in ["--db", "--prefix-len", "--prefix-delim", "--quiet"] {
            assert!(!h.contains(flag), "{cmd:?} shows {flag}:\n{h}");
        }
    }
    for cmd in [&["bench"][..], &["filter", "new"], &["filter", "info"]] {
        assert!(!help(cmd).contains("--hex"), "{cmd:?}");
    }
    let get = help(&["get"]);
    assert!(
        get.contains("--db") && get.contains("--hex") && get.contains("KVCTL_DB"),
        "{get}"
    );
    assert!(!get.contains("--prefix-len"), "{get}");
    // get's --json is the form of its --explain trace, not a report of its own.
    assert!(
        get.contains("With --explain: the trace as one JSON"),
        "{get}"
    );
    let put = help(&["put"]);
    assert!(
        put.contains("--prefix-len") && put.contains("--prefix-delim"),
        "{put}"
    );
    let verify = help(&["verify"]);
    assert!(
        verify.contains("--quiet") && verify.contains("--json"),
        "{verify}"
    );
    assert!(!verify.contains("--hex"), "{verify}");
    let serve = help(&["serve"]);
    assert!(
        serve.contains("--db") && !serve.contains("--dir <"),
        "{serve}"
    );
    // The old global spellings still work before the subcommand.
    let t = crate::common::TestDb::new();
    t.ok(&["put", "k", "v"]);
    let out = kvctl()
        .arg("--db")
        .arg(&t.db)
        .args(["--hex", "get", "6b"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "76\n");
}
