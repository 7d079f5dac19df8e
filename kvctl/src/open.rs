//! Opening the database: write commands create it, read commands insist it already exists
//! (and never create a directory as a side effect of a typo in `--db`) and open it read-only,
//! so they write nothing and several may run at once.

use std::path::Path;
use std::sync::Arc;

use bloomkv::filter::{DelimiterPrefix, FixedPrefix, PrefixExtractor};
use bloomkv::{Db, Options};

use crate::args::GlobalArgs;
use crate::exit::CliError;

/// The options the global flags ask for: the defaults, with the prefix extractor of
/// `--prefix-len` or `--prefix-delim`.
fn options(g: &GlobalArgs) -> Options {
    let extractor: Option<Arc<dyn PrefixExtractor>> = match (g.prefix_len, g.prefix_delim) {
        (Some(n), _) => Some(Arc::new(FixedPrefix::new(n))),
        (None, Some(d)) => Some(Arc::new(DelimiterPrefix::new(d))),
        (None, None) => None,
    };
    Options {
        prefix_extractor: extractor,
        ..Options::default()
    }
}

/// Opens the database at `--db`, creating it if missing. For write commands.
pub fn for_write(g: &GlobalArgs) -> Result<Db, CliError> {
    let dir = g.db.as_path();
    Db::open(dir, options(g)).map_err(|e| opening(dir, e))
}

/// Opens the existing database at `--db` read-only (`Db::open_read_only`: nothing written,
/// the WAL replayed into memory, the lock shared with other readers); a missing one is a
/// database error and nothing is created. For read commands.
pub fn existing(g: &GlobalArgs) -> Result<Db, CliError> {
    let dir = g.db.as_path();
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
    Db::open_read_only(dir, options(g)).map_err(|e| opening(dir, e))
}

fn opening(dir: &Path, e: bloomkv::Error) -> CliError {
    failure(format_args!("opening database {}", dir.display()), e)
}

/// A library error met while opening (or running, for `serve`) a database, with `context`:
/// options out of range are a usage error, anything else a database error.
pub fn failure(context: impl std::fmt::Display, e: bloomkv::Error) -> CliError {
    match e {
        // These name the directory themselves.
        bloomkv::Error::Locked(_) => CliError::Database(e.to_string()),
        // Options out of range are the caller's to fix (the message names the field).
        bloomkv::Error::InvalidArgument(ref m) if m.contains("Options::") => {
            CliError::arg(context, e)
        }
        e => CliError::db(context, e),
    }
}
