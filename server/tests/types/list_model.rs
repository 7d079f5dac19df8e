//! Model test for lists: random pipelines of every list command (and type changes, DEL)
//! against an in-memory model of Redis's semantics, reply by reply, with a restart in the
//! middle. Pushes of up to 40 elements and large counts make lists long enough for the
//! range deletions (runs of 32 or more), and a small alphabet makes LREM, LPOS and LINSERT
//! find matches on both sides of a list.

#![expect(
    clippy::unwrap_used,
    reason = "a test that cannot go on panics with the error"
)]

use crate::common;

use std::collections::{BTreeMap, VecDeque};

use common::model::*;
use common::*;

#[derive(Clone, Debug)]
enum Val {
    Str,
    List(VecDeque<Vec<u8>>),
}

#[derive(Default)]
struct Model {
    keys: BTreeMap<Vec<u8>, Val>,
}

fn int_arg(b: &[u8]) -> i64 {
    std::str::from_utf8(b).unwrap().parse().unwrap()
}

/// Redis's start/stop normalization: the first index and the count.
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

fn arr(v: impl IntoIterator<Item = Vec<u8>>) -> R {
    R::Arr(v.into_iter().map(R::Bulk).collect())
}

impl Model {
    /// The list at `k` (`None`: missing), or WRONGTYPE.
    fn list(&mut self, k: &[u8]) -> Result<Option<&mut VecDeque<Vec<u8>>>, R> {
        match self.keys.get_mut(k) {
            None => Ok(None),
            Some(Val::List(l)) => Ok(Some(l)),
            Some(Val::Str) => Err(R::Err(WRONGTYPE.into())),
        }
    }

    fn cleanup(&mut self, k: &[u8]) {
        if matches!(self.keys.get(k), Some(Val::List(l)) if l.is_empty()) {
            self.keys.remove(k);
        }
    }

    fn push(
        &mut self,
        k: &[u8],
        elems: &[Vec<u8>],
        left: bool,
        only_existing: bool,
    ) -> Result<R, R> {
        if self.list(k)?.is_none() {
            if only_existing {
                return Ok(R::Int(0));
            }
            self.keys.insert(k.to_vec(), Val::List(VecDeque::new()));
        }
        let l = self.list(k)?.unwrap();
        for e in elems {
            if left {
                l.push_front(e.clone());
            } else {
                l.push_back(e.clone());
            }
        }
        Ok(R::Int(l.len() as i64))
    }

    fn pop(&mut self, k: &[u8], left: bool, n: usize) -> Result<Option<Vec<Vec<u8>>>, R> {
        let Some(l) = self.list(k)? else {
            return Ok(None);
        };
        let mut out = Vec::new();
        for _ in 0..n {
            match if left { l.pop_front() } else { l.pop_back() } {
                Some(e) => out.push(e),
                None => break,
            }
        }
        self.cleanup(k);
        Ok(Some(out))
    }

    fn apply(&mut self, cmd: &[Vec<u8>]) -> R {
        let name = String::from_utf8_lossy(&cmd[0]).to_string();
        let a = &cmd[1..];
        let r = (|| -> Result<R, R> {
            Ok(match name.as_str() {
                "LPUSH" | "RPUSH" | "LPUSHX" | "RPUSHX" => {
                    self.push(&a[0], &a[1..], name.starts_with('L'), name.ends_with('X'))?
                }
                "LPOP" | "RPOP" => {
                    let left = name == "LPOP";
                    match a.get(1) {
                        None => self
                            .pop(&a[0], left, 1)?
                            .and_then(|mut v| v.pop())
                            .map_or(R::Nil, R::Bulk),
                        Some(c) => match self.pop(&a[0], left, int_arg(c) as usize)? {
                            None => R::Nil,
                            Some(v) => arr(v),
                        },
                    }
                }
                "LLEN" => R::Int(self.list(&a[0])?.map_or(0, |l| l.len() as i64)),
                "LRANGE" => {
                    let Some(l) = self.list(&a[0])? else {
                        return Ok(R::Arr(vec![]));
                    };
                    match clamp(int_arg(&a[1]), int_arg(&a[2]), l.len()) {
                        None => R::Arr(vec![]),
                        Some((s, n)) => arr(l.iter().skip(s).take(n).cloned()),
                    }
                }
                "LINDEX" => {
                    let Some(l) = self.list(&a[0])? else {
                        return Ok(R::Nil);
                    };
                    let i = int_arg(&a[1]);
                    let i = if i < 0 { i + l.len() as i64 } else { i };
                    if i < 0 || i >= l.len() as i64 {
                        R::Nil
                    } else {
                        R::Bulk(l[i as usize].clone())
                    }
                }
                "LSET" => {
                    let Some(l) = self.list(&a[0])? else {
                        return Err(R::Err("ERR no such key".into()));
                    };
                    let i = int_arg(&a[1]);
                    let i = if i < 0 { i + l.len() as i64 } else { i };
                    if i < 0 || i >= l.len() as i64 {
                        return Err(R::Err("ERR index out of range".into()));
                    }
                    l[i as usize] = a[2].clone();
                    R::Status("OK".into())
                }
                "LTRIM" => {
                    let Some(l) = self.list(&a[0])? else {
                        return Ok(R::Status("OK".into()));
                    };
                    let kept: VecDeque<Vec<u8>> =
                        match clamp(int_arg(&a[1]), int_arg(&a[2]), l.len()) {
                            None => VecDeque::new(),
                            Some((s, n)) => l.iter().skip(s).take(n).cloned().collect(),
                        };
                    *l = kept;
                    self.cleanup(&a[0]);
                    R::Status("OK".into())
                }
                "LREM" => {
                    let count = int_arg(&a[1]);
                    let Some(l) = self.list(&a[0])? else {
                        return Ok(R::Int(0));
                    };
                    let limit = count.unsigned_abs() as usize;
                    let mut idx: Vec<usize> = (0..l.len()).filter(|&i| l[i] == a[2]).collect();
                    if count < 0 {
                        idx.reverse();
                    }
                    if limit > 0 {
                        idx.truncate(limit);
                    }
                    idx.sort_unstable();
                    for &i in idx.iter().rev() {
                        l.remove(i);
                    }
                    self.cleanup(&a[0]);
                    R::Int(idx.len() as i64)
                }
                "LINSERT" => {
                    let Some(l) = self.list(&a[0])? else {
                        return Ok(R::Int(0));
                    };
                    match l.iter().position(|e| *e == a[2]) {
                        None => R::Int(-1),
                        Some(p) => {
                            let at = if a[1] == b"AFTER" { p + 1 } else { p };
                            l.insert(at, a[3].clone());
                            R::Int(l.len() as i64)
                        }
                    }
                }
                "LPOS" => {
                    // LPOS key elem RANK r COUNT c MAXLEN m
                    let rank = int_arg(&a[3]);
                    let count = int_arg(&a[5]) as usize;
                    let maxlen = int_arg(&a[7]) as usize;
                    let Some(l) = self.list(&a[0])? else {
                        return Ok(R::Arr(vec![]));
                    };
                    let n = l.len();
                    let order: Vec<usize> = if rank < 0 {
                        (0..n).rev().collect()
                    } else {
                        (0..n).collect()
                    };
                    let scan = if maxlen == 0 { n } else { maxlen.min(n) };
                    let hits: Vec<usize> = order[..scan]
                        .iter()
                        .copied()
                        .filter(|&i| l[i] == a[1])
                        .collect();
                    let skip = rank.unsigned_abs() as usize - 1;
                    let take = if count == 0 { usize::MAX } else { count };
                    R::Arr(
                        hits.into_iter()
                            .skip(skip)
                            .take(take)
                            .map(|i| R::Int(i as i64))
                            .collect(),
                    )
                }
                "LMOVE" => {
                    let from_left = a[2] == b"LEFT";
                    let to_left = a[3] == b"LEFT";
                    if self.list(&a[0])?.is_none() {
                        return Ok(R::Nil);
                    }
                    self.list(&a[1])?;
                    let e = self.pop(&a[0], from_left, 1)?.unwrap().pop().unwrap();
                    self.push(&a[1], std::slice::from_ref(&e), to_left, false)?;
                    R::Bulk(e)
                }
                "LMPOP" => {
                    // LMPOP 2 k1 k2 side COUNT n
                    let left = a[3] == b"LEFT";
                    let n = int_arg(&a[5]) as usize;
                    for k in &a[1..3] {
                        if let Some(v) = self.pop(k, left, n)?
                            && !v.is_empty()
                        {
                            return Ok(R::Arr(vec![R::Bulk(k.clone()), arr(v)]));
                        }
                    }
                    R::Nil
                }
                "SET" => {
                    self.keys.insert(a[0].clone(), Val::Str);
                    R::Status("OK".into())
                }
                "DEL" => R::Int(a.iter().filter(|k| self.keys.remove(*k).is_some()).count() as i64),
                "TYPE" => R::Status(
                    match self.keys.get(&a[0]) {
                        None => "none",
                        Some(Val::Str) => "string",
                        Some(Val::List(_)) => "list",
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

fn random_command(rng: &mut Rng) -> Vec<Vec<u8>> {
    let key = |rng: &mut Rng| format!("l{}", rng.below(4)).into_bytes();
    let elem = |rng: &mut Rng| format!("{}", (b'a' + rng.below(5) as u8) as char).into_bytes();
    let num = |rng: &mut Rng, lo: i64, hi: i64| rng.range(lo, hi).to_string().into_bytes();
    let w = |s: &str| s.as_bytes().to_vec();
    let side = |rng: &mut Rng| w(if rng.below(2) == 0 { "LEFT" } else { "RIGHT" });
    match rng.below(30) {
        0..=4 => {
            let name =
                ["LPUSH", "RPUSH", "LPUSH", "RPUSH", "LPUSHX", "RPUSHX"][rng.below(6) as usize];
            let n = if rng.below(4) == 0 {
                1 + rng.below(40)
            } else {
                1 + rng.below(3)
            };
            let mut c = vec![w(name), key(rng)];
            c.extend((0..n).map(|_| elem(rng)));
            c
        }
        5 | 6 => {
            let name = w(if rng.below(2) == 0 { "LPOP" } else { "RPOP" });
            match rng.below(3) {
                0 => vec![name, key(rng)],
                1 => vec![name, key(rng), num(rng, 0, 5)],
                _ => vec![name, key(rng), num(rng, 30, 100)],
            }
        }
        7 => vec![w("LLEN"), key(rng)],
        8..=10 => vec![w("LRANGE"), key(rng), num(rng, -60, 60), num(rng, -60, 60)],
        11 => vec![w("LINDEX"), key(rng), num(rng, -50, 50)],
        12 => vec![w("LSET"), key(rng), num(rng, -20, 20), elem(rng)],
        13 | 14 => vec![w("LTRIM"), key(rng), num(rng, -80, 40), num(rng, -40, 80)],
        15 | 16 => vec![w("LREM"), key(rng), num(rng, -4, 4), elem(rng)],
        17 | 18 => vec![
            w("LINSERT"),
            key(rng),
            w(if rng.below(2) == 0 { "BEFORE" } else { "AFTER" }),
            elem(rng),
            elem(rng),
        ],
        19 | 20 => {
            let rank = match rng.range(-3, 3) {
                0 => 1,
                r => r,
            };
            vec![
                w("LPOS"),
                key(rng),
                elem(rng),
                w("RANK"),
                rank.to_string().into_bytes(),
                w("COUNT"),
                num(rng, 0, 3),
                w("MAXLEN"),
                num(rng, 0, 30),
            ]
        }
        21 | 22 => vec![w("LMOVE"), key(rng), key(rng), side(rng), side(rng)],
        23 => vec![
            w("LMPOP"),
            w("2"),
            key(rng),
            key(rng),
            side(rng),
            w("COUNT"),
            num(rng, 1, 40),
        ],
        24 => vec![w("SET"), key(rng), w("str")],
        25 | 26 => vec![w("DEL"), key(rng)],
        27 => vec![w("TYPE"), key(rng)],
        _ => vec![w("DBSIZE")],
    }
}

#[test]
fn random_list_pipelines_match_the_model_across_a_restart() {
    let mut s = TestServer::start();
    let mut model = Model::default();
    let mut rng = Rng(0x5eed_1157_0000_0001);
    {
        let mut c = s.client();
        run_model_batches(&mut c, &mut rng, 1500, random_command, |c| model.apply(c));
    }
    s.restart();
    let mut c = s.client();
    assert_eq!(ok(&mut c, &["DBSIZE"]), int(model.keys.len() as i64));
    run_model_batches(&mut c, &mut rng, 1500, random_command, |c| model.apply(c));
    // Each surviving list in full.
    for (k, v) in &model.keys {
        if let Val::List(l) = v {
            let got: Vec<Vec<u8>> = redis::cmd("LRANGE")
                .arg(k)
                .arg(0)
                .arg(-1)
                .query(&mut c)
                .unwrap();
            assert_eq!(got, l.iter().cloned().collect::<Vec<_>>());
        }
    }
}
