//! The physical record framing shared by the log writer and reader.

/// Logs are cut into blocks of this many bytes; a physical record never crosses a block
/// boundary, so after damage a reader can always resume at the next boundary.
pub const BLOCK_SIZE: usize = 32 * 1024;

/// Bytes in a physical record header: CRC-32 (u32 LE), payload length (u16 LE), type (u8).
pub const HEADER_SIZE: usize = 7;

/// What part of a logical record a physical record carries. DO NOT CHANGE THESE VALUES:
/// they are on disk. Type 0 is deliberately unused so zero-filled space never parses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum RecordType {
    /// The whole logical record.
    Full = 1,
    /// Its first fragment; more follow.
    First = 2,
    /// An inner fragment.
    Middle = 3,
    /// Its last fragment.
    Last = 4,
}

impl RecordType {
    fn from_byte(b: u8) -> Option<RecordType> {
        match b {
            1 => Some(RecordType::Full),
            2 => Some(RecordType::First),
            3 => Some(RecordType::Middle),
            4 => Some(RecordType::Last),
            _ => None,
        }
    }
}

/// The checksum stored in a header: CRC-32 over the type byte then the payload, so a record
/// whose type was flipped (say FIRST to FULL) fails it as surely as one whose payload was.
pub(crate) fn record_crc(kind: RecordType, payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&[kind as u8]);
    h.update(payload);
    h.finalize()
}

/// Appends one physical record (header + payload) to `out`.
pub(crate) fn encode_physical(out: &mut Vec<u8>, kind: RecordType, payload: &[u8]) {
    debug_assert!(payload.len() <= BLOCK_SIZE - HEADER_SIZE);
    let len = payload.len() as u16;
    out.extend_from_slice(&record_crc(kind, payload).to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    out.push(kind as u8);
    out.extend_from_slice(payload);
}

/// What lies at a position of a log image.
#[derive(Debug)]
pub(crate) enum Physical<'a> {
    /// A physical record whose checksum holds; the next one starts at `end`.
    Record {
        kind: RecordType,
        payload: &'a [u8],
        end: usize,
    },
    /// Fewer than [`HEADER_SIZE`] bytes are left in the block: the writer zero-filled them,
    /// and the next record starts at `next` (the next block, or the end of the image).
    BlockTrailer { next: usize },
    /// The image ends here, exactly between records.
    End,
    /// Not a good record. `cut_by_end` is true when it is a header or payload that the end of
    /// the image cut short (what a crash mid-write leaves) rather than bytes that are wrong.
    Bad { problem: Problem, cut_by_end: bool },
}

/// What is wrong with a bad record. Kept as plain data (no `String`) because readers probe
/// many offsets while resynchronising; the words are made only for what gets reported.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Problem {
    HeaderCut { avail: usize },
    ZeroFilled,
    UnknownType(u8),
    PastBlockEnd { len: usize, room: usize },
    PayloadCut { got: usize, len: usize },
    Checksum { kind: RecordType, len: usize },
}

impl Problem {
    /// A sentence for error messages.
    pub(crate) fn describe(self) -> String {
        match self {
            Problem::HeaderCut { avail } => format!(
                "record header cut short by the end of the log ({avail} of {HEADER_SIZE} bytes)"
            ),
            Problem::ZeroFilled => "zero-filled bytes where a record header should be".to_string(),
            Problem::UnknownType(t) => format!("unknown record type {t}"),
            Problem::PastBlockEnd { len, room } => {
                format!("record length {len} runs past the end of its block ({room} bytes left)")
            }
            Problem::PayloadCut { got, len } => {
                format!("record payload cut short by the end of the log ({got} of {len} bytes)")
            }
            Problem::Checksum { kind, len } => {
                format!("checksum mismatch in a {kind:?} record of {len} bytes")
            }
        }
    }
}

/// Parses whatever is at `pos` in `data`. Never panics, whatever the bytes.
pub(crate) fn parse_at(data: &[u8], pos: usize) -> Physical<'_> {
    if pos >= data.len() {
        return Physical::End;
    }
    let block_left = BLOCK_SIZE - pos % BLOCK_SIZE;
    if block_left < HEADER_SIZE {
        return Physical::BlockTrailer {
            next: (pos + block_left).min(data.len()),
        };
    }
    let avail = data.len() - pos;
    if avail < HEADER_SIZE {
        return Physical::Bad {
            problem: Problem::HeaderCut { avail },
            cut_by_end: true,
        };
    }
    let h = &data[pos..pos + HEADER_SIZE];
    let stored_crc = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
    let len = usize::from(u16::from_le_bytes([h[4], h[5]]));
    let Some(kind) = RecordType::from_byte(h[6]) else {
        let problem = if h.iter().all(|&b| b == 0) {
            Problem::ZeroFilled
        } else {
            Problem::UnknownType(h[6])
        };
        return Physical::Bad {
            problem,
            cut_by_end: false,
        };
    };
    if HEADER_SIZE + len > block_left {
        return Physical::Bad {
            problem: Problem::PastBlockEnd {
                len,
                room: block_left - HEADER_SIZE,
            },
            cut_by_end: false,
        };
    }
    let end = pos + HEADER_SIZE + len;
    if end > data.len() {
        return Physical::Bad {
            problem: Problem::PayloadCut {
                got: avail - HEADER_SIZE,
                len,
            },
            cut_by_end: true,
        };
    }
    let payload = &data[pos + HEADER_SIZE..end];
    if record_crc(kind, payload) != stored_crc {
        return Physical::Bad {
            problem: Problem::Checksum { kind, len },
            cut_by_end: false,
        };
    }
    Physical::Record { kind, payload, end }
}

/// Where to resume reading after a bad record at `at`.
///
/// A physical record never crosses a block boundary, so the next block always starts with a
/// header; but giving up the rest of the block would lose good records there and, worse, let
/// damage in the last block pass for a torn tail. So, in order:
/// 1. If the record was cut short by the end of the image, nothing follows it.
/// 2. If its header looks sound (known type, a length inside its block and the image) and
///    every record from where it claims to end up to the block end checks out, only its
///    checksum or payload was damaged: resume right after it.
/// 3. Otherwise the length is not to be trusted: resume at the first later offset in the
///    block where a checksum-valid record starts and valid records continue to the block end.
/// 4. Otherwise resume at the next block boundary.
///
/// Rules 2 and 3 could only be fooled by bytes that happen to form checksum-valid records
/// all the way to the block end (a chance of about 2^-32 for random damage).
pub(crate) fn resync_point(data: &[u8], at: usize, cut_by_end: bool) -> usize {
    if cut_by_end {
        return data.len();
    }
    let block_end = (at / BLOCK_SIZE + 1) * BLOCK_SIZE;
    if let Some(q) = claimed_end(data, at, block_end)
        && rest_of_block_is_sound(data, q, block_end)
    {
        return q;
    }
    let scan_end = block_end.min(data.len()).saturating_sub(HEADER_SIZE);
    for p in at + 1..=scan_end {
        if may_start_record(data, p)
            && let Physical::Record { end, .. } = parse_at(data, p)
            && rest_of_block_is_sound(data, end, block_end)
        {
            return p;
        }
    }
    block_end.min(data.len())
}

/// For a record at `at` that the end of the image cuts short: do checksum-valid records,
/// valid through to the end, start inside what it claims as payload? A crash mid-write
/// leaves only a prefix of the record, so they would mean its length field is damaged and
/// good records were hidden behind it. Used to decide, never to resume reading, because the
/// bytes of a genuinely torn payload may themselves look like records (a value that is a log).
pub(crate) fn records_hide_in_cut_record(data: &[u8], at: usize) -> bool {
    let block_end = (at / BLOCK_SIZE + 1) * BLOCK_SIZE;
    let scan_end = data.len().saturating_sub(HEADER_SIZE);
    (at + 1..=scan_end).any(|p| {
        may_start_record(data, p)
            && matches!(parse_at(data, p), Physical::Record { end, .. }
            if rest_of_block_is_sound(data, end, block_end))
    })
}

/// A cheap first test for the byte-by-byte scans: only a known type byte can start a record.
fn may_start_record(data: &[u8], p: usize) -> bool {
    matches!(data.get(p + HEADER_SIZE - 1), Some(1..=4))
}

/// The end a header at `at` claims for its record, if that header is plausible.
fn claimed_end(data: &[u8], at: usize, block_end: usize) -> Option<usize> {
    let h = data.get(at..at + HEADER_SIZE)?;
    RecordType::from_byte(h[6])?;
    let end = at + HEADER_SIZE + usize::from(u16::from_le_bytes([h[4], h[5]]));
    (end <= block_end && end <= data.len()).then_some(end)
}

fn rest_of_block_is_sound(data: &[u8], mut pos: usize, block_end: usize) -> bool {
    loop {
        if pos >= data.len() || block_end - pos < HEADER_SIZE {
            return true;
        }
        match parse_at(data, pos) {
            Physical::Record { end, .. } => pos = end,
            Physical::Bad { cut_by_end, .. } => return cut_by_end,
            Physical::BlockTrailer { .. } | Physical::End => return true,
        }
    }
}

/// The offset of the first checksum-valid physical record at or after `from`, skipping bad
/// stretches the way a reader would; `None` if there is none before the end.
pub(crate) fn next_good_record(data: &[u8], from: usize) -> Option<usize> {
    let mut pos = from;
    loop {
        match parse_at(data, pos) {
            Physical::Record { .. } => return Some(pos),
            Physical::BlockTrailer { next } => pos = next,
            Physical::End => return None,
            Physical::Bad { cut_by_end, .. } => pos = resync_point(data, pos, cut_by_end),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_bytes_are_as_documented() {
        let mut out = Vec::new();
        encode_physical(&mut out, RecordType::Full, b"abc");
        let crc = crc32fast::hash(&[1, b'a', b'b', b'c']);
        let mut want = crc.to_le_bytes().to_vec();
        want.extend_from_slice(&[3, 0, 1, b'a', b'b', b'c']);
        assert_eq!(out, want);
        assert!(matches!(
            parse_at(&out, 0),
            Physical::Record {
                kind: RecordType::Full,
                payload: b"abc",
                end: 10
            }
        ));
    }

    #[test]
    fn zeros_and_short_headers_are_bad() {
        assert!(matches!(
            parse_at(&[0u8; 20], 0),
            Physical::Bad {
                cut_by_end: false,
                ..
            }
        ));
        assert!(matches!(
            parse_at(&[1u8; 3], 0),
            Physical::Bad {
                cut_by_end: true,
                ..
            }
        ));
        assert!(matches!(parse_at(&[], 0), Physical::End));
        assert_eq!(next_good_record(&[0u8; 3 * BLOCK_SIZE], 0), None);
    }
}
