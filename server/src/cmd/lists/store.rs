//! How a list lives in the engine: the metadata holds `head` and `tail`, and element `i`
//! (0-based from the head) is the engine value at position `head + i`:
//!
//! ```text
//! 'l' be32(len) key be64(version) be64(position)  ->  element
//! ```
//!
//! Positions start at `LIST_START` (2^63) and grow both ways, so a push at either end is
//! one engine write plus the metadata, a pop one read and one delete, and an index one point
//! lookup. The elements between `head` and `tail` are contiguous (no holes): commands that
//! remove from the middle (LREM) or insert (LINSERT) move the elements on the shorter side.

use crate::cmd::WRONGTYPE;
use crate::resp::Reply;
use crate::store::meta::LIST_START;
use crate::store::{Meta, Txn, sub_key, sub_prefix, tag};

/// Largest list element: the engine's value limit.
pub const MAX_ELEMENT: usize = bloomkv::MAX_VALUE_BYTES;

/// Runs of removed elements at least this long go as one range deletion instead of one
/// delete per element (a range tombstone costs readers a little, so short runs stay point
/// deletes).
const RANGE_DELETE_MIN: u64 = 32;

/// A list's version and the positions of its first element and one past its last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct List {
    /// Version its elements live under.
    pub version: u64,
    /// Position of the first element.
    pub head: u64,
    /// One past the position of the last element.
    pub tail: u64,
}

impl List {
    /// Number of elements.
    pub fn len(&self) -> u64 {
        self.tail - self.head
    }

    /// True when the list has no elements (it is then removed).
    pub fn is_empty(&self) -> bool {
        self.head == self.tail
    }
}

/// The error for an element the engine cannot hold as one value.
pub fn element_too_long(len: usize) -> Reply {
    Reply::err(format!(
        "element of {len} bytes too long: bloomkv-server holds list elements to {MAX_ELEMENT} bytes"
    ))
}

/// Checks every element's size before anything is written (a command applies fully or not
/// at all).
///
/// # Errors
/// [`element_too_long`] for the first element over [`MAX_ELEMENT`].
pub fn check_elements<'e>(elems: impl IntoIterator<Item = &'e [u8]>) -> Result<(), Reply> {
    match elems.into_iter().find(|e| e.len() > MAX_ELEMENT) {
        Some(e) => Err(element_too_long(e.len())),
        None => Ok(()),
    }
}

/// The list at `key`: `None` if missing, WRONGTYPE for other types.
///
/// # Errors
/// WRONGTYPE, engine errors.
pub fn get_list(txn: &Txn<'_>, key: &[u8]) -> Result<Option<List>, Reply> {
    match txn.meta(key)? {
        None => Ok(None),
        Some(Meta::List {
            version,
            head,
            tail,
        }) => Ok(Some(List {
            version,
            head,
            tail,
        })),
        Some(_) => Err(Reply::Error(WRONGTYPE.into())),
    }
}

/// The engine key of the element at `pos`.
pub fn elem_key(key: &[u8], version: u64, pos: u64) -> Vec<u8> {
    sub_key(tag::ELEMENT, key, version, &pos.to_be_bytes())
}

/// Writes the list's metadata, or removes the key when it has no elements left.
///
/// # Errors
/// Engine errors.
pub fn store_list(txn: &mut Txn<'_>, key: &[u8], l: List) -> Result<(), Reply> {
    if l.is_empty() {
        txn.remove_key(key)?;
        Ok(())
    } else {
        txn.put_meta(
            key,
            Meta::List {
                version: l.version,
                head: l.head,
                tail: l.tail,
            },
        )
    }
}

fn full() -> Reply {
    Reply::err("list positions exhausted")
}

/// Pushes `elems` one after the other at the head (`left`) or the tail, creating the list
/// unless `only_existing` (LPUSHX, RPUSHX). Returns the new length, `None` when the list
/// did not exist and `only_existing`. Signals the key ready for blocked clients.
///
/// # Errors
/// WRONGTYPE, engine errors.
pub fn push<'e>(
    txn: &mut Txn<'_>,
    key: &[u8],
    elems: impl IntoIterator<Item = &'e [u8]>,
    left: bool,
    only_existing: bool,
) -> Result<Option<u64>, Reply> {
    let mut l = match get_list(txn, key)? {
        Some(l) => l,
        None if only_existing => return Ok(None),
        None => List {
            version: txn.new_version()?,
            head: LIST_START,
            tail: LIST_START,
        },
    };
    for e in elems {
        if left {
            l.head = l.head.checked_sub(1).ok_or_else(full)?;
            txn.put(elem_key(key, l.version, l.head), e.to_vec());
        } else {
            let pos = l.tail;
            l.tail = l.tail.checked_add(1).ok_or_else(full)?;
            txn.put(elem_key(key, l.version, pos), e.to_vec());
        }
    }
    store_list(txn, key, l)?;
    txn.signal_ready(key);
    Ok(Some(l.len()))
}

fn hole(key: &[u8]) -> Reply {
    Reply::err(format!(
        "corrupt list '{}' in the store: an element is missing",
        String::from_utf8_lossy(key)
    ))
}

/// The `n` elements from index `start` (0-based from the head) towards the tail, or, when
/// `reverse`, the `n` elements from index `start` towards the head; one engine scan. `f` gets
/// each element's index and value and returns `false` to stop early.
///
/// # Errors
/// Engine errors, a missing element (damage), `f`'s errors.
pub fn for_each_element(
    txn: &Txn<'_>,
    key: &[u8],
    l: List,
    start: u64,
    reverse: bool,
    mut f: impl FnMut(u64, &[u8]) -> Result<bool, Reply>,
) -> Result<(), Reply> {
    if start >= l.len() {
        return Ok(());
    }
    let prefix = sub_prefix(tag::ELEMENT, key, l.version);
    let first = l.head + start;
    // The scan starts after an exclusive bound: the position before `first` going forward,
    // the one after it going backward.
    let after = if reverse {
        first.checked_add(1).map(|p| elem_key(key, l.version, p))
    } else {
        first.checked_sub(1).map(|p| elem_key(key, l.version, p))
    };
    let mut expect = first;
    let mut idx = start;
    let mut ended = false;
    txn.for_each_prefix(&prefix, after.as_deref(), reverse, |k, v| {
        let pos = k
            .get(prefix.len()..)
            .and_then(|p| p.try_into().ok())
            .map(u64::from_be_bytes);
        if pos != Some(expect) {
            // Elements are contiguous and nothing is left outside head..tail (trims, pops
            // and moves delete what they vacate): any other key here is damage.
            return Err(hole(key));
        }
        let go_on = f(idx, v)?;
        if !go_on {
            ended = true;
            return Ok(false);
        }
        let done = if reverse {
            idx == 0
        } else {
            idx + 1 >= l.len()
        };
        if done {
            ended = true;
            return Ok(false);
        }
        if reverse {
            expect -= 1;
            idx -= 1;
        } else {
            expect += 1;
            idx += 1;
        }
        Ok(true)
    })?;
    if !ended {
        return Err(hole(key));
    }
    Ok(())
}

/// Up to `n` elements from index `start` towards the tail (or towards the head when
/// `reverse`). Allocates for the elements the list really holds, never for `n`.
///
/// # Errors
/// As for [`for_each_element`].
pub fn read_range(
    txn: &Txn<'_>,
    key: &[u8],
    l: List,
    start: u64,
    n: u64,
    reverse: bool,
) -> Result<Vec<Vec<u8>>, Reply> {
    let room = if reverse {
        start.saturating_add(1).min(l.len())
    } else {
        l.len().saturating_sub(start)
    };
    let n = n.min(room);
    let mut out = Vec::with_capacity(n.min(1 << 16) as usize);
    if n == 0 {
        return Ok(out);
    }
    for_each_element(txn, key, l, start, reverse, |_, v| {
        out.push(v.to_vec());
        Ok((out.len() as u64) < n)
    })?;
    Ok(out)
}

/// Deletes the elements at positions `from..to` of version `version`: point deletes for a
/// short run, one range deletion for a long one.
pub fn delete_positions(txn: &mut Txn<'_>, key: &[u8], version: u64, from: u64, to: u64) {
    if to <= from {
        return;
    }
    if to - from >= RANGE_DELETE_MIN {
        txn.delete_range(elem_key(key, version, from), elem_key(key, version, to));
    } else {
        for p in from..to {
            txn.delete(elem_key(key, version, p));
        }
    }
}

/// Pops up to `count` elements from the head (`left`) or the tail, in pop order; `None` when
/// the list does not exist. Removes the key with its last element.
///
/// # Errors
/// WRONGTYPE, engine errors, damage.
pub fn pop(
    txn: &mut Txn<'_>,
    key: &[u8],
    left: bool,
    count: u64,
) -> Result<Option<Vec<Vec<u8>>>, Reply> {
    let Some(mut l) = get_list(txn, key)? else {
        return Ok(None);
    };
    let n = count.min(l.len());
    if n == 0 {
        return Ok(Some(Vec::new()));
    }
    let out = if n == 1 {
        let pos = if left { l.head } else { l.tail - 1 };
        vec![
            txn.get(&elem_key(key, l.version, pos))?
                .ok_or_else(|| hole(key))?,
        ]
    } else if left {
        read_range(txn, key, l, 0, n, false)?
    } else {
        read_range(txn, key, l, l.len() - 1, n, true)?
    };
    if left {
        delete_positions(txn, key, l.version, l.head, l.head + n);
        l.head += n;
    } else {
        delete_positions(txn, key, l.version, l.tail - n, l.tail);
        l.tail -= n;
    }
    store_list(txn, key, l)?;
    Ok(Some(out))
}

/// Normalizes a Redis index (negative: from the tail) against a list of `len` elements:
/// `None` when out of range.
pub fn index(idx: i64, len: u64) -> Option<u64> {
    let len = len as i128;
    let i = if idx < 0 {
        len + i128::from(idx)
    } else {
        i128::from(idx)
    };
    (0..len).contains(&i).then_some(i as u64)
}

/// Clamps a Redis `start stop` pair (LRANGE, LTRIM) to a list of `len` elements: the first
/// index and the count, `None` when the range is empty.
pub fn clamp_range(start: i64, stop: i64, len: u64) -> Option<(u64, u64)> {
    let len = len as i128;
    let mut s = i128::from(start);
    let mut e = i128::from(stop);
    if s < 0 {
        s += len;
    }
    if e < 0 {
        e += len;
    }
    if s < 0 {
        s = 0;
    }
    if s > e || s >= len {
        return None;
    }
    if e >= len {
        e = len - 1;
    }
    Some((s as u64, (e - s + 1) as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_and_ranges_follow_redis() {
        assert_eq!(index(0, 3), Some(0));
        assert_eq!(index(-1, 3), Some(2));
        assert_eq!(index(-4, 3), None);
        assert_eq!(index(3, 3), None);
        assert_eq!(index(i64::MIN, 3), None);
        assert_eq!(clamp_range(0, -1, 3), Some((0, 3)));
        assert_eq!(clamp_range(-100, 100, 3), Some((0, 3)));
        assert_eq!(clamp_range(2, 1, 3), None);
        assert_eq!(clamp_range(5, 10, 3), None);
        assert_eq!(clamp_range(0, i64::MAX, 0), None);
        assert_eq!(clamp_range(i64::MIN, i64::MAX, 3), Some((0, 3)));
        assert_eq!(clamp_range(-1, -1, 3), Some((2, 1)));
    }
}

#[cfg(test)]
mod damage_tests {
    use super::*;

    /// A list missing an element (damage) answers an error naming the key, never a shorter
    /// or shifted range.
    #[test]
    fn a_missing_element_is_an_error_not_a_short_answer() {
        let (_dir, store) = crate::store::temp_store();
        let mut txn = store.txn();
        let elems: Vec<Vec<u8>> = (0..10).map(|i| vec![b'a' + i]).collect();
        push(
            &mut txn,
            b"l",
            elems.iter().map(Vec::as_slice),
            false,
            false,
        )
        .unwrap();
        txn.commit().unwrap();
        let l = get_list(&store.reader(), b"l").unwrap().unwrap();
        store
            .db()
            .delete(elem_key(b"l", l.version, l.head + 4))
            .unwrap();
        let r = store.reader();
        for (start, n, rev) in [(0, 10, false), (2, 5, false), (9, 10, true), (6, 3, true)] {
            let e = read_range(&r, b"l", l, start, n, rev).unwrap_err();
            assert!(
                matches!(&e, Reply::Error(t) if t.contains("corrupt list 'l'")),
                "{e:?}"
            );
        }
        // Ranges that do not reach the hole are fine.
        assert_eq!(read_range(&r, b"l", l, 0, 4, false).unwrap().len(), 4);
        assert_eq!(read_range(&r, b"l", l, 9, 5, true).unwrap().len(), 5);
        let mut txn = store.txn();
        assert!(pop(&mut txn, b"l", true, 10).is_err());
    }
}
