//! The bytes of a replicated request and of its answers.
//!
//! A request is what one log entry carries: a connection's pipelined write commands, a
//! whole `MULTI`/`EXEC`, a `WATCH`, the expiry reclaimer's removals, a `PUBLISH`. Its
//! answers come back from the leader's state machine to the node the client is connected
//! to, which encodes each [`Reply`] in the client's RESP version: so a reply travels as
//! the reply tree itself, not as RESP bytes, and every variant round-trips (a streamed
//! reply, which only local reads produce, is sent materialized as an error: see
//! [`encode_answers`]).
//!
//! ```text
//! request  = "BKR" version(u8 = 1) kind(u8) body
//!   kind 1 commands   args-list*            (u32 count, then each command)
//!   kind 2 exec       watch(u64, 0: none) args-list*
//!   kind 3 watch      token(u64) bytes*     (the keys)
//!   kind 4 unwatch    token(u64)
//!   kind 5 expire     (at(u64) key(bytes))*
//!   kind 6 publish    origin(u64) channel(bytes) message(bytes)
//!   kind 7 spublish   origin(u64) channel(bytes) message(bytes)   (a shard channel)
//!   kind 8 in-db      db(u8) kind(u8: 1, 2, 3 or 5) body   (that request, in database db)
//! args-list = u32 count, bytes per argument;  bytes = u32 length, the bytes
//! answers  = u32 count, answer per request part
//! answer   = 0 reply | 1 block: bytes* (keys) timeout(u64, u64::MAX: none) reply (on timeout)
//! reply    = tag(u8) then the variant's fields (strings and bulks as bytes, integers
//!            little-endian, a double as its bits, nested replies in order)
//! ```
//!
//! All integers are little-endian. Decoding checks every length against what is left and
//! bounds nesting, so damaged bytes give a typed [`DecodeError`], never a panic.

use std::time::Duration;

use bytes::Bytes;

use crate::resp::{Args, Reply};

const MAGIC: &[u8; 3] = b"BKR";
const VERSION: u8 = 1;
/// Deepest reply nesting accepted (replies nest a few levels; this only bounds recursion
/// on damaged input).
const MAX_DEPTH: usize = 64;

/// One replicated request.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    /// A connection's pipelined write commands, applied in order in one write set, one
    /// answer each (as the standalone server's group commit).
    Commands(Vec<Args>),
    /// `MULTI` ... `EXEC`: the queued data commands, applied atomically; one answer (the
    /// array, or a nil array when a watched key changed). `watch`: the connection's WATCH
    /// token ([`Request::Watch`]), consumed by the `EXEC` either way.
    Exec {
        /// The connection's watch token, if it watched keys.
        watch: Option<u64>,
        /// The queued commands.
        commands: Vec<Args>,
    },
    /// `WATCH`: registers `keys` under the connection's `token`, as of this entry.
    Watch {
        /// The connection's token (random, chosen by its node).
        token: u64,
        /// The keys.
        keys: Vec<Bytes>,
    },
    /// `UNWATCH` (also `DISCARD`, `RESET`, a disconnect): forgets the token's keys.
    Unwatch {
        /// The token.
        token: u64,
    },
    /// The leader's expiry reclaimer: keys whose expiry-index entries it found due.
    Expire {
        /// Each key with the expiry time its index entry named.
        due: Vec<(u64, Bytes)>,
    },
    /// `PUBLISH`, delivered by every node to its own subscribers (the origin node
    /// delivers it itself, once the entry is committed).
    Publish {
        /// The node the client sent it to.
        origin: u64,
        /// SPUBLISH: to a shard channel.
        shard: bool,
        /// The channel.
        channel: Bytes,
        /// The message.
        message: Bytes,
    },
    /// `request` (commands, an EXEC, a WATCH or an expiry sweep) addresses database `db`
    /// (never 0: a request without this wrapper addresses database 0, as every request
    /// written before databases were replicated does). Build it with [`Request::in_db`].
    InDb {
        /// The SELECT index.
        db: u8,
        /// The request.
        request: Box<Request>,
    },
}

/// One answer of the state machine.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// The command's reply.
    Reply(Reply),
    /// A blocking pop found nothing: its client waits on its own node until an applied
    /// entry makes one of `keys` ready, then sends the command again.
    Block {
        /// The keys it waits on.
        keys: Vec<Bytes>,
        /// How long it waits in all; `None`: forever.
        timeout: Option<Duration>,
        /// What it answers on timeout (a nil array, or a nil bulk for the moves).
        on_timeout: Reply,
        /// The command to send again instead of the original, when the original's meaning
        /// moves with the data (`XREAD ... $` resolved to the ID it named when it ran).
        retry: Option<Vec<Bytes>>,
    },
}

/// Bytes that do not decode, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError(pub String);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "damaged replicated message: {}", self.0)
    }
}

impl std::error::Error for DecodeError {}

// ---- writing ----

fn put_u32(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes());
}

fn put_u64(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(&n.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_u32(out, b.len());
    out.extend_from_slice(b);
}

fn put_args_list(out: &mut Vec<u8>, cmds: &[Args]) {
    put_u32(out, cmds.len());
    for args in cmds {
        put_u32(out, args.len());
        for a in args {
            put_bytes(out, a);
        }
    }
}

impl Request {
    /// `request` in database `db`: itself for database 0 (its bytes as before databases
    /// were replicated), else wrapped in [`Request::InDb`].
    pub fn in_db(db: u8, request: Request) -> Request {
        if db == 0 {
            request
        } else {
            Request::InDb {
                db,
                request: Box::new(request),
            }
        }
    }

    /// The request's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64);
        out.extend_from_slice(MAGIC);
        out.push(VERSION);
        self.encode_kind_and_body(&mut out);
        out
    }

    fn encode_kind_and_body(&self, out: &mut Vec<u8>) {
        match self {
            Request::Commands(cmds) => {
                out.push(1);
                put_args_list(out, cmds);
            }
            Request::Exec { watch, commands } => {
                out.push(2);
                put_u64(out, watch.unwrap_or(0));
                put_args_list(out, commands);
            }
            Request::Watch { token, keys } => {
                out.push(3);
                put_u64(out, *token);
                put_u32(out, keys.len());
                for k in keys {
                    put_bytes(out, k);
                }
            }
            Request::Unwatch { token } => {
                out.push(4);
                put_u64(out, *token);
            }
            Request::Expire { due } => {
                out.push(5);
                put_u32(out, due.len());
                for (at, k) in due {
                    put_u64(out, *at);
                    put_bytes(out, k);
                }
            }
            Request::Publish {
                origin,
                shard,
                channel,
                message,
            } => {
                out.push(if *shard { 7 } else { 6 });
                put_u64(out, *origin);
                put_bytes(out, channel);
                put_bytes(out, message);
            }
            Request::InDb { db, request } => {
                out.push(8);
                out.push(*db);
                request.encode_kind_and_body(out);
            }
        }
    }

    /// Reads a request.
    ///
    /// # Errors
    /// [`DecodeError`] naming what is wrong: magic, version, kind, a length past the end,
    /// bytes left over.
    pub fn decode(b: &[u8]) -> Result<Request, DecodeError> {
        let mut r = Reader { b, pos: 0 };
        if r.take(3)? != MAGIC {
            return Err(DecodeError("not a replicated request (magic)".into()));
        }
        let v = r.u8()?;
        if v != VERSION {
            return Err(DecodeError(format!(
                "request version {v}, this server reads {VERSION}"
            )));
        }
        let kind = r.u8()?;
        let req = match kind {
            8 => {
                let db = r.u8()?;
                let inner = r.u8()?;
                if !matches!(inner, 1 | 2 | 3 | 5) || db == 0 {
                    return Err(DecodeError(format!(
                        "request kind {inner} in database {db}"
                    )));
                }
                Request::InDb {
                    db,
                    request: Box::new(Request::body(&mut r, inner)?),
                }
            }
            k => Request::body(&mut r, k)?,
        };
        r.end()?;
        Ok(req)
    }

    /// The body of a request of kind `kind` (not 8).
    fn body(r: &mut Reader<'_>, kind: u8) -> Result<Request, DecodeError> {
        let req = match kind {
            1 => Request::Commands(r.args_list()?),
            2 => {
                let watch = r.u64()?;
                Request::Exec {
                    watch: (watch != 0).then_some(watch),
                    commands: r.args_list()?,
                }
            }
            3 => {
                let token = r.u64()?;
                let n = r.count(4)?;
                let keys = (0..n).map(|_| r.bytes()).collect::<Result<_, _>>()?;
                Request::Watch { token, keys }
            }
            4 => Request::Unwatch { token: r.u64()? },
            5 => {
                let n = r.count(12)?;
                let due = (0..n)
                    .map(|_| Ok((r.u64()?, r.bytes()?)))
                    .collect::<Result<_, DecodeError>>()?;
                Request::Expire { due }
            }
            6 | 7 => Request::Publish {
                shard: kind == 7,
                origin: r.u64()?,
                channel: r.bytes()?,
                message: r.bytes()?,
            },
            k => return Err(DecodeError(format!("unknown request kind {k}"))),
        };
        Ok(req)
    }
}

/// The bytes of `answers`. A [`Reply::Stream`] (only local reads produce one) is written
/// as an error reply: it cannot be re-read once it has been consumed.
pub fn encode_answers(answers: &[Answer]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 * answers.len() + 4);
    put_u32(&mut out, answers.len());
    for a in answers {
        match a {
            Answer::Reply(r) => {
                out.push(0);
                encode_reply(r, &mut out);
            }
            Answer::Block {
                keys,
                timeout,
                on_timeout,
                retry,
            } => {
                out.push(if retry.is_some() { 2 } else { 1 });
                put_u32(&mut out, keys.len());
                for k in keys {
                    put_bytes(&mut out, k);
                }
                put_u64(
                    &mut out,
                    timeout.map_or(u64::MAX, |t| {
                        u64::try_from(t.as_millis()).unwrap_or(u64::MAX - 1)
                    }),
                );
                encode_reply(on_timeout, &mut out);
                if let Some(args) = retry {
                    put_u32(&mut out, args.len());
                    for a in args {
                        put_bytes(&mut out, a);
                    }
                }
            }
        }
    }
    out
}

/// Reads what [`encode_answers`] wrote.
///
/// # Errors
/// [`DecodeError`] for damaged bytes.
pub fn decode_answers(b: &[u8]) -> Result<Vec<Answer>, DecodeError> {
    let mut r = Reader { b, pos: 0 };
    let n = r.count(2)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(match r.u8()? {
            0 => Answer::Reply(r.reply(0)?),
            tag @ (1 | 2) => {
                let nk = r.count(4)?;
                let keys = (0..nk).map(|_| r.bytes()).collect::<Result<_, _>>()?;
                let t = r.u64()?;
                let on_timeout = r.reply(0)?;
                let retry = if tag == 2 {
                    let na = r.count(4)?;
                    Some((0..na).map(|_| r.bytes()).collect::<Result<_, _>>()?)
                } else {
                    None
                };
                Answer::Block {
                    keys,
                    timeout: (t != u64::MAX).then(|| Duration::from_millis(t)),
                    on_timeout,
                    retry,
                }
            }
            t => return Err(DecodeError(format!("unknown answer tag {t}"))),
        });
    }
    r.end()?;
    Ok(out)
}

/// Appends the bytes of `r` (see the module doc).
pub fn encode_reply(r: &Reply, out: &mut Vec<u8>) {
    let list = |out: &mut Vec<u8>, tag: u8, items: &[Reply]| {
        out.push(tag);
        put_u32(out, items.len());
        for i in items {
            encode_reply(i, out);
        }
    };
    let pairs = |out: &mut Vec<u8>, tag: u8, items: &[(Reply, Reply)]| {
        out.push(tag);
        put_u32(out, items.len());
        for (k, v) in items {
            encode_reply(k, out);
            encode_reply(v, out);
        }
    };
    match r {
        Reply::Ok => out.push(0),
        Reply::Status(s) => {
            out.push(1);
            put_bytes(out, s.as_bytes());
        }
        Reply::Error(s) => {
            out.push(2);
            put_bytes(out, s.as_bytes());
        }
        Reply::Int(i) => {
            out.push(3);
            out.extend_from_slice(&i.to_le_bytes());
        }
        Reply::Bulk(b) => {
            out.push(4);
            put_bytes(out, b);
        }
        Reply::Nil => out.push(5),
        Reply::NilArray => out.push(6),
        Reply::Array(items) => list(out, 7, items),
        Reply::Map(items) => pairs(out, 8, items),
        Reply::Set(items) => list(out, 9, items),
        Reply::Pairs(items) => pairs(out, 10, items),
        Reply::Double(d) => {
            out.push(11);
            put_u64(out, d.to_bits());
        }
        Reply::Verbatim(s) => {
            out.push(12);
            put_bytes(out, s.as_bytes());
        }
        Reply::NoReply => out.push(13),
        Reply::ByProto { resp2, resp3 } => {
            out.push(14);
            encode_reply(resp2, out);
            encode_reply(resp3, out);
        }
        Reply::Push(items) => list(out, 15, items),
        Reply::Seq(items) => list(out, 16, items),
        Reply::Bool(b) => {
            out.push(17);
            out.push(u8::from(*b));
        }
        Reply::Stream(_) => encode_reply(
            &Reply::err("a streamed reply cannot be sent between nodes"),
            out,
        ),
    }
}

/// Reads one reply written by [`encode_reply`].
///
/// # Errors
/// [`DecodeError`] for damaged bytes or bytes left over.
pub fn decode_reply(b: &[u8]) -> Result<Reply, DecodeError> {
    let mut r = Reader { b, pos: 0 };
    let reply = r.reply(0)?;
    r.end()?;
    Ok(reply)
}

// ---- reading ----

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.b.len());
        let Some(end) = end else {
            return Err(DecodeError(format!(
                "{n} bytes wanted at offset {} of {}",
                self.pos,
                self.b.len()
            )));
        };
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<usize, DecodeError> {
        let mut a = [0u8; 4];
        a.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(a) as usize)
    }

    fn u64(&mut self) -> Result<u64, DecodeError> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }

    /// A count of items each at least `min` bytes long: never more than the bytes left
    /// could hold, so a damaged count cannot make the reader reserve memory.
    fn count(&mut self, min: usize) -> Result<usize, DecodeError> {
        let at = self.pos;
        let n = self.u32()?;
        if n.saturating_mul(min) > self.b.len() - self.pos {
            return Err(DecodeError(format!(
                "count {n} at offset {at} exceeds the {} bytes left",
                self.b.len() - self.pos
            )));
        }
        Ok(n)
    }

    fn bytes(&mut self) -> Result<Bytes, DecodeError> {
        let n = self.u32()?;
        Ok(Bytes::copy_from_slice(self.take(n)?))
    }

    fn string(&mut self) -> Result<String, DecodeError> {
        let at = self.pos;
        let b = self.bytes()?;
        String::from_utf8(b.to_vec())
            .map_err(|_| DecodeError(format!("text at offset {at} is not UTF-8")))
    }

    fn args_list(&mut self) -> Result<Vec<Args>, DecodeError> {
        let n = self.count(4)?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let na = self.count(4)?;
            if na == 0 {
                return Err(DecodeError("a command without arguments".into()));
            }
            let args = (0..na).map(|_| self.bytes()).collect::<Result<Args, _>>()?;
            out.push(args);
        }
        Ok(out)
    }

    fn end(&self) -> Result<(), DecodeError> {
        if self.pos == self.b.len() {
            Ok(())
        } else {
            Err(DecodeError(format!(
                "{} bytes left over at offset {}",
                self.b.len() - self.pos,
                self.pos
            )))
        }
    }

    fn reply(&mut self, depth: usize) -> Result<Reply, DecodeError> {
        if depth > MAX_DEPTH {
            return Err(DecodeError(format!(
                "replies nested deeper than {MAX_DEPTH}"
            )));
        }
        let list = |r: &mut Reader<'a>| -> Result<Vec<Reply>, DecodeError> {
            let n = r.count(1)?;
            (0..n).map(|_| r.reply(depth + 1)).collect()
        };
        let pairs = |r: &mut Reader<'a>| -> Result<Vec<(Reply, Reply)>, DecodeError> {
            let n = r.count(2)?;
            (0..n)
                .map(|_| Ok((r.reply(depth + 1)?, r.reply(depth + 1)?)))
                .collect()
        };
        let at = self.pos;
        Ok(match self.u8()? {
            0 => Reply::Ok,
            1 => Reply::Status(self.string()?),
            2 => Reply::Error(self.string()?),
            3 => Reply::Int(self.u64()? as i64),
            4 => Reply::Bulk(self.bytes()?),
            5 => Reply::Nil,
            6 => Reply::NilArray,
            7 => Reply::Array(list(self)?),
            8 => Reply::Map(pairs(self)?),
            9 => Reply::Set(list(self)?),
            10 => Reply::Pairs(pairs(self)?),
            11 => Reply::Double(f64::from_bits(self.u64()?)),
            12 => Reply::Verbatim(self.string()?),
            13 => Reply::NoReply,
            14 => Reply::ByProto {
                resp2: Box::new(self.reply(depth + 1)?),
                resp3: Box::new(self.reply(depth + 1)?),
            },
            15 => Reply::Push(list(self)?),
            16 => Reply::Seq(list(self)?),
            17 => match self.u8()? {
                0 => Reply::Bool(false),
                1 => Reply::Bool(true),
                b => {
                    return Err(DecodeError(format!(
                        "boolean reply byte {b} at offset {}",
                        self.pos - 1
                    )));
                }
            },
            t => return Err(DecodeError(format!("unknown reply tag {t} at offset {at}"))),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_variant() -> Reply {
        Reply::Array(vec![
            Reply::Ok,
            Reply::Status("QUEUED".into()),
            Reply::Error("WRONGTYPE x".into()),
            Reply::Int(i64::MIN),
            Reply::Int(-1),
            Reply::Bulk(Bytes::from_static(b"\x00\xffbin")),
            Reply::Nil,
            Reply::NilArray,
            Reply::Map(vec![(Reply::bulk("f"), Reply::Int(2))]),
            Reply::Set(vec![Reply::bulk("a"), Reply::bulk("b")]),
            Reply::Pairs(vec![(Reply::bulk("m"), Reply::Double(1.5))]),
            Reply::Double(f64::NEG_INFINITY),
            Reply::Double(-0.0),
            Reply::Verbatim("info\r\n".into()),
            Reply::NoReply,
            Reply::ByProto {
                resp2: Box::new(Reply::Array(vec![Reply::Int(1)])),
                resp3: Box::new(Reply::Map(vec![(Reply::bulk("k"), Reply::Int(1))])),
            },
            Reply::Push(vec![Reply::bulk("message")]),
            Reply::Seq(vec![Reply::Ok, Reply::Ok]),
            Reply::Bool(true),
            Reply::Bool(false),
            Reply::Array(vec![]),
        ])
    }

    #[test]
    fn every_reply_variant_round_trips_and_encodes_the_same_resp() {
        let r = every_variant();
        let mut b = Vec::new();
        encode_reply(&r, &mut b);
        let back = decode_reply(&b).unwrap();
        // Double(-0.0) == Double(0.0) under PartialEq: compare the client bytes too.
        for proto in [2, 3] {
            let (mut x, mut y) = (Vec::new(), Vec::new());
            r.encode(proto, &mut x);
            back.encode(proto, &mut y);
            assert_eq!(x, y, "RESP{proto}");
        }
        assert_eq!(back, r);
    }

    #[test]
    fn requests_and_answers_round_trip() {
        let args = |v: &[&str]| -> Args { v.iter().map(|s| Bytes::from(s.to_string())).collect() };
        let reqs = vec![
            Request::Commands(vec![args(&["SET", "k", "v"]), args(&["INCR", "n"])]),
            Request::Exec {
                watch: Some(7),
                commands: vec![args(&["GET", "k"])],
            },
            Request::Exec {
                watch: None,
                commands: vec![],
            },
            Request::Watch {
                token: 9,
                keys: vec![Bytes::from_static(b"a"), Bytes::new()],
            },
            Request::Unwatch { token: 9 },
            Request::Expire {
                due: vec![(12, Bytes::from_static(b"k"))],
            },
            Request::Publish {
                origin: 2,
                shard: false,
                channel: Bytes::from_static(b"ch"),
                message: Bytes::from_static(b"hi"),
            },
            Request::Publish {
                origin: 3,
                shard: true,
                channel: Bytes::from_static(b"sch"),
                message: Bytes::from_static(b"hi"),
            },
            Request::in_db(
                3,
                Request::Commands(vec![args(&["SET", "k", "v"]), args(&["SELECT", "0"])]),
            ),
            Request::in_db(
                15,
                Request::Exec {
                    watch: Some(7),
                    commands: vec![args(&["GET", "k"])],
                },
            ),
            Request::in_db(
                1,
                Request::Watch {
                    token: 9,
                    keys: vec![Bytes::from_static(b"a")],
                },
            ),
            Request::in_db(
                255,
                Request::Expire {
                    due: vec![(12, Bytes::from_static(b"k"))],
                },
            ),
        ];
        // Database 0 is no wrapper: those requests' bytes are what they always were.
        let plain = Request::Commands(vec![args(&["SET", "k", "v"])]);
        assert_eq!(Request::in_db(0, plain.clone()), plain);
        assert_eq!(plain.encode(), b"BKR\x01\x01\x01\x00\x00\x00\x03\x00\x00\x00\x03\x00\x00\x00SET\x01\x00\x00\x00k\x01\x00\x00\x00v");
        let mut nested = Request::in_db(2, Request::Unwatch { token: 1 }).encode();
        assert!(
            Request::decode(&nested).is_err(),
            "only data requests go in a database"
        );
        nested = Request::in_db(2, Request::Commands(vec![])).encode();
        nested[5] = 0;
        assert!(
            Request::decode(&nested).is_err(),
            "database 0 is never wrapped"
        );
        for r in reqs {
            assert_eq!(Request::decode(&r.encode()).unwrap(), r);
        }
        let answers = vec![
            Answer::Reply(every_variant()),
            Answer::Block {
                keys: vec![Bytes::from_static(b"q")],
                timeout: Some(Duration::from_millis(1500)),
                on_timeout: Reply::NilArray,
                retry: None,
            },
            Answer::Block {
                keys: vec![],
                timeout: None,
                on_timeout: Reply::Nil,
                retry: Some(vec![Bytes::from_static(b"XREAD"), Bytes::new()]),
            },
        ];
        let back = decode_answers(&encode_answers(&answers)).unwrap();
        assert_eq!(back.len(), 3);
        assert_eq!(back[1..], answers[1..]);
    }

    #[test]
    fn damaged_bytes_are_typed_errors() {
        let good = Request::Commands(vec![vec![Bytes::from_static(b"PING")]]).encode();
        for cut in 0..good.len() {
            assert!(Request::decode(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut extra = good.clone();
        extra.push(0);
        assert!(Request::decode(&extra).is_err());
        let mut huge = good[..5].to_vec();
        huge.push(1);
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(Request::decode(&huge).is_err(), "count past the end");
        // Deep nesting is refused, not a stack overflow.
        let mut deep = Vec::new();
        for _ in 0..10_000 {
            deep.push(7);
            deep.extend_from_slice(&1u32.to_le_bytes());
        }
        deep.push(0);
        assert!(decode_reply(&deep).is_err());
        let mut answers = encode_answers(&[Answer::Reply(Reply::Ok)]);
        answers[4] = 9;
        assert!(decode_answers(&answers).is_err());
    }

    #[test]
    fn a_stream_is_sent_as_an_error() {
        struct Never;
        impl crate::resp::Streamed for Never {
            fn fill(&mut self, _: u8, _: &mut Vec<u8>, _: usize) -> Result<bool, String> {
                Ok(true)
            }
        }
        let mut b = Vec::new();
        encode_reply(&Reply::Stream(crate::resp::Stream::new(Never)), &mut b);
        assert!(decode_reply(&b).unwrap().is_error());
    }
}
