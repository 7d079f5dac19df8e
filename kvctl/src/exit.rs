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
/// Exit status when the reader of stdout went away while `dedup` ran: lines may have been
/// marked as seen that the reader never got (the message says how many).
pub const OUTPUT_CLOSED: u8 = 4;

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
    /// The reader of stdout went away while the command changed state for what it printed
    /// (`dedup`): exit 4 with the message.
    OutputClosed(String),
    /// An answer given by exit status alone, nothing printed (`filter check` of an absent
    /// item: exit 1, like grep).
    Silent(u8),
}

impl CliError {
    /// A database error with its context: `context: error`, and for errors whose remedy the
    /// library names in its own terms, the kvctl command that applies it.
    pub fn db(context: impl fmt::Display, err: bloomkv::Error) -> CliError {
        CliError::Database(format!("{context}: {}", for_the_shell(&err)))
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
            CliError::OutputClosed(_) => OUTPUT_CLOSED,
            CliError::Silent(code) => *code,
        }
    }
}

/// `err`'s message, with the library's advice turned into kvctl commands: every kvctl
/// command opens and closes the database, so "resume or reopen" means running it again, and
/// `bloomkv::repair` is `kvctl repair`.
pub fn for_the_shell(err: &bloomkv::Error) -> String {
    let text = err
        .to_string()
        .replace("run bloomkv::repair", "run `kvctl repair`");
    match err {
        bloomkv::Error::WritesStopped(_) => format!(
            "{text}; from the shell: run the command again (each kvctl command reopens the \
             database, which recovers); if it fails again, `kvctl verify` looks for damage and \
             `kvctl repair` rebuilds the database"
        ),
        bloomkv::Error::OutcomeUnknown(_) => format!(
            "{text}; `kvctl get` shows whether it took effect once the database opens again"
        ),
        _ => text,
    }
}

/// Turns a command's outcome into the process exit status, printing the error line.
pub fn finish(result: Result<(), CliError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::from(OK),
        Err(e) => {
            match &e {
                CliError::NotFound(m)
                | CliError::Usage(m)
                | CliError::Database(m)
                | CliError::OutputClosed(m) => {
                    eprintln!("kvctl: {m}");
                }
                CliError::BrokenPipe | CliError::Silent(_) => {}
            }
            ExitCode::from(e.code())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_advice_becomes_kvctl_commands() {
        let stopped = bloomkv::Error::WritesStopped("flush failed: disk full".into());
        let text = for_the_shell(&stopped);
        assert!(text.contains("resume or reopen to recover"), "{text}");
        assert!(text.contains("run the command again"), "{text}");
        assert!(text.contains("kvctl repair"), "{text}");
        let lost = bloomkv::Error::corruption(
            "db/CURRENT",
            0,
            "CURRENT is missing but the directory holds tables (run bloomkv::repair)",
        );
        let text = for_the_shell(&lost);
        assert!(text.contains("(run `kvctl repair`)"), "{text}");
        assert!(!text.contains("bloomkv::repair"), "{text}");
        let other = bloomkv::Error::InvalidArgument("x".into());
        assert_eq!(for_the_shell(&other), other.to_string());
    }
}
