//! Names of the files in a database directory.
//!
//! Numbered files carry their number as at least six zero-padded decimal digits, so a plain
//! directory listing sorts them by age. See the table in `docs/FORMAT.md`.

use std::path::{Path, PathBuf};

/// What a file in a database directory is, judged by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileType {
    /// `NNNNNN.sst`: an SSTable.
    Table,
    /// `NNNNNN.log`: a write-ahead log.
    Log,
    /// `MANIFEST-NNNNNN`: a log of version edits.
    Manifest,
    /// `CURRENT`: names the live manifest.
    Current,
    /// `LOCK`: held by the open database.
    Lock,
    /// `NNNNNN.dbtmp`: a file being written that will be renamed into place (or deleted).
    Temp,
}

const TABLE_SUFFIX: &str = ".sst";
const LOG_SUFFIX: &str = ".log";
const TEMP_SUFFIX: &str = ".dbtmp";
const MANIFEST_PREFIX: &str = "MANIFEST-";
const CURRENT_NAME: &str = "CURRENT";
const LOCK_NAME: &str = "LOCK";

/// The file name (not path) of a file of type `kind` with `number`; `number` is ignored for
/// [`FileType::Current`] and [`FileType::Lock`].
pub fn file_name(kind: FileType, number: u64) -> String {
    match kind {
        FileType::Table => table_file_name(number),
        FileType::Log => format!("{number:06}{LOG_SUFFIX}"),
        FileType::Temp => format!("{number:06}{TEMP_SUFFIX}"),
        FileType::Manifest => format!("{MANIFEST_PREFIX}{number:06}"),
        FileType::Current => CURRENT_NAME.to_string(),
        FileType::Lock => LOCK_NAME.to_string(),
    }
}

/// The file name of table `number` inside a database directory: `NNNNNN.sst`. Public as
/// `bloomkv::sstable::table_file_name`, for tools that find a table's file.
///
/// ```
/// assert_eq!(bloomkv::sstable::table_file_name(42), "000042.sst");
/// ```
pub fn table_file_name(number: u64) -> String {
    format!("{number:06}{TABLE_SUFFIX}")
}

/// `dir/NNNNNN.sst`.
pub fn table_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(file_name(FileType::Table, number))
}

/// `dir/NNNNNN.log`.
pub fn log_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(file_name(FileType::Log, number))
}

/// `dir/MANIFEST-NNNNNN`.
pub fn manifest_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(file_name(FileType::Manifest, number))
}

/// `dir/CURRENT`.
pub fn current_path(dir: &Path) -> PathBuf {
    dir.join(CURRENT_NAME)
}

/// `dir/LOCK`.
pub fn lock_path(dir: &Path) -> PathBuf {
    dir.join(LOCK_NAME)
}

/// `dir/NNNNNN.dbtmp`.
pub fn temp_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(file_name(FileType::Temp, number))
}

/// Recognises a database file name; returns its type and number (0 for `CURRENT` and
/// `LOCK`). Anything else — including numbers with signs, spaces or more than fit in a
/// `u64` — is `None`, so the engine never mistakes a stranger's file for its own.
pub fn parse_file_name(name: &str) -> Option<(FileType, u64)> {
    match name {
        CURRENT_NAME => return Some((FileType::Current, 0)),
        LOCK_NAME => return Some((FileType::Lock, 0)),
        _ => {}
    }
    if let Some(digits) = name.strip_prefix(MANIFEST_PREFIX) {
        return parse_number(digits).map(|n| (FileType::Manifest, n));
    }
    let (digits, kind) = if let Some(d) = name.strip_suffix(TABLE_SUFFIX) {
        (d, FileType::Table)
    } else if let Some(d) = name.strip_suffix(LOG_SUFFIX) {
        (d, FileType::Log)
    } else if let Some(d) = name.strip_suffix(TEMP_SUFFIX) {
        (d, FileType::Temp)
    } else {
        return None;
    };
    parse_number(digits).map(|n| (kind, n))
}

/// Decimal digits only: `u64::from_str` would also accept a leading `+`.
fn parse_number(digits: &str) -> Option<u64> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let dir = Path::new("/db");
        assert_eq!(table_path(dir, 123), Path::new("/db/000123.sst"));
        assert_eq!(log_path(dir, 7), Path::new("/db/000007.log"));
        assert_eq!(manifest_path(dir, 1), Path::new("/db/MANIFEST-000001"));
        assert_eq!(temp_path(dir, 42), Path::new("/db/000042.dbtmp"));
        assert_eq!(current_path(dir), Path::new("/db/CURRENT"));
        assert_eq!(lock_path(dir), Path::new("/db/LOCK"));
        assert_eq!(
            table_path(dir, 12_345_678),
            Path::new("/db/12345678.sst"),
            "numbers wider than six digits are not truncated"
        );
        for kind in [
            FileType::Table,
            FileType::Log,
            FileType::Manifest,
            FileType::Temp,
        ] {
            for n in [0, 1, 999_999, 1_000_000, u64::MAX] {
                assert_eq!(parse_file_name(&file_name(kind, n)), Some((kind, n)));
            }
        }
        assert_eq!(parse_file_name("CURRENT"), Some((FileType::Current, 0)));
        assert_eq!(parse_file_name("LOCK"), Some((FileType::Lock, 0)));
    }

    #[test]
    fn strangers_are_rejected() {
        for name in [
            "",
            ".sst",
            "+12.sst",
            "-1.log",
            " 1.log",
            "12a.sst",
            "000001.sst.bak",
            "MANIFEST-",
            "MANIFEST-x",
            "MANIFEST-+1",
            "manifest-000001",
            "CURRENT.bak",
            "99999999999999999999999.log",
            "LOCKS",
        ] {
            assert_eq!(parse_file_name(name), None, "{name:?}");
        }
    }
}
