//! `kvctl dedup | head`: when the reader goes away, dedup stops at once, exits 4 and says how
//! many lines it marked as seen; lines it printed but did not store come out again next run.
//! The approximate dedup leaves its state file as it was.

use crate::common::TestDb;

#[test]
fn a_closed_stdout_stops_dedup_and_says_what_was_marked() {
    let t = TestDb::new();
    t.ok(&["put", "seed", "x"]);
    let (status, err) = crate::common::dedup_into_closed_pipe_with_stderr(&t.db, &[]);
    assert_eq!(status.code(), Some(4), "{err}");
    assert!(err.contains("stdout was closed"), "{err}");
    let marked: u64 = err
        .split("; ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("{err}"));
    // It stopped at once: far fewer lines than the 200,000 offered were handled.
    assert!(marked < 100_000, "{err}");
    // Exactly the marked lines are in the database (each stored key is one line).
    let stored = t.ok(&["scan"]).lines().count() as u64 - 1;
    assert_eq!(stored, marked, "{err}");
}

#[test]
fn a_closed_stdout_leaves_the_approximate_state_unchanged() {
    let t = TestDb::new();
    let state = t.dir.path().join("st.bf");
    crate::common::kvctl()
        .args(["filter", "new"])
        .arg(&state)
        .args(["--capacity", "1000000"])
        .assert()
        .success();
    let before = std::fs::read(&state).unwrap();
    let st = state.to_str().unwrap();
    let (status, err) =
        crate::common::dedup_into_closed_pipe_with_stderr(&t.db, &["--approx", "--state", st]);
    assert_eq!(status.code(), Some(4), "{err}");
    assert!(err.contains("left as it was"), "{err}");
    assert_eq!(std::fs::read(&state).unwrap(), before);
    assert!(!t.db.exists(), "--approx touched the database");
}
