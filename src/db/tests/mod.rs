//! Engine tests that reach below the public API: injected file-system faults, hand-written
//! WAL and manifest files, and the examples of `docs/FORMAT.md`.

mod background_sync_failure;
mod checkpoint;
mod checkpoint_power_cut;
mod failed_compaction_leaves_no_tables;
mod failed_flush_leaves_no_tables;
mod failed_open_leaves_no_tables;
mod faults;
mod format_doc;
mod group_commit;
mod on_disk;
mod outcome_unknown;
mod read_only;
mod resume_after_manifest_failure;
mod resume_after_outcome_unknown;
mod resume_keeps_a_prefix;
mod secondary;
mod sync_wal;
mod sync_wal_concurrent;
mod write_failures;
mod write_pressure_failed;
mod zero_seq;

use std::collections::BTreeSet;
use std::path::Path;

use crate::test_util::fault_env;

/// Numbers of the table files in `dir`.
fn table_files(dir: &Path) -> BTreeSet<u64> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            match crate::util::filename::parse_file_name(&name) {
                Some((crate::util::filename::FileType::Table, n)) => Some(n),
                _ => None,
            }
        })
        .collect()
}

/// Numbers of the tables the MANIFEST that CURRENT names holds: what a reopen would need.
fn named_tables(dir: &Path) -> BTreeSet<u64> {
    let env = crate::env::StdEnv;
    let number = crate::db::manifest::read_current(&env, dir).unwrap();
    let path = crate::util::filename::manifest_path(dir, number);
    let mut live = BTreeSet::new();
    for edit in crate::db::manifest::read_manifest(&env, &path).unwrap() {
        for (_, n) in &edit.deleted_files {
            live.remove(n);
        }
        for (_, meta) in &edit.new_files {
            live.insert(meta.number);
        }
    }
    live
}
