//! Load figures for compaction: 1M W1-shaped puts (16-byte keys, 100-byte values) with
//! default options; prints load time, write amplification and stall time. Ignored by default
//! (it takes tens of seconds): `cargo test --release --test compaction load:: -- --ignored
//! --nocapture`.

use std::time::Instant;

use bloomkv::{Db, Options};

use crate::common::{w1_key, w1_value};

#[test]
#[ignore = "1M keys: tens of seconds"]
fn w1_load_1m_figures() {
    let n: u64 = std::env::var("BLOOMKV_LOAD_KEYS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let t = Instant::now();
    for i in 0..n {
        db.put(w1_key(i), w1_value(i, 0)).unwrap();
    }
    let load = t.elapsed();
    db.wait_for_compactions().unwrap();
    let settled = t.elapsed();
    let s = db.stats();
    println!(
        "{n} puts: load {:.2} s ({:.0} puts/s), settled {:.2} s, stall {:.2} s, \
         compactions {}, flushes {}, user bytes {}, table bytes written {}, write amp {:.2}, \
         compaction bytes read {}",
        load.as_secs_f64(),
        n as f64 / load.as_secs_f64(),
        settled.as_secs_f64(),
        s.stall_micros as f64 / 1e6,
        s.compactions,
        s.flushes,
        s.user_bytes_written,
        s.compaction_bytes_written,
        s.write_amplification(),
        s.compaction_bytes_read,
    );
    for (l, ls) in s.levels.iter().enumerate() {
        if ls.files > 0 {
            println!(
                "  L{l}: {} files, {} bytes, {} entries",
                ls.files, ls.bytes, ls.entries
            );
        }
    }
    for i in (0..n).step_by(997) {
        assert_eq!(db.get(w1_key(i)).unwrap(), Some(w1_value(i, 0)));
    }
}
