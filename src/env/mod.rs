//! The file-system boundary.
//!
//! The engine touches files only through [`Env`], so tests can substitute an implementation
//! that injects failures (EIO, ENOSPC, short writes, lost unsynced data). [`StdEnv`] is the real
//! one, built on `std::fs`; an env that changes a few calls of another implements
//! [`EnvWrapper`], which forwards the rest.

#[cfg(any(test, feature = "fault-injection"))]
pub mod fault;
mod lock;
mod mmap;
mod wrapper;

pub use lock::FileLock;
pub use mmap::Mapping;
pub use wrapper::EnvWrapper;

use std::fmt::Debug;
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};

/// A file opened for appending. Data reaches the OS on [`WritableFile::flush`] and stable
/// storage on [`WritableFile::sync`].
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::env::{Env, StdEnv, WritableFile};
/// let dir = tempfile::tempdir()?;
/// let mut f = StdEnv.create_writable(&dir.path().join("log"))?;
/// f.append(b"record")?; // maybe only buffered
/// f.flush()?; // the OS has it
/// f.sync()?; // the disk has it
/// assert_eq!(f.len(), 6);
/// assert!(!f.is_empty());
/// assert!(f.sync_handle().is_some()); // a real file can be synced from another thread
/// # Ok(())
/// # }
/// ```
pub trait WritableFile: Send {
    /// Appends `data` (possibly only to a user-space buffer).
    fn append(&mut self, data: &[u8]) -> Result<()>;
    /// Hands buffered data to the operating system (survives a process crash, not a power cut).
    fn flush(&mut self) -> Result<()>;
    /// Flushes, then forces the data to stable storage (`fdatasync`).
    fn sync(&mut self) -> Result<()>;
    /// Bytes appended so far (including any still buffered).
    fn len(&self) -> u64;
    /// True when nothing has been appended.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// A handle that makes the bytes already handed to the OS durable from another thread
    /// while this file keeps taking appends (`None`, the default: the file cannot do that).
    fn sync_handle(&self) -> Option<SyncHandle> {
        None
    }
}

/// See [`WritableFile::sync_handle`].
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::env::{Env, StdEnv, SyncHandle, WritableFile};
/// let dir = tempfile::tempdir()?;
/// let mut f = StdEnv.create_writable(&dir.path().join("log"))?;
/// let sync: SyncHandle = f.sync_handle().expect("a real file");
/// f.append(b"more")?;
/// f.flush()?;
/// std::thread::spawn(move || sync()).join().unwrap()?; // fsync off the writer's thread
/// # Ok(())
/// # }
/// ```
pub type SyncHandle = Arc<dyn Fn() -> Result<()> + Send + Sync>;

/// A file read by positional reads, shareable between threads.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::env::{Env, RandomAccessFile, StdEnv};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("data");
/// std::fs::write(&path, b"hello world")?;
/// let f = StdEnv.open_random_access(&path)?;
/// assert_eq!(f.read_at(6, 5)?, b"world");
/// assert_eq!(f.read_at_reusing(0, 5, Vec::with_capacity(64))?, b"hello");
/// assert!(f.read_at(6, 10).unwrap_err().is_corruption()); // past the end
/// assert_eq!((f.size(), f.path()), (11, path.as_path()));
/// assert!(f.mapping().is_none()); // not opened with open_mapped
/// # Ok(())
/// # }
/// ```
pub trait RandomAccessFile: Send + Sync + Debug {
    /// Reads exactly `len` bytes at `offset`; reading past the end is an error.
    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>>;
    /// As [`RandomAccessFile::read_at`], but may reuse `spare`'s allocation (a buffer the
    /// caller no longer needs, such as an evicted cache block's) instead of allocating.
    fn read_at_reusing(&self, offset: u64, len: usize, spare: Vec<u8>) -> Result<Vec<u8>> {
        drop(spare);
        self.read_at(offset, len)
    }
    /// The whole file mapped into memory, when it was opened with [`Env::open_mapped`] and
    /// the environment maps files (default `None`): readers may then use its bytes in place
    /// instead of copying them out with [`RandomAccessFile::read_at`].
    fn mapping(&self) -> Option<Arc<Mapping>> {
        None
    }
    /// The file's size when it was opened.
    fn size(&self) -> u64;
    /// The path it was opened from (for error messages).
    fn path(&self) -> &Path;
}

/// Everything the engine needs from a file system.
///
/// A method added here also gets a forwarding default in [`EnvWrapper`] and a line in its
/// blanket implementation, so that wrappers keep forwarding it.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::env::{Env, StdEnv, WritableFile};
/// let env = StdEnv;
/// let dir = tempfile::tempdir()?;
/// let (a, b) = (dir.path().join("a"), dir.path().join("b"));
/// let mut f = env.create_writable(&a)?;
/// f.append(b"abc")?;
/// f.sync()?;
/// drop(f);
/// let mut more = env.open_appendable(&a)?;
/// more.append(b"def")?;
/// more.flush()?;
/// drop(more);
/// assert_eq!(env.read_all(&a)?, b"abcdef");
/// assert_eq!(env.open_random_access(&a)?.read_at(3, 3)?, b"def");
/// assert_eq!(env.open_mapped(&a)?.read_at(0, 3)?, b"abc");
/// env.truncate(&a, 2)?;
/// assert_eq!(env.file_size(&a)?, 2);
/// env.hard_link(&a, &dir.path().join("link"))?;
/// env.rename(&a, &b)?;
/// assert!(!env.exists(&a) && env.exists(&b));
/// env.create_dir_all(&dir.path().join("sub/dir"))?;
/// assert!(env.is_dir(&dir.path().join("sub")));
/// env.remove_dir(&dir.path().join("sub/dir"))?;
/// env.sync_dir(dir.path())?;
/// let mut names = env.list_dir(dir.path())?;
/// names.sort();
/// assert_eq!(names, ["b", "link", "sub"]);
/// env.remove_file(&b)?;
/// let shared = env.lock_file_shared(&dir.path().join("link"))?; // readers share
/// let also = env.lock_file_shared(&dir.path().join("link"))?;
/// assert!(env.lock_file(&dir.path().join("link")).is_err()); // a writer is kept out
/// drop((shared, also));
/// # Ok(())
/// # }
/// ```
pub trait Env: Send + Sync + Debug {
    /// Creates (or truncates) `path` for writing.
    fn create_writable(&self, path: &Path) -> Result<Box<dyn WritableFile>>;
    /// Opens an existing file for appending at its end.
    fn open_appendable(&self, path: &Path) -> Result<Box<dyn WritableFile>>;
    /// Opens `path` for positional reads.
    fn open_random_access(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>>;
    /// Opens an immutable file (a finished table) whose reads are served from a memory map of
    /// it rather than by system calls ([`crate::Options::mmap_reads`]). The default, for an
    /// environment that cannot map files, is [`Env::open_random_access`].
    fn open_mapped(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.open_random_access(path)
    }
    /// Reads a whole file.
    fn read_all(&self, path: &Path) -> Result<Vec<u8>>;
    /// Atomically renames `from` to `to` (replacing `to`).
    fn rename(&self, from: &Path, to: &Path) -> Result<()>;
    /// Deletes a file.
    fn remove_file(&self, path: &Path) -> Result<()>;
    /// Truncates a file to `len` bytes and syncs it.
    fn truncate(&self, path: &Path, len: u64) -> Result<()>;
    /// Creates a directory and its parents.
    fn create_dir_all(&self, path: &Path) -> Result<()>;
    /// Removes an empty directory.
    ///
    /// The default removes it from the real file system, which is what an env wrapping
    /// [`StdEnv`] needs.
    fn remove_dir(&self, path: &Path) -> Result<()> {
        fs::remove_dir(path).map_err(|e| Error::io(path, e))
    }
    /// File names (not paths) in a directory.
    fn list_dir(&self, path: &Path) -> Result<Vec<String>>;
    /// Makes a directory's entries (creations, renames, deletions) durable.
    fn sync_dir(&self, path: &Path) -> Result<()>;
    /// The size of a file.
    fn file_size(&self, path: &Path) -> Result<u64>;
    /// Whether `path` exists.
    fn exists(&self, path: &Path) -> bool;
    /// Whether `path` is a directory.
    fn is_dir(&self, path: &Path) -> bool;
    /// Takes an exclusive lock on `path` (creating it), failing with [`Error::Locked`] when
    /// another holder has it, shared or exclusive (the error says which).
    fn lock_file(&self, path: &Path) -> Result<FileLock>;
    /// Takes a shared lock on the existing file `path`, opened for reading only (so it works
    /// on a read-only file system), without creating it: any number of shared holders may
    /// hold it together; an exclusive holder excludes them ([`Error::Locked`] naming a
    /// writer). A missing file is an [`Error::Io`] of kind `NotFound`.
    ///
    /// The default takes the lock on the real file system ([`StdEnv`]), which is what an env
    /// wrapping `StdEnv` needs.
    fn lock_file_shared(&self, path: &Path) -> Result<FileLock> {
        StdEnv.lock_file_shared(path)
    }
    /// Makes `to` a new name (hard link) of the existing file `from`. Fails when `to` exists.
    ///
    /// The default returns an [`Error::Io`] of kind `Unsupported`; callers then copy the
    /// file instead, as they do when the link would cross file systems (`EXDEV`).
    fn hard_link(&self, from: &Path, to: &Path) -> Result<()> {
        let _ = to;
        Err(Error::io(
            from,
            std::io::Error::from(std::io::ErrorKind::Unsupported),
        ))
    }
}

/// The real file system.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::env::{Env, StdEnv};
/// let dir = tempfile::tempdir()?;
/// StdEnv.create_dir_all(&dir.path().join("x"))?;
/// assert!(StdEnv.is_dir(&dir.path().join("x")));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct StdEnv;

impl StdEnv {
    /// A shared handle to the real file system.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::env::StdEnv;
    /// let opts = bloomkv::Options { env: StdEnv::shared(), ..Default::default() };
    /// assert!(opts.validate().is_ok());
    /// ```
    pub fn shared() -> Arc<dyn Env> {
        Arc::new(StdEnv)
    }
}

struct StdWritable {
    out: BufWriter<File>,
    path: PathBuf,
    len: u64,
}

impl WritableFile for StdWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.out
            .write_all(data)
            .map_err(|e| Error::io(&self.path, e))?;
        self.len += data.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.out.flush().map_err(|e| Error::io(&self.path, e))
    }

    fn sync(&mut self) -> Result<()> {
        self.flush()?;
        self.out
            .get_ref()
            .sync_data()
            .map_err(|e| Error::io(&self.path, e))
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn sync_handle(&self) -> Option<SyncHandle> {
        let file = self.out.get_ref().try_clone().ok()?;
        let path = self.path.clone();
        Some(Arc::new(move || {
            file.sync_data().map_err(|e| Error::io(&path, e))
        }))
    }
}

#[derive(Debug)]
struct StdRandomAccess {
    file: File,
    path: PathBuf,
    size: u64,
}

impl RandomAccessFile for StdRandomAccess {
    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        self.read_at_reusing(offset, len, Vec::new())
    }

    fn read_at_reusing(&self, offset: u64, len: usize, spare: Vec<u8>) -> Result<Vec<u8>> {
        check_read_within(&self.path, offset, len, self.size)?;
        let mut buf = spare;
        // A reused buffer is already initialized up to its old length: only growth is zeroed
        // (the read overwrites every byte anyway).
        buf.resize(len, 0);
        read_exact_at(&self.file, &mut buf, offset).map_err(|e| Error::io(&self.path, e))?;
        Ok(buf)
    }

    fn size(&self) -> u64 {
        self.size
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

/// `Corruption` unless `len` bytes at `offset` lie within a file of `size` bytes.
fn check_read_within(path: &Path, offset: u64, len: usize, size: u64) -> Result<()> {
    let end = offset.checked_add(len as u64);
    if end.is_none_or(|end| end > size) {
        return Err(Error::corruption(
            path,
            offset,
            format!("read of {len} bytes runs past the end of the file ({size} bytes)"),
        ));
    }
    Ok(())
}

/// Opens `path` for reading and returns it with its length, refusing anything but a regular
/// file: a device put where a table or log belongs (a link to /dev/zero) has no length of its
/// own to bound the reads by.
fn open_regular(path: &Path) -> Result<(File, u64)> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(Error::corruption(path, 0, "not a regular file"));
    }
    Ok((file, meta.len()))
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

impl Env for StdEnv {
    fn create_writable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let file = File::create(path).map_err(|e| Error::io(path, e))?;
        Ok(Box::new(StdWritable {
            out: BufWriter::with_capacity(64 * 1024, file),
            path: path.to_path_buf(),
            len: 0,
        }))
    }

    fn open_appendable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        Ok(Box::new(StdWritable {
            out: BufWriter::with_capacity(64 * 1024, file),
            path: path.to_path_buf(),
            len,
        }))
    }

    fn open_random_access(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        let (file, size) = open_regular(path)?;
        Ok(Arc::new(StdRandomAccess {
            file,
            path: path.to_path_buf(),
            size,
        }))
    }

    fn open_mapped(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        let (file, size) = open_regular(path)?;
        Ok(Arc::new(mmap::MappedFile::new(&file, path, size)?))
    }

    fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let meta = file.metadata().map_err(|e| Error::io(path, e))?;
        // A device or pipe put where a log belongs (a link to /dev/zero) would be read until
        // memory runs out; only a regular file's own length is read, never more.
        if !meta.is_file() {
            return Err(Error::corruption(path, 0, "not a regular file"));
        }
        let len = meta.len();
        let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0).min(64 << 20));
        file.take(len)
            .read_to_end(&mut buf)
            .map_err(|e| Error::io(path, e))?;
        Ok(buf)
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        fs::rename(from, to).map_err(|e| Error::io(from, e))
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        fs::remove_file(path).map_err(|e| Error::io(path, e))
    }

    fn truncate(&self, path: &Path, len: u64) -> Result<()> {
        let file = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        file.set_len(len).map_err(|e| Error::io(path, e))?;
        file.sync_all().map_err(|e| Error::io(path, e))
    }

    fn create_dir_all(&self, path: &Path) -> Result<()> {
        fs::create_dir_all(path).map_err(|e| Error::io(path, e))
    }

    fn list_dir(&self, path: &Path) -> Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in fs::read_dir(path).map_err(|e| Error::io(path, e))? {
            let entry = entry.map_err(|e| Error::io(path, e))?;
            if let Some(name) = entry.file_name().to_str() {
                names.push(name.to_string());
            }
        }
        names.sort();
        Ok(names)
    }

    fn sync_dir(&self, path: &Path) -> Result<()> {
        #[cfg(unix)]
        {
            let dir = File::open(path).map_err(|e| Error::io(path, e))?;
            dir.sync_all().map_err(|e| Error::io(path, e))?;
        }
        #[cfg(not(unix))]
        let _ = path;
        Ok(())
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        Ok(fs::metadata(path).map_err(|e| Error::io(path, e))?.len())
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }

    fn lock_file(&self, path: &Path) -> Result<FileLock> {
        lock::exclusive(path)
    }

    fn lock_file_shared(&self, path: &Path) -> Result<FileLock> {
        lock::shared(path)
    }

    fn hard_link(&self, from: &Path, to: &Path) -> Result<()> {
        fs::hard_link(from, to).map_err(|e| Error::io(to, e))
    }
}

/// A file being written in memory (for tests, benches, fuzzing, or tables built in RAM).
/// Clones share the bytes, so a caller can hand one clone to a writer and read the other.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::env::{MemWritableFile, WritableFile};
/// let file = MemWritableFile::new();
/// let mut writer = file.clone(); // clones share the bytes
/// writer.append(b"abc")?;
/// assert_eq!(file.contents(), b"abc");
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct MemWritableFile {
    bytes: Arc<parking_lot::Mutex<Vec<u8>>>,
}

impl MemWritableFile {
    /// An empty file.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::env::{MemWritableFile, WritableFile};
    /// assert!(MemWritableFile::new().is_empty());
    /// ```
    pub fn new() -> MemWritableFile {
        MemWritableFile::default()
    }

    /// An empty file with room for `bytes` before it reallocates.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::env::{MemWritableFile, WritableFile};
    /// assert_eq!(MemWritableFile::with_capacity(4096).len(), 0);
    /// ```
    pub fn with_capacity(bytes: usize) -> MemWritableFile {
        MemWritableFile {
            bytes: Arc::new(parking_lot::Mutex::new(Vec::with_capacity(bytes))),
        }
    }

    /// A copy of everything appended so far.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::env::{MemWritableFile, WritableFile};
    /// let mut f = MemWritableFile::new();
    /// f.append(b"x")?;
    /// assert_eq!(f.contents(), b"x");
    /// # Ok(())
    /// # }
    /// ```
    pub fn contents(&self) -> Vec<u8> {
        self.bytes.lock().clone()
    }
}

impl WritableFile for MemWritableFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.bytes.lock().extend_from_slice(data);
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        Ok(())
    }

    fn len(&self) -> u64 {
        self.bytes.lock().len() as u64
    }
}

/// A file held in memory and read by position, with the same bounds rule as a real file:
/// reading past the end is `Corruption` naming `path`.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::env::{MemRandomAccessFile, RandomAccessFile};
/// let f = MemRandomAccessFile::new(b"0123456789".to_vec(), "in-memory");
/// assert_eq!(f.read_at(2, 3)?, b"234");
/// assert!(f.read_at(8, 3).unwrap_err().is_corruption());
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct MemRandomAccessFile {
    data: Vec<u8>,
    path: PathBuf,
}

impl MemRandomAccessFile {
    /// Serves `data` as if it were the file at `path`.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::env::{MemRandomAccessFile, RandomAccessFile};
    /// let f = MemRandomAccessFile::new(vec![1, 2, 3], "x.sst");
    /// assert_eq!((f.size(), f.path()), (3, std::path::Path::new("x.sst")));
    /// ```
    pub fn new(data: Vec<u8>, path: impl Into<PathBuf>) -> MemRandomAccessFile {
        MemRandomAccessFile {
            data,
            path: path.into(),
        }
    }
}

impl RandomAccessFile for MemRandomAccessFile {
    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        let range = usize::try_from(offset)
            .ok()
            .and_then(|start| Some(start..start.checked_add(len)?))
            .filter(|r| r.end <= self.data.len());
        match range {
            Some(r) => Ok(self.data[r].to_vec()),
            None => Err(Error::corruption(
                &self.path,
                offset,
                format!(
                    "read of {len} bytes runs past the end of the file ({} bytes)",
                    self.data.len()
                ),
            )),
        }
    }

    fn size(&self) -> u64 {
        self.data.len() as u64
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::LockHolder;

    #[test]
    fn memory_files_share_bytes_and_check_bounds() -> Result<()> {
        let file = MemWritableFile::new();
        let mut w: Box<dyn WritableFile> = Box::new(file.clone());
        w.append(b"hello ")?;
        w.append(b"world")?;
        assert_eq!((w.len(), file.contents()), (11, b"hello world".to_vec()));
        let r = MemRandomAccessFile::new(file.contents(), "000001.sst");
        assert_eq!(r.read_at(6, 5)?, b"world");
        assert_eq!(r.read_at(11, 0)?, b"");
        for (offset, len) in [(8, 5), (12, 0), (u64::MAX, 1), (1, usize::MAX)] {
            let e = r.read_at(offset, len).unwrap_err();
            assert!(e.to_string().contains("000001.sst"), "{e}");
        }
        Ok(())
    }

    #[test]
    fn write_read_rename_lock() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let env = StdEnv;
        let a = dir.path().join("a");
        let mut w = env.create_writable(&a)?;
        w.append(b"hello ")?;
        w.append(b"world")?;
        assert_eq!(w.len(), 11);
        w.sync()?;
        drop(w);
        let r = env.open_random_access(&a)?;
        assert_eq!(r.read_at(6, 5)?, b"world");
        assert!(r.read_at(8, 5).is_err());
        let b = dir.path().join("b");
        env.rename(&a, &b)?;
        assert!(!env.exists(&a) && env.exists(&b));
        assert_eq!(env.list_dir(dir.path())?, vec!["b".to_string()]);
        let lock_path = dir.path().join("LOCK");
        let held = env.lock_file(&lock_path)?;
        let err = env.lock_file(&lock_path).unwrap_err();
        assert!(err.to_string().contains("held by a writer"), "{err}");
        let err = env.lock_file_shared(&lock_path).unwrap_err();
        assert!(
            matches!(&err, Error::Locked(c) if c.holder == LockHolder::Writer),
            "{err}"
        );
        drop(held);
        // Shared holders share; an exclusive taker is told they are read-only openers.
        let r1 = env.lock_file_shared(&lock_path)?;
        let r2 = env.lock_file_shared(&lock_path)?;
        let err = env.lock_file(&lock_path).unwrap_err();
        assert!(
            matches!(&err, Error::Locked(c) if c.holder == LockHolder::ReadOnly),
            "{err}"
        );
        assert!(
            err.to_string().contains("held by read-only openers"),
            "{err}"
        );
        drop((r1, r2));
        env.lock_file(&lock_path)?;
        // A shared lock never creates the file.
        let missing = dir.path().join("NOLOCK");
        assert!(env.lock_file_shared(&missing).is_err());
        assert!(!missing.exists());
        Ok(())
    }
}
