//! Standalone Bloom filters, and the [`FilterPolicy`] through which SSTables use them.
//!
//! See `docs/FILTERS.md` for the math, the two layouts and the on-disk encoding.

mod policy;

pub use policy::FilterPolicy;

/// The one hash bloomkv uses for filter keys: xxh3, 64 bits, seed 0.
///
/// A key is hashed once; all probes (and, in the engine, all tables consulted by one lookup)
/// reuse this value.
#[inline]
pub fn hash_key(key: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(key)
}
