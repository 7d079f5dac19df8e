//! Model test for hashes: random pipelines of hash and keyspace commands against the server
//! and a plain in-memory model, reply by reply, with a restart in the middle. Fields are
//! short, or longer than the engine's key limit (stored hashed, several sharing their first
//! 64 KiB), so both forms of `store::members` meet; values are short, numeric or 5 KB.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common;

use std::collections::BTreeMap;

use common::model::{R, Rng, WRONGTYPE, pipeline, show};
use common::{TestServer, int, ok};

type Fields = BTreeMap<Vec<u8>, Vec<u8>>;

#[derive(Clone, Debug)]
enum Val {
    Str,
    Hash(Fields),
}

#[derive(Default)]
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

fn sorted(mut v: Vec<R>) -> R {
    v.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    R::Arr(v)
}

impl Model {
    fn hash(&self, k: &[u8]) -> Result<Option<&Fields>, R> {
        match self.keys.get(k) {
            None => Ok(None),
            Some(Val::Hash(h)) => Ok(Some(h)),
            Some(Val::Str) => Err(R::Err(WRONGTYPE.into())),
        }
    }

    fn hash_mut(&mut self, k: &[u8]) -> Result<&mut Fields, R> {
        self.hash(k)?;
        let v = self
            .keys
            .entry(k.to_vec())
            .or_insert_with(|| Val::Hash(BTreeMap::new()));
        match v {
            Val::Hash(h) => Ok(h),
            Val::Str => unreachable!(),
        }
    }

    fn drop_if_empty(&mut self, k: &[u8]) {
        if matches!(self.keys.get(k), Some(Val::Hash(h)) if h.is_empty()) {
            self.keys.remove(k);
        }
    }

    fn apply(&mut self, cmd: &[Vec<u8>]) -> R {
        let name = String::from_utf8_lossy(&cmd[0]).to_string();
        let a = &cmd[1..];
        let empty = BTreeMap::new();
        let r = (|| -> Result<R, R> {
            Ok(match name.as_str() {
                "HSET" => {
                    let h = self.hash_mut(&a[0])?;
                    let mut n = 0;
                    for p in a[1..].chunks(2) {
                        if h.insert(p[0].clone(), p[1].clone()).is_none() {
                            n += 1;
                        }
                    }
                    R::Int(n)
                }
                "HSETNX" => {
                    let h = self.hash_mut(&a[0])?;
                    if h.contains_key(&a[1]) {
                        R::Int(0)
                    } else {
                        h.insert(a[1].clone(), a[2].clone());
                        R::Int(1)
                    }
                }
                "HDEL" => {
                    let n = match self.hash(&a[0])? {
                        None => 0,
                        Some(_) => {
                            let h = self.hash_mut(&a[0])?;
                            a[1..].iter().filter(|f| h.remove(*f).is_some()).count()
                        }
                    };
                    self.drop_if_empty(&a[0]);
                    R::Int(n as i64)
                }
                "HINCRBY" => {
                    let by = parse_int(&a[2]).unwrap();
                    let cur = match self.hash(&a[0])?.and_then(|h| h.get(&a[1])) {
                        None => 0,
                        Some(v) => parse_int(v)
                            .ok_or_else(|| R::Err("ERR hash value is not an integer".into()))?,
                    };
                    let new = cur.checked_add(by).ok_or_else(|| {
                        R::Err("ERR increment or decrement would overflow".into())
                    })?;
                    self.hash_mut(&a[0])?
                        .insert(a[1].clone(), new.to_string().into_bytes());
                    R::Int(new)
                }
                "HGET" => self
                    .hash(&a[0])?
                    .and_then(|h| h.get(&a[1]))
                    .map_or(R::Nil, |v| R::Bulk(v.clone())),
                "HMGET" => {
                    let h = self.hash(&a[0])?.unwrap_or(&empty);
                    R::Arr(
                        a[1..]
                            .iter()
                            .map(|f| h.get(f).map_or(R::Nil, |v| R::Bulk(v.clone())))
                            .collect(),
                    )
                }
                "HEXISTS" => R::Int(i64::from(
                    self.hash(&a[0])?.is_some_and(|h| h.contains_key(&a[1])),
                )),
                "HSTRLEN" => R::Int(
                    self.hash(&a[0])?
                        .and_then(|h| h.get(&a[1]))
                        .map_or(0, |v| v.len() as i64),
                ),
                "HLEN" => R::Int(self.hash(&a[0])?.map_or(0, |h| h.len() as i64)),
                "HKEYS" => sorted(
                    self.hash(&a[0])?
                        .unwrap_or(&empty)
                        .keys()
                        .map(|k| R::Bulk(k.clone()))
                        .collect(),
                ),
                "HVALS" => sorted(
                    self.hash(&a[0])?
                        .unwrap_or(&empty)
                        .values()
                        .map(|v| R::Bulk(v.clone()))
                        .collect(),
                ),
                "HGETALL" => sorted(
                    self.hash(&a[0])?
                        .unwrap_or(&empty)
                        .iter()
                        .map(|(k, v)| R::Arr(vec![R::Bulk(k.clone()), R::Bulk(v.clone())]))
                        .collect(),
                ),
                "SET" => {
                    self.keys.insert(a[0].clone(), Val::Str);
                    R::Status("OK".into())
                }
                "DEL" => R::Int(a.iter().filter(|k| self.keys.remove(*k).is_some()).count() as i64),
                "EXISTS" => R::Int(a.iter().filter(|k| self.keys.contains_key(*k)).count() as i64),
                "TYPE" => R::Status(
                    match self.keys.get(&a[0]) {
                        None => "none",
                        Some(Val::Str) => "string",
                        Some(Val::Hash(_)) => "hash",
                    }
                    .into(),
                ),
                "DBSIZE" => R::Int(self.keys.len() as i64),
                other => panic!("model lacks {other}"),
            })
        })();
        r.unwrap_or_else(|e| e)
    }
}

/// The server's reply in the model's form: HKEYS, HVALS and HGETALL come in engine key
/// order (a hashed field sorts by its hash), so both sides are sorted.
fn normalize(cmd: &[Vec<u8>], r: R) -> R {
    match (cmd[0].as_slice(), r) {
        (b"HKEYS" | b"HVALS", R::Arr(v)) => sorted(v),
        (b"HGETALL", R::Arr(v)) => sorted(
            v.chunks(2)
                .map(|p| R::Arr(vec![p[0].clone(), p[1].clone()]))
                .collect(),
        ),
        (_, r) => r,
    }
}

fn random_command(rng: &mut Rng) -> Vec<Vec<u8>> {
    let key = |rng: &mut Rng| format!("h{}", rng.below(5)).into_bytes();
    let field = |rng: &mut Rng| match rng.below(12) {
        // Longer than the engine's key limit, sharing their first 70,000 bytes.
        0 => {
            let mut f = vec![b'L'; 70_000];
            f.push(b'0' + rng.below(3) as u8);
            f
        }
        _ => format!("f{}", rng.below(6)).into_bytes(),
    };
    let value = |rng: &mut Rng| match rng.below(5) {
        0 | 1 => rng.below(100).to_string().into_bytes(),
        2 => vec![b'x'; 5000],
        _ => format!("v{}", rng.below(10)).into_bytes(),
    };
    let w = |s: &str| s.as_bytes().to_vec();
    match rng.below(20) {
        0..=2 => vec![w("HSET"), key(rng), field(rng), value(rng)],
        3 => vec![
            w("HSET"),
            key(rng),
            field(rng),
            value(rng),
            field(rng),
            value(rng),
        ],
        4 => vec![w("HSETNX"), key(rng), field(rng), value(rng)],
        5 | 6 => vec![w("HDEL"), key(rng), field(rng), field(rng)],
        7 => vec![
            w("HINCRBY"),
            key(rng),
            field(rng),
            (rng.below(21) as i64 - 10).to_string().into_bytes(),
        ],
        8 | 9 => vec![w("HGET"), key(rng), field(rng)],
        10 => vec![w("HMGET"), key(rng), field(rng), field(rng)],
        11 => vec![w("HEXISTS"), key(rng), field(rng)],
        12 => vec![w("HSTRLEN"), key(rng), field(rng)],
        13 => vec![w("HLEN"), key(rng)],
        14 => vec![w("HKEYS"), key(rng)],
        15 => vec![w("HVALS"), key(rng)],
        16 => vec![w("HGETALL"), key(rng)],
        17 => {
            if rng.below(4) == 0 {
                vec![w("SET"), key(rng), value(rng)]
            } else {
                vec![w("DEL"), key(rng)]
            }
        }
        18 => vec![w("TYPE"), key(rng)],
        _ => vec![w("DBSIZE")],
    }
}

fn run(con: &mut redis::Connection, model: &mut Model, rng: &mut Rng, batches: usize) {
    for b in 0..batches {
        let cmds: Vec<Vec<Vec<u8>>> = (0..1 + rng.below(16))
            .map(|_| random_command(rng))
            .collect();
        for (c, got) in cmds.iter().zip(pipeline(con, &cmds)) {
            let want = model.apply(c);
            assert_eq!(normalize(c, got), want, "batch {b}: {:?}", show(c));
        }
    }
}

#[test]
fn random_hash_pipelines_match_the_model_across_a_restart() {
    let mut s = TestServer::start();
    let mut model = Model::default();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    run(&mut s.client(), &mut model, &mut rng, 600);
    s.restart();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(model.keys.len() as i64));
    run(&mut c, &mut model, &mut rng, 600);
}
