//! The files a [`FaultEnv`](super::FaultEnv) hands out: writes and syncs, and reads, that
//! fail as planned.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{FaultController, FaultKind, FaultOp};
use crate::env::{Mapping, RandomAccessFile, SyncHandle, WritableFile};
use crate::error::Result;

pub(super) struct FaultWritable {
    pub(super) inner: Box<dyn WritableFile>,
    pub(super) path: PathBuf,
    pub(super) ctl: Arc<FaultController>,
    /// Bytes handed to the OS: what an fsync through a sync handle makes durable.
    pub(super) flushed: Arc<AtomicU64>,
}

impl WritableFile for FaultWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        match self.ctl.check(FaultOp::Write, &self.path) {
            None => self.inner.append(data),
            Some(FaultKind::ShortWrite) => {
                // Part of the buffer reaches the file, as with a write cut by a full disk.
                self.inner.append(&data[..data.len() / 2])?;
                Err(FaultKind::ShortWrite.error(&self.path))
            }
            Some(kind) => Err(kind.error(&self.path)),
        }
    }

    fn flush(&mut self) -> Result<()> {
        self.inner.flush()?;
        self.flushed.store(self.inner.len(), Ordering::Release);
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        if let Some(kind) = self.ctl.check(FaultOp::Sync, &self.path) {
            // A failed fsync may still have pushed the buffer to the OS; do that, so the
            // caller cannot rely on the bytes being absent either.
            let _ = self.inner.flush();
            return Err(kind.error(&self.path));
        }
        self.ctl.delay_sync();
        if self.ctl.simulated_sync() {
            self.inner.flush()?;
        } else {
            self.inner.sync()?;
        }
        self.flushed.store(self.inner.len(), Ordering::Release);
        // An fsync through a sync handle may have run beside this one and recorded more.
        self.ctl.synced_at_least(&self.path, self.inner.len());
        Ok(())
    }

    fn len(&self) -> u64 {
        self.inner.len()
    }

    /// Counted and failed like [`WritableFile::sync`] (as [`FaultOp::Sync`]); it makes
    /// durable what had been flushed when it started.
    fn sync_handle(&self) -> Option<SyncHandle> {
        let inner = if self.ctl.simulated_sync() {
            None
        } else {
            Some(self.inner.sync_handle()?)
        };
        let (ctl, path, flushed) = (
            Arc::clone(&self.ctl),
            self.path.clone(),
            Arc::clone(&self.flushed),
        );
        Some(Arc::new(move || {
            if let Some(kind) = ctl.check(FaultOp::Sync, &path) {
                return Err(kind.error(&path));
            }
            let len = flushed.load(Ordering::Acquire);
            ctl.delay_sync();
            if let Some(sync) = &inner {
                sync()?;
            }
            ctl.synced_at_least(&path, len);
            Ok(())
        }))
    }
}

/// A file opened for reading through the fault env: each positional read is a
/// [`FaultOp::Read`]. Bytes used in place from a memory map are not reads and cannot fail.
#[derive(Debug)]
pub(super) struct FaultReadable {
    pub(super) inner: Arc<dyn RandomAccessFile>,
    pub(super) ctl: Arc<FaultController>,
}

impl FaultReadable {
    fn check(&self) -> Result<()> {
        match self.ctl.check(FaultOp::Read, self.inner.path()) {
            Some(kind) => Err(kind.error(self.inner.path())),
            None => Ok(()),
        }
    }
}

impl RandomAccessFile for FaultReadable {
    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        self.check()?;
        self.inner.read_at(offset, len)
    }

    fn read_at_reusing(&self, offset: u64, len: usize, spare: Vec<u8>) -> Result<Vec<u8>> {
        self.check()?;
        self.inner.read_at_reusing(offset, len, spare)
    }

    fn mapping(&self) -> Option<Arc<Mapping>> {
        self.inner.mapping()
    }

    fn size(&self) -> u64 {
        self.inner.size()
    }

    fn path(&self) -> &Path {
        self.inner.path()
    }
}
