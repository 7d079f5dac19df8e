//! `kvctl serve` with an option the engine rejects at open exits 2 (usage), as any other
//! command with a rejected option does, and names the option.

use std::time::Duration;

#[test]
fn serve_with_a_rejected_option_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let out = crate::common::kvctl()
        .args(["serve", "--port", "0", "--bits-per-key", "NaN", "--dir"])
        .arg(&data)
        // Were the option accepted, the server would run until killed.
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("filter_bits_per_key"), "{stderr}");
}
