//! Model test: random pipelines of string, bitmap, set and keyspace commands against the
//! server and against a plain in-memory model of Redis's semantics, reply by reply, with a
//! restart in the middle. Exercises group commit, chunk boundaries (bitmaps past 32768 bits),
//! type changes (SET over a set), member cleanup and the DBSIZE counter.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use bloomkv_server::{Config, Server};
use common::model::*;
use common::*;

#[derive(Clone, Debug)]
enum Val {
    Str(Vec<u8>),
    Set(BTreeSet<Vec<u8>>),
}

struct Model {
    keys: BTreeMap<Vec<u8>, Val>,
}

fn parse_int(b: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(b).ok()?;
    if s.starts_with('+') || (s.len() > 1 && (s.starts_with('0') || s.starts_with("-0"))) {
        return None;
    }
    s.parse().ok()
}

impl Model {
    fn string(&self, k: &[u8]) -> Result<Option<&Vec<u8>>, R> {
        match self.keys.get(k) {
            None => Ok(None),
            Some(Val::Str(v)) => Ok(Some(v)),
            Some(Val::Set(_)) => Err(R::Err(WRONGTYPE.into())),
        }
    }

    fn apply(&mut self, cmd: &[Vec<u8>]) -> R {
        let name = String::from_utf8_lossy(&cmd[0]).to_string();
        let a = &cmd[1..];
        let r = (|| -> Result<R, R> {
            Ok(match name.as_str() {
                "SET" => {
                    self.keys.insert(a[0].clone(), Val::Str(a[1].clone()));
                    R::Status("OK".into())
                }
                "SETNX" => {
                    if self.keys.contains_key(&a[0]) {
                        R::Int(0)
                    } else {
                        self.keys.insert(a[0].clone(), Val::Str(a[1].clone()));
                        R::Int(1)
                    }
                }
                "GETSET" => {
                    let old = self.string(&a[0])?.cloned();
                    self.keys.insert(a[0].clone(), Val::Str(a[1].clone()));
                    old.map_or(R::Nil, R::Bulk)
                }
                "MSET" => {
                    for p in a.chunks(2) {
                        self.keys.insert(p[0].clone(), Val::Str(p[1].clone()));
                    }
                    R::Status("OK".into())
                }
                "GET" => self.string(&a[0])?.cloned().map_or(R::Nil, R::Bulk),
                "STRLEN" => R::Int(self.string(&a[0])?.map_or(0, |v| v.len() as i64)),
                "APPEND" => {
                    let mut v = self.string(&a[0])?.cloned().unwrap_or_default();
                    v.extend_from_slice(&a[1]);
                    let n = v.len() as i64;
                    self.keys.insert(a[0].clone(), Val::Str(v));
                    R::Int(n)
                }
                "INCR" => {
                    let v = self.string(&a[0])?.cloned();
                    let n = match v {
                        None => 0,
                        Some(v) => parse_int(&v).ok_or_else(|| {
                            R::Err("ERR value is not an integer or out of range".into())
                        })?,
                    };
                    self.keys
                        .insert(a[0].clone(), Val::Str((n + 1).to_string().into_bytes()));
                    R::Int(n + 1)
                }
                "SETBIT" => {
                    let off: usize = std::str::from_utf8(&a[1]).unwrap().parse().unwrap();
                    let mut v = self.string(&a[0])?.cloned().unwrap_or_default();
                    if v.len() <= off / 8 {
                        v.resize(off / 8 + 1, 0);
                    }
                    let mask = 0x80u8 >> (off % 8);
                    let was = v[off / 8] & mask != 0;
                    if a[2] == b"1" {
                        v[off / 8] |= mask;
                    } else {
                        v[off / 8] &= !mask;
                    }
                    self.keys.insert(a[0].clone(), Val::Str(v));
                    R::Int(i64::from(was))
                }
                "GETBIT" => {
                    let off: usize = std::str::from_utf8(&a[1]).unwrap().parse().unwrap();
                    let v = self.string(&a[0])?;
                    let b = v.and_then(|v| v.get(off / 8).copied()).unwrap_or(0);
                    R::Int(i64::from(b & (0x80 >> (off % 8)) != 0))
                }
                "BITCOUNT" => R::Int(
                    self.string(&a[0])?
                        .map_or(0, |v| v.iter().map(|b| b.count_ones() as i64).sum()),
                ),
                "SADD" => {
                    let set = match self.keys.get_mut(&a[0]) {
                        Some(Val::Set(s)) => s,
                        Some(Val::Str(_)) => return Err(R::Err(WRONGTYPE.into())),
                        None => {
                            self.keys.insert(a[0].clone(), Val::Set(BTreeSet::new()));
                            match self.keys.get_mut(&a[0]) {
                                Some(Val::Set(s)) => s,
                                _ => unreachable!(),
                            }
                        }
                    };
                    R::Int(a[1..].iter().filter(|m| set.insert((*m).clone())).count() as i64)
                }
                "SREM" => {
                    let n = match self.keys.get_mut(&a[0]) {
                        Some(Val::Set(s)) => a[1..].iter().filter(|m| s.remove(*m)).count(),
                        Some(Val::Str(_)) => return Err(R::Err(WRONGTYPE.into())),
                        None => 0,
                    };
                    if matches!(self.keys.get(&a[0]), Some(Val::Set(s)) if s.is_empty()) {
                        self.keys.remove(&a[0]);
                    }
                    R::Int(n as i64)
                }
                "SCARD" | "SISMEMBER" | "SMEMBERS" => {
                    let empty = BTreeSet::new();
                    let s = match self.keys.get(&a[0]) {
                        Some(Val::Set(s)) => s,
                        Some(Val::Str(_)) => return Err(R::Err(WRONGTYPE.into())),
                        None => &empty,
                    };
                    match name.as_str() {
                        "SCARD" => R::Int(s.len() as i64),
                        "SISMEMBER" => R::Int(i64::from(s.contains(&a[1]))),
                        _ => R::Arr(s.iter().map(|m| R::Bulk(m.clone())).collect()),
                    }
                }
                "DEL" => R::Int(a.iter().filter(|k| self.keys.remove(*k).is_some()).count() as i64),
                "EXISTS" => R::Int(a.iter().filter(|k| self.keys.contains_key(*k)).count() as i64),
                "TYPE" => R::Status(
                    match self.keys.get(&a[0]) {
                        None => "none",
                        Some(Val::Str(_)) => "string",
                        Some(Val::Set(_)) => "set",
                    }
                    .into(),
                ),
                "DBSIZE" => R::Int(self.keys.len() as i64),
                "FLUSHDB" => {
                    self.keys.clear();
                    R::Status("OK".into())
                }
                other => panic!("model lacks {other}"),
            })
        })();
        r.unwrap_or_else(|e| e)
    }
}

fn random_command(rng: &mut Rng) -> Vec<Vec<u8>> {
    let key = |rng: &mut Rng| format!("k{}", rng.below(6)).into_bytes();
    let member = |rng: &mut Rng| format!("m{}", rng.below(5)).into_bytes();
    let value = |rng: &mut Rng| match rng.below(4) {
        0 => rng.below(100).to_string().into_bytes(),
        1 => vec![b'x'; rng.below(5000) as usize],
        _ => format!("v{}", rng.below(10)).into_bytes(),
    };
    let w = |s: &str| s.as_bytes().to_vec();
    match rng.below(24) {
        0 | 1 => vec![w("SET"), key(rng), value(rng)],
        2 => vec![w("SETNX"), key(rng), value(rng)],
        3 => vec![w("GETSET"), key(rng), value(rng)],
        4 => vec![w("MSET"), key(rng), value(rng), key(rng), value(rng)],
        5 | 6 => vec![w("GET"), key(rng)],
        7 => vec![w("STRLEN"), key(rng)],
        8 => vec![w("APPEND"), key(rng), value(rng)],
        9 => vec![w("INCR"), key(rng)],
        10 | 11 => {
            let off = match rng.below(3) {
                0 => rng.below(64),
                1 => 32_760 + rng.below(16),
                _ => rng.below(70_000),
            };
            vec![
                w("SETBIT"),
                key(rng),
                off.to_string().into_bytes(),
                w(if rng.below(3) == 0 { "0" } else { "1" }),
            ]
        }
        12 => vec![
            w("GETBIT"),
            key(rng),
            rng.below(70_000).to_string().into_bytes(),
        ],
        13 => vec![w("BITCOUNT"), key(rng)],
        14 | 15 => vec![w("SADD"), key(rng), member(rng), member(rng)],
        16 => vec![w("SREM"), key(rng), member(rng)],
        17 => vec![w("SCARD"), key(rng)],
        18 => vec![w("SISMEMBER"), key(rng), member(rng)],
        19 => vec![w("SMEMBERS"), key(rng)],
        20 => vec![w("DEL"), key(rng), key(rng)],
        21 => vec![w("EXISTS"), key(rng), key(rng)],
        22 => vec![w("TYPE"), key(rng)],
        _ => {
            if rng.below(40) == 0 {
                vec![w("FLUSHDB")]
            } else {
                vec![w("DBSIZE")]
            }
        }
    }
}

fn run_batches(con: &mut redis::Connection, model: &mut Model, rng: &mut Rng, batches: usize) {
    run_model_batches(con, rng, batches, random_command, |c| model.apply(c));
}

#[test]
fn random_pipelines_match_the_model_across_a_restart() {
    let mut s = TestServer::start();
    let mut model = Model {
        keys: BTreeMap::new(),
    };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    {
        let mut c = s.client();
        run_batches(&mut c, &mut model, &mut rng, 1000);
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
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(model.keys.len() as i64));
    run_batches(&mut c, &mut model, &mut rng, 1000);
    server.shutdown().unwrap();
}
