//! The Redis protocol: an incremental request parser (multibulk and inline requests) with
//! Redis's limits and error texts, and the reply type with its RESP2 and RESP3 encodings.
//!
//! The parser is our own rather than a crate's (see docs/SERVER.md, "Why our own parser"):
//! it keeps its place between reads, so a 100 MB bulk arriving in 64 KiB pieces or a pipeline of
//! 10k commands is scanned once, not again from its start on every read; it checks each length
//! against the limits *before* reserving memory; and it answers with Redis's own
//! `Protocol error: ...` texts, which clients and tests compare.

use std::sync::Arc;

use bytes::{Buf, Bytes, BytesMut};
use parking_lot::Mutex;

/// One request: the command name followed by its arguments, as sent.
pub type Args = Vec<Bytes>;

/// Bounds the parser enforces on every client's input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Longest bulk string accepted (Redis's `proto-max-bulk-len`, 512 MB).
    pub max_bulk_len: usize,
    /// Most elements in one request (Redis accepts up to `i32::MAX`; memory is bounded by
    /// `max_query_buffer` in any case, because elements are never reserved ahead of their bytes).
    pub max_multibulk_len: usize,
    /// Longest inline request or header line (Redis: 64 KiB).
    pub max_inline_len: usize,
    /// Most bytes of unparsed input a client may hold (Redis's `client-query-buffer-limit`,
    /// 1 GB); beyond it the connection is closed.
    pub max_query_buffer: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bulk_len: 512 * 1024 * 1024,
            max_multibulk_len: i32::MAX as usize,
            max_inline_len: 64 * 1024,
            max_query_buffer: 1024 * 1024 * 1024,
        }
    }
}

/// A request the parser cannot accept. The connection answers `-ERR Protocol error: <text>`
/// and is closed, as Redis does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtocolError(pub String);

impl std::fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Protocol error: {}", self.0)
    }
}

impl std::error::Error for ProtocolError {}

fn perr<T>(text: impl Into<String>) -> Result<T, ProtocolError> {
    Err(ProtocolError(text.into()))
}

/// Incremental request parser. Feed it the connection's buffer after every read; it takes
/// whole requests off the front and remembers how far into a partial request it got.
#[derive(Debug)]
pub struct Parser {
    limits: Limits,
    /// Elements still expected by the multibulk request in progress (0: none in progress).
    remaining: usize,
    /// Arguments of the multibulk request in progress.
    args: Args,
    /// Length of the bulk string whose header has been read but whose bytes have not.
    bulk_len: Option<usize>,
    /// False while the client must still authenticate: requests are then held to 10
    /// elements and bulks to 16 KiB, as Redis does, so an unauthenticated client cannot make
    /// the server buffer much.
    authenticated: bool,
}

/// Most elements of a request from a client that has not authenticated (Redis: 10).
pub const UNAUTH_MAX_MULTIBULK: i64 = 10;
/// Longest bulk string from a client that has not authenticated (Redis: 16 KiB).
pub const UNAUTH_MAX_BULK: i64 = 16 * 1024;

impl Parser {
    /// A parser enforcing `limits`.
    pub fn new(limits: Limits) -> Parser {
        Parser {
            limits,
            remaining: 0,
            args: Vec::new(),
            bulk_len: None,
            authenticated: true,
        }
    }

    /// Tells the parser whether the client has authenticated (takes effect from the next
    /// request; see [`UNAUTH_MAX_MULTIBULK`] and [`UNAUTH_MAX_BULK`]).
    pub fn set_authenticated(&mut self, yes: bool) {
        self.authenticated = yes;
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Bytes the request in progress still needs before it can complete, when known (the rest
    /// of a bulk string); lets the caller reserve exactly that much once.
    pub fn pending_bulk(&self, buf: &BytesMut) -> Option<usize> {
        self.bulk_len.map(|n| (n + 2).saturating_sub(buf.len()))
    }

    /// Takes the next complete request off the front of `buf`.
    ///
    /// Returns `Ok(None)` when `buf` holds no complete request yet (what it does hold stays
    /// in `buf` or in the parser). Empty requests (`*0`, `*-1`, blank inline lines) are
    /// skipped, as Redis skips them.
    ///
    /// # Errors
    /// A [`ProtocolError`] with Redis's text for malformed input or input over the limits.
    pub fn next(&mut self, buf: &mut BytesMut) -> Result<Option<Args>, ProtocolError> {
        self.next_reusing(buf, &mut Vec::new())
    }

    /// [`Parser::next`], taking the request's argument vector from `spare` when it holds one
    /// (a connection hands back the vectors of the requests it ran, so a request costs no
    /// allocation of its own).
    ///
    /// # Errors
    /// As [`Parser::next`].
    pub fn next_reusing(
        &mut self,
        buf: &mut BytesMut,
        spare: &mut Vec<Args>,
    ) -> Result<Option<Args>, ProtocolError> {
        loop {
            if self.remaining == 0 {
                if buf.is_empty() {
                    return Ok(None);
                }
                if buf[0] != b'*' {
                    match self.inline(buf)? {
                        Some(args) if args.is_empty() => continue,
                        other => return Ok(other),
                    }
                }
                let Some(end) = self.line_end(buf, true)? else {
                    return Ok(None);
                };
                let n = match parse_len(&buf[1..end]) {
                    Some(n) if n <= self.limits.max_multibulk_len as i64 => n,
                    _ => return perr("invalid multibulk length"),
                };
                buf.advance(end + 2);
                if n <= 0 {
                    continue;
                }
                if !self.authenticated && n > UNAUTH_MAX_MULTIBULK {
                    return perr("unauthenticated multibulk length");
                }
                self.remaining = n as usize;
                self.args = match spare.pop() {
                    Some(mut v) => {
                        v.clear();
                        v.reserve(self.remaining.min(1024));
                        v
                    }
                    None => Vec::with_capacity(self.remaining.min(1024)),
                };
            }
            while self.remaining > 0 {
                let len = match self.bulk_len {
                    Some(len) => len,
                    None => {
                        if buf.is_empty() {
                            return Ok(None);
                        }
                        let Some(end) = self.line_end(buf, false)? else {
                            return Ok(None);
                        };
                        if buf[0] != b'$' {
                            return perr(format!(
                                "expected '$', got '{}'",
                                char::from(buf[0]).escape_default()
                            ));
                        }
                        let n = parse_len(&buf[1..end]);
                        let used = end + 2;
                        let len = match n {
                            Some(n) if n >= 0 && n as u64 <= self.limits.max_bulk_len as u64 => {
                                n as usize
                            }
                            _ => return perr("invalid bulk length"),
                        };
                        if !self.authenticated && len as i64 > UNAUTH_MAX_BULK {
                            return perr("unauthenticated bulk length");
                        }
                        buf.advance(used);
                        self.bulk_len = Some(len);
                        len
                    }
                };
                if buf.len() < len + 2 {
                    return Ok(None);
                }
                if &buf[len..len + 2] != b"\r\n" {
                    // Redis does not check the terminator; being strict costs nothing and
                    // catches clients whose lengths are off.
                    return perr("invalid bulk terminator");
                }
                let arg = buf.split_to(len).freeze();
                buf.advance(2);
                self.bulk_len = None;
                self.args.push(arg);
                self.remaining -= 1;
            }
            return Ok(Some(std::mem::take(&mut self.args)));
        }
    }

    /// Where the header line at the front of `buf` ends (the position of its `\r`), checked
    /// as Redis checks it; `None` while the line is incomplete. `mbulk` says whether it is a
    /// request's `*` header or an argument's `$` header (their error texts differ). The
    /// caller reads the line in place and advances past it.
    fn line_end(&self, buf: &[u8], mbulk: bool) -> Result<Option<usize>, ProtocolError> {
        let invalid = if mbulk {
            "invalid multibulk length"
        } else {
            "invalid bulk length"
        };
        let too_big = if mbulk {
            "too big mbulk count string"
        } else {
            "too big bulk count string"
        };
        // A header is a type byte and a few digits: look just past them first.
        let cr = match buf.iter().take(24).position(|&b| b == b'\r') {
            Some(i) => Some(i),
            None if buf.len() <= 24 => None,
            None => memchr(b'\r', buf),
        };
        match cr {
            Some(i) if i > self.limits.max_inline_len => perr(too_big),
            Some(i) if i + 1 < buf.len() => {
                if buf[i + 1] != b'\n' || i < 2 {
                    // A bad terminator, or a header of only its type byte ("*\r\n").
                    return perr(invalid);
                }
                Ok(Some(i))
            }
            Some(_) => Ok(None),
            None if buf.len() <= self.limits.max_inline_len => Ok(None),
            None => perr(too_big),
        }
    }

    /// Parses an inline request (a line of space-separated, optionally quoted words).
    fn inline(&self, buf: &mut BytesMut) -> Result<Option<Args>, ProtocolError> {
        let Some(nl) = memchr(b'\n', buf) else {
            if buf.len() > self.limits.max_inline_len {
                return perr("too big inline request");
            }
            return Ok(None);
        };
        if nl > self.limits.max_inline_len {
            return perr("too big inline request");
        }
        let mut line = buf.split_to(nl + 1);
        line.truncate(nl);
        if line.last() == Some(&b'\r') {
            line.truncate(nl - 1);
        }
        match split_inline(&line) {
            Some(words) => Ok(Some(words.into_iter().map(Bytes::from).collect())),
            None => perr("unbalanced quotes in request"),
        }
    }
}

fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|&b| b == needle)
}

/// Parses a decimal length as Redis does: optional '-', digits only, no leading '+' or spaces.
fn parse_len(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: i64 = 0;
    for &d in digits {
        v = v * 10 + i64::from(d - b'0');
    }
    Some(if neg { -v } else { v })
}

/// Splits an inline request into words: runs of non-blank bytes, or "double-quoted" strings
/// with backslash escapes (`\n`, `\r`, `\t`, `\b`, `\a`, `\xHH`, `\"`, `\\`), or 'single-quoted'
/// strings (only `\'` escaped). `None` for unbalanced quotes or a closing quote not followed
/// by a blank.
pub fn split_inline(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut words = Vec::new();
    let mut i = 0;
    let n = line.len();
    loop {
        while i < n && line[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= n {
            return Some(words);
        }
        let mut word = Vec::new();
        match line[i] {
            b'"' => {
                i += 1;
                loop {
                    if i >= n {
                        return None;
                    }
                    match line[i] {
                        b'\\'
                            if i + 3 < n
                                && line[i + 1] == b'x'
                                && line[i + 2].is_ascii_hexdigit()
                                && line[i + 3].is_ascii_hexdigit() =>
                        {
                            word.push(hex(line[i + 2]) * 16 + hex(line[i + 3]));
                            i += 4;
                        }
                        b'\\' if i + 1 < n => {
                            word.push(match line[i + 1] {
                                b'n' => b'\n',
                                b'r' => b'\r',
                                b't' => b'\t',
                                b'b' => 8,
                                b'a' => 7,
                                c => c,
                            });
                            i += 2;
                        }
                        b'"' => {
                            i += 1;
                            if i < n && !line[i].is_ascii_whitespace() {
                                return None;
                            }
                            break;
                        }
                        c => {
                            word.push(c);
                            i += 1;
                        }
                    }
                }
            }
            b'\'' => {
                i += 1;
                loop {
                    if i >= n {
                        return None;
                    }
                    match line[i] {
                        b'\\' if i + 1 < n && line[i + 1] == b'\'' => {
                            word.push(b'\'');
                            i += 2;
                        }
                        b'\'' => {
                            i += 1;
                            if i < n && !line[i].is_ascii_whitespace() {
                                return None;
                            }
                            break;
                        }
                        c => {
                            word.push(c);
                            i += 1;
                        }
                    }
                }
            }
            _ => {
                while i < n && !line[i].is_ascii_whitespace() {
                    word.push(line[i]);
                    i += 1;
                }
            }
        }
        words.push(word);
    }
}

fn hex(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => c.to_ascii_lowercase().wrapping_sub(b'a').wrapping_add(10) & 15,
    }
}

/// A reply, independent of the protocol version; [`Reply::encode`] writes it as RESP2 or RESP3.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// `+OK`.
    Ok,
    /// `+QUEUED` and other status replies.
    Status(String),
    /// An error; the text starts with its code (`ERR`, `WRONGTYPE`, `NOAUTH`, ...).
    Error(String),
    /// An integer.
    Int(i64),
    /// A bulk string.
    Bulk(Bytes),
    /// The null reply (RESP2 `$-1`, RESP3 `_`).
    Nil,
    /// The null array (RESP2 `*-1`, RESP3 `_`).
    NilArray,
    /// An array.
    Array(Vec<Reply>),
    /// A map (RESP3 `%`; RESP2 a flat array of keys and values).
    Map(Vec<(Reply, Reply)>),
    /// A set (RESP3 `~`; RESP2 an array).
    Set(Vec<Reply>),
    /// Ordered pairs (a member and its score): RESP2 one flat array, RESP3 an array of
    /// two-element arrays, as Redis answers ZRANGE WITHSCORES (a map would lose the order).
    Pairs(Vec<(Reply, Reply)>),
    /// A double (RESP3 `,`; RESP2 a bulk string).
    Double(f64),
    /// A boolean (RESP3 `#t` / `#f`; RESP2 the integers 1 and 0).
    Bool(bool),
    /// A verbatim text (RESP3 `=` with format `txt`; RESP2 a bulk string).
    Verbatim(String),
    /// Nothing at all (SHUTDOWN closes the connection without a reply).
    NoReply,
    /// A reply whose shape differs by protocol, as some of Redis's and RedisBloom's do
    /// (`BF.INFO key CAPACITY`: a one-element array in RESP2, a map in RESP3).
    ByProto {
        /// The RESP2 form.
        resp2: Box<Reply>,
        /// The RESP3 form.
        resp3: Box<Reply>,
    },
    /// An out-of-band message (pub/sub messages and (un)subscribe confirmations): RESP3 `>`,
    /// RESP2 an array.
    Push(Vec<Reply>),
    /// Several replies in a row, each a frame of its own (SUBSCRIBE confirms every channel).
    Seq(Vec<Reply>),
    /// A long array produced piecewise from a snapshot (LRANGE, ZRANGE by rank over many
    /// elements): the connection writes it a few MiB at a time (see [`Streamed`]).
    Stream(Stream),
}

/// The source of a [`Reply::Stream`]: appends its reply, header first, piece by piece.
pub trait Streamed: Send {
    /// Appends more of the reply (the first call starts with the array header) until `out`
    /// holds at least `budget` bytes or the reply is complete; true when it is complete.
    ///
    /// # Errors
    /// A read error after part of the reply went out: the connection must be closed (the
    /// client cannot be told in the middle of an array).
    fn fill(&mut self, proto: u8, out: &mut Vec<u8>, budget: usize) -> Result<bool, String>;
}

/// A [`Streamed`] reply in progress (shared, so [`Reply`] stays `Clone`).
#[derive(Clone)]
pub struct Stream(Arc<Mutex<Box<dyn Streamed>>>);

impl Stream {
    /// Wraps a source.
    pub fn new(s: impl Streamed + 'static) -> Stream {
        Stream(Arc::new(Mutex::new(Box::new(s))))
    }

    /// See [`Streamed::fill`].
    ///
    /// # Errors
    /// As [`Streamed::fill`].
    pub fn fill(&self, proto: u8, out: &mut Vec<u8>, budget: usize) -> Result<bool, String> {
        self.0.lock().fill(proto, out, budget)
    }
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Stream")
    }
}

impl PartialEq for Stream {
    fn eq(&self, other: &Stream) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Appends the header of an array of `n` elements.
pub fn array_header(out: &mut Vec<u8>, n: usize) {
    header(out, b'*', n as i64);
}

/// Appends a bulk string.
pub fn push_bulk(out: &mut Vec<u8>, b: &[u8]) {
    bulk(out, b);
}

impl Reply {
    /// An error reply with `ERR ` in front of `text`.
    pub fn err(text: impl std::fmt::Display) -> Reply {
        Reply::Error(format!("ERR {text}"))
    }

    /// A bulk string reply from anything byte-like.
    pub fn bulk(b: impl Into<Bytes>) -> Reply {
        Reply::Bulk(b.into())
    }

    /// A bulk string reply or nil.
    pub fn opt_bulk(b: Option<Vec<u8>>) -> Reply {
        b.map_or(Reply::Nil, |v| Reply::Bulk(Bytes::from(v)))
    }

    /// True for error replies.
    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Error(_))
    }

    /// Appends the encoding of this reply in protocol version `proto` (2 or 3) to `out`.
    pub fn encode(&self, proto: u8, out: &mut Vec<u8>) {
        let resp3 = proto >= 3;
        match self {
            Reply::Ok => out.extend_from_slice(b"+OK\r\n"),
            Reply::Status(s) => {
                out.push(b'+');
                push_clean(out, s.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            Reply::Error(s) => {
                out.push(b'-');
                push_clean(out, s.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            Reply::Int(i) => header(out, b':', *i),
            Reply::Bulk(b) => bulk(out, b),
            Reply::Nil if resp3 => out.extend_from_slice(b"_\r\n"),
            Reply::Nil => out.extend_from_slice(b"$-1\r\n"),
            Reply::NilArray if resp3 => out.extend_from_slice(b"_\r\n"),
            Reply::NilArray => out.extend_from_slice(b"*-1\r\n"),
            Reply::Array(items) => {
                header(out, b'*', items.len() as i64);
                for r in items {
                    r.encode(proto, out);
                }
            }
            Reply::Set(items) => {
                header(out, if resp3 { b'~' } else { b'*' }, items.len() as i64);
                for r in items {
                    r.encode(proto, out);
                }
            }
            Reply::Pairs(pairs) => {
                if resp3 {
                    header(out, b'*', pairs.len() as i64);
                } else {
                    header(out, b'*', 2 * pairs.len() as i64);
                }
                for (k, v) in pairs {
                    if resp3 {
                        out.extend_from_slice(b"*2\r\n");
                    }
                    k.encode(proto, out);
                    v.encode(proto, out);
                }
            }
            Reply::Map(pairs) => {
                if resp3 {
                    header(out, b'%', pairs.len() as i64);
                } else {
                    header(out, b'*', 2 * pairs.len() as i64);
                }
                for (k, v) in pairs {
                    k.encode(proto, out);
                    v.encode(proto, out);
                }
            }
            Reply::Double(d) => {
                let text = format_double(*d);
                if resp3 {
                    out.push(b',');
                    out.extend_from_slice(text.as_bytes());
                    out.extend_from_slice(b"\r\n");
                } else {
                    bulk(out, text.as_bytes());
                }
            }
            Reply::Bool(b) if resp3 => {
                out.extend_from_slice(if *b { b"#t\r\n" } else { b"#f\r\n" });
            }
            Reply::Bool(b) => header(out, b':', i64::from(*b)),
            Reply::NoReply => {}
            Reply::ByProto { resp2, resp3: r3 } => {
                if resp3 {
                    r3.encode(proto, out);
                } else {
                    resp2.encode(proto, out);
                }
            }
            Reply::Push(items) => {
                header(out, if resp3 { b'>' } else { b'*' }, items.len() as i64);
                for r in items {
                    r.encode(proto, out);
                }
            }
            Reply::Seq(items) => {
                for r in items {
                    r.encode(proto, out);
                }
            }
            Reply::Stream(s) => {
                // Outside a connection's reply loop: all of it at once. A read error cuts
                // the reply short, which breaks the protocol: the connection path (which
                // closes the connection then) is the one that meets streams.
                while let Ok(false) = s.fill(proto, out, usize::MAX) {}
            }
            Reply::Verbatim(s) => {
                if resp3 {
                    header(out, b'=', s.len() as i64 + 4);
                    out.extend_from_slice(b"txt:");
                    out.extend_from_slice(s.as_bytes());
                    out.extend_from_slice(b"\r\n");
                } else {
                    bulk(out, s.as_bytes());
                }
            }
        }
    }
}

/// A status or error line may not hold CR or LF: Redis replaces them with spaces.
fn push_clean(out: &mut Vec<u8>, s: &[u8]) {
    out.extend(
        s.iter()
            .map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c }),
    );
}

fn header(out: &mut Vec<u8>, kind: u8, n: i64) {
    out.push(kind);
    let mut buf = itoa_buf(n);
    out.append(&mut buf);
    out.extend_from_slice(b"\r\n");
}

fn bulk(out: &mut Vec<u8>, b: &[u8]) {
    header(out, b'$', b.len() as i64);
    out.extend_from_slice(b);
    out.extend_from_slice(b"\r\n");
}

fn itoa_buf(n: i64) -> Vec<u8> {
    n.to_string().into_bytes()
}

/// Formats a double as Redis 7.2 does for replies (`d2string`): `nan`, `inf`, `-inf`, `0`
/// and `-0`; an integral value within ±2^62 as an integer; anything else with the shortest
/// digits that read back as the same double, laid out as Redis's `fpconv_dtoa` lays them
/// out: plain digits (padded with zeros) while the decimal exponent is below the digit count
/// plus 7, a decimal point while the value is at least 1e-6 (or has fewer than 4 leading
/// zeros), else exponent notation with a sign and no padding (`1e+20`, `1.5e-7`).
///
/// (`fpconv_dtoa` uses Grisu2, which in rare cases gives one more digit than the shortest;
/// this prints the shortest, which reads back the same.)
pub fn format_double(d: f64) -> String {
    if d.is_nan() {
        return "nan".into();
    }
    if d.is_infinite() {
        return if d > 0.0 { "inf" } else { "-inf" }.into();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0" } else { "0" }.into();
    }
    const LL_HALF: f64 = 4_611_686_018_427_387_904.0; // (double)(LLONG_MAX / 2) = 2^62
    if (-LL_HALF..=LL_HALF).contains(&d) && d.fract() == 0.0 {
        return (d as i64).to_string();
    }
    // The shortest round-trip digits and the exponent of the first one, from Rust's
    // exponent formatting ("d.ddde[-]x").
    let sci = format!("{:e}", d.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exp10: i32 = exp.parse().unwrap_or(0);
    let nd = digits.len() as i32;
    // K: the decimal exponent of the last digit (value = digits * 10^K).
    let k = exp10 - (nd - 1);
    let e = exp10.abs();
    let mut out = String::with_capacity(24);
    if d < 0.0 {
        out.push('-');
    }
    if k >= 0 && e < nd + 7 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', k as usize));
    } else if k < 0 && (k > -7 || e < 4) {
        let point = nd + k;
        if point <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-point) as usize));
            out.push_str(&digits);
        } else {
            out.push_str(&digits[..point as usize]);
            out.push('.');
            out.push_str(&digits[point as usize..]);
        }
    } else {
        out.push_str(&digits[..1]);
        if nd > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp10 < 0 { '-' } else { '+' });
        out.push_str(&e.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(input: &[u8]) -> Result<Vec<Vec<Vec<u8>>>, ProtocolError> {
        let mut p = Parser::new(Limits::default());
        let mut buf = BytesMut::from(input);
        let mut out = Vec::new();
        while let Some(a) = p.next(&mut buf)? {
            out.push(a.iter().map(|b| b.to_vec()).collect());
        }
        Ok(out)
    }

    #[test]
    fn multibulk_and_inline() {
        let got = parse_all(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING\r\nset a \"b c\"\r\n").unwrap();
        assert_eq!(
            got,
            vec![
                vec![b"GET".to_vec(), b"k".to_vec()],
                vec![b"PING".to_vec()],
                vec![b"set".to_vec(), b"a".to_vec(), b"b c".to_vec()],
            ]
        );
    }

    #[test]
    fn reused_argument_vectors_hold_only_the_new_request() {
        let mut p = Parser::new(Limits::default());
        let mut buf =
            BytesMut::from(&b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET"[..]);
        let mut spare = Vec::new();
        let first = p.next_reusing(&mut buf, &mut spare).unwrap().unwrap();
        assert_eq!(first, [&b"SET"[..], b"k", b"v"]);
        spare.push(first);
        // Half a request: the spare vector is taken, and the rest completes it.
        assert_eq!(p.next_reusing(&mut buf, &mut spare).unwrap(), None);
        assert!(spare.is_empty());
        buf.extend_from_slice(b"\r\n$1\r\nk\r\n");
        let second = p.next_reusing(&mut buf, &mut spare).unwrap().unwrap();
        assert_eq!(second, [&b"GET"[..], b"k"]);
        assert!(buf.is_empty());
    }

    #[test]
    fn byte_at_a_time_gives_the_same_requests() {
        let input = b"*3\r\n$3\r\nSET\r\n$5\r\nhello\r\n$0\r\n\r\n*0\r\n*1\r\n$4\r\nPING\r\n";
        let mut p = Parser::new(Limits::default());
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for &b in input.iter() {
            buf.extend_from_slice(&[b]);
            while let Some(a) = p.next(&mut buf).unwrap() {
                out.push(a);
            }
        }
        assert_eq!(out.len(), 2);
        assert_eq!(out[0][2].len(), 0);
        assert_eq!(&out[1][0][..], b"PING");
    }

    #[test]
    fn errors_have_redis_texts() {
        let e = |i: &[u8]| parse_all(i).unwrap_err().0;
        assert_eq!(e(b"*x\r\n"), "invalid multibulk length");
        assert_eq!(e(b"*1\r\n$-5\r\n"), "invalid bulk length");
        assert_eq!(e(b"*1\r\n$600000000\r\n"), "invalid bulk length");
        assert_eq!(e(b"*1\r\n+foo\r\n"), "expected '$', got '+'");
        assert_eq!(e(b"set a \"b\r\n"), "unbalanced quotes in request");
        let long = vec![b'a'; 70 * 1024];
        assert_eq!(e(&long), "too big inline request");
        let mut long = b"*".to_vec();
        long.extend(vec![b'1'; 70 * 1024]);
        assert_eq!(e(&long), "too big mbulk count string");
    }

    #[test]
    fn doubles_format_like_redis_7_2() {
        for (v, want) in [
            (0.1, "0.1"),
            (1.5, "1.5"),
            (-2.5, "-2.5"),
            (3.0, "3"),
            (-0.0, "-0"),
            (0.0, "0"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
            (1e20, "1e+20"),
            (1e21, "1e+21"),
            (1.5e-7, "1.5e-7"),
            (1e-7, "1e-7"),
            (1e-6, "0.000001"),
            (0.0001, "0.0001"),
            (1.2345678, "1.2345678"),
            (123456789.123, "123456789.123"),
            (1e18, "1000000000000000000"),
            (4611686018427387904.0, "4611686018427387904"),
            (9223372036854775808.0, "9223372036854776000"),
            (1e19, "1e+19"),
            (1.5e300, "1.5e+300"),
            (-1.5e-300, "-1.5e-300"),
            (1e100, "1e+100"),
            (1e-5, "0.00001"),
            (0.000012345, "1.2345e-5"),
            (0.000015, "0.000015"),
            (1.2345e-7, "1.2345e-7"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (0.30000000000000004, "0.30000000000000004"),
            (100.5, "100.5"),
        ] {
            assert_eq!(format_double(v), want, "{v:e}");
        }
    }

    #[test]
    fn pairs_are_flat_in_resp2_and_nested_in_resp3() {
        let r = Reply::Pairs(vec![(Reply::bulk("m"), Reply::Double(1.5))]);
        let mut o = Vec::new();
        r.encode(2, &mut o);
        assert_eq!(o, b"*2\r\n$1\r\nm\r\n$3\r\n1.5\r\n");
        o.clear();
        r.encode(3, &mut o);
        assert_eq!(o, b"*1\r\n*2\r\n$1\r\nm\r\n,1.5\r\n");
    }

    #[test]
    fn resp2_and_resp3_encodings() {
        let r = Reply::Map(vec![(Reply::bulk("proto"), Reply::Int(3))]);
        let mut o = Vec::new();
        r.encode(3, &mut o);
        assert_eq!(o, b"%1\r\n$5\r\nproto\r\n:3\r\n");
        o.clear();
        r.encode(2, &mut o);
        assert_eq!(o, b"*2\r\n$5\r\nproto\r\n:3\r\n");
        o.clear();
        Reply::Nil.encode(2, &mut o);
        Reply::Nil.encode(3, &mut o);
        Reply::Error("ERR a\r\nb".into()).encode(2, &mut o);
        assert_eq!(o, b"$-1\r\n_\r\n-ERR a  b\r\n");
    }

    #[test]
    fn pairs_pushes_and_sequences() {
        let pairs = Reply::Pairs(vec![(Reply::bulk("f"), Reply::Int(1))]);
        let push = Reply::Push(vec![Reply::bulk("message"), Reply::Int(2)]);
        let seq = Reply::Seq(vec![Reply::Int(1), Reply::Int(2)]);
        let enc = |r: &Reply, p: u8| {
            let mut o = Vec::new();
            r.encode(p, &mut o);
            String::from_utf8(o).unwrap()
        };
        assert_eq!(enc(&pairs, 2), "*2\r\n$1\r\nf\r\n:1\r\n");
        assert_eq!(enc(&pairs, 3), "*1\r\n*2\r\n$1\r\nf\r\n:1\r\n");
        assert_eq!(enc(&push, 2), "*2\r\n$7\r\nmessage\r\n:2\r\n");
        assert_eq!(enc(&push, 3), ">2\r\n$7\r\nmessage\r\n:2\r\n");
        assert_eq!(enc(&seq, 3), ":1\r\n:2\r\n");
    }
}
