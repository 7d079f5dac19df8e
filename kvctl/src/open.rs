//! Opening the database: write commands create it, read commands insist it already exists
//! (and never create a directory as a side effect of a typo in `--db`) and open it read-only,
//! so they write nothing and several may run at once.

use std::path::Path;

use bloomkv::{Db, Options};

use crate::exit::CliError;

/// Opens the database at `dir`, creating it if missing. For write commands.
pub fn for_write(dir: &Path) -> Result<Db, CliError> {
    Db::open(dir, Options::default()).map_err(|e| opening(dir, e))
}

/// Opens the existing database at `dir` read-only (`Db::open_read_only`: nothing written,
/// the WAL replayed into memory, the lock shared with other readers); a missing one is a
/// database error and nothing is created. For read commands.
pub fn existing(dir: &Path) -> Result<Db, CliError> {
    if !dir.is_dir() {
        return Err(CliError::Database(format!(
            "no database at {}: directory does not exist (write commands such as put or load \
             create it; pass --db or set KVCTL_DB to point elsewhere)",
            dir.display()
        )));
    }
    if !Db::exists(dir) {
        return Err(CliError::Database(format!(
            "no database at {}: the directory has no CURRENT file",
            dir.display()
        )));
    }
    Db::open_read_only(dir, Options::default()).map_err(|e| opening(dir, e))
}

fn opening(dir: &Path, e: bloomkv::Error) -> CliError {
    match e {
        // These name the directory themselves.
        bloomkv::Error::Locked(_) => CliError::Database(e.to_string()),
        // Options out of range are the caller's to fix (the message names the field).
        bloomkv::Error::InvalidArgument(ref m) if m.contains("Options::") => {
            CliError::arg(format_args!("opening database {}", dir.display()), e)
        }
        e => CliError::db(format_args!("opening database {}", dir.display()), e),
    }
}
