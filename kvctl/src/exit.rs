//! How kvctl fails: every error is one of three kinds, each with its own exit status, and is
//! reported as one line on stderr that says what failed and where.

use std::fmt;
use std::io;
use std::process::ExitCode;

/// Exit status for success.
pub const OK: u8 = 0;
/// Exit status when the key asked for is absent.
pub const NOT_FOUND: u8 = 1;
/// Exit status for a usage error: bad arguments or malformed input (clap also uses 2).
pub const USAGE: u8 = 2;
/// Exit status for a database error: locked, corrupt, missing, I/O.
pub const DATABASE: u8 = 3;

/// A failed command.
#[derive(Debug)]
pub enum CliError {
    /// The key does not exist (exit 1).
    NotFound(String),
    /// The command line or the input data is wrong (exit 2).
    Usage(String),
    /// The database or a file failed (exit 3).
    Database(String),
    /// The reader of our stdout went away (`kvctl scan | head`): stop quietly, exit 0.
    BrokenPipe,
    /// An answer given by exit status alone, nothing printed (`filter check` of an absent
    /// item: exit 1, like grep).
    Silent(u8),
}

impl CliError {
    /// A database error with its context: `context: error`.
    pub fn db(context: impl fmt::Display, err: bloomkv::Error) -> CliError {
        CliError::Database(format!("{context}: {err}"))
    }

    /// As [`CliError::db`], but an argument the library rejects (an option out of range, an
    /// oversized key or value) is the caller's mistake: a usage error, exit 2.
    pub fn arg(context: impl fmt::Display, err: bloomkv::Error) -> CliError {
        match err {
            bloomkv::Error::InvalidArgument(_) => CliError::Usage(format!("{context}: {err}")),
            _ => CliError::db(context, err),
        }
    }

    /// A closure for `map_err` that adds `context` to a library error.
    pub fn with<C: fmt::Display>(context: C) -> impl FnOnce(bloomkv::Error) -> CliError {
        move |e| CliError::db(context, e)
    }

    /// An error writing to stdout: a closed pipe is not a failure, anything else is.
    pub fn stdout(err: io::Error) -> CliError {
        if err.kind() == io::ErrorKind::BrokenPipe {
            CliError::BrokenPipe
        } else {
            CliError::Database(format!("writing to stdout: {err}"))
        }
    }

    /// The exit status of this error.
    pub fn code(&self) -> u8 {
        match self {
            CliError::NotFound(_) => NOT_FOUND,
            CliError::Usage(_) => USAGE,
            CliError::Database(_) => DATABASE,
            CliError::BrokenPipe => OK,
            CliError::Silent(code) => *code,
        }
    }
}

/// Turns a command's outcome into the process exit status, printing the error line.
pub fn finish(result: Result<(), CliError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::from(OK),
        Err(e) => {
            match &e {
                CliError::NotFound(m) | CliError::Usage(m) | CliError::Database(m) => {
                    eprintln!("kvctl: {m}");
                }
                CliError::BrokenPipe | CliError::Silent(_) => {}
            }
            ExitCode::from(e.code())
        }
    }
}
