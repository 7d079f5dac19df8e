//! The log database opened with the state machine's options (the server's, whose
//! compaction filter is the server's GC) keeps every entry through compactions. The log
//! store turns the filter off: the GC is written for the server's key space, and an
//! entry's key (`l` + be64 index) starts with the list-element tag. Today its 9 bytes are
//! too short to parse as a sub-key, so the GC would keep it anyway: this test guards a
//! change of either layout rather than failing on the current code without the guard.

use bloomkv::Options;

use crate::keys::log as k;
use crate::log_store::LogStore;

#[test]
fn compactions_of_the_log_keep_its_entries_under_the_servers_options() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        memtable_bytes: 64 << 10,
        ..bloomkv_server::Config::default().engine_options()
    };
    assert!(options.compaction_filter.is_some(), "the server's GC is on");
    let log = LogStore::open(dir.path(), options).unwrap();
    let db = log.db();
    for i in 1..=2_000u64 {
        db.put(k::entry(i), vec![b'e'; 100]).unwrap();
    }
    db.compact_range(k::entry(0).as_slice()..k::ENTRY_END)
        .unwrap();
    let kept = db
        .scan(k::entry(0).as_slice()..k::ENTRY_END)
        .try_fold(0usize, |n, kv| kv.map(|_| n + 1))
        .unwrap();
    assert_eq!(kept, 2_000, "every log entry survives a full compaction");
}
