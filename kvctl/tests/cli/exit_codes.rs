//! The exit-status table of docs/CLI.md is what kvctl does: for each row, commands that
//! produce each cause the row names exit with the row's status, and the table lists no other
//! status.

use std::collections::BTreeMap;

use crate::common::TestDb;

/// Status -> the text of its row in docs/CLI.md's "Exit status" table.
fn documented() -> BTreeMap<i32, String> {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/CLI.md")).unwrap();
    let section = doc
        .split("## Exit status")
        .nth(1)
        .expect("CLI.md has an Exit status section");
    section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| {
            let mut cells = l.trim_matches('|').split('|').map(str::trim);
            let status = cells.next()?.parse().ok()?;
            Some((status, cells.next()?.to_string()))
        })
        .collect()
}

#[test]
fn every_documented_status_is_what_its_causes_exit_with() {
    let rows = documented();
    assert_eq!(
        rows.keys().copied().collect::<Vec<_>>(),
        vec![0, 1, 2, 3, 4]
    );
    let t = TestDb::new();
    t.ok(&["put", "k", "v"]);
    let there = t.dir.path().join("there");
    std::fs::create_dir(&there).unwrap();
    let there = there.to_str().unwrap();
    let missing = t.dir.path().join("missing");
    let missing = missing.to_str().unwrap();
    let bad_line = t.dir.path().join("bad.tsv");
    std::fs::write(&bad_line, "a\t1\nno tab here\n").unwrap();
    let bad_line = bad_line.to_str().unwrap();
    let big_key = "k".repeat(bloomkv::MAX_KEY_BYTES + 1);
    let serve_dir = t.dir.path().join("served");
    let serve_dir = serve_dir.to_str().unwrap();
    let three_lines = t.dir.path().join("three.txt");
    std::fs::write(&three_lines, "a\nb\nc\n").unwrap();
    let three_lines = three_lines.to_str().unwrap();
    let state = t.dir.path().join("state.bf");
    let state = state.to_str().unwrap();

    // (status, a phrase its row must contain, the command); `--db` is the test database
    // unless the command names another.
    let cases: Vec<(i32, &str, Vec<&str>)> = vec![
        (0, "success", vec!["get", "k"]),
        (1, "does not exist", vec!["get", "absent"]),
        (2, "unknown command", vec!["frobnicate"]),
        (2, "missing argument", vec!["put", "k"]),
        (2, "bad hex", vec!["--hex", "get", "zz"]),
        (2, "malformed `load`", vec!["load", bad_line]),
        (2, "oversized key", vec!["put", &big_key, "v"]),
        (2, "oversized key", vec!["get", &big_key]),
        (2, "oversized key", vec!["delete", &big_key]),
        (2, "oversized key", vec!["delete-range", "a", &big_key]),
        (
            2,
            "options the engine rejects",
            vec![
                "serve",
                "--port",
                "0",
                "--bits-per-key",
                "NaN",
                "--dir",
                serve_dir,
            ],
        ),
        (
            2,
            "`delete-range` with START > END",
            vec!["delete-range", "b", "a"],
        ),
        (
            2,
            "`checkpoint` into an existing directory",
            vec!["checkpoint", there],
        ),
        (
            2,
            "`dedup --approx` past its state's capacity",
            vec![
                "dedup",
                "--approx",
                "--state",
                state,
                "--capacity",
                "1",
                three_lines,
            ],
        ),
        (3, "missing database", vec!["--db", missing, "get", "k"]),
        (3, "missing database", vec!["--db", missing, "compact"]),
        (3, "missing database", vec!["--db", missing, "delete", "k"]),
    ];
    for (status, phrase, args) in cases {
        let row = rows.get(&status).unwrap();
        assert!(
            row.contains(phrase),
            "row {status} does not mention {phrase:?}: {row}"
        );
        let mut cmd = if args.first() == Some(&"--db") {
            let mut c = crate::common::kvctl();
            c.args(&args);
            c
        } else {
            t.kvctl(&args)
        };
        // A `serve` that accepted its options would run until killed.
        let out = cmd
            .timeout(std::time::Duration::from_secs(120))
            .output()
            .unwrap();
        // Arguments and messages cut short: a case may hold a 64 KiB key.
        let shown: Vec<String> = args.iter().map(|a| a.chars().take(40).collect()).collect();
        let stderr: String = String::from_utf8_lossy(&out.stderr)
            .chars()
            .take(400)
            .collect();
        assert_eq!(out.status.code(), Some(status), "kvctl {shown:?}: {stderr}");
    }

    // Locked: a writer holds the database (write commands; reads work beside it).
    assert!(rows[&3].contains("locked"));
    let writer = bloomkv::Db::open(&t.db, bloomkv::Options::default()).unwrap();
    assert_eq!(
        t.kvctl(&["put", "k", "w"]).output().unwrap().status.code(),
        Some(3)
    );
    drop(writer);
    // Stdout closed under `dedup`.
    assert!(rows[&4].contains("stdout closed"));
    assert_eq!(crate::common::dedup_into_closed_pipe(&t.db).code(), Some(4));
    // Corrupt: a damaged table.
    assert!(rows[&3].contains("corrupt"));
    t.ok(&["compact"]);
    let table = t.tables().pop().unwrap();
    let mut bytes = std::fs::read(&table).unwrap();
    bytes[3] ^= 0x10;
    std::fs::write(&table, bytes).unwrap();
    assert_eq!(
        t.kvctl(&["verify"]).output().unwrap().status.code(),
        Some(3)
    );
}

/// A stand-in for a cluster node's client port: answers each request, read whole, with
/// the next of `replies` (raw RESP), one connection after another.
fn fake_node(replies: Vec<String>) -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let mut replies = replies.into_iter();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut r = BufReader::new(stream.try_clone().unwrap());
            // One request: `*N` then N bulk strings (two lines each).
            let mut line = String::new();
            while r.read_line(&mut line).is_ok_and(|n| n > 0) {
                let n: usize = line.trim()[1..].parse().unwrap();
                for _ in 0..2 * n {
                    line.clear();
                    r.read_line(&mut line).unwrap();
                }
                let Some(reply) = replies.next() else { return };
                stream.write_all(reply.as_bytes()).unwrap();
                line.clear();
            }
        }
    });
    addr
}

#[test]
fn cluster_status_exits_3_unless_the_cluster_serves() {
    let fail = "cluster_state:fail\r\ncluster_leader:0\r\n";
    let node = fake_node(vec![format!("${}\r\n{fail}\r\n", fail.len())]);
    crate::common::kvctl()
        .args(["cluster", "status", "--node", &node])
        .assert()
        .code(3)
        .stdout(predicates::str::contains("cluster_state:fail"))
        .stderr(predicates::str::contains(
            "the cluster does not serve (cluster_state:fail)",
        ));
    let ok = "cluster_state:ok\r\ncluster_leader:2\r\n";
    let node = fake_node(vec![format!("${}\r\n{ok}\r\n", ok.len())]);
    crate::common::kvctl()
        .args(["cluster", "status", "--node", &node])
        .assert()
        .code(0)
        .stdout(predicates::str::contains("cluster_leader:2"));
}

#[test]
fn cluster_remove_of_a_refused_node_fails_and_says_why() {
    let node = fake_node(vec![
        "-ERR node 9 is not a member of the cluster\r\n".into(),
    ]);
    crate::common::kvctl()
        .args(["cluster", "remove", "9", "--node", &node])
        .assert()
        .code(3)
        .stderr(predicates::str::contains("node 9 is not a member"))
        .stderr(predicates::prelude::PredicateBooleanExt::not(
            predicates::str::contains("removed"),
        ));
}
