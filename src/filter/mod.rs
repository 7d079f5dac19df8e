//! Standalone Bloom filters, and the [`FilterPolicy`] through which SSTables use them.
//!
//! * [`BloomFilter`]: a Bloom filter in either [`Layout`] (standard by default, blocked on
//!   request), serializable with a checksum; [`FilterSize`] says how big.
//! * [`CountingBloomFilter`]: 4-bit counters instead of bits, so keys can be removed.
//! * [`ScalableBloomFilter`]: a chain of Bloom filters that grows and keeps its error rate.
//! * [`AnyFilter`]: whichever of the three a file holds.
//! * [`BloomPolicy`], [`BinaryFusePolicy`], [`RibbonPolicy`]: the [`FilterPolicy`] kinds
//!   SSTables use; [`LeveledPolicy`] (the engine's default) picks one per level.
//! * [`PrefixExtractor`] ([`FixedPrefix`], [`DelimiterPrefix`]): what tables' prefix filters
//!   hold.
//! * [`math`]: sizing formulas and predicted false-positive rates; [`monkey`]: filter memory
//!   per level of a tree.
//! * [`BlockedProbe`], [`stage_hash`]: where a key goes in a blocked filter a program keeps
//!   itself.
//!
//! See `docs/FILTERS.md` for the math, the two layouts, measurements and the encoding.

// Three audiences, one folder each: `standalone` (filters a program uses on its own, their
// sizing type and file format), `table` (the policies SSTables build and probe filters with,
// and their byte formats) and `sizing` (the formulas, and Monkey's split of filter memory
// over a tree's levels). `layout` (where a key's probes land) and `policy` (the trait between
// tables and filters) serve all three.
pub mod layout;
mod policy;
mod sizing;
mod standalone;
mod table;

pub use layout::{BlockedProbe, Layout, stage_hash};
pub use policy::FilterPolicy;
pub use sizing::{math, monkey};
pub use standalone::{
    AnyFilter, BloomFilter, CountingBloomFilter, FilterSize, ScalableBloomFilter,
};
pub use table::{
    BinaryFusePolicy, BloomPolicy, DelimiterPrefix, FixedPrefix, LeveledPolicy, MAX_BITS_PER_KEY,
    MAX_RESULT_BITS, MIN_BITS_PER_KEY, PrefixExtractor, RibbonPolicy,
};

/// The built-in policy named `name` (as stored in a table), at its default size: what a
/// table built by a policy other than its database's current one is read with.
///
/// # Examples
/// ```
/// use bloomkv::filter::{BloomPolicy, builtin_policy};
/// assert_eq!(builtin_policy(BloomPolicy::NAME).unwrap().name(), BloomPolicy::NAME);
/// assert!(builtin_policy("someone.else").is_none());
/// ```
pub fn builtin_policy(name: &str) -> Option<std::sync::Arc<dyn FilterPolicy>> {
    match name {
        BloomPolicy::NAME => Some(std::sync::Arc::new(BloomPolicy::default())),
        BinaryFusePolicy::NAME => Some(std::sync::Arc::new(BinaryFusePolicy::new())),
        RibbonPolicy::NAME => Some(std::sync::Arc::new(RibbonPolicy::default())),
        LeveledPolicy::NAME => Some(std::sync::Arc::new(LeveledPolicy::default())),
        _ => None,
    }
}

/// Most probes per key a filter uses. More would cost lookup time for rates already far below
/// anything measurable (64 probes is the optimum near 92 bits per key).
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::filter::{BloomFilter, FilterSize, MAX_HASHES};
/// assert!(BloomFilter::new(FilterSize::bits(1024, MAX_HASHES)).is_ok());
/// assert!(BloomFilter::new(FilterSize::bits(1024, MAX_HASHES + 1)).is_err());
/// # Ok(())
/// # }
/// ```
pub const MAX_HASHES: u32 = 64;

/// The one hash bloomkv uses for filter keys: xxh3, 64 bits, seed 0.
///
/// A key is hashed once; all probes (and, in the engine, all tables consulted by one lookup)
/// reuse this value.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::filter::{BloomFilter, FilterSize, hash_key};
/// let mut f = BloomFilter::new(FilterSize::for_items(10, 0.01))?;
/// f.insert_hash(hash_key(b"k"));
/// assert!(f.contains(b"k")); // `insert` hashes the same way
/// # Ok(())
/// # }
/// ```
#[inline]
pub fn hash_key(key: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(key)
}
