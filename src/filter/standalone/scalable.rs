//! [`ScalableBloomFilter`]: a Bloom filter that grows (Almeida, Baquero, Preguiça and Hutchison,
//! "Scalable Bloom Filters", 2007), as pybloom's `ScalableBloomFilter` and RedisBloom do it.

use std::path::Path;

use crate::error::{Error, Result};

use super::encoding::{self, Kind, VERSION};
use super::{BloomFilter, file};
use crate::filter::layout::hash_key;

/// Most stages a filter may grow to; with growth 2 that is 2^63 times the initial capacity.
const MAX_STAGES: usize = 64;

/// A chain of standard-layout [`BloomFilter`]s, each `growth` times larger than the one before
/// and built for a rate `tightening` times lower, so that the overall false-positive rate stays
/// within the error rate however many items arrive.
///
/// Stage `i` (from 0) has capacity `initial_capacity * growth^i` and error rate
/// `error_rate * (1 - tightening) * tightening^i`; the rates sum to at most `error_rate`
/// (a geometric series), and a key is a false positive of the whole when it is one of any
/// stage, so the compounded rate `1 - Π(1 - p_i)` is below that sum. New items go into the
/// last stage; when it holds its capacity, a new stage is added.
///
/// That argument needs each stage to really keep its `p_i`, which small stages with tight
/// rates (a small initial capacity) do not when sized by the textbook formula. Each stage is
/// a [`BloomFilter`] for a capacity at a rate ([`super::FilterSize::for_items`]), sized by [`crate::filter::math::standard_sizing`] to keep its
/// rate, small-filter effects included. The bound is on the expected rate; one filter's own
/// rate spreads around it, by more the smaller its first stage (`docs/FILTERS.md`).
///
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::filter::ScalableBloomFilter;
/// let mut seen = ScalableBloomFilter::new(100, 0.01)?;
/// for i in 0..10_000u32 {
///     seen.insert(i.to_le_bytes());
/// }
/// assert!(seen.contains(42u32.to_le_bytes()));
/// assert!(seen.stages() > 1);
/// assert!(seen.estimated_fpr() <= 0.01);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalableBloomFilter {
    initial_capacity: u64,
    /// `f64::to_bits` of the overall error rate.
    error_rate: u64,
    growth: u32,
    /// `f64::to_bits` of the tightening ratio.
    tightening: u64,
    stages: Vec<BloomFilter>,
}

impl ScalableBloomFilter {
    /// Growth factor used by [`ScalableBloomFilter::new`] (pybloom's `SMALL_SET_GROWTH`).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// let f = ScalableBloomFilter::new(100, 0.01)?;
    /// assert_eq!(f.growth(), ScalableBloomFilter::DEFAULT_GROWTH);
    /// # Ok(())
    /// # }
    /// ```
    pub const DEFAULT_GROWTH: u32 = 2;
    /// Tightening ratio used by [`ScalableBloomFilter::new`] (pybloom's default, the value
    /// Almeida et al. recommend for growth 2).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// let f = ScalableBloomFilter::new(100, 0.01)?;
    /// assert_eq!(f.tightening(), ScalableBloomFilter::DEFAULT_TIGHTENING);
    /// # Ok(())
    /// # }
    /// ```
    pub const DEFAULT_TIGHTENING: f64 = 0.9;

    /// A filter whose first stage holds `initial_capacity` items, with overall false-positive
    /// rate at most `error_rate`, growth 2 and tightening ratio 0.9.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// let f = ScalableBloomFilter::new(1000, 0.001)?;
    /// assert_eq!((f.growth(), f.tightening()), (2, 0.9));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// As [`ScalableBloomFilter::with_growth`].
    pub fn new(initial_capacity: usize, error_rate: f64) -> Result<Self> {
        Self::with_growth(
            initial_capacity,
            error_rate,
            Self::DEFAULT_GROWTH,
            Self::DEFAULT_TIGHTENING,
        )
    }

    /// A filter with an explicit growth factor (2 or 4: each stage is that many times larger
    /// than the one before) and tightening ratio (in `0.5..1`: each stage's rate is that many
    /// times the previous one's; RedisBloom uses 0.5, pybloom 0.9).
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// let mut f = ScalableBloomFilter::with_growth(10, 0.01, 4, 0.5)?;
    /// for i in 0..50u32 { f.insert(i.to_le_bytes()); }
    /// assert_eq!(f.stages(), 2); // 10 + 40 items
    /// assert!(ScalableBloomFilter::with_growth(10, 0.01, 3, 0.5).is_err());
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `initial_capacity` is 0, `error_rate` is not strictly
    /// between 0 and 1, `growth` is not 2 or 4, or `tightening` is outside `0.5..1`.
    pub fn with_growth(
        initial_capacity: usize,
        error_rate: f64,
        growth: u32,
        tightening: f64,
    ) -> Result<Self> {
        check_params(initial_capacity as u64, error_rate, growth, tightening)
            .map_err(Error::InvalidArgument)?;
        let mut f = ScalableBloomFilter {
            initial_capacity: initial_capacity as u64,
            error_rate: error_rate.to_bits(),
            growth,
            tightening: tightening.to_bits(),
            stages: Vec::new(),
        };
        f.add_stage()?;
        Ok(f)
    }

    /// Capacity and rate of stage `i`, or `None` past the last stage this filter may have.
    fn stage_sizing(&self, i: usize) -> Option<(u64, f64)> {
        stage_sizing(
            self.initial_capacity,
            self.error_rate(),
            self.growth,
            self.tightening(),
            i,
        )
    }

    fn add_stage(&mut self) -> Result<()> {
        let (capacity, rate) = self.stage_sizing(self.stages.len()).ok_or_else(|| {
            Error::InvalidArgument("the scalable filter cannot grow any further".into())
        })?;
        let capacity = usize::try_from(capacity)
            .map_err(|_| Error::InvalidArgument("stage capacity overflows".into()))?;
        self.stages.push(BloomFilter::for_rate(
            crate::filter::layout::Layout::Standard,
            capacity,
            rate,
        )?);
        Ok(())
    }

    /// Adds a key; returns `true` if it was new (no stage reported it present), like
    /// [`BloomFilter::insert`]. A new key goes into the last stage, after adding a stage if
    /// the last one is full. (Should a new stage be impossible — out of memory, or all 64
    /// stages used — the key goes into the last stage anyway: never a lost key, only a higher
    /// rate, which [`ScalableBloomFilter::estimated_fpr`] reports.)
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// let mut f = ScalableBloomFilter::new(100, 0.01)?;
    /// assert!(f.insert("a"));
    /// assert!(!f.insert("a"));
    /// assert_eq!(f.len(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn insert(&mut self, key: impl AsRef<[u8]>) -> bool {
        self.insert_hash(hash_key(key.as_ref()))
    }

    /// [`ScalableBloomFilter::insert`] for a key given by its [`hash_key`] hash.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{ScalableBloomFilter, hash_key};
    /// let mut f = ScalableBloomFilter::new(10, 0.01)?;
    /// assert!(f.insert_hash(hash_key(b"k")));
    /// assert!(f.contains(b"k"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn insert_hash(&mut self, hash: u64) -> bool {
        if self.contains_hash(hash) {
            return false;
        }
        if self.stages.last().is_none_or(BloomFilter::is_full) {
            // On failure the key goes into the (full) last stage; see above.
            let _ = self.add_stage();
        }
        match self.stages.last_mut() {
            Some(last) => last.insert_hash(hash),
            None => false,
        }
    }

    /// May `key` have been inserted? Never `false` for an inserted key.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// let mut f = ScalableBloomFilter::new(10, 0.01)?;
    /// for i in 0..100u32 {
    ///     f.insert(i.to_le_bytes()); // ten times the first stage: it grows
    /// }
    /// assert!((0..100u32).all(|i| f.contains(i.to_le_bytes())));
    /// # Ok(())
    /// # }
    /// ```
    pub fn contains(&self, key: impl AsRef<[u8]>) -> bool {
        self.contains_hash(hash_key(key.as_ref()))
    }

    /// [`ScalableBloomFilter::contains`] for a key given by its [`hash_key`] hash.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{ScalableBloomFilter, hash_key};
    /// let mut f = ScalableBloomFilter::new(10, 0.01)?;
    /// f.insert("k");
    /// assert!(f.contains_hash(hash_key(b"k")));
    /// # Ok(())
    /// # }
    /// ```
    pub fn contains_hash(&self, hash: u64) -> bool {
        // Newest (largest) stage first: most keys live there.
        self.stages.iter().rev().any(|s| s.contains_hash(hash))
    }

    /// Items added (inserts that returned `true`), over all stages.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// let mut f = ScalableBloomFilter::new(10, 0.01)?;
    /// f.insert("a");
    /// f.insert("a");
    /// assert_eq!(f.len(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn len(&self) -> usize {
        self.stages.iter().map(BloomFilter::len).sum()
    }

    /// True if nothing was added.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// assert!(ScalableBloomFilter::new(10, 0.01)?.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Items the stages built so far can hold before another stage is added.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// let mut f = ScalableBloomFilter::new(10, 0.01)?;
    /// assert_eq!(f.capacity(), 10);
    /// for i in 0..11u32 {
    ///     f.insert(i.to_le_bytes());
    /// }
    /// assert_eq!(f.capacity(), 10 + 20); // a second stage, twice the first
    /// # Ok(())
    /// # }
    /// ```
    pub fn capacity(&self) -> usize {
        self.stages.iter().map(BloomFilter::capacity).sum()
    }

    /// Capacity of the first stage.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// assert_eq!(ScalableBloomFilter::new(64, 0.01)?.initial_capacity(), 64);
    /// # Ok(())
    /// # }
    /// ```
    pub fn initial_capacity(&self) -> usize {
        usize::try_from(self.initial_capacity).unwrap_or(usize::MAX)
    }

    /// The overall false-positive rate the filter stays within.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// assert_eq!(ScalableBloomFilter::new(64, 0.001)?.error_rate(), 0.001);
    /// # Ok(())
    /// # }
    /// ```
    pub fn error_rate(&self) -> f64 {
        f64::from_bits(self.error_rate)
    }

    /// Each stage's capacity is this many times the previous one's (2 or 4).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// assert_eq!(ScalableBloomFilter::with_growth(64, 0.01, 4, 0.5)?.growth(), 4);
    /// # Ok(())
    /// # }
    /// ```
    pub fn growth(&self) -> u32 {
        self.growth
    }

    /// Each stage's error rate is this many times the previous one's.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// assert_eq!(ScalableBloomFilter::with_growth(64, 0.01, 4, 0.5)?.tightening(), 0.5);
    /// # Ok(())
    /// # }
    /// ```
    pub fn tightening(&self) -> f64 {
        f64::from_bits(self.tightening)
    }

    /// Number of stages (Bloom filters) so far.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// let mut f = ScalableBloomFilter::new(10, 0.01)?;
    /// assert_eq!(f.stages(), 1);
    /// for i in 0..11u32 {
    ///     f.insert(i.to_le_bytes());
    /// }
    /// assert_eq!(f.stages(), 2);
    /// # Ok(())
    /// # }
    /// ```
    pub fn stages(&self) -> usize {
        self.stages.len()
    }

    /// The stages, oldest (smallest) first.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// let mut f = ScalableBloomFilter::new(10, 0.01)?;
    /// for i in 0..11u32 {
    ///     f.insert(i.to_le_bytes());
    /// }
    /// let caps: Vec<usize> = f.stage_filters().iter().map(|s| s.capacity()).collect();
    /// assert_eq!(caps, [10, 20]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn stage_filters(&self) -> &[BloomFilter] {
        &self.stages
    }

    /// Total bits over all stages.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// let f = ScalableBloomFilter::new(10, 0.01)?;
    /// assert_eq!(f.bit_len(), f.stage_filters()[0].bit_len());
    /// # Ok(())
    /// # }
    /// ```
    pub fn bit_len(&self) -> u64 {
        self.stages.iter().map(BloomFilter::bit_len).sum()
    }

    /// Fraction of all bits set, over all stages.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// let mut f = ScalableBloomFilter::new(100, 0.01)?;
    /// assert_eq!(f.fill_ratio(), 0.0);
    /// f.insert("k");
    /// assert!(f.fill_ratio() > 0.0);
    /// # Ok(())
    /// # }
    /// ```
    pub fn fill_ratio(&self) -> f64 {
        let ones: f64 = self
            .stages
            .iter()
            .map(|s| s.fill_ratio() * s.bit_len() as f64)
            .sum();
        ones / self.bit_len().max(1) as f64
    }

    /// The false-positive rate measured from the bits set: `1 - Π(1 - fpr_i)` over the
    /// stages' [`BloomFilter::estimated_fpr`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// let mut f = ScalableBloomFilter::new(100, 0.01)?;
    /// for i in 0..1000u32 {
    ///     f.insert(i.to_le_bytes());
    /// }
    /// assert!(f.estimated_fpr() < 0.01);
    /// # Ok(())
    /// # }
    /// ```
    pub fn estimated_fpr(&self) -> f64 {
        1.0 - self
            .stages
            .iter()
            .map(|s| 1.0 - s.estimated_fpr())
            .product::<f64>()
    }

    /// Distinct items the bits suggest, summed over the stages
    /// ([`BloomFilter::estimated_len`]).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// let mut f = ScalableBloomFilter::new(100, 0.01)?;
    /// for i in 0..500u32 {
    ///     f.insert(i.to_le_bytes());
    /// }
    /// assert!((f.estimated_len() as i64 - 500).abs() < 25);
    /// # Ok(())
    /// # }
    /// ```
    pub fn estimated_len(&self) -> usize {
        self.stages.iter().map(BloomFilter::estimated_len).sum()
    }

    /// Empties the filter back to one empty stage.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// let mut f = ScalableBloomFilter::new(10, 0.01)?;
    /// for i in 0..100u32 { f.insert(i.to_le_bytes()); }
    /// f.clear();
    /// assert_eq!((f.len(), f.stages()), (0, 1));
    /// # Ok(())
    /// # }
    /// ```
    pub fn clear(&mut self) {
        self.stages.truncate(1);
        if let Some(first) = self.stages.first_mut() {
            first.clear();
        }
    }

    fn check_same_parameters(&self, other: &ScalableBloomFilter, op: &str) -> Result<()> {
        if self.initial_capacity != other.initial_capacity
            || self.error_rate != other.error_rate
            || self.growth != other.growth
            || self.tightening != other.tightening
        {
            return Err(Error::InvalidArgument(format!(
                "{op} needs scalable filters of the same parameters: initial capacity {}, \
                 error rate {}, growth {}, tightening {} vs {}, {}, {}, {}",
                self.initial_capacity,
                self.error_rate(),
                self.growth,
                self.tightening(),
                other.initial_capacity,
                other.error_rate(),
                other.growth,
                other.tightening()
            )));
        }
        Ok(())
    }

    /// Adds every key of `other`, stage by stage. Two filters with the same parameters
    /// (initial capacity, error rate, growth, tightening) have stages of the same shape at
    /// each position, so stage `i` becomes the union of the two stages `i`
    /// ([`BloomFilter::union`]), and the stages only `other` has are appended. Afterwards the
    /// filter answers `true` for every key either held. A stage may then hold more than its
    /// capacity, so the rate can exceed the error rate until new stages dilute it;
    /// [`ScalableBloomFilter::estimated_fpr`] tells. New keys go into the last stage as usual.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// let mut a = ScalableBloomFilter::new(10, 0.01)?;
    /// let mut b = ScalableBloomFilter::new(10, 0.01)?;
    /// for i in 0..100u32 { b.insert(i.to_le_bytes()); }
    /// a.insert("x");
    /// a.union(&b)?;
    /// assert!(a.contains("x") && a.contains(42u32.to_le_bytes()));
    /// assert_eq!(a.stages(), b.stages());
    /// assert!(a.union(&ScalableBloomFilter::new(20, 0.01)?).is_err());
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the parameters differ.
    pub fn union(&mut self, other: &ScalableBloomFilter) -> Result<()> {
        self.check_same_parameters(other, "union")?;
        for (mine, theirs) in self.stages.iter_mut().zip(&other.stages) {
            mine.union(theirs)?;
        }
        let have = self.stages.len();
        self.stages.extend(other.stages.iter().skip(have).cloned());
        Ok(())
    }

    /// Keeps only the keys both filters may hold, for filters that have not grown: with one
    /// stage each (and the same parameters) that is [`BloomFilter::intersect`] of the two.
    /// Once either has grown, a key the two share may sit in stages of different sizes in
    /// each, and no bitwise operation on stages can keep it, so this is an error rather
    /// than a filter that would miss keys.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// let mut a = ScalableBloomFilter::new(100, 0.01)?;
    /// let mut b = ScalableBloomFilter::new(100, 0.01)?;
    /// a.insert("both"); a.insert("only a");
    /// b.insert("both");
    /// a.intersect(&b)?;
    /// assert!(a.contains("both") && !a.contains("only a"));
    /// for i in 0..1000u32 { b.insert(i.to_le_bytes()); }
    /// assert!(a.intersect(&b).is_err()); // b has grown
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the parameters differ or either filter has more than
    /// one stage.
    pub fn intersect(&mut self, other: &ScalableBloomFilter) -> Result<()> {
        self.check_same_parameters(other, "intersect")?;
        if self.stages.len() != 1 || other.stages.len() != 1 {
            return Err(Error::InvalidArgument(format!(
                "intersect of scalable filters needs one stage each, not {} and {}: a shared \
                 key may sit in stages of different sizes",
                self.stages.len(),
                other.stages.len()
            )));
        }
        match (self.stages.first_mut(), other.stages.first()) {
            (Some(mine), Some(theirs)) => mine.intersect(theirs),
            _ => Ok(()),
        }
    }

    /// Serializes the filter (format version 2, kind 2, `docs/FORMAT.md`): header with the
    /// parameters, each stage as a length-prefixed [`BloomFilter::to_bytes`], CRC-32.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// let mut f = ScalableBloomFilter::new(10, 0.01)?;
    /// for i in 0..100u32 { f.insert(i.to_le_bytes()); }
    /// assert_eq!(ScalableBloomFilter::from_bytes(&f.to_bytes())?, f);
    /// # Ok(())
    /// # }
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&encoding::MAGIC);
        out.push(VERSION);
        out.push(Kind::Scalable.tag());
        out.push(0); // layout of every stage: standard
        out.push(self.growth as u8);
        out.extend_from_slice(&self.initial_capacity.to_le_bytes());
        out.extend_from_slice(&(self.len() as u64).to_le_bytes());
        out.extend_from_slice(&self.error_rate.to_le_bytes());
        out.extend_from_slice(&self.tightening.to_le_bytes());
        out.extend_from_slice(&(self.stages.len() as u32).to_le_bytes());
        for s in &self.stages {
            let bytes = s.to_bytes();
            out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            out.extend_from_slice(&bytes);
        }
        encoding::seal(&mut out);
        out
    }

    /// Reads a filter written by [`ScalableBloomFilter::to_bytes`]. Every stage is checked
    /// against the parameters (its capacity and rate must be exactly what they dictate).
    ///
    /// # Errors
    /// [`Error::Corruption`] with the offset of the problem for damaged, truncated or
    /// inconsistent input; [`Error::WrongFilterKind`] for another kind's intact bytes;
    /// [`Error::UnsupportedVersion`] for a newer format.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize, ScalableBloomFilter};
    /// let mut f = ScalableBloomFilter::new(10, 0.01)?;
    /// f.insert("k");
    /// assert_eq!(ScalableBloomFilter::from_bytes(&f.to_bytes())?, f);
    /// let plain = BloomFilter::new(FilterSize::for_items(10, 0.01))?;
    /// assert!(ScalableBloomFilter::from_bytes(&plain.to_bytes()).is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let (version, body) = encoding::check_envelope(bytes)?;
        match Kind::from_tag(bytes[5]) {
            Some(Kind::Scalable) => {}
            // The envelope's checksum held: these are another kind's intact bytes.
            Some(other) => return Err(other.wrong(Kind::Scalable)),
            None => {
                return Err(Error::corrupt_bytes(
                    5,
                    format!(
                        "an unknown kind of filter ({}), not a scalable Bloom filter",
                        bytes[5]
                    ),
                ));
            }
        }
        if version != VERSION {
            return Err(Error::corrupt_bytes(
                4,
                format!("a scalable filter needs format version {VERSION}, not {version}"),
            ));
        }
        if bytes[6] != 0 {
            return Err(Error::corrupt_bytes(
                6,
                format!("unknown stage layout {}", bytes[6]),
            ));
        }
        const FIXED: usize = 44;
        if body.len() < FIXED {
            return Err(Error::corrupt_bytes(
                body.len() as u64,
                "scalable filter header truncated",
            ));
        }
        let growth = u32::from(bytes[7]);
        let initial = encoding::u64_at(body, 8).unwrap_or(0);
        let items = encoding::u64_at(body, 16).unwrap_or(0);
        let rate = encoding::f64_at(body, 24).unwrap_or(f64::NAN);
        let tightening = encoding::f64_at(body, 32).unwrap_or(f64::NAN);
        let count = u32::from_le_bytes([body[40], body[41], body[42], body[43]]) as usize;
        if let Err(why) = check_params(initial, rate, growth, tightening) {
            return Err(Error::corrupt_bytes(7, why));
        }
        if count == 0 || count > MAX_STAGES {
            return Err(Error::corrupt_bytes(
                40,
                format!("{count} stages (must be 1..={MAX_STAGES})"),
            ));
        }
        let mut f = ScalableBloomFilter {
            initial_capacity: initial,
            error_rate: rate.to_bits(),
            growth,
            tightening: tightening.to_bits(),
            stages: Vec::new(),
        };
        let mut at = FIXED;
        for i in 0..count {
            let len = encoding::u64_at(body, at)
                .and_then(|l| usize::try_from(l).ok())
                .filter(|&l| l <= body.len() - at - 8)
                .ok_or_else(|| {
                    Error::corrupt_bytes(at as u64, format!("stage {i} length runs past the end"))
                })?;
            let start = at + 8;
            let stage = BloomFilter::from_bytes(&body[start..start + len])
                .map_err(|e| e.located(Path::new(""), start as u64))?;
            let expected = f.stage_sizing(i);
            let fits = expected.is_some_and(|(cap, r)| {
                stage.capacity() as u64 == cap
                    && stage.error_rate().to_bits() == r.to_bits()
                    && stage.layout() == crate::filter::layout::Layout::Standard
                    && (i + 1 == count || stage.is_full())
            });
            if !fits {
                return Err(Error::corrupt_bytes(
                    start as u64,
                    format!("stage {i} does not match the filter's parameters"),
                ));
            }
            f.stages.push(stage);
            at = start + len;
        }
        if at != body.len() {
            return Err(Error::corrupt_bytes(
                at as u64,
                "bytes after the last stage",
            ));
        }
        if f.len() as u64 != items {
            return Err(Error::corrupt_bytes(
                16,
                format!("item count {items} is not the stages' {}", f.len()),
            ));
        }
        Ok(f)
    }

    /// Writes [`ScalableBloomFilter::to_bytes`] to `path` atomically.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// let dir = tempfile::tempdir()?;
    /// let mut f = ScalableBloomFilter::new(10, 0.01)?;
    /// f.insert("x");
    /// f.save(dir.path().join("urls.sbf"))?;
    /// assert!(ScalableBloomFilter::load(dir.path().join("urls.sbf"))?.contains("x"));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        file::save_atomic(path.as_ref(), &self.to_bytes())
    }

    /// Reads a filter saved by [`ScalableBloomFilter::save`].
    ///
    /// # Errors
    /// As [`BloomFilter::load`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::ScalableBloomFilter;
    /// let dir = tempfile::tempdir()?;
    /// let mut f = ScalableBloomFilter::new(10, 0.01)?;
    /// f.insert("k");
    /// f.save(dir.path().join("s"))?;
    /// assert_eq!(ScalableBloomFilter::load(dir.path().join("s"))?, f);
    /// # Ok(())
    /// # }
    /// ```
    pub fn load(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let bytes = file::read(path)?;
        Self::from_bytes(&bytes).map_err(|e| file::locate(e, path))
    }
}

fn check_params(
    initial: u64,
    rate: f64,
    growth: u32,
    tightening: f64,
) -> std::result::Result<(), String> {
    if initial == 0 || usize::try_from(initial).is_err() {
        return Err(format!("initial capacity {initial} is not a usable count"));
    }
    if !(rate > 0.0 && rate < 1.0) {
        return Err(format!(
            "error rate must be strictly between 0 and 1, not {rate}"
        ));
    }
    if growth != 2 && growth != 4 {
        return Err(format!("growth factor must be 2 or 4, not {growth}"));
    }
    if !(0.5..1.0).contains(&tightening) {
        return Err(format!(
            "tightening ratio must be in 0.5..1, not {tightening}"
        ));
    }
    Ok(())
}

/// Capacity `initial * growth^i` and rate `rate * (1 - r) * r^i` of stage `i`; `None` on
/// overflow or past [`MAX_STAGES`].
fn stage_sizing(initial: u64, rate: f64, growth: u32, r: f64, i: usize) -> Option<(u64, f64)> {
    if i >= MAX_STAGES {
        return None;
    }
    let cap = u64::from(growth)
        .checked_pow(u32::try_from(i).ok()?)
        .and_then(|g| g.checked_mul(initial))?;
    let p = rate * (1.0 - r) * r.powi(i32::try_from(i).ok()?);
    (p > 0.0).then_some((cap, p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_rates_sum_within_the_error_rate() {
        for (g, r) in [(2, 0.5), (2, 0.9), (4, 0.5), (4, 0.9)] {
            let rates: Vec<f64> = (0..MAX_STAGES)
                .map_while(|i| stage_sizing(10, 0.01, g, r, i))
                .map(|(_, p)| p)
                .collect();
            let total: f64 = rates.iter().sum();
            // A geometric series: 0.01 * (1 - r^stages), never above 0.01.
            let expected = 0.01 * (1.0 - r.powi(rates.len() as i32));
            assert!(total <= 0.01, "{g} {r}: {total}");
            assert!(
                (total - expected).abs() < 1e-12,
                "{g} {r}: {total} vs {expected}"
            );
        }
        assert_eq!(stage_sizing(10, 0.01, 4, 0.5, 2).map(|s| s.0), Some(160));
        assert_eq!(stage_sizing(1 << 40, 0.01, 4, 0.5, 20), None);
    }
}
