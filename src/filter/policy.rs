//! The interface between tables and filters.

use std::fmt::Debug;
use std::sync::Arc;

use crate::error::Result;

/// Builds and queries the serialized filters that SSTables carry.
///
/// A table stores the bytes returned by [`FilterPolicy::create_filter_from_hashes`] together
/// with [`FilterPolicy::name`]; a reader whose policy has another name ignores the filter rather
/// than misreading it. Querying never copies the filter.
///
/// Contract: a filter may only ever save work. [`FilterPolicy::may_contain_hash`] must answer
/// `true` for every key the filter was built from, and also `true` whenever it cannot make
/// sense of the bytes.
///
/// # Examples
/// ```
/// use bloomkv::filter::{BloomPolicy, FilterPolicy};
/// let policy = BloomPolicy::new(10);
/// let filter = policy.create_filter(&[b"apple", b"pear"]);
/// policy.check_filter(&filter).unwrap();
/// assert!(policy.may_contain(&filter, b"apple"));
/// let h = policy.hash_key(b"plum");
/// assert_eq!(policy.may_contain_hash(&filter, h), policy.may_contain(&filter, b"plum"));
/// assert!(policy.expected_fp_rate(&filter).unwrap() < 0.05);
/// assert!(policy.predicted_fp_rate(10.0) < 0.01);
/// let bigger = policy.with_bits_per_key(20.0).unwrap();
/// assert_eq!(bigger.bits_per_key(), 20.0);
/// ```
pub trait FilterPolicy: Send + Sync + Debug {
    /// A stable name, stored beside each filter. Parameters that the filter records inside its
    /// own bytes (bits per key, number of probes) are not part of the name.
    fn name(&self) -> &str;

    /// Bits per key this policy builds filters with.
    fn bits_per_key(&self) -> f64;

    /// A policy of the same kind building filters with `bits_per_key` bits per key. The
    /// engine sizes each table's filter for its level (and, under Monkey allocation, for the
    /// tree's shape) through this. `None` (the default): the policy has one fixed size and
    /// is used as it is.
    fn with_bits_per_key(&self, bits_per_key: f64) -> Option<Arc<dyn FilterPolicy>> {
        let _ = bits_per_key;
        None
    }

    /// The false-positive rate a filter of this kind is expected to have at `bits_per_key`
    /// bits per key, so that filter allocation can reason in rates. The default is a standard
    /// Bloom filter's with the best number of probes, `0.5^(bits_per_key * ln 2)`.
    fn predicted_fp_rate(&self, bits_per_key: f64) -> f64 {
        0.5f64
            .powf(bits_per_key.max(0.0) * std::f64::consts::LN_2)
            .min(1.0)
    }

    /// The 64-bit hash of a key; callers compute it once and pass it to every
    /// [`FilterPolicy::may_contain_hash`] call for that key. The engine hashes each lookup
    /// once with the database's policy and reuses the hash for every table built by that
    /// policy; a table built by another policy gets a hash of its own policy's.
    fn hash_key(&self, key: &[u8]) -> u64 {
        super::layout::hash_key(key)
    }

    /// The policy that builds tables of `level`, for a policy that differs by level (as
    /// [`LeveledPolicy`](super::LeveledPolicy) does); `None` (the default): this policy
    /// builds every level's tables. The engine resolves each level's policy through this
    /// (see `Options::filter_policy_for_level`).
    fn for_level(&self, level: usize) -> Option<&Arc<dyn FilterPolicy>> {
        let _ = level;
        None
    }

    /// Whether [`FilterPolicy::hash_key`] is [`filter::hash_key`](super::hash_key) (xxh3-64,
    /// seed 0), as for every built-in policy. A lookup then hashes its key once for all the
    /// tables built by such policies, whichever kind each table's filter is. The default,
    /// `false`, is always safe: the key is hashed with this policy's own
    /// [`FilterPolicy::hash_key`] for its tables.
    ///
    /// ```
    /// use bloomkv::filter::{BinaryFusePolicy, BloomPolicy, FilterPolicy, RibbonPolicy};
    /// assert!(BloomPolicy::default().uses_default_hash());
    /// assert!(BinaryFusePolicy::new().uses_default_hash());
    /// assert!(RibbonPolicy::default().uses_default_hash());
    /// ```
    fn uses_default_hash(&self) -> bool {
        false
    }

    /// Builds a serialized filter over the keys whose hashes are given (duplicates allowed).
    fn create_filter_from_hashes(&self, hashes: &[u64]) -> Vec<u8>;

    /// Builds a serialized filter over `keys`.
    fn create_filter(&self, keys: &[&[u8]]) -> Vec<u8> {
        let hashes: Vec<u64> = keys.iter().map(|k| self.hash_key(k)).collect();
        self.create_filter_from_hashes(&hashes)
    }

    /// Fully validates a serialized filter (header, sizes, checksum). Tables call this once at
    /// open; a filter that fails it is not used.
    fn check_filter(&self, filter: &[u8]) -> Result<()>;

    /// May a key with this hash be in the set the filter was built from? `true` when unsure.
    fn may_contain_hash(&self, filter: &[u8], hash: u64) -> bool;

    /// May `key` be in the set the filter was built from? `true` when unsure.
    fn may_contain(&self, filter: &[u8], key: &[u8]) -> bool {
        self.may_contain_hash(filter, self.hash_key(key))
    }

    /// The false-positive rate the filter's own parameters predict, if the bytes decode.
    fn expected_fp_rate(&self, filter: &[u8]) -> Option<f64>;
}
