//! A function library as `FUNCTION LOAD` defines it: the `#!lua name=<library>` first line,
//! Redis's naming rule, the function flags, and the library's stored record (docs/SERVER.md,
//! "Function libraries").
//!
//! ```text
//! record := version u8 (1) | count u32 | function * count | code (the rest)
//! function := name_len u32 | name | flags u8 | has_description u8 (0 or 1)
//!             | [description_len u32 | description]
//! ```
//! Integers little-endian. `code` is the library's whole text as loaded, first line
//! included (what `FUNCTION LIST WITHCODE` and `FUNCTION DUMP` give back).

use bytes::Bytes;

/// Redis's text for a library or function name that breaks the naming rule.
pub const BAD_NAME: &str = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";

/// Version of the record layout this module writes (and the only one it reads).
const RECORD_VERSION: u8 = 1;

/// The flags a function may declare, as Redis 7.0 knows them. The bit of each is stored in
/// the library record: never renumber or reuse one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags(u8);

/// Each flag's name and bit, in the order Redis lists them (`FUNCTION LIST`).
const FLAG_BITS: [(&str, u8); 5] = [
    ("no-writes", 1),
    ("allow-oom", 2),
    ("allow-stale", 4),
    ("no-cluster", 8),
    ("allow-cross-slot-keys", 16),
];

impl Flags {
    /// The function may not write (`FCALL_RO` runs only these).
    pub const NO_WRITES: Flags = Flags(1);

    /// The flag named `name` (any case), if Redis knows it.
    pub fn named(name: &[u8]) -> Option<Flags> {
        FLAG_BITS
            .iter()
            .find(|(n, _)| n.as_bytes().eq_ignore_ascii_case(name))
            .map(|&(_, b)| Flags(b))
    }

    /// These flags and `other`'s.
    pub fn with(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }

    /// Whether every flag of `other` is set.
    pub fn has(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }

    /// The names of the flags set, in Redis's order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        FLAG_BITS
            .into_iter()
            .filter(move |&(_, b)| self.0 & b != 0)
            .map(|(n, _)| n)
    }

    fn from_stored(b: u8) -> Option<Flags> {
        let known = FLAG_BITS.iter().fold(0, |m, &(_, b)| m | b);
        (b & !known == 0).then_some(Flags(b))
    }
}

/// A function of a library: what `FUNCTION LIST` shows and `FCALL` checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionInfo {
    /// Its name as registered (looked up in any case).
    pub name: Vec<u8>,
    /// Its description, if it was given one.
    pub description: Option<Vec<u8>>,
    /// Its flags.
    pub flags: Flags,
}

/// A loaded library.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Library {
    /// Its name (case-sensitive, as in Redis).
    pub name: Vec<u8>,
    /// Its text, first line included.
    pub code: Bytes,
    /// Its functions, in the order the code registered them.
    pub functions: Vec<FunctionInfo>,
}

/// A stored record that does not decode.
#[derive(Debug, PartialEq, Eq)]
pub struct Corrupt;

/// True for a name Redis accepts for a library or a function: `[A-Za-z0-9_]+`.
pub fn valid_name(name: &[u8]) -> bool {
    !name.is_empty() && name.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
}

/// What a library's first line says.
#[derive(Debug, PartialEq, Eq)]
pub struct Header {
    /// The library's name.
    pub name: Vec<u8>,
    /// Where the code the engine runs starts: the first line's newline, which stays so that
    /// error positions count lines as the user does.
    pub code_start: usize,
}

/// Reads a library's `#!<engine> name=<name>` first line, with Redis's checks and texts in
/// Redis's order.
///
/// # Errors
/// Redis's text (without the `ERR ` code).
pub fn header(code: &[u8]) -> Result<Header, String> {
    if !code.starts_with(b"#!") {
        return Err("Missing library metadata".into());
    }
    let Some(end) = code.iter().position(|&c| c == b'\n') else {
        return Err("Invalid library metadata".into());
    };
    let parts = match split_args(&code[..end]) {
        Some(p) if !p.is_empty() => p,
        _ => return Err("Invalid library metadata".into()),
    };
    let engine = &parts[0][2.min(parts[0].len())..];
    let mut name = None;
    for part in &parts[1..] {
        if part.len() >= 5 && part[..5].eq_ignore_ascii_case(b"name=") {
            if name.is_some() {
                return Err(
                    "Invalid metadata value, name argument was given multiple times".into(),
                );
            }
            name = Some(part[5..].to_vec());
            continue;
        }
        return Err(format!(
            "Invalid metadata value given: {}",
            String::from_utf8_lossy(part)
        ));
    }
    let Some(name) = name else {
        return Err("Library name was not given".into());
    };
    if !valid_name(&name) {
        return Err(BAD_NAME.into());
    }
    if !engine.eq_ignore_ascii_case(b"lua") {
        return Err(format!(
            "Engine '{}' not found",
            String::from_utf8_lossy(engine)
        ));
    }
    Ok(Header {
        name,
        code_start: end,
    })
}

/// Splits a line into arguments as Redis's `sdssplitargs` does: blanks separate them,
/// `"..."` takes C escapes (`\n`, `\xHH`, ...), `'...'` takes `\'`; a closing quote must
/// end the argument. `None` for unbalanced quotes.
fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut i = 0;
    let blank = |c: u8| matches!(c, b' ' | b'\n' | b'\r' | b'\t' | 0x0b | 0x0c);
    loop {
        while i < line.len() && blank(line[i]) {
            i += 1;
        }
        if i >= line.len() {
            return Some(out);
        }
        let mut cur = Vec::new();
        let (mut dq, mut sq) = (false, false);
        loop {
            let Some(&c) = line.get(i) else {
                if dq || sq {
                    return None;
                }
                break;
            };
            if dq {
                if c == b'\\' && line.get(i + 1) == Some(&b'x') {
                    let hex = line.get(i + 2..i + 4).and_then(|h| {
                        std::str::from_utf8(h)
                            .ok()
                            .and_then(|h| u8::from_str_radix(h, 16).ok())
                    });
                    if let Some(b) = hex {
                        cur.push(b);
                        i += 4;
                        continue;
                    }
                }
                if c == b'\\' && i + 1 < line.len() {
                    i += 1;
                    cur.push(match line[i] {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 0x08,
                        b'a' => 0x07,
                        other => other,
                    });
                } else if c == b'"' {
                    if line.get(i + 1).is_some_and(|&n| !blank(n)) {
                        return None;
                    }
                    i += 1;
                    break;
                } else {
                    cur.push(c);
                }
            } else if sq {
                if c == b'\\' && line.get(i + 1) == Some(&b'\'') {
                    i += 1;
                    cur.push(b'\'');
                } else if c == b'\'' {
                    if line.get(i + 1).is_some_and(|&n| !blank(n)) {
                        return None;
                    }
                    i += 1;
                    break;
                } else {
                    cur.push(c);
                }
            } else if blank(c) {
                break;
            } else if c == b'"' {
                dq = true;
            } else if c == b'\'' {
                sq = true;
            } else {
                cur.push(c);
            }
            i += 1;
        }
        out.push(cur);
    }
}

fn put_u32(out: &mut Vec<u8>, n: usize) {
    // Names and descriptions come from a request, itself at most 512 MiB.
    out.extend_from_slice(&(n as u32).to_le_bytes());
}

impl Library {
    /// The stored record of this library (module docs).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![RECORD_VERSION];
        put_u32(&mut out, self.functions.len());
        for f in &self.functions {
            put_u32(&mut out, f.name.len());
            out.extend_from_slice(&f.name);
            out.push(f.flags.0);
            match &f.description {
                Some(d) => {
                    out.push(1);
                    put_u32(&mut out, d.len());
                    out.extend_from_slice(d);
                }
                None => out.push(0),
            }
        }
        out.extend_from_slice(&self.code);
        out
    }

    /// The library `name` stored as `record`.
    ///
    /// # Errors
    /// [`Corrupt`] for a record that does not decode (short, an unknown version or flag).
    pub fn decode(name: &[u8], record: &[u8]) -> Result<Library, Corrupt> {
        let mut r = record;
        let mut take = |n: usize| -> Result<&[u8], Corrupt> {
            if r.len() < n {
                return Err(Corrupt);
            }
            let (a, b) = r.split_at(n);
            r = b;
            Ok(a)
        };
        if take(1)? != [RECORD_VERSION] {
            return Err(Corrupt);
        }
        let u32_at = |b: &[u8]| -> Result<usize, Corrupt> {
            Ok(u32::from_le_bytes(b.try_into().map_err(|_| Corrupt)?) as usize)
        };
        let count = u32_at(take(4)?)?;
        let mut functions = Vec::with_capacity(count.min(1024));
        for _ in 0..count {
            let n = u32_at(take(4)?)?;
            let fname = take(n)?.to_vec();
            let flags = Flags::from_stored(take(1)?[0]).ok_or(Corrupt)?;
            let description = match take(1)?[0] {
                0 => None,
                1 => {
                    let n = u32_at(take(4)?)?;
                    Some(take(n)?.to_vec())
                }
                _ => return Err(Corrupt),
            };
            functions.push(FunctionInfo {
                name: fname,
                description,
                flags,
            });
        }
        Ok(Library {
            name: name.to_vec(),
            code: Bytes::copy_from_slice(r),
            functions,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_texts_are_redis_s() {
        let h = header(b"#!lua name=mylib\nreturn 1").expect("header");
        assert_eq!(h.name, b"mylib");
        assert_eq!(h.code_start, 16);
        let err = |c: &[u8]| header(c).expect_err("refused");
        assert_eq!(err(b"return 1"), "Missing library metadata");
        assert_eq!(err(b"#!lua name=x"), "Invalid library metadata");
        assert_eq!(err(b"#!lua \"name=x\n"), "Invalid library metadata");
        assert_eq!(err(b"#!lua\n"), "Library name was not given");
        assert_eq!(
            err(b"#!lua name=a foo=bar\n"),
            "Invalid metadata value given: foo=bar"
        );
        assert_eq!(
            err(b"#!lua name=a NAME=b\n"),
            "Invalid metadata value, name argument was given multiple times"
        );
        assert_eq!(err(b"#!lua name=a-b\n"), BAD_NAME);
        assert_eq!(err(b"#!lua name=\n"), BAD_NAME);
        assert_eq!(err(b"#!js name=x\n"), "Engine 'js' not found");
        assert_eq!(header(b"#!LUA \"name=q\"\n").expect("quoted").name, b"q");
    }

    #[test]
    fn records_round_trip_and_damage_is_refused() {
        let lib = Library {
            name: b"lib".to_vec(),
            code: Bytes::from_static(b"#!lua name=lib\ncode"),
            functions: vec![
                FunctionInfo {
                    name: b"f".to_vec(),
                    description: Some(b"desc".to_vec()),
                    flags: Flags::NO_WRITES.with(Flags::named(b"no-cluster").expect("known")),
                },
                FunctionInfo {
                    name: b"g".to_vec(),
                    description: None,
                    flags: Flags::default(),
                },
            ],
        };
        let rec = lib.encode();
        assert_eq!(Library::decode(b"lib", &rec), Ok(lib));
        for cut in 0..rec.len() - 19 {
            assert!(
                Library::decode(b"lib", &rec[..cut]).is_err(),
                "cut at {cut}"
            );
        }
        let mut bad = rec.clone();
        bad[0] = 2;
        assert_eq!(Library::decode(b"lib", &bad), Err(Corrupt));
    }

    /// docs/SERVER.md describes the record byte by byte: its version, flag bits and the
    /// data format that introduced it must be the code's.
    #[test]
    fn the_documented_record_matches_the_code() {
        let doc = include_str!("../../../../docs/SERVER.md");
        let doc = doc.split_whitespace().collect::<Vec<_>>().join(" ");
        for (name, bit) in FLAG_BITS {
            assert!(doc.contains(&format!("{bit} `{name}`")), "flag {name}");
        }
        assert!(doc.contains(&format!("version u8 ({RECORD_VERSION})")));
        let format = crate::store::keys::FORMAT;
        assert!(doc.contains(&format!("data format of this database (u32 LE): {format}")));
        assert!(doc.contains(&format!("Format {format} added function libraries")));
    }

    #[test]
    fn flags_are_named_in_redis_order_and_any_case() {
        let f = Flags::named(b"ALLOW-OOM")
            .expect("known")
            .with(Flags::NO_WRITES);
        assert_eq!(f.names().collect::<Vec<_>>(), ["no-writes", "allow-oom"]);
        assert_eq!(Flags::named(b"bad"), None);
        assert_eq!(Flags::from_stored(32), None);
    }
}
