//! LevelDB's RepeatedWritesToSameKey: values larger than the memtable, written again and
//! again under one key. Every put freezes a memtable holding one value, and the next one
//! finds the frozen memtable still being flushed. Such a put must wait for that flush only
//! (milliseconds), not be paced as if the memtable were over-full: it used to be charged
//! 200 KB at the lowest delayed-write rate, ~12 s per put after the second (issue 27).

mod common;

use bloomkv::{Db, NUM_LEVELS, Options};

#[test]
fn repeated_writes_of_values_larger_than_the_memtable_do_not_stall() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        memtable_bytes: 100_000,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let value = vec![b'v'; 2 * opts.memtable_bytes];
    // As LevelDB's test: the table count stays bounded while one key is rewritten.
    let max_files = (NUM_LEVELS + opts.level0_stop_writes) as u64;
    for i in 0..5 {
        db.put("key", &value).unwrap();
        let s = db.stats();
        assert!(s.total_files() <= max_files, "after put {i}: {s:?}");
        // The engine's own measure of the longest wait of any put. Each waits at most for
        // the flush of one 200 KB table; 3 s leaves room for a loaded machine, and is a
        // quarter of what the second and later puts used to wait.
        assert!(
            s.longest_stall_micros < 3_000_000,
            "after put {i}: a put stalled {} us",
            s.longest_stall_micros
        );
    }
    assert_eq!(db.get("key").unwrap(), Some(value));
}
