//! An open that cannot list the database directory fails with the I/O error naming it, and
//! changes nothing: once listing works again the database opens with every write.

use bloomkv::env::fault::{Fault, FaultKind, FaultOp};
use bloomkv::{Db, Error, Options};

use crate::common::dir_state;
use crate::common::fault::fault_env;

#[test]
fn an_open_that_cannot_list_fails_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (env, ctl) = fault_env();
    let opts = Options {
        env,
        ..Options::default()
    };
    {
        let db = Db::open(dir.path(), opts.clone()).unwrap();
        for i in 0..500u32 {
            db.put(format!("k{i:04}"), format!("v{i}")).unwrap();
            if i == 250 {
                db.flush().unwrap();
            }
        }
    }
    // LOCK holds the pid of whoever took the lock last: the failed opens took it too.
    let state = || {
        let mut s = dir_state(dir.path());
        s.remove("LOCK");
        s
    };
    let before = state();
    ctl.add(Fault::nth(FaultOp::List, 1, FaultKind::Eio).and_later());
    for _ in 0..2 {
        let err = Db::open(dir.path(), opts.clone()).unwrap_err();
        assert!(
            matches!(&err, Error::Io { path: Some(p), .. } if p == dir.path()),
            "{err}"
        );
    }
    assert_eq!(state(), before, "a failed open changed files");

    ctl.clear();
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..500u32 {
        assert_eq!(
            db.get(format!("k{i:04}")).unwrap(),
            Some(format!("v{i}").into_bytes())
        );
    }
}
