//! The one error type of the crate.
//!
//! Every fallible public function returns [`Result`]. Variants are structured so callers can
//! match on the kind of failure, and every variant's `Display` says what failed and where.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Shorthand for `std::result::Result<T, bloomkv::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Who holds a database's lock, as reported by [`Error::Locked`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LockHolder {
    /// A handle opened for writing ([`crate::Db::open`], or `repair`): it holds the LOCK
    /// file exclusively.
    Writer,
    /// One or more handles opened with [`crate::Db::open_read_only`]: they share the LOCK
    /// file, which keeps writers out.
    ReadOnly,
}

/// What [`Error::Locked`] carries: the database directory, who holds its lock and, when
/// known, the holders' process ids.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LockConflict {
    /// The database directory.
    pub dir: PathBuf,
    /// Who holds the lock.
    pub holder: LockHolder,
    /// The holders' process ids, when known: as the system names them (on unix, the
    /// owner of the lock in the way; on Linux every read-only opener), else a writer's from
    /// the `LOCK` file, where it writes it (docs/FORMAT.md). Empty when unknown.
    pub pids: Vec<u32>,
    /// What in this process holds the lock, when it is the holder, and what to do.
    in_process: Option<String>,
}

impl LockConflict {
    /// A conflict over the lock of `dir`, held by `holder` (process ids unknown).
    ///
    /// # Examples
    /// ```
    /// use bloomkv::{LockConflict, LockHolder};
    ///
    /// let c = LockConflict::new("/data/db", LockHolder::Writer).with_pids(vec![4242]);
    /// assert!(c.to_string().contains("process 4242"));
    /// ```
    pub fn new(dir: impl Into<PathBuf>, holder: LockHolder) -> LockConflict {
        LockConflict {
            dir: dir.into(),
            holder,
            pids: Vec::new(),
            in_process: None,
        }
    }

    /// The same conflict, its holders' process ids known.
    #[must_use]
    pub fn with_pids(mut self, pids: Vec<u32>) -> LockConflict {
        self.pids = pids;
        self
    }

    /// The same conflict, with what in this process holds the lock (and what to do) when it
    /// is the holder.
    #[must_use]
    pub(crate) fn with_in_process(mut self, what: String) -> LockConflict {
        self.in_process = Some(what);
        self
    }

    /// The database directory.
    ///
    /// # Examples
    /// ```
    /// let c = bloomkv::LockConflict::new("/data/db", bloomkv::LockHolder::ReadOnly);
    /// assert_eq!(c.path(), std::path::Path::new("/data/db"));
    /// ```
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Whether the holder is this process itself (another handle of it, a snapshot keeping
    /// one open, or an open, close or repair under way in another thread).
    fn held_here(&self) -> bool {
        self.pids.contains(&std::process::id())
    }
}

impl fmt::Display for LockConflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pids = match self.pids.as_slice() {
            [] => String::new(),
            [one] => format!(" (process {one})"),
            many => format!(
                " (processes {})",
                many.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        write!(
            f,
            "database {} is locked by another process or handle: ",
            self.dir.display()
        )?;
        match self.holder {
            LockHolder::Writer => write!(f, "held by a writer{pids}")?,
            LockHolder::ReadOnly => write!(f, "held by read-only openers{pids}")?,
        }
        if self.held_here() {
            let what = self.in_process.as_deref().unwrap_or(
                "another handle of it is still open; drop it before opening the database again",
            );
            return write!(f, ", which is this process: {what}");
        }
        let who = match self.pids.as_slice() {
            [] => "it".to_string(),
            [one] => format!("process {one}"),
            _ => "them".to_string(),
        };
        match self.holder {
            LockHolder::Writer => write!(
                f,
                ". To read beside the writer, use kvctl's read commands (get, scan, stats, \
                 verify, checkpoint: they open a secondary); to open it otherwise, stop {who} first"
            ),
            LockHolder::ReadOnly => write!(
                f,
                " (Db::open_read_only). A writer can open it once {who} closed it; kvctl's read \
                 commands (get, scan, stats, verify, checkpoint) read beside them"
            ),
        }
    }
}

/// What can go wrong in bloomkv.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system I/O error, with the path it happened on when known.
    Io {
        /// The file or directory involved, if any.
        path: Option<PathBuf>,
        /// The underlying error.
        source: io::Error,
    },
    /// Bytes on disk (or handed to a decoder) are not what the format says they must be.
    Corruption {
        /// The damaged file; empty when the bytes did not come from a file.
        file: PathBuf,
        /// Byte offset of the damage within `file` (or within the buffer).
        offset: u64,
        /// What is wrong.
        why: String,
    },
    /// The caller passed an argument the API does not accept.
    InvalidArgument(String),
    /// Another process (or another `Db` in this process) holds the database lock in a way
    /// that excludes this open: a writer excludes everyone, read-only openers exclude
    /// writers. The message names which kind holds it.
    Locked(LockConflict),
    /// The database was opened with [`crate::Db::open_read_only`], and the call would change
    /// it (a write, flush, compaction, WAL sync or resume). The message names the call and
    /// the directory.
    ReadOnly(String),
    /// The data was written by a newer, incompatible format version.
    UnsupportedVersion {
        /// The file carrying the version.
        file: PathBuf,
        /// The version found.
        found: u32,
        /// The newest version this build understands.
        supported: u32,
    },
    /// A previous write or background job failed; the database refuses further writes until
    /// [`crate::Db::resume`] succeeds or it is reopened, so that nothing after the failure can
    /// be acknowledged and then lost.
    WritesStopped(String),
    /// A write failed in a way that leaves its outcome unknown: its bytes reached the
    /// operating system, then making them durable failed and they could not be taken back.
    /// After a crash the write may or may not be there. (A write that fails with any other
    /// error is never visible, then or after a reopen.)
    OutcomeUnknown(String),
    /// A standalone filter's bytes (or file) are intact but hold another kind of filter than
    /// the type asked to decode them: a counting filter's file loaded as a
    /// [`BloomFilter`](crate::filter::BloomFilter), say.
    /// [`AnyFilter`](crate::filter::AnyFilter) reads every kind.
    WrongFilterKind {
        /// The file; empty when the bytes did not come from a file.
        file: PathBuf,
        /// The kind found: `"bloom"`, `"counting"` or `"scalable"`.
        found: &'static str,
        /// The kind the caller's type reads.
        expected: &'static str,
    },
    /// [`BloomFilter::try_insert`](crate::filter::BloomFilter::try_insert) was asked to add a
    /// new item to a filter already holding its capacity: past it the false-positive rate
    /// climbs above the rate the filter was built for.
    CapacityExceeded {
        /// The number of items the filter was built for.
        capacity: u64,
        /// The false-positive rate it was built to keep up to that many items.
        error_rate: f64,
    },
}

impl Error {
    /// Builds a [`Error::Corruption`].
    pub fn corruption(file: impl Into<PathBuf>, offset: u64, why: impl Into<String>) -> Self {
        Error::Corruption {
            file: file.into(),
            offset,
            why: why.into(),
        }
    }

    /// Builds a [`Error::Corruption`] for bytes that did not come from a file; the location
    /// can be filled in later with [`Error::located`].
    pub fn corrupt_bytes(offset: u64, why: impl Into<String>) -> Self {
        Error::Corruption {
            file: PathBuf::new(),
            offset,
            why: why.into(),
        }
    }

    /// Builds an [`Error::Io`] for `path`.
    pub fn io(path: impl AsRef<Path>, source: io::Error) -> Self {
        Error::Io {
            path: Some(path.as_ref().to_path_buf()),
            source,
        }
    }

    /// Fills in where a buffer-relative error happened: a `Corruption` without a file gets
    /// `file` and has `base` added to its offset; an `Io` without a path gets `file`.
    /// Other errors are returned unchanged.
    #[must_use]
    pub fn located(self, file: &Path, base: u64) -> Self {
        match self {
            Error::Corruption {
                file: f,
                offset,
                why,
            } if f.as_os_str().is_empty() => Error::Corruption {
                file: file.to_path_buf(),
                offset: base + offset,
                why,
            },
            Error::Io { path: None, source } => Error::Io {
                path: Some(file.to_path_buf()),
                source,
            },
            Error::WrongFilterKind {
                file: f,
                found,
                expected,
            } if f.as_os_str().is_empty() => Error::WrongFilterKind {
                file: file.to_path_buf(),
                found,
                expected,
            },
            other => other,
        }
    }

    /// A copy of this error, for each of several callers that one failure failed (the
    /// writers of one commit group). An I/O error keeps its OS error code or kind and its
    /// message.
    pub(crate) fn duplicate(&self) -> Error {
        match self {
            Error::Io { path, source } => Error::Io {
                path: path.clone(),
                source: match source.raw_os_error() {
                    Some(code) => io::Error::from_raw_os_error(code),
                    None => io::Error::new(source.kind(), source.to_string()),
                },
            },
            Error::Corruption { file, offset, why } => Error::Corruption {
                file: file.clone(),
                offset: *offset,
                why: why.clone(),
            },
            Error::InvalidArgument(why) => Error::InvalidArgument(why.clone()),
            Error::Locked(c) => Error::Locked(c.clone()),
            Error::ReadOnly(why) => Error::ReadOnly(why.clone()),
            Error::UnsupportedVersion {
                file,
                found,
                supported,
            } => Error::UnsupportedVersion {
                file: file.clone(),
                found: *found,
                supported: *supported,
            },
            Error::WritesStopped(why) => Error::WritesStopped(why.clone()),
            Error::OutcomeUnknown(why) => Error::OutcomeUnknown(why.clone()),
            Error::CapacityExceeded {
                capacity,
                error_rate,
            } => Error::CapacityExceeded {
                capacity: *capacity,
                error_rate: *error_rate,
            },
            Error::WrongFilterKind {
                file,
                found,
                expected,
            } => Error::WrongFilterKind {
                file: file.clone(),
                found,
                expected,
            },
        }
    }

    /// True for [`Error::Corruption`].
    pub fn is_corruption(&self) -> bool {
        matches!(self, Error::Corruption { .. })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io {
                path: Some(p),
                source,
            } => write!(f, "I/O error on {}: {source}", p.display()),
            Error::Io { path: None, source } => write!(f, "I/O error: {source}"),
            Error::Corruption { file, offset, why } if file.as_os_str().is_empty() => {
                write!(f, "corruption at byte {offset}: {why}")
            }
            Error::Corruption { file, offset, why } => {
                write!(
                    f,
                    "corruption in {} at byte {offset}: {why}",
                    file.display()
                )
            }
            Error::InvalidArgument(why) => write!(f, "invalid argument: {why}"),
            Error::Locked(conflict) => write!(f, "{conflict}"),
            Error::ReadOnly(why) => write!(f, "{why}"),
            Error::UnsupportedVersion {
                file,
                found,
                supported,
            } => write!(
                f,
                "{} has format version {found}; this build supports up to {supported}",
                file.display()
            ),
            Error::WrongFilterKind {
                file,
                found,
                expected,
            } => {
                if !file.as_os_str().is_empty() {
                    write!(f, "{}: ", file.display())?;
                }
                write!(
                    f,
                    "a {found} filter, not a {expected} filter (read it with the {found} \
                     filter's type, or with AnyFilter, which reads every kind)"
                )
            }
            Error::CapacityExceeded {
                capacity,
                error_rate,
            } => write!(
                f,
                "filter is full: it already holds its capacity of {capacity} items, and more \
                 would push its false-positive rate above {error_rate} (use a larger capacity \
                 or a scalable filter)"
            ),
            Error::WritesStopped(why) => {
                write!(
                    f,
                    "writes stopped after an earlier failure (resume or reopen to recover): {why}"
                )
            }
            Error::OutcomeUnknown(why) => write!(f, "write outcome unknown: {why}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<io::Error> for Error {
    fn from(source: io::Error) -> Self {
        Error::Io { path: None, source }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn located_fills_file_and_offset_once() {
        let e = Error::corrupt_bytes(5, "bad crc").located(Path::new("000001.sst"), 100);
        assert_eq!(
            e.to_string(),
            "corruption in 000001.sst at byte 105: bad crc"
        );
        // A located error keeps its first location.
        let e = e.located(Path::new("other"), 7);
        assert!(e.to_string().contains("000001.sst at byte 105"));
    }

    #[test]
    fn a_duplicate_says_the_same() {
        let errors = [
            Error::io("/x/y", io::Error::from_raw_os_error(28)),
            Error::io("/x/y", io::Error::other("boom")),
            Error::corruption("f", 3, "bad"),
            Error::WritesStopped("why".into()),
            Error::OutcomeUnknown("why".into()),
        ];
        for e in errors {
            let d = e.duplicate();
            assert_eq!(d.to_string(), e.to_string());
            if let (Error::Io { source: a, .. }, Error::Io { source: b, .. }) = (&e, &d) {
                assert_eq!(a.kind(), b.kind());
                assert_eq!(a.raw_os_error(), b.raw_os_error());
            }
        }
    }

    #[test]
    fn io_error_names_path() {
        let e = Error::io("/x/y", io::Error::other("boom"));
        assert_eq!(e.to_string(), "I/O error on /x/y: boom");
        assert!(std::error::Error::source(&e).is_some());
    }
}
