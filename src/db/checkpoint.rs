//! `Db::checkpoint`: an openable copy of the database as of one sequence number, made while
//! writes go on.
//!
//! Under the writer lock (a few microseconds plus one WAL sync) the checkpoint takes the
//! newest sequence number, makes the live WAL durable up to it, and takes the read view:
//! the memtables and the table set at that moment. Holding the view's version keeps every
//! table in it on disk, however compactions move on. Outside the lock it then writes, into a
//! temporary sibling of the target directory:
//!
//! * each table, as a hard link (the file is immutable, so sharing it costs nothing and
//!   stays consistent), or as a copy where linking is impossible (another file system, an
//!   env without links);
//! * one fresh WAL holding the memtables' entries up to the sequence number, one record per
//!   entry with its own number: the live WALs may hold records past the checkpoint and are
//!   still being appended to, so they are neither linked nor copied;
//! * a fresh MANIFEST naming exactly those tables and that WAL, and CURRENT.
//!
//! Every file and the directory are synced, and the directory is renamed into place, so a
//! checkpoint directory is whole or absent. Opening it replays the WAL into a memtable.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::core::{DbInner, ReadView};
use crate::db::batch::WriteBatch;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::util::filename;
use crate::iter::InternalIterator;
use crate::util::key::{self, Kind, SeqNo};
use crate::db::manifest::{self, ManifestWriter};
use crate::db::memtable::MemTable;
use crate::db::wal::LogWriter;

/// Bytes copied per read when a table cannot be linked.
const COPY_CHUNK: usize = 1 << 20;

/// What the writer lock hands over: the state at the checkpoint's sequence number.
struct Frozen {
    seq: SeqNo,
    view: Arc<ReadView>,
    log_number: u64,
    manifest_number: u64,
}

impl DbInner {
    pub(crate) fn checkpoint(&self, target: &Path) -> Result<SeqNo> {
        if self.env.exists(target) {
            return Err(Error::InvalidArgument(format!(
                "checkpoint directory {} already exists (a checkpoint makes a new directory)",
                target.display()
            )));
        }
        let tmp = staging_dir(target).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "checkpoint directory {} has no name",
                target.display()
            ))
        })?;
        if self.env.exists(&tmp) {
            // A checkpoint that crashed midway: nothing else uses this name.
            remove_dir_with_files(self.env.as_ref(), &tmp)?;
        }

        let frozen = self.freeze_for_checkpoint()?;
        self.env.create_dir_all(&tmp)?;
        if let Err(e) = self.write_checkpoint(&tmp, &frozen) {
            let _ = remove_dir_with_files(self.env.as_ref(), &tmp);
            return Err(e);
        }
        if let Err(e) = self.env.rename(&tmp, target) {
            let _ = remove_dir_with_files(self.env.as_ref(), &tmp);
            return Err(e);
        }
        let parent = target
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if let Err(e) = self.env.sync_dir(parent) {
            // Whole but not durable: a caller told it failed must not find it later.
            let _ = remove_dir_with_files(self.env.as_ref(), target);
            return Err(e);
        }
        Ok(frozen.seq)
    }

    /// Takes the sequence number and the view it belongs to, with the WAL synced up to it.
    fn freeze_for_checkpoint(&self) -> Result<Frozen> {
        let mut w = self.writer.lock();
        if !self.read_only {
            self.sync_wal_locked(&mut w)?;
        }
        // Writers hold the writer lock until their batch is in the memtable and published,
        // so no write is half done now: the view holds exactly the writes up to `seq` (and
        // the memtables take no more entries until the lock is released).
        let view = self.read_view();
        let seq = view.read_seq(self.visible_seq());
        let mut st = self.state.lock();
        let log_number = st.new_file_number();
        let manifest_number = st.new_file_number();
        Ok(Frozen {
            seq,
            view,
            log_number,
            manifest_number,
        })
    }

    fn write_checkpoint(&self, tmp: &Path, f: &Frozen) -> Result<()> {
        let env = self.env.as_ref();
        for table in f.view.version.all_files() {
            let n = table.meta.number;
            link_or_copy(
                env,
                &filename::table_path(&self.dir, n),
                &filename::table_path(tmp, n),
            )?;
        }
        let mut log = LogWriter::new(env.create_writable(&filename::log_path(tmp, f.log_number))?);
        let mems = f.view.imm.iter().chain(std::iter::once(&f.view.mem));
        for mem in mems {
            write_memtable(&mut log, mem, f.seq)?;
        }
        log.sync()?;
        drop(log);

        let mut edit = f.view.version.snapshot_edit();
        edit.log_number = Some(f.log_number);
        edit.next_file_number = Some(f.manifest_number + 1);
        edit.last_sequence = Some(f.seq);
        // `create` syncs the MANIFEST and the directory (tables, WAL and MANIFEST entries);
        // `set_current` syncs CURRENT's.
        let mut m = ManifestWriter::create(env, tmp, f.manifest_number)?;
        m.append(&edit)?;
        drop(m);
        manifest::set_current(env, tmp, f.manifest_number)
    }
}

/// Appends every entry and range tombstone of `mem` numbered at most `seq` to `log`, each as
/// a batch of one operation carrying its own sequence number.
fn write_memtable(log: &mut LogWriter, mem: &Arc<MemTable>, seq: SeqNo) -> Result<()> {
    let mut it = mem.iter();
    it.seek_to_first()?;
    while it.valid() {
        let parsed = key::parse(it.key())?;
        if parsed.seq <= seq {
            let mut batch = WriteBatch::new();
            match parsed.kind {
                Kind::Put => batch.put(parsed.user_key, it.value()),
                Kind::Delete => batch.delete(parsed.user_key),
            }
            batch.set_sequence(parsed.seq);
            log.add_record(batch.payload())?;
        }
        it.next()?;
    }
    if let Some(fragments) = mem.range_fragments() {
        for t in fragments.tombstones().into_iter().filter(|t| t.seq <= seq) {
            let mut batch = WriteBatch::new();
            batch.delete_range(&t.start, &t.end);
            batch.set_sequence(t.seq);
            log.add_record(batch.payload())?;
        }
    }
    Ok(())
}

/// Makes `to` a hard link of `from`, or a synced copy where the env or the file system
/// cannot link (`Unsupported`, or `EXDEV` across file systems) or the name is gone: a
/// secondary's table the writer deleted meanwhile, which the secondary's env still reads
/// through the descriptor it holds.
fn link_or_copy(env: &dyn Env, from: &Path, to: &Path) -> Result<()> {
    match env.hard_link(from, to) {
        Ok(()) => Ok(()),
        Err(Error::Io { source, .. })
            if matches!(
                source.kind(),
                std::io::ErrorKind::Unsupported
                    | std::io::ErrorKind::CrossesDevices
                    | std::io::ErrorKind::NotFound
            ) =>
        {
            copy_file(env, from, to)
        }
        Err(e) => Err(e),
    }
}

fn copy_file(env: &dyn Env, from: &Path, to: &Path) -> Result<()> {
    let src = env.open_random_access(from)?;
    let mut dst = env.create_writable(to)?;
    let size = src.size();
    let mut offset = 0u64;
    while offset < size {
        let len = usize::try_from(size - offset).map_or(COPY_CHUNK, |l| l.min(COPY_CHUNK));
        dst.append(&src.read_at(offset, len)?)?;
        offset += len as u64;
    }
    dst.flush()?;
    dst.sync()
}

/// Removes `dir` and the files in it (a checkpoint's directory holds no subdirectories).
fn remove_dir_with_files(env: &dyn Env, dir: &Path) -> Result<()> {
    for name in env.list_dir(dir)? {
        env.remove_file(&dir.join(&name))?;
    }
    env.remove_dir(dir)
}

/// The directory a checkpoint at `target` is built in before it is renamed into place: a
/// sibling, so the rename stays on one file system.
pub(crate) fn staging_dir(target: &Path) -> Option<PathBuf> {
    let mut name = target.file_name()?.to_os_string();
    name.push(".checkpoint-tmp");
    Some(target.with_file_name(name))
}
