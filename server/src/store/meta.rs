//! Metadata values: what a Redis key is, when it expires, and the version its members live
//! under (docs/SERVER.md, "Data model").
//!
//! ```text
//! type u8 | expire_at u64 LE (ms since the Unix epoch, 0: never) | the type's fields
//! 1 string      the bytes
//! 2 chunked     version u64, length u64
//! 3 set         version u64, cardinality u64
//! 4 Bloom       version u64, then BloomMeta (store::bloom_meta)
//! 5 hash        version u64, field count u64
//! 6 list        version u64, head u64, tail u64 (elements at positions head..tail)
//! 7 sorted set  version u64, cardinality u64
//! 8 stream      version u64, length u64, last id (ms u64, seq u64), first id (2 x u64),
//!               max deleted id (2 x u64), entries added u64
//! 9 cuckoo      version u64, then the filter's state (store::cuckoo_meta)
//! ```
//! All integers little-endian. Format 1's values started with `s`, `c`, `S` or `B` and had
//! neither expiry nor version; they are read only by the migration.

use crate::resp::Reply;
use bloomkv::filter::CuckooState;

use crate::store::bloom_meta::BloomMeta;
use crate::store::cuckoo_meta;

/// What a metadata key says about its Redis key (the expiry aside).
#[derive(Clone, Debug, PartialEq)]
pub enum Meta {
    /// A string held inline in the metadata value.
    Str(Vec<u8>),
    /// A string of `len` bytes held in 4 KiB chunks (bitmaps); missing chunks are zeros.
    Chunked {
        /// Version its chunks live under.
        version: u64,
        /// Length of the string in bytes.
        len: u64,
    },
    /// A set of `card` members.
    Set {
        /// Version its members live under.
        version: u64,
        /// Number of members.
        card: u64,
    },
    /// A scalable Bloom filter.
    Bloom {
        /// Version its chunks live under.
        version: u64,
        /// Parameters and sub-filters.
        filter: BloomMeta,
    },
    /// A hash of `len` fields.
    Hash {
        /// Version its fields live under.
        version: u64,
        /// Number of fields.
        len: u64,
    },
    /// A list: its elements sit at positions `head..tail`.
    List {
        /// Version its elements live under.
        version: u64,
        /// Position of the first element.
        head: u64,
        /// One past the position of the last element.
        tail: u64,
    },
    /// A sorted set of `card` members.
    Zset {
        /// Version its members live under.
        version: u64,
        /// Number of members.
        card: u64,
    },
    /// A stream (it stays, empty, when its last entry goes, as in Redis).
    Stream(StreamMeta),
    /// A cuckoo filter.
    Cuckoo {
        /// Version its chunks live under.
        version: u64,
        /// Parameters, sub-filter sizes and counts.
        filter: CuckooState,
    },
}

/// A stream's metadata: its entries live under `version`, keyed by their IDs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamMeta {
    /// Version its entries live under.
    pub version: u64,
    /// Number of entries.
    pub len: u64,
    /// The last ID generated (entries are always added after it).
    pub last: (u64, u64),
    /// The ID of the first entry (0-0 when empty).
    pub first: (u64, u64),
    /// The largest ID deleted so far (XINFO's `max-deleted-entry-id`).
    pub max_deleted: (u64, u64),
    /// Entries ever added (XINFO's `entries-added`).
    pub added: u64,
}

/// Position of an empty list's head and tail: pushes go both ways from the middle of the
/// u64 range, so neither end runs out.
pub const LIST_START: u64 = 1 << 63;

/// A metadata value: the key's type and fields, and its expiry.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// When the key expires, in ms since the Unix epoch; 0: never.
    pub expire_at: u64,
    /// The key's type and fields.
    pub meta: Meta,
}

impl Record {
    /// True once `now_ms` has reached the expiry.
    pub fn expired(&self, now_ms: u64) -> bool {
        self.expire_at != 0 && self.expire_at <= now_ms
    }
}

const STR: u8 = 1;
const CHUNKED: u8 = 2;
const SET: u8 = 3;
const BLOOM: u8 = 4;
const HASH: u8 = 5;
const LIST: u8 = 6;
const ZSET: u8 = 7;
const STREAM: u8 = 8;
const CUCKOO: u8 = 9;

/// The reply for a metadata value that does not decode.
pub fn corrupt() -> Reply {
    Reply::err("corrupt metadata value in the store")
}

fn u64_at(b: &[u8], at: usize) -> Result<u64, Reply> {
    b.get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .map(u64::from_le_bytes)
        .ok_or_else(corrupt)
}

impl Record {
    /// Decodes a format-2 metadata value.
    ///
    /// # Errors
    /// An `ERR` reply naming the damage (also for a format-1 value).
    pub fn decode(v: &[u8]) -> Result<Record, Reply> {
        let (&t, rest) = v.split_first().ok_or_else(corrupt)?;
        let expire_at = u64_at(rest, 0)?;
        let f = &rest[8..];
        let exact = |n: usize| if f.len() == n { Ok(()) } else { Err(corrupt()) };
        let meta = match t {
            STR => Meta::Str(f.to_vec()),
            CHUNKED => {
                exact(16)?;
                Meta::Chunked {
                    version: u64_at(f, 0)?,
                    len: u64_at(f, 8)?,
                }
            }
            SET => {
                exact(16)?;
                Meta::Set {
                    version: u64_at(f, 0)?,
                    card: u64_at(f, 8)?,
                }
            }
            BLOOM => Meta::Bloom {
                version: u64_at(f, 0)?,
                filter: BloomMeta::decode(&f[8..]).ok_or_else(corrupt)?,
            },
            HASH => {
                exact(16)?;
                Meta::Hash {
                    version: u64_at(f, 0)?,
                    len: u64_at(f, 8)?,
                }
            }
            LIST => {
                exact(24)?;
                let (head, tail) = (u64_at(f, 8)?, u64_at(f, 16)?);
                if head > tail {
                    return Err(corrupt());
                }
                Meta::List {
                    version: u64_at(f, 0)?,
                    head,
                    tail,
                }
            }
            ZSET => {
                exact(16)?;
                Meta::Zset {
                    version: u64_at(f, 0)?,
                    card: u64_at(f, 8)?,
                }
            }
            STREAM => {
                exact(72)?;
                let at = |i: usize| u64_at(f, 8 * i);
                Meta::Stream(StreamMeta {
                    version: at(0)?,
                    len: at(1)?,
                    last: (at(2)?, at(3)?),
                    first: (at(4)?, at(5)?),
                    max_deleted: (at(6)?, at(7)?),
                    added: at(8)?,
                })
            }
            CUCKOO => Meta::Cuckoo {
                version: u64_at(f, 0)?,
                filter: cuckoo_meta::decode(&f[8..]).ok_or_else(corrupt)?,
            },
            _ => return Err(corrupt()),
        };
        Ok(Record { expire_at, meta })
    }

    /// Encodes the value [`Record::decode`] reads.
    pub fn encode(&self) -> Vec<u8> {
        let fields = match &self.meta {
            Meta::Str(v) => v.len(),
            Meta::Bloom { .. } => 128,
            Meta::Cuckoo { filter, .. } => 8 + cuckoo_meta::encoded_len(filter.sub_filters()),
            Meta::Stream(_) => 72,
            _ => 24,
        };
        let mut o = Vec::with_capacity(9 + fields);
        let fields = |o: &mut Vec<u8>, t: u8, xs: &[u64]| {
            o.push(t);
            o.extend_from_slice(&self.expire_at.to_le_bytes());
            for x in xs {
                o.extend_from_slice(&x.to_le_bytes());
            }
        };
        match &self.meta {
            Meta::Str(v) => {
                fields(&mut o, STR, &[]);
                o.extend_from_slice(v);
            }
            Meta::Chunked { version, len } => fields(&mut o, CHUNKED, &[*version, *len]),
            Meta::Set { version, card } => fields(&mut o, SET, &[*version, *card]),
            Meta::Bloom { version, filter } => {
                fields(&mut o, BLOOM, &[*version]);
                filter.encode(&mut o);
            }
            Meta::Cuckoo { version, filter } => {
                fields(&mut o, CUCKOO, &[*version]);
                cuckoo_meta::encode(filter, &mut o);
            }
            Meta::Hash { version, len } => fields(&mut o, HASH, &[*version, *len]),
            Meta::List {
                version,
                head,
                tail,
            } => fields(&mut o, LIST, &[*version, *head, *tail]),
            Meta::Zset { version, card } => fields(&mut o, ZSET, &[*version, *card]),
            Meta::Stream(m) => fields(
                &mut o,
                STREAM,
                &[
                    m.version,
                    m.len,
                    m.last.0,
                    m.last.1,
                    m.first.0,
                    m.first.1,
                    m.max_deleted.0,
                    m.max_deleted.1,
                    m.added,
                ],
            ),
        }
        o
    }

    /// Only the type and expiry of a value, without decoding the rest (for the expiry
    /// reclaimer and compaction): `None` if damaged.
    pub fn peek(v: &[u8]) -> Option<(u8, u64)> {
        let t = *v.first()?;
        let at = u64::from_le_bytes(v.get(1..9)?.try_into().ok()?);
        (STR..=CUCKOO).contains(&t).then_some((t, at))
    }

    /// An inline string's bytes straight out of its metadata value `v`, without copying them
    /// (GET): `Ok(None)` when it has expired at `now_ms`; `Err(v)` back for any other type
    /// and for damage, which [`Record::decode`] then judges.
    pub fn inline_string(v: Vec<u8>, now_ms: u64) -> Result<Option<bytes::Bytes>, Vec<u8>> {
        match Record::peek(&v) {
            Some((STR, at)) if at != 0 && at <= now_ms => Ok(None),
            Some((STR, _)) => Ok(Some(bytes::Bytes::from(v).slice(9..))),
            _ => Err(v),
        }
    }

    /// The version of a collection value, without decoding the rest: `None` for strings
    /// and damaged values.
    pub fn peek_version(v: &[u8]) -> Option<u64> {
        let (t, _) = Record::peek(v)?;
        if t == STR {
            return None;
        }
        Some(u64::from_le_bytes(v.get(9..17)?.try_into().ok()?))
    }
}

impl Meta {
    /// The name `TYPE` answers.
    pub fn type_name(&self) -> &'static str {
        match self {
            Meta::Str(_) | Meta::Chunked { .. } => "string",
            Meta::Set { .. } => "set",
            Meta::Bloom { .. } => "MBbloom--",
            Meta::Cuckoo { .. } => "MBbloomCF",
            Meta::Hash { .. } => "hash",
            Meta::List { .. } => "list",
            Meta::Zset { .. } => "zset",
            Meta::Stream(_) => "stream",
        }
    }

    /// The same metadata with its members under `version` (a copy of the collection).
    pub fn with_version(&self, version: u64) -> Meta {
        let mut m = self.clone();
        match &mut m {
            Meta::Str(_) => {}
            Meta::Chunked { version: v, .. }
            | Meta::Set { version: v, .. }
            | Meta::Bloom { version: v, .. }
            | Meta::Cuckoo { version: v, .. }
            | Meta::Hash { version: v, .. }
            | Meta::List { version: v, .. }
            | Meta::Zset { version: v, .. } => *v = version,
            Meta::Stream(s) => s.version = version,
        }
        m
    }

    /// The version its members live under (`None` for an inline string).
    pub fn version(&self) -> Option<u64> {
        match self {
            Meta::Str(_) => None,
            Meta::Chunked { version, .. }
            | Meta::Set { version, .. }
            | Meta::Bloom { version, .. }
            | Meta::Cuckoo { version, .. }
            | Meta::Hash { version, .. }
            | Meta::List { version, .. }
            | Meta::Zset { version, .. } => Some(*version),
            Meta::Stream(m) => Some(m.version),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        for meta in [
            Meta::Str(b"hello".to_vec()),
            Meta::Chunked {
                version: 3,
                len: 12345,
            },
            Meta::Set {
                version: 4,
                card: 7,
            },
            Meta::Hash { version: 5, len: 2 },
            Meta::List {
                version: 6,
                head: LIST_START - 2,
                tail: LIST_START + 5,
            },
            Meta::Zset {
                version: 7,
                card: 9,
            },
            Meta::Stream(StreamMeta {
                version: 8,
                len: 3,
                last: (1_700_000_000_000, 4),
                first: (1_699_000_000_000, 0),
                max_deleted: (5, 6),
                added: 7,
            }),
            Meta::Cuckoo {
                version: 9,
                filter: CuckooState::from_parts(
                    bloomkv::filter::CuckooParams::default(),
                    vec![512, 1024],
                    40,
                    2,
                )
                .unwrap(),
            },
        ] {
            for expire_at in [0, 1_700_000_000_000] {
                let r = Record {
                    expire_at,
                    meta: meta.clone(),
                };
                let v = r.encode();
                assert_eq!(Record::decode(&v).unwrap(), r);
                assert_eq!(Record::peek(&v).map(|p| p.1), Some(expire_at));
                assert_eq!(Record::peek_version(&v), meta.version());
            }
        }
    }

    #[test]
    fn damage_and_format_one_are_refused() {
        assert!(Record::decode(b"").is_err());
        assert!(Record::decode(b"S\x01\0\0\0\0\0\0\0").is_err());
        assert!(Record::decode(b"shello").is_err());
        let mut v = Record {
            expire_at: 0,
            meta: Meta::Set {
                version: 1,
                card: 1,
            },
        }
        .encode();
        v.pop();
        assert!(Record::decode(&v).is_err());
        let bad_list = Record {
            expire_at: 0,
            meta: Meta::List {
                version: 1,
                head: 5,
                tail: 4,
            },
        };
        assert!(Record::decode(&bad_list.encode()).is_err());
    }

    #[test]
    fn inline_strings_are_read_in_place() {
        let live = Record {
            expire_at: 100,
            meta: Meta::Str(b"hello".to_vec()),
        };
        let v = live.encode();
        assert_eq!(
            Record::inline_string(v.clone(), 99),
            Ok(Some(bytes::Bytes::from_static(b"hello")))
        );
        assert_eq!(Record::inline_string(v, 100), Ok(None));
        let set = Record {
            expire_at: 0,
            meta: Meta::Set {
                version: 1,
                card: 1,
            },
        }
        .encode();
        assert_eq!(Record::inline_string(set.clone(), 0), Err(set));
        assert_eq!(Record::inline_string(vec![1, 0], 0), Err(vec![1, 0]));
    }

    #[test]
    fn expiry_is_inclusive() {
        let r = Record {
            expire_at: 100,
            meta: Meta::Str(vec![]),
        };
        assert!(!r.expired(99));
        assert!(r.expired(100));
        assert!(!Record { expire_at: 0, ..r }.expired(u64::MAX));
    }
}
