//! [`AnyFilter`]: a standalone filter of whichever kind a file holds.

use std::path::Path;

use crate::error::{Error, Result};

use super::encoding::{self, Kind};
use super::{BloomFilter, CountingBloomFilter, ScalableBloomFilter, file};

/// One of the three standalone filter kinds, as read from bytes or a file whose kind is not
/// known in advance (what `kvctl filter` does). The serialized kind byte decides.
///
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::filter::{AnyFilter, CountingBloomFilter, FilterSize};
/// let mut c = CountingBloomFilter::new(FilterSize::for_items(100, 0.01))?;
/// c.insert("x");
/// let mut any = AnyFilter::from_bytes(&c.to_bytes())?;
/// assert_eq!(any.kind_name(), "counting");
/// assert!(any.contains("x"));
/// assert!(any.insert("y"));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnyFilter {
    /// A [`BloomFilter`].
    Bloom(BloomFilter),
    /// A [`CountingBloomFilter`].
    Counting(CountingBloomFilter),
    /// A [`ScalableBloomFilter`].
    Scalable(ScalableBloomFilter),
}

impl AnyFilter {
    /// Decodes bytes written by any kind's `to_bytes`.
    ///
    /// # Errors
    /// As the kind's own `from_bytes`; an unknown kind is [`Error::Corruption`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{AnyFilter, FilterSize, ScalableBloomFilter};
    /// let s = ScalableBloomFilter::new(100, 0.01)?;
    /// assert_eq!(AnyFilter::from_bytes(&s.to_bytes())?.kind_name(), "scalable");
    /// assert!(AnyFilter::from_bytes(b"not a filter").is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<AnyFilter> {
        // Check the envelope first so that damage is reported as such, not as a kind.
        encoding::check_envelope(bytes)?;
        match Kind::from_tag(bytes[5]) {
            Some(Kind::Bloom) => BloomFilter::from_bytes(bytes).map(AnyFilter::Bloom),
            Some(Kind::Counting) => CountingBloomFilter::from_bytes(bytes).map(AnyFilter::Counting),
            Some(Kind::Scalable) => ScalableBloomFilter::from_bytes(bytes).map(AnyFilter::Scalable),
            None => Err(Error::corrupt_bytes(
                5,
                format!("unknown filter kind {}", bytes[5]),
            )),
        }
    }

    /// Reads a filter file of any kind.
    ///
    /// # Errors
    /// As [`BloomFilter::load`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{AnyFilter, CountingBloomFilter, FilterSize};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("live.cbf");
    /// CountingBloomFilter::new(FilterSize::for_items(100, 0.01))?.save(&path)?;
    /// assert_eq!(AnyFilter::load(&path)?.kind_name(), "counting");
    /// # Ok(())
    /// # }
    /// ```
    pub fn load(path: impl AsRef<Path>) -> Result<AnyFilter> {
        let path = path.as_ref();
        let bytes = file::read(path)?;
        Self::from_bytes(&bytes).map_err(|e| file::locate(e, path))
    }

    /// Serializes with the kind's `to_bytes`.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{AnyFilter, BloomFilter, FilterSize};
    /// let any = AnyFilter::Bloom(BloomFilter::new(FilterSize::for_items(10, 0.1))?);
    /// assert_eq!(AnyFilter::from_bytes(&any.to_bytes())?, any);
    /// # Ok(())
    /// # }
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            AnyFilter::Bloom(f) => f.to_bytes(),
            AnyFilter::Counting(f) => f.to_bytes(),
            AnyFilter::Scalable(f) => f.to_bytes(),
        }
    }

    /// Writes the filter to `path` atomically.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{AnyFilter, BloomFilter, FilterSize};
    /// let dir = tempfile::tempdir()?;
    /// let mut any = AnyFilter::Bloom(BloomFilter::new(FilterSize::for_items(10, 0.1))?);
    /// any.insert("x");
    /// any.save(dir.path().join("f"))?;
    /// assert!(AnyFilter::load(dir.path().join("f"))?.contains("x"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        file::save_atomic(path.as_ref(), &self.to_bytes())
    }

    /// `"bloom"`, `"counting"` or `"scalable"`.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{AnyFilter, BloomFilter, FilterSize};
    /// let any = AnyFilter::Bloom(BloomFilter::new(FilterSize::for_items(10, 0.1))?);
    /// assert_eq!(any.kind_name(), "bloom");
    /// # Ok(())
    /// # }
    /// ```
    pub fn kind_name(&self) -> &'static str {
        match self {
            AnyFilter::Bloom(_) => "bloom",
            AnyFilter::Counting(_) => "counting",
            AnyFilter::Scalable(_) => "scalable",
        }
    }

    /// Adds a key; `true` if it was new.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{AnyFilter, ScalableBloomFilter};
    /// let mut any = AnyFilter::Scalable(ScalableBloomFilter::new(10, 0.01)?);
    /// assert!(any.insert("a"));
    /// assert!(!any.insert("a"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn insert(&mut self, key: impl AsRef<[u8]>) -> bool {
        match self {
            AnyFilter::Bloom(f) => f.insert(key),
            AnyFilter::Counting(f) => f.insert(key),
            AnyFilter::Scalable(f) => f.insert(key),
        }
    }

    /// May `key` be present?
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{AnyFilter, CountingBloomFilter, FilterSize};
    /// let mut any = AnyFilter::Counting(CountingBloomFilter::new(FilterSize::for_items(10, 0.01))?);
    /// any.insert("a");
    /// assert!(any.contains("a"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn contains(&self, key: impl AsRef<[u8]>) -> bool {
        match self {
            AnyFilter::Bloom(f) => f.contains(key),
            AnyFilter::Counting(f) => f.contains(key),
            AnyFilter::Scalable(f) => f.contains(key),
        }
    }

    /// The kind's `len`: items added (inserts that were new) for Bloom and scalable filters,
    /// insertions minus removals for a counting filter.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{AnyFilter, CountingBloomFilter, FilterSize};
    /// let mut any = AnyFilter::Counting(CountingBloomFilter::new(FilterSize::for_items(10, 0.01))?);
    /// any.insert("a");
    /// any.insert("a"); // a counting filter counts every insertion
    /// assert_eq!(any.len(), 2);
    /// # Ok(())
    /// # }
    /// ```
    pub fn len(&self) -> usize {
        match self {
            AnyFilter::Bloom(f) => f.len(),
            AnyFilter::Counting(f) => f.len(),
            AnyFilter::Scalable(f) => f.len(),
        }
    }

    /// True if [`AnyFilter::len`] is 0.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{AnyFilter, BloomFilter, FilterSize};
    /// let any = AnyFilter::Bloom(BloomFilter::new(FilterSize::for_items(10, 0.1))?);
    /// assert!(any.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The kind's `capacity` (for a scalable filter, of the stages so far).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{AnyFilter, BloomFilter, FilterSize};
    /// let any = AnyFilter::Bloom(BloomFilter::new(FilterSize::for_items(500, 0.1))?);
    /// assert_eq!(any.capacity(), 500);
    /// # Ok(())
    /// # }
    /// ```
    pub fn capacity(&self) -> usize {
        match self {
            AnyFilter::Bloom(f) => f.capacity(),
            AnyFilter::Counting(f) => f.capacity(),
            AnyFilter::Scalable(f) => f.capacity(),
        }
    }

    /// The kind's `error_rate`.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{AnyFilter, ScalableBloomFilter};
    /// let any = AnyFilter::Scalable(ScalableBloomFilter::new(100, 0.02)?);
    /// assert_eq!(any.error_rate(), 0.02);
    /// # Ok(())
    /// # }
    /// ```
    pub fn error_rate(&self) -> f64 {
        match self {
            AnyFilter::Bloom(f) => f.error_rate(),
            AnyFilter::Counting(f) => f.error_rate(),
            AnyFilter::Scalable(f) => f.error_rate(),
        }
    }

    /// Positions: bits (Bloom, scalable: all stages) or counters (counting).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{AnyFilter, BloomFilter, FilterSize};
    /// let any = AnyFilter::Bloom(BloomFilter::new(FilterSize::bits(4096, 5))?);
    /// assert_eq!(any.bit_len(), 4096);
    /// # Ok(())
    /// # }
    /// ```
    pub fn bit_len(&self) -> u64 {
        match self {
            AnyFilter::Bloom(f) => f.bit_len(),
            AnyFilter::Counting(f) => f.bit_len(),
            AnyFilter::Scalable(f) => f.bit_len(),
        }
    }

    /// Probes per key (of the newest stage for a scalable filter).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{AnyFilter, BloomFilter, FilterSize};
    /// let any = AnyFilter::Bloom(BloomFilter::new(FilterSize::bits(4096, 5))?);
    /// assert_eq!(any.num_hashes(), 5);
    /// # Ok(())
    /// # }
    /// ```
    pub fn num_hashes(&self) -> u32 {
        match self {
            AnyFilter::Bloom(f) => f.num_hashes(),
            AnyFilter::Counting(f) => f.num_hashes(),
            AnyFilter::Scalable(f) => f.stage_filters().last().map_or(0, BloomFilter::num_hashes),
        }
    }

    /// Fraction of positions set (non-zero).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{AnyFilter, BloomFilter, FilterSize};
    /// let mut any = AnyFilter::Bloom(BloomFilter::new(FilterSize::bits(1000, 3))?);
    /// assert_eq!(any.fill_ratio(), 0.0);
    /// any.insert("k");
    /// assert!(any.fill_ratio() > 0.0 && any.fill_ratio() <= 0.003);
    /// # Ok(())
    /// # }
    /// ```
    pub fn fill_ratio(&self) -> f64 {
        match self {
            AnyFilter::Bloom(f) => f.fill_ratio(),
            AnyFilter::Counting(f) => f.fill_ratio(),
            AnyFilter::Scalable(f) => f.fill_ratio(),
        }
    }

    /// The false-positive rate measured from the positions set.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{AnyFilter, BloomFilter, FilterSize};
    /// let mut any = AnyFilter::Bloom(BloomFilter::new(FilterSize::for_items(1000, 0.01))?);
    /// for i in 0..1000u32 {
    ///     any.insert(i.to_le_bytes());
    /// }
    /// assert!((any.estimated_fpr() - 0.01).abs() < 0.005);
    /// # Ok(())
    /// # }
    /// ```
    pub fn estimated_fpr(&self) -> f64 {
        match self {
            AnyFilter::Bloom(f) => f.estimated_fpr(),
            AnyFilter::Counting(f) => f.estimated_fpr(),
            AnyFilter::Scalable(f) => f.estimated_fpr(),
        }
    }

    /// Distinct items the positions set suggest: the kind's `estimated_len`. For a counting
    /// filter this, not [`AnyFilter::len`] (which counts every insertion), is the load to
    /// compare with the capacity.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{AnyFilter, CountingBloomFilter, FilterSize};
    /// let mut any = AnyFilter::Counting(CountingBloomFilter::new(FilterSize::for_items(100, 0.01))?);
    /// for _ in 0..5 {
    ///     any.insert("same");
    /// }
    /// assert_eq!((any.len(), any.estimated_len()), (5, 1));
    /// # Ok(())
    /// # }
    /// ```
    pub fn estimated_len(&self) -> usize {
        match self {
            AnyFilter::Bloom(f) => f.estimated_len(),
            AnyFilter::Counting(f) => f.estimated_len(),
            AnyFilter::Scalable(f) => f.estimated_len(),
        }
    }
}
