//! Data survives restarts, clean shutdowns and kill -9 (with `--appendfsync always`, no
//! acknowledged write is lost).

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bloomkv_server::{Config, Server};
use common::*;
use redis::Value;

#[test]
fn data_survives_a_clean_restart() {
    let mut s = TestServer::start();
    {
        let mut c = s.client();
        ok(&mut c, &["SET", "a", "1"]);
        ok(&mut c, &["SADD", "s", "x", "y"]);
        ok(&mut c, &["SETBIT", "b", "100000", "1"]);
        ok(&mut c, &["BF.ADD", "bf", "url"]);
    }
    s.stop();
    let server = Server::start(Config {
        dir: s.dir.path().join("db"),
        port: 0,
        ..Config::default()
    })
    .unwrap();
    let mut c = client_at(&format!(
        "redis://127.0.0.1:{}/",
        server.local_addr().port()
    ));
    assert_eq!(ok(&mut c, &["GET", "a"]), bulk("1"));
    assert_eq!(ok(&mut c, &["SCARD", "s"]), int(2));
    assert_eq!(ok(&mut c, &["GETBIT", "b", "100000"]), int(1));
    assert_eq!(ok(&mut c, &["BF.EXISTS", "bf", "url"]), int(1));
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(4));
    server.shutdown().unwrap();
}

/// What each spawned server wrote to stderr, by process id.
type Logs = Vec<(u32, std::sync::Arc<std::sync::Mutex<String>>)>;
static LOGS: std::sync::Mutex<Logs> = std::sync::Mutex::new(Vec::new());

fn log_of(pid: u32) -> String {
    LOGS.lock()
        .unwrap()
        .iter()
        .find(|(p, _)| *p == pid)
        .map(|(_, l)| l.lock().unwrap().clone())
        .unwrap_or_default()
}

#[expect(clippy::zombie_processes, reason = "every caller waits for the child")]
fn spawn(dir: &std::path::Path, extra: &[&str]) -> (Child, u16) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bloomkv-server"))
        .arg("--dir")
        .arg(dir)
        .args(["--port", "0"])
        .args(extra)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The server prints "listening on 127.0.0.1:PORT" to stderr once bound.
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(Instant::now() < deadline, "server did not start");
        let line = lines.next().unwrap().unwrap();
        if let Some(addr) = line.split("listening on ").nth(1) {
            let port = addr.rsplit(':').next().unwrap().trim().parse().unwrap();
            // Keep draining stderr so the child never blocks on a full pipe, and keep what it
            // says for the failure message of `sigterm_and_wait`.
            let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
            LOGS.lock()
                .unwrap()
                .push((child.id(), std::sync::Arc::clone(&log)));
            std::thread::spawn(move || {
                for l in lines.map_while(Result::ok) {
                    let mut log = log.lock().unwrap();
                    log.push_str(&l);
                    log.push('\n');
                }
            });
            return (child, port);
        }
    }
}

#[test]
fn kill_9_with_appendfsync_always_loses_no_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let (mut child, port) = spawn(&db, &["--appendfsync", "always"]);
    let acked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let writers: Vec<_> = (0..4)
        .map(|t| {
            let acked = acked.clone();
            std::thread::spawn(move || {
                let mut c = client_at(&format!("redis://127.0.0.1:{port}/"));
                let mut done = Vec::new();
                for i in 0.. {
                    let k = format!("w{t}:{i}");
                    let r: redis::RedisResult<Value> =
                        redis::cmd("SET").arg(&k).arg(i).query(&mut c);
                    if r.is_err() {
                        break;
                    }
                    let r: redis::RedisResult<Value> = redis::cmd("SADD")
                        .arg(format!("set{t}"))
                        .arg(&k)
                        .query(&mut c);
                    if r.is_err() {
                        break;
                    }
                    done.push(k);
                    acked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                done
            })
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(20);
    while acked.load(std::sync::atomic::Ordering::Relaxed) < 400 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let done: Vec<Vec<String>> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    let total: usize = done.iter().map(Vec::len).sum();
    assert!(total >= 400, "only {total} writes acknowledged");

    let (mut child, port) = spawn(&db, &["--appendfsync", "always"]);
    let mut c = client_at(&format!("redis://127.0.0.1:{port}/"));
    for (t, keys) in done.iter().enumerate() {
        for k in keys {
            let v: Option<i64> = redis::cmd("GET").arg(k).query(&mut c).unwrap();
            assert!(v.is_some(), "acknowledged write {k} lost");
            let m: i64 = redis::cmd("SISMEMBER")
                .arg(format!("set{t}"))
                .arg(k)
                .query(&mut c)
                .unwrap();
            assert_eq!(m, 1, "acknowledged SADD of {k} lost");
        }
    }
    sigterm_and_wait(&mut child);
}

#[test]
fn kill_9_with_appendfsync_always_loses_no_acknowledged_push_or_move() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let (mut child, port) = spawn(&db, &["--appendfsync", "always"]);
    let url = format!("redis://127.0.0.1:{port}/");
    let acked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let writers: Vec<_> = (0..3)
        .map(|t| {
            let (acked, url) = (acked.clone(), url.clone());
            std::thread::spawn(move || {
                let mut c = client_at(&url);
                let mut done = Vec::new();
                for i in 0.. {
                    let r: redis::RedisResult<i64> = redis::cmd("RPUSH")
                        .arg(format!("list{t}"))
                        .arg(i)
                        .query(&mut c);
                    if r.is_err() {
                        break;
                    }
                    let r: redis::RedisResult<i64> = redis::cmd("ZADD")
                        .arg(format!("z{t}"))
                        .arg(i)
                        .arg(format!("m{i}"))
                        .query(&mut c);
                    if r.is_err() {
                        break;
                    }
                    done.push(i);
                    acked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                done
            })
        })
        .collect();
    // A consumer moving list0's elements to done0 as they come (served by the pushes).
    let mover = {
        let url = url.clone();
        std::thread::spawn(move || {
            let mut c = client_at(&url);
            let mut moved = Vec::new();
            loop {
                let r: redis::RedisResult<Option<i64>> = redis::cmd("BLMOVE")
                    .arg("list0")
                    .arg("done0")
                    .arg("LEFT")
                    .arg("RIGHT")
                    .arg(1)
                    .query(&mut c);
                match r {
                    Ok(Some(v)) => moved.push(v),
                    Ok(None) => {}
                    Err(_) => break,
                }
            }
            moved
        })
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while acked.load(std::sync::atomic::Ordering::Relaxed) < 300 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let done: Vec<Vec<i64>> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    let moved = mover.join().unwrap();
    assert!(done.iter().map(Vec::len).sum::<usize>() >= 300);

    let (mut child, port) = spawn(&db, &["--appendfsync", "always"]);
    let mut c = client_at(&format!("redis://127.0.0.1:{port}/"));
    for (t, pushed) in done.iter().enumerate() {
        let mut list: Vec<i64> = Vec::new();
        if t == 0 {
            let d: Vec<i64> = redis::cmd("LRANGE")
                .arg("done0")
                .arg(0)
                .arg(-1)
                .query(&mut c)
                .unwrap();
            assert!(d.starts_with(&moved), "an acknowledged move was lost");
            list.extend(d);
        }
        let l: Vec<i64> = redis::cmd("LRANGE")
            .arg(format!("list{t}"))
            .arg(0)
            .arg(-1)
            .query(&mut c)
            .unwrap();
        list.extend(l);
        // Every acknowledged push is there, in order (one unacknowledged push may follow).
        assert!(
            list.starts_with(pushed),
            "list{t}: an acknowledged push was lost"
        );
        assert!(list.len() <= pushed.len() + 1);
        for &i in pushed {
            let s: Option<f64> = redis::cmd("ZSCORE")
                .arg(format!("z{t}"))
                .arg(format!("m{i}"))
                .query(&mut c)
                .unwrap();
            assert_eq!(s, Some(i as f64), "acknowledged ZADD of m{i} lost");
        }
    }
    sigterm_and_wait(&mut child);
}

fn sigterm_and_wait(child: &mut Child) {
    let pid = child.id().to_string();
    let status = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            assert!(
                st.success(),
                "server exited with {st}; its stderr:\n{}",
                log_of(child.id())
            );
            return;
        }
        assert!(Instant::now() < deadline, "server did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `SHUTDOWN` from a client ends the `bloomkv-server` process itself (the binary waited
/// only for signals and stayed up, listening nowhere, after the server had stopped).
#[test]
fn shutdown_command_ends_the_process_and_keeps_data() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let (mut child, port) = spawn(&db, &[]);
    {
        let mut c = client_at(&format!("redis://127.0.0.1:{port}/"));
        assert_eq!(ok(&mut c, &["SET", "k", "v"]), Value::Okay);
        // Redis closes the connection without a reply.
        assert!(redis::cmd("SHUTDOWN").query::<Value>(&mut c).is_err());
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!(
                "the process did not exit after SHUTDOWN; its stderr:\n{}",
                log_of(child.id())
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        status.success(),
        "exited with {status}: {}",
        log_of(child.id())
    );
    let (mut child, port) = spawn(&db, &[]);
    let mut c = client_at(&format!("redis://127.0.0.1:{port}/"));
    assert_eq!(ok(&mut c, &["GET", "k"]), bulk("v"));
    sigterm_and_wait(&mut child);
}

#[test]
fn sigterm_shuts_down_cleanly_and_keeps_data() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let (mut child, port) = spawn(&db, &["--appendfsync", "everysec"]);
    {
        let mut c = client_at(&format!("redis://127.0.0.1:{port}/"));
        let mut p = redis::pipe();
        for i in 0..1000 {
            p.cmd("SET").arg(format!("k{i}")).arg(i).ignore();
        }
        let () = p.query(&mut c).unwrap();
        // Keep this client connected across the shutdown: it must not hold the server up.
        sigterm_and_wait(&mut child);
    }
    let (mut child, port) = spawn(&db, &[]);
    let mut c = client_at(&format!("redis://127.0.0.1:{port}/"));
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(1000));
    assert_eq!(ok(&mut c, &["GET", "k999"]), bulk("999"));
    sigterm_and_wait(&mut child);
}

fn background_syncs(c: &mut redis::Connection) -> u64 {
    let info: String = redis::cmd("INFO").arg("persistence").query(c).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("wal_background_syncs:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn everysec_syncs_the_wal_in_the_background_and_no_does_not() {
    let every = TestServer::with(|c| c.appendfsync = bloomkv_server::AppendFsync::Everysec);
    let never = TestServer::with(|c| c.appendfsync = bloomkv_server::AppendFsync::No);
    let (mut a, mut b) = (every.client(), never.client());
    ok(&mut a, &["SET", "k", "v"]);
    ok(&mut b, &["SET", "k", "v"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while background_syncs(&mut a) == 0 {
        assert!(
            Instant::now() < deadline,
            "no background WAL sync within 10 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(background_syncs(&mut b), 0);
}
