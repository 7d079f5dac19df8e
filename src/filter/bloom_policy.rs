//! [`BloomPolicy`]: the [`FilterPolicy`] SSTables use, blocked Bloom filters.

use crate::error::{Error, Result};

use super::FilterPolicy;
use super::bloom::{BloomFilter, contains_hash_in, predicted_rate, size_for_bits_per_key};
use super::encoding::{self, Kind};
use super::layout::Layout;

/// Smallest bits per key a policy uses.
///
/// # Examples
/// ```
/// use bloomkv::filter::{BloomPolicy, FilterPolicy, MIN_BITS_PER_KEY};
/// assert_eq!(BloomPolicy::new(0.1).bits_per_key(), MIN_BITS_PER_KEY);
/// ```
pub const MIN_BITS_PER_KEY: f64 = 1.0;
/// Largest bits per key a policy uses (beyond ~50 the probe cap of 64 makes more bits useless).
///
/// # Examples
/// ```
/// use bloomkv::filter::{BloomPolicy, MAX_BITS_PER_KEY};
/// assert!(BloomPolicy::try_new(MAX_BITS_PER_KEY + 1.0).is_err());
/// ```
pub const MAX_BITS_PER_KEY: f64 = 1000.0;

/// Builds [`Layout::Blocked`] Bloom filters for SSTables, serialized in filter format
/// version 1 (no capacity or rate fields), which [`BloomFilter::from_bytes`] reads too.
///
/// Lookups ([`FilterPolicy::may_contain_hash`]) read the 24-byte header and probe one 64-byte
/// block of the table's filter bytes in place: no copy, no checksum. The checksum is verified
/// once by [`FilterPolicy::check_filter`] when a table opens.
///
/// "No filter" is expressed by not having a policy (`Option<Arc<dyn FilterPolicy>>` in the
/// options), not by a policy with zero bits.
///
/// # Examples
/// ```
/// use bloomkv::filter::{BloomPolicy, FilterPolicy};
/// let policy = BloomPolicy::new(10);
/// let filter = policy.create_filter(&[b"apple", b"pear"]);
/// policy.check_filter(&filter).unwrap();
/// assert!(policy.may_contain(&filter, b"apple"));
/// assert_eq!(policy.name(), BloomPolicy::NAME);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BloomPolicy {
    bits_per_key: f64,
}

impl BloomPolicy {
    /// The stable name stored beside each filter built by this policy.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::filter::{BloomPolicy, FilterPolicy};
    /// assert_eq!(BloomPolicy::default().name(), "bloomkv.BloomFilter");
    /// ```
    pub const NAME: &'static str = "bloomkv.BloomFilter";

    /// A policy building filters with `bits_per_key` bits per key (10 gives about 1%
    /// false positives). Values are clamped to
    /// [`MIN_BITS_PER_KEY`]`..=`[`MAX_BITS_PER_KEY`] (NaN becomes the minimum); use
    /// [`BloomPolicy::try_new`] to have them rejected instead.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::filter::{BloomPolicy, FilterPolicy};
    /// assert_eq!(BloomPolicy::new(12).bits_per_key(), 12.0);
    /// assert_eq!(BloomPolicy::new(f64::NAN).bits_per_key(), 1.0); // clamped
    /// ```
    pub fn new(bits_per_key: impl Into<f64>) -> Self {
        let b: f64 = bits_per_key.into();
        let bits_per_key = if b.is_nan() {
            MIN_BITS_PER_KEY
        } else {
            b.clamp(MIN_BITS_PER_KEY, MAX_BITS_PER_KEY)
        };
        BloomPolicy { bits_per_key }
    }

    /// A policy with `bits_per_key` bits per key.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] unless `bits_per_key` is within
    /// [`MIN_BITS_PER_KEY`]`..=`[`MAX_BITS_PER_KEY`].
    ///
    /// # Examples
    /// ```
    /// use bloomkv::filter::BloomPolicy;
    /// assert!(BloomPolicy::try_new(10).is_ok());
    /// assert!(BloomPolicy::try_new(0.5).is_err());
    /// ```
    pub fn try_new(bits_per_key: impl Into<f64>) -> Result<Self> {
        let b: f64 = bits_per_key.into();
        if (MIN_BITS_PER_KEY..=MAX_BITS_PER_KEY).contains(&b) {
            Ok(BloomPolicy { bits_per_key: b })
        } else {
            Err(Error::InvalidArgument(format!(
                "bits_per_key must be within {MIN_BITS_PER_KEY}..={MAX_BITS_PER_KEY}, not {b}"
            )))
        }
    }

    /// Builds the filter as a [`BloomFilter`] (what [`FilterPolicy::create_filter_from_hashes`]
    /// serializes).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the filter would not fit in memory.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomPolicy, Layout, hash_key};
    /// let hashes = [hash_key(b"a"), hash_key(b"a"), hash_key(b"b")];
    /// let f = BloomPolicy::new(10).build(&hashes)?;
    /// assert_eq!((f.layout(), f.len()), (Layout::Blocked, 2)); // repeats count once
    /// assert!(f.contains(b"a") && f.contains(b"b"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn build(&self, hashes: &[u64]) -> Result<BloomFilter> {
        // Consecutive equal hashes are versions of one user key in a sorted table: size the
        // filter for distinct keys, not entries.
        let distinct = hashes.len() - hashes.windows(2).filter(|w| w[0] == w[1]).count();
        let (bits, k) = size_for_bits_per_key(Layout::Blocked, distinct.max(1), self.bits_per_key)?;
        let mut filter = BloomFilter::exactly(Layout::Blocked, bits, k)?;
        let mut previous = None;
        for &h in hashes {
            if previous != Some(h) {
                filter.insert_hash(h);
            }
            previous = Some(h);
        }
        // A table filter counts its distinct keys, including those that found all their
        // bits already set (FORMAT.md: "distinct adjacent hashes").
        filter.set_len(distinct as u64);
        Ok(filter)
    }
}

impl Default for BloomPolicy {
    /// 10 bits per key, about 1% false positives.
    fn default() -> Self {
        BloomPolicy::new(10.0)
    }
}

impl FilterPolicy for BloomPolicy {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn bits_per_key(&self) -> f64 {
        self.bits_per_key
    }

    fn with_bits_per_key(&self, bits_per_key: f64) -> Option<std::sync::Arc<dyn FilterPolicy>> {
        Some(std::sync::Arc::new(BloomPolicy::new(bits_per_key)))
    }

    fn predicted_fp_rate(&self, bits_per_key: f64) -> f64 {
        let b = BloomPolicy::new(bits_per_key).bits_per_key;
        // A large reference set: the blocked layout's rate per key barely depends on it.
        const N: u64 = 1 << 20;
        match size_for_bits_per_key(Layout::Blocked, N as usize, b) {
            Ok((bits, k)) => predicted_rate(Layout::Blocked, bits, N, k),
            Err(_) => 1.0,
        }
    }

    /// A blocked filter over `hashes` in the version-1 encoding (`docs/FORMAT.md`, "Filter
    /// block"), which [`BloomFilter::from_bytes`] reads. Should the filter not fit in memory,
    /// returns an empty vector, which every reader treats as "may contain".
    fn create_filter_from_hashes(&self, hashes: &[u64]) -> Vec<u8> {
        self.build(hashes)
            .map(|f| f.to_table_bytes())
            .unwrap_or_default()
    }

    fn check_filter(&self, filter: &[u8]) -> Result<()> {
        let view = encoding::validate(filter)?;
        if view.kind != Kind::Bloom {
            return Err(Error::corrupt_bytes(
                5,
                format!("{}, not a Bloom filter", view.kind.describe()),
            ));
        }
        Ok(())
    }

    #[inline]
    fn may_contain_hash(&self, filter: &[u8], hash: u64) -> bool {
        match encoding::peek(filter) {
            Some(v) if v.kind == Kind::Bloom => {
                contains_hash_in(v.layout, v.k, v.positions, v.payload, hash)
            }
            _ => true,
        }
    }

    fn expected_fp_rate(&self, filter: &[u8]) -> Option<f64> {
        let v = encoding::peek(filter)?;
        (v.kind == Kind::Bloom).then(|| predicted_rate(v.layout, v.positions, v.items, v.k))
    }
}
