//! The CURRENT file: which manifest is live.

use std::path::Path;

use crate::env::Env;
use crate::error::{Error, Result};
use crate::util::filename::{FileType, current_path, file_name, parse_file_name, temp_path};

/// CURRENT holds one short line; anything much longer is not a CURRENT file.
const MAX_CURRENT_BYTES: u64 = 256;

/// Points CURRENT at `MANIFEST-manifest_number`, atomically: after a crash at any moment
/// CURRENT names either the old manifest or the new one, and is never empty or partial.
///
/// The manifest itself must already be synced (as [`super::ManifestWriter::create`] does).
///
/// # Errors
/// I/O errors writing, syncing or renaming; on failure CURRENT is unchanged (the temp file
/// is removed when possible).
pub fn set_current(env: &dyn Env, dir: &Path, manifest_number: u64) -> Result<()> {
    let content = format!("{}\n", file_name(FileType::Manifest, manifest_number));
    let temp = temp_path(dir, manifest_number);
    let result = (|| {
        // 1. Write the new content to a temp file and fsync it: its bytes must be on disk
        //    before any name points at them, or a crash could leave CURRENT empty.
        let mut f = env.create_writable(&temp)?;
        f.append(content.as_bytes())?;
        f.sync()?;
        drop(f);
        // 2. Rename over CURRENT: rename is atomic, so readers see the old or the new file.
        env.rename(&temp, &current_path(dir))
    })();
    if let Err(e) = result {
        // Best effort: the temp file is garbage either way, and the engine deletes leftover
        // temp files on open, so a failure to remove it here is not worth reporting over `e`.
        let _ = env.remove_file(&temp);
        return Err(e);
    }
    // 3. Fsync the directory: the rename lives in the directory, and only this makes it
    //    durable. Until it returns, a crash may bring back the old CURRENT, which is fine as
    //    the caller has not yet been told the switch happened.
    env.sync_dir(dir)
}

/// Reads CURRENT and returns the number of the manifest it names.
///
/// # Errors
/// [`Error::Corruption`] naming CURRENT if it is not exactly `MANIFEST-<digits>\n`; I/O
/// errors (including not-found) reading it.
pub fn read_current(env: &dyn Env, dir: &Path) -> Result<u64> {
    let path = current_path(dir);
    let size = env.file_size(&path)?;
    if size > MAX_CURRENT_BYTES {
        return Err(Error::corruption(
            &path,
            0,
            format!("CURRENT is {size} bytes; expected one line naming a manifest"),
        ));
    }
    let bytes = env.read_all(&path)?;
    let malformed = |why: &str| {
        Error::corruption(
            &path,
            0,
            format!(
                "{why}; expected \"MANIFEST-NNNNNN\\n\", found {:?}",
                String::from_utf8_lossy(&bytes)
            ),
        )
    };
    let Some(line) = bytes.strip_suffix(b"\n") else {
        return Err(malformed(
            "CURRENT does not end with a newline (empty or cut short)",
        ));
    };
    let name = std::str::from_utf8(line).map_err(|_| malformed("CURRENT is not UTF-8"))?;
    match parse_file_name(name) {
        Some((FileType::Manifest, number)) => Ok(number),
        _ => Err(malformed("CURRENT does not name a manifest")),
    }
}
