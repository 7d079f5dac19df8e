//! kvctl load (file and stdin, malformed lines, --hex) and dedup (within a run and across
//! runs, stdin and file).

use crate::common::{TestDb, doc_quote};
use predicates::prelude::*;

#[test]
fn load_from_stdin_and_from_a_file() {
    let t = TestDb::new();
    // More than one write batch (1000 lines) and values holding spaces.
    let input: String = (0..2500)
        .map(|i| format!("key{i:05}\tvalue {i}\n"))
        .collect();
    t.kvctl(&["load"])
        .write_stdin(input.clone())
        .assert()
        .success()
        .stdout("")
        .stderr(predicate::str::contains("loaded 2500 entries"));
    assert_eq!(t.ok(&["get", "key02499"]), "value 2499\n");
    assert_eq!(t.ok(&["scan"]), input);

    let file = t.dir.path().join("in.tsv");
    std::fs::write(&file, "f1\tone\nf2\ttwo\tand a tab\n").unwrap();
    t.ok(&["load", file.to_str().unwrap()]);
    // Split at the first TAB: the rest is the value (printed escaped).
    assert_eq!(t.ok(&["get", "f2"]), "two\\tand a tab\n");
    // `-` is stdin as well.
    t.kvctl(&["load", "-"])
        .write_stdin("s\t1\n")
        .assert()
        .success();
    assert_eq!(t.ok(&["get", "s"]), "1\n");
}

#[test]
fn load_rejects_a_malformed_line_keeping_the_lines_before_it() {
    let t = TestDb::new();
    let mut input: String = (0..1500).map(|i| format!("k{i:04}\tv\n")).collect();
    input.push_str("no tab here\nafter\tx\n");
    t.kvctl(&["load"])
        .write_stdin(input)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("stdin line 1501").and(predicate::str::contains("no TAB")),
        );
    assert_eq!(t.ok(&["scan"]).lines().count(), 1500);
    t.kvctl(&["get", "after"]).assert().code(1);
    // A missing input file is an I/O error naming it.
    t.kvctl(&["load", "/nonexistent/input.tsv"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("/nonexistent/input.tsv"));
}

/// A key over the 64 KiB limit is a bad line like any other: the lines before it (in the
/// same batch, too) are stored, exit 2 names the line.
#[test]
fn load_rejects_an_oversized_key_keeping_the_lines_before_it() {
    let t = TestDb::new();
    let mut input: String = (0..700).map(|i| format!("k{i:04}\tv\n")).collect();
    input.push_str(&format!("{}\tv\n", "x".repeat(64 * 1024 + 1)));
    input.push_str("after\tx\n");
    t.kvctl(&["load"])
        .write_stdin(input)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("stdin line 701")
                .and(predicate::str::contains("exceeds"))
                .and(predicate::str::contains("lines 1 to 700 were loaded")),
        );
    assert_eq!(t.ok(&["scan"]).lines().count(), 700);
    t.kvctl(&["get", "after"]).assert().code(1);
}

#[test]
fn load_with_hex_takes_binary_keys_and_checks_the_digits() {
    let t = TestDb::new();
    t.kvctl(&["--hex", "load"])
        .write_stdin("000a\tff00\n0b\t\n")
        .assert()
        .success();
    assert_eq!(t.ok(&["--hex", "scan"]), "000a\tff00\n0b\t\n");
    t.kvctl(&["--hex", "load"])
        .write_stdin("0c\t01\nxyz\t00\n")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("line 2").and(predicate::str::contains("key")));
    assert_eq!(t.ok(&["--hex", "get", "0c"]), "01\n");
}

#[test]
fn dedup_prints_first_sightings_within_and_across_runs() {
    let t = TestDb::new();
    let first = "http://a/\nhttp://b/\nhttp://a/\nhttp://c/\nhttp://b/\n";
    t.kvctl(&["dedup"])
        .write_stdin(first)
        .assert()
        .success()
        .stdout("http://a/\nhttp://b/\nhttp://c/\n")
        .stderr(predicate::str::contains("5 lines read").and(predicate::str::contains("3 new")));
    // Second run: only never-seen lines, in input order, repeats within the run once.
    let second = "http://c/\nhttp://d/\nhttp://a/\nhttp://d/\nhttp://e/\n";
    t.kvctl(&["dedup"])
        .write_stdin(second)
        .assert()
        .success()
        .stdout("http://d/\nhttp://e/\n");
    // The same input again: nothing new.
    t.kvctl(&["dedup"])
        .write_stdin(second)
        .assert()
        .success()
        .stdout("");
    // The lines are stored as keys with empty values.
    assert_eq!(t.ok(&["get", "http://e/"]), "\n");
}

#[test]
fn dedup_is_exact_over_many_lines_and_batches() {
    let t = TestDb::new();
    // 3000 distinct lines (three write batches), each twice, the repeats far apart.
    let lines: Vec<String> = (0..3000)
        .map(|i| format!("url-{}", i * 7919 % 10007))
        .collect();
    let mut input = lines.join("\n");
    input.push('\n');
    input.push_str(&input.clone());
    let file = t.dir.path().join("urls.txt");
    std::fs::write(&file, &input).unwrap();
    let out = t.ok(&["dedup", file.to_str().unwrap()]);
    assert_eq!(out.lines().collect::<Vec<_>>(), lines);
    // Half of them again plus new ones: exactly the new ones come out.
    let again = format!("url-0\nurl-10008\n{}\nurl-10009\nurl-10008\n", lines[1500]);
    assert_eq!(
        t.kvctl(&["dedup", "-"])
            .write_stdin(again)
            .assert()
            .success()
            .get_output()
            .stdout,
        b"url-10008\nurl-10009\n"
    );
}

#[test]
fn dedup_passes_lines_through_byte_exact_and_handles_hex() {
    let t = TestDb::new();
    // Lines are bytes: CR, tabs and invalid UTF-8 survive unchanged.
    let input: &[u8] = b"a\tb\r\n\xff\xfe\na\tb\r\n";
    t.kvctl(&["dedup"])
        .write_stdin(input)
        .assert()
        .success()
        .stdout(&b"a\tb\r\n\xff\xfe\n"[..]);
    t.kvctl(&["--hex", "dedup"])
        .write_stdin("FFFE\n00\n")
        .assert()
        .success()
        .stdout("00\n");
}

/// The partial-load report reads as English whatever the count, and docs/CLI.md quotes it.
#[test]
fn a_partial_load_names_the_lines_it_stored() {
    let cases = [
        ("bad\n", "nothing was loaded".to_string()),
        ("a\t1\nbad\n", "line 1 was loaded into DIR".to_string()),
        (
            "a\t1\nb\t2\nbad\n",
            doc_quote("CLI.md", "kvctl: stdin line 3")
                .split("; ")
                .nth(1)
                .unwrap()
                .to_string(),
        ),
    ];
    for (input, kept) in cases {
        let t = TestDb::new();
        let out = t.kvctl(&["load"]).write_stdin(input).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{input:?}");
        let bad = input.lines().count();
        let kept = kept.replace("DIR", &t.db.display().to_string());
        assert_eq!(
            String::from_utf8(out.stderr).unwrap(),
            format!(
                "kvctl: stdin line {bad}: malformed input (no TAB between key and value); {kept}\n"
            ),
            "{input:?}"
        );
    }
}
