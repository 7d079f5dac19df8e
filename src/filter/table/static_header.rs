//! What the static filters ([`super::BinaryFusePolicy`], [`super::RibbonPolicy`]) share in
//! their serialized form (`docs/FILTERS.md`, "Static filters"): a 4-byte magic, a version
//! byte, a fixed-size header whose last reserved bytes are zero, the kind's payload, and a
//! CRC-32 of everything before it as the last 4 bytes.

use crate::error::{Error, Result};

/// One static filter kind's framing.
pub(crate) struct Framing {
    /// First bytes of a serialized filter.
    pub magic: [u8; 4],
    /// The format version this code writes and reads.
    pub version: u8,
    /// Bytes before the payload.
    pub header_len: usize,
    /// Header bytes `reserved..8` must be zero (written as zero; the full check insists).
    pub reserved: usize,
    /// The kind as error messages name it ("binary fuse", "ribbon").
    pub what: &'static str,
}

/// Bytes of the CRC-32 trailer.
pub(crate) const TRAILER_LEN: usize = 4;

impl Framing {
    /// The lookup path's check: long enough for header and trailer, magic and version right.
    /// Nothing is checksummed here (a lookup reads a few bytes in place).
    #[inline]
    pub(crate) fn frames(&self, bytes: &[u8]) -> bool {
        bytes.len() >= self.header_len + TRAILER_LEN
            && bytes[0..4] == self.magic
            && bytes[4] == self.version
    }

    /// The full check at table open: length, magic, checksum, version, reserved bytes; the
    /// error names the offset and what is wrong. The kind checks its own parameters after.
    pub(crate) fn check(&self, filter: &[u8]) -> Result<()> {
        let what = self.what;
        if filter.len() < self.header_len + TRAILER_LEN {
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
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: Framing = Framing {
        magic: *b"TEST",
        version: 3,
        header_len: 16,
        reserved: 6,
        what: "test",
    };

    fn framed(header: &[u8; 16], payload: &[u8]) -> Vec<u8> {
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
        let mut h = [0u8; 16];
        h[..4].copy_from_slice(b"TEST");
        h[4] = 3;
        h[5] = 9; // a kind's parameter byte, not reserved
        let good = framed(&h, &[1, 2, 3]);
        assert!(F.frames(&good));
        F.check(&good).unwrap();

        let short = &good[..19];
        assert!(!F.frames(short));
        assert!(message(F.check(short).unwrap_err()).contains("test filter truncated"));

        let mut bad = good.clone();
        bad[0] = b'X';
        assert!(!F.frames(&bad));
        assert!(message(F.check(&bad).unwrap_err()).contains("bad magic"));

        let mut bad = good.clone();
        bad[17] ^= 1;
        assert!(F.frames(&bad), "lookups do not checksum");
        assert!(message(F.check(&bad).unwrap_err()).contains("checksum mismatch"));

        let mut v4 = h;
        v4[4] = 4;
        let bad = framed(&v4, &[1, 2, 3]);
        assert!(!F.frames(&bad));
        assert!(message(F.check(&bad).unwrap_err()).contains("test filter version 4"));

        let mut r = h;
        r[7] = 1;
        let bad = framed(&r, &[1, 2, 3]);
        assert!(F.frames(&bad));
        assert!(message(F.check(&bad).unwrap_err()).contains("reserved"));
    }
}
