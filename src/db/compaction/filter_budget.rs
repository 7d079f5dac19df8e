//! Filter memory per level (Monkey, Dayan et al. SIGMOD 2017): the tree's shape, the bits
//! per key a table written to a level gets for it, and when a table's filter fits a level.

use std::sync::Arc;

use crate::filter::monkey::kinds::{self as monkey_kinds, KindCurve};
use crate::filter::monkey::{self, LevelShape};
use crate::filter::{BloomPolicy, MIN_BITS_PER_KEY};
use crate::options::{FilterAllocation, NUM_LEVELS, Options};
use crate::db::version::{TableFile, Version};

/// Filter bits per key for tables written to `level` when, once they are installed, the tree
/// has `shape`: the configured figure under uniform allocation, the level's share of the
/// optimum for that shape under Monkey. (Tables written earlier for other shapes are brought
/// back to their level's share by re-filtering, see `super::refilter`.)
pub(crate) fn filter_bits_for_write(opts: &Options, shape: &Shape, level: usize) -> f64 {
    match monkey_bits_per_level(opts, shape) {
        Some(bits) => bits.get(level).copied().unwrap_or(0.0),
        None => opts.bits_per_key_for_level(level),
    }
}

/// Under Monkey, the bits per key each level's tables should have for `shape` (the optimum,
/// with no budget correction); `None` under uniform allocation.
///
/// With Bloom filters on every level, Monkey's closed form over the textbook Bloom curve
/// ([`monkey::allocate`]). With any other kind on some level, the solver across kinds
/// ([`monkey_kinds::allocate`]) over each level's own false-positive curve: every figure it
/// gives is a size the level's kind builds (a whole number of Ribbon result bits, a binary
/// fuse filter's one size, or no filter).
pub(crate) fn monkey_bits_per_level(opts: &Options, shape: &Shape) -> Option<Vec<f64>> {
    let FilterAllocation::Monkey { bits_per_key } = opts.filter_allocation else {
        return None;
    };
    let (entries, probes) = shape;
    let levels = monkey_shape(entries, probes);
    let all_bloom =
        (0..NUM_LEVELS).all(|l| opts.filter_policy_for_level(l).name() == BloomPolicy::NAME);
    if all_bloom {
        return Some(monkey::allocate(&levels, bits_per_key, MIN_BITS_PER_KEY));
    }
    let curves: Vec<KindCurve<'_>> = (0..NUM_LEVELS)
        .map(|l| KindCurve::of(opts.filter_policy_for_level(l).as_ref(), MIN_BITS_PER_KEY))
        .collect();
    Some(monkey_kinds::allocate(&levels, &curves, bits_per_key))
}

fn monkey_shape(entries: &[u64; NUM_LEVELS], probes: &[f64; NUM_LEVELS]) -> Vec<LevelShape> {
    entries
        .iter()
        .zip(probes)
        .map(|(&e, &r)| LevelShape {
            entries: e as f64,
            runs: if e > 0 { r.max(1e-3) } else { 0.0 },
        })
        .collect()
}

/// Entries of `level`'s tables (sorted, disjoint: a level 1 or deeper) whose key ranges
/// overlap `[lo, hi]` (user keys). Coarse: a table that overlaps counts whole.
fn entries_overlapping(level: &[Arc<TableFile>], lo: &[u8], hi: &[u8]) -> u64 {
    let first = level.partition_point(|f| f.largest_user_key() < lo);
    level[first..]
        .iter()
        .take_while(|f| f.smallest_user_key() <= hi)
        .map(|f| f.meta.entries)
        .sum()
}

/// The expected number of `files`' filters a lookup of an absent (uniformly placed) key
/// consults: the sum of their key shares, where a range's share is the part of the entries
/// of levels 1 and deeper, all of them together, whose tables overlap it (for a level below
/// 0, at most 1); one per table when only level 0 holds tables.
///
/// All deeper levels together stand for the key distribution: any one level may have holes
/// (round-robin compaction moves a key range of a level down as a whole, leaving the level
/// above with no keys there), and judged by the level with a hole, the level below it
/// would seem never to be consulted.
pub(crate) fn expected_probes(version: &Version, level: usize, files: &[Arc<TableFile>]) -> f64 {
    let deeper: Vec<&[Arc<TableFile>]> = version.levels()[1..]
        .iter()
        .filter(|l| !l.is_empty())
        .map(|l| l.as_slice())
        .collect();
    let total: u64 = deeper
        .iter()
        .flat_map(|l| l.iter())
        .map(|f| f.meta.entries)
        .sum();
    if total == 0 {
        return if level == 0 {
            files.len() as f64
        } else {
            f64::from(u8::from(!files.is_empty()))
        };
    }
    let share: f64 = files
        .iter()
        .map(|f| {
            let (lo, hi) = (f.smallest_user_key(), f.largest_user_key());
            let covered: u64 = deeper.iter().map(|l| entries_overlapping(l, lo, hi)).sum();
            (covered as f64 / total as f64).min(1.0)
        })
        .sum();
    if level == 0 { share } else { share.min(1.0) }
}

/// Per level: entries, and the expected number of tables an absent-key lookup probes.
pub(crate) type Shape = ([u64; NUM_LEVELS], [f64; NUM_LEVELS]);

/// The entries per level of `version`, and the filters per level a lookup of an absent key is
/// expected to consult. Monkey's optimum weighs each level by the second figure: a level that
/// covers only part of the key space is consulted by only part of the lookups, so its false
/// positives cost less and it gets fewer bits.
pub(crate) fn level_shape(version: &Version) -> Shape {
    let mut entries = [0; NUM_LEVELS];
    let mut probes = [0.0; NUM_LEVELS];
    for (level, files) in version.levels().iter().enumerate() {
        entries[level] = files.iter().map(|f| f.meta.entries).sum();
        probes[level] = expected_probes(version, level, files);
    }
    (entries, probes)
}

/// Whether a table whose filter has `has` bits per key may stay as it is at `level`, which
/// wants `wanted` (a trivial move). A table records what its filter policy built, which may
/// differ from what was asked (a Ribbon filter asked for 10 bits per key records ~9.6: it
/// builds whole result bits), so both the figure asked for and the one the level's policy
/// builds for it count as a match. Monkey's figures move continuously with the tree's shape,
/// so under it a quarter of a bit (a rate within ~16%) counts as a match.
pub(crate) fn filter_fits(opts: &Options, level: usize, has: f64, wanted: f64) -> bool {
    let tolerance = match opts.filter_allocation {
        FilterAllocation::Uniform => 1e-9,
        FilterAllocation::Monkey { .. } => 0.25,
    };
    if wanted <= 0.0 {
        return has <= 0.0;
    }
    let built = opts
        .filter_with_bits(level, wanted)
        .map_or(0.0, |p| p.bits_per_key());
    (has - wanted).abs() < tolerance || (has - built).abs() < tolerance
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::compaction::test_version::version;

    fn monkey(bits_per_key: f64) -> Options {
        Options {
            filter_allocation: FilterAllocation::Monkey { bits_per_key },
            // Bloom everywhere: Monkey's closed form (mixed kinds have tests of their own).
            filter_policy: std::sync::Arc::new(BloomPolicy::default()),
            ..Options::default()
        }
    }

    /// L1: 10k keys, L2: 100k, every lookup consults both.
    fn shape() -> Shape {
        let mut entries = [0; NUM_LEVELS];
        let mut probes = [0.0; NUM_LEVELS];
        entries[1] = 10_000;
        entries[2] = 100_000;
        probes[1] = 1.0;
        probes[2] = 1.0;
        (entries, probes)
    }

    #[test]
    fn uniform_ignores_the_shape() {
        assert_eq!(
            filter_bits_for_write(&Options::default(), &shape(), 1),
            10.0
        );
        assert!(monkey_bits_per_level(&Options::default(), &shape()).is_none());
    }

    #[test]
    fn monkey_gives_the_optimum_and_small_levels_more() {
        let (entries, probes) = shape();
        let ideal = monkey::allocate(&monkey_shape(&entries, &probes), 10.0, 1.0);
        assert!(ideal[1] > 10.0 && ideal[2] < 10.0, "{ideal:?}");
        for level in [1, 2] {
            let bits = filter_bits_for_write(&monkey(10.0), &(entries, probes), level);
            assert!((bits - ideal[level]).abs() < 1e-9, "{bits} vs {ideal:?}");
        }
    }

    /// Regression: probes were judged by the single largest level, so a deeper level under a
    /// hole of that level (round-robin compaction had moved the key range down whole) seemed
    /// never consulted, and Monkey gave it no filter at all.
    #[test]
    fn a_level_under_a_hole_of_the_largest_level_is_still_consulted() {
        // L2 (largest) holds keys b..z; L3 holds a..b-, the range L2 has none of.
        let v = version(&[
            (1, 1, "a", "z", 10_000, 10.0),
            (2, 2, "b", "m", 40_000, 10.0),
            (2, 3, "n", "z", 40_000, 10.0),
            (3, 4, "a", "az", 20_000, 10.0),
        ]);
        let (_, probes) = level_shape(&v);
        assert!(probes[3] > 0.1, "{probes:?}");
        assert!(probes[2] > 0.5 && probes[2] <= 1.0, "{probes:?}");
        assert!((probes[1] - 1.0).abs() < 1e-9, "{probes:?}");
        let bits = monkey_bits_per_level(&monkey(10.0), &level_shape(&v)).unwrap();
        assert!(bits[3] >= 1.0, "L3 keeps a filter: {bits:?}");
    }

    #[test]
    fn refilter_picks_the_table_furthest_from_its_level_share_beyond_the_tolerance() {
        let tables = [
            (1, 1, "a", "z", 10_000, 0.0),
            (2, 2, "a", "m", 50_000, 0.0),
            (2, 3, "n", "z", 50_000, 0.0),
        ];
        let v = version(&tables);
        let want = monkey_bits_per_level(&monkey(10.0), &level_shape(&v)).unwrap();
        // Every table at its share: nothing to do.
        let mut at_share = tables;
        for t in &mut at_share {
            t.5 = want[t.0];
        }
        assert!(
            crate::db::compaction::refilter::pick(&version(&at_share), &monkey(10.0), &[]).is_none()
        );
        // Within the tolerance: still nothing.
        at_share[1].5 += 0.4;
        assert!(
            crate::db::compaction::refilter::pick(&version(&at_share), &monkey(10.0), &[]).is_none()
        );
        // Two tables off; the one further off goes first, to its level's share.
        at_share[1].5 += 0.4;
        at_share[2].5 -= 2.0;
        let r = crate::db::compaction::refilter::pick(&version(&at_share), &monkey(10.0), &[]).unwrap();
        assert_eq!((r.level, r.file.meta.number), (2, 3));
        assert!((r.bits_per_key - want[2]).abs() < 1e-9);
        // A table given up on is left out; the next one comes up.
        let r =
            crate::db::compaction::refilter::pick(&version(&at_share), &monkey(10.0), &[3]).unwrap();
        assert_eq!(r.file.meta.number, 2);
        // Uniform allocation never re-filters.
        assert!(
            crate::db::compaction::refilter::pick(&version(&at_share), &Options::default(), &[])
                .is_none()
        );
    }

    fn monkey_with_kinds(kinds: Vec<Arc<dyn crate::filter::FilterPolicy>>) -> Options {
        Options {
            filter_policy_per_level: Some(kinds),
            ..monkey(10.0)
        }
    }

    #[test]
    fn bloom_on_every_level_keeps_the_closed_form() {
        let (entries, probes) = shape();
        let ideal = monkey::allocate(&monkey_shape(&entries, &probes), 10.0, 1.0);
        let opts = monkey_with_kinds(vec![Arc::new(BloomPolicy::new(7.0))]);
        assert_eq!(monkey_bits_per_level(&opts, &shape()).unwrap(), ideal);
    }

    /// Fails with the Bloom curve for every kind: the bottom level would get a figure no
    /// Ribbon filter has, and re-filtering would never see its tables fit.
    #[test]
    fn a_ribbon_bottom_gets_a_size_ribbon_builds_and_refiltering_settles() {
        use crate::filter::RibbonPolicy;
        let opts = monkey_with_kinds(vec![
            Arc::new(BloomPolicy::default()),
            Arc::new(BloomPolicy::default()),
            Arc::new(RibbonPolicy::default()),
        ]);
        let tables = [
            (1, 1, "a", "z", 10_000, 0.0),
            (2, 2, "a", "m", 50_000, 0.0),
            (2, 3, "n", "z", 50_000, 0.0),
        ];
        let want = monkey_bits_per_level(&opts, &level_shape(&version(&tables))).unwrap();
        let r = (want[2] / 1.07).round();
        assert!(r >= 1.0 && (want[2] - r * 1.07).abs() < 1e-9, "{want:?}");
        // The memory goes to the Bloom level above rather than being left unspent.
        let memory = want[1] * 10_000.0 + want[2] * 100_000.0;
        assert!((memory - 10.0 * 110_000.0).abs() < 1.0, "{want:?}");
        // A table written with what the allocation asks for fits it; none is re-filtered.
        let r = crate::db::compaction::refilter::pick(&version(&tables), &opts, &[]).unwrap();
        let built = opts
            .filter_with_bits(r.level, r.bits_per_key)
            .unwrap()
            .bits_per_key();
        assert!((built - r.bits_per_key).abs() < 1e-9);
        let mut at_share = tables;
        for t in &mut at_share {
            t.5 = want[t.0];
        }
        assert!(crate::db::compaction::refilter::pick(&version(&at_share), &opts, &[]).is_none());
    }
}
