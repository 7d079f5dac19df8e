//! A dropped `Db`, and an open that failed after taking the lock, release the database's lock
//! before they return, also while other threads of the program start processes: a child
//! between fork and exec holds copies of every open file of the program, the LOCK file's
//! among them, and must not keep the lock with it.

#![cfg(unix)]

use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;

use bloomkv::{Db, Error, Options};

use crate::common::{self, w1_key, w1_value};

const ROUNDS: u32 = 200;
/// Puts per round: with the small memtable, each round flushes a few tables, so drops meet
/// flushes and compactions in progress.
const PUTS: u64 = 500;

fn options() -> Options {
    Options {
        memtable_bytes: 32 << 10,
        ..common::small_options()
    }
}

#[test]
fn reopening_never_finds_the_lock_held_while_threads_spawn_children() {
    let dir = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(false);
    let children = AtomicU64::new(0);
    thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let status = Command::new("true").status().unwrap();
                    assert!(status.success());
                    children.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        let outcome = std::panic::catch_unwind(|| reopen_rounds(dir.path()));
        stop.store(true, Ordering::Relaxed);
        if let Err(panic) = outcome {
            std::panic::resume_unwind(panic);
        }
    });
    // The children really ran beside the reopens (thousands do, on two cores).
    assert!(children.load(Ordering::Relaxed) > 0);
}

fn reopen_rounds(dir: &std::path::Path) {
    for round in 0..ROUNDS {
        let db = Db::open(dir, options())
            .unwrap_or_else(|e| panic!("round {round}: the reopen after a drop failed: {e}"));
        if round > 0 {
            // What the last round wrote survived its drop.
            let last = u64::from(round - 1) * PUTS + PUTS - 1;
            assert_eq!(
                db.get(w1_key(last)).unwrap(),
                Some(w1_value(last, round - 1))
            );
        }
        // A busy writer beside a reader, on the handle about to be dropped.
        thread::scope(|s| {
            s.spawn(|| {
                for i in 0..PUTS {
                    let key = u64::from(round) * PUTS + i;
                    db.put(w1_key(key), w1_value(key, round)).unwrap();
                }
            });
            for i in 0..PUTS / 10 {
                db.get(w1_key(i)).unwrap();
            }
        });
        drop(db);

        // An open that takes the lock and then fails (the database exists) lets it go too.
        let refused = Options {
            error_if_exists: true,
            ..options()
        };
        match Db::open(dir, refused) {
            Err(Error::InvalidArgument(_)) => {}
            Err(e) => {
                panic!("round {round}: expected the open to fail on an existing database: {e}")
            }
            Ok(_) => panic!("round {round}: error_if_exists opened an existing database"),
        }
    }
}
