//! The MANIFEST log of version edits and the CURRENT pointer.
//!
//! The set of live table files is never stored whole: a `MANIFEST-NNNNNN` file is a log
//! (framed like the WAL, see [`crate::db::wal`]) of [`VersionEdit`]s, each adding and removing
//! files and moving counters, and replaying them from the first rebuilds the current state.
//! `CURRENT` names the manifest in use and is replaced atomically. The exact bytes are in
//! `docs/FORMAT.md`, section "MANIFEST and CURRENT".

mod current;
mod edit;
mod log;

pub use current::{read_current, set_current};
pub use edit::{FileMeta, VersionEdit};
pub(crate) use log::check_header;
pub use log::{ManifestWriter, read_manifest};
#[cfg(any(test, feature = "internals"))]
pub use log::{MANIFEST_FORMAT_VERSION, MANIFEST_MAGIC};

#[cfg(test)]
mod tests;
