//! How Redis keys are laid out in the engine's key space (docs/SERVER.md, "Data model").
//!
//! ```text
//! 0x00 "format"                                 the data format of this database (u32 LE)
//! 0x00 "version"                                 high-water mark of collection versions (u64 LE)
//! 0x00 "watch/" be64(token)                      cluster mode: a connection's replicated WATCH
//! 0x00 "flib/" library                           a function library (`script::functions`)
//! 0x00 "fname/" lowercased function name         the library holding that function
//! 'M' key                                        database 0: metadata (type, expiry, version, ...)
//! 'N' db key                                     database 1..=255: metadata
//! 'e' be64(expire_ms) key                        database 0: expiry index, one entry per TTL
//! 'E' db be64(expire_ms) key                     database 1..=255: expiry index
//! 's' be32(len) key be64(ver) member             set member (empty value)
//! 'c' be32(len) key be64(ver) be64(chunk)        4 KiB chunk of a chunked string (bitmap)
//! 'f' be32(len) key be64(ver) be32(layer) be64(chunk)   512-byte chunk of a Bloom sub-filter
//! 'h' be32(len) key be64(ver) field              hash field -> value
//! 'l' be32(len) key be64(ver) be64(position)     list element -> value
//! 'z' be32(len) key be64(ver) member             sorted-set member -> score (8 bytes)
//! 'r' be32(len) key be64(ver) score(8) member    sorted-set score index (empty value)
//! 'x' be32(len) key be64(ver) be64(ms) be64(seq) stream entry -> its fields and values
//! 'g' be32(len) key be64(ver) kind(1) ...        a stream's consumer groups, consumers and
//!                                                pending entries (`cmd::streams::groups`)
//! ```
//!
//! Every member, field, element or chunk carries the version of the collection it belongs to.
//! Deleting, overwriting or expiring a collection writes only its metadata key: the members of
//! the old version are never read again (nothing looks under a version the metadata does not
//! name) and compaction drops them (`store::gc`). The length prefix keeps the sub-keys of `a`
//! apart from those of `ab`, so one prefix scan finds exactly one collection's members.
//!
//! Databases (`SELECT`): database 0 keeps format 2's layout byte for byte; the others have
//! their own metadata and expiry tags with the database index after the tag. Sub-keys carry
//! no index of their own: a collection's version holds its database in its top byte
//! ([`version_db`]), and versions are unique across databases, so members of `k` in two
//! databases never meet, and compaction finds a member's owner from the version alone.

/// Engine key prefixes (never renumber or reuse: they are on disk).
pub mod tag {
    /// Server-wide records (format, version high-water mark).
    pub const SYSTEM: u8 = 0x00;
    /// Metadata keys of database 0.
    pub const META: u8 = b'M';
    /// Metadata keys of databases 1..=255 (the index follows the tag).
    pub const META_DB: u8 = b'N';
    /// The expiry index of database 0.
    pub const EXPIRY: u8 = b'e';
    /// The expiry index of databases 1..=255 (the index follows the tag).
    pub const EXPIRY_DB: u8 = b'E';
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
    /// A stream's consumer groups: their records, consumers and pending entries.
    pub const GROUP: u8 = b'g';
    /// Chunks of cuckoo sub-filters (format 5).
    pub const CUCKOO: u8 = b'k';
    /// Every tag of a versioned sub-key.
    pub const SUBKEYS: &[u8] = &[
        MEMBER, CHUNK, BLOOM, FIELD, ELEMENT, ZMEMBER, ZSCORE, STREAM, GROUP, CUCKOO,
    ];
}

/// The record naming the data format.
pub const FORMAT_KEY: &[u8] = b"\x00format";
/// The data format this server writes: 6 (function libraries: the `flib/` and `fname/`
/// system records). Format 5 is format 6 without function libraries, format 4 is format 5
/// without cuckoo filters (metadata type 9, chunks under tag `k`; the database map record of
/// SWAPDB), format 3 (databases beside 0) is format 4 without streams' consumer groups (tag
/// `g`), and format 2 (versioned collections, expiry) is format 3 with only database 0, so
/// opening any of them only rewrites the format record; format 1 (no format record) is
/// migrated at open (`store::migrate`).
pub const FORMAT: u32 = 6;
/// The record naming which stored database each database index addresses (SWAPDB): 256
/// bytes, byte `i` the stored database of index `i`; absent, each index names its own.
pub const DBMAP_KEY: &[u8] = b"\x00dbmap";
/// The record holding the versions' high-water mark.
pub const VERSION_KEY: &[u8] = b"\x00version";
/// The prefix of the function library records (`script::functions::registry`): the
/// library's name follows.
pub const FUNCTION_LIBRARY_PREFIX: &[u8] = b"\x00flib/";
/// The prefix of the function name records: a function's name, lowercased, follows; the
/// value is its library's name.
pub const FUNCTION_NAME_PREFIX: &[u8] = b"\x00fname/";
/// Cluster mode: the prefix of the replicated WATCH records (`replica::watches`), one per
/// connection token (be64) that watches keys.
pub const WATCH_PREFIX: &[u8] = b"\x00watch/";

/// Bytes a versioned sub-key adds to the Redis key and member: tag, length, version, and up
/// to 12 bytes of position (a Bloom chunk's layer and index, or a score).
pub const SUBKEY_OVERHEAD: usize = 1 + 4 + 8 + 12;

/// A database index (`SELECT`): 0 to 255.
pub type DbIndex = u8;

/// Bits of a version below its database index.
const VERSION_DB_SHIFT: u32 = 56;

/// The largest version number a database's allocator or log may reach (the index takes the
/// top byte).
pub const VERSION_MAX: u64 = (1 << VERSION_DB_SHIFT) - 1;

/// Collection version `n` of database `db`.
pub fn db_version(db: DbIndex, n: u64) -> u64 {
    debug_assert!(n <= VERSION_MAX);
    (u64::from(db) << VERSION_DB_SHIFT) | (n & VERSION_MAX)
}

/// The database a collection version belongs to.
pub fn version_db(version: u64) -> DbIndex {
    (version >> VERSION_DB_SHIFT) as DbIndex
}

/// The prefix of every metadata key of database `db`.
pub fn meta_prefix(db: DbIndex) -> Vec<u8> {
    match db {
        0 => vec![tag::META],
        n => vec![tag::META_DB, n],
    }
}

/// The metadata key of `key` in database `db`.
#[inline]
pub fn meta_key(db: DbIndex, key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(key.len() + 2);
    match db {
        0 => k.push(tag::META),
        n => k.extend_from_slice(&[tag::META_DB, n]),
    }
    k.extend_from_slice(key);
    k
}

/// Splits a metadata key into its database and Redis key; `None` for other keys.
pub fn parse_meta_key(k: &[u8]) -> Option<(DbIndex, &[u8])> {
    match k.split_first()? {
        (&tag::META, key) => Some((0, key)),
        (&tag::META_DB, rest) => rest.split_first().map(|(&db, key)| (db, key)),
        _ => None,
    }
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
#[cfg(test)]
pub fn member_key(key: &[u8], version: u64, member: &[u8]) -> Vec<u8> {
    sub_key(tag::MEMBER, key, version, member)
}

/// The engine key of chunk `idx` of a chunked string.
pub fn chunk_key(key: &[u8], version: u64, idx: u64) -> Vec<u8> {
    sub_key(tag::CHUNK, key, version, &idx.to_be_bytes())
}

/// The engine key of chunk `idx` of Bloom sub-filter `layer`.
pub fn bloom_chunk_key(key: &[u8], version: u64, layer: u32, idx: u64) -> Vec<u8> {
    filter_chunk_key(tag::BLOOM, key, version, layer, idx)
}

/// The engine key of chunk `idx` of cuckoo sub-filter `filter`.
pub fn cuckoo_chunk_key(key: &[u8], version: u64, filter: u32, idx: u64) -> Vec<u8> {
    filter_chunk_key(tag::CUCKOO, key, version, filter, idx)
}

/// A filter's chunk key: tag `t`, then sub-filter and chunk index big-endian, so a scan
/// walks sub-filters in order and each one's chunks in order.
fn filter_chunk_key(t: u8, key: &[u8], version: u64, layer: u32, idx: u64) -> Vec<u8> {
    let mut k = sub_prefix(t, key, version);
    k.extend_from_slice(&layer.to_be_bytes());
    k.extend_from_slice(&idx.to_be_bytes());
    k
}

/// The prefix of every expiry-index entry of database `db`.
pub fn expiry_prefix(db: DbIndex) -> Vec<u8> {
    match db {
        0 => vec![tag::EXPIRY],
        n => vec![tag::EXPIRY_DB, n],
    }
}

/// The expiry-index entry of `key` in database `db`, expiring at `at` (ms since the Unix
/// epoch).
pub fn expiry_key(db: DbIndex, at: u64, key: &[u8]) -> Vec<u8> {
    let mut k = expiry_prefix(db);
    k.reserve(key.len() + 8);
    k.extend_from_slice(&at.to_be_bytes());
    k.extend_from_slice(key);
    k
}

/// Splits an expiry-index key into its database, time and Redis key.
pub fn parse_expiry_key(k: &[u8]) -> Option<(DbIndex, u64, &[u8])> {
    let (db, rest) = match k.split_first()? {
        (&tag::EXPIRY, rest) => (0, rest),
        (&tag::EXPIRY_DB, rest) => rest.split_first().map(|(&db, r)| (db, r))?,
        _ => return None,
    };
    let at = u64::from_be_bytes(rest.get(..8)?.try_into().ok()?);
    Some((db, at, &rest[8..]))
}

/// The database an engine key of Redis data belongs to (`None`: a server record or a
/// damaged key).
pub fn db_of(k: &[u8]) -> Option<DbIndex> {
    match *k.first()? {
        tag::SYSTEM => None,
        tag::META | tag::EXPIRY => Some(0),
        tag::META_DB | tag::EXPIRY_DB => k.get(1).copied(),
        _ => parse_sub_key(k).map(|s| version_db(s.version)),
    }
}

/// The database and Redis key an engine key belongs to, if any (for WATCH and keyspace
/// bookkeeping).
pub fn owner(k: &[u8]) -> Option<(DbIndex, &[u8])> {
    match *k.first()? {
        tag::META | tag::META_DB => parse_meta_key(k),
        tag::EXPIRY | tag::EXPIRY_DB => parse_expiry_key(k).map(|(db, _, key)| (db, key)),
        _ => parse_sub_key(k).map(|s| (version_db(s.version), s.key)),
    }
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
        assert_eq!(parse_sub_key(&meta_key(0, b"key")), None);
        assert_eq!(parse_sub_key(&k[..k.len() - 13]), None);
        let e = expiry_key(0, 1234, b"k");
        assert_eq!(parse_expiry_key(&e), Some((0, 1234, &b"k"[..])));
        let e = expiry_key(9, 1234, b"k");
        assert_eq!(parse_expiry_key(&e), Some((9, 1234, &b"k"[..])));
    }

    #[test]
    fn database_0_keeps_format_2_layout() {
        assert_eq!(meta_key(0, b"k"), b"Mk");
        assert_eq!(expiry_key(0, 1, b"k"), b"e\0\0\0\0\0\0\0\x01k");
        assert_eq!(db_version(0, 77), 77);
    }

    #[test]
    fn each_database_has_its_own_keys_and_versions() {
        for db in [0u8, 1, 15, 255] {
            let m = meta_key(db, b"k");
            assert!(m.starts_with(&meta_prefix(db)));
            assert_eq!(parse_meta_key(&m), Some((db, &b"k"[..])));
            assert_eq!(owner(&m), Some((db, &b"k"[..])));
            assert_eq!(db_of(&m), Some(db));
            let e = expiry_key(db, 5, b"k");
            assert!(e.starts_with(&expiry_prefix(db)));
            assert_eq!(owner(&e), Some((db, &b"k"[..])));
            let v = db_version(db, VERSION_MAX);
            assert_eq!(version_db(v), db);
            let s = member_key(b"k", v, b"m");
            assert_eq!(owner(&s), Some((db, &b"k"[..])));
            assert_eq!(db_of(&s), Some(db));
        }
        // Database 1's metadata never falls inside database 0's prefix, nor 2's in 1's.
        assert!(!meta_key(1, b"k").starts_with(&meta_prefix(0)));
        assert!(!meta_key(2, b"").starts_with(&meta_prefix(1)));
        assert_eq!(db_of(FORMAT_KEY), None);
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
