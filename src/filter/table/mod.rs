//! The filters SSTables carry: the [`FilterPolicy`](super::FilterPolicy) kinds
//! ([`BloomPolicy`], [`BinaryFusePolicy`], [`RibbonPolicy`], and [`LeveledPolicy`] choosing
//! one per level), the static filters' shared header (`static_header`), and what prefix
//! filters hold ([`PrefixExtractor`]).

mod bloom_policy;
mod fuse;
mod leveled;
mod partition;
mod prefix;
mod ribbon;
mod static_header;

pub use bloom_policy::{BloomPolicy, MAX_BITS_PER_KEY, MIN_BITS_PER_KEY};
pub use fuse::BinaryFusePolicy;
pub use leveled::LeveledPolicy;
pub use prefix::{DelimiterPrefix, FixedPrefix, PrefixExtractor};
pub use ribbon::{MAX_RESULT_BITS, RibbonPolicy};
