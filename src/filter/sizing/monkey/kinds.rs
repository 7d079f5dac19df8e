//! Monkey allocation across filter kinds: each level has its own kind of filter (Bloom above,
//! Ribbon or binary fuse at the bottom, say) and so its own false-positive curve, and the
//! memory budget goes where it removes the most expected false positives per absent lookup.
//!
//! A kind's curve is read off its [`FilterPolicy`]: asked for `b` bits per key, a policy
//! builds filters of `realized(b)` bits per key (the `bits_per_key()` of
//! `with_bits_per_key(b)`, or of the policy itself when it has one fixed size) with rate
//! `predicted_fp_rate(realized(b))`. A Bloom filter realizes any `b` (continuous); a Ribbon
//! filter only `r (1 + ε)` for whole result bits `r` (steps of ~1.07 bits); a binary fuse
//! filter only its one size (~9 bits, 2^-8) or none at all.
//!
//! The solver keeps, per level, the lower convex hull of the points `(bits, rate)` (starting
//! at "no filter": 0 bits, rate 1), so every step along it removes fewer false positives per
//! bit than the one before. Starting from no filters anywhere, it takes steps of all levels
//! in order of false positives removed per bit of memory (`runs * Δrate / (entries * Δbits)`)
//! while the budget lasts. A step that does not fit whole is taken in part on a continuous
//! level (the budget is then spent exactly) and skipped on a discrete one, whose further steps
//! are then out of reach; smaller steps of other levels still get the rest. This is the
//! Lagrangian optimum on the hulls plus a greedy fill of the remainder; it is compared with
//! the uniform allocation of the same budget and the better of the two is returned.

use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use super::{LevelShape, MIN_RUNS, memory};
use crate::filter::policy::FilterPolicy;

/// Most bits per key the solver considers for a level (a Bloom filter at 48 bits/key is
/// already below 1e-7; more would only buy rounding error).
const MAX_GRID_BITS: f64 = 48.0;
/// Grid step for sampling a continuous curve; the last step taken is interpolated.
const GRID_STEP: f64 = 0.25;

/// One level's filter kind as the solver sees it.
#[derive(Debug)]
pub(crate) struct KindCurve<'a> {
    policy: &'a dyn FilterPolicy,
    sampled: Arc<Sampled>,
}

/// What sampling a kind's curve found.
#[derive(Debug)]
struct Sampled {
    /// Every sampled `(bits, rate)`, bits increasing, from `(0, 1)`: the rates the solver
    /// compares allocations with, without evaluating the policy's rate model again (a
    /// blocked Bloom rate costs ~50 µs, and the allocation runs for every table written).
    points: Vec<(f64, f64)>,
    /// Lower convex hull of `(bits, rate)`, from `(0, 1)`, bits increasing, rate decreasing.
    hull: Vec<(f64, f64)>,
    /// Whether the kind realizes any bits per key (so a step may be taken in part).
    continuous: bool,
}

/// Sampled curves by kind name and smallest filter (its `f64` bits). A handful of kinds at
/// most: a list searched by name costs less than hashing a key for every level.
type CurveCache = Vec<(String, u64, Arc<Sampled>)>;

/// Sampled curves by kind name and smallest filter: sampling a blocked Bloom curve evaluates
/// its rate model ~200 times (~15 ms), and the allocation runs for every table written. A
/// name stands for one kind of filter (tables are read by it), so it stands for one curve.
fn sampled_curves() -> &'static Mutex<CurveCache> {
    static CURVES: OnceLock<Mutex<CurveCache>> = OnceLock::new();
    CURVES.get_or_init(|| Mutex::new(Vec::new()))
}

/// Bits per key `policy` actually builds with when asked for `bits`.
pub(crate) fn realized_bits(policy: &dyn FilterPolicy, bits: f64) -> f64 {
    policy
        .with_bits_per_key(bits)
        .map_or_else(|| policy.bits_per_key(), |p| p.bits_per_key())
}

impl<'a> KindCurve<'a> {
    /// The curve of `policy`'s kind, filters thinner than `min_bits` left out.
    pub(crate) fn of(policy: &'a dyn FilterPolicy, min_bits: f64) -> Self {
        let (name, min) = (policy.name(), min_bits.to_bits());
        let cached = sampled_curves()
            .lock()
            .iter()
            .find(|(n, m, _)| n == name && *m == min)
            .map(|(_, _, s)| Arc::clone(s));
        let sampled = cached.unwrap_or_else(|| {
            let sampled = Arc::new(sample(policy, min_bits));
            sampled_curves()
                .lock()
                .push((name.to_string(), min, Arc::clone(&sampled)));
            sampled
        });
        KindCurve { policy, sampled }
    }

    /// The rate of this kind at `bits` (1 for no filter): the sampled rate where `bits` was
    /// sampled (every size a discrete kind builds), else interpolated between the two
    /// neighbouring samples in log space (rates fall about exponentially with bits), and the
    /// policy's own figure past the last sample.
    pub(crate) fn rate(&self, bits: f64) -> f64 {
        if bits.is_nan() || bits <= 0.0 {
            return 1.0;
        }
        let points = &self.sampled.points;
        let i = points.partition_point(|p| p.0 < bits - 1e-9);
        match (i.checked_sub(1).map(|j| points[j]), points.get(i)) {
            (_, Some(&(b, p))) if (b - bits).abs() <= 1e-9 => p,
            (Some((b0, p0)), Some(&(b1, p1))) => {
                let (l0, l1) = (
                    p0.max(f64::MIN_POSITIVE).ln(),
                    p1.max(f64::MIN_POSITIVE).ln(),
                );
                (l0 + (bits - b0) / (b1 - b0) * (l1 - l0))
                    .exp()
                    .clamp(0.0, 1.0)
            }
            _ => self.policy.predicted_fp_rate(bits).clamp(0.0, 1.0),
        }
    }

    fn hull(&self) -> &[(f64, f64)] {
        &self.sampled.hull
    }
}

/// Samples `policy`'s curve on the grid and keeps its lower convex hull.
fn sample(policy: &dyn FilterPolicy, min_bits: f64) -> Sampled {
    let min_bits = min_bits.max(GRID_STEP);
    let mut points = vec![(0.0, 1.0)];
    let mut continuous = true;
    let steps = ((MAX_GRID_BITS - min_bits) / GRID_STEP).floor() as usize;
    for s in 0..=steps {
        let asked = min_bits + s as f64 * GRID_STEP;
        let bits = realized_bits(policy, asked);
        if (bits - asked).abs() > 1e-6 {
            continuous = false;
        }
        if !(bits >= min_bits && bits.is_finite()) {
            continue;
        }
        let rate = policy.predicted_fp_rate(bits).clamp(0.0, 1.0);
        points.push((bits, rate));
    }
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points.dedup_by(|b, a| (a.0 - b.0).abs() < 1e-9);
    Sampled {
        hull: lower_hull(&points),
        points,
        continuous,
    }
}

/// Lower convex hull of points sorted by x, keeping only points that lower y.
fn lower_hull(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut hull: Vec<(f64, f64)> = Vec::new();
    for &p in points {
        if hull.last().is_some_and(|l| p.1 >= l.1) {
            continue; // more bits, no lower rate: never worth it
        }
        while hull.len() >= 2 {
            let (a, b) = (hull[hull.len() - 2], hull[hull.len() - 1]);
            // b lies on or above the segment a-p: drop it.
            let cross = (b.0 - a.0) * (p.1 - a.1) - (b.1 - a.1) * (p.0 - a.0);
            if cross <= 0.0 {
                hull.pop();
            } else {
                break;
            }
        }
        hull.push(p);
    }
    hull
}

/// Expected false positives per absent lookup of the allocation `bits` under `curves`.
pub(crate) fn expected_false_positives(
    levels: &[LevelShape],
    curves: &[KindCurve<'_>],
    bits: &[f64],
) -> f64 {
    levels
        .iter()
        .zip(curves)
        .zip(bits)
        .filter(|((l, _), _)| l.entries > 0.0)
        .map(|((l, c), &b)| l.runs.max(MIN_RUNS) * c.rate(b))
        .sum()
}

/// Bits per key for each level (one curve per level) minimising the expected false positives
/// per absent lookup with `bits_per_key` times the total entries of filter memory. Every
/// figure returned is one its level's kind realizes (or 0: no filter).
pub(crate) fn allocate(
    levels: &[LevelShape],
    curves: &[KindCurve<'_>],
    bits_per_key: f64,
) -> Vec<f64> {
    let n = levels.len().min(curves.len());
    let mut bits = vec![0.0; levels.len()];
    if bits_per_key.is_nan() || bits_per_key <= 0.0 {
        return bits;
    }
    let total: f64 = levels.iter().map(|l| l.entries.max(0.0)).sum();
    let budget = bits_per_key * total;
    // Every step of every non-empty level's hull: (false positives removed per bit, level,
    // index of the step's start on the hull).
    let mut steps: Vec<(f64, usize, usize)> = Vec::new();
    for i in (0..n).filter(|&i| levels[i].entries > 0.0) {
        let (l, hull) = (&levels[i], &curves[i].hull());
        for j in 0..hull.len().saturating_sub(1) {
            let (a, b) = (hull[j], hull[j + 1]);
            let gain = l.runs.max(MIN_RUNS) * (a.1 - b.1) / (l.entries * (b.0 - a.0));
            steps.push((gain, i, j));
        }
    }
    // Best gain first; a level's own steps stay in hull order (their gains decrease).
    steps.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
    let mut at = vec![0usize; levels.len()];
    let mut stuck = vec![false; levels.len()];
    let mut left = budget;
    for &(_, i, j) in &steps {
        if stuck[i] || at[i] != j {
            continue;
        }
        let (a, b) = (curves[i].hull()[j], curves[i].hull()[j + 1]);
        let cost = levels[i].entries * (b.0 - a.0);
        if cost <= left {
            left -= cost;
            at[i] = j + 1;
            bits[i] = b.0;
        } else {
            stuck[i] = true;
            // Part of the step if the kind can have any size, unless it is the first step:
            // that one goes from no filter to the thinnest one worth having.
            if curves[i].sampled.continuous && j > 0 {
                bits[i] = a.0 + left / levels[i].entries;
                left = 0.0;
            }
        }
    }
    // The uniform allocation of the same budget, when it fits; keep whichever is better.
    let uniform: Vec<f64> = (0..levels.len())
        .map(|i| {
            if i < n && levels[i].entries > 0.0 {
                realized_bits(curves[i].policy, bits_per_key)
            } else {
                0.0
            }
        })
        .collect();
    if memory(levels, &uniform) <= budget * (1.0 + 1e-9)
        && expected_false_positives(levels, curves, &uniform)
            < expected_false_positives(levels, curves, &bits)
    {
        return uniform;
    }
    bits
}

#[cfg(test)]
mod tests {
    use super::super::tests::shape;
    use super::*;
    use crate::filter::{BinaryFusePolicy, BloomPolicy, RibbonPolicy};

    #[test]
    fn hull_of_discrete_kinds_holds_only_what_they_realize() {
        let fuse = BinaryFusePolicy::new();
        let c = KindCurve::of(&fuse, 1.0);
        assert_eq!(c.hull(), vec![(0.0, 1.0), (9.0, 1.0 / 256.0)]);
        assert!(!c.sampled.continuous);
        let ribbon = RibbonPolicy::default();
        let c = KindCurve::of(&ribbon, 1.0);
        assert!(!c.sampled.continuous);
        for &(b, p) in &c.hull()[1..] {
            let r = (b / 1.07).round();
            assert!((b - r * 1.07).abs() < 1e-9, "{b}");
            assert_eq!(p, 0.5f64.powi(r as i32));
        }
        let bloom = BloomPolicy::default();
        assert!(KindCurve::of(&bloom, 1.0).sampled.continuous);
    }

    #[test]
    fn sampled_rates_stand_in_for_the_policy() {
        let bloom = BloomPolicy::default();
        let c = KindCurve::of(&bloom, 1.0);
        for bits in [1.0, 3.3, 7.25, 9.9, 10.0, 16.1, 40.0, 60.0] {
            let (got, want) = (c.rate(bits), bloom.predicted_fp_rate(bits));
            assert!((got / want - 1.0).abs() < 0.01, "{bits}: {got} vs {want}");
        }
        let ribbon = RibbonPolicy::default();
        let c = KindCurve::of(&ribbon, 1.0);
        for r in 1..=32u32 {
            let bits = realized_bits(&ribbon, f64::from(r) * 1.07);
            assert_eq!(c.rate(bits), ribbon.predicted_fp_rate(bits), "r = {r}");
        }
        assert_eq!(c.rate(0.0), 1.0);
    }

    #[test]
    fn one_bloom_kind_everywhere_is_close_to_the_closed_form() {
        let bloom = BloomPolicy::default();
        let levels = shape(&[0.0, 1e4, 1e5, 1e6]);
        let curves: Vec<_> = levels.iter().map(|_| KindCurve::of(&bloom, 1.0)).collect();
        let bits = allocate(&levels, &curves, 10.0);
        let closed = super::super::allocate(&levels, 10.0, 1.0);
        let total: f64 = levels.iter().map(|l| l.entries).sum();
        assert!((memory(&levels, &bits) - 10.0 * total).abs() < 1e-6 * total);
        for i in 1..4 {
            // The blocked layout's curve is a little flatter than the textbook one.
            assert!((bits[i] - closed[i]).abs() < 1.5, "{bits:?} vs {closed:?}");
        }
        assert!(bits[1] > bits[2] && bits[2] > bits[3]);
    }

    #[test]
    fn mixed_kinds_never_predict_more_than_uniform_within_budget() {
        let bloom = BloomPolicy::default();
        let ribbon = RibbonPolicy::default();
        let fuse = BinaryFusePolicy::new();
        let kinds: [&dyn FilterPolicy; 3] = [&bloom, &ribbon, &fuse];
        for bottom in kinds {
            for upper in kinds {
                for bpk in [4.0, 6.5, 8.0, 9.0, 10.0, 12.0, 16.0] {
                    for sizes in [
                        vec![4e3, 4e4, 4e5, 4e6],
                        vec![2e4, 1e5, 8e5, 1e5],
                        vec![1e5, 1e3, 0.0, 1e6],
                    ] {
                        let levels = shape(&sizes);
                        let curves: Vec<_> = (0..levels.len())
                            .map(|i| {
                                let p = if i + 1 == levels.len() { bottom } else { upper };
                                KindCurve::of(p, 1.0)
                            })
                            .collect();
                        let bits = allocate(&levels, &curves, bpk);
                        let total: f64 = levels.iter().map(|l| l.entries).sum();
                        let used = memory(&levels, &bits);
                        assert!(used <= bpk * total * (1.0 + 1e-9), "{bits:?}");
                        // Uniform at the memory the mix used (each kind realizes what it can).
                        let uniform_bpk = used / total;
                        let uniform: Vec<f64> = curves
                            .iter()
                            .zip(&levels)
                            .map(|(c, l)| {
                                if l.entries > 0.0 {
                                    realized_bits(c.policy, uniform_bpk)
                                } else {
                                    0.0
                                }
                            })
                            .collect();
                        if memory(&levels, &uniform) <= used * (1.0 + 1e-9) {
                            let m = expected_false_positives(&levels, &curves, &bits);
                            let u = expected_false_positives(&levels, &curves, &uniform);
                            assert!(m <= u + 1e-12, "{bpk} {sizes:?}: {m} vs uniform {u}");
                        }
                        for (b, c) in bits.iter().zip(&curves) {
                            assert!(
                                *b == 0.0 || (realized_bits(c.policy, *b) - b).abs() < 1e-6,
                                "{b} is not a size the kind builds"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn fuse_at_the_bottom_leaves_its_spare_memory_to_the_levels_above() {
        let bloom = BloomPolicy::default();
        let fuse = BinaryFusePolicy::new();
        let levels = shape(&[0.0, 1e4, 1e5, 1e6]);
        let curves: Vec<_> = (0..4)
            .map(|i| {
                KindCurve::of(
                    if i == 3 {
                        &fuse as &dyn FilterPolicy
                    } else {
                        &bloom
                    },
                    1.0,
                )
            })
            .collect();
        let bits = allocate(&levels, &curves, 10.0);
        assert_eq!(bits[3], 9.0);
        assert!(bits[1] > 12.0 && bits[2] > 10.0, "{bits:?}");
        let total: f64 = levels.iter().map(|l| l.entries).sum();
        assert!((memory(&levels, &bits) - 10.0 * total).abs() < 1e-6 * total);
        // Below fuse's size, the bottom goes without: the rest is better spent above.
        let bits = allocate(&levels, &curves, 5.0);
        assert_eq!(bits[3], 0.0, "{bits:?}");
    }
}
