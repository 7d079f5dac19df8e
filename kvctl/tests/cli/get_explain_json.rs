//! `kvctl get KEY --explain --json`: the value on stdout as without it, the trace as one JSON
//! document on stderr whose answer names the table that holds the key (checked with
//! `sst dump`), whose per-table figures add up to its totals, and which says "deleted" and
//! "not found" when the lookup found a tombstone or nothing.

use crate::common::{TestDb, first_json_line, json_doc, kvctl};
use serde_json::Value;

/// Three level-0 tables, one per flush: `a*` keys, `b*` keys, then a tombstone for `a3`.
/// Returns the table numbers, oldest first.
fn three_tables(t: &TestDb) -> Vec<u64> {
    // No idle compaction: the three level-0 tables must stay apart.
    let opts = bloomkv::Options {
        idle_compaction_delay: None,
        ..Default::default()
    };
    let db = bloomkv::Db::open(&t.db, opts).unwrap();
    for i in 0..100 {
        db.put(format!("a{i}"), format!("va{i}")).unwrap();
    }
    db.flush().unwrap();
    for i in 0..100 {
        db.put(format!("b{i}"), format!("vb{i}")).unwrap();
    }
    db.flush().unwrap();
    db.delete("a3").unwrap();
    db.flush().unwrap();
    let mut tables = db.live_files();
    tables.sort();
    assert_eq!(tables.len(), 3, "{tables:?}");
    tables
}

/// The keys `sst dump --entries --json` lists in table `number` of the database.
fn keys_in_table(t: &TestDb, number: u64) -> Vec<String> {
    let path = t.db.join(bloomkv::sstable::table_file_name(number));
    let out = kvctl()
        .arg("sst")
        .arg("dump")
        .arg(&path)
        .args(["--json", "--entries"])
        .assert()
        .success();
    let v = json_doc(&out.get_output().stdout);
    v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["key"].as_str().unwrap().to_string())
        .collect()
}

/// The per-table figures summed must be the totals.
fn check_totals(v: &Value) {
    let tables = v["tables"].as_array().unwrap();
    let sum = |field: &str| -> u64 { tables.iter().map(|p| p[field].as_u64().unwrap()).sum() };
    let with_filter = |word: &str| tables.iter().filter(|p| p["filter"] == word).count() as u64;
    let n = &v["totals"];
    assert_eq!(n["tables"], tables.len() as u64);
    assert_eq!(n["blocks_from_disk"], sum("blocks_from_disk"));
    assert_eq!(n["blocks_from_cache"], sum("blocks_from_cache"));
    assert_eq!(n["data_blocks"], sum("blocks"));
    assert_eq!(n["filter_absent"], with_filter("absent"));
    assert_eq!(n["filter_maybe"], with_filter("maybe"));
    assert_eq!(n["without_filter"], with_filter("none"));
    assert_eq!(
        n["filter_checks"].as_u64().unwrap(),
        with_filter("absent") + with_filter("maybe")
    );
    for (i, p) in tables.iter().enumerate() {
        assert_eq!(p["position"], i as u64 + 1);
        assert_eq!(
            p["file"],
            bloomkv::sstable::table_file_name(p["file_number"].as_u64().unwrap())
        );
    }
}

#[test]
fn get_explain_json_names_the_table_holding_the_key() {
    let t = TestDb::new();
    let tables = three_tables(&t);

    // Found: in the second table (the b* keys), past the newest one.
    let out = t
        .kvctl(&["get", "b42", "--explain", "--json"])
        .assert()
        .success();
    let out = out.get_output();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "vb42\n");
    let v = first_json_line(&out.stderr);
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    assert_eq!(v["format"], 1);
    assert_eq!(v["key"], "b42");
    assert_eq!(v["memtable"], "miss");
    assert_eq!(v["immutable_memtable"], Value::Null);
    assert!(v["sequence"].as_u64().unwrap() >= 201);
    let answer = &v["answer"];
    assert_eq!(answer["result"], "found");
    assert_eq!(answer["source"], "table");
    assert_eq!(answer["level"], 0);
    assert_eq!(answer["file_number"], tables[1]);
    assert_eq!(answer["file"], bloomkv::sstable::table_file_name(tables[1]));
    assert!(keys_in_table(&t, tables[1]).contains(&"b42".to_string()));
    let probes = v["tables"].as_array().unwrap();
    let last = probes.last().unwrap();
    assert_eq!(last["file_number"], tables[1]);
    assert_eq!(last["result"], "found");
    assert_eq!(last["found"], true);
    assert_eq!(last["filter"], "maybe");
    assert_eq!(last["blocks"], 1);
    // Any table consulted before it held nothing for b42.
    assert!(
        probes[..probes.len() - 1]
            .iter()
            .all(|p| p["found"] == false)
    );
    check_totals(&v);

    // Deleted: the tombstone in the newest table answers.
    let out = t
        .kvctl(&["get", "a3", "--explain", "--json"])
        .assert()
        .code(1);
    let out = out.get_output();
    assert!(out.stdout.is_empty());
    let v = first_json_line(&out.stderr);
    assert_eq!(v["answer"]["result"], "deleted");
    assert_eq!(v["answer"]["file_number"], tables[2]);
    assert_eq!(v["tables"][0]["result"], "tombstone");
    assert!(keys_in_table(&t, tables[2]).contains(&"a3".to_string()));
    // The error line still follows the document.
    assert!(String::from_utf8_lossy(&out.stderr).contains("not found in"));
    check_totals(&v);

    // Not found: every table consulted said no, nothing answered.
    let out = t
        .kvctl(&["get", "a55x", "--explain", "--json"])
        .assert()
        .code(1);
    let v = first_json_line(&out.get_output().stderr);
    assert_eq!(v["answer"]["result"], "not_found");
    assert_eq!(v["answer"]["source"], "nowhere");
    assert_eq!(v["answer"]["file_number"], Value::Null);
    assert!(
        v["tables"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["found"] == false)
    );
    check_totals(&v);

    // --json asks for the trace's form: without --explain it is a usage error.
    t.kvctl(&["get", "b42", "--json"]).assert().code(2);
}
