//! Shared pieces of the model tests: replies in a comparable form, a deterministic random
//! generator, and running a pipeline of commands given as byte words.

use redis::Value;

/// Redis's type error.
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

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

/// The comparable form of a reply of the `redis` crate (RESP2: maps arrive as arrays).
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
