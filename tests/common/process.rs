//! Tests that run a part of themselves in another process: this test binary, re-executed
//! with a filter that selects one test.

use std::process::Command;

/// The arguments that make this test binary run the one test `function` of the module whose
/// `module_path!()` is `module_path` (libtest names a test by its path inside the binary, so
/// the binary's own name is left out).
pub fn child_test_args(module_path: &str, function: &str) -> [String; 2] {
    let name = match module_path.split_once("::") {
        Some((_binary, path)) => format!("{path}::{function}"),
        None => function.to_string(),
    };
    [name, "--exact".to_string()]
}

/// The variable that tells a re-executed test it is the child of [`run_alone`].
const ALONE: &str = "BLOOMKV_TEST_ALONE";

/// Whether this process is the child [`run_alone`] started.
pub fn is_alone() -> bool {
    std::env::var_os(ALONE).is_some()
}

/// Runs the test `function` of `module_path` again in a process of its own and asserts it
/// passes there: for a test that changes process-wide state (a resource limit) or counts
/// the process's open files, which the other tests of this binary, running beside it,
/// would disturb. The test calls this unless [`is_alone`], and does its work only then.
pub fn run_alone(module_path: &str, function: &str) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(child_test_args(module_path, function))
        .args(["--nocapture", "--test-threads=1"])
        .env(ALONE, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{function} failed in its own process:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A filter that matched nothing also exits successfully.
    assert!(
        stdout.contains("1 passed"),
        "{function} did not run:\n{stdout}"
    );
}
