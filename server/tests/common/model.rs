//! Shared parts of the model tests: replies in a comparable form, a deterministic RNG, a
//! pipeline of commands given as byte words, and the loop that runs random pipelines against
//! the server and a model, reply by reply.

use redis::Value;

/// A reply in a comparable form.
#[derive(Clone, Debug, PartialEq)]
pub enum R {
    Nil,
    Int(i64),
    Bulk(Vec<u8>),
    Status(String),
    Err(String),
    Arr(Vec<R>),
}

/// Redis's type error, as a model's reply.
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

/// The model's form of a server reply.
pub fn from_value(v: Value) -> R {
    match v {
        Value::Nil => R::Nil,
        Value::Int(i) => R::Int(i),
        Value::BulkString(b) => R::Bulk(b),
        Value::Okay => R::Status("OK".into()),
        Value::SimpleString(s) => R::Status(s),
        Value::Array(a) | Value::Set(a) => R::Arr(a.into_iter().map(from_value).collect()),
        Value::ServerError(e) => R::Err(match e.details() {
            Some(d) => format!("{} {d}", e.code()),
            None => e.code().to_string(),
        }),
        other => panic!("unexpected reply {other:?}"),
    }
}

/// A bulk reply from text.
pub fn rb(s: &str) -> R {
    R::Bulk(s.as_bytes().to_vec())
}

/// xorshift64*: deterministic, no dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
}

/// Sends `cmds` as one pipeline and returns their replies (errors included, in place).
pub fn pipeline(con: &mut redis::Connection, cmds: &[Vec<Vec<u8>>]) -> Vec<R> {
    let mut p = redis::pipe();
    p.ignore_errors();
    for c in cmds {
        let mut cmd = redis::cmd(std::str::from_utf8(&c[0]).unwrap());
        for arg in &c[1..] {
            cmd.arg(arg.as_slice());
        }
        p.add_command(cmd);
    }
    let got: Vec<Value> = p.query(con).unwrap();
    got.into_iter().map(from_value).collect()
}

/// A command's words shortened for an assertion message.
pub fn show(c: &[Vec<u8>]) -> Vec<String> {
    c.iter()
        .map(|x| String::from_utf8_lossy(&x[..x.len().min(20)]).into_owned())
        .collect()
}

/// Runs `batches` pipelines of 1 to 20 commands from `generate`, comparing each reply with
/// the one `apply` (the model) gives.
pub fn run_model_batches(
    con: &mut redis::Connection,
    rng: &mut Rng,
    batches: usize,
    mut generate: impl FnMut(&mut Rng) -> Vec<Vec<u8>>,
    mut apply: impl FnMut(&[Vec<u8>]) -> R,
) {
    for b in 0..batches {
        let cmds: Vec<Vec<Vec<u8>>> = (0..1 + rng.below(20)).map(|_| generate(rng)).collect();
        for (c, got) in cmds.iter().zip(pipeline(con, &cmds)) {
            let want = apply(c);
            assert_eq!(got, want, "batch {b}: {:?}", show(c));
        }
    }
}
