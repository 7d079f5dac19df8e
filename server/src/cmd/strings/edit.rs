//! [`Edit`]: a string key opened for in-place changes at byte positions (SETRANGE,
//! BITFIELD), whose commit writes back only the chunks it changed.
//!
//! The representation follows SETBIT's rule ([`store`](super::store)): a string stays inline
//! while it fits one chunk; an edit that makes it longer (or edits an inline string already
//! longer) turns it into a chunked one.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};

use super::chunks::copy_overlap;
use super::store::{put_chunked, put_chunks};
use crate::resp::Reply;
use crate::store::{CHUNK_BYTES, Meta, Txn, chunk_key};

const CB: u64 = CHUNK_BYTES as u64;

/// Where an edited string's bytes live.
enum Body {
    Inline(Vec<u8>),
    Chunked {
        version: u64,
        /// Chunks read or written so far (as stored: possibly shorter than a chunk).
        chunks: BTreeMap<u64, Vec<u8>>,
        dirty: BTreeSet<u64>,
    },
}

/// A string key opened for changes; nothing is written until [`Edit::commit`].
pub struct Edit {
    key: Vec<u8>,
    len: u64,
    body: Body,
}

impl Edit {
    /// Opens the string `key` (a missing key is an empty string) grown with zeros to at least
    /// `min_len` bytes, as Redis's `lookupStringForBitCommand` does.
    ///
    /// # Errors
    /// WRONGTYPE for other types; engine errors.
    pub fn open(txn: &mut Txn<'_>, key: &[u8], min_len: u64) -> Result<Edit, Reply> {
        let (len, body) = match txn.meta(key)? {
            None if min_len <= CB => (min_len, Body::Inline(vec![0; min_len as usize])),
            None => (min_len, chunked(txn.new_version()?)),
            Some(Meta::Str(mut v)) => {
                let len = min_len.max(v.len() as u64);
                if len <= CB {
                    v.resize(len as usize, 0);
                    (len, Body::Inline(v))
                } else {
                    let version = txn.new_version()?;
                    put_chunks(txn, key, version, &v);
                    (len, chunked(version))
                }
            }
            Some(Meta::Chunked { version, len }) => (len.max(min_len), chunked(version)),
            Some(_) => return Err(super::store::wrong_type()),
        };
        Ok(Edit {
            key: key.to_vec(),
            len,
            body,
        })
    }

    /// The string's length now.
    pub fn byte_len(&self) -> u64 {
        self.len
    }

    /// Reads `out.len()` bytes at `pos` (zeros past the end).
    ///
    /// # Errors
    /// Engine errors.
    pub fn read(&mut self, txn: &Txn<'_>, pos: u64, out: &mut [u8]) -> Result<(), Reply> {
        out.fill(0);
        let end = (pos + out.len() as u64).min(self.len);
        if pos >= end {
            return Ok(());
        }
        match &mut self.body {
            Body::Inline(v) => copy_overlap(out, pos, 0, v),
            Body::Chunked {
                version, chunks, ..
            } => {
                for idx in pos / CB..=(end - 1) / CB {
                    let c = load(txn, &self.key, *version, chunks, idx)?;
                    copy_overlap(out, pos, idx * CB, c);
                }
            }
        }
        Ok(())
    }

    /// Writes `data` at `pos`, inside the length the string was opened with (which chose
    /// its representation).
    ///
    /// # Errors
    /// Engine errors; a write past the opened length (a caller's bug).
    pub fn write(&mut self, txn: &Txn<'_>, pos: u64, data: &[u8]) -> Result<(), Reply> {
        if data.is_empty() {
            return Ok(());
        }
        let end = pos + data.len() as u64;
        if end > self.len {
            return Err(Reply::err(
                "internal error: string edit past its opened length",
            ));
        }
        match &mut self.body {
            Body::Inline(v) => v[pos as usize..end as usize].copy_from_slice(data),
            Body::Chunked {
                version,
                chunks,
                dirty,
            } => {
                for idx in pos / CB..=(end - 1) / CB {
                    let c = load(txn, &self.key, *version, chunks, idx)?;
                    let lo = pos.max(idx * CB);
                    let hi = end.min((idx + 1) * CB);
                    let within = (hi - idx * CB) as usize;
                    if c.len() < within {
                        c.resize(within, 0);
                    }
                    let from = (lo - pos) as usize;
                    let n = (hi - lo) as usize;
                    let at = (lo - idx * CB) as usize;
                    c[at..at + n].copy_from_slice(&data[from..from + n]);
                    dirty.insert(idx);
                }
            }
        }
        Ok(())
    }

    /// Writes the changed chunks and the metadata (keeping the key's time to live).
    ///
    /// # Errors
    /// Engine errors.
    pub fn commit(self, txn: &mut Txn<'_>) -> Result<(), Reply> {
        match self.body {
            Body::Inline(v) => txn.put_meta(&self.key, Meta::Str(v)),
            Body::Chunked {
                version,
                mut chunks,
                dirty,
            } => {
                for idx in dirty {
                    if let Some(c) = chunks.remove(&idx) {
                        txn.put(chunk_key(&self.key, version, idx), c);
                    }
                }
                put_chunked(txn, &self.key, version, self.len)
            }
        }
    }
}

fn chunked(version: u64) -> Body {
    Body::Chunked {
        version,
        chunks: BTreeMap::new(),
        dirty: BTreeSet::new(),
    }
}

/// The cached chunk `idx`, read from the write set the first time.
fn load<'c>(
    txn: &Txn<'_>,
    key: &[u8],
    version: u64,
    chunks: &'c mut BTreeMap<u64, Vec<u8>>,
    idx: u64,
) -> Result<&'c mut Vec<u8>, Reply> {
    Ok(match chunks.entry(idx) {
        Entry::Occupied(e) => e.into_mut(),
        Entry::Vacant(e) => e.insert(txn.get(&chunk_key(key, version, idx))?.unwrap_or_default()),
    })
}
