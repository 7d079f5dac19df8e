//! `Options::compaction_bytes_per_sec` paces compaction writes: a compaction writing W bytes
//! takes at least W / rate (sleeps are never shorter than asked; the limiter leaves less
//! than a millisecond's debt unpaid). Flushes are not paced.

use std::time::{Duration, Instant};

use bloomkv::{Compression, Db, Options};

use crate::common;

const RATE: u64 = 4 << 20;

#[test]
fn a_compaction_writes_no_faster_than_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        compaction_bytes_per_sec: Some(RATE),
        env: common::NoSyncEnv::shared(),
        // The repeated values would compress to almost nothing: keep the bytes to pace.
        compression: Compression::None,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let value = [9u8; 200];
    for half in 0..2u32 {
        for i in (half * 6000)..(half + 1) * 6000 {
            db.put(format!("key{i:06}"), value).unwrap();
        }
        db.flush().unwrap();
    }
    let before = db.stats().compaction_bytes_written;
    let t = Instant::now();
    db.compact().unwrap();
    let elapsed = t.elapsed();
    let written = db.stats().compaction_bytes_written - before;
    assert!(written > 2 << 20, "{written}");
    let floor = Duration::from_secs_f64(written as f64 / RATE as f64) - Duration::from_millis(1);
    assert!(
        elapsed >= floor,
        "{written} bytes in {elapsed:?}, under {floor:?}"
    );
    for i in (0..12000).step_by(997) {
        assert_eq!(db.get(format!("key{i:06}")).unwrap(), Some(value.to_vec()));
    }
}
