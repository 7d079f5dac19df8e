//! Every JSON document kvctl prints names its layout version first, `"format": 1`: the
//! closing reports (`verify`, `compact`, `filter add`) as well as the descriptions (`filter
//! info`).

use crate::common::{TestDb, json_doc, kvctl};

fn starts_with_format(stdout: &[u8]) -> serde_json::Value {
    let text = String::from_utf8_lossy(stdout);
    assert!(text.starts_with(r#"{"format":1,"#), "{text}");
    json_doc(stdout)
}

#[test]
fn reports_and_descriptions_carry_their_format() {
    let t = TestDb::new();
    t.ok(&["put", "k", "v"]);
    let v = starts_with_format(t.ok(&["compact", "--json"]).as_bytes());
    assert_eq!(v["tables_after"], 1);
    let v = starts_with_format(t.ok(&["verify", "--json"]).as_bytes());
    assert_eq!(v["entries"], 1);

    let file = t.dir.path().join("f.bf");
    let file = file.to_str().unwrap();
    kvctl()
        .args(["filter", "new", file, "--capacity", "100"])
        .assert()
        .success();
    let out = kvctl()
        .args(["filter", "add", file, "--json", "x", "y", "x"])
        .assert()
        .success();
    let v = starts_with_format(&out.get_output().stdout);
    assert_eq!(v["new"], 2);
    let out = kvctl()
        .args(["filter", "info", file, "--json"])
        .assert()
        .success();
    let v = starts_with_format(&out.get_output().stdout);
    assert_eq!(v["count"], 2);
    assert_eq!(v["capacity"], 100);
}
