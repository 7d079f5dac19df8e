//! A small blocking RESP2 client for the harness: one request, one reply, a deadline.
//! After any error the connection is dropped (a late reply must never be read as the
//! answer to the next request).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Status(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Value>>),
}

impl Value {
    pub fn text(&self) -> String {
        match self {
            Value::Status(s) | Value::Error(s) => s.clone(),
            Value::Bulk(Some(b)) => String::from_utf8_lossy(b).into_owned(),
            other => format!("{other:?}"),
        }
    }
}

pub struct Conn {
    r: BufReader<TcpStream>,
    w: TcpStream,
}

impl Conn {
    pub fn connect(port: u16, timeout: Duration) -> std::io::Result<Conn> {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let s = TcpStream::connect_timeout(&addr, timeout)?;
        s.set_read_timeout(Some(timeout))?;
        s.set_write_timeout(Some(timeout))?;
        s.set_nodelay(true)?;
        Ok(Conn {
            r: BufReader::new(s.try_clone()?),
            w: s,
        })
    }

    /// Sends `args` and reads the reply (an error reply is `Ok(Value::Error)`).
    pub fn call<A: AsRef<[u8]>>(&mut self, args: &[A]) -> std::io::Result<Value> {
        self.send(args)?;
        self.read()
    }

    pub fn send<A: AsRef<[u8]>>(&mut self, args: &[A]) -> std::io::Result<()> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            let a = a.as_ref();
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        self.w.write_all(&out)
    }

    pub fn read(&mut self) -> std::io::Result<Value> {
        let mut line = Vec::new();
        self.r.read_until(b'\n', &mut line)?;
        if line.len() < 3 || !line.ends_with(b"\r\n") {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "connection closed mid-reply",
            ));
        }
        let body = String::from_utf8_lossy(&line[1..line.len() - 2]).into_owned();
        let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, "bad reply");
        Ok(match line[0] {
            b'+' => Value::Status(body),
            b'-' => Value::Error(body),
            b':' => Value::Int(body.parse().map_err(|_| bad())?),
            b'$' => {
                let n: i64 = body.parse().map_err(|_| bad())?;
                if n < 0 {
                    Value::Bulk(None)
                } else {
                    let mut b = vec![0u8; n as usize + 2];
                    self.r.read_exact(&mut b)?;
                    b.truncate(n as usize);
                    Value::Bulk(Some(b))
                }
            }
            b'*' => {
                let n: i64 = body.parse().map_err(|_| bad())?;
                if n < 0 {
                    Value::Array(None)
                } else {
                    let mut v = Vec::with_capacity(n as usize);
                    for _ in 0..n {
                        v.push(self.read()?);
                    }
                    Value::Array(Some(v))
                }
            }
            _ => return Err(bad()),
        })
    }
}

/// One request on a fresh connection, retried until `ok` accepts the reply or `within`
/// passes (for set-up and checks, not for recorded operations).
pub fn call_until<A: AsRef<[u8]>>(
    port: u16,
    args: &[A],
    within: Duration,
    ok: impl Fn(&Value) -> bool,
) -> Value {
    let until = std::time::Instant::now() + within;
    let mut last = None;
    loop {
        if let Ok(mut c) = Conn::connect(port, Duration::from_secs(6)) {
            match c.call(args) {
                Ok(v) if ok(&v) => return v,
                Ok(v) => last = Some(format!("{v:?}")),
                Err(e) => last = Some(e.to_string()),
            }
        }
        assert!(
            std::time::Instant::now() < until,
            "port {port}: {:?} never answered as wanted (last: {last:?})",
            args.iter()
                .map(|a| String::from_utf8_lossy(a.as_ref()).into_owned())
                .collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
