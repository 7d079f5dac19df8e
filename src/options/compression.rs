//! Which codec compresses a table's blocks: the [`Compression`] setting of
//! [`Options::compression`](crate::Options::compression) and its textual form (`none`, `lz4`,
//! `zstd:LEVEL`). The bytes a compressed block is stored as, and the codec byte each setting
//! writes, belong to the table format: `sstable::compression`.

/// The zstd level used by [`Compression::Zstd`] when none is given (zstd's own default).
///
/// # Examples
/// ```
/// use bloomkv::Compression;
/// use bloomkv::sstable::compression::ZSTD_DEFAULT_LEVEL;
/// assert_eq!("zstd".parse::<Compression>(), Ok(Compression::Zstd { level: ZSTD_DEFAULT_LEVEL }));
/// ```
pub const ZSTD_DEFAULT_LEVEL: i32 = 3;

/// How the data blocks and the index block of a table are compressed.
///
/// Filter, properties and metaindex blocks are always stored raw. Whatever the setting, a
/// block whose compressed form would not be at least an eighth smaller is stored raw, so a
/// table may mix raw and compressed blocks.
///
/// ```
/// use bloomkv::Compression;
///
/// assert_eq!(Compression::default(), Compression::None);
/// assert_eq!(Compression::Lz4.name(), "lz4");
/// assert_eq!("zstd:19".parse::<Compression>(), Ok(Compression::Zstd { level: 19 }));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Compression {
    /// Blocks are stored as they are (codec byte 0).
    #[default]
    None,
    /// LZ4 block format, through `lz4_flex` (codec byte 1): fast to decompress, about 2:1 on
    /// text-like data.
    Lz4,
    /// Zstandard at `level` (1..=22; 3 is zstd's default), through the `zstd` crate (codec
    /// byte 2): smaller than LZ4, slower to write.
    Zstd {
        /// The zstd compression level: 1..=22, or negative for zstd's faster modes; zstd
        /// clamps values out of its range.
        level: i32,
    },
}

impl Compression {
    /// The codec's short name: `none`, `lz4` or `zstd`.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::Compression;
    /// assert_eq!(Compression::Zstd { level: 9 }.name(), "zstd");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Lz4 => "lz4",
            Compression::Zstd { .. } => "zstd",
        }
    }
}

impl std::fmt::Display for Compression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Compression::Zstd { level } => write!(f, "zstd:{level}"),
            c => f.write_str(c.name()),
        }
    }
}

impl std::str::FromStr for Compression {
    type Err = String;

    /// Parses `none`, `lz4`, `zstd` (level 3) or `zstd:LEVEL`.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "none" => Ok(Compression::None),
            "lz4" => Ok(Compression::Lz4),
            "zstd" => Ok(Compression::Zstd {
                level: ZSTD_DEFAULT_LEVEL,
            }),
            _ => match s.strip_prefix("zstd:").map(str::parse::<i32>) {
                Some(Ok(level)) => Ok(Compression::Zstd { level }),
                _ => Err(format!(
                    "unknown compression {s:?} (expected none, lz4, zstd or zstd:LEVEL)"
                )),
            },
        }
    }
}
