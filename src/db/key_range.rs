//! [`KeyRange`]: the ranges [`Db::scan`](crate::Db::scan) accepts.

use std::ops::{Bound, Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};

/// Key ranges accepted by [`Db::scan`](crate::Db::scan): `..`, `a..b`, `a..=b`, `a..`, `..b`,
/// `..=b`, and `(Bound, Bound)` pairs, over anything that is `AsRef<[u8]>`.
pub trait KeyRange {
    /// The range as owned start and end bounds.
    fn into_bounds(self) -> (Bound<Vec<u8>>, Bound<Vec<u8>>);
}

fn owned<K: AsRef<[u8]>>(b: Bound<K>) -> Bound<Vec<u8>> {
    match b {
        Bound::Included(k) => Bound::Included(k.as_ref().to_vec()),
        Bound::Excluded(k) => Bound::Excluded(k.as_ref().to_vec()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

impl KeyRange for RangeFull {
    fn into_bounds(self) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
        (Bound::Unbounded, Bound::Unbounded)
    }
}
impl<K: AsRef<[u8]>> KeyRange for Range<K> {
    fn into_bounds(self) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
        (
            owned(Bound::Included(self.start)),
            owned(Bound::Excluded(self.end)),
        )
    }
}
impl<K: AsRef<[u8]>> KeyRange for RangeInclusive<K> {
    fn into_bounds(self) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
        let (s, e) = self.into_inner();
        (owned(Bound::Included(s)), owned(Bound::Included(e)))
    }
}
impl<K: AsRef<[u8]>> KeyRange for RangeFrom<K> {
    fn into_bounds(self) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
        (owned(Bound::Included(self.start)), Bound::Unbounded)
    }
}
impl<K: AsRef<[u8]>> KeyRange for RangeTo<K> {
    fn into_bounds(self) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
        (Bound::Unbounded, owned(Bound::Excluded(self.end)))
    }
}
impl<K: AsRef<[u8]>> KeyRange for RangeToInclusive<K> {
    fn into_bounds(self) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
        (Bound::Unbounded, owned(Bound::Included(self.end)))
    }
}
impl<K: AsRef<[u8]>> KeyRange for (Bound<K>, Bound<K>) {
    fn into_bounds(self) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
        (owned(self.0), owned(self.1))
    }
}
