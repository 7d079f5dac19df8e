//! Monkey filter allocation (Dayan, Athanassoulis, Idreos, SIGMOD 2017): for a fixed total of
//! filter memory, choose each level's bits per key so that the expected number of wasted data
//! block reads of a lookup for an absent key — the sum of the false-positive rates of the
//! filters it consults — is as small as possible.
//!
//! Level `i` holds `n_i` entries in `r_i` runs (each level-0 table is its own run; a deeper
//! level is one run), and a lookup for an absent key consults one filter per run. With the
//! textbook rate `p = e^(-b (ln 2)^2)` for `b` bits per key, minimising `sum r_i p_i` subject
//! to `sum n_i b_i = M` (Lagrange multipliers) gives
//!
//! ```text
//! p_i = c * n_i / r_i        b_i = -ln(p_i) / (ln 2)^2
//! ```
//!
//! i.e. the false-positive rate of a run is proportional to its size: the small upper levels
//! get more bits per key, the big last level fewer. `c` follows in closed form from the memory
//! budget over the levels that get a filter:
//!
//! ```text
//! ln c = -(M (ln 2)^2 + sum n_i ln(n_i / r_i)) / sum n_i
//! ```
//!
//! A level whose optimal rate would reach 1 (or whose bits fall below what a filter can use)
//! gets no filter, and the budget is re-solved over the others.
//!
//! With other kinds of filter than Bloom on some levels (each with its own false-positive
//! curve), `kinds` solves the same problem numerically. The engine's use of both is
//! `compaction::filter_budget` (the tree's shape, the bits per key a table written gets).

use std::f64::consts::LN_2;

pub(crate) mod kinds;

/// One level as the allocation sees it.
///
/// # Examples
/// ```
/// use bloomkv::filter::monkey::{LevelShape, allocate};
/// // Three level-0 runs of 1k entries, then a level of 100k.
/// let levels = [
///     LevelShape { entries: 3_000.0, runs: 3.0 },
///     LevelShape { entries: 100_000.0, runs: 1.0 },
/// ];
/// let bits = allocate(&levels, 10.0, 1.0);
/// assert!(bits[0] > bits[1]); // the small runs get more bits per key
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LevelShape {
    /// Entries in the level (all its runs together).
    pub entries: f64,
    /// Filters of the level a lookup of an absent key is expected to consult: the number of
    /// level-0 tables, 1 for a deeper level spanning the whole key space, and a fraction for a
    /// level that covers only part of it (only that part of the lookups reaches it).
    pub runs: f64,
}

/// The smallest probe weight the allocation works with, so a level that is almost never
/// consulted still gets a finite (tiny) share.
const MIN_RUNS: f64 = 1e-3;

/// Filter memory, in bits, of the allocation `bits` (bits per key, one entry per level).
fn memory(levels: &[LevelShape], bits: &[f64]) -> f64 {
    levels.iter().zip(bits).map(|(l, b)| l.entries * b).sum()
}

/// The textbook false-positive rate at `bits_per_key` bits per key with the best number of
/// probes: `e^(-b (ln 2)^2)`; 1 without bits.
///
/// # Examples
/// ```
/// use bloomkv::filter::monkey::textbook_fpr;
/// assert!((textbook_fpr(10.0) - 0.0082).abs() < 0.0001);
/// assert_eq!(textbook_fpr(0.0), 1.0);
/// ```
pub fn textbook_fpr(bits_per_key: f64) -> f64 {
    if bits_per_key <= 0.0 || bits_per_key.is_nan() {
        1.0
    } else {
        (-bits_per_key * LN_2 * LN_2).exp()
    }
}

/// Expected filter false positives per lookup of an absent key (one check per run) for the
/// allocation `bits` (one entry per level of `levels`).
///
/// # Examples
/// ```
/// use bloomkv::filter::monkey::{LevelShape, expected_false_positives, textbook_fpr};
/// let levels = [LevelShape { entries: 1000.0, runs: 2.0 }];
/// assert_eq!(expected_false_positives(&levels, &[10.0]), 2.0 * textbook_fpr(10.0));
/// ```
pub fn expected_false_positives(levels: &[LevelShape], bits: &[f64]) -> f64 {
    levels
        .iter()
        .zip(bits)
        .filter(|(l, _)| l.entries > 0.0)
        .map(|(l, &b)| l.runs * textbook_fpr(b))
        .sum()
}

/// Bits per key for each level of `levels` that minimise the expected false positives per
/// absent lookup, using `bits_per_key` times the total entries of filter memory.
///
/// Levels without entries get 0. A level whose share would be below `min_bits` per key (a
/// filter that thin saves almost nothing) gets 0 and its memory goes to the others. With a
/// single non-empty level the result is `bits_per_key` for it (when `>= min_bits`).
///
/// # Examples
/// ```
/// use bloomkv::filter::monkey::{LevelShape, allocate, expected_false_positives};
/// let levels = [
///     LevelShape { entries: 10_000.0, runs: 1.0 },
///     LevelShape { entries: 100_000.0, runs: 1.0 },
///     LevelShape { entries: 1_000_000.0, runs: 1.0 },
/// ];
/// let monkey = allocate(&levels, 10.0, 1.0);
/// let memory: f64 = levels.iter().zip(&monkey).map(|(l, b)| l.entries * b).sum();
/// assert!((memory - 10.0 * 1_110_000.0).abs() < 1.0); // the same memory as uniform...
/// let uniform = [10.0; 3];
/// assert!(expected_false_positives(&levels, &monkey) < expected_false_positives(&levels, &uniform)); // ...fewer false positives
/// ```
pub fn allocate(levels: &[LevelShape], bits_per_key: f64, min_bits: f64) -> Vec<f64> {
    let mut bits = vec![0.0; levels.len()];
    if bits_per_key <= 0.0 || bits_per_key.is_nan() {
        return bits;
    }
    let total: f64 = levels.iter().map(|l| l.entries.max(0.0)).sum();
    let budget = bits_per_key * total;
    let mut active: Vec<bool> = levels.iter().map(|l| l.entries > 0.0).collect();
    let ln2sq = LN_2 * LN_2;
    loop {
        let (mut n_sum, mut n_ln) = (0.0, 0.0);
        for (l, _) in levels.iter().zip(&active).filter(|(_, a)| **a) {
            n_sum += l.entries;
            n_ln += l.entries * (l.entries / l.runs.max(MIN_RUNS)).ln();
        }
        if n_sum <= 0.0 {
            return vec![0.0; levels.len()];
        }
        let ln_c = -(budget * ln2sq + n_ln) / n_sum;
        // The level with the fewest bits is the first to give up its filter if it must.
        let mut thinnest: Option<(usize, f64)> = None;
        for (i, l) in levels.iter().enumerate() {
            if !active[i] {
                bits[i] = 0.0;
                continue;
            }
            let ln_p = ln_c + (l.entries / l.runs.max(MIN_RUNS)).ln();
            bits[i] = -ln_p / ln2sq;
            if thinnest.is_none_or(|(_, b)| bits[i] < b) {
                thinnest = Some((i, bits[i]));
            }
        }
        match thinnest {
            Some((i, b)) if b < min_bits.max(f64::MIN_POSITIVE) => active[i] = false,
            _ => return bits,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Levels of `entries` each, one run per non-empty level.
    pub(super) fn shape(entries: &[f64]) -> Vec<LevelShape> {
        entries
            .iter()
            .map(|&e| LevelShape {
                entries: e,
                runs: if e > 0.0 { 1.0 } else { 0.0 },
            })
            .collect()
    }

    #[test]
    fn one_level_gets_the_uniform_bits() {
        let l = shape(&[0.0, 1000.0]);
        let b = allocate(&l, 10.0, 1.0);
        assert!((b[1] - 10.0).abs() < 1e-9, "{b:?}");
        assert_eq!(b[0], 0.0);
    }

    #[test]
    fn memory_is_preserved_and_rates_follow_level_sizes() {
        let l = shape(&[1e3, 1e4, 1e5, 1e6]);
        let b = allocate(&l, 10.0, 1.0);
        let total: f64 = l.iter().map(|x| x.entries).sum();
        assert!(
            (memory(&l, &b) - 10.0 * total).abs() < 1e-6 * total,
            "{b:?}"
        );
        // p_i / p_j == n_i / n_j.
        for w in 0..3 {
            let ratio = textbook_fpr(b[w + 1]) / textbook_fpr(b[w]);
            assert!((ratio - 10.0).abs() < 1e-6, "{ratio}");
        }
        assert!(b[0] > b[1] && b[1] > b[2] && b[2] > b[3] && b[3] < 10.0);
    }

    #[test]
    fn beats_uniform_at_equal_memory() {
        let l = shape(&[3e4, 8e4, 8e5, 1e5]);
        let monkey = allocate(&l, 10.0, 1.0);
        let uniform = vec![10.0; 4];
        let (m, u) = (
            expected_false_positives(&l, &monkey),
            expected_false_positives(&l, &uniform),
        );
        assert!(m < u * 0.8, "monkey {m} vs uniform {u}");
        // And it is the optimum: moving a little memory between two levels never helps.
        for (i, j) in [(0, 2), (2, 0), (1, 3), (3, 1)] {
            let mut b = monkey.clone();
            let delta = 0.01;
            b[i] += delta;
            b[j] -= delta * l[i].entries / l[j].entries;
            assert!(expected_false_positives(&l, &b) >= m - 1e-12);
        }
    }

    #[test]
    fn runs_count_as_separate_probes() {
        // Four level-0 runs of 1e4 entries each are probed four times: per-run size decides.
        let l = vec![
            LevelShape {
                entries: 4e4,
                runs: 4.0,
            },
            LevelShape {
                entries: 1e4,
                runs: 1.0,
            },
        ];
        let b = allocate(&l, 8.0, 1.0);
        assert!((b[0] - b[1]).abs() < 1e-9, "{b:?}");
    }

    #[test]
    fn tiny_budgets_drop_the_biggest_levels_first() {
        let l = shape(&[1e2, 1e4, 1e6]);
        let b = allocate(&l, 0.5, 1.0);
        assert_eq!(b[2], 0.0);
        assert!(b[0] >= 1.0 && b[1] >= 1.0, "{b:?}");
        let total: f64 = l.iter().map(|x| x.entries).sum();
        assert!((memory(&l, &b) - 0.5 * total).abs() < 1e-6 * total);
        assert_eq!(allocate(&l, 0.0, 1.0), vec![0.0; 3]);
        assert_eq!(allocate(&shape(&[0.0, 0.0]), 10.0, 1.0), vec![0.0; 2]);
    }

    #[test]
    fn a_level_consulted_by_fewer_lookups_gets_fewer_bits() {
        // Two equal levels; the second covers a tenth of the key space.
        let levels = [
            LevelShape {
                entries: 1000.0,
                runs: 1.0,
            },
            LevelShape {
                entries: 1000.0,
                runs: 0.1,
            },
        ];
        let bits = allocate(&levels, 10.0, 1.0);
        assert!(bits[1] < bits[0], "{bits:?}");
        assert!((memory(&levels, &bits) - 20_000.0).abs() < 1e-6);
        let uniform = expected_false_positives(&levels, &[10.0, 10.0]);
        assert!(expected_false_positives(&levels, &bits) < uniform);
    }
}
