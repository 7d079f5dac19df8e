//! Table files read through a memory map ([`crate::Options::mmap_reads`]).
//!
//! The table reader uses the mapping's bytes in place for uncompressed blocks
//! ([`super::RandomAccessFile::mapping`]): with the file in the page cache, a present get
//! whose block is not in the block cache then costs no system call and no copy. Reads
//! through [`super::RandomAccessFile::read_at`] copy out of the mapping.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::{Advice, Mmap};

use super::{RandomAccessFile, check_read_within};
use crate::error::{Error, Result};

/// The bytes of a file mapped into memory ([`super::RandomAccessFile::mapping`]); the
/// mapping lasts as long as the last reference to it.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::env::{Env, RandomAccessFile, StdEnv};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("table");
/// std::fs::write(&path, b"mapped bytes")?;
/// let f = StdEnv.open_mapped(&path)?;
/// let map = f.mapping().expect("StdEnv maps files");
/// assert_eq!(&map[..6], b"mapped"); // the file's bytes, in place
/// # Ok(())
/// # }
/// ```
pub struct Mapping(Mmap);

impl std::ops::Deref for Mapping {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for Mapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mapping({} bytes)", self.0.len())
    }
}

/// A finished table file mapped into memory for the life of its reader.
pub(super) struct MappedFile {
    /// `None` for an empty file, which cannot be mapped (and holds nothing to read).
    map: Option<Arc<Mapping>>,
    path: PathBuf,
    size: u64,
}

impl std::fmt::Debug for MappedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MappedFile")
            .field("path", &self.path)
            .field("size", &self.size)
            .finish()
    }
}

impl MappedFile {
    /// Maps the `size` bytes of `file` (opened from `path`).
    pub(super) fn new(file: &File, path: &Path, size: u64) -> Result<MappedFile> {
        let map = if size == 0 {
            None
        } else {
            // SAFETY: the mapping is only sound while no one truncates or rewrites the file
            // (a read of a page cut off by truncation raises SIGBUS; a rewrite changes bytes
            // behind a `&[u8]`). The engine maps only finished tables: they are written
            // whole, synced and never opened for writing again, and removing one only unlinks
            // it, which leaves the mapping intact. Another process writing to a live table
            // file is outside that guarantee; `Options::mmap_reads` documents it.
            #[expect(
                unsafe_code,
                reason = "memory-mapped table reads (Options::mmap_reads)"
            )]
            let map = unsafe { Mmap::map(file) }.map_err(|e| Error::io(path, e))?;
            // Point reads land anywhere in the file: read-ahead around a faulting page would
            // read blocks no one asked for (RocksDB advises the same on its table files).
            // Only advice: a kernel that refuses it reads the same bytes.
            let _ = map.advise(Advice::Random);
            Some(Arc::new(Mapping(map)))
        };
        // The mapping's own length bounds every read, whatever the file did since `size`.
        let size = map.as_ref().map_or(0, |m| m.len() as u64);
        Ok(MappedFile {
            map,
            path: path.to_path_buf(),
            size,
        })
    }
}

impl RandomAccessFile for MappedFile {
    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        self.read_at_reusing(offset, len, Vec::new())
    }

    fn read_at_reusing(&self, offset: u64, len: usize, spare: Vec<u8>) -> Result<Vec<u8>> {
        check_read_within(&self.path, offset, len, self.size)?;
        let mut buf = spare;
        buf.clear();
        if let Some(map) = &self.map {
            // Within `size` (checked above), and the map is `size` bytes long.
            let start = offset as usize;
            buf.extend_from_slice(&map[start..start + len]);
        }
        Ok(buf)
    }

    fn mapping(&self) -> Option<Arc<Mapping>> {
        self.map.clone()
    }

    fn size(&self) -> u64 {
        self.size
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{Env, StdEnv};

    #[test]
    fn reads_what_pread_reads_and_refuses_reads_past_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let mapped = StdEnv.open_mapped(&path).unwrap();
        let plain = StdEnv.open_random_access(&path).unwrap();
        assert_eq!(mapped.size(), 10_000);
        for (off, len) in [(0, 10), (4093, 9), (9_990, 10), (0, 10_000), (5, 0)] {
            let got = mapped.read_at_reusing(off, len, vec![9; 3]).unwrap();
            assert_eq!(got, plain.read_at(off, len).unwrap());
            assert_eq!(got, &data[off as usize..off as usize + len]);
        }
        for (off, len) in [(9_991, 10), (10_001, 0), (u64::MAX, 2)] {
            assert!(matches!(
                mapped.read_at(off, len),
                Err(Error::Corruption { .. })
            ));
        }
    }

    #[test]
    fn an_empty_file_maps_to_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty");
        std::fs::write(&path, b"").unwrap();
        let mapped = StdEnv.open_mapped(&path).unwrap();
        assert_eq!(mapped.size(), 0);
        assert!(mapped.read_at(0, 0).unwrap().is_empty());
        assert!(matches!(
            mapped.read_at(0, 1),
            Err(Error::Corruption { .. })
        ));
    }

    #[test]
    fn a_device_is_refused() {
        if Path::new("/dev/zero").exists() {
            assert!(matches!(
                StdEnv.open_mapped(Path::new("/dev/zero")),
                Err(Error::Corruption { .. })
            ));
        }
    }
}
