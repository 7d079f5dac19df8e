//! [`LeveledPolicy`]: one filter kind for the upper levels of the tree and another from a
//! given level down: the engine's default, blocked Bloom filters for level 0 (written at
//! every flush, short-lived, cheapest to build) and Ribbon filters below (most keys; about
//! a fifth of Bloom's false positives in the same memory).

use std::sync::Arc;

use crate::error::Result;

use super::{BloomPolicy, RibbonPolicy};
use crate::filter::policy::FilterPolicy;

/// A [`FilterPolicy`] that is `upper` for tables of levels above `from_level` and `lower`
/// for tables of `from_level` and deeper. The engine asks it for each level's policy
/// ([`FilterPolicy::for_level`]), so every table is built (and records the name of) one of
/// the two; a table built with this policy itself (outside the engine) is `upper`'s bytes
/// under this policy's name.
///
/// The default is `Options::filter_policy`'s default: [`BloomPolicy`] at 10 bits per key on
/// level 0, [`RibbonPolicy`] at 10 bits per key (9 result bits: ~0.2% false positives at
/// ~9.6 bits per key) from level 1 down.
///
/// ```
/// use std::sync::Arc;
/// use bloomkv::filter::{BloomPolicy, FilterPolicy, LeveledPolicy, RibbonPolicy};
/// let p = LeveledPolicy::default();
/// assert_eq!(p.for_level(0).unwrap().name(), BloomPolicy::NAME);
/// assert_eq!(p.for_level(1).unwrap().name(), RibbonPolicy::NAME);
/// assert_eq!(p.for_level(6).unwrap().name(), RibbonPolicy::NAME);
///
/// // Bloom on levels 0 and 1, binary fuse from level 2 down.
/// let q = LeveledPolicy::new(
///     Arc::new(BloomPolicy::new(10)),
///     Arc::new(bloomkv::filter::BinaryFusePolicy::new()),
///     2,
/// );
/// assert_eq!(q.for_level(1).unwrap().name(), BloomPolicy::NAME);
/// ```
#[derive(Debug, Clone)]
pub struct LeveledPolicy {
    upper: Arc<dyn FilterPolicy>,
    lower: Arc<dyn FilterPolicy>,
    from_level: usize,
}

impl LeveledPolicy {
    /// The stable name stored beside a filter built with this policy itself (the engine
    /// builds with `upper` or `lower`, whose names tables record).
    pub const NAME: &'static str = "bloomkv.Leveled";

    /// `upper` above `from_level`, `lower` from `from_level` down.
    pub fn new(
        upper: Arc<dyn FilterPolicy>,
        lower: Arc<dyn FilterPolicy>,
        from_level: usize,
    ) -> LeveledPolicy {
        LeveledPolicy {
            upper,
            lower,
            from_level,
        }
    }

    /// The level from which `lower` applies.
    pub fn from_level(&self) -> usize {
        self.from_level
    }
}

impl Default for LeveledPolicy {
    /// Blocked Bloom at 10 bits per key on level 0, Ribbon at 10 bits per key from level 1.
    fn default() -> Self {
        LeveledPolicy::new(
            Arc::new(BloomPolicy::new(10.0)),
            Arc::new(RibbonPolicy::new(10.0)),
            1,
        )
    }
}

impl FilterPolicy for LeveledPolicy {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn bits_per_key(&self) -> f64 {
        self.upper.bits_per_key()
    }

    /// Both kinds at `bits_per_key` (a kind of one fixed size stays as it is).
    fn with_bits_per_key(&self, bits_per_key: f64) -> Option<Arc<dyn FilterPolicy>> {
        let resize = |p: &Arc<dyn FilterPolicy>| {
            p.with_bits_per_key(bits_per_key)
                .unwrap_or_else(|| Arc::clone(p))
        };
        Some(Arc::new(LeveledPolicy::new(
            resize(&self.upper),
            resize(&self.lower),
            self.from_level,
        )))
    }

    fn predicted_fp_rate(&self, bits_per_key: f64) -> f64 {
        self.upper.predicted_fp_rate(bits_per_key)
    }

    fn for_level(&self, level: usize) -> Option<&Arc<dyn FilterPolicy>> {
        Some(if level < self.from_level {
            &self.upper
        } else {
            &self.lower
        })
    }

    fn hash_key(&self, key: &[u8]) -> u64 {
        self.upper.hash_key(key)
    }

    fn uses_default_hash(&self) -> bool {
        self.upper.uses_default_hash()
    }

    fn create_filter_from_hashes(&self, hashes: &[u64]) -> Vec<u8> {
        self.upper.create_filter_from_hashes(hashes)
    }

    fn check_filter(&self, filter: &[u8]) -> Result<()> {
        self.upper.check_filter(filter)
    }

    fn may_contain_hash(&self, filter: &[u8], hash: u64) -> bool {
        self.upper.may_contain_hash(filter, hash)
    }

    fn expected_fp_rate(&self, filter: &[u8]) -> Option<f64> {
        self.upper.expected_fp_rate(filter)
    }
}
