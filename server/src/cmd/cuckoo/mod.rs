//! Persistent cuckoo filters with RedisBloom's commands: CF.RESERVE, CF.ADD, CF.ADDNX,
//! CF.INSERT, CF.INSERTNX, CF.EXISTS, CF.MEXISTS, CF.COUNT, CF.DEL, CF.COMPACT, CF.INFO, and
//! CF.SCANDUMP / CF.LOADCHUNK (`scandump.rs`).
//!
//! A cuckoo filter keeps one 8-bit fingerprint per item, so unlike a Bloom filter it can
//! delete and count items. The logic is the library's ([`CuckooState`]); the metadata key
//! holds the state and the slots live in chunks (`slots::ChunkSlots`). Which fingerprint
//! a full bucket gives up is drawn from a seed made of the item and the filter's insert
//! count, so every replica applying the same commands holds the same filter.

mod scandump;
mod slots;

pub use scandump::{cf_loadchunk, cf_scandump};

use bytes::Bytes;

use bloomkv::filter::{CuckooParams, CuckooState, hash_key};

use crate::cmd::{WRONGTYPE, parse_i64};
use crate::resp::Reply;
use crate::store::{Meta, R, Txn, cuckoo_meta};
use slots::{ChunkSlots, MAX_FILTER_BYTES};

/// RedisBloom's defaults.
const DEFAULT_CAPACITY: u64 = 1024;
const DEFAULT_BUCKET_SIZE: u16 = 2;
const DEFAULT_MAX_ITERATIONS: u16 = 20;
const DEFAULT_EXPANSION: u16 = 1;

/// Sub-filters at which inserts are refused (RedisBloom's default `CF_MAX_EXPANSIONS`).
const MAX_FILTERS: usize = 32;

/// The filter at `key` and its version: `None` if missing, WRONGTYPE for other types.
fn load(txn: &Txn<'_>, key: &[u8]) -> Result<Option<(u64, CuckooState)>, Reply> {
    match txn.meta(key)? {
        None => Ok(None),
        Some(Meta::Cuckoo { version, filter }) => Ok(Some((version, filter))),
        Some(_) => Err(Reply::Error(WRONGTYPE.into())),
    }
}

/// A new filter's state, refused when its first sub-filter would be too large.
fn create(params: CuckooParams) -> Result<CuckooState, Reply> {
    CuckooState::new(params)
        .ok()
        .filter(|s| s.slot_bytes() <= MAX_FILTER_BYTES)
        .ok_or_else(|| Reply::err("Couldn't create Cuckoo Filter"))
}

/// The seed of the kicks an insert of `item` may make: the same on every replica.
fn seed(state: &CuckooState, item: &[u8]) -> u64 {
    hash_key(item).rotate_left(29) ^ state.inserted()
}

/// A number option between `lo` and `hi`.
fn option(v: Option<&Bytes>, name: &str, lo: i64, hi: i64) -> Result<i64, Reply> {
    let n = v
        .and_then(|v| parse_i64(v))
        .ok_or_else(|| Reply::err(format!("Couldn't parse {name}")))?;
    if !(lo..=hi).contains(&n) {
        return Err(Reply::err(format!(
            "{name}: value must be an integer between {lo} and {hi}, inclusive."
        )));
    }
    Ok(n)
}

fn arity(name: &str) -> Reply {
    Reply::err(format!("wrong number of arguments for '{name}' command"))
}

/// `CF.RESERVE key capacity [BUCKETSIZE n] [MAXITERATIONS n] [EXPANSION n]`
pub fn cf_reserve(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    if a.len().is_multiple_of(2) {
        return Err(arity("cf.reserve"));
    }
    let capacity = parse_i64(&a[2]).ok_or_else(|| Reply::err("Bad capacity"))?;
    let mut p = CuckooParams {
        capacity: 0,
        bucket_size: DEFAULT_BUCKET_SIZE,
        max_iterations: DEFAULT_MAX_ITERATIONS,
        expansion: DEFAULT_EXPANSION,
    };
    for pair in a[3..].chunks_exact(2) {
        let v = pair.get(1);
        match pair[0].to_ascii_uppercase().as_slice() {
            b"BUCKETSIZE" => p.bucket_size = option(v, "BUCKETSIZE", 1, 255)? as u16,
            b"MAXITERATIONS" => {
                p.max_iterations = option(v, "MAXITERATIONS", 1, 65535)? as u16;
            }
            b"EXPANSION" => p.expansion = option(v, "EXPANSION", 0, 32768)? as u16,
            _ => return Err(Reply::err("syntax error")),
        }
    }
    if capacity < 2 * i64::from(p.bucket_size) {
        return Err(Reply::err("Capacity must be at least (BucketSize * 2)"));
    }
    p.capacity = capacity as u64;
    if load(txn, &a[1])?.is_some() {
        return Err(Reply::err("item exists"));
    }
    let filter = create(p)?;
    let version = txn.new_version()?;
    txn.put_meta(&a[1], Meta::Cuckoo { version, filter })?;
    Ok(Reply::Ok)
}

/// How CF.ADD, CF.ADDNX, CF.INSERT and CF.INSERTNX add.
struct Insert {
    /// Only items not (possibly) present.
    nx: bool,
    /// One reply per item (-1 for an item that did not fit) rather than one reply.
    multi: bool,
    /// Create a missing filter (else "not found").
    autocreate: bool,
    /// Capacity of a filter created.
    capacity: u64,
}

/// Adds `items` to the filter at `key` as `how` says: one reply per item.
fn insert(txn: &mut Txn<'_>, key: &[u8], items: &[Bytes], how: &Insert) -> R {
    let (version, mut state, existed) = match load(txn, key)? {
        Some((v, s)) => (v, s, true),
        None if how.autocreate => {
            let state = create(CuckooParams {
                capacity: how.capacity,
                bucket_size: DEFAULT_BUCKET_SIZE,
                max_iterations: DEFAULT_MAX_ITERATIONS,
                expansion: DEFAULT_EXPANSION,
            })?;
            (txn.new_version()?, state, false)
        }
        None => return Err(Reply::err("not found")),
    };
    if state.sub_filters() >= MAX_FILTERS {
        return Err(Reply::err("Maximum expansions reached"));
    }
    let buckets = state.filter_buckets().to_vec();
    let mut slots = ChunkSlots::new(txn, key, version, state.params().bucket_size, &buckets);
    let mut out = Vec::with_capacity(items.len());
    let mut added = false;
    for item in items {
        let seed = seed(&state, item);
        let r = if how.nx {
            state.insert_unique(&mut slots, item, seed)?
        } else {
            state.insert(&mut slots, item, seed)?.then_some(true)
        };
        out.push(match r {
            Some(true) => {
                added = true;
                Reply::Int(1)
            }
            Some(false) => Reply::Int(0),
            None if how.multi => Reply::Int(-1),
            None => return Err(Reply::err("Filter is full")),
        });
    }
    slots.flush();
    if !existed || added {
        save(txn, key, version, state)?;
    }
    Ok(if how.multi {
        Reply::Array(out)
    } else {
        out.pop().unwrap_or(Reply::Int(0))
    })
}

fn add(txn: &mut Txn<'_>, a: &[Bytes], nx: bool) -> R {
    let how = Insert {
        nx,
        multi: false,
        autocreate: true,
        capacity: DEFAULT_CAPACITY,
    };
    insert(txn, &a[1], &a[2..3], &how)
}

/// `CF.ADD key item`: 1, or "Filter is full".
pub fn cf_add(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    add(txn, a, false)
}

/// `CF.ADDNX key item`: 1 if added, 0 if it may be there already.
pub fn cf_addnx(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    add(txn, a, true)
}

fn insert_items(txn: &mut Txn<'_>, a: &[Bytes], nx: bool) -> R {
    let name = if nx { "cf.insertnx" } else { "cf.insert" };
    let mut how = Insert {
        nx,
        multi: true,
        autocreate: true,
        capacity: DEFAULT_CAPACITY,
    };
    let mut i = 2;
    let items_at = loop {
        let Some(arg) = a.get(i) else {
            return Err(arity(name));
        };
        match arg.to_ascii_uppercase().as_slice() {
            b"ITEMS" => break i + 1,
            b"CAPACITY" => {
                let v = a.get(i + 1).ok_or_else(|| arity(name))?;
                let n = parse_i64(v).ok_or_else(|| Reply::err("Bad capacity"))?;
                if n < 2 * i64::from(DEFAULT_BUCKET_SIZE) {
                    return Err(Reply::err("Capacity must be at least (BucketSize * 2)"));
                }
                how.capacity = n as u64;
                i += 2;
            }
            b"NOCREATE" => {
                how.autocreate = false;
                i += 1;
            }
            _ => return Err(Reply::err("Unknown argument received")),
        }
    };
    if items_at >= a.len() {
        return Err(arity(name));
    }
    insert(txn, &a[1], &a[items_at..], &how)
}

/// `CF.INSERT key [CAPACITY c] [NOCREATE] ITEMS item ...`: 1 per item added, -1 if full.
pub fn cf_insert(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    insert_items(txn, a, false)
}

/// `CF.INSERTNX key [CAPACITY c] [NOCREATE] ITEMS item ...`: 1 added, 0 present, -1 full.
pub fn cf_insertnx(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    insert_items(txn, a, true)
}

/// What CF.EXISTS, CF.MEXISTS and CF.COUNT answer for each item: 0 for a missing key.
fn lookup(
    txn: &mut Txn<'_>,
    key: &[u8],
    items: &[Bytes],
    count: bool,
) -> Result<Vec<Reply>, Reply> {
    let Some((version, state)) = load(txn, key)? else {
        return Ok(items.iter().map(|_| Reply::Int(0)).collect());
    };
    let mut slots = ChunkSlots::new(
        txn,
        key,
        version,
        state.params().bucket_size,
        state.filter_buckets(),
    );
    items
        .iter()
        .map(|item| {
            Ok(Reply::Int(if count {
                state.count(&mut slots, item)? as i64
            } else {
                i64::from(state.contains(&mut slots, item)?)
            }))
        })
        .collect()
}

/// `CF.EXISTS key item`
pub fn cf_exists(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let mut r = lookup(txn, &a[1], &a[2..3], false)?;
    Ok(r.pop().unwrap_or(Reply::Int(0)))
}

/// `CF.MEXISTS key item [item ...]`
pub fn cf_mexists(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    Ok(Reply::Array(lookup(txn, &a[1], &a[2..], false)?))
}

/// `CF.COUNT key item`: copies of the item's fingerprint (at least the item's own).
pub fn cf_count(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let mut r = lookup(txn, &a[1], &a[2..3], true)?;
    Ok(r.pop().unwrap_or(Reply::Int(0)))
}

/// The filter at `key` for CF.DEL and CF.COMPACT, which answer `missing` for a missing key
/// and for another type alike, as RedisBloom does; damage still says what it is.
fn load_or(txn: &Txn<'_>, key: &[u8], missing: &str) -> Result<(u64, CuckooState), Reply> {
    match load(txn, key) {
        Ok(Some(found)) => Ok(found),
        Ok(None) => Err(Reply::err(missing)),
        Err(Reply::Error(e)) if e == WRONGTYPE => Err(Reply::err(missing)),
        Err(e) => Err(e),
    }
}

fn save(txn: &mut Txn<'_>, key: &[u8], version: u64, filter: CuckooState) -> Result<(), Reply> {
    txn.put_meta(key, Meta::Cuckoo { version, filter })
}

/// `CF.DEL key item`: 1 if a copy was removed, 0 if none was held.
pub fn cf_del(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let (version, mut state) = load_or(txn, &a[1], "Not found")?;
    let buckets = state.filter_buckets().to_vec();
    let mut slots = ChunkSlots::new(txn, &a[1], version, state.params().bucket_size, &buckets);
    let removed = state.delete(&mut slots, &a[2])?;
    slots.flush();
    if removed {
        save(txn, &a[1], version, state)?;
    }
    Ok(Reply::Int(i64::from(removed)))
}

/// `CF.COMPACT key`: moves items of newer sub-filters into room in older ones and drops the
/// sub-filters left empty.
pub fn cf_compact(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let (version, mut state) = load_or(txn, &a[1], "Cuckoo filter was not found")?;
    let buckets = state.filter_buckets().to_vec();
    let mut slots = ChunkSlots::new(txn, &a[1], version, state.params().bucket_size, &buckets);
    state.compact(&mut slots)?;
    slots.flush();
    save(txn, &a[1], version, state)?;
    Ok(Reply::Ok)
}

/// `CF.INFO key`
pub fn cf_info(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let (_, s) = load(txn, &a[1])?.ok_or_else(|| Reply::err("not found"))?;
    let p = s.params();
    let size = s.slot_bytes() + cuckoo_meta::encoded_len(s.sub_filters()) as u64;
    let fields = [
        ("Size", size as i64),
        ("Number of buckets", s.buckets() as i64),
        ("Number of filters", s.sub_filters() as i64),
        ("Number of items inserted", s.len() as i64),
        ("Number of items deleted", s.deleted() as i64),
        ("Bucket size", i64::from(p.bucket_size)),
        ("Expansion rate", i64::from(p.expansion)),
        ("Max iterations", i64::from(p.max_iterations)),
    ];
    Ok(Reply::Map(
        fields
            .into_iter()
            .map(|(k, v)| (Reply::Status(k.to_string()), Reply::Int(v)))
            .collect(),
    ))
}
