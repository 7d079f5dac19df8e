//! kvctl stats (text and --json), compact, and sst dump (healthy and corrupt tables).

use crate::common::{TestDb, kvctl};
use predicates::prelude::*;

fn load_keys(t: &TestDb, n: usize) {
    let input: String = (0..n).map(|i| format!("key{i:06}\tvalue{i}\n")).collect();
    t.kvctl(&["load"]).write_stdin(input).assert().success();
}

#[test]
fn stats_tables_lists_every_table() {
    let t = TestDb::new();
    load_keys(&t, 2000);
    t.ok(&["compact"]);
    let text = t.ok(&["stats", "--tables"]);
    let rows: Vec<&str> = text.lines().filter(|l| l.contains(".sst")).collect();
    assert_eq!(rows.len(), 1, "{text}");
    assert!(rows[0].starts_with('L'), "{text}");
    assert!(rows[0].contains("key000000 .. key001999"), "{text}");
    let json = t.ok(&["stats", "--tables", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let tables = v["tables"].as_array().unwrap();
    assert_eq!(tables.len(), 1);
    assert_eq!(tables[0]["entries"], 2000);
    assert_eq!(tables[0]["smallest_key"], "key000000");
    assert!(tables[0]["filter_bits_per_key"].as_f64().unwrap() > 0.0);
    // Without --tables the JSON has no table list.
    let plain: serde_json::Value = serde_json::from_str(&t.ok(&["stats", "--json"])).unwrap();
    assert!(plain.get("tables").is_none());
    // --hex shows keys as hex digits.
    let hex = t.ok(&["--hex", "stats", "--tables"]);
    assert!(hex.contains("6b6579303030303030 .."), "{hex}");
}

#[test]
fn stats_text_and_json() {
    let t = TestDb::new();
    load_keys(&t, 2000);
    // A small load stays in the WAL and memtable across opens; compact writes it to a table.
    t.ok(&["compact"]);
    let text = t.ok(&["stats"]);
    for needle in [
        "level",
        "bits/key",
        "exp. FPR",
        "meas. FPR",
        "L0",
        "L6",
        "since open",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
    let json = t.ok(&["stats", "--json"]);
    assert_eq!(json.lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["format"], 1);
    assert_eq!(v["counters_since"], "open");
    for k in [
        "db",
        "gets",
        "filter_checks",
        "filter_useful",
        "filter_false_positives",
        "filter_unavailable",
        "data_blocks_read",
        "block_cache_hits",
        "bytes_read",
        "flushes",
        "compactions",
        "compaction_bytes_read",
        "compaction_bytes_written",
        "user_bytes_written",
        "write_amplification",
        "stall_micros",
        "total_files",
        "recovery",
    ] {
        assert!(v.get(k).is_some(), "stats --json lacks {k}: {json}");
    }
    let levels = v["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 7);
    for (i, l) in levels.iter().enumerate() {
        assert_eq!(l["level"], i);
        for k in [
            "files",
            "bytes",
            "entries",
            "filter_bytes",
            "filter_bits_per_key",
            "expected_fpr",
            "measured_fpr",
            "filter_checks",
            "filter_useful",
            "filter_false_positives",
        ] {
            assert!(l.get(k).is_some(), "level {i} lacks {k}");
        }
    }
    let entries: u64 = levels.iter().map(|l| l["entries"].as_u64().unwrap()).sum();
    assert_eq!(entries, 2000, "compact wrote every loaded entry to a table");
    let l0 = &levels[1];
    assert!(l0["filter_bits_per_key"].as_f64().unwrap() >= 9.0);
    let fpr = l0["expected_fpr"].as_f64().unwrap();
    assert!(fpr > 0.0 && fpr < 0.03, "{fpr}");
    // Nothing looked up since open: no measured rate yet.
    assert!(l0["measured_fpr"].is_null());
}

/// With no compaction in this process (always so for `stats`, a secondary) the bytes-per-cause
/// line says so in words, with no padding in the middle of the sentence.
#[test]
fn stats_says_in_words_that_no_compaction_ran() {
    let t = TestDb::new();
    load_keys(&t, 20);
    t.ok(&["compact"]);
    let out = t.ok(&["stats"]);
    let line = out
        .lines()
        .find(|l| l.starts_with("bytes written per cause since open: "))
        .unwrap_or_else(|| panic!("no bytes-per-cause line:\n{out}"));
    assert_eq!(
        line,
        "bytes written per cause since open: WAL 0, flush 0, compaction 0 (no compaction ran \
         since open), re-filter 0; trivial moves 0 (0 bytes moved, none written)"
    );
}

#[test]
fn compact_merges_tables_and_keeps_the_data() {
    let t = TestDb::new();
    for i in 0..3 {
        t.ok(&["put", &format!("k{i}"), "v"]);
    }
    t.ok(&["delete", "k1"]);
    // Small writes stay in the WAL (carried across opens) until something flushes them.
    assert_eq!(t.tables().len(), 0);
    t.kvctl(&["compact"])
        .assert()
        .success()
        .stdout("")
        .stderr(predicate::str::contains("compacted"));
    assert_eq!(t.tables().len(), 1);
    assert_eq!(t.ok(&["scan"]), "k0\tv\nk2\tv\n");
}

#[test]
fn sst_dump_shows_footer_properties_filter_blocks_and_entries() {
    let t = TestDb::new();
    load_keys(&t, 500);
    t.ok(&["delete", "key000007"]);
    t.ok(&["compact"]);
    let table = t.tables().pop().unwrap();
    let path = table.to_str().unwrap();
    // sst dump needs no database: run it from elsewhere, without --db.
    let out = kvctl().args(["sst", "dump", path]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for needle in [
        "footer",
        "format version 3",
        "properties",
        "compression  lz4: data blocks",
        "499 entries",
        "filter",
        // Compacted to level 1: the default policy's Ribbon filter.
        "bloomkv.Ribbon",
        "checksum verified",
        "expected FPR",
        "data blocks",
        "verified",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
    assert!(
        !text.contains("key000001\t"),
        "entries printed without --entries"
    );
    let out = kvctl()
        .args(["sst", "dump", path, "--entries"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let entries: Vec<&str> = text.lines().filter(|l| l.starts_with("key0")).collect();
    assert_eq!(entries.len(), 499);
    assert!(entries[0].starts_with("key000000\t") && entries[0].ends_with("\tput\tvalue0"));
    // --hex applies to the entries too.
    let out = kvctl()
        .args(["--hex", "sst", "dump", path, "--entries"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("6b6579303030303030\t"), "{text}");
}

#[test]
fn sst_dump_of_a_corrupt_table_is_exit_3_naming_file_and_offset() {
    let t = TestDb::new();
    load_keys(&t, 500);
    // The load sits in the WAL until the next open; compact turns it into one table.
    t.ok(&["compact"]);
    let table = t.tables().pop().unwrap();
    let good = std::fs::read(&table).unwrap();
    let path = table.to_str().unwrap().to_string();
    // Damage inside the first data block (checksum), then inside the footer.
    for at in [100, good.len() - 12] {
        let mut bad = good.clone();
        bad[at] ^= 0x5a;
        bad[at + 1] ^= 0xa5;
        std::fs::write(&table, &bad).unwrap();
        kvctl()
            .args(["sst", "dump", &path])
            .assert()
            .code(3)
            .stderr(
                predicate::str::contains("corruption in")
                    .and(predicate::str::contains(path.as_str()))
                    .and(predicate::str::contains("at byte")),
            );
    }
    // A damaged filter: the engine would read on without it, the dump reports it and fails.
    std::fs::write(&table, &good).unwrap();
    let out = kvctl().args(["sst", "dump", &path]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let filter_at: usize = text
        .split("filter.bloomkv.Ribbon @")
        .nth(1)
        .and_then(|r| r.split('+').next())
        .unwrap()
        .parse()
        .unwrap();
    let mut bad = good.clone();
    bad[filter_at + 40] ^= 0xff;
    std::fs::write(&table, &bad).unwrap();
    kvctl()
        .args(["sst", "dump", &path])
        .assert()
        .code(3)
        .stdout(predicate::str::contains("DAMAGED").and(predicate::str::contains("data blocks")))
        .stderr(predicate::str::contains(format!("corruption in {path}")));
    // A file that is not there, and one too short to be a table.
    kvctl()
        .args(["sst", "dump", "/nonexistent/1.sst"])
        .assert()
        .code(3);
    std::fs::write(&table, b"short").unwrap();
    kvctl()
        .args(["sst", "dump", &path])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("shorter than a table footer"));
}

/// A Bloom filter (the default on level 0, or everywhere with `BloomPolicy`) is decoded:
/// probes, bits, layout, keys, expected rate and fill.
#[test]
fn sst_dump_decodes_a_bloom_filter() {
    let dir = tempfile::tempdir().unwrap();
    let db = bloomkv::Db::open(
        dir.path(),
        bloomkv::Options {
            filter_policy: std::sync::Arc::new(bloomkv::filter::BloomPolicy::new(10)),
            ..Default::default()
        },
    )
    .unwrap();
    for i in 0..500u32 {
        db.put(format!("key{i:06}"), "value").unwrap();
    }
    db.compact().unwrap();
    let table = db.live_files()[0];
    drop(db);
    let path = dir.path().join(bloomkv::sstable::table_file_name(table));
    let out = kvctl()
        .args(["sst", "dump", path.to_str().unwrap()])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for needle in [
        "bloomkv.BloomFilter",
        "k = ",
        "layout Blocked",
        "500 keys",
        "expected FPR",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

#[test]
fn sst_dump_shows_the_codec_and_ratio_of_a_compressed_table() {
    let dir = tempfile::tempdir().unwrap();
    for c in [
        bloomkv::Compression::Lz4,
        bloomkv::Compression::Zstd { level: 3 },
    ] {
        let db_dir = dir.path().join(c.name());
        let db = bloomkv::Db::open(
            &db_dir,
            bloomkv::Options {
                compression: c,
                ..Default::default()
            },
        )
        .unwrap();
        for i in 0..2000u32 {
            db.put(format!("key{i:06}"), format!("value {i} ").repeat(8))
                .unwrap();
        }
        db.flush().unwrap();
        let table = db.live_files()[0];
        drop(db);
        let path = db_dir.join(bloomkv::sstable::table_file_name(table));
        let out = kvctl()
            .args(["sst", "dump", path.to_str().unwrap()])
            .assert()
            .success();
        let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
        let line = text
            .lines()
            .find(|l| l.starts_with("compression  "))
            .unwrap_or_else(|| panic!("no compression line in:\n{text}"));
        assert!(
            line.starts_with(&format!("compression  {}: ", c.name())),
            "{line}"
        );
        let ratio: f64 = line
            .rsplit("(ratio ")
            .next()
            .unwrap()
            .trim_end_matches(')')
            .parse()
            .unwrap();
        assert!(ratio > 2.0, "{line}");
        assert!(text.contains(" blocks compressed; "), "{text}");
    }
}
