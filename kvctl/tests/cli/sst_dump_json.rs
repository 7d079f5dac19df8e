//! `kvctl sst dump --json`: one JSON document describing the table, whose figures are the
//! table's own (the keys put, in order, with their values; the filter the table carries),
//! and a damaged filter described in it with exit 3.

use crate::common::{TestDb, json_doc, kvctl};
use serde_json::Value;

/// A database with keys `key000000`.. (`n` of them, one deleted), compacted into one table;
/// returns the table's path.
fn one_table(t: &TestDb, n: usize, deleted: usize) -> String {
    let input: String = (0..n).map(|i| format!("key{i:06}\tvalue{i}\n")).collect();
    t.kvctl(&["load"]).write_stdin(input).assert().success();
    t.ok(&["delete", &format!("key{deleted:06}")]);
    t.ok(&["compact"]);
    let tables = t.tables();
    assert_eq!(tables.len(), 1, "{tables:?}");
    tables[0].to_str().unwrap().to_string()
}

#[test]
fn sst_dump_json_describes_the_table_it_reads() {
    let t = TestDb::new();
    let path = one_table(&t, 700, 7);
    let out = kvctl()
        .args(["sst", "dump", &path, "--json"])
        .assert()
        .success();
    let v = json_doc(&out.get_output().stdout);
    assert_eq!(v["format"], 1);
    assert_eq!(v["file"], path.as_str());
    assert_eq!(v["file_bytes"], std::fs::metadata(&path).unwrap().len());
    // A full compaction to the last level drops the tombstone and the key it deleted.
    let p = &v["properties"];
    assert_eq!(p["entries"], 699);
    assert_eq!(p["deletions"], 0);
    assert_eq!(p["smallest_key"]["key"], "key000000");
    assert_eq!(p["largest_key"]["key"], "key000699");
    let file_number: u64 = std::path::Path::new(&path)
        .file_stem()
        .and_then(|s| s.to_str())
        .and_then(|s| s.parse().ok())
        .unwrap();
    assert_eq!(p["file_number"], file_number);
    let d = &v["data_blocks"];
    assert_eq!(d["entries"], 699);
    assert_eq!(d["puts"], 699);
    assert_eq!(d["blocks"], p["data_blocks"]);
    assert!(d["blocks"].as_u64().unwrap() >= 1);
    assert!(d["min_block_bytes"].as_u64() <= d["max_block_bytes"].as_u64());
    // The filter: the block the metaindex names, of the policy the properties name.
    let f = &v["filter"];
    assert_eq!(f["policy"], p["filter_policy"]);
    assert_eq!(f["damage"], Value::Null);
    assert!(f["expected_fpr"].as_f64().unwrap() > 0.0);
    let meta = v["metaindex"].as_array().unwrap();
    let filter_block = meta
        .iter()
        .find(|m| m["name"].as_str().unwrap().starts_with("filter."))
        .unwrap();
    assert_eq!(filter_block["offset"], f["offset"]);
    assert_eq!(filter_block["size"], f["size"]);
    // The footer sits at the end of the file.
    assert_eq!(
        v["footer"]["offset"].as_u64().unwrap(),
        v["file_bytes"].as_u64().unwrap() - bloomkv::sstable::format::FOOTER_LEN as u64
    );
    // No entries without --entries.
    assert!(v.get("entries").is_none());

    // --entries: every entry, in key order, with its value.
    let out = kvctl()
        .args(["sst", "dump", &path, "--json", "--entries"])
        .assert()
        .success();
    let v = json_doc(&out.get_output().stdout);
    let entries = v["entries"].as_array().unwrap();
    let expected: Vec<usize> = (0..700).filter(|&i| i != 7).collect();
    assert_eq!(entries.len(), expected.len());
    for (e, i) in entries.iter().zip(&expected) {
        assert_eq!(e["key"], format!("key{i:06}"));
        assert_eq!(e["value"], format!("value{i}"));
        assert_eq!(e["kind"], "put");
        // A number (compaction to the last level may zero it: no snapshot needs it).
        assert!(e["sequence"].is_u64(), "{e}");
    }
    // --hex applies to keys in JSON too.
    let out = kvctl()
        .args(["--hex", "sst", "dump", &path, "--json", "--entries"])
        .assert()
        .success();
    let v = json_doc(&out.get_output().stdout);
    assert_eq!(v["entries"][0]["key"], "6b6579303030303030");
    assert_eq!(v["properties"]["smallest_key"]["key"], "6b6579303030303030");
}

#[test]
fn sst_dump_json_names_a_damaged_filter_and_exits_3() {
    let t = TestDb::new();
    let path = one_table(&t, 500, 3);
    let out = kvctl()
        .args(["sst", "dump", &path, "--json"])
        .assert()
        .success();
    let v = json_doc(&out.get_output().stdout);
    let at = v["filter"]["offset"].as_u64().unwrap() as usize;
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[at + 40] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let out = kvctl()
        .args(["sst", "dump", &path, "--json"])
        .assert()
        .code(3);
    let out = out.get_output();
    // The rest of the table was verified and described; the filter carries the damage.
    let v = json_doc(&out.stdout);
    let damage = v["filter"]["damage"].as_str().unwrap();
    assert!(damage.contains("corruption in"), "{damage}");
    assert_eq!(v["data_blocks"]["entries"], 499);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("corruption in {path}")), "{err}");
    // Damage that stops the dump (a data block's checksum) prints no document at all.
    bytes[100] ^= 0x5a;
    std::fs::write(&path, &bytes).unwrap();
    let out = kvctl()
        .args(["sst", "dump", &path, "--json"])
        .assert()
        .code(3);
    assert!(out.get_output().stdout.is_empty());
}

#[test]
fn sst_dump_json_lists_range_tombstones_and_deletions() {
    let t = TestDb::new();
    let opts = bloomkv::Options {
        // The flushed table must stay on level 0, tombstones and all.
        idle_compaction_delay: None,
        ..Default::default()
    };
    let db = bloomkv::Db::open(&t.db, opts).unwrap();
    db.put("k05", "v").unwrap();
    db.delete_range("k10", "k20").unwrap();
    db.delete("k03").unwrap();
    db.flush().unwrap();
    let tables = db.live_files();
    drop(db);
    assert_eq!(tables.len(), 1);
    let path = t.db.join(bloomkv::sstable::table_file_name(tables[0]));
    let out = kvctl()
        .arg("sst")
        .arg("dump")
        .arg(&path)
        .args(["--json", "--entries"])
        .assert()
        .success();
    let v = json_doc(&out.get_output().stdout);
    let r = &v["range_deletions"];
    assert_eq!(r["count"], 1);
    assert_eq!(r["count"], v["properties"]["range_deletions"]);
    assert_eq!(r["tombstones"][0]["start"], "k10");
    assert_eq!(r["tombstones"][0]["end"], "k20");
    assert_eq!(v["properties"]["deletions"], 1);
    assert_eq!(v["data_blocks"]["deletions"], 1);
    assert_eq!(v["data_blocks"]["puts"], 1);
    let entries = v["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["key"], "k03");
    assert_eq!(entries[0]["kind"], "del");
    assert_eq!(entries[1]["key"], "k05");
    assert_eq!(entries[1]["kind"], "put");
    // Put, range delete, delete: the sequences in write order.
    let seq = |e: &Value| e["sequence"].as_u64().unwrap();
    let range_seq = r["tombstones"][0]["sequence"].as_u64().unwrap();
    assert!(seq(&entries[1]) < range_seq && range_seq < seq(&entries[0]));
}
