//! The static filters' ([`super::BinaryFusePolicy`], [`super::RibbonPolicy`]) serialized form,
//! written and read here for both (`docs/FORMAT.md`, "Filter block"):
//!
//! | offset | size | field |
//! |---:|---:|---|
//! | 0 | 4 | the kind's magic |
//! | 4 | 1 | the kind's format version |
//! | 5 | 3 | a kind's parameter byte (Ribbon: result bits), then zeros up to byte 8 |
//! | 8 | 8 | seed, u64 LE |
//! | 16 | 8 | the kind's dimensions (fuse: `log2 L` and `S`, two u32 LE; Ribbon: slots, u64 LE) |
//! | 24 | 8 | keys, u64 LE |
//! | 32 | .. | payload |
//! | end - 4 | 4 | CRC-32 of everything before it, u32 LE |

use crate::error::{Error, Result};

/// Bytes before the payload.
pub(crate) const HEADER_LEN: usize = 32;

/// Bytes of the CRC-32 trailer.
const TRAILER_LEN: usize = 4;

/// A static filter's header fields after magic and version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    /// Byte 5: a parameter of the kind (0 where the kind has none: the byte is reserved).
    pub param: u8,
    /// The seed the kind mixed key hashes with.
    pub seed: u64,
    /// Bytes 16..24 as a u64 LE: the kind's dimensions.
    pub dims: u64,
    /// Keys the filter was built from; 0 means it rejects every key.
    pub keys: u64,
}

/// One static filter kind's framing.
pub(crate) struct Framing {
    /// First bytes of a serialized filter.
    pub magic: [u8; 4],
    /// The format version this code writes and reads.
    pub version: u8,
    /// Header bytes `reserved..8` must be zero (written as zero; the full check insists).
    pub reserved: usize,
    /// The kind as error messages name it ("binary fuse", "ribbon").
    pub what: &'static str,
    /// Where the kind's own fields start (the offset an error about them names).
    pub fields_at: u64,
    /// What that error says: the kind's fields and the filter's length disagree.
    pub fields_wrong: &'static str,
}

impl Framing {
    /// A serialized filter: the header, the `payload_len` bytes `payload` appends, the CRC.
    pub(crate) fn encode(
        &self,
        header: &Header,
        payload_len: usize,
        payload: impl FnOnce(&mut Vec<u8>),
    ) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_LEN + payload_len + TRAILER_LEN);
        out.extend_from_slice(&self.magic);
        out.push(self.version);
        out.extend_from_slice(&[header.param, 0, 0]);
        out.extend_from_slice(&header.seed.to_le_bytes());
        out.extend_from_slice(&header.dims.to_le_bytes());
        out.extend_from_slice(&header.keys.to_le_bytes());
        payload(&mut out);
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// The lookup path's decode: the header and the payload, when the bytes are long enough
    /// and magic and version are right; `None` otherwise. Nothing is checksummed here (a
    /// lookup reads a few bytes in place); the kind checks its own fields and payload length.
    #[inline]
    pub(crate) fn peek<'a>(&self, bytes: &'a [u8]) -> Option<(Header, &'a [u8])> {
        if !self.frames(bytes) {
            return None;
        }
        let u64_at = |at: usize| {
            bytes
                .get(at..at + 8)
                .and_then(|b| b.try_into().ok())
                .map(u64::from_le_bytes)
        };
        let header = Header {
            param: bytes[5],
            seed: u64_at(8)?,
            dims: u64_at(16)?,
            keys: u64_at(24)?,
        };
        Some((header, &bytes[HEADER_LEN..bytes.len() - TRAILER_LEN]))
    }

    /// Long enough for header and trailer, magic and version right.
    #[inline]
    fn frames(&self, bytes: &[u8]) -> bool {
        bytes.len() >= HEADER_LEN + TRAILER_LEN
            && bytes[0..4] == self.magic
            && bytes[4] == self.version
    }

    /// The full check at table open: length, magic, checksum, version, reserved bytes, then
    /// the kind's own fields (`fields_fit`: they are valid and agree with the length); the
    /// error names the offset and what is wrong.
    pub(crate) fn check(
        &self,
        filter: &[u8],
        fields_fit: impl FnOnce(&[u8]) -> bool,
    ) -> Result<()> {
        let what = self.what;
        if filter.len() < HEADER_LEN + TRAILER_LEN {
            return Err(Error::corrupt_bytes(
                filter.len() as u64,
                format!("{what} filter truncated"),
            ));
        }
        if filter[0..4] != self.magic {
            return Err(Error::corrupt_bytes(
                0,
                format!("not a {what} filter (bad magic)"),
            ));
        }
        let body = filter.len() - TRAILER_LEN;
        let stored = u32::from_le_bytes([
            filter[body],
            filter[body + 1],
            filter[body + 2],
            filter[body + 3],
        ]);
        if crc32fast::hash(&filter[..body]) != stored {
            return Err(Error::corrupt_bytes(
                body as u64,
                format!("{what} filter checksum mismatch"),
            ));
        }
        if filter[4] != self.version {
            return Err(Error::corrupt_bytes(
                4,
                format!("{what} filter version {}", filter[4]),
            ));
        }
        if filter[self.reserved..8].iter().any(|&b| b != 0) {
            return Err(Error::corrupt_bytes(
                self.reserved as u64,
                "non-zero reserved bytes",
            ));
        }
        if !fields_fit(filter) {
            return Err(Error::corrupt_bytes(self.fields_at, self.fields_wrong));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: Framing = Framing {
        magic: *b"TEST",
        version: 3,
        reserved: 6,
        what: "test",
        fields_at: 5,
        fields_wrong: "test fields disagree",
    };

    fn framed(header: &[u8; HEADER_LEN], payload: &[u8]) -> Vec<u8> {
        let mut v = header.to_vec();
        v.extend_from_slice(payload);
        let crc = crc32fast::hash(&v);
        v.extend_from_slice(&crc.to_le_bytes());
        v
    }

    fn message(e: Error) -> String {
        e.to_string()
    }

    #[test]
    fn every_framing_fault_is_named_with_its_offset() {
        let mut h = [0u8; HEADER_LEN];
        h[..4].copy_from_slice(b"TEST");
        h[4] = 3;
        h[5] = 9; // a kind's parameter byte, not reserved
        let good = framed(&h, &[1, 2, 3]);
        assert!(F.frames(&good));
        F.check(&good, |_| true).unwrap();

        let short = &good[..HEADER_LEN + TRAILER_LEN - 1];
        assert!(!F.frames(short));
        assert!(message(F.check(short, |_| true).unwrap_err()).contains("test filter truncated"));

        let mut bad = good.clone();
        bad[0] = b'X';
        assert!(!F.frames(&bad));
        assert!(message(F.check(&bad, |_| true).unwrap_err()).contains("bad magic"));

        let mut bad = good.clone();
        bad[HEADER_LEN + 1] ^= 1;
        assert!(F.frames(&bad), "lookups do not checksum");
        assert!(message(F.check(&bad, |_| true).unwrap_err()).contains("checksum mismatch"));

        let mut v4 = h;
        v4[4] = 4;
        let bad = framed(&v4, &[1, 2, 3]);
        assert!(!F.frames(&bad));
        assert!(message(F.check(&bad, |_| true).unwrap_err()).contains("test filter version 4"));

        let e = F.check(&good, |f| f[5] == 10).unwrap_err();
        assert!(message(e).contains("test fields disagree"));

        let mut r = h;
        r[7] = 1;
        let bad = framed(&r, &[1, 2, 3]);
        assert!(F.frames(&bad));
        assert!(message(F.check(&bad, |_| true).unwrap_err()).contains("reserved"));
    }

    #[test]
    fn encode_writes_the_documented_bytes_and_peek_reads_them_back() {
        let h = Header {
            param: 7,
            seed: 0x0102_0304_0506_0708,
            dims: 0x1122_3344_5566_7788,
            keys: 5,
        };
        let bytes = F.encode(&h, 3, |out| out.extend_from_slice(&[1, 2, 3]));
        let mut want = [0u8; HEADER_LEN];
        want[..4].copy_from_slice(b"TEST");
        want[4] = 3;
        want[5] = 7;
        want[8..16].copy_from_slice(&h.seed.to_le_bytes());
        want[16..24].copy_from_slice(&h.dims.to_le_bytes());
        want[24..32].copy_from_slice(&h.keys.to_le_bytes());
        assert_eq!(bytes, framed(&want, &[1, 2, 3]));
        F.check(&bytes, |_| true).unwrap();
        assert_eq!(F.peek(&bytes), Some((h, &[1u8, 2, 3][..])));
        assert_eq!(F.peek(&bytes[..HEADER_LEN + TRAILER_LEN - 1]), None);
        let mut other = bytes.clone();
        other[4] = 4;
        assert_eq!(F.peek(&other), None);
    }
}
