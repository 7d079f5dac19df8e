//! After a write whose outcome is unknown (its record may still be in the old WAL), `resume`
//! and later writes never reuse the sequence numbers the failed batch took: if the record
//! survives to the reopen, its entries are older than every write acknowledged after the
//! resume, so a later write of the same key wins.

use crate::env::fault::{FaultKind, FaultOp};
use crate::{Db, Error, Options};

#[test]
fn writes_after_resume_are_newer_than_a_record_of_unknown_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let (env, ctl) = super::fault_env();
    let opts = Options {
        env,
        sync_writes: true,
        ..Options::default()
    };
    {
        let db = Db::open(dir.path(), opts).unwrap();
        db.put("k", b"old").unwrap();
        ctl.fail_nth(FaultOp::Sync, 1, FaultKind::Eio);
        ctl.also_fail_nth(FaultOp::Truncate, 1, FaultKind::Eio);
        // Two entries: the key written again later is the second, at the batch's higher
        // sequence number.
        let mut batch = crate::WriteBatch::new();
        batch.put("a", b"unknown");
        batch.put("k", b"unknown");
        let err = db.write(batch).unwrap_err();
        assert!(matches!(err, Error::OutcomeUnknown(_)), "{err}");
        ctl.clear();
        db.resume().unwrap();
        db.put("k", b"new").unwrap();
        db.put("other", b"x").unwrap();
        assert_eq!(db.get("k").unwrap(), Some(b"new".to_vec()));
    }
    // The failed record was never cut out of the old WAL, so the reopen replays it: it must
    // not shadow the write acknowledged after it.
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(db.get("k").unwrap(), Some(b"new".to_vec()));
    assert_eq!(db.get("other").unwrap(), Some(b"x".to_vec()));
}
