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

use crate::filter::policy::FilterPolicy;

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
