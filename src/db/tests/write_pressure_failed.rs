//! `Db::write_pressure` says `Failed` while writes are stopped after a failure, and `None`
//! again once `resume` succeeds.

use crate::env::fault::{FaultKind, FaultOp};
use crate::{Db, Options, WritePressure};

#[test]
fn stopped_writes_read_as_failed_until_resume() {
    let dir = tempfile::tempdir().unwrap();
    let (env, ctl) = super::fault_env();
    let db = Db::open(
        dir.path(),
        Options {
            env,
            ..Options::default()
        },
    )
    .unwrap();
    db.put("a", "1").unwrap();
    assert_eq!(db.write_pressure(), WritePressure::None);
    ctl.fail_nth(FaultOp::Write, 1, FaultKind::NoSpace);
    assert!(db.put("b", "2").is_err());
    assert_eq!(db.write_pressure(), WritePressure::Failed);
    assert!(
        !db.write_pressure().may_wait(),
        "a stopped write fails at once"
    );
    ctl.clear();
    db.resume().unwrap();
    assert_eq!(db.write_pressure(), WritePressure::None);
    db.put("c", "3").unwrap();
}
