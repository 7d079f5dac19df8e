//! How Redis keys are laid out in the engine's key space (docs/SERVER.md, "Data model").
//!
//! ```text
//! 0x00 "format"                                 the data format of this database (u32 LE)
//! 0x00 "version"                                 high-water mark of collection versions (u64 LE)
//! 'M' key                                        metadata: type, expiry, version, type fields
//! 'e' be64(expire_ms) key                        expiry index: one entry per key with a TTL
//! 's' be32(len) key be64(ver) member             set member (empty value)
//! 'c' be32(len) key be64(ver) be64(chunk)        4 KiB chunk of a chunked string (bitmap)
//! 'f' be32(len) key be64(ver) be32(layer) be64(chunk)   512-byte chunk of a Bloom sub-filter
//! 'h' be32(len) key be64(ver) field              hash field -> value
//! 'l' be32(len) key be64(ver) be64(position)     list element -> value
//! 'z' be32(len) key be64(ver) member             sorted-set member -> score (8 bytes)
//! 'r' be32(len) key be64(ver) score(8) member    sorted-set score index (empty value)
//! 'x' be32(len) key be64(ver) be64(ms) be64(seq) stream entry -> its fields and values
//! ```
//!
//! Every member, field, element or chunk carries the version of the collection it belongs to.
//! Deleting, overwriting or expiring a collection writes only its metadata key: the members of
//! the old version are never read again (nothing looks under a version the metadata does not
//! name) and compaction drops them (`store::gc`). The length prefix keeps the sub-keys of `a`
//! apart from those of `ab`, so one prefix scan finds exactly one collection's members.

/// Engine key prefixes (never renumber or reuse: they are on disk).
pub mod tag {
    /// Server-wide records (format, version high-water mark).
    pub const SYSTEM: u8 = 0x00;
    /// Metadata keys.
    pub const META: u8 = b'M';
    /// The expiry index.
    pub const EXPIRY: u8 = b'e';
    /// Set members.
    pub const MEMBER: u8 = b's';
    /// Chunks of chunked strings.
    pub const CHUNK: u8 = b'c';
    /// Chunks of Bloom sub-filters.
    pub const BLOOM: u8 = b'f';
    /// Hash fields.
    pub const FIELD: u8 = b'h';
    /// List elements.
    pub const ELEMENT: u8 = b'l';
    /// Sorted-set members (value: the score).
    pub const ZMEMBER: u8 = b'z';
    /// Sorted-set score index.
    pub const ZSCORE: u8 = b'r';
    /// Stream entries, by ID.
    pub const STREAM: u8 = b'x';
    /// Every tag of a versioned sub-key.
    pub const SUBKEYS: &[u8] = &[
        MEMBER, CHUNK, BLOOM, FIELD, ELEMENT, ZMEMBER, ZSCORE, STREAM,
    ];
}

/// The record naming the data format.
pub const FORMAT_KEY: &[u8] = b"\x00format";
/// The data format this server writes: 2 (versioned collections, expiry). Format 1 (no
/// format record) is migrated at open (`store::migrate`).
pub const FORMAT: u32 = 2;
/// The record holding the versions' high-water mark.
pub const VERSION_KEY: &[u8] = b"\x00version";

/// Bytes a versioned sub-key adds to the Redis key and member: tag, length, version, and up
/// to 12 bytes of position (a Bloom chunk's layer and index, or a score).
pub const SUBKEY_OVERHEAD: usize = 1 + 4 + 8 + 12;

/// The metadata key of `key`.
pub fn meta_key(key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(key.len() + 1);
    k.push(tag::META);
    k.extend_from_slice(key);
    k
}

/// The prefix every sub-key of `key`'s version `version` with tag `t` starts with.
pub fn sub_prefix(t: u8, key: &[u8], version: u64) -> Vec<u8> {
    let mut k = Vec::with_capacity(key.len() + 13 + 24);
    k.push(t);
    k.extend_from_slice(&(key.len() as u32).to_be_bytes());
    k.extend_from_slice(key);
    k.extend_from_slice(&version.to_be_bytes());
    k
}

/// The sub-key of `key`'s version `version` with tag `t` and suffix `rest`.
pub fn sub_key(t: u8, key: &[u8], version: u64, rest: &[u8]) -> Vec<u8> {
    let mut k = sub_prefix(t, key, version);
    k.extend_from_slice(rest);
    k
}

/// The engine key of set member `member`.
pub fn member_key(key: &[u8], version: u64, member: &[u8]) -> Vec<u8> {
    sub_key(tag::MEMBER, key, version, member)
}

/// The engine key of chunk `idx` of a chunked string.
pub fn chunk_key(key: &[u8], version: u64, idx: u64) -> Vec<u8> {
    sub_key(tag::CHUNK, key, version, &idx.to_be_bytes())
}

/// The engine key of chunk `idx` of Bloom sub-filter `layer`.
pub fn bloom_chunk_key(key: &[u8], version: u64, layer: u32, idx: u64) -> Vec<u8> {
    let mut k = sub_prefix(tag::BLOOM, key, version);
    k.extend_from_slice(&layer.to_be_bytes());
    k.extend_from_slice(&idx.to_be_bytes());
    k
}

/// The expiry-index entry of `key` expiring at `at` (ms since the Unix epoch).
pub fn expiry_key(at: u64, key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(key.len() + 9);
    k.push(tag::EXPIRY);
    k.extend_from_slice(&at.to_be_bytes());
    k.extend_from_slice(key);
    k
}

/// Splits an expiry-index key into its time and Redis key.
pub fn parse_expiry_key(k: &[u8]) -> Option<(u64, &[u8])> {
    let rest = k.strip_prefix(&[tag::EXPIRY])?;
    let at = u64::from_be_bytes(rest.get(..8)?.try_into().ok()?);
    Some((at, &rest[8..]))
}

/// A versioned sub-key taken apart: its tag, the Redis key, the version and what follows.
#[derive(Debug, PartialEq, Eq)]
pub struct SubKey<'a> {
    /// Its tag (one of [`tag::SUBKEYS`]).
    pub tag: u8,
    /// The Redis key it belongs to.
    pub key: &'a [u8],
    /// The collection version it belongs to.
    pub version: u64,
    /// The member, field, position or chunk address.
    pub rest: &'a [u8],
}

/// Takes a versioned sub-key apart; `None` for other keys or damaged ones.
pub fn parse_sub_key(k: &[u8]) -> Option<SubKey<'_>> {
    let (&t, rest) = k.split_first()?;
    if !tag::SUBKEYS.contains(&t) {
        return None;
    }
    let len = u32::from_be_bytes(rest.get(..4)?.try_into().ok()?) as usize;
    let key = rest.get(4..4 + len)?;
    let version = u64::from_be_bytes(rest.get(4 + len..12 + len)?.try_into().ok()?);
    Some(SubKey {
        tag: t,
        key,
        version,
        rest: &rest[12 + len..],
    })
}

/// The smallest key greater than every key starting with `prefix` (`None`: no bound).
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_keys_of_a_prefix_key_do_not_interleave() {
        let a = sub_prefix(tag::MEMBER, b"a", 1);
        let ab = member_key(b"ab", 1, b"");
        assert!(!ab.starts_with(&a));
        assert_eq!(prefix_end(b"a\xff\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_end(b"\xff"), None);
    }

    #[test]
    fn sub_keys_parse_back() {
        let k = bloom_chunk_key(b"key", 7, 2, 9);
        let p = parse_sub_key(&k).unwrap();
        assert_eq!((p.tag, p.key, p.version), (tag::BLOOM, &b"key"[..], 7));
        assert_eq!(p.rest.len(), 12);
        assert_eq!(parse_sub_key(&meta_key(b"key")), None);
        assert_eq!(parse_sub_key(&k[..k.len() - 13]), None);
        let e = expiry_key(1234, b"k");
        assert_eq!(parse_expiry_key(&e), Some((1234, &b"k"[..])));
    }

    #[test]
    fn versions_of_one_key_sort_apart() {
        // Every member of version 1 sorts before every member of version 2, so a scan of
        // one version's prefix never sees the other's members.
        let old = member_key(b"k", 1, b"\xff\xff");
        let new = member_key(b"k", 2, b"");
        assert!(old < new);
    }
}
