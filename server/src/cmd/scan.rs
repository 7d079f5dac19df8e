//! What the SCAN family (SCAN, HSCAN, SSCAN, ZSCAN) shares: its options, cursor paging over
//! the engine keys under one prefix, MATCH, and the reply.
//!
//! A cursor number stands for the last engine key a page returned (`Store::save_cursor`);
//! the next page resumes after it. A full page (COUNT entries) answers a new cursor, a
//! shorter one cursor 0 (the scan is over). A cursor the store does not know, or one saved
//! under another prefix (another key, or an earlier version of this one), ends the scan with
//! an empty page.

use bytes::Bytes;

use super::{NOT_INT, parse_i64};
use crate::resp::Reply;
use crate::store::{R, Txn};

/// Options of the SCAN family (SCAN, HSCAN, SSCAN, ZSCAN).
#[derive(Debug)]
pub struct ScanArgs {
    /// The cursor (0 starts).
    pub cursor: u64,
    /// MATCH pattern.
    pub pattern: Option<Vec<u8>>,
    /// COUNT (default 10).
    pub count: usize,
    /// TYPE filter (SCAN only).
    pub type_name: Option<String>,
}

/// Parses `cursor [MATCH p] [COUNT n] [TYPE t]` (TYPE only when `with_type`).
///
/// # Errors
/// Redis's errors: `invalid cursor`, integer errors, `syntax error`.
pub fn parse_scan_args(a: &[Bytes], with_type: bool) -> Result<ScanArgs, Reply> {
    let cursor = std::str::from_utf8(&a[0])
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .ok_or_else(|| Reply::err("invalid cursor"))?;
    let mut out = ScanArgs {
        cursor,
        pattern: None,
        count: 10,
        type_name: None,
    };
    let mut i = 1;
    while i < a.len() {
        let Some(v) = a.get(i + 1) else {
            return Err(Reply::err("syntax error"));
        };
        match a[i].to_ascii_uppercase().as_slice() {
            b"MATCH" => out.pattern = (v.as_ref() != b"*").then(|| v.to_vec()),
            b"COUNT" => {
                let n = parse_i64(v).ok_or_else(|| Reply::err(NOT_INT))?;
                if n < 1 {
                    return Err(Reply::err("syntax error"));
                }
                out.count = (n as usize).min(1 << 20);
            }
            b"TYPE" if with_type => out.type_name = Some(String::from_utf8_lossy(v).into_owned()),
            _ => return Err(Reply::err("syntax error")),
        }
        i += 2;
    }
    Ok(out)
}

/// A SCAN-family reply: the cursor to resume with (0: the scan is over) and the items.
pub fn reply(next: u64, items: Vec<Reply>) -> Reply {
    Reply::Array(vec![Reply::bulk(next.to_string()), Reply::Array(items)])
}

/// The reply of a scan with nothing (more) to return: a missing key, an unknown cursor.
pub fn done() -> Reply {
    reply(0, Vec::new())
}

/// Whether `item` passes the scan's MATCH `pattern` (`None`: no MATCH, or `*`).
pub fn matches(pattern: Option<&[u8]>, item: &[u8]) -> bool {
    pattern.is_none_or(|p| crate::glob::matches(p, item))
}

/// The page of the engine keys under `prefix` that `opts`' cursor asks for: up to COUNT
/// entries after where it left off, each given to `each` (engine key, value, the items so
/// far) to add what the command answers for it; returns the reply.
///
/// # Errors
/// Engine errors, or `each`'s.
pub fn page(
    txn: &Txn<'_>,
    prefix: &[u8],
    opts: &ScanArgs,
    mut each: impl FnMut(&[u8], &[u8], &mut Vec<Reply>) -> Result<(), Reply>,
) -> R {
    let after = match opts.cursor {
        0 => None,
        c => match txn.store().cursor(c) {
            Some(k) if k.starts_with(prefix) => Some(k),
            _ => return Ok(done()),
        },
    };
    let entries = txn.scan_prefix(prefix, after.as_deref(), opts.count)?;
    let next = match entries.last() {
        Some((k, _)) if entries.len() == opts.count => txn.store().save_cursor(k.clone()),
        _ => 0,
    };
    let mut items = Vec::new();
    for (k, v) in &entries {
        each(k, v, &mut items)?;
    }
    Ok(reply(next, items))
}
