//! Writing and reading `MANIFEST-NNNNNN` files.

use std::path::Path;
#[cfg(any(test, feature = "internals"))]
use std::path::PathBuf;

use crate::env::Env;
use crate::error::{Error, Result};
use crate::util::filename::manifest_path;
use crate::db::wal::{LogReader, LogWriter, Physical, Problem, RecoveryMode, parse_at};

use super::edit::VersionEdit;

/// The first 8 bytes of a manifest's header record.
pub const MANIFEST_MAGIC: [u8; 8] = *b"BKVMANIF";

/// The manifest format this build writes and the newest it reads. It also versions the WAL
/// and the layout of the database directory, which have no headers of their own.
/// Version 2 added range deletes: WAL batches may hold op tag 2, and version edits tag 7
/// (a new file with range tombstones). Version-1 manifests and logs are still read.
pub const MANIFEST_FORMAT_VERSION: u32 = 2;

const HEADER_LEN: usize = MANIFEST_MAGIC.len() + 4;

fn header_record() -> Vec<u8> {
    let mut h = Vec::with_capacity(HEADER_LEN);
    h.extend_from_slice(&MANIFEST_MAGIC);
    h.extend_from_slice(&MANIFEST_FORMAT_VERSION.to_le_bytes());
    h
}

/// Appends version edits to a manifest, each durable before `append` returns.
#[derive(Debug)]
pub struct ManifestWriter {
    log: LogWriter,
    #[cfg(any(test, feature = "internals"))]
    number: u64,
    #[cfg(any(test, feature = "internals"))]
    path: PathBuf,
}

impl ManifestWriter {
    /// Creates `dir/MANIFEST-number` (replacing any file of that name) holding only the
    /// header record, synced, with its directory entry synced too, so CURRENT may name it.
    ///
    /// # Errors
    /// I/O errors creating, writing or syncing the file or the directory.
    pub fn create(env: &dyn Env, dir: &Path, number: u64) -> Result<ManifestWriter> {
        let path = manifest_path(dir, number);
        let mut log = LogWriter::new(env.create_writable(&path)?);
        log.add_record(&header_record())?;
        log.sync()?;
        env.sync_dir(dir)?;
        Ok(ManifestWriter {
            log,
            #[cfg(any(test, feature = "internals"))]
            number,
            #[cfg(any(test, feature = "internals"))]
            path,
        })
    }

    /// Appends `edit` as one record and fsyncs: on `Ok` the edit survives a crash. On `Err`
    /// the edit may or may not be in the file (a reader sees it whole or not at all) and the
    /// writer refuses further appends; the engine must switch to a new manifest.
    ///
    /// # Errors
    /// I/O errors writing or syncing; [`Error::WritesStopped`] after an earlier failure.
    pub fn append(&mut self, edit: &VersionEdit) -> Result<()> {
        self.log.add_record(&edit.encode())?;
        self.log.sync()
    }

    /// Whether an append failed, so the writer refuses further appends and the engine must
    /// switch to a new manifest.
    pub(crate) fn has_failed(&self) -> bool {
        self.log.has_failed()
    }

    /// The manifest's file number.
    #[cfg(any(test, feature = "internals"))]
    pub fn number(&self) -> u64 {
        self.number
    }

    /// Bytes written so far.
    #[cfg(any(test, feature = "internals"))]
    pub fn size(&self) -> u64 {
        self.log.len()
    }

    /// The manifest's path.
    #[cfg(any(test, feature = "internals"))]
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Reads every version edit in the manifest at `path`, oldest first.
///
/// A damaged or incomplete last record is what a crash during [`ManifestWriter::append`]
/// leaves; that append never returned `Ok`, so the record is ignored. Because appending after
/// it would turn it into middle damage, the engine writes a new manifest after recovery
/// rather than appending to this one.
///
/// # Errors
/// - [`Error::Corruption`] naming `path` and an offset for a missing or wrong header, damage
///   followed by good records, or an edit that does not decode (the offset is then that of
///   the edit's record; the message gives the position inside the edit);
/// - [`Error::UnsupportedVersion`] for a manifest written by a newer format;
/// - I/O errors reading the file.
pub fn read_manifest(env: &dyn Env, path: &Path) -> Result<Vec<VersionEdit>> {
    let mut reader = LogReader::open(env, path, RecoveryMode::Strict)?;
    let Some(header) = reader.next_record()? else {
        return Err(Error::corruption(
            path,
            0,
            "manifest has no complete header record",
        ));
    };
    check_header(path, &header)?;
    let mut edits = Vec::new();
    while let Some(record) = reader.next_record()? {
        let edit = VersionEdit::decode(&record).map_err(|e| match e {
            Error::Corruption { offset, why, .. } => Error::corruption(
                path,
                reader.last_record_offset(),
                format!("version edit record: {why} (at byte {offset} of the edit)"),
            ),
            other => other,
        })?;
        edits.push(edit);
    }
    if let Some((offset, _)) = reader.tail_dropped() {
        check_torn_tail(path, &reader, offset)?;
    }
    Ok(edits)
}

/// A crash mid-append leaves a last record cut short by the end of the file (or zero-filled
/// space). A last record that is all there but fails its checksum is damage to an edit that
/// may have been acknowledged (and acted on: WALs deleted, tables replaced), so it is an
/// error, not something to drop quietly.
fn check_torn_tail(path: &Path, reader: &LogReader, offset: u64) -> Result<()> {
    let mut damage = None;
    reader.for_each_block_from(offset, |start, block| {
        // Where to look in this block: from the tail's start in its own block, else from
        // the block's beginning.
        let mut pos = usize::try_from(offset.saturating_sub(start)).unwrap_or(usize::MAX);
        loop {
            match parse_at(block, pos) {
                Physical::Record { end, .. } => pos = end,
                Physical::BlockTrailer { next } if next > pos => pos = next,
                // The end of this block: the tail goes on in the next one, if any.
                Physical::BlockTrailer { .. } | Physical::End => return Ok(true),
                Physical::Bad {
                    cut_by_end: true, ..
                }
                | Physical::Bad {
                    problem: Problem::ZeroFilled,
                    ..
                } => return Ok(false),
                Physical::Bad { problem, .. } => {
                    damage = Some((start + pos as u64, problem));
                    return Ok(false);
                }
            }
        }
    })?;
    match damage {
        None => Ok(()),
        Some((at, problem)) => Err(Error::corruption(
            path,
            at,
            format!(
                "the last record is damaged, not cut short by a crash: {}",
                problem.describe()
            ),
        )),
    }
}

/// Checks a manifest's first record: the magic and a format version this build reads.
pub(crate) fn check_header(path: &Path, header: &[u8]) -> Result<()> {
    if header.len() < HEADER_LEN || header[..MANIFEST_MAGIC.len()] != MANIFEST_MAGIC {
        return Err(Error::corruption(
            path,
            0,
            "not a bloomkv manifest (bad magic in the header record)",
        ));
    }
    let v = &header[MANIFEST_MAGIC.len()..HEADER_LEN];
    let version = u32::from_le_bytes([v[0], v[1], v[2], v[3]]);
    if version > MANIFEST_FORMAT_VERSION {
        return Err(Error::UnsupportedVersion {
            file: path.to_path_buf(),
            found: version,
            supported: MANIFEST_FORMAT_VERSION,
        });
    }
    if version == 0 || header.len() != HEADER_LEN {
        return Err(Error::corruption(
            path,
            0,
            format!(
                "malformed manifest header (version {version}, {} bytes)",
                header.len()
            ),
        ));
    }
    Ok(())
}
