//! Regression (issue 23): MGET reads one snapshot. One client writes `ca` and `cb` together
//! (MSET, and the same pair in MULTI/EXEC), another reads them with MGET: a reply never mixes
//! two writes (the server answered `216`/`217` in 10 of 10,605 reads before reads used one
//! snapshot).

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::{TestServer, ok};
use redis::Value;

const WRITES: u64 = 5000;

#[test]
fn mget_never_sees_half_of_a_write() {
    let s = TestServer::start();
    let mut w = s.client();
    ok(&mut w, &["MSET", "ca", "0", "cb", "0"]);
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let done = Arc::clone(&done);
        let mut r = s.client();
        std::thread::spawn(move || {
            let mut reads = 0u64;
            while !done.load(Ordering::Acquire) || reads < 100 {
                let Value::Array(v) = ok(&mut r, &["MGET", "ca", "cb"]) else {
                    panic!("MGET answered no array")
                };
                assert_eq!(v[0], v[1], "a mixed pair after {reads} reads");
                reads += 1;
            }
            reads
        })
    };
    for i in 1..=WRITES {
        let n = i.to_string();
        if i % 3 == 0 {
            ok(&mut w, &["MULTI"]);
            ok(&mut w, &["SET", "ca", &n]);
            ok(&mut w, &["SET", "cb", &n]);
            ok(&mut w, &["EXEC"]);
        } else {
            ok(&mut w, &["MSET", "ca", &n, "cb", &n]);
        }
    }
    done.store(true, Ordering::Release);
    let reads = reader.join().unwrap();
    assert!(reads >= 100);
}
