//! The README's kvctl session (the `console` block under "## kvctl") is what kvctl does:
//! each `$ ` line runs in a shell, in a fresh directory, with this build's kvctl first on the
//! PATH, and its output (stdout and stderr, as a terminal shows them) must be the lines that
//! follow it in the README.

use std::path::Path;
use std::process::Command;

/// The session: (command, expected output) pairs.
fn session() -> Vec<(String, String)> {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let section = readme
        .split("\n## kvctl\n")
        .nth(1)
        .expect("README has a kvctl section");
    let block = section
        .split("```console\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .expect("the kvctl section has a console block");
    let mut steps: Vec<(String, String)> = Vec::new();
    for line in block.lines() {
        if let Some(cmd) = line.strip_prefix("$ ") {
            steps.push((cmd.to_string(), String::new()));
        } else if let Some((_, out)) = steps.last_mut() {
            out.push_str(line);
            out.push('\n');
        }
    }
    steps
}

fn run(dir: &Path, cmd: &str) -> String {
    let bin = assert_cmd::cargo::cargo_bin("kvctl");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("{{ {cmd}; }} 2>&1"))
        .current_dir(dir)
        .env("PATH", path)
        .env_remove("KVCTL_DB")
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_readme_session_is_what_kvctl_prints() {
    let steps = session();
    assert!(steps.len() > 10, "{steps:?}");
    let dir = tempfile::tempdir().unwrap();
    let mut report = String::new();
    let mut ok = true;
    for (cmd, want) in &steps {
        let got = run(dir.path(), cmd);
        report.push_str(&format!("$ {cmd}\n{got}"));
        if got != *want {
            ok = false;
            report.push_str(&format!("^^^ README says:\n{want}"));
        }
    }
    assert!(ok, "the README's kvctl session differs:\n{report}");
}

/// The prose after the session explains the `bits/key` its `kvctl stats` shows: the figure it
/// names is the one in the session's L1 row (which the test above checks against kvctl).
#[test]
fn the_readme_prose_names_the_bits_per_key_the_session_prints() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let (cmd, out) = session()
        .into_iter()
        .find(|(cmd, _)| cmd.starts_with("kvctl stats"))
        .expect("the session runs kvctl stats");
    let l1 = out
        .lines()
        .find(|l| l.starts_with("L1 "))
        .unwrap_or_else(|| panic!("`{cmd}` shows no L1 row:\n{out}"));
    // level, files, bytes, entries, bits/key, ...
    let printed = l1.split_whitespace().nth(4).unwrap();
    let prose = readme
        .split("hence ")
        .nth(1)
        .and_then(|rest| rest.split(" bits/key").next())
        .expect("the README explains the session's bits/key (\"hence N bits/key\")");
    let prose = prose.split_whitespace().last().unwrap_or(prose);
    assert_eq!(prose, printed, "README prose vs the stats row {l1:?}");
}
