//! Line input from a file or stdin (`-` or no argument), as raw bytes.

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::exit::CliError;

/// An open line source and its name for messages.
pub struct Lines {
    reader: Box<dyn BufRead>,
    /// `"stdin"` or the file path.
    pub name: String,
    /// The file's size, for a progress bar; `None` for stdin.
    pub size: Option<u64>,
    line_no: u64,
}

impl Lines {
    /// Opens `path`; `None` or `-` means stdin.
    pub fn open(path: Option<&Path>) -> Result<Lines, CliError> {
        match path {
            None => Ok(Self::stdin()),
            Some(p) if p == Path::new("-") => Ok(Self::stdin()),
            Some(p) => {
                let f = File::open(p)
                    .map_err(|e| CliError::Database(format!("opening {}: {e}", p.display())))?;
                let size = f.metadata().ok().map(|m| m.len());
                Ok(Lines {
                    reader: Box::new(BufReader::with_capacity(256 << 10, f)),
                    name: PathBuf::from(p).display().to_string(),
                    size,
                    line_no: 0,
                })
            }
        }
    }

    fn stdin() -> Lines {
        Lines {
            reader: Box::new(BufReader::with_capacity(256 << 10, io::stdin().lock())),
            name: "stdin".into(),
            size: None,
            line_no: 0,
        }
    }

    /// Reads the next line into `buf` without its `\n` (a `\r` before it is kept: lines are
    /// bytes, taken exactly). Returns the line number (from 1) and the bytes consumed, or
    /// `None` at the end.
    pub fn next_line(&mut self, buf: &mut Vec<u8>) -> Result<Option<(u64, usize)>, CliError> {
        buf.clear();
        let n = self.reader.read_until(b'\n', buf).map_err(|e| {
            CliError::Database(format!(
                "reading {} after line {}: {e}",
                self.name, self.line_no
            ))
        })?;
        if n == 0 {
            return Ok(None);
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
        }
        self.line_no += 1;
        Ok(Some((self.line_no, n)))
    }
}
