//! Older formats to the current one (6), at open.
//!
//! Format 5 is format 6 without function libraries, format 4 is format 5 without cuckoo
//! filters, format 3 is format 4 without consumer
//! groups, and format 2 is format 3 with only database 0 (database 0's layout did not
//! change), so opening any of them rewrites the format record and nothing else.
//!
//! Format 1 (bloomkv-server before expiry and versioned collections) had no format record;
//! its metadata values started with `s` (inline string), `c` (chunked string: u64 LE
//! length), `S` (set: u64 LE cardinality) or `B` (Bloom filter), and members and chunks sat
//! under `'S'`, `'C'` and `'F'` + be32(len) + key, without a version. Each collection is
//! copied under a fresh version and its metadata rewritten last, so a crash part-way leaves
//! the key in format 1 and the next open copies it again (an unfinished copy sits under a
//! version nothing names, for compaction to drop). Once every key is in format 2, the old
//! members go with three range deletions, in the batch that writes the format record.

use bloomkv::{Db, Error, WriteBatch};

use super::keys::{self, FORMAT, FORMAT_KEY, VERSION_KEY, tag};
use super::meta::{Meta, Record};
use crate::store::bloom_meta::BloomMeta;

/// Format 1's sub-key tags.
const OLD_MEMBER: u8 = b'S';
const OLD_CHUNK: u8 = b'C';
const OLD_BLOOM: u8 = b'F';

/// Entries copied per batch.
const BATCH: usize = 4096;

/// Versions reserved for one migration run (persisted before any is used).
const RUN_VERSIONS: u64 = 1 << 40;

/// Brings `db` to the current format; a new database just gets the format record.
///
/// # Errors
/// Engine errors; [`Error::Corruption`] for a damaged format-1 value or a database of a
/// newer format than this server writes.
pub fn to_current(db: &Db) -> Result<(), Error> {
    if let Some(v) = db.get(FORMAT_KEY)? {
        let f = v
            .as_slice()
            .try_into()
            .map(u32::from_le_bytes)
            .map_err(|_| Error::corrupt_bytes(0, "server format record: not 4 bytes"))?;
        if f > FORMAT {
            return Err(Error::corrupt_bytes(
                0,
                format!(
                    "database written by a newer bloomkv-server (data format {f}; this one reads up to {FORMAT})"
                ),
            ));
        }
        if f < FORMAT {
            db.put(FORMAT_KEY, FORMAT.to_le_bytes())?;
        }
        return Ok(());
    }
    refuse_foreign(db)?;
    let hw = match db.get(VERSION_KEY)? {
        Some(v) => u64::from_le_bytes(
            v.as_slice()
                .try_into()
                .map_err(|_| Error::corrupt_bytes(0, "version high-water mark: not 8 bytes"))?,
        ),
        None => 1,
    };
    let mut next = hw;
    db.put(VERSION_KEY, (hw + RUN_VERSIONS).to_le_bytes())?;
    let end = [tag::META + 1];
    let mut after: Option<Vec<u8>> = None;
    loop {
        // Re-scan from the last key handled, one metadata key at a time, so no iterator is
        // held across the writes.
        let start = match &after {
            Some(a) => std::ops::Bound::Excluded(a.clone()),
            None => std::ops::Bound::Included(vec![tag::META]),
        };
        let mut it = db.scan((start, std::ops::Bound::Excluded(end.to_vec())));
        let Some(kv) = it.next() else { break };
        drop(it);
        let (k, v) = kv?;
        after = Some(k.clone());
        if Record::peek(&v).is_some() {
            continue; // already format 2
        }
        migrate_key(db, &k[1..], &v, &mut next)?;
    }
    let mut b = WriteBatch::new();
    for t in [OLD_MEMBER, OLD_CHUNK, OLD_BLOOM] {
        b.delete_range([t], [t + 1]);
    }
    b.put(FORMAT_KEY, FORMAT.to_le_bytes());
    db.write(b)?;
    Ok(())
}

/// First bytes a key of a server database without a format record (format 1, or new) can
/// start with: the server's records, format 1's metadata and its three sub-key tags. Keys
/// from 0xff on belong to whoever embeds the store (cluster mode's state-machine records).
const FORMAT_1_TAGS: [u8; 5] = [tag::SYSTEM, OLD_CHUNK, OLD_BLOOM, tag::META, OLD_MEMBER];

/// Refuses a database with no format record that holds a key no server wrote: one written
/// by `kvctl put` or the library, whose keys the server would misread (and whose directory
/// it would stamp with its format record). One seek per gap between the server's tags.
fn refuse_foreign(db: &Db) -> Result<(), Error> {
    let mut from = 0u8;
    for t in FORMAT_1_TAGS.iter().copied().chain([0xff]) {
        if from < t
            && let Some(kv) = db.scan([from].as_slice()..[t].as_slice()).next()
        {
            let (k, _) = kv?;
            return Err(Error::InvalidArgument(format!(
                "not a bloomkv-server database: it has no server format record and holds \
                 key {:?}, which no server wrote (a database made by kvctl put or the \
                 library; read it with kvctl get/scan, and give the server a directory of \
                 its own)",
                String::from_utf8_lossy(&k[..k.len().min(64)])
            )));
        }
        from = t.saturating_add(1);
    }
    Ok(())
}

fn bad(key: &[u8], what: &str) -> Error {
    Error::corrupt_bytes(
        0,
        format!(
            "format-1 metadata of key {:?}: {what}",
            String::from_utf8_lossy(&key[..key.len().min(64)])
        ),
    )
}

/// Copies one format-1 key's members under a new version, then rewrites its metadata.
fn migrate_key(db: &Db, key: &[u8], v: &[u8], next: &mut u64) -> Result<(), Error> {
    let (&t, rest) = v.split_first().ok_or_else(|| bad(key, "empty value"))?;
    let u64_rest = || -> Result<u64, Error> {
        Ok(u64::from_le_bytes(
            rest.try_into()
                .map_err(|_| bad(key, "length not 8 bytes"))?,
        ))
    };
    let mut version = || {
        *next += 1;
        *next - 1
    };
    let (meta, old_tag, new_tag) = match t {
        b's' => (Meta::Str(rest.to_vec()), None, 0),
        b'c' => (
            Meta::Chunked {
                version: version(),
                len: u64_rest()?,
            },
            Some(OLD_CHUNK),
            tag::CHUNK,
        ),
        b'S' => (
            Meta::Set {
                version: version(),
                card: u64_rest()?,
            },
            Some(OLD_MEMBER),
            tag::MEMBER,
        ),
        b'B' => (
            Meta::Bloom {
                version: version(),
                filter: BloomMeta::decode(rest).ok_or_else(|| bad(key, "damaged Bloom filter"))?,
            },
            Some(OLD_BLOOM),
            tag::BLOOM,
        ),
        _ => return Err(bad(key, "unknown type tag")),
    };
    if let (Some(old), Some(ver)) = (old_tag, meta.version()) {
        let mut prefix = vec![old];
        prefix.extend_from_slice(&(key.len() as u32).to_be_bytes());
        prefix.extend_from_slice(key);
        let end = keys::prefix_end(&prefix);
        let range = (
            std::ops::Bound::Included(prefix.clone()),
            end.map_or(std::ops::Bound::Unbounded, std::ops::Bound::Excluded),
        );
        let mut batch = WriteBatch::new();
        for kv in db.scan(range) {
            let (k, val) = kv?;
            batch.put(keys::sub_key(new_tag, key, ver, &k[prefix.len()..]), val);
            if batch.len() >= BATCH {
                db.write(std::mem::take(&mut batch))?;
            }
        }
        db.write(batch)?;
    }
    db.put(
        keys::meta_key(0, key),
        Record { expire_at: 0, meta }.encode(),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn old_sub(t: u8, key: &[u8], rest: &[u8]) -> Vec<u8> {
        let mut k = vec![t];
        k.extend_from_slice(&(key.len() as u32).to_be_bytes());
        k.extend_from_slice(key);
        k.extend_from_slice(rest);
        k
    }

    #[test]
    fn a_format_one_database_is_migrated_once() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), bloomkv::Options::default()).unwrap();
        db.put(b"Mstr", b"shello").unwrap();
        db.put(b"Mset", [b"S".as_slice(), &2u64.to_le_bytes()].concat())
            .unwrap();
        db.put(old_sub(b'S', b"set", b"a"), b"").unwrap();
        db.put(old_sub(b'S', b"set", b"b"), b"").unwrap();
        db.put(b"Mbits", [b"c".as_slice(), &5000u64.to_le_bytes()].concat())
            .unwrap();
        db.put(old_sub(b'C', b"bits", &1u64.to_be_bytes()), b"xyz")
            .unwrap();
        to_current(&db).unwrap();

        let rec =
            |k: &[u8]| Record::decode(&db.get(keys::meta_key(0, k)).unwrap().unwrap()).unwrap();
        assert_eq!(rec(b"str").meta, Meta::Str(b"hello".to_vec()));
        let Meta::Set { version, card: 2 } = rec(b"set").meta else {
            panic!("not a set")
        };
        assert!(
            db.get(keys::member_key(b"set", version, b"a"))
                .unwrap()
                .is_some()
        );
        assert!(
            db.get(keys::member_key(b"set", version, b"b"))
                .unwrap()
                .is_some()
        );
        let Meta::Chunked {
            version: cv,
            len: 5000,
        } = rec(b"bits").meta
        else {
            panic!("not chunked")
        };
        assert_eq!(
            db.get(keys::chunk_key(b"bits", cv, 1)).unwrap(),
            Some(b"xyz".to_vec())
        );
        // The old members are gone, the format is recorded, and a second run changes nothing.
        assert_eq!(db.get(old_sub(b'S', b"set", b"a")).unwrap(), None);
        assert_eq!(
            db.get(FORMAT_KEY).unwrap(),
            Some(FORMAT.to_le_bytes().to_vec())
        );
        to_current(&db).unwrap();
        assert_eq!(rec(b"set").meta, Meta::Set { version, card: 2 });
    }

    #[test]
    fn format_two_to_five_databases_open_as_format_six_unchanged() {
        for old in [2u32, 3, 4, 5] {
            let dir = tempfile::tempdir().unwrap();
            let db = Db::open(dir.path(), bloomkv::Options::default()).unwrap();
            db.put(FORMAT_KEY, old.to_le_bytes()).unwrap();
            let rec = Record {
                expire_at: 0,
                meta: Meta::Str(b"v".to_vec()),
            };
            db.put(b"Mk", rec.encode()).unwrap();
            to_current(&db).unwrap();
            assert_eq!(FORMAT, 6);
            assert_eq!(
                db.get(FORMAT_KEY).unwrap(),
                Some(6u32.to_le_bytes().to_vec())
            );
            assert_eq!(db.get(keys::meta_key(0, b"k")).unwrap(), Some(rec.encode()));
        }
    }

    #[test]
    fn a_database_of_plain_keys_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), bloomkv::Options::default()).unwrap();
        db.put(b"user:1", b"alice").unwrap();
        let e = to_current(&db).unwrap_err().to_string();
        assert!(
            e.contains("not a bloomkv-server database") && e.contains("user:1"),
            "{e}"
        );
        assert_eq!(
            db.get(FORMAT_KEY).unwrap(),
            None,
            "stamped with the server's format"
        );
        assert_eq!(db.get(VERSION_KEY).unwrap(), None);
        // Keys between the server's tags are found too; the embedder's (0xff on) are not
        // foreign.
        let db2dir = tempfile::tempdir().unwrap();
        let db2 = Db::open(db2dir.path(), bloomkv::Options::default()).unwrap();
        db2.put(b"\xffm/applied", b"x").unwrap();
        to_current(&db2).unwrap();
        let db3dir = tempfile::tempdir().unwrap();
        let db3 = Db::open(db3dir.path(), bloomkv::Options::default()).unwrap();
        db3.put(b"Zebra", b"x").unwrap();
        assert!(to_current(&db3).is_err());
    }

    #[test]
    fn a_newer_format_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), bloomkv::Options::default()).unwrap();
        db.put(FORMAT_KEY, 9u32.to_le_bytes()).unwrap();
        let e = to_current(&db).unwrap_err().to_string();
        assert!(e.contains("newer bloomkv-server"), "{e}");
    }
}
