//! Replays every input kept under `fuzz/regressions/<target>/` through the same driver the
//! fuzz target runs (the drivers file is shared with the `fuzz/` package), so inputs that
//! once found a bug stay fixed, and the paths a minimized fuzz corpus covers stay covered,
//! without needing nightly or cargo-fuzz. Each test asserts how many inputs it replayed: a
//! folder that lost its inputs (or a replay that skipped them) fails instead of passing
//! having run nothing.

#[path = "../fuzz/src/drivers.rs"]
mod drivers;

use std::path::PathBuf;

/// Runs `driver` on every input kept for `target`; returns how many there were, after
/// asserting there was at least one.
fn replay(target: &str, driver: fn(&[u8])) -> usize {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions")
        .join(target);
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            continue;
        }
        let data = std::fs::read(&path).unwrap();
        driver(&data);
        n += 1;
    }
    assert!(n > 0, "no input kept in {}", dir.display());
    eprintln!("{target}: {n} inputs replayed");
    n
}

#[test]
fn filter_from_bytes_regressions() {
    replay("filter_from_bytes", drivers::filter_from_bytes);
    drivers::filter_from_bytes(&[]);
}

#[test]
fn block_decode_regressions() {
    replay("block_decode", drivers::block_decode);
    drivers::block_decode(&[0, 0, 0, 0, 1, 0, 0, 0]);
}

#[test]
fn table_open_iterate_regressions() {
    replay("table_open_iterate", drivers::table_open_iterate);
    // A built table, undamaged and then with each of a spread of bytes flipped.
    let body: Vec<u8> = (0..400u32).map(|i| (i * 37 % 251) as u8).collect();
    for at in (0..=u16::MAX).step_by(1500) {
        let mut input = vec![3u8];
        input.extend_from_slice(&at.to_le_bytes());
        input.extend_from_slice(&[0x10, 0]);
        input.extend_from_slice(&body);
        drivers::table_open_iterate(&input);
    }
}

#[test]
fn wal_replay_regressions() {
    replay("wal_replay", drivers::wal_replay);
    drivers::wal_replay(&[1, 5, 1, 2, 3, 4, 5]);
}

#[test]
fn manifest_replay_regressions() {
    replay("manifest_replay", drivers::manifest_replay);
    drivers::manifest_replay(&[1, 3, 1, 2, 3]);
}
