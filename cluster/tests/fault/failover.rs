//! The failover figure: time from the leader's kill -9 to the first acknowledged write on
//! the new leader (sent through a follower the moment the leader is gone), over 50 kills,
//! with default timeouts (heartbeat 100 ms, election 250-500 ms). A figure, not a
//! pass/fail test: run by hand with
//! `cargo test --release -p bloomkv-cluster --test fault -- --ignored failover_50_kills --nocapture`.

use std::time::{Duration, Instant};

use crate::procs::ProcCluster;
use crate::resp::{Conn, Value};

#[test]
#[ignore = "a figure (about a minute and a half): run by hand"]
fn failover_50_kills() {
    let kills: usize = std::env::var("BLOOMKV_FAILOVER_KILLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    // BLOOMKV_FAILOVER_FLAGS: extra node flags (to compare timeouts).
    let flags = std::env::var("BLOOMKV_FAILOVER_FLAGS").unwrap_or_default();
    let flags: Vec<&str> = flags.split_whitespace().collect();
    let mut c = ProcCluster::start(3, &flags);
    let mut times = Vec::new();
    for round in 0..kills {
        c.wait_converged();
        let leader = c.wait_leader();
        let via = c.ids().into_iter().find(|&i| i != leader).unwrap();
        let mut conn = Conn::connect(c.port(via), Duration::from_secs(10)).unwrap();
        // Warm: the follower knows the leader and has a connection to it.
        assert_eq!(
            conn.call(&["SET", "warm", "1"]).unwrap(),
            Value::Status("OK".into())
        );
        let t = Instant::now();
        c.kill(leader);
        loop {
            match conn.call(&["SET", "failover", &round.to_string()]) {
                Ok(Value::Status(s)) if s == "OK" => break,
                Ok(_) => {}
                Err(_) => conn = Conn::connect(c.port(via), Duration::from_secs(10)).unwrap(),
            }
            assert!(t.elapsed() < Duration::from_secs(30), "no new leader");
        }
        let took = t.elapsed();
        times.push(took);
        println!("kill {round}: node {leader} killed, first write acknowledged after {took:?}");
        c.restart(leader);
    }
    times.sort();
    let p = |q: f64| times[((times.len() as f64 * q).ceil() as usize).clamp(1, times.len()) - 1];
    println!(
        "failover over {} kills: p50 {:?}, p90 {:?}, p99 {:?}, max {:?}",
        times.len(),
        p(0.5),
        p(0.9),
        p(0.99),
        times[times.len() - 1]
    );
}
