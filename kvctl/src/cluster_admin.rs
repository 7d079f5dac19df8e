//! Administering a cluster of `bloomkv-cluster` nodes over the Redis protocol, at any
//! node's client port (`kvctl cluster status|add|remove`): `CLUSTER INFO`, `CLUSTER
//! ADDLEARNER`, `CLUSTER PROMOTE`, `CLUSTER REMOVE`. Any node accepts them; a follower
//! forwards membership changes to the leader.
//!
//! ```no_run
//! use kvctl::cluster_admin::Admin;
//!
//! let admin = Admin::new("127.0.0.1:6381", None, std::time::Duration::from_secs(10));
//! println!("{}", admin.status()?);
//! admin.add(4, "127.0.0.1:7004", false, false, std::time::Duration::from_secs(60), |line| eprintln!("{line}"))?;
//! # Ok::<(), kvctl::cluster_admin::AdminError>(())
//! ```

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Why an admin command failed.
#[derive(Debug)]
pub enum AdminError {
    /// The node could not be reached or answered something that is not RESP.
    Io(String),
    /// The node answered an error (the change was refused, no leader, ...).
    Refused(String),
    /// The new node did not catch up within the wait.
    Timeout(String),
}

impl std::fmt::Display for AdminError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AdminError::Io(m) => write!(f, "{m}"),
            AdminError::Refused(m) => write!(f, "refused: {m}"),
            AdminError::Timeout(m) => write!(f, "timed out: {m}"),
        }
    }
}

impl std::error::Error for AdminError {}

/// A reply, as far as the admin commands need one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// A status line (`+OK`).
    Status(String),
    /// An integer.
    Int(i64),
    /// A bulk string (`None`: nil); RESP3 verbatim text arrives here in RESP2.
    Bulk(Option<Vec<u8>>),
    /// An array (`None`: nil).
    Array(Option<Vec<Reply>>),
}

/// A connection to one node's client port.
#[derive(Debug, Clone)]
pub struct Admin {
    addr: String,
    password: Option<String>,
    timeout: Duration,
}

/// The lag a learner may still have when it is promoted (entries behind the leader's log).
const PROMOTE_LAG: u64 = 64;

impl Admin {
    /// Commands go to the node at `addr` (`host:port` of its client port), with `password`
    /// (`--requirepass`) if set; each waits at most `timeout` for its reply.
    pub fn new(addr: impl Into<String>, password: Option<String>, timeout: Duration) -> Admin {
        Admin {
            addr: addr.into(),
            password,
            timeout,
        }
    }

    /// Sends one command on a fresh connection; an error reply is [`AdminError::Refused`].
    ///
    /// # Errors
    /// [`AdminError::Io`] when the node cannot be reached or its reply is not RESP;
    /// [`AdminError::Refused`] for an error reply.
    pub fn call(&self, args: &[&str]) -> Result<Reply, AdminError> {
        let io = |e: std::io::Error| AdminError::Io(format!("{}: {e}", self.addr));
        let addr = self
            .addr
            .to_socket_addrs()
            .map_err(io)?
            .next()
            .ok_or_else(|| AdminError::Io(format!("{}: no address", self.addr)))?;
        let s = TcpStream::connect_timeout(&addr, self.timeout).map_err(io)?;
        s.set_read_timeout(Some(self.timeout)).map_err(io)?;
        s.set_write_timeout(Some(self.timeout)).map_err(io)?;
        let mut w = s.try_clone().map_err(io)?;
        let mut r = BufReader::new(s);
        if let Some(pw) = &self.password {
            w.write_all(&encode(&["AUTH", pw])).map_err(io)?;
            read_reply(&mut r).map_err(io)??;
        }
        w.write_all(&encode(args)).map_err(io)?;
        read_reply(&mut r).map_err(io)?
    }

    /// `CLUSTER INFO`: the cluster's state, leader, term, and one line per node (role,
    /// applied index, lag). See [`state_ok`] for whether it serves.
    ///
    /// # Errors
    /// As [`Admin::call`].
    pub fn status(&self) -> Result<String, AdminError> {
        match self.call(&["CLUSTER", "INFO"])? {
            Reply::Bulk(Some(b)) => Ok(String::from_utf8_lossy(&b).replace('\r', "")),
            other => Err(AdminError::Io(format!("CLUSTER INFO answered {other:?}"))),
        }
    }

    /// Adds node `id` (Raft address `raft_addr`) as a learner; unless `learner_only`,
    /// waits (at most `wait`) until it has caught up, then makes it a voter. A change that
    /// would leave an even number of voters is refused before anything is done, unless
    /// `force` (an even count tolerates no more failures than one voter fewer). `progress`
    /// gets a line per step.
    ///
    /// # Errors
    /// As [`Admin::call`]; [`AdminError::Refused`] for an even number of voters without
    /// `force`; [`AdminError::Timeout`] when the node does not catch up in time (it stays
    /// a learner).
    pub fn add(
        &self,
        id: u64,
        raft_addr: &str,
        learner_only: bool,
        force: bool,
        wait: Duration,
        mut progress: impl FnMut(&str),
    ) -> Result<(), AdminError> {
        if !learner_only && !force {
            let status = self.status()?;
            let voters = status
                .lines()
                .filter(|l| l.starts_with("node"))
                .filter(|l| {
                    l.split_once(':')
                        .is_some_and(|(_, rest)| field(rest, "voter") == Some("1"))
                })
                .count();
            if (voters + 1).is_multiple_of(2) {
                return Err(AdminError::Refused(format!(
                    "adding node {id} as a voter would make {} voters: an even number tolerates \
                     no more failures than {voters}; add two nodes, or pass --force (e.g. while \
                     replacing a node: add the new one with --force, then remove the old one)",
                    voters + 1
                )));
            }
        }
        self.call(&["CLUSTER", "ADDLEARNER", &id.to_string(), raft_addr])?;
        progress(&format!("node {id} ({raft_addr}) added as a learner"));
        if learner_only {
            return Ok(());
        }
        let until = Instant::now() + wait;
        loop {
            let status = self.status()?;
            let lag = node_line(&status, id).and_then(|l| field(l, "lag"));
            if let Some(lag) = lag.and_then(|l| l.parse::<u64>().ok()) {
                if lag <= PROMOTE_LAG {
                    break;
                }
                progress(&format!("node {id} is {lag} entries behind"));
            }
            if Instant::now() >= until {
                return Err(AdminError::Timeout(format!(
                    "node {id} did not catch up within {} s; it stays a learner (promote it later with `CLUSTER PROMOTE {id}`)",
                    wait.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        let id_text = id.to_string();
        let mut promote = vec!["CLUSTER", "PROMOTE", id_text.as_str()];
        if force {
            promote.push("FORCE");
        }
        self.call(&promote)?;
        progress(&format!("node {id} promoted to a voter"));
        Ok(())
    }

    /// Removes node `id` (voter or learner).
    ///
    /// # Errors
    /// As [`Admin::call`].
    pub fn remove(&self, id: u64) -> Result<(), AdminError> {
        self.call(&["CLUSTER", "REMOVE", &id.to_string()])
            .map(|_| ())
    }
}

/// Whether a `CLUSTER INFO` text says the cluster serves (`cluster_state:ok`).
pub fn state_ok(status: &str) -> bool {
    status.lines().any(|l| l.trim() == "cluster_state:ok")
}

/// The `nodeN:...` line of a `CLUSTER INFO` text.
pub fn node_line(status: &str, id: u64) -> Option<&str> {
    let prefix = format!("node{id}:");
    status.lines().find_map(|l| l.strip_prefix(prefix.as_str()))
}

/// A `name=value` field of a `CLUSTER INFO` node line.
pub fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    line.split(',')
        .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
}

fn encode(args: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n{a}\r\n", a.len()).as_bytes());
    }
    out
}

/// Reads one RESP2 reply; the outer result is I/O, the inner an error reply.
fn read_reply(r: &mut impl BufRead) -> std::io::Result<Result<Reply, AdminError>> {
    let mut line = Vec::new();
    r.read_until(b'\n', &mut line)?;
    if line.len() < 3 || !line.ends_with(b"\r\n") {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "connection closed before a whole reply",
        ));
    }
    let body = String::from_utf8_lossy(&line[1..line.len() - 2]).into_owned();
    let bad = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not RESP: {body:?}"),
        )
    };
    let num = |b: &str| b.parse::<i64>().map_err(|_| bad());
    Ok(Ok(match line[0] {
        b'+' => Reply::Status(body),
        b'-' => return Ok(Err(AdminError::Refused(body))),
        b':' => Reply::Int(num(&body)?),
        b'$' => match num(&body)? {
            n if n < 0 => Reply::Bulk(None),
            n => {
                let mut b = vec![0u8; n as usize + 2];
                r.read_exact(&mut b)?;
                b.truncate(n as usize);
                Reply::Bulk(Some(b))
            }
        },
        b'*' => match num(&body)? {
            n if n < 0 => Reply::Array(None),
            n => {
                let mut items = Vec::new();
                for _ in 0..n {
                    match read_reply(r)? {
                        Ok(x) => items.push(x),
                        Err(e) => return Ok(Err(e)),
                    }
                }
                Reply::Array(Some(items))
            }
        },
        _ => return Err(bad()),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_parse_and_fields_are_found() {
        let mut r = BufReader::new(&b"*2\r\n$3\r\nabc\r\n:5\r\n-ERR no\r\n"[..]);
        assert_eq!(
            read_reply(&mut r).unwrap().unwrap(),
            Reply::Array(Some(vec![
                Reply::Bulk(Some(b"abc".to_vec())),
                Reply::Int(5)
            ]))
        );
        assert!(
            matches!(read_reply(&mut r).unwrap(), Err(AdminError::Refused(m)) if m == "ERR no")
        );
        assert!(read_reply(&mut BufReader::new(&b"$5\r\nab"[..])).is_err());
        let status = "cluster_state:ok\nnode2:addr=a:1,voter=0,state=up,lag=12\n";
        let l = node_line(status, 2).unwrap();
        assert_eq!(field(l, "lag"), Some("12"));
        assert_eq!(field(l, "voter"), Some("0"));
        assert!(node_line(status, 3).is_none());
    }
}
