//! The fixed pieces of the table format: block handles, the 5-byte block trailer and the
//! footer. Byte layouts are in `docs/FORMAT.md`, section "SSTable".

use std::ops::Range;
use std::path::Path;

use crate::env::RandomAccessFile;
use crate::error::{Error, Result};
use crate::sstable::compression::{CODEC_NONE, decompress_block};
use crate::util::coding::{Decoder, put_varint64};

/// The newest table format version this build reads and writes. Version 2 added block
/// compression (the trailer's codec byte); version 3 added optional meta blocks (the
/// range-deletion block); version 4 the prefix-filter block, and a table is written as
/// version 4 only when it has one ([`PLAIN_FORMAT_VERSION`] otherwise). Tables of every
/// earlier version stay readable.
///
/// # Examples
/// ```
/// use bloomkv::sstable::format::{FORMAT_VERSION, PLAIN_FORMAT_VERSION};
/// assert!(FORMAT_VERSION > PLAIN_FORMAT_VERSION);
/// ```
pub const FORMAT_VERSION: u32 = 4;

/// The version of a table written without a prefix filter: byte for byte what version 3
/// writes, so such tables stay readable by builds that know version 3.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// # use std::sync::Arc;
/// # use bloomkv::env::{Env, StdEnv};
/// # use bloomkv::filter::BloomPolicy;
/// # use bloomkv::sstable::internal_key::{self, Kind};
/// # use bloomkv::sstable::{ReadCounters, Table, TableBuildOptions, TableBuilder, TableReadOptions};
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("000007.sst");
/// # let opts = TableBuildOptions { filter: Some(Arc::new(BloomPolicy::new(10))), ..Default::default() };
/// # let mut b = TableBuilder::new(StdEnv.create_writable(&path)?, path.clone(), opts);
/// # b.add(&internal_key::encode(b"apple", 1, Kind::Put), b"red")?;
/// # b.add(&internal_key::encode(b"pear", 2, Kind::Put), b"green")?;
/// # b.finish()?;
/// # let read = TableReadOptions {
/// #     file_number: 7,
/// #     filter: Some(Arc::new(BloomPolicy::new(10))),
/// #     cache: None,
/// #     counters: Arc::new(ReadCounters::default()),
/// # };
/// # let table = Table::open(StdEnv.open_random_access(&path)?, read)?;
/// use bloomkv::sstable::format::PLAIN_FORMAT_VERSION;
/// // Built without a prefix extractor: the plain version.
/// assert_eq!(table.properties().format_version, PLAIN_FORMAT_VERSION);
/// # Ok(())
/// # }
/// ```
pub const PLAIN_FORMAT_VERSION: u32 = 3;

/// Identifies a bloomkv table; the last 8 bytes of every `.sst` file (little-endian).
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// # use std::sync::Arc;
/// # use bloomkv::env::{Env, StdEnv};
/// # use bloomkv::filter::BloomPolicy;
/// # use bloomkv::sstable::internal_key::{self, Kind};
/// # use bloomkv::sstable::{ReadCounters, Table, TableBuildOptions, TableBuilder, TableReadOptions};
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("000007.sst");
/// # let opts = TableBuildOptions { filter: Some(Arc::new(BloomPolicy::new(10))), ..Default::default() };
/// # let mut b = TableBuilder::new(StdEnv.create_writable(&path)?, path.clone(), opts);
/// # b.add(&internal_key::encode(b"apple", 1, Kind::Put), b"red")?;
/// # b.add(&internal_key::encode(b"pear", 2, Kind::Put), b"green")?;
/// # b.finish()?;
/// # let read = TableReadOptions {
/// #     file_number: 7,
/// #     filter: Some(Arc::new(BloomPolicy::new(10))),
/// #     cache: None,
/// #     counters: Arc::new(ReadCounters::default()),
/// # };
/// # let table = Table::open(StdEnv.open_random_access(&path)?, read)?;
/// use bloomkv::sstable::format::TABLE_MAGIC;
/// let bytes = std::fs::read(&path)?;
/// assert_eq!(bytes[bytes.len() - 8..], TABLE_MAGIC.to_le_bytes());
/// # Ok(())
/// # }
/// ```
pub const TABLE_MAGIC: u64 = 0x626c_6f6f_6d6b_7631; // "bloomkv1" read as a big-endian number

/// Bytes after every block: 1 codec byte + 4 bytes crc32.
///
/// # Examples
/// ```
/// use bloomkv::sstable::format::{BLOCK_TRAILER_LEN, BLOCK_TYPE_RAW, block_trailer};
/// assert_eq!(block_trailer(b"contents", BLOCK_TYPE_RAW).len(), BLOCK_TRAILER_LEN);
/// ```
pub const BLOCK_TRAILER_LEN: usize = 5;

/// Codec byte of an uncompressed block (the only one version 1 writes); the others are in
/// [`crate::sstable::compression`].
///
/// # Examples
/// ```
/// use bloomkv::sstable::format::{BLOCK_TYPE_RAW, block_trailer};
/// assert_eq!(block_trailer(b"x", BLOCK_TYPE_RAW)[0], BLOCK_TYPE_RAW);
/// ```
pub const BLOCK_TYPE_RAW: u8 = CODEC_NONE;

/// Width the two footer handles are zero-padded to (2 x 20 bytes, the longest two varints).
const FOOTER_HANDLES_LEN: usize = 2 * BlockHandle::MAX_ENCODED_LEN;

/// Total footer size: padded handles, format version, footer crc, magic.
///
/// # Examples
/// ```
/// use bloomkv::sstable::format::{BlockHandle, FOOTER_LEN, Footer};
/// let h = BlockHandle { offset: 0, size: 0 };
/// let footer = Footer { metaindex: h, index: h, format_version: 3 };
/// assert_eq!(footer.encode().len(), FOOTER_LEN);
/// ```
pub const FOOTER_LEN: usize = FOOTER_HANDLES_LEN + 4 + 4 + 8;

/// Where a block lives in the file: its first byte and its length, trailer excluded.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::sstable::format::BlockHandle;
/// let h = BlockHandle { offset: 4096, size: 300 };
/// assert_eq!(BlockHandle::decode_exact(&h.encode())?, h);
/// assert_eq!(h.end_with_trailer(), Some(4096 + 300 + 5));
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct BlockHandle {
    /// Offset of the block's first byte.
    pub offset: u64,
    /// Length of the block contents (without the 5-byte trailer).
    pub size: u64,
}

impl BlockHandle {
    /// Two varint64s take at most 20 bytes.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::sstable::format::BlockHandle;
    /// let h = BlockHandle { offset: u64::MAX, size: u64::MAX };
    /// assert_eq!(h.encode().len(), BlockHandle::MAX_ENCODED_LEN);
    /// ```
    pub const MAX_ENCODED_LEN: usize = 20;

    /// Appends the handle as two varints (offset, size).
    ///
    /// # Examples
    /// ```
    /// use bloomkv::sstable::format::BlockHandle;
    /// let mut out = vec![0xaa];
    /// BlockHandle { offset: 1, size: 2 }.encode_to(&mut out);
    /// assert_eq!(out, [0xaa, 1, 2]);
    /// ```
    pub fn encode_to(&self, out: &mut Vec<u8>) {
        put_varint64(out, self.offset);
        put_varint64(out, self.size);
    }

    /// The handle as two varints.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::sstable::format::BlockHandle;
    /// assert_eq!(BlockHandle { offset: 300, size: 5 }.encode(), [0xac, 0x02, 5]);
    /// ```
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::MAX_ENCODED_LEN);
        self.encode_to(&mut out);
        out
    }

    /// Decodes a handle from the decoder's position.
    ///
    /// # Errors
    /// `Corruption` (buffer-relative) on a bad varint.
    pub(crate) fn decode_from(d: &mut Decoder<'_>) -> Result<BlockHandle> {
        let offset = d.varint64()?;
        let size = d.varint64()?;
        Ok(BlockHandle { offset, size })
    }

    /// Decodes a handle that must fill `bytes` exactly.
    ///
    /// # Errors
    /// `Corruption` (buffer-relative) on a bad varint or trailing bytes.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::sstable::format::BlockHandle;
    /// assert_eq!(BlockHandle::decode_exact(&[1, 2]).unwrap(), BlockHandle { offset: 1, size: 2 });
    /// assert!(BlockHandle::decode_exact(&[1, 2, 3]).unwrap_err().is_corruption()); // trailing byte
    /// ```
    pub fn decode_exact(bytes: &[u8]) -> Result<BlockHandle> {
        let mut d = Decoder::new(bytes);
        let h = Self::decode_from(&mut d)?;
        if !d.is_empty() {
            return Err(Error::corrupt_bytes(
                d.position() as u64,
                "trailing bytes after a block handle",
            ));
        }
        Ok(h)
    }

    /// Offset one past the block's trailer, or `None` on overflow.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::sstable::format::BlockHandle;
    /// assert_eq!(BlockHandle { offset: 10, size: 20 }.end_with_trailer(), Some(35));
    /// assert_eq!(BlockHandle { offset: u64::MAX, size: 1 }.end_with_trailer(), None);
    /// ```
    pub fn end_with_trailer(&self) -> Option<u64> {
        self.offset
            .checked_add(self.size)?
            .checked_add(BLOCK_TRAILER_LEN as u64)
    }
}

/// The block checksum: crc32 over the stored block contents followed by the codec byte.
///
/// # Examples
/// ```
/// use bloomkv::sstable::format::{BLOCK_TYPE_RAW, block_crc, block_trailer};
/// let trailer = block_trailer(b"data", BLOCK_TYPE_RAW);
/// assert_eq!(trailer[1..], block_crc(b"data", BLOCK_TYPE_RAW).to_le_bytes());
/// ```
pub fn block_crc(contents: &[u8], block_type: u8) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(contents);
    h.update(&[block_type]);
    h.finalize()
}

/// The 5-byte trailer written after `stored`, the block's bytes as stored with `codec`.
///
/// # Examples
/// ```
/// use bloomkv::sstable::compression::CODEC_LZ4;
/// use bloomkv::sstable::format::block_trailer;
/// assert_eq!(block_trailer(b"lz4 bytes", CODEC_LZ4)[0], CODEC_LZ4);
/// ```
pub fn block_trailer(stored: &[u8], codec: u8) -> [u8; BLOCK_TRAILER_LEN] {
    let crc = block_crc(stored, codec);
    let c = crc.to_le_bytes();
    [codec, c[0], c[1], c[2], c[3]]
}

/// Reads the block at `handle`, verifies its trailer and returns its contents, decompressed
/// if it was stored compressed.
///
/// `limit` is the offset where blocks end (the footer's start): a handle reaching past it is
/// rejected before anything is allocated, so a corrupt size can never cause a large allocation.
///
/// # Errors
/// `Corruption` naming the file and the block's absolute offset on a bad handle, checksum
/// mismatch, unknown codec byte or a compressed block that does not decompress to its stated
/// size (see [`decompress_block`]); `Io` if the read fails.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// # use std::sync::Arc;
/// # use bloomkv::env::{Env, StdEnv};
/// # use bloomkv::filter::BloomPolicy;
/// # use bloomkv::sstable::internal_key::{self, Kind};
/// # use bloomkv::sstable::{ReadCounters, Table, TableBuildOptions, TableBuilder, TableReadOptions};
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("000007.sst");
/// # let opts = TableBuildOptions { filter: Some(Arc::new(BloomPolicy::new(10))), ..Default::default() };
/// # let mut b = TableBuilder::new(StdEnv.create_writable(&path)?, path.clone(), opts);
/// # b.add(&internal_key::encode(b"apple", 1, Kind::Put), b"red")?;
/// # b.add(&internal_key::encode(b"pear", 2, Kind::Put), b"green")?;
/// # b.finish()?;
/// # let read = TableReadOptions {
/// #     file_number: 7,
/// #     filter: Some(Arc::new(BloomPolicy::new(10))),
/// #     cache: None,
/// #     counters: Arc::new(ReadCounters::default()),
/// # };
/// # let table = Table::open(StdEnv.open_random_access(&path)?, read)?;
/// use bloomkv::sstable::format::{FOOTER_LEN, Footer, read_block};
/// let file = StdEnv.open_random_access(&path)?;
/// let end = file.size() - FOOTER_LEN as u64;
/// let footer = Footer::decode(&file.read_at(end, FOOTER_LEN)?)?;
/// let index = read_block(&*file, &path, footer.index, end)?; // checked, decompressed
/// assert!(!index.is_empty());
/// # Ok(())
/// # }
/// ```
pub fn read_block(
    file: &dyn RandomAccessFile,
    path: &Path,
    handle: BlockHandle,
    limit: u64,
) -> Result<Vec<u8>> {
    read_block_reusing(file, path, handle, limit, Vec::new())
}

/// [`read_block`] into `spare`'s allocation where the file allows it.
///
/// # Errors
/// As [`read_block`].
pub(crate) fn read_block_reusing(
    file: &dyn RandomAccessFile,
    path: &Path,
    handle: BlockHandle,
    limit: u64,
    spare: Vec<u8>,
) -> Result<Vec<u8>> {
    read_block_with_codec(file, path, handle, limit, spare).map(|(block, _)| block)
}

/// [`read_block_reusing`], also returning the block's codec byte (see
/// [`located_in_block`]).
///
/// # Errors
/// As [`read_block`].
pub(crate) fn read_block_with_codec(
    file: &dyn RandomAccessFile,
    path: &Path,
    handle: BlockHandle,
    limit: u64,
    spare: Vec<u8>,
) -> Result<(Vec<u8>, u8)> {
    let len = checked_block_len(path, handle, limit)?;
    // A spare much larger than this block (an evicted big block's) would sit in the cache
    // charged at this block's size: use it only when it is about the right size.
    let spare = if spare.capacity() <= 2 * (len + BLOCK_TRAILER_LEN).max(4096) {
        spare
    } else {
        Vec::new()
    };
    let mut buf = file.read_at_reusing(handle.offset, len + BLOCK_TRAILER_LEN, spare)?;
    let block_type = check_trailer(&buf, path, handle)?;
    buf.truncate(len);
    decompress_block(block_type, buf)
        .map(|block| (block, block_type))
        .map_err(|e| e.located(path, handle.offset))
}

/// Where the block at `handle` lies in `map` (the whole table file, mapped), its trailer
/// checked, when it is stored uncompressed and so can be read in place; `None` for a
/// compressed block, which must be read and decompressed ([`read_block_with_codec`]).
///
/// # Errors
/// As [`read_block`].
pub(crate) fn raw_block_in(
    map: &[u8],
    path: &Path,
    handle: BlockHandle,
    limit: u64,
) -> Result<Option<Range<usize>>> {
    let len = checked_block_len(path, handle, limit)?;
    let start = usize::try_from(handle.offset).map_err(|_| {
        Error::corruption(path, handle.offset, "block offset does not fit in memory")
    })?;
    let end = start.checked_add(len + BLOCK_TRAILER_LEN);
    let Some(stored) = end.and_then(|end| map.get(start..end)) else {
        return Err(Error::corruption(
            path,
            handle.offset,
            format!("block runs past the end of the file ({} bytes)", map.len()),
        ));
    };
    if stored[len] != CODEC_NONE {
        return Ok(None);
    }
    check_trailer(stored, path, handle)?;
    Ok(Some(start..start + len))
}

/// The length of the block at `handle`, checked to end (with its trailer) by `limit`, the
/// offset where blocks end: a corrupt size is rejected before anything is allocated.
fn checked_block_len(path: &Path, handle: BlockHandle, limit: u64) -> Result<usize> {
    let end = handle.end_with_trailer();
    if end.is_none_or(|end| end > limit) {
        return Err(Error::corruption(
            path,
            handle.offset,
            format!(
                "block handle (offset {}, size {}) runs past the end of the table's blocks ({limit})",
                handle.offset, handle.size
            ),
        ));
    }
    // `end <= limit <= file size`, so the size fits in memory as far as the file does.
    usize::try_from(handle.size)
        .map_err(|_| Error::corruption(path, handle.offset, "block size does not fit in memory"))
}

/// Checks the checksum of `stored`, a block's bytes followed by its trailer, and returns its
/// codec byte.
fn check_trailer(stored: &[u8], path: &Path, handle: BlockHandle) -> Result<u8> {
    let len = stored.len() - BLOCK_TRAILER_LEN;
    let block_type = stored[len];
    let t = &stored[len + 1..];
    let want = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
    let actual = block_crc(&stored[..len], block_type);
    if want != actual {
        return Err(Error::corruption(
            path,
            handle.offset,
            format!(
                "block checksum mismatch (stored {want:#010x}, computed {actual:#010x}, {len} bytes)"
            ),
        ));
    }
    Ok(block_type)
}

/// Locates a block-relative error about the contents of the block at `handle`, stored with
/// `codec`. In a raw block the offset is the file's; offsets in a decompressed block are not,
/// so the error then names the block's first byte and gives the offset within the
/// decompressed contents in its message.
pub(crate) fn located_in_block(e: Error, path: &Path, handle: BlockHandle, codec: u8) -> Error {
    match e {
        Error::Corruption { file, offset, why }
            if codec != CODEC_NONE && file.as_os_str().is_empty() =>
        {
            Error::corruption(
                path,
                handle.offset,
                format!("{why} (byte {offset} of the block decompressed)"),
            )
        }
        e => e.located(path, handle.offset),
    }
}

/// The fixed-size record at the end of every table.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::sstable::format::{BlockHandle, Footer};
/// let footer = Footer {
///     metaindex: BlockHandle { offset: 10, size: 20 },
///     index: BlockHandle { offset: 35, size: 40 },
///     format_version: 3,
/// };
/// assert_eq!(Footer::decode(&footer.encode())?, footer);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footer {
    /// Where the metaindex block is.
    pub metaindex: BlockHandle,
    /// Where the index block is.
    pub index: BlockHandle,
    /// The table format version.
    pub format_version: u32,
}

impl Footer {
    /// The footer's `FOOTER_LEN` bytes.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::sstable::format::{BlockHandle, Footer, TABLE_MAGIC};
    /// let h = BlockHandle { offset: 0, size: 1 };
    /// let bytes = Footer { metaindex: h, index: h, format_version: 3 }.encode();
    /// assert!(bytes.ends_with(&TABLE_MAGIC.to_le_bytes()));
    /// ```
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(FOOTER_LEN);
        self.metaindex.encode_to(&mut out);
        self.index.encode_to(&mut out);
        out.resize(FOOTER_HANDLES_LEN, 0);
        out.extend_from_slice(&self.format_version.to_le_bytes());
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&TABLE_MAGIC.to_le_bytes());
        out
    }

    /// Decodes and verifies a footer (magic, checksum, version, handles).
    ///
    /// # Errors
    /// Buffer-relative `Corruption` for a wrong length, magic, checksum or handle;
    /// `UnsupportedVersion` (with an empty path; callers fill it in) for a newer version.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::sstable::format::{BlockHandle, Footer};
    /// let h = BlockHandle { offset: 0, size: 1 };
    /// let mut bytes = Footer { metaindex: h, index: h, format_version: 3 }.encode();
    /// bytes[0] ^= 1; // the checksum catches it
    /// assert!(Footer::decode(&bytes).unwrap_err().is_corruption());
    /// ```
    pub fn decode(bytes: &[u8]) -> Result<Footer> {
        if bytes.len() != FOOTER_LEN {
            return Err(Error::corrupt_bytes(
                0,
                format!("footer is {} bytes, expected {FOOTER_LEN}", bytes.len()),
            ));
        }
        let mut d = Decoder::new(&bytes[FOOTER_HANDLES_LEN..]);
        let version = d.u32_le()?;
        let crc = d.u32_le()?;
        let magic = d.u64_le()?;
        let rel = |e: Error| e.located_rel(FOOTER_HANDLES_LEN);
        if magic != TABLE_MAGIC {
            return Err(rel(Error::corrupt_bytes(
                8,
                format!("bad table magic {magic:#018x} (not a bloomkv table?)"),
            )));
        }
        let actual = crc32fast::hash(&bytes[..FOOTER_HANDLES_LEN + 4]);
        if crc != actual {
            return Err(rel(Error::corrupt_bytes(
                4,
                format!("footer checksum mismatch (stored {crc:#010x}, computed {actual:#010x})"),
            )));
        }
        if version == 0 {
            return Err(rel(Error::corrupt_bytes(0, "format version 0")));
        }
        if version > FORMAT_VERSION {
            return Err(Error::UnsupportedVersion {
                file: Default::default(),
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        let mut d = Decoder::new(&bytes[..FOOTER_HANDLES_LEN]);
        let metaindex = BlockHandle::decode_from(&mut d)?;
        let index = BlockHandle::decode_from(&mut d)?;
        if d.remaining().iter().any(|&b| b != 0) {
            return Err(Error::corrupt_bytes(
                d.position() as u64,
                "footer padding is not zero",
            ));
        }
        Ok(Footer {
            metaindex,
            index,
            format_version: version,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footer_round_trip_and_checks() {
        let f = Footer {
            metaindex: BlockHandle {
                offset: 123_456,
                size: 77,
            },
            index: BlockHandle {
                offset: u64::MAX - 5,
                size: u64::MAX,
            },
            format_version: 1,
        };
        let b = f.encode();
        assert_eq!(b.len(), FOOTER_LEN);
        assert_eq!(Footer::decode(&b).unwrap(), f);
        for i in 0..b.len() {
            let mut c = b.clone();
            c[i] ^= 0x10;
            assert!(Footer::decode(&c).is_err(), "flip at {i} undetected");
        }
    }

    #[test]
    fn trailer_covers_type_byte() {
        let t = block_trailer(b"abc", BLOCK_TYPE_RAW);
        assert_eq!(t[0], BLOCK_TYPE_RAW);
        assert_ne!(block_crc(b"abc", 0), block_crc(b"abc", 1));
    }

    /// A read reuses a spare buffer of about the block's size, and leaves a much larger one
    /// alone (else a small block would sit in a big allocation charged as small).
    #[test]
    fn read_block_reuses_only_a_spare_of_about_the_right_size() {
        use crate::env::{Env, StdEnv};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("blocks");
        let data = vec![7u8; 3000];
        let mut file = data.clone();
        file.extend_from_slice(&block_trailer(&data, BLOCK_TYPE_RAW));
        std::fs::write(&path, &file).unwrap();
        let f = StdEnv.open_random_access(&path).unwrap();
        let handle = BlockHandle {
            offset: 0,
            size: data.len() as u64,
        };
        let limit = file.len() as u64;
        let near = Vec::with_capacity(4096);
        let near_ptr = near.as_ptr();
        let got = read_block_reusing(&*f, &path, handle, limit, near).unwrap();
        assert_eq!(got, data);
        assert_eq!(
            got.as_ptr(),
            near_ptr,
            "a 4 KiB spare is reused for 3000 bytes"
        );
        let huge = Vec::with_capacity(1 << 20);
        let got = read_block_reusing(&*f, &path, handle, limit, huge).unwrap();
        assert_eq!(got, data);
        assert!(
            got.capacity() < 1 << 20,
            "a 1 MiB spare is not kept for 3000 bytes"
        );
    }
}
