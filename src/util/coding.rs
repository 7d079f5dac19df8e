//! Variable- and fixed-width integer encodings shared by every on-disk format.
//!
//! Varints are LEB128: 7 bits per byte, low groups first, high bit set on every byte but the
//! last. A u32 varint takes at most 5 bytes, a u64 at most 10.

use crate::error::{Error, Result};

/// Bytes [`put_varint64`] takes for `v`.
pub fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Appends `v` as a varint.
pub fn put_varint64(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends `v` as a varint.
pub fn put_varint32(out: &mut Vec<u8>, v: u32) {
    put_varint64(out, u64::from(v));
}

/// Appends `bytes` prefixed by its length as a varint.
pub fn put_length_prefixed(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint64(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Decodes a varint at the start of `input`; returns it and the bytes it took.
/// Errors (offset 0, relative to `input`) on truncation or overflow.
pub fn get_varint64(input: &[u8]) -> Result<(u64, usize)> {
    let mut v: u64 = 0;
    for (i, &b) in input.iter().enumerate().take(10) {
        let low = u64::from(b & 0x7f);
        if i == 9 && b > 1 {
            return Err(Error::corrupt_bytes(0, "varint overflows 64 bits"));
        }
        v |= low << (7 * i);
        if b & 0x80 == 0 {
            return Ok((v, i + 1));
        }
    }
    if input.len() >= 10 {
        Err(Error::corrupt_bytes(0, "varint longer than 10 bytes"))
    } else {
        Err(Error::corrupt_bytes(0, "truncated varint"))
    }
}

/// Decodes a varint that must fit in 32 bits.
pub fn get_varint32(input: &[u8]) -> Result<(u32, usize)> {
    let (v, n) = get_varint64(input)?;
    let v = u32::try_from(v).map_err(|_| Error::corrupt_bytes(0, "varint overflows 32 bits"))?;
    Ok((v, n))
}

/// A cursor over a byte slice that decodes fields and reports the offset of any failure.
#[derive(Debug, Clone)]
pub struct Decoder<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    /// Starts at the beginning of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Decoder { buf, pos: 0 }
    }
    /// Current offset from the start of the buffer.
    pub fn position(&self) -> usize {
        self.pos
    }
    /// Bytes not yet consumed.
    pub fn remaining(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }
    /// True when everything is consumed.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }
    fn fail(&self, why: impl Into<String>) -> Error {
        Error::corrupt_bytes(self.pos as u64, why)
    }
    /// Decodes a varint.
    pub fn varint64(&mut self) -> Result<u64> {
        let (v, n) = get_varint64(self.remaining()).map_err(|e| e.located_rel(self.pos))?;
        self.pos += n;
        Ok(v)
    }
    /// Takes `n` raw bytes.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.buf.len() - self.pos < n {
            return Err(self.fail(format!(
                "needs {n} bytes, only {} left",
                self.buf.len() - self.pos
            )));
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }
    /// Takes a varint length and that many bytes.
    pub fn length_prefixed(&mut self) -> Result<&'a [u8]> {
        let n = self.varint64()?;
        let n = usize::try_from(n).map_err(|_| self.fail("length does not fit in memory"))?;
        self.bytes(n)
    }
    /// Takes one byte.
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.bytes(1)?[0])
    }
    /// Takes a little-endian u32.
    pub fn u32_le(&mut self) -> Result<u32> {
        let b = self.bytes(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    /// Takes a little-endian u64.
    pub fn u64_le(&mut self) -> Result<u64> {
        let b = self.bytes(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
}

impl Error {
    /// Adds `delta` to the offset of a file-less corruption error (used by nested decoders).
    #[must_use]
    pub(crate) fn located_rel(self, delta: usize) -> Self {
        match self {
            Error::Corruption { file, offset, why } if file.as_os_str().is_empty() => {
                Error::Corruption {
                    file,
                    offset: offset + delta as u64,
                    why,
                }
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_round_trip_and_limits() {
        for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut b = Vec::new();
            put_varint64(&mut b, v);
            assert_eq!(get_varint64(&b).unwrap(), (v, b.len()));
            assert_eq!(varint_len(v), b.len(), "{v}");
            assert!(get_varint64(&b[..b.len() - 1]).is_err());
        }
        assert!(get_varint64(&[0xff; 11]).is_err());
        assert!(
            get_varint64(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]).is_err()
        );
        assert!(get_varint32(&[0xff, 0xff, 0xff, 0xff, 0x1f]).is_err());
    }

    #[test]
    fn decoder_reports_offsets() {
        let mut b = Vec::new();
        put_length_prefixed(&mut b, b"abc");
        b.push(200); // a length of 200 with nothing behind it
        let mut d = Decoder::new(&b);
        assert_eq!(d.length_prefixed().unwrap(), b"abc");
        let err = d.length_prefixed().unwrap_err();
        assert!(
            matches!(err, Error::Corruption { offset: 4, .. })
                || matches!(err, Error::Corruption { offset: 5, .. }),
            "{err}"
        );
    }
}
