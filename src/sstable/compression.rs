//! Block compression (table format version 2). Byte layout: `docs/FORMAT.md`, section
//! "Block trailer" and "Compressed blocks".
//!
//! A block is stored either as it is (codec byte 0) or as `varint32 raw_len ++ payload`, where
//! `payload` is the block compressed by the codec its trailer names. The writer keeps a block
//! raw when compressing it saves less than an eighth, and never compresses a block larger
//! than [`MAX_COMPRESSED_RAW_BYTES`]; so a reader can refuse any larger `raw_len` before it
//! allocates, and a damaged block can never make it allocate more than that.

use std::cell::RefCell;

use crate::error::{Error, Result};
use crate::util::coding::{get_varint32, put_varint32};

/// Codec byte of a block stored as it is. DO NOT CHANGE: these values are on disk.
///
/// # Examples
/// ```
/// use bloomkv::Compression;
/// use bloomkv::sstable::compression::CODEC_NONE;
/// assert_eq!(Compression::None.codec_byte(), CODEC_NONE);
/// ```
pub const CODEC_NONE: u8 = 0;
/// Codec byte of an LZ4 (block format, no frame) compressed block.
///
/// # Examples
/// ```
/// use bloomkv::Compression;
/// use bloomkv::sstable::compression::CODEC_LZ4;
/// assert_eq!(Compression::Lz4.codec_byte(), CODEC_LZ4);
/// ```
pub const CODEC_LZ4: u8 = 1;
/// Codec byte of a Zstandard (one frame) compressed block.
///
/// # Examples
/// ```
/// use bloomkv::Compression;
/// use bloomkv::sstable::compression::CODEC_ZSTD;
/// assert_eq!(Compression::Zstd { level: 3 }.codec_byte(), CODEC_ZSTD);
/// ```
pub const CODEC_ZSTD: u8 = 2;

/// The largest block the writer compresses (16 MiB), and so the largest decompressed size a
/// reader accepts. Larger blocks (a single huge value) are stored raw.
///
/// # Examples
/// ```
/// use bloomkv::sstable::compression::{CODEC_LZ4, MAX_COMPRESSED_RAW_BYTES, decompress_block};
/// // A stored block claiming more than the limit is refused before anything is allocated.
/// let mut stored = Vec::new();
/// let mut n = (MAX_COMPRESSED_RAW_BYTES + 1) as u32;
/// while n >= 0x80 {
///     stored.push((n as u8 & 0x7f) | 0x80);
///     n >>= 7;
/// }
/// stored.push(n as u8);
/// assert!(decompress_block(CODEC_LZ4, stored).unwrap_err().is_corruption());
/// ```
pub const MAX_COMPRESSED_RAW_BYTES: usize = 16 << 20;

// The setting is an option, defined with the options so that `options` imports nothing from
// `sstable`; the codec byte each setting writes is this format's, so that mapping is here.
pub use crate::options::compression::{Compression, ZSTD_DEFAULT_LEVEL};

impl Compression {
    /// The codec byte written in the trailer of a block this setting compresses.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::Compression;
    /// assert_eq!(Compression::Lz4.codec_byte(), 1);
    /// ```
    pub fn codec_byte(&self) -> u8 {
        match self {
            Compression::None => CODEC_NONE,
            Compression::Lz4 => CODEC_LZ4,
            Compression::Zstd { .. } => CODEC_ZSTD,
        }
    }
}

thread_local! {
    static ZSTD_COMPRESSOR: RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
        const { RefCell::new(None) };
    static ZSTD_DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

fn zstd_compress(level: i32, raw: &[u8], out: &mut Vec<u8>) -> bool {
    ZSTD_COMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_none_or(|(l, _)| *l != level) {
            *slot = zstd::bulk::Compressor::new(level).ok().map(|c| (level, c));
        }
        let Some((_, c)) = slot.as_mut() else {
            return false;
        };
        // zstd writes a Vec from its start, so compress into a buffer of its own.
        let mut payload = Vec::with_capacity(zstd::compress_bound(raw.len()));
        let ok = c.compress_to_buffer(raw, &mut payload).is_ok();
        out.extend_from_slice(&payload);
        ok
    })
}

fn zstd_decompress(payload: &[u8], out: &mut Vec<u8>) -> std::result::Result<usize, String> {
    ZSTD_DECOMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(zstd::bulk::Decompressor::new().map_err(|e| e.to_string())?);
        }
        match slot.as_mut() {
            Some(d) => d
                .decompress_to_buffer(payload, out)
                .map_err(|e| e.to_string()),
            None => Err("no zstd decompressor".to_string()),
        }
    })
}

/// Compresses `raw` with `c` into `out` (cleared first) as `varint32 raw_len ++ payload` and
/// returns the codec byte, or returns [`CODEC_NONE`] (and leaves `out` unspecified) when the
/// block is to be stored raw: no compression asked for, a block over
/// [`MAX_COMPRESSED_RAW_BYTES`], a codec failure, or a saving under an eighth.
pub(crate) fn compress_block(c: Compression, raw: &[u8], out: &mut Vec<u8>) -> u8 {
    if c == Compression::None || raw.len() > MAX_COMPRESSED_RAW_BYTES {
        return CODEC_NONE;
    }
    out.clear();
    put_varint32(out, raw.len() as u32);
    let ok = match c {
        Compression::None => false,
        Compression::Lz4 => {
            let start = out.len();
            out.resize(
                start + lz4_flex::block::get_maximum_output_size(raw.len()),
                0,
            );
            match lz4_flex::block::compress_into(raw, &mut out[start..]) {
                Ok(n) => {
                    out.truncate(start + n);
                    true
                }
                Err(_) => false,
            }
        }
        Compression::Zstd { level } => zstd_compress(level, raw, out),
    };
    if ok && out.len() <= raw.len() - raw.len() / 8 {
        c.codec_byte()
    } else {
        CODEC_NONE
    }
}

/// The raw block from a stored one whose trailer names `codec`.
///
/// # Errors
/// Buffer-relative `Corruption` (offsets within `stored`; the caller adds the file and the
/// block's offset) for an unknown codec, a missing, zero or too large (over
/// [`MAX_COMPRESSED_RAW_BYTES`]) raw length, a payload the codec rejects, or one that
/// decompresses to a size other than the stored raw length.
///
/// # Examples
/// ```
/// use bloomkv::sstable::compression::{CODEC_NONE, CODEC_ZSTD, decompress_block};
/// assert_eq!(decompress_block(CODEC_NONE, b"raw".to_vec()).unwrap(), b"raw");
/// assert!(decompress_block(CODEC_ZSTD, vec![5, 1, 2, 3]).unwrap_err().is_corruption());
/// assert!(decompress_block(9, vec![0]).is_err()); // no such codec
/// ```
pub fn decompress_block(codec: u8, stored: Vec<u8>) -> Result<Vec<u8>> {
    if codec == CODEC_NONE {
        return Ok(stored);
    }
    if codec != CODEC_LZ4 && codec != CODEC_ZSTD {
        return Err(Error::corrupt_bytes(
            stored.len() as u64,
            format!("unknown block codec {codec}"),
        ));
    }
    let (raw_len, used) = get_varint32(&stored)
        .map_err(|_| Error::corrupt_bytes(0, "compressed block lacks its raw length"))?;
    let raw_len = raw_len as usize;
    if raw_len == 0 || raw_len > MAX_COMPRESSED_RAW_BYTES {
        return Err(Error::corrupt_bytes(
            0,
            format!(
                "compressed block claims a raw length of {raw_len} bytes (1..={MAX_COMPRESSED_RAW_BYTES} allowed)"
            ),
        ));
    }
    let payload = &stored[used..];
    let mut out = Vec::with_capacity(raw_len);
    let got = if codec == CODEC_LZ4 {
        out.resize(raw_len, 0);
        lz4_flex::block::decompress_into(payload, &mut out).map_err(|e| e.to_string())
    } else {
        zstd_decompress(payload, &mut out)
    };
    match got {
        Ok(n) if n == raw_len && out.len() == raw_len => Ok(out),
        Ok(n) => Err(Error::corrupt_bytes(
            used as u64,
            format!("compressed block decompressed to {n} bytes, its header says {raw_len}"),
        )),
        Err(why) => Err(Error::corrupt_bytes(
            used as u64,
            format!("compressed block (codec {codec}) does not decompress: {why}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compressible(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i % 7) as u8 + b'a').collect()
    }

    #[test]
    fn round_trip_per_codec() {
        for c in [
            Compression::Lz4,
            Compression::Zstd { level: 1 },
            Compression::Zstd { level: 19 },
        ] {
            let raw = compressible(5000);
            let mut out = Vec::new();
            let codec = compress_block(c, &raw, &mut out);
            assert_eq!(codec, c.codec_byte(), "{c}");
            assert!(out.len() < raw.len() / 4);
            assert_eq!(decompress_block(codec, out).unwrap(), raw);
        }
    }

    #[test]
    fn incompressible_and_tiny_blocks_stay_raw() {
        let mut x = 0x1234_5678_9abc_def0u64;
        let random: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let mut out = Vec::new();
        for c in [Compression::Lz4, Compression::Zstd { level: 3 }] {
            assert_eq!(compress_block(c, &random, &mut out), CODEC_NONE);
            assert_eq!(compress_block(c, b"", &mut out), CODEC_NONE);
            assert_eq!(compress_block(c, b"abc", &mut out), CODEC_NONE);
        }
        assert_eq!(
            compress_block(Compression::None, &compressible(5000), &mut out),
            CODEC_NONE
        );
    }

    #[test]
    fn lying_lengths_and_bad_codecs_are_corruption() {
        let raw = compressible(3000);
        for c in [Compression::Lz4, Compression::Zstd { level: 3 }] {
            let mut good = Vec::new();
            let codec = compress_block(c, &raw, &mut good);
            let (_, used) = get_varint32(&good).unwrap();
            for lie in [1u32, 2999, 3001, 100_000, u32::MAX] {
                let mut b = Vec::new();
                put_varint32(&mut b, lie);
                b.extend_from_slice(&good[used..]);
                let e = decompress_block(codec, b).unwrap_err();
                assert!(matches!(e, Error::Corruption { .. }), "{c} {lie}: {e}");
            }
            assert!(decompress_block(codec, Vec::new()).is_err());
            assert!(decompress_block(3, good.clone()).is_err());
            assert!(decompress_block(255, good.clone()).is_err());
            for cut in 0..good.len() {
                assert!(decompress_block(codec, good[..cut].to_vec()).is_err());
            }
        }
    }

    #[test]
    fn parse_and_display() {
        for c in [
            Compression::None,
            Compression::Lz4,
            Compression::Zstd { level: 7 },
        ] {
            assert_eq!(c.to_string().parse::<Compression>(), Ok(c));
        }
        assert!("gzip".parse::<Compression>().is_err());
        assert!("zstd:x".parse::<Compression>().is_err());
    }
}
