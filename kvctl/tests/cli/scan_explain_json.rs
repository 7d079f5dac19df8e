//! `kvctl scan --prefix P --explain --json`: the per-table prefix-filter verdicts as one JSON
//! document on stderr, agreeing with the tables in the database and with the scan's lines.

use crate::common::{TestDb, first_json_line};

#[test]
fn scan_explain_json_counts_the_tables_the_prefix_filter_skips() {
    let t = TestDb::new();
    let db = bloomkv::Db::open(
        &t.db,
        bloomkv::Options {
            prefix_extractor: Some(std::sync::Arc::new(bloomkv::filter::DelimiterPrefix::new(
                b'/',
            ))),
            // No idle compaction: the two level-0 tables must stay apart.
            idle_compaction_delay: None,
            ..Default::default()
        },
    )
    .unwrap();
    // Two tables whose key ranges both cover "c/", one of which holds it.
    for tenant in ["a", "e"] {
        db.put(format!("{tenant}/1"), "v").unwrap();
    }
    db.flush().unwrap();
    for tenant in ["b", "c", "d"] {
        db.put(format!("{tenant}/1"), "v").unwrap();
    }
    db.flush().unwrap();
    let tables = db.live_files();
    drop(db);
    assert_eq!(tables.len(), 2);

    let out = t
        .kvctl(&[
            "--prefix-delim",
            "/",
            "scan",
            "--prefix",
            "c/",
            "--explain",
            "--json",
        ])
        .assert()
        .success();
    let out = out.get_output();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "c/1\tv\n");
    let v = first_json_line(&out.stderr);
    assert_eq!(v["format"], 1);
    assert_eq!(v["prefix"], "c/");
    let probes = v["tables"].as_array().unwrap();
    assert_eq!(probes.len(), 2);
    let mut seen: Vec<u64> = probes
        .iter()
        .map(|p| p["file_number"].as_u64().unwrap())
        .collect();
    seen.sort();
    let mut expected = tables.clone();
    expected.sort();
    assert_eq!(seen, expected);
    // The table holding c/1 is read; the other (a/1, e/1) is skipped by its prefix filter.
    let newest = *expected.last().unwrap();
    for p in probes {
        let holds_c = p["file_number"] == newest;
        assert_eq!(p["read"], holds_c, "{p}");
        assert_eq!(p["prefix_filter"], if holds_c { "maybe" } else { "absent" });
    }
    assert_eq!(v["totals"]["tables"], 2);
    assert_eq!(v["totals"]["skipped"], 1);
    assert_eq!(v["totals"]["read"], 1);
    assert_eq!(v["totals"]["out_of_key_range"], 0);
    t.kvctl(&["scan", "--prefix", "c/", "--json"])
        .assert()
        .code(2);
}
