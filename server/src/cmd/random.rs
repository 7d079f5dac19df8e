//! Random members of a collection, for SPOP, SRANDMEMBER and HRANDFIELD.
//!
//! Every choice comes from the command's own randomness (`Txn::rand_u64`, drawn from its
//! `Ctx`), never the thread's: a replica applying the same log entry to the same data picks
//! the same members.
//!
//! How random (docs/SERVER.md, "Random members"): a collection of up to [`SMALL`] members,
//! or a count of at least a third of the collection, is read whole and sampled exactly
//! uniformly, as Redis does. A larger collection is not read whole for a small count: a
//! random walk down the trie of its member keys (`Space::landing`: a few seeks per branching
//! point, choosing uniformly among the children of each) finds a member, the [`WINDOW`]
//! members from there on are read (wrapping around) and up to [`PER_WINDOW`] of them are
//! picked uniformly. Every member can be picked; the choice is uniform when the keys branch
//! evenly (numbers of one width, hex hashes, UUIDs) and favours members of sparse subtrees
//! otherwise (in a set of URLs, those of hosts with few URLs).

use std::collections::BTreeSet;

use super::{NOT_INT, parse_i64};
use crate::resp::Reply;
use crate::store::{Entry, Txn};

/// Collections up to this size are read whole and sampled exactly.
pub const SMALL: u64 = 128;
/// Members read at each random point of a larger collection.
pub const WINDOW: usize = 32;
/// Members picked, at most, from one window.
pub const PER_WINDOW: usize = 8;

/// Most members a negative count may ask for (repeats allowed): the reply is built in memory.
pub const MAX_REPEATED: u64 = 1 << 20;

/// The error for a count past [`MAX_REPEATED`].
pub fn too_many() -> Reply {
    Reply::err("value is too large")
}

/// A count as Redis's `getRangeLongFromObjectOrReply(-LONG_MAX, LONG_MAX)` reads it.
///
/// # Errors
/// Redis's integer and range errors.
pub fn signed_count(b: &[u8]) -> Result<i64, Reply> {
    match parse_i64(b) {
        None => Err(Reply::err(NOT_INT)),
        Some(i64::MIN) => Err(Reply::err(format!(
            "value is out of range, value must between {} and {}",
            -i64::MAX,
            i64::MAX
        ))),
        Some(n) => Ok(n),
    }
}

/// A uniform number below `n` (`n` > 0), by multiply-shift (no modulo bias worth the name).
fn below(txn: &mut Txn<'_>, n: u64) -> u64 {
    ((u128::from(txn.rand_u64()) * u128::from(n)) >> 64) as u64
}

/// Moves a uniform choice of `k` of `items` to their front (partial Fisher-Yates).
fn shuffle_front<T>(txn: &mut Txn<'_>, items: &mut [T], k: usize) {
    let n = items.len();
    for i in 0..k.min(n) {
        let j = i + below(txn, (n - i) as u64) as usize;
        items.swap(i, j);
    }
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Most levels [`Space::landing`] walks down before it stops at a subtree's first member.
const MAX_DEPTH: usize = 64;
/// Random probes for an existing child before the children of a node are listed.
const PROBES: usize = 16;

/// The first entry whose key starts with `prefix`, or the last one when `reverse`.
fn edge(txn: &Txn<'_>, prefix: &[u8], reverse: bool) -> Result<Option<Entry>, Reply> {
    let mut e = None;
    txn.for_each_prefix(prefix, None, reverse, |k, v| {
        e = Some((k.to_vec(), v.to_vec()));
        Ok(false)
    })?;
    Ok(e)
}

/// One child of a node of the key trie: the member that ends at the node, or the subtree
/// of keys going on with one more byte (its first entry and its key prefix).
enum Child {
    Terminal,
    Subtree(Entry, Vec<u8>),
}

/// The key space of one collection: its prefix and its first and last entries.
struct Space<'p> {
    prefix: &'p [u8],
    first: Entry,
    last: Vec<u8>,
}

impl<'p> Space<'p> {
    fn new(txn: &Txn<'_>, prefix: &'p [u8]) -> Result<Option<Space<'p>>, Reply> {
        let (Some(first), Some(last)) = (edge(txn, prefix, false)?, edge(txn, prefix, true)?)
        else {
            return Ok(None);
        };
        Ok(Some(Space {
            prefix,
            first,
            last: last.0,
        }))
    }

    /// The member a window starts at: a random walk down the trie of member keys, from the
    /// collection's first and last member. At each node (where the keys below part ways) one
    /// child is chosen uniformly: random bytes are probed until one leads to members (one
    /// seek each), and a node whose children are too sparse for that has them listed (two
    /// seeks each). Each step costs a few seeks, and the walk takes as many steps as the keys
    /// have branching points, about log(card) of them: a member's chance is the product of
    /// 1/children over its path, equal for members of an evenly branching trie (numbers of
    /// one width, hex hashes, UUIDs), larger for members of sparse subtrees.
    fn landing(&self, txn: &mut Txn<'_>) -> Result<Entry, Reply> {
        let mut first = self.first.clone();
        let mut last = self.last.clone();
        for _ in 0..MAX_DEPTH {
            if first.0 == last {
                break;
            }
            let cp = common_prefix(&first.0, &last);
            let Some(&hi) = last.get(cp) else {
                break; // last < first: cannot happen for a sorted pair
            };
            let terminal = first.0.len() == cp;
            let lo = if terminal { 0 } else { first.0[cp] };
            if hi < lo {
                break;
            }
            let slots = u64::from(hi - lo) + 1 + u64::from(terminal);
            let mut chosen = None;
            for _ in 0..PROBES {
                let x = below(txn, slots);
                if terminal && x == 0 {
                    chosen = Some(Child::Terminal);
                    break;
                }
                let byte = lo + (x - u64::from(terminal)) as u8;
                let mut cprefix = last[..cp].to_vec();
                cprefix.push(byte);
                if let Some(e) = edge(txn, &cprefix, false)? {
                    chosen = Some(Child::Subtree(e, cprefix));
                    break;
                }
            }
            let chosen = match chosen {
                Some(c) => c,
                None => self.pick_child(txn, &first, &last, cp)?,
            };
            match chosen {
                Child::Terminal => break,
                Child::Subtree(e, cprefix) => {
                    last = edge(txn, &cprefix, true)?.map_or_else(|| e.0.clone(), |l| l.0);
                    first = e;
                }
            }
        }
        Ok(first)
    }

    /// Lists the children of the node at depth `cp` above `first`..`last` and picks one.
    fn pick_child(
        &self,
        txn: &mut Txn<'_>,
        first: &Entry,
        last: &[u8],
        cp: usize,
    ) -> Result<Child, Reply> {
        let mut children = Vec::new();
        let mut cur = Some(first.clone());
        if first.0.len() == cp {
            children.push(Child::Terminal);
            cur = self.after(txn, &first.0)?;
        }
        while let Some(e) = cur.take() {
            let Some(&byte) = e.0.get(cp) else { break };
            let mut cprefix = last[..cp].to_vec();
            cprefix.push(byte);
            let end = edge(txn, &cprefix, true)?.map_or_else(|| e.0.clone(), |l| l.0);
            children.push(Child::Subtree(e, cprefix));
            if end.as_slice() >= last || children.len() > 256 {
                break;
            }
            cur = self.after(txn, &end)?;
        }
        if children.is_empty() {
            return Ok(Child::Terminal);
        }
        let i = below(txn, children.len() as u64) as usize;
        Ok(children.swap_remove(i))
    }

    /// The first entry after `key` (exclusive).
    fn after(&self, txn: &Txn<'_>, key: &[u8]) -> Result<Option<Entry>, Reply> {
        let mut e = None;
        txn.for_each_prefix(self.prefix, Some(key), false, |k, v| {
            e = Some((k.to_vec(), v.to_vec()));
            Ok(false)
        })?;
        Ok(e)
    }

    /// Up to `n` members from a random landing member on, continuing from the first member
    /// when the end is reached (never past the landing member again).
    fn window_at(&self, txn: &mut Txn<'_>, n: usize) -> Result<Vec<Entry>, Reply> {
        let start = self.landing(txn)?;
        let key = start.0.clone();
        let mut out = vec![start];
        self.extend(txn, &key, &key, n, &mut out)?;
        Ok(out)
    }

    /// Up to `n` members after `after` (exclusive), wrapping as [`Space::window_at`].
    fn window_after(&self, txn: &Txn<'_>, after: &[u8], n: usize) -> Result<Vec<Entry>, Reply> {
        let mut out = Vec::new();
        self.extend(txn, after, after, n, &mut out)?;
        Ok(out)
    }

    /// Appends members after `after` to `out` until it holds `n`, wrapping to the first
    /// member and stopping at `stop` (inclusive of neither).
    fn extend(
        &self,
        txn: &Txn<'_>,
        after: &[u8],
        stop: &[u8],
        n: usize,
        out: &mut Vec<Entry>,
    ) -> Result<(), Reply> {
        if out.len() < n {
            out.extend(txn.scan_prefix(self.prefix, Some(after), n - out.len())?);
        }
        if out.len() < n {
            txn.for_each_prefix(self.prefix, None, false, |k, v| {
                if k >= stop || out.len() >= n {
                    return Ok(false);
                }
                out.push((k.to_vec(), v.to_vec()));
                Ok(true)
            })?;
        }
        Ok(())
    }
}

/// One random member of the collection under `prefix` (of `card` members).
///
/// # Errors
/// Engine errors.
pub fn one(txn: &mut Txn<'_>, prefix: &[u8], card: u64) -> Result<Option<Entry>, Reply> {
    if card <= SMALL {
        let mut all = txn.scan_prefix(prefix, None, usize::MAX)?;
        if all.is_empty() {
            return Ok(None);
        }
        let i = below(txn, all.len() as u64) as usize;
        return Ok(Some(all.swap_remove(i)));
    }
    let Some(space) = Space::new(txn, prefix)? else {
        return Ok(None);
    };
    let mut w = space.window_at(txn, WINDOW)?;
    if w.is_empty() {
        return Ok(None);
    }
    let i = below(txn, w.len() as u64) as usize;
    Ok(Some(w.swap_remove(i)))
}

/// `k` distinct random members of the collection under `prefix` (of `card` members; `k` less
/// than `card`), in random order.
///
/// # Errors
/// Engine errors.
pub fn distinct(txn: &mut Txn<'_>, prefix: &[u8], card: u64, k: u64) -> Result<Vec<Entry>, Reply> {
    if card <= SMALL || k.saturating_mul(3) >= card {
        let mut all = txn.scan_prefix(prefix, None, usize::MAX)?;
        let k = (k as usize).min(all.len());
        shuffle_front(txn, &mut all, k);
        all.truncate(k);
        return Ok(all);
    }
    let Some(space) = Space::new(txn, prefix)? else {
        return Ok(Vec::new());
    };
    let k = k as usize;
    let mut out: Vec<Entry> = Vec::with_capacity(k);
    let mut seen: BTreeSet<Vec<u8>> = BTreeSet::new();
    // After a window that gave nothing new, the next one reads on from its end instead of
    // at a random point: k is under a third of the set, so reading on always finds new
    // members, and the loop ends.
    let mut resume: Option<Vec<u8>> = None;
    while out.len() < k {
        let mut w = match resume.take() {
            Some(r) => space.window_after(txn, &r, WINDOW)?,
            None => space.window_at(txn, WINDOW)?,
        };
        let Some(end) = w.last().map(|(key, _)| key.clone()) else {
            break;
        };
        let want = PER_WINDOW.min(k - out.len());
        let len = w.len();
        shuffle_front(txn, &mut w, len);
        let mut got = 0;
        for e in w {
            if got == want {
                break;
            }
            if seen.insert(e.0.clone()) {
                out.push(e);
                got += 1;
            }
        }
        if got == 0 {
            resume = Some(end);
        }
    }
    Ok(out)
}

/// `k` random members of the collection under `prefix` (of `card` members), each drawn
/// independently (repeats allowed), as SRANDMEMBER and HRANDFIELD with a negative count.
///
/// # Errors
/// Engine errors.
pub fn repeated(txn: &mut Txn<'_>, prefix: &[u8], card: u64, k: u64) -> Result<Vec<Entry>, Reply> {
    let k = k as usize;
    let mut out = Vec::with_capacity(k.min(1 << 16));
    if card <= SMALL {
        let all = txn.scan_prefix(prefix, None, usize::MAX)?;
        if all.is_empty() {
            return Ok(out);
        }
        for _ in 0..k {
            let i = below(txn, all.len() as u64) as usize;
            out.push(all[i].clone());
        }
        return Ok(out);
    }
    let Some(space) = Space::new(txn, prefix)? else {
        return Ok(out);
    };
    while out.len() < k {
        let w = space.window_at(txn, WINDOW)?;
        if w.is_empty() {
            break;
        }
        for _ in 0..PER_WINDOW.min(k - out.len()) {
            let i = below(txn, w.len() as u64) as usize;
            out.push(w[i].clone());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Ctx, Store, sub_prefix};

    fn store(dir: &std::path::Path) -> Store {
        crate::store::store_at(dir)
    }

    fn fill(s: &Store, n: u64, name: impl Fn(u64) -> Vec<u8>) -> Vec<u8> {
        let prefix = sub_prefix(b's', b"k", 1);
        let mut txn = s.txn();
        for i in 0..n {
            let mut k = prefix.clone();
            k.extend_from_slice(&name(i));
            txn.put(k, Vec::new());
        }
        txn.commit().unwrap();
        prefix
    }

    #[test]
    fn choices_follow_the_context_alone() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        let prefix = fill(&s, 1000, |i| format!("m{i:06}").into_bytes());
        let pick = |seed: u64| {
            let mut txn = s.txn_with(Ctx::replicated(seed, 0));
            (
                distinct(&mut txn, &prefix, 1000, 20).unwrap(),
                repeated(&mut txn, &prefix, 1000, 20).unwrap(),
                one(&mut txn, &prefix, 1000).unwrap(),
            )
        };
        assert_eq!(pick(7), pick(7), "same entry, same choice");
        assert_ne!(pick(7), pick(8));
    }

    #[test]
    fn distinct_members_of_a_clustered_set() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        // A dense run of URLs of one host beside a few sparse keys.
        let prefix = fill(&s, 600, |i| {
            if i < 500 {
                format!("www.example.com/{i:04}").into_bytes()
            } else {
                format!("{}.org", (b'a' + (i % 26) as u8) as char)
                    .repeat(1 + i as usize % 3)
                    .into_bytes()
            }
        });
        let all: BTreeSet<Vec<u8>> = {
            let txn = s.txn();
            let e = txn.scan_prefix(&prefix, None, usize::MAX).unwrap();
            e.into_iter().map(|e| e.0).collect()
        };
        let card = all.len() as u64;
        let mut txn = s.txn_with(Ctx::replicated(1, 0));
        let mut ever = BTreeSet::new();
        for _ in 0..400 {
            let got = distinct(&mut txn, &prefix, card, 150).unwrap();
            assert_eq!(got.len(), 150);
            let keys: BTreeSet<_> = got.iter().map(|e| e.0.clone()).collect();
            assert_eq!(keys.len(), 150, "no member twice");
            assert!(keys.is_subset(&all));
            ever.extend(keys);
        }
        // Members deep inside the run are reached too (the walk goes down the trie), though
        // less often than the sparse ones.
        let deep = ever
            .iter()
            .filter(|k| k.ends_with(b"0250") || k.ends_with(b"0377") || k.ends_with(b"0499"))
            .count();
        assert!(deep >= 2, "{deep}");
        assert!(ever.len() as u64 > card * 85 / 100, "{}", ever.len());
        let got = repeated(&mut txn, &prefix, card, 1000).unwrap();
        assert_eq!(got.len(), 1000);
        assert!(got.iter().all(|e| all.contains(&e.0)));
    }

    #[test]
    fn evenly_branching_keys_are_sampled_evenly() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        let prefix = fill(&s, 1000, |i| format!("id:{i:06}").into_bytes());
        let mut txn = s.txn_with(Ctx::replicated(5, 0));
        let mut counts = std::collections::BTreeMap::new();
        for _ in 0..20_000 {
            let e = one(&mut txn, &prefix, 1000).unwrap().unwrap();
            *counts.entry(e.0).or_insert(0u32) += 1;
        }
        assert_eq!(counts.len(), 1000, "every member picked");
        // Chi-square with 999 degrees of freedom: mean 999, standard deviation about 45.
        let chi: f64 = counts
            .values()
            .map(|&c| (f64::from(c) - 20.0).powi(2) / 20.0)
            .sum();
        assert!(chi < 1300.0, "chi-square {chi}");
    }

    #[test]
    fn small_sets_are_sampled_uniformly() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        let prefix = fill(&s, 10, |i| vec![b'a' + i as u8; 1 + i as usize]);
        let mut txn = s.txn_with(Ctx::replicated(3, 0));
        let mut counts = [0u32; 10];
        for e in repeated(&mut txn, &prefix, 10, 10_000).unwrap() {
            counts[e.0.len() - prefix.len() - 1] += 1;
        }
        // Chi-square with 9 degrees of freedom: 40 is exceeded with probability 1e-5.
        let chi: f64 = counts
            .iter()
            .map(|&c| (f64::from(c) - 1000.0).powi(2) / 1000.0)
            .sum();
        assert!(chi < 40.0, "{counts:?}");
    }
}
