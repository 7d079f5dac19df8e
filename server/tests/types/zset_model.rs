//! Model test for sorted sets: random pipelines of the sorted-set commands (ZADD with every
//! valid option mix, ZINCRBY, ZREM, ranges by rank, score and lex, ranks, counts, removals by
//! range, pops) against an in-memory model of Redis's semantics, reply by reply, with a
//! restart in the middle. Scores are halves in -5..5 plus the infinities, so ties (ordered
//! by member) are common and every score prints exactly. Lex commands go to keys whose
//! members all have score 0 (the only case Redis defines them for).

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
    Str,
    Zset(BTreeMap<Vec<u8>, f64>),
}

#[derive(Default)]
struct Model {
    keys: BTreeMap<Vec<u8>, Val>,
}

fn num(b: &[u8]) -> i64 {
    std::str::from_utf8(b).unwrap().parse().unwrap()
}

fn score(b: &[u8]) -> f64 {
    std::str::from_utf8(b).unwrap().parse().unwrap()
}

/// A score as Redis prints these (halves and infinities).
fn fmt(s: f64) -> R {
    R::Bulk(format!("{s}").into_bytes())
}

/// Members in Redis's order: score, then member bytes.
fn ordered(z: &BTreeMap<Vec<u8>, f64>) -> Vec<(Vec<u8>, f64)> {
    let mut v: Vec<(Vec<u8>, f64)> = z.iter().map(|(m, s)| (m.clone(), *s)).collect();
    v.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    v
}

fn members(v: &[(Vec<u8>, f64)], with_scores: bool) -> R {
    let mut out = Vec::new();
    for (m, s) in v {
        out.push(R::Bulk(m.clone()));
        if with_scores {
            out.push(fmt(*s));
        }
    }
    R::Arr(out)
}

/// A score range end: `(x` exclusive.
fn end(b: &[u8]) -> (f64, bool) {
    match b.strip_prefix(b"(") {
        Some(r) => (score(r), true),
        None => (score(b), false),
    }
}

fn in_range(s: f64, min: (f64, bool), max: (f64, bool)) -> bool {
    (if min.1 { s > min.0 } else { s >= min.0 }) && (if max.1 { s < max.0 } else { s <= max.0 })
}

/// A lex range end: `-`, `+`, `[x`, `(x`; true when `m` is on the right side of it.
fn lex_ok(m: &[u8], e: &[u8], is_min: bool) -> bool {
    match e {
        b"-" => is_min,
        b"+" => !is_min,
        _ => {
            let (ex, x) = (e[0] == b'(', &e[1..]);
            match (is_min, ex) {
                (true, true) => m > x,
                (true, false) => m >= x,
                (false, true) => m < x,
                (false, false) => m <= x,
            }
        }
    }
}

fn clamp(start: i64, stop: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    let mut s = if start < 0 { start + len } else { start };
    let mut e = if stop < 0 { stop + len } else { stop };
    if s < 0 {
        s = 0;
    }
    if s > e || s >= len {
        return None;
    }
    if e >= len {
        e = len - 1;
    }
    Some((s as usize, (e - s + 1) as usize))
}

impl Model {
    fn zset(&mut self, k: &[u8]) -> Result<Option<&mut BTreeMap<Vec<u8>, f64>>, R> {
        match self.keys.get_mut(k) {
            None => Ok(None),
            Some(Val::Zset(z)) => Ok(Some(z)),
            Some(Val::Str) => Err(R::Err(WRONGTYPE.into())),
        }
    }

    fn cleanup(&mut self, k: &[u8]) {
        if matches!(self.keys.get(k), Some(Val::Zset(z)) if z.is_empty()) {
            self.keys.remove(k);
        }
    }

    fn zadd(&mut self, a: &[Vec<u8>]) -> Result<R, R> {
        let mut i = 1;
        let (mut nx, mut xx, mut gt, mut lt, mut ch, mut incr) =
            (false, false, false, false, false, false);
        while let Some(o) = a.get(i) {
            match o.as_slice() {
                b"NX" => nx = true,
                b"XX" => xx = true,
                b"GT" => gt = true,
                b"LT" => lt = true,
                b"CH" => ch = true,
                b"INCR" => incr = true,
                _ => break,
            }
            i += 1;
        }
        let pairs: Vec<(f64, Vec<u8>)> = a[i..]
            .chunks(2)
            .map(|p| (score(&p[0]), p[1].clone()))
            .collect();
        let nothing = if incr { R::Nil } else { R::Int(0) };
        if self.zset(&a[0])?.is_none() {
            if xx {
                return Ok(nothing);
            }
            self.keys.insert(a[0].clone(), Val::Zset(BTreeMap::new()));
        }
        let z = self.zset(&a[0])?.unwrap();
        let (mut added, mut updated, mut processed, mut last) = (0, 0, 0, 0.0);
        for (s, m) in pairs {
            match z.get(&m).copied() {
                Some(cur) => {
                    if nx {
                        continue;
                    }
                    let new = if incr { cur + s } else { s };
                    if new.is_nan() {
                        return Err(R::Err("ERR resulting score is not a number (NaN)".into()));
                    }
                    if (lt && new >= cur) || (gt && new <= cur) {
                        continue;
                    }
                    processed += 1;
                    last = new;
                    if new != cur {
                        z.insert(m, new);
                        updated += 1;
                    }
                }
                None if !xx => {
                    z.insert(m, s);
                    added += 1;
                    processed += 1;
                    last = s;
                }
                None => {}
            }
        }
        self.cleanup(&a[0]);
        Ok(if incr {
            if processed > 0 { fmt(last) } else { R::Nil }
        } else {
            R::Int(if ch { added + updated } else { added })
        })
    }

    fn apply(&mut self, cmd: &[Vec<u8>]) -> R {
        let name = String::from_utf8_lossy(&cmd[0]).to_string();
        let a = &cmd[1..];
        let r = (|| -> Result<R, R> {
            Ok(match name.as_str() {
                "ZADD" => self.zadd(a)?,
                "ZINCRBY" => {
                    self.zadd(&[a[0].clone(), b"INCR".to_vec(), a[1].clone(), a[2].clone()])?
                }
                "ZREM" => {
                    let Some(z) = self.zset(&a[0])? else {
                        return Ok(R::Int(0));
                    };
                    let n = a[1..].iter().filter(|m| z.remove(*m).is_some()).count();
                    self.cleanup(&a[0]);
                    R::Int(n as i64)
                }
                "ZSCORE" => match self.zset(&a[0])? {
                    Some(z) => z.get(&a[1]).map_or(R::Nil, |s| fmt(*s)),
                    None => R::Nil,
                },
                "ZMSCORE" => {
                    let z = self.zset(&a[0])?.cloned().unwrap_or_default();
                    R::Arr(
                        a[1..]
                            .iter()
                            .map(|m| z.get(m).map_or(R::Nil, |s| fmt(*s)))
                            .collect(),
                    )
                }
                "ZCARD" => R::Int(self.zset(&a[0])?.map_or(0, |z| z.len() as i64)),
                "ZRANGE" | "ZREVRANGE" => {
                    // ZRANGE key start stop [REV] [WITHSCORES]
                    let rev = name == "ZREVRANGE" || a.iter().any(|x| x == b"REV");
                    let ws = a.iter().any(|x| x == b"WITHSCORES");
                    let Some(z) = self.zset(&a[0])? else {
                        return Ok(R::Arr(vec![]));
                    };
                    let mut all = ordered(z);
                    if rev {
                        all.reverse();
                    }
                    match clamp(num(&a[1]), num(&a[2]), all.len()) {
                        None => R::Arr(vec![]),
                        Some((s, n)) => members(&all[s..s + n], ws),
                    }
                }
                "ZRANGEBYSCORE" | "ZREVRANGEBYSCORE" => {
                    // key min max WITHSCORES LIMIT off count (rev: max min)
                    let rev = name == "ZREVRANGEBYSCORE";
                    let (min, max) = if rev {
                        (end(&a[2]), end(&a[1]))
                    } else {
                        (end(&a[1]), end(&a[2]))
                    };
                    let (off, count) = (num(&a[5]), num(&a[6]));
                    let Some(z) = self.zset(&a[0])? else {
                        return Ok(R::Arr(vec![]));
                    };
                    let mut all: Vec<(Vec<u8>, f64)> = ordered(z)
                        .into_iter()
                        .filter(|(_, s)| in_range(*s, min, max))
                        .collect();
                    if rev {
                        all.reverse();
                    }
                    let take = if count < 0 {
                        usize::MAX
                    } else {
                        count as usize
                    };
                    if off < 0 {
                        R::Arr(vec![])
                    } else {
                        let v: Vec<_> = all.into_iter().skip(off as usize).take(take).collect();
                        members(&v, true)
                    }
                }
                "ZRANGEBYLEX" | "ZREVRANGEBYLEX" | "ZLEXCOUNT" | "ZREMRANGEBYLEX" => {
                    let rev = name == "ZREVRANGEBYLEX";
                    let (lo, hi) = if rev { (&a[2], &a[1]) } else { (&a[1], &a[2]) };
                    let Some(z) = self.zset(&a[0])? else {
                        return Ok(
                            if name.starts_with("ZRANGE") || name.starts_with("ZREVRANGE") {
                                R::Arr(vec![])
                            } else {
                                R::Int(0)
                            },
                        );
                    };
                    let mut hit: Vec<Vec<u8>> = z
                        .keys()
                        .filter(|m| lex_ok(m, lo, true) && lex_ok(m, hi, false))
                        .cloned()
                        .collect();
                    match name.as_str() {
                        "ZLEXCOUNT" => R::Int(hit.len() as i64),
                        "ZREMRANGEBYLEX" => {
                            for m in &hit {
                                z.remove(m);
                            }
                            self.cleanup(&a[0]);
                            R::Int(hit.len() as i64)
                        }
                        _ => {
                            if rev {
                                hit.reverse();
                            }
                            R::Arr(hit.into_iter().map(R::Bulk).collect())
                        }
                    }
                }
                "ZCOUNT" => {
                    let Some(z) = self.zset(&a[0])? else {
                        return Ok(R::Int(0));
                    };
                    let (min, max) = (end(&a[1]), end(&a[2]));
                    R::Int(z.values().filter(|s| in_range(**s, min, max)).count() as i64)
                }
                "ZRANK" | "ZREVRANK" => {
                    let Some(z) = self.zset(&a[0])? else {
                        return Ok(R::Nil);
                    };
                    let mut all = ordered(z);
                    if name == "ZREVRANK" {
                        all.reverse();
                    }
                    all.iter()
                        .position(|(m, _)| *m == a[1])
                        .map_or(R::Nil, |i| R::Int(i as i64))
                }
                "ZREMRANGEBYRANK" => {
                    let Some(z) = self.zset(&a[0])? else {
                        return Ok(R::Int(0));
                    };
                    let all = ordered(z);
                    let n = match clamp(num(&a[1]), num(&a[2]), all.len()) {
                        None => 0,
                        Some((s, n)) => {
                            for (m, _) in &all[s..s + n] {
                                z.remove(m);
                            }
                            n
                        }
                    };
                    self.cleanup(&a[0]);
                    R::Int(n as i64)
                }
                "ZREMRANGEBYSCORE" => {
                    let Some(z) = self.zset(&a[0])? else {
                        return Ok(R::Int(0));
                    };
                    let (min, max) = (end(&a[1]), end(&a[2]));
                    let gone: Vec<Vec<u8>> = z
                        .iter()
                        .filter(|(_, s)| in_range(**s, min, max))
                        .map(|(m, _)| m.clone())
                        .collect();
                    for m in &gone {
                        z.remove(m);
                    }
                    self.cleanup(&a[0]);
                    R::Int(gone.len() as i64)
                }
                "ZPOPMIN" | "ZPOPMAX" => {
                    let Some(z) = self.zset(&a[0])? else {
                        return Ok(R::Arr(vec![]));
                    };
                    let n = a.get(1).map_or(1, |c| num(c) as usize);
                    let mut all = ordered(z);
                    if name == "ZPOPMAX" {
                        all.reverse();
                    }
                    all.truncate(n);
                    for (m, _) in &all {
                        z.remove(m);
                    }
                    self.cleanup(&a[0]);
                    members(&all, true)
                }
                "ZMPOP" => {
                    // ZMPOP 2 k1 k2 MIN|MAX COUNT n
                    let n = num(&a[5]) as usize;
                    for k in &a[1..3] {
                        let Some(z) = self.zset(k)? else {
                            continue;
                        };
                        let mut all = ordered(z);
                        if a[3] == b"MAX" {
                            all.reverse();
                        }
                        all.truncate(n);
                        for (m, _) in &all {
                            z.remove(m);
                        }
                        self.cleanup(k);
                        return Ok(R::Arr(vec![
                            R::Bulk(k.clone()),
                            R::Arr(
                                all.into_iter()
                                    .map(|(m, s)| R::Arr(vec![R::Bulk(m), fmt(s)]))
                                    .collect(),
                            ),
                        ]));
                    }
                    R::Nil
                }
                "SET" => {
                    self.keys.insert(a[0].clone(), Val::Str);
                    R::Status("OK".into())
                }
                "DEL" => R::Int(a.iter().filter(|k| self.keys.remove(*k).is_some()).count() as i64),
                "DBSIZE" => R::Int(self.keys.len() as i64),
                other => panic!("model lacks {other}"),
            })
        })();
        r.unwrap_or_else(|e| e)
    }
}

fn random_command(rng: &mut Rng) -> Vec<Vec<u8>> {
    let key = |rng: &mut Rng| format!("z{}", rng.below(3)).into_bytes();
    let lex_key = |rng: &mut Rng| format!("x{}", rng.below(2)).into_bytes();
    let member = |rng: &mut Rng| format!("m{}", rng.below(40)).into_bytes();
    let sc = |rng: &mut Rng| match rng.below(40) {
        0 => "inf".to_string(),
        1 => "-inf".to_string(),
        _ => format!("{}", rng.range(-10, 10) as f64 / 2.0),
    };
    let end = |rng: &mut Rng| {
        let s = sc(rng);
        if rng.below(3) == 0 {
            format!("({s}")
        } else {
            s
        }
    };
    let lex = |rng: &mut Rng| match rng.below(8) {
        0 => "-".to_string(),
        1 => "+".to_string(),
        n => format!("{}m{}", if n % 2 == 0 { "[" } else { "(" }, rng.below(40)),
    };
    let n = |rng: &mut Rng, lo: i64, hi: i64| rng.range(lo, hi).to_string().into_bytes();
    let w = |s: &str| s.as_bytes().to_vec();
    match rng.below(32) {
        0..=5 => {
            let opts: &[&[&str]] = &[
                &[],
                &[],
                &["NX"],
                &["XX"],
                &["GT"],
                &["LT"],
                &["CH"],
                &["XX", "GT", "CH"],
                &["LT", "CH"],
            ];
            let mut c = vec![w("ZADD"), key(rng)];
            c.extend(
                opts[rng.below(opts.len() as u64) as usize]
                    .iter()
                    .map(|o| w(o)),
            );
            let most = if rng.below(4) == 0 { 40 } else { 3 };
            for _ in 0..1 + rng.below(most) {
                c.push(sc(rng).into_bytes());
                c.push(member(rng));
            }
            c
        }
        6 => {
            let mut c = vec![w("ZADD"), key(rng), w("INCR")];
            if rng.below(2) == 0 {
                c.push(w(["NX", "XX", "GT", "LT"][rng.below(4) as usize]));
            }
            c.push(sc(rng).into_bytes());
            c.push(member(rng));
            c
        }
        7 => vec![w("ZINCRBY"), key(rng), sc(rng).into_bytes(), member(rng)],
        8 => vec![w("ZREM"), key(rng), member(rng), member(rng)],
        9 => vec![w("ZSCORE"), key(rng), member(rng)],
        10 => vec![w("ZMSCORE"), key(rng), member(rng), member(rng)],
        11 => vec![w("ZCARD"), key(rng)],
        12 | 13 => {
            let mut c = vec![w("ZRANGE"), key(rng), n(rng, -45, 45), n(rng, -45, 45)];
            if rng.below(2) == 0 {
                c.push(w("REV"));
            }
            if rng.below(2) == 0 {
                c.push(w("WITHSCORES"));
            }
            c
        }
        14 => vec![w("ZREVRANGE"), key(rng), n(rng, -10, 10), n(rng, -10, 45)],
        15 | 16 => {
            let name = if rng.below(2) == 0 {
                "ZRANGEBYSCORE"
            } else {
                "ZREVRANGEBYSCORE"
            };
            vec![
                w(name),
                key(rng),
                end(rng).into_bytes(),
                end(rng).into_bytes(),
                w("WITHSCORES"),
                w("LIMIT"),
                n(rng, -1, 10),
                n(rng, -1, 20),
            ]
        }
        17 => vec![
            w("ZCOUNT"),
            key(rng),
            end(rng).into_bytes(),
            end(rng).into_bytes(),
        ],
        18 => vec![w("ZRANK"), key(rng), member(rng)],
        19 => vec![w("ZREVRANK"), key(rng), member(rng)],
        20 => vec![
            w("ZREMRANGEBYRANK"),
            key(rng),
            n(rng, -45, 45),
            n(rng, -45, 45),
        ],
        21 => vec![
            w("ZREMRANGEBYSCORE"),
            key(rng),
            end(rng).into_bytes(),
            end(rng).into_bytes(),
        ],
        22 => {
            let mut c = vec![
                w(if rng.below(2) == 0 {
                    "ZPOPMIN"
                } else {
                    "ZPOPMAX"
                }),
                key(rng),
            ];
            if rng.below(2) == 0 {
                c.push(n(rng, 1, 40));
            }
            c
        }
        23 => vec![
            w("ZMPOP"),
            w("2"),
            key(rng),
            key(rng),
            w(if rng.below(2) == 0 { "MIN" } else { "MAX" }),
            w("COUNT"),
            n(rng, 1, 40),
        ],
        24 | 25 => {
            let mut c = vec![w("ZADD"), lex_key(rng)];
            for _ in 0..1 + rng.below(6) {
                c.push(w("0"));
                c.push(member(rng));
            }
            c
        }
        26 | 27 => {
            let name = [
                "ZRANGEBYLEX",
                "ZREVRANGEBYLEX",
                "ZLEXCOUNT",
                "ZREMRANGEBYLEX",
            ][rng.below(4) as usize];
            vec![
                w(name),
                lex_key(rng),
                lex(rng).into_bytes(),
                lex(rng).into_bytes(),
            ]
        }
        28 => vec![w("SET"), key(rng), w("str")],
        29 => vec![
            w("DEL"),
            if rng.below(2) == 0 {
                key(rng)
            } else {
                lex_key(rng)
            },
        ],
        _ => vec![w("DBSIZE")],
    }
}

#[test]
fn random_sorted_set_pipelines_match_the_model_across_a_restart() {
    let mut s = TestServer::start();
    let mut model = Model::default();
    let mut rng = Rng(0x2e7_5eed_0000_0042);
    {
        let mut c = s.client();
        run_model_batches(&mut c, &mut rng, 1500, random_command, |c| model.apply(c));
    }
    s.restart();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(model.keys.len() as i64));
    run_model_batches(&mut c, &mut rng, 1500, random_command, |c| model.apply(c));
}
