//! Saving and loading standalone filters: whole-file reads, atomic replacement on save.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Writes `bytes` to `path` atomically: a temporary file in the same directory is written and
/// synced, then renamed over `path`, then the directory is synced. A crash leaves either the
/// old file or the new one, never a torn mix.
pub(crate) fn save_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| Error::InvalidArgument(format!("{} is not a file name", path.display())))?;
    let mut tmp_name = name.to_os_string();
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = dir.join(tmp_name);
    let write = || -> std::io::Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        // The data must be durable before the rename makes it visible under `path`.
        f.sync_all()
    };
    if let Err(e) = write() {
        let _ = fs::remove_file(&tmp);
        return Err(Error::io(&tmp, e));
    }
    if let Err(e) = fs::rename(&tmp, path) {
        let _ = fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    // Then the directory, so the rename itself survives a crash. Some platforms cannot open
    // a directory for syncing; the rename is done either way.
    if let Ok(d) = File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Reads a whole filter file.
pub(crate) fn read(path: &Path) -> Result<Vec<u8>> {
    fs::read(path).map_err(|e| Error::io(path, e))
}

/// Names `path` in a decoding error (corruption offsets are already file offsets: filter files
/// hold nothing but the filter).
pub(crate) fn locate(err: Error, path: &Path) -> Error {
    match err {
        Error::UnsupportedVersion {
            file,
            found,
            supported,
        } if file.as_os_str().is_empty() => Error::UnsupportedVersion {
            file: path.to_path_buf(),
            found,
            supported,
        },
        other => other.located(path, 0),
    }
}
