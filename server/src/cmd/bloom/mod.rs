//! Persistent scalable Bloom filters with RedisBloom's commands: BF.RESERVE, BF.ADD, BF.MADD,
//! BF.EXISTS, BF.MEXISTS, BF.INSERT, BF.INFO, BF.CARD, and BF.SCANDUMP / BF.LOADCHUNK
//! (`scandump.rs`).
//!
//! A filter is a chain of sub-filters (Almeida et al., "Scalable Bloom Filters"): when the
//! newest is full, a new one is added with `expansion` times its capacity and half its error
//! rate, so the chain's rate stays below twice the first's. Each sub-filter uses the library's
//! blocked layout ([`BlockedProbe`]): all probes of an item fall in one 512-bit block, hence
//! in one 512-byte chunk, so adding an item reads and writes one chunk. Chunks are
//! created on first write (a missing chunk is all zeros), so a large reservation costs
//! nothing until used. Sized with [`math::blocked_bits_per_key`] and
//! [`math::optimal_blocked_hashes`].

mod scandump;

pub use scandump::{bf_loadchunk, bf_scandump};

use bytes::Bytes;

use bloomkv::filter::{BlockedProbe, hash_key, math, stage_hash};

use crate::cmd::{WRONGTYPE, parse_i64};
use crate::resp::Reply;
use crate::store::bloom_meta::{BloomMeta, Layer};
use crate::store::{Meta, R, Txn, bloom_chunk_key};

/// RedisBloom's defaults for a filter BF.ADD creates.
const DEFAULT_ERROR: f64 = 0.01;
const DEFAULT_CAPACITY: u64 = 100;
const DEFAULT_EXPANSION: u32 = 2;

/// Largest sub-filter, in bits (512 GiB): beyond it a filter is refused.
const MAX_LAYER_BITS: u64 = 1 << 42;

/// Bytes per engine value of a sub-filter: eight 512-bit blocks. Smaller than a bitmap's
/// 4 KiB chunk because every BF.ADD rewrites its chunk: at 512 bytes the WAL, memtable and
/// compactions carry an eighth of the bytes (BF.ADD throughput was write-bound at 4 KiB),
/// and a 1M-item 1% filter is still only ~2,400 engine keys.
pub const BLOOM_CHUNK_BYTES: usize = 512;

/// Bytes of one 512-bit block.
const BLOCK_BYTES: u64 = math::BLOCK_BITS / 8;

impl Layer {
    fn new(capacity: u64, error: f64) -> Option<Layer> {
        let bpk = math::blocked_bits_per_key(error);
        let want = (capacity as f64 * bpk).ceil();
        if !want.is_finite() || want > MAX_LAYER_BITS as f64 {
            return None;
        }
        let bits = (want as u64).max(1).div_ceil(math::BLOCK_BITS) * math::BLOCK_BITS;
        Some(Layer {
            capacity,
            items: 0,
            bits,
            k: math::optimal_blocked_hashes(bpk).max(1),
            error,
        })
    }

    /// Where `hash`'s probes fall in this layer (numbered `n`): chunk index, byte offset of
    /// its block within the chunk, and the probes.
    fn locate(&self, n: u32, hash: u64) -> (u64, usize, BlockedProbe) {
        // Every layer after the first re-mixes the hash, so an item's blocks in two layers are
        // unrelated.
        let probe = BlockedProbe::new(stage_hash(hash, n), self.bits, self.k);
        let byte = probe.block() * BLOCK_BYTES;
        (
            byte / BLOOM_CHUNK_BYTES as u64,
            (byte % BLOOM_CHUNK_BYTES as u64) as usize,
            probe,
        )
    }

    /// Bytes of chunk `idx` (the last chunk may be shorter).
    fn chunk_len(&self, idx: u64) -> usize {
        let total = self.bits / 8;
        (total - (idx * BLOOM_CHUNK_BYTES as u64).min(total)).min(BLOOM_CHUNK_BYTES as u64) as usize
    }
}

impl BloomMeta {
    fn new(error_rate: f64, capacity: u64, expansion: u32, nonscaling: bool) -> Option<Self> {
        Some(BloomMeta {
            error_rate,
            capacity,
            expansion,
            nonscaling,
            items: 0,
            layers: vec![Layer::new(capacity, error_rate)?],
        })
    }
}

/// Whether the item hashed to `hash` may be in layer `n`.
fn layer_contains(
    txn: &Txn<'_>,
    key: &[u8],
    version: u64,
    n: u32,
    l: &Layer,
    hash: u64,
) -> Result<bool, Reply> {
    let (idx, at, probes) = l.locate(n, hash);
    let Some(chunk) = txn.get(&bloom_chunk_key(key, version, n, idx))? else {
        return Ok(false);
    };
    let Some(block) = chunk.get(at..at + BLOCK_BYTES as usize) else {
        return Ok(false);
    };
    Ok(probes
        .into_iter()
        .all(|p| block[(p / 8) as usize] & (1 << (p % 8)) != 0))
}

fn contains(
    txn: &Txn<'_>,
    key: &[u8],
    version: u64,
    m: &BloomMeta,
    hash: u64,
) -> Result<bool, Reply> {
    // Newest first: the largest sub-filter holds most items.
    for (n, l) in m.layers.iter().enumerate().rev() {
        if layer_contains(txn, key, version, n as u32, l, hash)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Adds `item`: `Ok(true)` if added, `Ok(false)` if it (probably) was there already,
/// `Err` with RedisBloom's error when a non-scaling filter is full.
fn add(
    txn: &mut Txn<'_>,
    key: &[u8],
    version: u64,
    m: &mut BloomMeta,
    item: &[u8],
) -> Result<bool, Reply> {
    let hash = hash_key(item);
    if contains(txn, key, version, m, hash)? {
        return Ok(false);
    }
    let last = m.layers.len() - 1;
    if m.layers[last].items >= m.layers[last].capacity {
        if m.nonscaling {
            return Err(Reply::err("non scaling filter is full"));
        }
        let prev = &m.layers[last];
        let cap = prev.capacity.saturating_mul(u64::from(m.expansion.max(1)));
        let layer = Layer::new(cap, prev.error * 0.5)
            .ok_or_else(|| Reply::err("could not create filter"))?;
        m.layers.push(layer);
    }
    let n = m.layers.len() - 1;
    let l = &mut m.layers[n];
    let (idx, at, probes) = l.locate(n as u32, hash);
    let ck = bloom_chunk_key(key, version, n as u32, idx);
    let mut chunk = txn.get(&ck)?.unwrap_or_default();
    let len = l.chunk_len(idx);
    if chunk.len() < len {
        chunk.resize(len, 0);
    }
    for p in probes {
        let byte = at + (p / 8) as usize;
        if let Some(b) = chunk.get_mut(byte) {
            *b |= 1 << (p % 8);
        }
    }
    txn.put(ck, chunk);
    l.items += 1;
    m.items += 1;
    Ok(true)
}

/// The filter at `key` and its version: `None` if missing, WRONGTYPE for other types.
fn load(txn: &Txn<'_>, key: &[u8]) -> Result<Option<(u64, BloomMeta)>, Reply> {
    match txn.meta(key)? {
        None => Ok(None),
        Some(Meta::Bloom { version, filter }) => Ok(Some((version, filter))),
        Some(_) => Err(Reply::Error(WRONGTYPE.into())),
    }
}

fn parse_rate(b: &[u8]) -> Option<f64> {
    std::str::from_utf8(b)
        .ok()?
        .parse::<f64>()
        .ok()
        .filter(|x| !x.is_nan())
}

/// `BF.RESERVE key error_rate capacity [EXPANSION expansion] [NONSCALING]`
pub fn reserve(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    if a.len() > 7 {
        return Err(Reply::err(
            "wrong number of arguments for 'bf.reserve' command",
        ));
    }
    let error = parse_rate(&a[2]).ok_or_else(|| Reply::err("bad error rate"))?;
    if !(error > 0.0 && error < 1.0) {
        return Err(Reply::err("(0 < error rate range < 1) "));
    }
    let capacity = parse_i64(&a[3]).ok_or_else(|| Reply::err("bad capacity"))?;
    if capacity <= 0 {
        return Err(Reply::err("(capacity should be larger than 0)"));
    }
    let (mut expansion, mut nonscaling, mut i) = (None, false, 4);
    while i < a.len() {
        match a[i].to_ascii_uppercase().as_slice() {
            b"NONSCALING" => nonscaling = true,
            b"EXPANSION" => {
                let v = a.get(i + 1).ok_or_else(|| Reply::err("no expansion"))?;
                expansion = Some(parse_i64(v).ok_or_else(|| Reply::err("bad expansion"))?);
                i += 1;
            }
            _ => return Err(Reply::err("syntax error")),
        }
        i += 1;
    }
    if nonscaling && expansion.is_some() {
        return Err(Reply::err("Nonscaling filters cannot expand"));
    }
    let expansion = expansion.unwrap_or(i64::from(DEFAULT_EXPANSION));
    if !(1..=i64::from(u32::MAX)).contains(&expansion) {
        return Err(Reply::err("expansion should be greater or equal to 1"));
    }
    if txn.meta(&a[1])?.is_some() {
        return Err(Reply::err("item exists"));
    }
    let filter = BloomMeta::new(error, capacity as u64, expansion as u32, nonscaling)
        .ok_or_else(|| Reply::err("could not create filter"))?;
    let version = txn.new_version()?;
    txn.put_meta(&a[1], Meta::Bloom { version, filter })?;
    Ok(Reply::Ok)
}

/// Options of BF.ADD / BF.MADD / BF.INSERT for a filter they create.
struct Create {
    error: f64,
    capacity: u64,
    expansion: u32,
    nonscaling: bool,
    autocreate: bool,
}

impl Default for Create {
    fn default() -> Self {
        Create {
            error: DEFAULT_ERROR,
            capacity: DEFAULT_CAPACITY,
            expansion: DEFAULT_EXPANSION,
            nonscaling: false,
            autocreate: true,
        }
    }
}

/// Adds `items` to the filter at `key` (creating it per `c`); one reply per item (an error
/// for an item that did not fit stops the rest), or one error for the whole command.
fn insert(txn: &mut Txn<'_>, key: &[u8], items: &[Bytes], c: &Create) -> Result<Vec<Reply>, Reply> {
    let (version, mut m, existed) = match load(txn, key)? {
        Some((v, m)) => (v, m, true),
        None if c.autocreate => (
            txn.new_version()?,
            BloomMeta::new(c.error, c.capacity, c.expansion, c.nonscaling)
                .ok_or_else(|| Reply::err("could not create filter"))?,
            false,
        ),
        None => return Err(Reply::err("not found")),
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        match add(txn, key, version, &mut m, item) {
            Ok(added) => out.push(Reply::Int(i64::from(added))),
            Err(e) => {
                out.push(e);
                break;
            }
        }
    }
    if !existed || out.iter().any(|r| r == &Reply::Int(1)) {
        txn.put_meta(key, Meta::Bloom { version, filter: m })?;
    }
    Ok(out)
}

/// BF.ADD key item: 1 if added, 0 if it may have been there.
pub fn bf_add(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let mut r = insert(txn, &a[1], &a[2..3], &Create::default())?;
    Ok(r.pop().unwrap_or(Reply::Int(0)))
}

/// `BF.MADD key item [item ...]`
pub fn bf_madd(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    Ok(Reply::Array(insert(
        txn,
        &a[1],
        &a[2..],
        &Create::default(),
    )?))
}

/// `BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] ITEMS item ...`
pub fn bf_insert(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let arity = || Reply::err("wrong number of arguments for 'bf.insert' command");
    let mut c = Create::default();
    let mut expansion_given = false;
    let mut i = 2;
    let items_at = loop {
        let Some(arg) = a.get(i) else {
            return Err(arity());
        };
        let value = a.get(i + 1);
        match arg.to_ascii_uppercase().as_slice() {
            b"ITEMS" => break i + 1,
            b"CAPACITY" => {
                let v = value.ok_or_else(arity)?;
                let n = parse_i64(v).ok_or_else(|| Reply::err("Bad capacity"))?;
                if n < 1 {
                    return Err(Reply::err("Bad argument received"));
                }
                c.capacity = n as u64;
                i += 2;
            }
            b"ERROR" => {
                let v = value.ok_or_else(arity)?;
                c.error = parse_rate(v).ok_or_else(|| Reply::err("Bad error rate"))?;
                if !(c.error > 0.0 && c.error < 1.0) {
                    return Err(Reply::err("Bad argument received"));
                }
                i += 2;
            }
            b"EXPANSION" => {
                let v = value.ok_or_else(arity)?;
                let n = parse_i64(v).ok_or_else(|| Reply::err("Bad expansion"))?;
                if !(1..=i64::from(u32::MAX)).contains(&n) {
                    return Err(Reply::err("Bad argument received"));
                }
                c.expansion = n as u32;
                expansion_given = true;
                i += 2;
            }
            b"NOCREATE" => {
                c.autocreate = false;
                i += 1;
            }
            b"NONSCALING" => {
                c.nonscaling = true;
                i += 1;
            }
            _ => return Err(Reply::err("Unknown argument received")),
        }
    };
    if items_at >= a.len() {
        return Err(arity());
    }
    if c.nonscaling && expansion_given {
        return Err(Reply::err("Nonscaling filters cannot expand"));
    }
    Ok(Reply::Array(insert(txn, &a[1], &a[items_at..], &c)?))
}

/// BF.EXISTS key item
pub fn bf_exists(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let Some((version, m)) = load(txn, &a[1])? else {
        return Ok(Reply::Int(0));
    };
    Ok(Reply::Int(i64::from(contains(
        txn,
        &a[1],
        version,
        &m,
        hash_key(&a[2]),
    )?)))
}

/// `BF.MEXISTS key item [item ...]`
pub fn bf_mexists(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let m = load(txn, &a[1])?;
    let mut out = Vec::with_capacity(a.len() - 2);
    for item in &a[2..] {
        let hit = match &m {
            Some((version, m)) => contains(txn, &a[1], *version, m, hash_key(item))?,
            None => false,
        };
        out.push(Reply::Int(i64::from(hit)));
    }
    Ok(Reply::Array(out))
}

/// BF.CARD key: items added; 0 for a missing key.
pub fn bf_card(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    Ok(Reply::Int(
        load(txn, &a[1])?.map_or(0, |(_, m)| m.items as i64),
    ))
}

/// `BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION]`
pub fn bf_info(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    if a.len() > 3 {
        return Err(Reply::err(
            "wrong number of arguments for 'bf.info' command",
        ));
    }
    let (_, m) = load(txn, &a[1])?.ok_or_else(|| Reply::err("not found"))?;
    let capacity = m.layers.iter().map(|l| l.capacity).sum::<u64>() as i64;
    let size = m.layers.iter().map(|l| l.bits / 8 + 40).sum::<u64>() as i64 + 48;
    let expansion = if m.nonscaling {
        Reply::Nil
    } else {
        Reply::Int(i64::from(m.expansion))
    };
    let fields = [
        ("Capacity", Reply::Int(capacity)),
        ("Size", Reply::Int(size)),
        ("Number of filters", Reply::Int(m.layers.len() as i64)),
        ("Number of items inserted", Reply::Int(m.items as i64)),
        ("Expansion rate", expansion),
    ];
    if let Some(which) = a.get(2) {
        let idx = match which.to_ascii_uppercase().as_slice() {
            b"CAPACITY" => 0,
            b"SIZE" => 1,
            b"FILTERS" => 2,
            b"ITEMS" => 3,
            b"EXPANSION" => 4,
            _ => return Err(Reply::err("Invalid information value")),
        };
        let Some((name, v)) = fields.into_iter().nth(idx) else {
            return Err(Reply::err("Invalid information value"));
        };
        // RedisBloom 2.6+: a one-element array in RESP2, a one-entry map in RESP3.
        return Ok(Reply::ByProto {
            resp2: Box::new(Reply::Array(vec![v.clone()])),
            resp3: Box::new(Reply::Map(vec![(Reply::Status(name.to_string()), v)])),
        });
    }
    Ok(Reply::Map(
        fields
            .into_iter()
            .map(|(k, v)| (Reply::Status(k.to_string()), v))
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_round_trips_and_rejects_damage() {
        let mut m = BloomMeta::new(0.01, 1000, 2, false).unwrap();
        m.layers.push(Layer::new(2000, 0.005).unwrap());
        m.items = 1500;
        let mut o = Vec::new();
        m.encode(&mut o);
        assert_eq!(BloomMeta::decode(&o), Some(m));
        assert_eq!(BloomMeta::decode(&o[..o.len() - 1]), None);
    }

    #[test]
    fn sizing_follows_the_blocked_formula() {
        let l = Layer::new(1000, 0.01).unwrap();
        assert_eq!(l.bits % 512, 0);
        let bpk = l.bits as f64 / 1000.0;
        assert!((10.0..11.5).contains(&bpk), "{bpk}");
        assert!(math::blocked_false_positive_rate(l.bits, 1000u64, l.k) <= 0.0101);
        // A probe block never straddles a chunk.
        for i in 0..1000u64 {
            let (_, at, _) = l.locate(0, hash_key(&i.to_le_bytes()));
            assert!(at + BLOCK_BYTES as usize <= BLOOM_CHUNK_BYTES);
        }
    }
}
