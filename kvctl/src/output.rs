//! Buffered stdout whose failures become [`CliError`]s (a closed pipe ends the command
//! quietly).

use std::io::{self, BufWriter, StdoutLock, Write};

use crate::exit::CliError;

/// Buffered, locked stdout.
pub struct Out {
    w: BufWriter<StdoutLock<'static>>,
}

impl Out {
    /// Takes stdout.
    pub fn new() -> Out {
        Out {
            w: BufWriter::with_capacity(64 << 10, io::stdout().lock()),
        }
    }

    /// Writes `bytes`.
    pub fn bytes(&mut self, bytes: &[u8]) -> Result<(), CliError> {
        self.w.write_all(bytes).map_err(CliError::stdout)
    }

    /// Writes `text` and a newline.
    pub fn line(&mut self, text: &str) -> Result<(), CliError> {
        self.bytes(text.as_bytes())?;
        self.bytes(b"\n")
    }

    /// Pushes buffered output to the reader (end of a batch, end of the command).
    pub fn flush(&mut self) -> Result<(), CliError> {
        self.w.flush().map_err(CliError::stdout)
    }
}
