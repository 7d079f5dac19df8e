//! What the SCAN family (SCAN, HSCAN, SSCAN, ZSCAN) shares: cursor paging over the engine
//! keys under one prefix, MATCH, and the reply.
//!
//! A cursor number stands for the last engine key a page returned (`Store::save_cursor`);
//! the next page resumes after it. A full page (COUNT entries) answers a new cursor, a
//! shorter one cursor 0 (the scan is over). A cursor the store does not know, or one saved
//! under another prefix (another key, or an earlier version of this one), ends the scan with
//! an empty page.

use super::ScanArgs;
use crate::resp::Reply;
use crate::store::{R, Txn};

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
