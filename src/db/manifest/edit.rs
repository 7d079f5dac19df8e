//! Version edits and their tagged encoding.

use crate::util::coding::{Decoder, put_length_prefixed, put_varint64};
use crate::error::{Error, Result};
use crate::options::NUM_LEVELS;

/// What the manifest records about one table file.
#[derive(Clone, Debug, PartialEq)]
pub struct FileMeta {
    /// The file number (`NNNNNN.sst`).
    pub number: u64,
    /// Its size in bytes.
    pub size: u64,
    /// The smallest internal key in it.
    pub smallest: Vec<u8>,
    /// The largest internal key in it.
    pub largest: Vec<u8>,
    /// Entries (puts and deletes) in it.
    pub entries: u64,
    /// Of those, deletes (tombstones).
    pub deletions: u64,
    /// Bits per key its Bloom filter was built with; 0.0 when it has no filter.
    pub filter_bits_per_key: f64,
    /// Bytes of its filter block.
    pub filter_bytes: u64,
    /// The false-positive rate its filter is expected to have; 1.0 when it has no filter.
    pub expected_fpr: f64,
    /// Range tombstones in it (its range-deletion block): readers gather the tombstones of
    /// tables with some without opening the others.
    pub range_deletions: u64,
}

/// One change to the database's file set and counters, as appended to the manifest.
/// Fields that are `None` or empty are not changed by the edit.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VersionEdit {
    /// WALs with numbers below this are fully reflected in tables and may be deleted.
    pub log_number: Option<u64>,
    /// The next file number to hand out.
    pub next_file_number: Option<u64>,
    /// The last sequence number used.
    pub last_sequence: Option<u64>,
    /// Per level, the internal key where the next compaction of that level starts.
    pub compact_pointers: Vec<(usize, Vec<u8>)>,
    /// Files removed, as `(level, file number)`.
    pub deleted_files: Vec<(usize, u64)>,
    /// Files added, as `(level, metadata)`.
    pub new_files: Vec<(usize, FileMeta)>,
}

// Field tags. DO NOT RENUMBER: they are on disk. New fields get new tags; an unknown tag is
// corruption (or a newer format, which the manifest header's version rules out first).
const TAG_LOG_NUMBER: u64 = 1;
const TAG_NEXT_FILE_NUMBER: u64 = 2;
const TAG_LAST_SEQUENCE: u64 = 3;
const TAG_COMPACT_POINTER: u64 = 4;
const TAG_DELETED_FILE: u64 = 5;
const TAG_NEW_FILE: u64 = 6;
/// A new file holding range tombstones: tag 6's fields, then their count (manifest version 2).
const TAG_NEW_FILE_WITH_RANGE_DELETES: u64 = 7;

impl VersionEdit {
    /// Encodes the edit: each present field as a varint tag followed by its value. Scalars
    /// come first, then compact pointers, deleted files and new files in their list order.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (tag, value) in [
            (TAG_LOG_NUMBER, self.log_number),
            (TAG_NEXT_FILE_NUMBER, self.next_file_number),
            (TAG_LAST_SEQUENCE, self.last_sequence),
        ] {
            if let Some(v) = value {
                put_varint64(&mut out, tag);
                put_varint64(&mut out, v);
            }
        }
        for (level, key) in &self.compact_pointers {
            put_varint64(&mut out, TAG_COMPACT_POINTER);
            put_varint64(&mut out, *level as u64);
            put_length_prefixed(&mut out, key);
        }
        for (level, number) in &self.deleted_files {
            put_varint64(&mut out, TAG_DELETED_FILE);
            put_varint64(&mut out, *level as u64);
            put_varint64(&mut out, *number);
        }
        for (level, f) in &self.new_files {
            put_varint64(
                &mut out,
                match f.range_deletions {
                    0 => TAG_NEW_FILE,
                    _ => TAG_NEW_FILE_WITH_RANGE_DELETES,
                },
            );
            put_varint64(&mut out, *level as u64);
            put_varint64(&mut out, f.number);
            put_varint64(&mut out, f.size);
            put_length_prefixed(&mut out, &f.smallest);
            put_length_prefixed(&mut out, &f.largest);
            put_varint64(&mut out, f.entries);
            put_varint64(&mut out, f.deletions);
            out.extend_from_slice(&f.filter_bits_per_key.to_bits().to_le_bytes());
            put_varint64(&mut out, f.filter_bytes);
            out.extend_from_slice(&f.expected_fpr.to_bits().to_le_bytes());
            if f.range_deletions > 0 {
                put_varint64(&mut out, f.range_deletions);
            }
        }
        out
    }

    /// Decodes an edit produced by [`VersionEdit::encode`].
    ///
    /// # Errors
    /// [`Error::Corruption`] with the offset within `bytes` (no file: the caller locates it)
    /// for an unknown or repeated scalar tag, a level of 7 or more, a truncated field, or a
    /// filter figure that is not a finite number in range.
    pub fn decode(bytes: &[u8]) -> Result<VersionEdit> {
        let mut d = Decoder::new(bytes);
        let mut edit = VersionEdit::default();
        while !d.is_empty() {
            let tag_at = d.position();
            let tag = d.varint64()?;
            match tag {
                TAG_LOG_NUMBER => {
                    set_once(&mut edit.log_number, d.varint64()?, tag_at, "log number")?
                }
                TAG_NEXT_FILE_NUMBER => set_once(
                    &mut edit.next_file_number,
                    d.varint64()?,
                    tag_at,
                    "next file number",
                )?,
                TAG_LAST_SEQUENCE => set_once(
                    &mut edit.last_sequence,
                    d.varint64()?,
                    tag_at,
                    "last sequence",
                )?,
                TAG_COMPACT_POINTER => {
                    let level = level(&mut d)?;
                    let key = d.length_prefixed()?.to_vec();
                    edit.compact_pointers.push((level, key));
                }
                TAG_DELETED_FILE => {
                    let level = level(&mut d)?;
                    edit.deleted_files.push((level, d.varint64()?));
                }
                TAG_NEW_FILE => {
                    let level = level(&mut d)?;
                    edit.new_files.push((level, file_meta(&mut d)?));
                }
                TAG_NEW_FILE_WITH_RANGE_DELETES => {
                    let level = level(&mut d)?;
                    let mut meta = file_meta(&mut d)?;
                    let at = d.position();
                    meta.range_deletions = d.varint64()?;
                    if meta.range_deletions == 0 {
                        return Err(Error::corrupt_bytes(
                            at as u64,
                            "a new file with range deletes records none",
                        ));
                    }
                    edit.new_files.push((level, meta));
                }
                other => {
                    return Err(Error::corrupt_bytes(
                        tag_at as u64,
                        format!("unknown version edit tag {other}"),
                    ));
                }
            }
        }
        Ok(edit)
    }
}

fn set_once(slot: &mut Option<u64>, v: u64, at: usize, what: &str) -> Result<()> {
    if slot.replace(v).is_some() {
        return Err(Error::corrupt_bytes(
            at as u64,
            format!("{what} appears twice in one version edit"),
        ));
    }
    Ok(())
}

fn level(d: &mut Decoder<'_>) -> Result<usize> {
    let at = d.position();
    let level = d.varint64()?;
    if level >= NUM_LEVELS as u64 {
        return Err(Error::corrupt_bytes(
            at as u64,
            format!("level {level} out of range (there are {NUM_LEVELS})"),
        ));
    }
    Ok(level as usize)
}

fn file_meta(d: &mut Decoder<'_>) -> Result<FileMeta> {
    let number = d.varint64()?;
    let size = d.varint64()?;
    let smallest = d.length_prefixed()?.to_vec();
    let largest = d.length_prefixed()?.to_vec();
    let entries = d.varint64()?;
    let deletions = d.varint64()?;
    let bits_at = d.position();
    let filter_bits_per_key = f64::from_bits(d.u64_le()?);
    if !(filter_bits_per_key.is_finite() && filter_bits_per_key >= 0.0) {
        return Err(Error::corrupt_bytes(
            bits_at as u64,
            format!("filter bits per key {filter_bits_per_key} is not a finite number >= 0"),
        ));
    }
    let filter_bytes = d.varint64()?;
    let fpr_at = d.position();
    let expected_fpr = f64::from_bits(d.u64_le()?);
    if !(0.0..=1.0).contains(&expected_fpr) {
        return Err(Error::corrupt_bytes(
            fpr_at as u64,
            format!("expected false-positive rate {expected_fpr} is not in [0, 1]"),
        ));
    }
    Ok(FileMeta {
        number,
        size,
        smallest,
        largest,
        entries,
        deletions,
        filter_bits_per_key,
        filter_bytes,
        expected_fpr,
        range_deletions: 0,
    })
}
