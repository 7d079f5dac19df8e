//! Model test for the string range and bit commands: random pipelines of SETRANGE,
//! GETRANGE, APPEND, SETBIT, BITOP, BITPOS, BITFIELD(_RO) and LCS LEN over a few keys,
//! against a plain byte-vector model of Redis's semantics, reply by reply, with a restart in
//! the middle. Offsets cluster around the 4 KiB chunk boundary so edits cross it.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common;

use std::collections::BTreeMap;

use common::model::*;
use common::*;

#[derive(Clone, Debug)]
enum Val {
    Str(Vec<u8>),
    Set,
}

#[derive(Default)]
struct Model {
    keys: BTreeMap<Vec<u8>, Val>,
}

fn num(b: &[u8]) -> i64 {
    std::str::from_utf8(b).unwrap().parse().unwrap()
}

fn bit(v: &[u8], i: usize) -> bool {
    v.get(i / 8).is_some_and(|b| b & (0x80 >> (i % 8)) != 0)
}

fn set_bit(v: &mut [u8], i: usize, on: bool) {
    if on {
        v[i / 8] |= 0x80 >> (i % 8);
    } else {
        v[i / 8] &= !(0x80 >> (i % 8));
    }
}

fn lcs_len(a: &[u8], b: &[u8]) -> i64 {
    let mut prev = vec![0i64; b.len() + 1];
    for x in a {
        let mut cur = vec![0i64; b.len() + 1];
        for (j, y) in b.iter().enumerate() {
            cur[j + 1] = if x == y {
                prev[j] + 1
            } else {
                prev[j + 1].max(cur[j])
            };
        }
        prev = cur;
    }
    prev[b.len()]
}

impl Model {
    fn string(&self, k: &[u8]) -> Result<Option<Vec<u8>>, R> {
        match self.keys.get(k) {
            None => Ok(None),
            Some(Val::Str(v)) => Ok(Some(v.clone())),
            Some(Val::Set) => Err(R::Err(WRONGTYPE.into())),
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
                "SADD" => {
                    if let Some(Val::Str(_)) = self.keys.get(&a[0]) {
                        return Err(R::Err(WRONGTYPE.into()));
                    }
                    let new = !self.keys.contains_key(&a[0]);
                    self.keys.insert(a[0].clone(), Val::Set);
                    R::Int(i64::from(new))
                }
                "DEL" => R::Int(i64::from(self.keys.remove(&a[0]).is_some())),
                "GET" => self.string(&a[0])?.map_or(R::Nil, R::Bulk),
                "STRLEN" => R::Int(self.string(&a[0])?.map_or(0, |v| v.len() as i64)),
                "APPEND" => {
                    let mut v = self.string(&a[0])?.unwrap_or_default();
                    v.extend_from_slice(&a[1]);
                    let n = v.len() as i64;
                    self.keys.insert(a[0].clone(), Val::Str(v));
                    R::Int(n)
                }
                "SETBIT" => {
                    let off = num(&a[1]) as usize;
                    let mut v = self.string(&a[0])?.unwrap_or_default();
                    if v.len() <= off / 8 {
                        v.resize(off / 8 + 1, 0);
                    }
                    let was = bit(&v, off);
                    set_bit(&mut v, off, a[2] == b"1");
                    self.keys.insert(a[0].clone(), Val::Str(v));
                    R::Int(i64::from(was))
                }
                "SETRANGE" => {
                    let off = num(&a[1]) as usize;
                    let cur = self.string(&a[0])?;
                    if a[2].is_empty() {
                        return Ok(R::Int(cur.map_or(0, |v| v.len() as i64)));
                    }
                    let mut v = cur.unwrap_or_default();
                    if v.len() < off + a[2].len() {
                        v.resize(off + a[2].len(), 0);
                    }
                    v[off..off + a[2].len()].copy_from_slice(&a[2]);
                    let n = v.len() as i64;
                    self.keys.insert(a[0].clone(), Val::Str(v));
                    R::Int(n)
                }
                "GETRANGE" => {
                    let v = self.string(&a[0])?.unwrap_or_default();
                    let (s, e, n) = (num(&a[1]), num(&a[2]), v.len() as i64);
                    if s < 0 && e < 0 && s > e {
                        return Ok(R::Bulk(vec![]));
                    }
                    let s = if s < 0 { (n + s).max(0) } else { s };
                    let e = if e < 0 { (n + e).max(0) } else { e }.min(n - 1);
                    R::Bulk(if s > e || n == 0 {
                        vec![]
                    } else {
                        v[s as usize..=e as usize].to_vec()
                    })
                }
                "BITOP" => {
                    let mut srcs = Vec::new();
                    for k in &a[2..] {
                        srcs.push(self.string(k)?.unwrap_or_default());
                    }
                    let n = srcs.iter().map(Vec::len).max().unwrap();
                    let byte = |s: &Vec<u8>, i: usize| s.get(i).copied().unwrap_or(0);
                    let out: Vec<u8> = (0..n)
                        .map(|i| match a[0].as_slice() {
                            b"NOT" => !byte(&srcs[0], i),
                            b"AND" => srcs.iter().fold(0xff, |x, s| x & byte(s, i)),
                            b"OR" => srcs.iter().fold(0, |x, s| x | byte(s, i)),
                            _ => srcs.iter().fold(0, |x, s| x ^ byte(s, i)),
                        })
                        .collect();
                    if n == 0 {
                        self.keys.remove(&a[1]);
                    } else {
                        self.keys.insert(a[1].clone(), Val::Str(out));
                    }
                    R::Int(n as i64)
                }
                "BITPOS" => {
                    let want = a[1] == b"1";
                    let Some(v) = self.string(&a[0])? else {
                        return Ok(R::Int(if want { -1 } else { 0 }));
                    };
                    let in_bits = a.get(4).is_some_and(|u| u == b"BIT");
                    let total = v.len() as i64 * if in_bits { 8 } else { 1 };
                    let norm = |x: i64| if x < 0 { (x + total).max(0) } else { x };
                    let s = a.get(2).map_or(0, |x| norm(num(x)));
                    let e = a.get(3).map_or(total - 1, |x| norm(num(x))).min(total - 1);
                    if s > e {
                        return Ok(R::Int(-1));
                    }
                    let (lo, hi) = if in_bits { (s, e) } else { (s * 8, e * 8 + 7) };
                    let found = (lo..=hi).find(|&i| bit(&v, i as usize) == want);
                    R::Int(match found {
                        Some(i) => i,
                        None if !want && a.get(3).is_none() => v.len() as i64 * 8,
                        None => -1,
                    })
                }
                "BITFIELD" | "BITFIELD_RO" => self.bitfield(a)?,
                "LCS" => {
                    let wrong =
                        |_| R::Err("ERR The specified keys must contain string values".into());
                    let x = self.string(&a[0]).map_err(wrong)?.unwrap_or_default();
                    let y = self.string(&a[1]).map_err(wrong)?.unwrap_or_default();
                    if (x.len() + 1) * (y.len() + 1) * 4 > 512 << 20 {
                        return Err(R::Err("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len".into()));
                    }
                    R::Int(lcs_len(&x, &y))
                }
                other => panic!("model lacks {other}"),
            })
        })();
        r.unwrap_or_else(|e| e)
    }

    /// Fields of 8, 12 and 16 bits with small values: plain range arithmetic.
    fn bitfield(&mut self, a: &[Vec<u8>]) -> Result<R, R> {
        let cur = self.string(&a[0])?;
        let writes = a.iter().any(|w| w == b"SET" || w == b"INCRBY");
        let mut v = cur.clone().unwrap_or_default();
        if writes {
            let mut hi = 0;
            let mut i = 1;
            while i < a.len() {
                match a[i].as_slice() {
                    b"OVERFLOW" => i += 2,
                    b"GET" => i += 3,
                    _ => {
                        let w = num(&a[i + 1][1..]) as usize;
                        hi = hi.max(num(&a[i + 2]) as usize + w - 1);
                        i += 4;
                    }
                }
            }
            if v.len() <= hi / 8 {
                v.resize(hi / 8 + 1, 0);
            }
        }
        let mut out = Vec::new();
        let mut overflow = b"WRAP".to_vec();
        let mut i = 1;
        while i < a.len() {
            if a[i] == b"OVERFLOW" {
                overflow = a[i + 1].clone();
                i += 2;
                continue;
            }
            let signed = a[i + 1][0] == b'i';
            let w = num(&a[i + 1][1..]) as usize;
            let off = num(&a[i + 2]) as usize;
            let raw = (off..off + w).fold(0i64, |x, b| (x << 1) | i64::from(bit(&v, b)));
            let old = if signed && raw >= 1 << (w - 1) {
                raw - (1 << w)
            } else {
                raw
            };
            if a[i] == b"GET" {
                out.push(R::Int(old));
                i += 3;
                continue;
            }
            let arg = num(&a[i + 3]);
            let target = if a[i] == b"SET" { arg } else { old + arg };
            let (min, max) = if signed {
                (-(1 << (w - 1)), (1 << (w - 1)) - 1)
            } else {
                (0, (1 << w) - 1)
            };
            let new = if (min..=max).contains(&target) {
                Some(target)
            } else {
                match overflow.as_slice() {
                    b"FAIL" => None,
                    // Redis reads an unsigned SET's value as the unsigned bits of a
                    // 64-bit integer: a negative one saturates high.
                    b"SAT" if target > max || (!signed && a[i] == b"SET") => Some(max),
                    b"SAT" => Some(min),
                    _ => {
                        let low = target.rem_euclid(1 << w);
                        Some(if signed && low > max {
                            low - (1 << w)
                        } else {
                            low
                        })
                    }
                }
            };
            match new {
                None => out.push(R::Nil),
                Some(n) => {
                    for k in 0..w {
                        set_bit(&mut v, off + k, (n >> (w - 1 - k)) & 1 == 1);
                    }
                    out.push(R::Int(if a[i] == b"SET" { old } else { n }));
                }
            }
            i += 4;
        }
        if writes {
            self.keys.insert(a[0].clone(), Val::Str(v));
        }
        Ok(R::Arr(out))
    }
}

fn random_command(rng: &mut Rng) -> Vec<Vec<u8>> {
    let key = |rng: &mut Rng| format!("k{}", rng.below(4)).into_bytes();
    let w = |s: &str| s.as_bytes().to_vec();
    let n = |x: i64| x.to_string().into_bytes();
    let byte_off = |rng: &mut Rng| match rng.below(3) {
        0 => rng.range(0, 20),
        1 => rng.range(4085, 4100),
        _ => rng.range(0, 9000),
    };
    let value = |rng: &mut Rng| match rng.below(3) {
        0 => vec![],
        1 => (0..rng.range(1, 8)).map(|_| rng.below(256) as u8).collect(),
        _ => vec![b"ab\0\xff"[rng.below(4) as usize]; rng.range(1, 5000) as usize],
    };
    let index = |rng: &mut Rng| match rng.below(3) {
        0 => rng.range(-30, 30),
        1 => rng.range(4090, 4100),
        _ => rng.range(-9000, 9000),
    };
    match rng.below(20) {
        0 => vec![w("SET"), key(rng), value(rng)],
        1 => vec![w("GET"), key(rng)],
        2 | 3 => vec![w("SETRANGE"), key(rng), n(byte_off(rng)), value(rng)],
        4 | 5 => vec![w("GETRANGE"), key(rng), n(index(rng)), n(index(rng))],
        6 => vec![w("APPEND"), key(rng), value(rng)],
        7 => vec![
            w("SETBIT"),
            key(rng),
            n(byte_off(rng) * 8 + rng.range(0, 7)),
            n(rng.range(0, 1)),
        ],
        8 | 9 => {
            let op = ["AND", "OR", "XOR", "NOT"][rng.below(4) as usize];
            let mut c = vec![w("BITOP"), w(op), key(rng), key(rng)];
            if op != "NOT" {
                c.extend((0..rng.below(3)).map(|_| key(rng)));
            }
            c
        }
        10 | 11 => {
            let mut c = vec![w("BITPOS"), key(rng), n(rng.range(0, 1))];
            let args = rng.below(4);
            if args >= 1 {
                c.push(n(index(rng)));
            }
            if args >= 2 {
                c.push(n(index(rng)));
            }
            if args == 3 {
                c.push(w(if rng.below(2) == 0 { "BIT" } else { "BYTE" }));
            }
            c
        }
        12..=14 => {
            let mut c = vec![w("BITFIELD"), key(rng)];
            for _ in 0..rng.range(1, 4) {
                let ty = format!(
                    "{}{}",
                    ["i", "u"][rng.below(2) as usize],
                    [8, 12, 16][rng.below(3) as usize]
                );
                let off = n(byte_off(rng) * 8 + rng.range(0, 7));
                match rng.below(4) {
                    0 => c.extend([w("GET"), w(&ty), off]),
                    1 => c.extend([w("SET"), w(&ty), off, n(rng.range(-70_000, 70_000))]),
                    2 => c.extend([w("INCRBY"), w(&ty), off, n(rng.range(-300, 300))]),
                    _ => c.extend([
                        w("OVERFLOW"),
                        w(["WRAP", "SAT", "FAIL"][rng.below(3) as usize]),
                    ]),
                }
            }
            c
        }
        15 => vec![
            w("BITFIELD_RO"),
            key(rng),
            w("GET"),
            w("u16"),
            n(byte_off(rng) * 8),
        ],
        // LCS's table is quadratic: one side is a short string (or, rarely, any key).
        16 => match rng.below(8) {
            0 => vec![w("LCS"), key(rng), key(rng), w("LEN")],
            1 | 2 => vec![
                w("SET"),
                w("short"),
                (0..rng.below(9))
                    .map(|_| b"ab\0\xff"[rng.below(4) as usize])
                    .collect(),
            ],
            _ => vec![w("LCS"), key(rng), w("short"), w("LEN")],
        },
        17 => vec![w("STRLEN"), key(rng)],
        18 => vec![w("DEL"), key(rng)],
        _ => {
            if rng.below(4) == 0 {
                vec![w("SADD"), key(rng), w("m")]
            } else {
                vec![w("GETRANGE"), key(rng), w("0"), w("-1")]
            }
        }
    }
}

#[test]
fn random_pipelines_match_the_model_across_a_restart() {
    let mut s = TestServer::start();
    let mut model = Model::default();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for _ in 0..2 {
        let mut c = s.client();
        run_model_batches(&mut c, &mut rng, 300, random_command, |cmd| {
            model.apply(cmd)
        });
        s.restart();
    }
}
