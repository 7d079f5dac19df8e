//! The log's tests: round trips, torn tails, damage, and a property test over all three.

mod corruption;
mod proptest;
mod roundtrip;
mod streaming;
mod truncation;

/// The module's documented usage, end to end.
#[test]
fn write_records_then_read_back() -> crate::Result<()> {
    use crate::env::{Env, StdEnv};
    use crate::db::wal::{LogReader, LogWriter, RecoveryMode};
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("000001.log");
    let mut w = LogWriter::new(StdEnv.create_writable(&path)?);
    w.add_record(b"first")?;
    w.add_record(b"second")?;
    w.sync()?;
    let mut r = LogReader::new(StdEnv.read_all(&path)?, path, RecoveryMode::Strict);
    assert_eq!(r.next_record()?.as_deref(), Some(&b"first"[..]));
    assert_eq!(r.next_record()?.as_deref(), Some(&b"second"[..]));
    assert_eq!(r.next_record()?, None);
    Ok(())
}
