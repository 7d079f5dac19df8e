//! The serialized form of filters (byte table in `docs/FILTERS.md`).
//!
//! ```text
//! 0   4  magic "BKVF"
//! 4   1  format version (1)
//! 5   1  kind: 0 = Bloom (1 bit per position), 1 = counting (4 bits per position)
//! 6   1  layout: 0 = standard, 1 = blocked
//! 7   1  k, probes per key (1..=64)
//! 8   8  positions m (u64 LE): bits of a Bloom filter, counters of a counting filter
//! 16  8  items inserted (u64 LE)
//! 24  P  payload: Bloom: ceil(m/64) u64 LE words; counting: ceil(m/2) bytes, two counters
//!        per byte, low nibble first
//! 24+P 4 CRC-32 (IEEE) of bytes 0..24+P, u32 LE
//! ```
//!
//! Two readers: [`peek`] (what a lookup uses: header checks only, no checksum, `None` when
//! unsure) and [`validate`] (everything, with the offset of the first problem).

use crate::error::{Error, Result};

use super::MAX_HASHES;
use super::layout::Layout;
use super::math::BLOCK_BITS;

/// First four bytes of every serialized filter.
pub(crate) const MAGIC: [u8; 4] = *b"BKVF";
/// The format version this build writes and reads.
pub(crate) const VERSION: u8 = 1;
/// Bytes before the payload.
pub(crate) const HEADER_LEN: usize = 24;
/// Bytes after the payload (the checksum).
pub(crate) const TRAILER_LEN: usize = 4;

/// What the positions of a filter hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// One bit per position.
    Bloom,
    /// One 4-bit counter per position.
    Counting,
}

impl Kind {
    fn tag(self) -> u8 {
        match self {
            Kind::Bloom => 0,
            Kind::Counting => 1,
        }
    }

    fn from_tag(tag: u8) -> Option<Kind> {
        match tag {
            0 => Some(Kind::Bloom),
            1 => Some(Kind::Counting),
            _ => None,
        }
    }

    /// Payload bytes for `positions` positions; `None` on overflow.
    pub(crate) fn payload_len(self, positions: u64) -> Option<u64> {
        match self {
            Kind::Bloom => positions.div_ceil(64).checked_mul(8),
            Kind::Counting => Some(positions.div_ceil(2)),
        }
    }

    /// Bits per position.
    fn cell_bits(self) -> u64 {
        match self {
            Kind::Bloom => 1,
            Kind::Counting => 4,
        }
    }
}

/// A decoded header plus the payload it describes, borrowed from the serialized bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct View<'a> {
    pub(crate) kind: Kind,
    pub(crate) layout: Layout,
    pub(crate) k: u32,
    pub(crate) positions: u64,
    pub(crate) items: u64,
    pub(crate) payload: &'a [u8],
}

/// Serializes a filter; `payload` must be exactly `kind.payload_len(positions)` bytes.
pub(crate) fn encode(
    kind: Kind,
    layout: Layout,
    k: u32,
    positions: u64,
    items: u64,
    payload: impl FnOnce(&mut Vec<u8>),
) -> Vec<u8> {
    let payload_len = kind.payload_len(positions).unwrap_or(0) as usize;
    let mut out = Vec::with_capacity(HEADER_LEN + payload_len + TRAILER_LEN);
    out.extend_from_slice(&MAGIC);
    out.push(VERSION);
    out.push(kind.tag());
    out.push(layout.tag());
    // Constructors cap k at MAX_HASHES (64), so it fits a byte.
    out.push(k.min(MAX_HASHES) as u8);
    out.extend_from_slice(&positions.to_le_bytes());
    out.extend_from_slice(&items.to_le_bytes());
    payload(&mut out);
    debug_assert_eq!(out.len(), HEADER_LEN + payload_len);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    let field: [u8; 8] = bytes.get(at..at + 8)?.try_into().ok()?;
    Some(u64::from_le_bytes(field))
}

/// Header checks only, no checksum: the per-lookup path. `None` when anything is off, in
/// which case callers answer "may contain".
#[inline]
pub(crate) fn peek(bytes: &[u8]) -> Option<View<'_>> {
    if bytes.len() < HEADER_LEN + TRAILER_LEN || bytes[0..4] != MAGIC || bytes[4] != VERSION {
        return None;
    }
    let kind = Kind::from_tag(bytes[5])?;
    let layout = Layout::from_tag(bytes[6])?;
    let k = u32::from(bytes[7]);
    let positions = u64_at(bytes, 8)?;
    let items = u64_at(bytes, 16)?;
    if k == 0 || k > MAX_HASHES || !positions_fit_layout(layout, positions) {
        return None;
    }
    let payload_len = usize::try_from(kind.payload_len(positions)?).ok()?;
    if bytes.len() - HEADER_LEN - TRAILER_LEN != payload_len {
        return None;
    }
    Some(View {
        kind,
        layout,
        k,
        positions,
        items,
        payload: &bytes[HEADER_LEN..HEADER_LEN + payload_len],
    })
}

fn positions_fit_layout(layout: Layout, positions: u64) -> bool {
    match layout {
        Layout::Standard => positions > 0,
        Layout::Blocked => positions > 0 && positions.is_multiple_of(BLOCK_BITS),
    }
}

/// Full validation: length, checksum, magic, version, every header field, and zero padding
/// after the last position. Errors are [`Error::Corruption`] with the offset of the problem
/// within `bytes` (or [`Error::UnsupportedVersion`] for an intact filter of a newer format).
pub(crate) fn validate(bytes: &[u8]) -> Result<View<'_>> {
    let min = HEADER_LEN + TRAILER_LEN;
    if bytes.len() < min {
        return Err(Error::corrupt_bytes(
            bytes.len() as u64,
            format!(
                "filter truncated: {} bytes, a filter has at least {min}",
                bytes.len()
            ),
        ));
    }
    if bytes[0..4] != MAGIC {
        return Err(Error::corrupt_bytes(0, "not a bloomkv filter (bad magic)"));
    }
    let body_len = bytes.len() - TRAILER_LEN;
    let stored_crc = u32::from_le_bytes([
        bytes[body_len],
        bytes[body_len + 1],
        bytes[body_len + 2],
        bytes[body_len + 3],
    ]);
    if crc32fast::hash(&bytes[..body_len]) != stored_crc {
        // Name the more useful cause when the header explains it: a length mismatch is
        // usually truncation or trailing garbage rather than flipped bits.
        if let Some(expected) = declared_len(bytes)
            && expected != bytes.len() as u64
        {
            return Err(Error::corrupt_bytes(
                expected.min(bytes.len() as u64),
                format!(
                    "filter length {} does not match the {expected} bytes its header declares",
                    bytes.len()
                ),
            ));
        }
        return Err(Error::corrupt_bytes(
            body_len as u64,
            "filter checksum mismatch",
        ));
    }
    // The checksum holds, so the header is what the writer wrote; what follows catches
    // writers with other ideas (newer versions, bugs), not bit rot.
    match bytes[4] {
        VERSION => {}
        v if v > VERSION => {
            return Err(Error::UnsupportedVersion {
                file: Default::default(),
                found: u32::from(v),
                supported: u32::from(VERSION),
            });
        }
        v => {
            return Err(Error::corrupt_bytes(4, format!("bad filter version {v}")));
        }
    }
    let kind = Kind::from_tag(bytes[5])
        .ok_or_else(|| Error::corrupt_bytes(5, format!("unknown filter kind {}", bytes[5])))?;
    let layout = Layout::from_tag(bytes[6])
        .ok_or_else(|| Error::corrupt_bytes(6, format!("unknown filter layout {}", bytes[6])))?;
    let k = u32::from(bytes[7]);
    if k == 0 || k > MAX_HASHES {
        return Err(Error::corrupt_bytes(
            7,
            format!("probe count {k} outside 1..={MAX_HASHES}"),
        ));
    }
    let positions = u64_at(bytes, 8).unwrap_or(0);
    let items = u64_at(bytes, 16).unwrap_or(0);
    if !positions_fit_layout(layout, positions) {
        return Err(Error::corrupt_bytes(
            8,
            format!("{positions} positions do not fit the {layout:?} layout"),
        ));
    }
    let payload_len = kind.payload_len(positions);
    if payload_len != Some((body_len - HEADER_LEN) as u64) {
        return Err(Error::corrupt_bytes(
            8,
            format!(
                "{positions} positions need a different payload than the {} bytes present",
                body_len - HEADER_LEN
            ),
        ));
    }
    if usize::try_from(items).is_err() {
        return Err(Error::corrupt_bytes(
            16,
            "item count does not fit this machine",
        ));
    }
    let payload = &bytes[HEADER_LEN..body_len];
    check_padding(kind, positions, payload)?;
    Ok(View {
        kind,
        layout,
        k,
        positions,
        items,
        payload,
    })
}

/// The total length the header declares, if the header is readable (used only to word
/// error messages).
fn declared_len(bytes: &[u8]) -> Option<u64> {
    let kind = Kind::from_tag(*bytes.get(5)?)?;
    let payload = kind.payload_len(u64_at(bytes, 8)?)?;
    payload.checked_add((HEADER_LEN + TRAILER_LEN) as u64)
}

/// The payload bits after the last position must be zero, so that every filter has exactly
/// one encoding.
fn check_padding(kind: Kind, positions: u64, payload: &[u8]) -> Result<()> {
    let used_bits = positions * kind.cell_bits();
    let first_free_byte = (used_bits / 8) as usize;
    let bit_in_byte = (used_bits % 8) as u32;
    let mut start = first_free_byte;
    if bit_in_byte != 0 {
        if let Some(&b) = payload.get(first_free_byte)
            && b >> bit_in_byte != 0
        {
            return Err(Error::corrupt_bytes(
                (HEADER_LEN + first_free_byte) as u64,
                "non-zero padding after the last filter position",
            ));
        }
        start += 1;
    }
    if let Some(i) = payload
        .get(start..)
        .and_then(|rest| rest.iter().position(|&b| b != 0))
    {
        return Err(Error::corrupt_bytes(
            (HEADER_LEN + start + i) as u64,
            "non-zero padding after the last filter position",
        ));
    }
    Ok(())
}
