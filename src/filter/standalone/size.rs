//! [`FilterSize`]: how big a standalone [`BloomFilter`](super::BloomFilter) or
//! [`CountingBloomFilter`](super::CountingBloomFilter) is, the one argument of their `new`.

use crate::error::{Error, Result};

use crate::filter::layout::Layout;
use crate::filter::layout::MAX_HASHES;

/// What a standalone filter is sized for, in one of three ways, and its [`Layout`]
/// (standard unless [`FilterSize::blocked`] or [`FilterSize::with_layout`] says otherwise).
///
/// * [`FilterSize::for_items`]: `capacity` items at false-positive rate `error_rate` (pybloom's
///   `BloomFilter(capacity, error_rate)`, RedisBloom's `BF.RESERVE`);
/// * [`FilterSize::bits_per_key`]: `bits_per_key` bits (counters) per item for `capacity`
///   items, the best number of probes for that;
/// * [`FilterSize::bits`]: exactly `bits` bits (counters) and `k` probes per key.
///
/// Arguments are checked by the filter's `new`, and an error names the argument as the
/// constructor here calls it.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::filter::{BloomFilter, CountingBloomFilter, FilterSize, Layout};
///
/// let urls = BloomFilter::new(FilterSize::for_items(1_000_000, 0.01))?;
/// assert_eq!((urls.capacity(), urls.error_rate()), (1_000_000, 0.01));
///
/// let blocked = BloomFilter::new(FilterSize::bits_per_key(1000, 10).blocked())?;
/// assert_eq!(blocked.layout(), Layout::Blocked);
///
/// let exact = CountingBloomFilter::new(FilterSize::bits(4096, 7))?;
/// assert_eq!((exact.bit_len(), exact.num_hashes()), (4096, 7));
///
/// let err = BloomFilter::new(FilterSize::for_items(0, 0.01)).unwrap_err();
/// assert!(err.to_string().contains("capacity"));
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FilterSize {
    spec: Spec,
    layout: Layout,
}

/// The three ways to size a filter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Spec {
    Items { capacity: usize, error_rate: f64 },
    BitsPerKey { capacity: usize, bits_per_key: f64 },
    Bits { bits: u64, k: u32 },
}

impl FilterSize {
    /// `capacity` items at false-positive rate `error_rate`: the fewest bits (and the best
    /// number of probes) that keep the rate up to that many items (see
    /// [`math::standard_sizing`](crate::filter::math::standard_sizing) and
    /// [`math::blocked_bits_per_key`](crate::filter::math::blocked_bits_per_key)).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize};
    /// let f = BloomFilter::new(FilterSize::for_items(1000, 0.001))?;
    /// assert_eq!(f.num_hashes(), 10);
    /// # Ok(())
    /// # }
    /// ```
    pub fn for_items(capacity: usize, error_rate: f64) -> FilterSize {
        FilterSize {
            spec: Spec::Items {
                capacity,
                error_rate,
            },
            layout: Layout::Standard,
        }
    }

    /// `bits_per_key` bits (or counters) per item for `capacity` items (rounded up to whole
    /// 512-bit blocks in the blocked layout), with the best number of probes for that many.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize};
    /// let f = BloomFilter::new(FilterSize::bits_per_key(100, 10))?;
    /// assert_eq!((f.bit_len(), f.capacity()), (1000, 100));
    /// # Ok(())
    /// # }
    /// ```
    pub fn bits_per_key(capacity: usize, bits_per_key: impl Into<f64>) -> FilterSize {
        FilterSize {
            spec: Spec::BitsPerKey {
                capacity,
                bits_per_key: bits_per_key.into(),
            },
            layout: Layout::Standard,
        }
    }

    /// Exactly `bits` bits (or counters; rounded up to whole blocks in the blocked layout)
    /// and `k` probes per key. The filter's capacity is then the load for which `k` is the
    /// best probe count, `floor(bits ln 2 / k)`, and its error rate the one predicted there.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize};
    /// let f = BloomFilter::new(FilterSize::bits(1024, 7))?;
    /// assert_eq!((f.bit_len(), f.num_hashes(), f.capacity()), (1024, 7, 101));
    /// # Ok(())
    /// # }
    /// ```
    pub fn bits(bits: u64, k: u32) -> FilterSize {
        FilterSize {
            spec: Spec::Bits { bits, k },
            layout: Layout::Standard,
        }
    }

    /// The same size in the [`Layout::Blocked`] layout (every key's probes in one 512-bit
    /// block: one cache miss per lookup, a few percent more bits for the same rate), which
    /// SSTables use.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize, Layout};
    /// let f = BloomFilter::new(FilterSize::for_items(10_000, 0.01).blocked())?;
    /// assert_eq!(f.layout(), Layout::Blocked);
    /// assert_eq!(f.bit_len() % 512, 0);
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn blocked(self) -> FilterSize {
        self.with_layout(Layout::Blocked)
    }

    /// The same size in `layout`.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::filter::{FilterSize, Layout};
    /// let s = FilterSize::bits(4096, 6).with_layout(Layout::Blocked);
    /// assert_eq!(s.layout(), Layout::Blocked);
    /// ```
    #[must_use]
    pub fn with_layout(self, layout: Layout) -> FilterSize {
        FilterSize { layout, ..self }
    }

    /// The layout a filter of this size gets.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::filter::{FilterSize, Layout};
    /// assert_eq!(FilterSize::for_items(10, 0.1).layout(), Layout::Standard);
    /// ```
    pub fn layout(&self) -> Layout {
        self.layout
    }

    pub(crate) fn spec(&self) -> Spec {
        self.spec
    }

    /// Checks the arguments, naming them as the constructor that took them calls them.
    pub(crate) fn check(&self) -> Result<()> {
        let bad = |why: String| Err(Error::InvalidArgument(why));
        match self.spec {
            Spec::Items {
                capacity,
                error_rate,
            } => {
                if capacity == 0 {
                    return bad("FilterSize::for_items: capacity must be at least 1".into());
                }
                if !(error_rate > 0.0 && error_rate < 1.0) {
                    return bad(format!(
                        "FilterSize::for_items: error_rate must be strictly between 0 and 1, \
                         not {error_rate}"
                    ));
                }
            }
            Spec::BitsPerKey {
                capacity,
                bits_per_key,
            } => {
                if capacity == 0 {
                    return bad("FilterSize::bits_per_key: capacity must be at least 1".into());
                }
                if !(bits_per_key.is_finite() && bits_per_key > 0.0) {
                    return bad(format!(
                        "FilterSize::bits_per_key: bits_per_key must be a positive number, not \
                         {bits_per_key}"
                    ));
                }
            }
            Spec::Bits { bits, k } => {
                if bits == 0 {
                    return bad("FilterSize::bits: bits must be at least 1".into());
                }
                if k == 0 || k > MAX_HASHES {
                    return bad(format!(
                        "FilterSize::bits: k must be within 1..={MAX_HASHES}, not {k}"
                    ));
                }
            }
        }
        Ok(())
    }
}
