//! A key over the 64 KiB limit is the caller's mistake for every command that takes one:
//! exit 2 (usage), with a message that shows the key's start and length, not the whole key.

use crate::common::{TestDb, doc_quote, kvctl};

#[test]
fn an_oversized_key_is_a_usage_error_everywhere() {
    let t = TestDb::new();
    t.ok(&["put", "k", "v"]);
    let key = "k".repeat(bloomkv::MAX_KEY_BYTES + 4464);
    let lines = t.dir.path().join("lines");
    std::fs::write(&lines, format!("first\n{key}\nlast\n")).unwrap();
    let lines = lines.to_str().unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["put", &key, "v"],
        vec!["get", &key],
        vec!["get", "--explain", &key],
        vec!["delete", &key],
        vec!["delete-range", "a", &key],
        vec!["dedup", lines],
    ];
    for args in cases {
        let out = t.kvctl(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let len = stderr.len();
        // Shown cut short on failure: before the fix the message held the whole key.
        let stderr: String = stderr.chars().take(300).collect();
        assert_eq!(out.status.code(), Some(2), "{}: {stderr}", args[0]);
        assert!(stderr.contains("65536"), "{}: {stderr}", args[0]);
        // One short line: the key's start and its length, never the 70 KB key itself.
        assert!(len < 400, "{}: {len} bytes: {stderr}", args[0]);
        if args[0] == "dedup" {
            assert!(stderr.contains("line 2"), "{stderr}");
            assert!(stderr.contains("70000 bytes"), "{stderr}");
        } else {
            assert!(
                stderr.contains("kkkk... (70000 bytes)"),
                "{}: {stderr}",
                args[0]
            );
        }
    }
    // Nothing changed, and dedup stored the line before the bad one.
    assert_eq!(t.ok(&["get", "k"]), "v\n");
    assert_eq!(t.ok(&["get", "first"]), "\n");
    assert_eq!(
        t.kvctl(&["get", "last"]).output().unwrap().status.code(),
        Some(1)
    );
}

/// docs/CLI.md quotes the message `put` gives for an oversized key word for word.
#[test]
fn the_oversized_key_message_is_the_one_cli_md_quotes() {
    let t = TestDb::new();
    let key = "k".repeat(70_000);
    let out = kvctl()
        .current_dir(t.dir.path())
        .args(["put", &key, "v"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let quoted = doc_quote("CLI.md", "kvctl: put kkkk");
    assert_eq!(stderr, format!("{quoted}\n"));
}
