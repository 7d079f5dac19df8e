//! Opening the database. Only `put`, `load` and `dedup` create a missing database (other
//! write commands with `--create`): a mistyped `--db` must not leave an empty database
//! behind and report success. Read commands open a secondary (`Db::open_secondary`): it takes
//! no lock, so they work beside a running writer or server, never keep a writer out (a
//! paused `kvctl scan | less` included), and write nothing.

use std::path::Path;
use std::sync::Arc;

use bloomkv::filter::{DelimiterPrefix, FixedPrefix, PrefixExtractor};
use bloomkv::{Db, Options};

use crate::args::GlobalArgs;
use crate::exit::CliError;

/// The options the flags ask for: the defaults, with the prefix extractor of
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

/// Opens the database at `--db` for writing, creating it if missing (`put`, `load`,
/// `dedup`, or another write command given `--create`).
pub fn for_write(g: &GlobalArgs) -> Result<Db, CliError> {
    let dir = g.db.as_path();
    Db::open(dir, options(g)).map_err(|e| opening(dir, e))
}

/// Opens the existing database at `--db` for writing; a missing one is a database error and
/// nothing is created, unless `create`.
pub fn existing_for_write(g: &GlobalArgs, create: bool) -> Result<Db, CliError> {
    if !create {
        must_exist(g.db.as_path(), "--create")?;
    }
    for_write(g)
}

/// Opens the existing database at `--db` for reading, as a secondary: the state its files
/// hold now, beside any writer. A missing one is a database error and nothing is created.
pub fn existing(g: &GlobalArgs) -> Result<Db, CliError> {
    let dir = g.db.as_path();
    must_exist(dir, "")?;
    Db::open_secondary(dir, options(g)).map_err(|e| opening(dir, e))
}

/// A database error unless `dir` holds a database; `create_flag` names the flag that would
/// create one, if the command has it.
pub fn must_exist(dir: &Path, create_flag: &str) -> Result<(), CliError> {
    let creators = if create_flag.is_empty() {
        "put, load or dedup create one".to_string()
    } else {
        format!("put, load or dedup create one, as does this command with {create_flag}")
    };
    if !dir.is_dir() {
        return Err(CliError::Database(format!(
            "no database at {}: directory does not exist ({creators}; pass --db or set \
             KVCTL_DB to point elsewhere)",
            dir.display()
        )));
    }
    if !Db::exists(dir) {
        return Err(CliError::Database(format!(
            "no database at {}: the directory has no CURRENT file ({creators}; a database \
             that lost its CURRENT file: `kvctl repair`)",
            dir.display()
        )));
    }
    Ok(())
}

/// The record a bloomkv-server database starts with (its data format, u32 LE).
const SERVER_FORMAT_KEY: &[u8] = b"\x00format";

/// `db`, unless it is a bloomkv-server database: its keys are Redis keys in the server's
/// layout (docs/SERVER.md), which the key commands (get, put, scan, delete, load, dedup)
/// would misread or corrupt. stats, verify, compact and checkpoint work on any database.
pub fn plain(g: &GlobalArgs, db: Db) -> Result<Db, CliError> {
    let format = db
        .get(SERVER_FORMAT_KEY)
        .map_err(|e| failure(format_args!("reading {}", g.db.display()), e))?;
    match format {
        Some(f) if f.len() == 4 => Err(CliError::Database(format!(
            "{} is a bloomkv-server database (data format {}): its keys are Redis keys in the \
             server's layout, which kvctl's key commands do not read or write; serve it \
             (`kvctl serve --db {0}`) and use a Redis client",
            g.db.display(),
            u32::from_le_bytes([f[0], f[1], f[2], f[3]])
        ))),
        _ => Ok(db),
    }
}

fn opening(dir: &Path, e: bloomkv::Error) -> CliError {
    let damaged = e.is_corruption();
    match failure(format_args!("opening database {}", dir.display()), e) {
        CliError::Database(m) if damaged && !m.contains("kvctl repair") => {
            CliError::Database(format!(
                "{m}; `kvctl verify` shows what else is damaged, `kvctl repair` rebuilds the \
                 database from what is readable (damaged files go to {}/lost/)",
                dir.display()
            ))
        }
        other => other,
    }
}

/// A library error met while opening (or running, for `serve`) a database, with `context`:
/// options out of range are a usage error, anything else a database error.
pub fn failure(context: impl std::fmt::Display, e: bloomkv::Error) -> CliError {
    match e {
        // These name the directory, the holder and what to do themselves.
        bloomkv::Error::Locked(_) => CliError::Database(e.to_string()),
        // Options out of range are the caller's to fix (the message names the field).
        bloomkv::Error::InvalidArgument(ref m) if m.contains("Options::") => {
            CliError::arg(context, e)
        }
        e => CliError::db(context, e),
    }
}
