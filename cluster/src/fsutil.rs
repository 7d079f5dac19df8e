//! Small file operations done through the engine's [`Env`], so that a fault env's power cut
//! (`bloomkv::env::fault`) models the cluster's own files (pointer file, snapshot metadata)
//! as it models the databases'.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bloomkv::env::Env;

/// Writes `bytes` to a new file at `path` and fsyncs it (not its directory).
pub(crate) fn write_synced(env: &dyn Env, path: &Path, bytes: &[u8]) -> bloomkv::Result<()> {
    let mut f = env.create_writable(path)?;
    f.append(bytes)?;
    f.sync()
}

/// The directory holding `path` (`.` for a bare name).
pub(crate) fn parent(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Replaces the file at `path` with `bytes` so that a crash leaves either the old or the new
/// contents: temp file, fsync, rename over, fsync of the directory.
pub(crate) fn replace_atomically(env: &dyn Env, path: &Path, bytes: &[u8]) -> bloomkv::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = Path::new(&tmp);
    write_synced(env, tmp, bytes)?;
    env.rename(tmp, path)?;
    env.sync_dir(parent(path))
}

/// Removes a directory and everything under it. A missing directory is not an error.
pub(crate) fn remove_tree(env: &dyn Env, dir: &Path) -> bloomkv::Result<()> {
    if !env.exists(dir) {
        return Ok(());
    }
    for name in env.list_dir(dir)? {
        let p = dir.join(name);
        if env.is_dir(&p) {
            remove_tree(env, &p)?;
        } else {
            env.remove_file(&p)?;
        }
    }
    env.remove_dir(dir)
}

/// Removes a directory when dropped, if it was retired by then: a generation or snapshot
/// directory that something may still be reading goes when its last user lets go.
pub(crate) struct DirGuard {
    path: PathBuf,
    env: Arc<dyn Env>,
    retired: AtomicBool,
}

impl DirGuard {
    /// Guards `path`; `retired` from the start for scratch directories.
    pub(crate) fn new(path: PathBuf, env: Arc<dyn Env>, retired: bool) -> DirGuard {
        DirGuard {
            path,
            env,
            retired: AtomicBool::new(retired),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The directory is no longer wanted: remove it once unused.
    pub(crate) fn retire(&self) {
        self.retired.store(true, Ordering::Release);
    }
}

impl Drop for DirGuard {
    fn drop(&mut self) {
        if self.retired.load(Ordering::Acquire) {
            // A failure leaves a stray directory that the next startup removes.
            let _ = remove_tree(self.env.as_ref(), &self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bloomkv::env::StdEnv;

    #[test]
    fn replace_and_remove() {
        let dir = tempfile::tempdir().unwrap();
        let env = StdEnv;
        let p = dir.path().join("POINTER");
        replace_atomically(&env, &p, b"one").unwrap();
        replace_atomically(&env, &p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert!(!dir.path().join("POINTER.tmp").exists());
        let sub = dir.path().join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join("f"), b"x").unwrap();
        remove_tree(&env, &dir.path().join("a")).unwrap();
        assert!(!dir.path().join("a").exists());
        remove_tree(&env, &dir.path().join("missing")).unwrap();
    }
}
