//! A cuckoo filter's metadata (`Meta::Cuckoo`): the library's [`CuckooState`] (parameters,
//! sub-filter sizes, counts) and its encoding in the metadata key. The filter's slots live in
//! chunks under tag `k`; its commands are `cmd::cuckoo`.
//!
//! ```text
//! capacity u64 | bucket size u16 | max iterations u16 | expansion u16 |
//! inserted u64 | deleted u64 | sub-filters u32 | buckets u64 per sub-filter
//! ```
//! All integers little-endian.

use bloomkv::filter::{CuckooParams, CuckooState};

/// Appends the encoding of `s` (after the type tag and version) to `o`.
pub fn encode(s: &CuckooState, o: &mut Vec<u8>) {
    let p = s.params();
    o.extend_from_slice(&p.capacity.to_le_bytes());
    o.extend_from_slice(&p.bucket_size.to_le_bytes());
    o.extend_from_slice(&p.max_iterations.to_le_bytes());
    o.extend_from_slice(&p.expansion.to_le_bytes());
    o.extend_from_slice(&s.inserted().to_le_bytes());
    o.extend_from_slice(&s.deleted().to_le_bytes());
    o.extend_from_slice(&(s.sub_filters() as u32).to_le_bytes());
    for b in s.filter_buckets() {
        o.extend_from_slice(&b.to_le_bytes());
    }
}

/// Bytes [`encode`] writes for a filter of `filters` sub-filters.
pub fn encoded_len(filters: usize) -> usize {
    8 + 2 * 3 + 8 * 2 + 4 + 8 * filters
}

/// Decodes what [`encode`] wrote; `None` if damaged (also when the library refuses the
/// parts: a bucket count that is not a power of two, more deletes than inserts).
pub fn decode(mut b: &[u8]) -> Option<CuckooState> {
    fn take<const N: usize>(b: &mut &[u8]) -> Option<[u8; N]> {
        let (head, rest) = b.split_at_checked(N)?;
        *b = rest;
        head.try_into().ok()
    }
    let params = CuckooParams {
        capacity: u64::from_le_bytes(take(&mut b)?),
        bucket_size: u16::from_le_bytes(take(&mut b)?),
        max_iterations: u16::from_le_bytes(take(&mut b)?),
        expansion: u16::from_le_bytes(take(&mut b)?),
    };
    let inserted = u64::from_le_bytes(take(&mut b)?);
    let deleted = u64::from_le_bytes(take(&mut b)?);
    let n = u32::from_le_bytes(take(&mut b)?) as usize;
    if b.len() != 8 * n {
        return None;
    }
    let buckets = b
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
        .collect();
    CuckooState::from_parts(params, buckets, inserted, deleted).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_damage() {
        let params = CuckooParams {
            capacity: 1000,
            bucket_size: 4,
            max_iterations: 50,
            expansion: 2,
        };
        let s = CuckooState::from_parts(params, vec![256, 512], 700, 20).unwrap();
        let mut o = Vec::new();
        encode(&s, &mut o);
        assert_eq!(o.len(), encoded_len(2));
        assert_eq!(decode(&o), Some(s));
        assert_eq!(decode(&o[..o.len() - 1]), None);
        let mut extra = o.clone();
        extra.push(0);
        assert_eq!(decode(&extra), None);
        // A bucket count that is not a power of two.
        let mut bad = o.clone();
        let at = o.len() - 8;
        bad[at..].copy_from_slice(&500u64.to_le_bytes());
        assert_eq!(decode(&bad), None);
    }
}
