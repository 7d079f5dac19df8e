//! `try_catch_up` on a handle that is not a secondary, and `open_secondary` where there is
//! no database: typed errors, nothing created.

use crate::{Db, Error, Options};

#[test]
fn only_a_secondary_catches_up_and_it_needs_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert!(matches!(db.try_catch_up(), Err(Error::InvalidArgument(_))));
    drop(db);
    let ro = Db::open_read_only(dir.path(), Options::default()).unwrap();
    assert!(!ro.is_secondary());
    assert!(matches!(ro.try_catch_up(), Err(Error::InvalidArgument(_))));

    let missing = dir.path().join("nothing-here");
    let err = Db::open_secondary(&missing, Options::default()).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert!(!missing.exists());
    let empty = tempfile::tempdir().unwrap();
    let err = Db::open_secondary(empty.path(), Options::default()).unwrap_err();
    assert!(err.to_string().contains("no CURRENT"), "{err}");
    assert_eq!(std::fs::read_dir(empty.path()).unwrap().count(), 0);
}
