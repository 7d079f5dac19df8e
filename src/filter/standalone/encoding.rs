//! The serialized form of Bloom and counting filters (byte tables in `docs/FORMAT.md`, section
//! "Standalone filter files"; the scalable filter's container is in `scalable.rs`).
//!
//! ```text
//! 0   4  magic "BKVF"
//! 4   1  format version: 1 (tables, 24-byte header) or 2 (standalone, 40-byte header)
//! 5   1  kind: 0 = Bloom (1 bit per position), 1 = counting (4 bits per position),
//!        2 = scalable (see scalable.rs)
//! 6   1  layout: 0 = standard, 1 = blocked
//! 7   1  k, probes per key (1..=64)
//! 8   8  positions m (u64 LE): bits of a Bloom filter, counters of a counting filter
//! 16  8  items inserted (u64 LE)
//!        version 2 only:
//! 24  8  capacity (u64 LE, >= 1)
//! 32  8  error rate (f64 LE, strictly between 0 and 1)
//! H   P  payload: Bloom: ceil(m/64) u64 LE words; counting: ceil(m/2) bytes, two counters
//!        per byte, low nibble first (H = 24 or 40)
//! H+P 4  CRC-32 (IEEE) of bytes 0..H+P, u32 LE
//! ```
//!
//! Two readers: [`peek`] (what a lookup uses: header checks only, no checksum, `None` when
//! unsure) and [`validate`] (everything, with the offset of the first problem).

use crate::error::{Error, Result};

use crate::filter::layout::Layout;
use crate::filter::layout::MAX_HASHES;
use crate::filter::sizing::math::BLOCK_BITS;

/// First four bytes of every serialized filter.
pub(crate) const MAGIC: [u8; 4] = *b"BKVF";
/// The version SSTable filter blocks are written in (24-byte header, no sizing fields).
/// DO NOT CHANGE: tables on disk carry it.
pub(crate) const VERSION_1: u8 = 1;
/// The version standalone filters are written in (40-byte header with capacity and error rate).
pub(crate) const VERSION: u8 = 2;
/// Bytes before the payload in version 1.
pub(crate) const HEADER_LEN_V1: usize = 24;
/// Bytes before the payload in version 2.
pub(crate) const HEADER_LEN: usize = 40;
/// Bytes after the payload (the checksum).
pub(crate) const TRAILER_LEN: usize = 4;

/// What the positions of a filter hold. DO NOT RENUMBER the tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// One bit per position.
    Bloom,
    /// One 4-bit counter per position.
    Counting,
    /// A scalable filter: a container of Bloom filters (version 2 only).
    Scalable,
}

impl Kind {
    pub(crate) fn tag(self) -> u8 {
        match self {
            Kind::Bloom => 0,
            Kind::Counting => 1,
            Kind::Scalable => 2,
        }
    }

    pub(crate) fn from_tag(tag: u8) -> Option<Kind> {
        match tag {
            0 => Some(Kind::Bloom),
            1 => Some(Kind::Counting),
            2 => Some(Kind::Scalable),
            _ => None,
        }
    }

    /// The kind's short name: `"bloom"`, `"counting"` or `"scalable"`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Bloom => "bloom",
            Kind::Counting => "counting",
            Kind::Scalable => "scalable",
        }
    }

    /// The error for intact bytes of this kind handed to the decoder of `expected`.
    pub(crate) fn wrong(self, expected: Kind) -> crate::error::Error {
        crate::error::Error::WrongFilterKind {
            file: std::path::PathBuf::new(),
            found: self.name(),
            expected: expected.name(),
        }
    }

    /// What the kind is called in error messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Kind::Bloom => "a Bloom filter",
            Kind::Counting => "a counting Bloom filter",
            Kind::Scalable => "a scalable Bloom filter",
        }
    }

    /// Payload bytes for `positions` positions; `None` on overflow (or for the scalable
    /// container, which has no flat payload).
    pub(crate) fn payload_len(self, positions: u64) -> Option<u64> {
        match self {
            Kind::Bloom => positions.div_ceil(64).checked_mul(8),
            Kind::Counting => Some(positions.div_ceil(2)),
            Kind::Scalable => None,
        }
    }

    /// Bits per position.
    fn cell_bits(self) -> u64 {
        match self {
            Kind::Bloom | Kind::Scalable => 1,
            Kind::Counting => 4,
        }
    }
}

/// The sizing a version-2 header records: what the filter was built for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Sizing {
    pub(crate) capacity: u64,
    pub(crate) error_rate: f64,
}

/// A decoded header plus the payload it describes, borrowed from the serialized bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct View<'a> {
    pub(crate) kind: Kind,
    pub(crate) layout: Layout,
    pub(crate) k: u32,
    pub(crate) positions: u64,
    pub(crate) items: u64,
    /// `None` for version 1.
    pub(crate) sizing: Option<Sizing>,
    pub(crate) payload: &'a [u8],
}

fn header_len(version: u8) -> usize {
    if version == VERSION_1 {
        HEADER_LEN_V1
    } else {
        HEADER_LEN
    }
}

/// Serializes a filter; `payload` must be exactly `kind.payload_len(positions)` bytes.
/// Version 1 without `sizing` (SSTable filter blocks), version 2 with it.
pub(crate) fn encode(
    kind: Kind,
    layout: Layout,
    k: u32,
    positions: u64,
    items: u64,
    sizing: Option<Sizing>,
    payload: impl FnOnce(&mut Vec<u8>),
) -> Vec<u8> {
    let payload_len = kind.payload_len(positions).unwrap_or(0) as usize;
    let header = if sizing.is_some() {
        HEADER_LEN
    } else {
        HEADER_LEN_V1
    };
    let mut out = Vec::with_capacity(header + payload_len + TRAILER_LEN);
    out.extend_from_slice(&MAGIC);
    out.push(if sizing.is_some() { VERSION } else { VERSION_1 });
    out.push(kind.tag());
    out.push(layout.tag());
    // Constructors cap k at MAX_HASHES (64), so it fits a byte.
    out.push(k.min(MAX_HASHES) as u8);
    out.extend_from_slice(&positions.to_le_bytes());
    out.extend_from_slice(&items.to_le_bytes());
    if let Some(s) = sizing {
        out.extend_from_slice(&s.capacity.to_le_bytes());
        out.extend_from_slice(&s.error_rate.to_le_bytes());
    }
    payload(&mut out);
    debug_assert_eq!(out.len(), header + payload_len);
    seal(&mut out);
    out
}

/// Appends the CRC-32 of everything in `out`.
pub(crate) fn seal(out: &mut Vec<u8>) {
    let crc = crc32fast::hash(out);
    out.extend_from_slice(&crc.to_le_bytes());
}

pub(crate) fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    let field: [u8; 8] = bytes.get(at..at + 8)?.try_into().ok()?;
    Some(u64::from_le_bytes(field))
}

pub(crate) fn f64_at(bytes: &[u8], at: usize) -> Option<f64> {
    u64_at(bytes, at).map(f64::from_bits)
}

/// Header checks only, no checksum: the per-lookup path. `None` when anything is off, in
/// which case callers answer "may contain".
#[inline]
pub(crate) fn peek(bytes: &[u8]) -> Option<View<'_>> {
    if bytes.len() < HEADER_LEN_V1 + TRAILER_LEN || bytes[0..4] != MAGIC {
        return None;
    }
    let version = bytes[4];
    if version != VERSION_1 && version != VERSION {
        return None;
    }
    let header = header_len(version);
    if bytes.len() < header + TRAILER_LEN {
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
    if bytes.len() - header - TRAILER_LEN != payload_len {
        return None;
    }
    let sizing = (version == VERSION).then(|| Sizing {
        capacity: u64_at(bytes, 24).unwrap_or(1),
        error_rate: f64_at(bytes, 32).unwrap_or(0.5),
    });
    Some(View {
        kind,
        layout,
        k,
        positions,
        items,
        sizing,
        payload: &bytes[header..header + payload_len],
    })
}

fn positions_fit_layout(layout: Layout, positions: u64) -> bool {
    match layout {
        Layout::Standard => positions > 0,
        Layout::Blocked => positions > 0 && positions.is_multiple_of(BLOCK_BITS),
    }
}

/// The checks every serialized filter passes first: a minimum length, the magic, the
/// checksum (a length mismatch the header explains is named as such), then the version.
/// Returns the version and the bytes before the checksum.
pub(crate) fn check_envelope(bytes: &[u8]) -> Result<(u8, &[u8])> {
    let min = HEADER_LEN_V1 + TRAILER_LEN;
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
        VERSION_1 | VERSION => {}
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
    if bytes.len() < header_len(bytes[4]) + TRAILER_LEN {
        return Err(Error::corrupt_bytes(
            bytes.len() as u64,
            format!(
                "filter truncated: {} bytes, a version {} filter has at least {}",
                bytes.len(),
                bytes[4],
                header_len(bytes[4]) + TRAILER_LEN
            ),
        ));
    }
    Ok((bytes[4], &bytes[..body_len]))
}

/// Checks the two sizing fields of a version-2 header at `at` (capacity) and `at + 8`
/// (error rate).
pub(crate) fn check_sizing(body: &[u8], at: usize) -> Result<Sizing> {
    let capacity = u64_at(body, at).unwrap_or(0);
    if capacity == 0 || usize::try_from(capacity).is_err() {
        return Err(Error::corrupt_bytes(
            at as u64,
            format!("capacity {capacity} is not a usable item count"),
        ));
    }
    let error_rate = f64_at(body, at + 8).unwrap_or(f64::NAN);
    if !(error_rate > 0.0 && error_rate < 1.0) {
        return Err(Error::corrupt_bytes(
            (at + 8) as u64,
            format!("error rate {error_rate} is not strictly between 0 and 1"),
        ));
    }
    Ok(Sizing {
        capacity,
        error_rate,
    })
}

/// Full validation of a Bloom or counting filter: length, checksum, magic, version, every
/// header field, and zero padding after the last position. Errors are [`Error::Corruption`]
/// with the offset of the problem within `bytes` (or [`Error::UnsupportedVersion`] for an
/// intact filter of a newer format).
pub(crate) fn validate(bytes: &[u8]) -> Result<View<'_>> {
    validate_expecting(bytes, None)
}

/// As [`validate`], for the decoder of `expected` (when given): intact bytes of another
/// kind are [`Error::WrongFilterKind`], not damage.
pub(crate) fn validate_expecting(bytes: &[u8], expected: Option<Kind>) -> Result<View<'_>> {
    let (version, body) = check_envelope(bytes)?;
    let header = header_len(version);
    let kind = Kind::from_tag(bytes[5])
        .ok_or_else(|| Error::corrupt_bytes(5, format!("unknown filter kind {}", bytes[5])))?;
    if let Some(expected) = expected
        && kind != expected
    {
        return Err(kind.wrong(expected));
    }
    if kind == Kind::Scalable {
        return Err(Error::corrupt_bytes(
            5,
            "a scalable Bloom filter, not a single filter",
        ));
    }
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
    if payload_len != Some((body.len() - header) as u64) {
        return Err(Error::corrupt_bytes(
            8,
            format!(
                "{positions} positions need a different payload than the {} bytes present",
                body.len() - header
            ),
        ));
    }
    if usize::try_from(items).is_err() {
        return Err(Error::corrupt_bytes(
            16,
            "item count does not fit this machine",
        ));
    }
    let sizing = if version == VERSION {
        Some(check_sizing(body, 24)?)
    } else {
        None
    };
    let payload = &body[header..];
    check_padding(kind, positions, header, payload)?;
    Ok(View {
        kind,
        layout,
        k,
        positions,
        items,
        sizing,
        payload,
    })
}

/// The total length the header declares, if the header is readable (used only to word
/// error messages).
fn declared_len(bytes: &[u8]) -> Option<u64> {
    let version = *bytes.get(4)?;
    if version != VERSION_1 && version != VERSION {
        return None;
    }
    let kind = Kind::from_tag(*bytes.get(5)?)?;
    let payload = kind.payload_len(u64_at(bytes, 8)?)?;
    payload.checked_add((header_len(version) + TRAILER_LEN) as u64)
}

/// The payload bits after the last position must be zero, so that every filter has exactly
/// one encoding.
fn check_padding(kind: Kind, positions: u64, header: usize, payload: &[u8]) -> Result<()> {
    let used_bits = positions * kind.cell_bits();
    let first_free_byte = (used_bits / 8) as usize;
    let bit_in_byte = (used_bits % 8) as u32;
    let mut start = first_free_byte;
    if bit_in_byte != 0 {
        if let Some(&b) = payload.get(first_free_byte)
            && b >> bit_in_byte != 0
        {
            return Err(Error::corrupt_bytes(
                (header + first_free_byte) as u64,
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
            (header + start + i) as u64,
            "non-zero padding after the last filter position",
        ));
    }
    Ok(())
}
