//! OBJECT ENCODING, REFCOUNT, FREQ, IDLETIME, HELP: what Redis 7.0 would answer for a value
//! of the same type and size. The engine has no such encodings; clients and tests use the
//! answer to learn a value's shape (small or large), so it follows Redis's thresholds
//! (128 entries and 64-byte elements for hashes and sorted sets, 512 integers for sets, 44
//! bytes for embedded strings).

use bytes::Bytes;

use super::parse_i64;
use crate::resp::Reply;
use crate::store::{Meta, R, Txn, sub_prefix, tag};

/// Redis's `hash-max-listpack-entries` and `zset-max-listpack-entries`.
const LISTPACK_ENTRIES: u64 = 128;
/// Redis's `hash-max-listpack-value` and `zset-max-listpack-value`.
const LISTPACK_VALUE: usize = 64;
/// Redis's `set-max-intset-entries`.
const INTSET_ENTRIES: u64 = 512;
/// Longest string Redis embeds in its object header.
const EMBSTR_MAX: usize = 44;
/// Redis's refcount of its shared small integers (0 to 9999).
const SHARED_REFCOUNT: i64 = i32::MAX as i64;

/// An inline string's Redis encoding and whether Redis shares its object.
fn string_encoding(v: &[u8]) -> (&'static str, bool) {
    if v.len() <= 20
        && let Some(n) = parse_i64(v)
    {
        return ("int", (0..10_000).contains(&n));
    }
    if v.len() <= EMBSTR_MAX {
        ("embstr", false)
    } else {
        ("raw", false)
    }
}

/// Whether every entry under `prefix` passes `f` (a scan of at most the threshold's entries).
fn all_entries(
    txn: &Txn<'_>,
    prefix: &[u8],
    mut f: impl FnMut(&[u8], &[u8]) -> bool,
) -> Result<bool, Reply> {
    let mut ok = true;
    txn.for_each_prefix(prefix, None, false, |k, v| {
        ok = f(&k[prefix.len()..], v);
        Ok(ok)
    })?;
    Ok(ok)
}

/// The Redis 7.0 encoding of `key`'s value.
fn encoding(txn: &Txn<'_>, key: &[u8], meta: &Meta) -> Result<&'static str, Reply> {
    Ok(match meta {
        Meta::Str(v) => string_encoding(v).0,
        Meta::Chunked { .. } | Meta::Bloom { .. } | Meta::Cuckoo { .. } => "raw",
        Meta::List { .. } => "quicklist",
        Meta::Stream(_) => "stream",
        Meta::Set { version, card } => {
            let mut ints = *card <= INTSET_ENTRIES;
            if ints {
                super::sets::store::for_each_member(txn, key, *version, |m| {
                    ints = m.len() <= 20 && parse_i64(m).is_some();
                    Ok(ints)
                })?;
            }
            if ints { "intset" } else { "hashtable" }
        }
        Meta::Hash { version, len } => {
            let small = *len <= LISTPACK_ENTRIES
                && all_entries(txn, &sub_prefix(tag::FIELD, key, *version), |f, v| {
                    f.len() <= LISTPACK_VALUE && v.len() <= LISTPACK_VALUE
                })?;
            if small { "listpack" } else { "hashtable" }
        }
        Meta::Zset { version, card } => {
            let small = *card <= LISTPACK_ENTRIES
                && all_entries(txn, &sub_prefix(tag::ZMEMBER, key, *version), |m, _| {
                    m.len() <= LISTPACK_VALUE
                })?;
            if small { "listpack" } else { "skiplist" }
        }
    })
}

const HELP: &[&str] = &[
    "OBJECT <subcommand> <key>: what Redis 7.0 would report of a key's value.",
    "ENCODING <key>",
    "    The representation Redis would use for a value of this type and size.",
    "REFCOUNT <key>",
    "    The reference count Redis would report (shared small integers: 2147483647).",
    "FREQ <key>, IDLETIME <key>",
    "    Not tracked by bloomkv-server (it evicts nothing): an error.",
    "HELP",
    "    This text.",
];

/// `OBJECT ENCODING|REFCOUNT|FREQ|IDLETIME key`, `OBJECT HELP`
pub fn object(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let sub = a[1].to_ascii_uppercase();
    if sub == b"HELP" && a.len() == 2 {
        return Ok(Reply::Array(
            HELP.iter().map(|l| Reply::Status((*l).into())).collect(),
        ));
    }
    let known = matches!(&sub[..], b"ENCODING" | b"REFCOUNT" | b"FREQ" | b"IDLETIME");
    if !known {
        return Err(Reply::err(format!(
            "unknown subcommand '{}'. Try OBJECT HELP.",
            String::from_utf8_lossy(&a[1])
        )));
    }
    if a.len() != 3 {
        return Err(Reply::err(format!(
            "wrong number of arguments for 'object|{}' command",
            String::from_utf8_lossy(&a[1]).to_ascii_lowercase()
        )));
    }
    let Some(meta) = txn.meta(&a[2])? else {
        return Ok(Reply::Nil);
    };
    match &sub[..] {
        b"ENCODING" => Ok(Reply::bulk(encoding(txn, &a[2], &meta)?)),
        b"REFCOUNT" => Ok(Reply::Int(match &meta {
            Meta::Str(v) if string_encoding(v).1 => SHARED_REFCOUNT,
            _ => 1,
        })),
        // Redis answers these only under a matching maxmemory policy; this server has
        // neither (it evicts nothing) and tracks no access times.
        b"FREQ" => Err(Reply::err(
            "An LFU maxmemory policy is not selected, access frequency not tracked. Please \
             note that when switching between policies at runtime LRU and LFU data will take \
             some time to adjust.",
        )),
        _ => Err(Reply::err(
            "bloomkv-server does not track access times (OBJECT IDLETIME)",
        )),
    }
}

const DEBUG_HELP: &[&str] = &[
    "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are (bloomkv-server):",
    "OBJECT <key>",
    "    Show low-level info about the key: the encoding Redis would use, and the length of",
    "    this server's DUMP of it (no address or LRU is tracked: 0).",
    "SLEEP <seconds>",
    "    Stop this connection for <seconds> (a float); other clients go on.",
    "HELP",
    "    Print this help.",
];

/// `DEBUG OBJECT key | SLEEP seconds | HELP`: the subset clients and test suites use.
pub fn debug(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let sub = a[1].to_ascii_uppercase();
    match (&sub[..], a.len()) {
        (b"HELP", 2) => Ok(Reply::Array(
            DEBUG_HELP
                .iter()
                .map(|l| Reply::Status((*l).into()))
                .collect(),
        )),
        (b"OBJECT", 3) => {
            let Some(meta) = txn.meta(&a[2])? else {
                return Err(Reply::err("no such key"));
            };
            let enc = encoding(txn, &a[2], &meta)?;
            // This server's serialized length: the DUMP payload less its type byte and footer.
            let serialized = super::dump::dump_value(txn, &a[2])
                .ok()
                .flatten()
                .map_or(0, |p| p.len().saturating_sub(11));
            let refcount = match &meta {
                Meta::Str(v) if string_encoding(v).1 => SHARED_REFCOUNT,
                _ => 1,
            };
            let mut line = format!(
                "Value at:0x0 refcount:{refcount} encoding:{enc} serializedlength:{serialized} lru:0 lru_seconds_idle:0"
            );
            if let Meta::List { head, tail, .. } = meta {
                let len = tail - head;
                let nodes = len.div_ceil(128).max(1);
                line.push_str(&format!(
                    " ql_nodes:{nodes} ql_avg_node:{:.2} ql_listpack_max:-2 ql_compressed:0 ql_uncompressed_size:{serialized}",
                    len as f64 / nodes as f64
                ));
            }
            Ok(Reply::Status(line))
        }
        (b"SLEEP", 3) => {
            let secs = super::parse_f64(&a[2])
                .filter(|s| s.is_finite())
                .ok_or_else(|| Reply::err("value is not a valid float"))?;
            if secs > 0.0 {
                let nap = || std::thread::sleep(std::time::Duration::from_secs_f64(secs));
                // Off the I/O worker, so the clients it also serves go on.
                match tokio::runtime::Handle::try_current() {
                    Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                        tokio::task::block_in_place(nap);
                    }
                    _ => nap(),
                }
            }
            Ok(Reply::Ok)
        }
        _ => Err(Reply::err(format!(
            "unknown subcommand or wrong number of arguments for '{}'. Try DEBUG HELP.",
            String::from_utf8_lossy(&a[1])
        ))),
    }
}
