//! The fault env's own behaviour: plans, the crash model, short writes.

use super::*;
use crate::env::StdEnv;

#[test]
fn nth_call_fails_once_and_sticky_keeps_failing() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
    let mut f = env.create_writable(&dir.path().join("a"))?;
    ctl.fail_nth(FaultOp::Write, 2, FaultKind::Eio);
    f.append(b"1")?;
    let e = f.append(b"2").unwrap_err();
    assert!(e.to_string().contains("os error 5"), "{e}");
    f.append(b"3")?;
    ctl.fail_from_nth(FaultOp::Sync, 1, FaultKind::NoSpace);
    assert!(f.sync().is_err());
    assert!(f.sync().is_err());
    assert_eq!(ctl.injected(), 3);
    Ok(())
}

#[test]
fn crash_cuts_to_synced_length_and_forgets_unsynced_names() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
    let a = dir.path().join("a");
    let mut f = env.create_writable(&a)?;
    f.append(b"durable")?;
    f.sync()?;
    env.sync_dir(dir.path())?;
    f.append(b" lost")?;
    f.flush()?;
    drop(f);
    let b = dir.path().join("b");
    let mut g = env.create_writable(&b)?;
    g.append(b"never named durably")?;
    g.sync()?;
    drop(g);
    // An un-synced rename over `a` is undone by the crash.
    let t = dir.path().join("t");
    let mut h = env.create_writable(&t)?;
    h.append(b"new")?;
    h.sync()?;
    drop(h);
    env.rename(&t, &a)?;
    ctl.crash(&StdEnv)?;
    assert_eq!(std::fs::read(&a)?, b"durable");
    assert!(!b.exists());
    Ok(())
}

#[test]
fn truncate_fails_as_planned_beside_another_plan() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
    let a = dir.path().join("a");
    let mut f = env.create_writable(&a)?;
    f.append(b"abcdef")?;
    f.flush()?;
    ctl.fail_nth(FaultOp::Sync, 1, FaultKind::Eio);
    ctl.also_fail_nth(FaultOp::Truncate, 1, FaultKind::NoSpace);
    assert!(f.sync().is_err());
    let e = env.truncate(&a, 3).unwrap_err();
    assert!(e.to_string().contains("os error 28"), "{e}");
    assert_eq!(
        std::fs::read(&a)?,
        b"abcdef",
        "a failed truncate cuts nothing"
    );
    env.truncate(&a, 3)?;
    assert_eq!(std::fs::read(&a)?, b"abc");
    assert_eq!(ctl.injected(), 2);
    Ok(())
}

#[test]
fn short_write_leaves_a_prefix() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
    let a = dir.path().join("a");
    let mut f = env.create_writable(&a)?;
    ctl.fail_nth(FaultOp::Write, 1, FaultKind::ShortWrite);
    assert!(f.append(b"abcdef").is_err());
    f.flush()?;
    drop(f);
    assert_eq!(std::fs::read(&a)?, b"abc");
    Ok(())
}

#[test]
fn reads_lists_and_removals_fail_as_planned() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
    let a = dir.path().join("a");
    let mut f = env.create_writable(&a)?;
    f.append(b"abcdef")?;
    f.sync()?;
    drop(f);
    // An open for reading and each read of the opened file are reads.
    ctl.fail_nth(FaultOp::Read, 1, FaultKind::Eio);
    assert!(env.open_random_access(&a).is_err());
    let r = env.open_random_access(&a)?;
    ctl.fail_nth(FaultOp::Read, 2, FaultKind::Eio);
    assert_eq!(r.read_at(0, 3)?, b"abc");
    let e = r.read_at(3, 3).unwrap_err();
    assert!(e.to_string().contains("os error 5"), "{e}");
    assert_eq!(r.read_at_reusing(3, 3, Vec::new())?, b"def");
    ctl.fail_nth(FaultOp::Read, 1, FaultKind::Eio);
    assert!(env.read_all(&a).is_err());
    assert_eq!(env.read_all(&a)?, b"abcdef");
    ctl.fail_nth(FaultOp::List, 1, FaultKind::Eio);
    assert!(env.list_dir(dir.path()).is_err());
    assert_eq!(env.list_dir(dir.path())?, ["a"]);
    ctl.fail_nth(FaultOp::Remove, 1, FaultKind::Eio);
    assert!(env.remove_file(&a).is_err());
    assert!(a.exists(), "a failed removal removes nothing");
    let sub = dir.path().join("sub");
    env.create_dir_all(&sub)?;
    ctl.fail_nth(FaultOp::Remove, 1, FaultKind::Eio);
    assert!(env.remove_dir(&sub).is_err());
    env.remove_dir(&sub)?;
    env.remove_file(&a)?;
    assert!(!a.exists() && !sub.exists());
    assert_eq!(ctl.injected(), 6);
    Ok(())
}

#[test]
fn a_fault_on_a_file_counts_only_that_file() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for p in [&a, &b] {
        let mut f = env.create_writable(p)?;
        f.append(b"x")?;
        f.sync()?;
    }
    ctl.add(
        Fault::nth(FaultOp::Read, 2, FaultKind::Eio)
            .on_file("b")
            .and_later(),
    );
    env.read_all(&a)?;
    env.read_all(&b)?; // the first read of b
    env.read_all(&a)?;
    assert!(env.read_all(&b).is_err());
    assert!(env.read_all(&b).is_err(), "and every later one");
    env.read_all(&a)?;
    assert_eq!((ctl.injected(), ctl.calls(FaultOp::Read)), (2, 6));
    ctl.clear();
    env.read_all(&b)?;
    Ok(())
}

#[test]
fn plans_count_calls_independently() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
    let mut f = env.create_writable(&dir.path().join("a"))?;
    // Two plans on the same operation: each counts every call, whichever fires.
    ctl.fail_nth(FaultOp::Write, 1, FaultKind::Eio);
    ctl.also_fail_nth(FaultOp::Write, 3, FaultKind::NoSpace);
    assert!(
        f.append(b"1")
            .unwrap_err()
            .to_string()
            .contains("os error 5")
    );
    f.append(b"2")?;
    let e = f.append(b"3").unwrap_err();
    assert!(e.to_string().contains("os error 28"), "{e}");
    f.append(b"4")?;
    assert_eq!(ctl.injected(), 2);
    Ok(())
}
