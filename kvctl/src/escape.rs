//! How keys and values cross the command line: read from arguments either literally or as hex
//! (`--hex`), and written out either escaped (so a terminal is never garbled) or as hex.

use std::ffi::OsString;
use std::fmt::Write as _;

use crate::exit::CliError;

/// The byte <-> text convention chosen by `--hex`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    /// Input taken literally; output escaped.
    Text,
    /// Input and output as hex digits.
    Hex,
}

impl Codec {
    /// The codec for the `--hex` flag.
    pub fn new(hex: bool) -> Codec {
        if hex { Codec::Hex } else { Codec::Text }
    }

    /// Decodes a command-line argument; `what` names it in the error ("KEY").
    pub fn arg(self, what: &str, arg: OsString) -> Result<Vec<u8>, CliError> {
        let bytes = arg.into_encoded_bytes();
        self.input(&bytes)
            .map_err(|why| CliError::Usage(format!("{what} {}: {why}", escape(&bytes))))
    }

    /// Decodes input bytes (an argument or a field of an input line).
    pub fn input(self, bytes: &[u8]) -> Result<Vec<u8>, String> {
        match self {
            Codec::Text => Ok(bytes.to_vec()),
            Codec::Hex => from_hex(bytes),
        }
    }

    /// Appends `bytes` in this codec's output form to `out`.
    pub fn write(self, out: &mut String, bytes: &[u8]) {
        match self {
            Codec::Text => escape_into(out, bytes),
            Codec::Hex => hex_into(out, bytes),
        }
    }

    /// `bytes` in this codec's output form.
    pub fn show(self, bytes: &[u8]) -> String {
        let mut s = String::with_capacity(bytes.len());
        self.write(&mut s, bytes);
        s
    }
}

/// `bytes` with everything a terminal could misread escaped; see [`escape_into`].
pub fn escape(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len());
    escape_into(&mut s, bytes);
    s
}

/// Appends `bytes` escaped: printable characters (valid UTF-8, not control) as they are,
/// `\\`, `\t`, `\n`, `\r` for those, and `\xNN` for every other byte. Tabs and newlines are
/// escaped so that `key<TAB>value` lines stay unambiguous.
pub fn escape_into(out: &mut String, bytes: &[u8]) {
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\t' => out.push_str("\\t"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                c if c.is_control() => {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        let _ = write!(out, "\\x{b:02x}");
                    }
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
}

/// Bytes of a key or value [`brief`] shows before cutting it short.
const BRIEF_BYTES: usize = 32;

/// `bytes` escaped as by [`escape`], but past [`BRIEF_BYTES`] only their start and their
/// length (`abc...` then ` (70000 bytes)`): a key in an error message may be 64 KiB or more,
/// and the message must stay one readable line.
pub fn brief(bytes: &[u8]) -> String {
    if bytes.len() <= BRIEF_BYTES {
        return escape(bytes);
    }
    let mut s = escape(&bytes[..BRIEF_BYTES]);
    let _ = write!(s, "... ({} bytes)", bytes.len());
    s
}

/// Appends `bytes` as lower-case hex digits.
pub fn hex_into(out: &mut String, bytes: &[u8]) {
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
}

/// Decodes hex digits (either case, even count, nothing else).
pub fn from_hex(text: &[u8]) -> Result<Vec<u8>, String> {
    if !text.len().is_multiple_of(2) {
        return Err(format!(
            "odd number of hex digits ({}); hex needs two per byte",
            text.len()
        ));
    }
    text.chunks_exact(2)
        .enumerate()
        .map(|(i, pair)| match (digit(pair[0]), digit(pair[1])) {
            (Some(h), Some(l)) => Ok(h << 4 | l),
            _ => Err(format!("not a hex digit at position {}", 2 * i)),
        })
        .collect()
}

fn digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_and_invalid_utf8_but_keeps_text() {
        assert_eq!(escape(b"plain text"), "plain text");
        assert_eq!(escape(b"a\tb\nc\\d\re"), "a\\tb\\nc\\\\d\\re");
        assert_eq!(escape(b"\x00\x1b[31m\x7f"), "\\x00\\x1b[31m\\x7f");
        assert_eq!(escape("héllo".as_bytes()), "héllo");
        assert_eq!(escape(b"\xff\xfe"), "\\xff\\xfe");
        // U+0085 (NEL) is a C1 control: escaped byte by byte.
        assert_eq!(escape("\u{85}".as_bytes()), "\\xc2\\x85");
    }

    #[test]
    fn hex_round_trips_and_rejects_garbage() {
        let all: Vec<u8> = (0..=255).collect();
        let mut s = String::new();
        hex_into(&mut s, &all);
        assert_eq!(from_hex(s.as_bytes()).unwrap(), all);
        assert_eq!(from_hex(b"00FFaB").unwrap(), vec![0, 255, 0xab]);
        assert!(from_hex(b"abc").is_err());
        assert!(from_hex(b"zz").is_err());
        assert_eq!(from_hex(b"").unwrap(), Vec::<u8>::new());
    }
}
