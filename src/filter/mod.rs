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
// over a tree's levels). `layout` (the key hash and where its probes land) and `policy` (the
// trait between tables and filters) serve all three. Files here import each other directly,
// never through this facade, so imports point one way: table -> standalone -> sizing ->
// policy, layout.
pub mod layout;
mod policy;
mod sizing;
mod standalone;
mod table;

pub use layout::{BlockedProbe, Layout, MAX_HASHES, hash_key, stage_hash};
pub use policy::FilterPolicy;
pub use sizing::{math, monkey};
pub use standalone::{
    AnyFilter, BloomFilter, CountingBloomFilter, CuckooFilter, CuckooParams, CuckooRead,
    CuckooSlots, CuckooState, FilterSize, ScalableBloomFilter,
};
pub use table::{
    BinaryFusePolicy, BloomPolicy, DelimiterPrefix, FixedPrefix, LeveledPolicy, MAX_BITS_PER_KEY,
    MAX_RESULT_BITS, MIN_BITS_PER_KEY, PrefixExtractor, RibbonPolicy, builtin_policy,
};
