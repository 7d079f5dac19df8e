//! Output: buffered stdout whose failures become [`CliError`]s (a closed pipe ends the
//! command quietly), counts with their nouns, and the one rule for reports: a command's
//! closing report goes to stderr as a line of text, or with `--json` as one JSON object on
//! stdout (on stderr where stdout carries the command's data), and nowhere with `--quiet`.
//! Every JSON document a command prints starts with its layout version, `format`.

use std::io::{self, BufWriter, StdoutLock, Write};

use serde_json::{Map, Value};

use crate::args::GlobalArgs;
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

/// `n` and the noun, singular for one: `count(1, "table")` is "1 table", `count(2,
/// "table")` "2 tables".
pub fn count(n: u64, noun: &str) -> String {
    counted(n, noun, &format!("{noun}s"))
}

/// As [`count`] with an irregular plural: `counted(2, "entry", "entries")`.
pub fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The layout version of the reports and descriptions kvctl prints as JSON; bumped only
/// when a field changes meaning or goes away (fields may be added). `stats` and `bench`
/// keep their own.
pub const JSON_FORMAT: u64 = 1;

/// `body` (an object) as a JSON document: `format` first, then `body`'s fields in order.
pub fn document(format: u64, body: Value) -> Value {
    let mut fields = Map::new();
    fields.insert("format".to_string(), Value::from(format));
    match body {
        Value::Object(rest) => fields.extend(rest),
        other => {
            fields.insert("value".to_string(), other);
        }
    }
    Value::Object(fields)
}

/// Where a report goes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ReportTo {
    /// The command prints nothing else on stdout: JSON goes there.
    Stdout,
    /// Stdout carries the command's data (`dedup`): JSON goes to stderr too.
    Stderr,
}

/// Prints a command's closing report as `g` asks: `text` on stderr, `json()` (one object)
/// on stdout or stderr (with `format` added first), or nothing with `--quiet`.
pub fn report(
    g: &GlobalArgs,
    to: ReportTo,
    text: impl FnOnce() -> String,
    json: impl FnOnce() -> Value,
) -> Result<(), CliError> {
    if g.quiet {
        return Ok(());
    }
    if !g.json {
        eprintln!("{}", text());
        return Ok(());
    }
    let object = document(JSON_FORMAT, json()).to_string();
    match to {
        ReportTo::Stderr => {
            eprintln!("{object}");
            Ok(())
        }
        ReportTo::Stdout => {
            let mut out = Out::new();
            out.line(&object)?;
            out.flush()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_agree_with_their_number() {
        assert_eq!(count(0, "table"), "0 tables");
        assert_eq!(count(1, "table"), "1 table");
        assert_eq!(counted(1, "entry", "entries"), "1 entry");
        assert_eq!(counted(3, "entry", "entries"), "3 entries");
    }

    #[test]
    fn documents_start_with_their_format() {
        let d = document(7, serde_json::json!({"tables": 2, "db": "x"}));
        assert_eq!(d.to_string(), r#"{"format":7,"tables":2,"db":"x"}"#);
    }
}
