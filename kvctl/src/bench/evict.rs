//! Dropping a database's files from the OS page cache (`posix_fadvise(DONTNEED)`), so a
//! phase after reopen starts with cold files as well as cold engine caches.

use std::path::Path;

use bloomkv::{Error, Result};

/// Asks the OS to drop every file of `dir` from its page cache. Only clean pages are
/// dropped, so the database must be closed (and its files synced) first.
///
/// # Errors
/// I/O errors listing or opening the files; [`Error::InvalidArgument`] where the OS has no
/// `posix_fadvise`.
pub fn evict_dir(dir: &Path) -> Result<()> {
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let path = entry.map_err(|e| Error::io(dir, e))?.path();
        if path.is_file() {
            evict_file(&path)?;
        }
    }
    Ok(())
}

#[cfg(target_os = "linux")]
fn evict_file(path: &Path) -> Result<()> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    // Dirty pages are not dropped: write them out first.
    file.sync_all().map_err(|e| Error::io(path, e))?;
    rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed)
        .map_err(|e| Error::io(path, e.into()))
}

#[cfg(not(target_os = "linux"))]
fn evict_file(_path: &Path) -> Result<()> {
    Err(Error::InvalidArgument(
        "page-cache eviction needs posix_fadvise (Linux only here)".into(),
    ))
}
