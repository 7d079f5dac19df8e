//! Shared helpers: an in-process server on an ephemeral loopback port, `redis` crate clients,
//! a raw RESP client for exact bytes, and the built binary for kill -9 tests.
#![expect(dead_code, reason = "each test crate uses a part of this module")]
#![expect(
    clippy::unwrap_used,
    reason = "a test kit that cannot go on panics with the error"
)]

pub mod model;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use bloomkv_server::{Config, Server};
use redis::{RedisResult, Value};

/// A server in a temporary directory, stopped (cleanly) on drop.
pub struct TestServer {
    pub server: Option<Server>,
    pub dir: tempfile::TempDir,
    pub port: u16,
    pub config: Config,
}

impl TestServer {
    /// A server with default settings.
    pub fn start() -> TestServer {
        TestServer::with(|_| {})
    }

    /// A server whose config `tweak` adjusts.
    pub fn with(tweak: impl FnOnce(&mut Config)) -> TestServer {
        TestServer::with_env(tweak, None)
    }

    /// A server on the file system `env` (a fault env, say).
    pub fn with_env(
        tweak: impl FnOnce(&mut Config),
        env: Option<std::sync::Arc<dyn bloomkv::env::Env>>,
    ) -> TestServer {
        let dir = tempfile::tempdir().unwrap();
        let mut config = Config {
            dir: dir.path().join("db"),
            port: 0,
            threads: 2,
            ..Config::default()
        };
        tweak(&mut config);
        let server = Server::start_with_env(config.clone(), env).unwrap();
        let port = server.local_addr().port();
        TestServer {
            server: Some(server),
            dir,
            port,
            config,
        }
    }

    /// Stops the server cleanly and starts it again on the same directory (a new port).
    pub fn restart(&mut self) {
        self.stop();
        let server = Server::start(self.config.clone()).unwrap();
        self.port = server.local_addr().port();
        self.server = Some(server);
    }

    /// A RESP2 client connection.
    pub fn client(&self) -> redis::Connection {
        client_at(&format!("redis://127.0.0.1:{}/", self.port))
    }

    /// A RESP2 client connection to database `db` (the crate sends SELECT on connect, as
    /// a `redis://host:port/db` URL asks).
    pub fn client_db(&self, db: u16) -> redis::Connection {
        client_at(&format!("redis://127.0.0.1:{}/{db}", self.port))
    }

    /// A RESP3 client connection (the crate sends HELLO 3 on connect).
    pub fn client3(&self) -> redis::Connection {
        client_at(&format!("redis://127.0.0.1:{}/?protocol=resp3", self.port))
    }

    /// A raw TCP connection.
    pub fn raw(&self) -> Raw {
        Raw::connect(self.port)
    }

    /// Stops the server cleanly (keeps the directory).
    pub fn stop(&mut self) {
        if let Some(s) = self.server.take() {
            s.shutdown().unwrap();
        }
    }
}

pub fn client_at(url: &str) -> redis::Connection {
    let c = redis::Client::open(url).unwrap();
    let con = c.get_connection().unwrap();
    con.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    con
}

/// Runs a command given as words; the raw result.
pub fn q(con: &mut redis::Connection, words: &[&str]) -> RedisResult<Value> {
    let mut c = redis::cmd(words[0]);
    for w in &words[1..] {
        c.arg(*w);
    }
    c.query(con)
}

/// Runs a command and returns its reply, panicking on an error reply.
pub fn ok(con: &mut redis::Connection, words: &[&str]) -> Value {
    q(con, words).unwrap_or_else(|e| panic!("{words:?} failed: {e}"))
}

/// Runs a command that must fail; returns the error line as the server sent it ("CODE detail").
pub fn err(con: &mut redis::Connection, words: &[&str]) -> String {
    match q(con, words) {
        Ok(v) => panic!("{words:?} should fail, got {v:?}"),
        Err(e) => match (e.code(), e.detail()) {
            (Some(code), Some(detail)) => format!("{code} {detail}"),
            (Some(code), None) => code.to_string(),
            _ => e.to_string(),
        },
    }
}

pub fn bulk(s: &str) -> Value {
    Value::BulkString(s.as_bytes().to_vec())
}

pub fn int(i: i64) -> Value {
    Value::Int(i)
}

pub fn status(s: &str) -> Value {
    Value::SimpleString(s.to_string())
}

pub fn ints(v: &[i64]) -> Value {
    Value::Array(v.iter().map(|&i| Value::Int(i)).collect())
}

/// A raw RESP connection for exact bytes and malformed input.
pub struct Raw {
    pub s: TcpStream,
}

impl Raw {
    pub fn connect(port: u16) -> Raw {
        let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        Raw { s }
    }

    pub fn send(&mut self, b: &[u8]) {
        self.s.write_all(b).unwrap();
    }

    /// Encodes and sends one command.
    pub fn cmd(&mut self, words: &[&[u8]]) {
        let mut o = format!("*{}\r\n", words.len()).into_bytes();
        for w in words {
            o.extend_from_slice(format!("${}\r\n", w.len()).as_bytes());
            o.extend_from_slice(w);
            o.extend_from_slice(b"\r\n");
        }
        self.send(&o);
    }

    /// Reads until `n` bytes have arrived or the peer closes; returns what arrived.
    pub fn read_n(&mut self, n: usize) -> Vec<u8> {
        let mut out = vec![0u8; n];
        let mut got = 0;
        while got < n {
            match self.s.read(&mut out[got..]) {
                Ok(0) | Err(_) => break,
                Ok(k) => got += k,
            }
        }
        out.truncate(got);
        out
    }

    /// Reads until what arrived ends with `suffix` (or the peer closes).
    pub fn read_until(&mut self, suffix: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut b = [0u8; 1];
        while !out.ends_with(suffix) {
            match self.s.read(&mut b) {
                Ok(0) | Err(_) => break,
                Ok(_) => out.push(b[0]),
            }
        }
        out
    }

    /// Sends a command and expects exactly `want` back.
    pub fn expect(&mut self, words: &[&[u8]], want: &[u8]) {
        self.cmd(words);
        let got = self.read_n(want.len());
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(want),
            "reply to {:?}",
            words
                .iter()
                .map(|w| String::from_utf8_lossy(w))
                .collect::<Vec<_>>()
        );
    }

    /// True when the server has closed the connection (reads EOF within the timeout).
    pub fn closed(&mut self) -> bool {
        let mut b = [0u8; 64];
        loop {
            match self.s.read(&mut b) {
                Ok(0) => return true,
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
                Err(_) => return false,
            }
        }
    }
}

/// Redis's type error, as the server sends it.
pub const WRONGTYPE_LINE: &str =
    "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";

/// Splits a command line into words: spaces separate, `"..."` quotes a word (which may be
/// empty or hold spaces).
pub fn words(line: &str) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut cur: Option<Vec<u8>> = None;
    let mut quoted = false;
    for &b in line.as_bytes() {
        match b {
            b'"' => {
                quoted = !quoted;
                cur.get_or_insert_with(Vec::new);
            }
            b' ' if !quoted => {
                if let Some(w) = cur.take() {
                    out.push(w);
                }
            }
            _ => cur.get_or_insert_with(Vec::new).push(b),
        }
    }
    out.extend(cur);
    out
}

/// Runs a table of `(command line, exact reply)` on one raw connection, in order; a reply
/// of `"WT"` stands for [`WRONGTYPE_LINE`]. The expected replies were recorded from
/// redis-server (see each table's note on what differs in 7.2).
pub fn run_table(raw: &mut Raw, table: &[(&str, &str)]) {
    for (line, want) in table {
        let w = words(line);
        let refs: Vec<&[u8]> = w.iter().map(Vec::as_slice).collect();
        let want = if *want == "WT" { WRONGTYPE_LINE } else { want };
        raw.expect(&refs, want.as_bytes());
    }
}

/// Runs `(command line, exact reply bytes)` rows on one connection: tables recorded byte for
/// byte from redis-server (the line is split as [`words`] splits it).
pub fn run_bytes_table(raw: &mut Raw, table: &[(&str, &[u8])]) {
    for (line, want) in table {
        let w = words(line);
        let refs: Vec<&[u8]> = w.iter().map(Vec::as_slice).collect();
        raw.expect(&refs, want);
    }
}

/// INFO's `blocked_clients`.
pub fn blocked(c: &mut redis::Connection) -> i64 {
    let info: String = redis::cmd("INFO").arg("clients").query(c).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("blocked_clients:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Waits until `n` clients are blocked.
pub fn wait_blocked(c: &mut redis::Connection, n: i64) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while blocked(c) != n {
        assert!(
            std::time::Instant::now() < deadline,
            "never saw {n} blocked clients"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}
