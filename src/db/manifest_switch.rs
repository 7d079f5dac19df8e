//! Replacing the MANIFEST by a fresh one that describes the whole current state, and making
//! it current: at open (step 4 of `recover`), and while the database runs, when an append to
//! the MANIFEST failed and `Db::resume` clears the error (the writer cannot tell which bytes
//! of the failed edit reached the file, so it never appends to it again).
//!
//! Order: the new MANIFEST is written and synced, then its directory entry, then CURRENT is
//! swapped atomically; only then do the old MANIFEST and the tables no MANIFEST names go.

use std::path::Path;
use std::sync::atomic::Ordering;

use super::core::DbInner;
use crate::db::manifest::{self, ManifestWriter, VersionEdit};
use crate::db::version::Version;
use crate::env::Env;
use crate::error::Result;
use crate::util::filename;
use crate::util::key::SeqNo;

impl DbInner {
    /// After a failed MANIFEST append the writer refuses every later edit, and which bytes
    /// of the failed one reached the file is unknown, so the MANIFEST is not written again:
    /// a new one holding the whole current version replaces it, as at open (written, synced,
    /// then CURRENT switched atomically). The tables of the failed edit, which the old
    /// MANIFEST may name but the new one does not, go once it is current; so does the old
    /// MANIFEST. Called with the writer lock held and no flush or compaction starting (the
    /// background error stops them).
    pub(super) fn restart_manifest_if_failed(&self) -> Result<()> {
        let mut manifest = self.manifest.lock();
        if manifest.as_ref().is_some_and(|m| !m.has_failed()) {
            return Ok(());
        }
        let version = self.current_version();
        let (number, snapshot) = {
            let mut st = self.state.lock();
            let number = st.new_file_number();
            let snapshot = snapshot_edit(
                &version,
                st.log_number,
                st.next_file_number,
                self.last_seq.load(Ordering::Acquire),
                &st.compact_pointers,
            );
            (number, snapshot)
        };
        let fresh =
            switch_manifest(self.env.as_ref(), &self.dir, number, &snapshot)?;
        // Dropped (closed) before its file is removed.
        drop(manifest.replace(fresh));
        drop(manifest);
        if let Ok(names) = self.env.list_dir(&self.dir) {
            for name in names {
                if let Some((filename::FileType::Manifest, n)) = filename::parse_file_name(&name)
                    && n < number
                {
                    // One left behind is removed by the next open.
                    let _ = self.env.remove_file(&self.dir.join(name));
                }
            }
        }
        let unsettled = std::mem::take(&mut self.state.lock().unsettled_tables);
        let unsettled: Vec<u64> = unsettled
            .into_iter()
            .filter(|n| !version.all_files().any(|f| f.meta.number == *n))
            .collect();
        self.remove_tables(&unsettled);
        Ok(())
    }
}

/// The edit a fresh MANIFEST starts with: the whole of `version` and the counters that
/// recovery needs.
pub(super) fn snapshot_edit(
    version: &Version,
    log_number: u64,
    next_file_number: u64,
    last_seq: SeqNo,
    compact_pointers: &[Option<Vec<u8>>],
) -> VersionEdit {
    let mut snapshot = version.snapshot_edit();
    snapshot.log_number = Some(log_number);
    snapshot.next_file_number = Some(next_file_number);
    snapshot.last_sequence = Some(last_seq);
    for (level, key) in compact_pointers.iter().enumerate() {
        if let Some(k) = key {
            snapshot.compact_pointers.push((level, k.clone()));
        }
    }
    snapshot
}

/// Writes `MANIFEST-number` holding `snapshot`, synced with its directory entry, and points
/// CURRENT at it (atomically: a crash leaves CURRENT naming the old or the new one). On
/// failure the new MANIFEST is removed unless CURRENT already names it (the rename happened
/// and only the directory sync after it failed).
pub(super) fn switch_manifest(
    env: &dyn Env,
    dir: &Path,
    number: u64,
    snapshot: &VersionEdit,
) -> Result<ManifestWriter> {
    let written = ManifestWriter::create(env, dir, number).and_then(|mut manifest| {
        manifest.append(snapshot)?;
        // The new tables, WAL and MANIFEST are durable; make their directory entries durable
        // before CURRENT points at them (set_current syncs the directory again after the
        // rename).
        env.sync_dir(dir)?;
        manifest::set_current(env, dir, number)?;
        Ok(manifest)
    });
    if written.is_err() && current_names_another(env, dir, number) {
        let _ = env.remove_file(&filename::manifest_path(dir, number));
    }
    written
}

/// Whether CURRENT can be read and names a MANIFEST other than `number`. A CURRENT that cannot
/// be read (the failure at hand may be the disk's) could name `number`: then nothing of the
/// new state may be removed, or the database would point at a missing MANIFEST.
pub(super) fn current_names_another(env: &dyn Env, dir: &Path, number: u64) -> bool {
    matches!(manifest::read_current(env, dir), Ok(n) if n != number)
}
