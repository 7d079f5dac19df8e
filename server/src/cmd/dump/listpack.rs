//! Redis's compact encodings inside DUMP payloads: listpacks (read and written) and
//! intsets (read).
//!
//! [`write()`] stores every entry as a string; [`Builder`] stores integer text as an integer,
//! as Redis's own listpacks do (streams' nodes are built with it, to match Redis's bytes).

use super::rdb::Bad;

/// The entries of a listpack, integers as their decimal text.
pub fn read(lp: &[u8]) -> Result<Vec<Vec<u8>>, Bad> {
    if lp.len() < 7 || u32::from_le_bytes([lp[0], lp[1], lp[2], lp[3]]) as usize != lp.len() {
        return Err(Bad);
    }
    let mut out = Vec::new();
    let mut p = 6;
    loop {
        let b = *lp.get(p).ok_or(Bad)?;
        if b == 0xff {
            break;
        }
        let get = |from: usize, n: usize| lp.get(from..from + n).ok_or(Bad);
        let int_le = |bytes: &[u8]| -> i64 {
            let mut v: u64 = 0;
            for (i, &x) in bytes.iter().enumerate() {
                v |= u64::from(x) << (8 * i);
            }
            let bits = 8 * bytes.len() as u32;
            ((v << (64 - bits)) as i64) >> (64 - bits)
        };
        let (entry, used): (Vec<u8>, usize) = if b & 0x80 == 0 {
            ((b & 0x7f).to_string().into_bytes(), 1)
        } else if b & 0xc0 == 0x80 {
            let n = usize::from(b & 0x3f);
            (get(p + 1, n)?.to_vec(), 1 + n)
        } else if b & 0xe0 == 0xc0 {
            let raw = (u16::from(b & 0x1f) << 8) | u16::from(*lp.get(p + 1).ok_or(Bad)?);
            let v = (i64::from(raw) << 51) >> 51;
            (v.to_string().into_bytes(), 2)
        } else if b & 0xf0 == 0xe0 {
            let n = (usize::from(b & 0x0f) << 8) | usize::from(*lp.get(p + 1).ok_or(Bad)?);
            (get(p + 2, n)?.to_vec(), 2 + n)
        } else {
            match b {
                0xf0 => {
                    let n =
                        u32::from_le_bytes(get(p + 1, 4)?.try_into().map_err(|_| Bad)?) as usize;
                    (get(p + 5, n)?.to_vec(), 5 + n)
                }
                0xf1 => (int_le(get(p + 1, 2)?).to_string().into_bytes(), 3),
                0xf2 => (int_le(get(p + 1, 3)?).to_string().into_bytes(), 4),
                0xf3 => (int_le(get(p + 1, 4)?).to_string().into_bytes(), 5),
                0xf4 => (int_le(get(p + 1, 8)?).to_string().into_bytes(), 9),
                _ => return Err(Bad),
            }
        };
        out.push(entry);
        p += used + backlen_size(used);
    }
    let count = u16::from_le_bytes([lp[4], lp[5]]);
    if p + 1 != lp.len() || (count != u16::MAX && usize::from(count) != out.len()) {
        return Err(Bad);
    }
    Ok(out)
}

/// Bytes of the back-length field that follows an entry of `n` bytes.
fn backlen_size(n: usize) -> usize {
    match n {
        0..=127 => 1,
        128..=16_382 => 2,
        16_383..=2_097_150 => 3,
        2_097_151..=268_435_454 => 4,
        _ => 5,
    }
}

/// Appends the back-length of an entry of `n` bytes. It is read right to left, 7 bits a
/// byte from the lowest: every byte but the leftmost has its top bit set, meaning "more to
/// the left" (Redis's `lpEncodeBacklen`).
fn put_backlen(out: &mut Vec<u8>, n: usize) {
    let size = backlen_size(n);
    let mut bytes = Vec::with_capacity(size);
    let mut v = n;
    for i in 0..size {
        let mut b = (v & 0x7f) as u8;
        v >>= 7;
        if i + 1 < size {
            b |= 0x80;
        }
        bytes.push(b);
    }
    bytes.reverse();
    out.extend_from_slice(&bytes);
}

/// Appends a string entry (with its back-length).
fn put_str(lp: &mut Vec<u8>, e: &[u8]) {
    let start = lp.len();
    let n = e.len();
    if n < 64 {
        lp.push(0x80 | n as u8);
    } else if n < 4096 {
        lp.push(0xe0 | (n >> 8) as u8);
        lp.push(n as u8);
    } else {
        lp.push(0xf0);
        lp.extend_from_slice(&(n as u32).to_le_bytes());
    }
    lp.extend_from_slice(e);
    let used = lp.len() - start;
    put_backlen(lp, used);
}

/// Appends an integer entry in the smallest encoding that holds it (with its back-length).
fn put_int(lp: &mut Vec<u8>, v: i64) {
    let start = lp.len();
    if (0..=127).contains(&v) {
        lp.push(v as u8);
    } else if (-4096..=4095).contains(&v) {
        // 13 bits, two's complement.
        let u = (v as u16) & 0x1fff;
        lp.push(0xc0 | (u >> 8) as u8);
        lp.push(u as u8);
    } else if let Ok(x) = i16::try_from(v) {
        lp.push(0xf1);
        lp.extend_from_slice(&x.to_le_bytes());
    } else if (-(1 << 23)..(1 << 23)).contains(&v) {
        lp.push(0xf2);
        lp.extend_from_slice(&(v as i32).to_le_bytes()[..3]);
    } else if let Ok(x) = i32::try_from(v) {
        lp.push(0xf3);
        lp.extend_from_slice(&x.to_le_bytes());
    } else {
        lp.push(0xf4);
        lp.extend_from_slice(&v.to_le_bytes());
    }
    let used = lp.len() - start;
    put_backlen(lp, used);
}

/// `s` as the integer Redis would store it as: decimal text that reads back the same.
fn as_int(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    let v = crate::cmd::parse_i64(s)?;
    (v.to_string().as_bytes() == s).then_some(v)
}

/// Wraps encoded entries with the header (total bytes, entry count) and the end mark.
fn seal(entries: &[u8], count: usize) -> Vec<u8> {
    let mut lp = Vec::with_capacity(entries.len() + 7);
    lp.extend_from_slice(&((entries.len() + 7) as u32).to_le_bytes());
    // Past 65534 entries the count reads "unknown" and readers count them.
    lp.extend_from_slice(&u16::try_from(count).unwrap_or(u16::MAX).to_le_bytes());
    lp.extend_from_slice(entries);
    lp.push(0xff);
    lp
}

/// A listpack of `entries`, each stored as a string.
pub fn write(entries: &[&[u8]]) -> Vec<u8> {
    let mut body = Vec::new();
    for e in entries {
        put_str(&mut body, e);
    }
    seal(&body, entries.len())
}

/// A listpack built entry by entry, encoded as Redis encodes it (`lpAppend`,
/// `lpAppendInteger`).
#[derive(Clone, Debug, Default)]
pub struct Builder {
    body: Vec<u8>,
    count: usize,
}

impl Builder {
    /// An empty listpack.
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Appends an integer.
    pub fn int(&mut self, v: i64) {
        put_int(&mut self.body, v);
        self.count += 1;
    }

    /// Appends a string (as an integer when it is one's canonical text).
    pub fn elem(&mut self, s: &[u8]) {
        match as_int(s) {
            Some(v) => put_int(&mut self.body, v),
            None => put_str(&mut self.body, s),
        }
        self.count += 1;
    }

    /// Appends every entry of `other`.
    pub fn append(&mut self, other: &Builder) {
        self.body.extend_from_slice(&other.body);
        self.count += other.count;
    }

    /// Bytes of the entries so far (no header, no end mark).
    pub fn body_len(&self) -> usize {
        self.body.len()
    }

    /// The finished listpack.
    pub fn finish(&self) -> Vec<u8> {
        seal(&self.body, self.count)
    }
}

/// Bytes an integer entry takes (back-length included).
pub fn int_size(v: i64) -> usize {
    let mut b = Vec::with_capacity(10);
    put_int(&mut b, v);
    b.len()
}

/// Bytes of a listpack's header and end mark.
pub const OVERHEAD: usize = 7;

/// The members of an intset, as decimal text.
pub fn read_intset(b: &[u8]) -> Result<Vec<Vec<u8>>, Bad> {
    if b.len() < 8 {
        return Err(Bad);
    }
    let width = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
    let n = u32::from_le_bytes([b[4], b[5], b[6], b[7]]) as usize;
    if !matches!(width, 2 | 4 | 8) || b.len() != 8 + width * n {
        return Err(Bad);
    }
    Ok(b[8..]
        .chunks(width)
        .map(|c| {
            let v = match width {
                2 => i64::from(i16::from_le_bytes([c[0], c[1]])),
                4 => i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                _ => i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]),
            };
            v.to_string().into_bytes()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_listpacks_read_back() {
        let long = vec![b'x'; 5000];
        let mid = vec![b'y'; 300];
        let entries: Vec<&[u8]> = vec![b"a", b"", b"12", &mid, &long];
        let lp = write(&entries);
        let back = read(&lp).unwrap();
        assert_eq!(back.len(), 5);
        assert_eq!(back[3], mid);
        assert_eq!(back[4], long);
        let mut cut = lp.clone();
        cut.pop();
        assert!(read(&cut).is_err());
        // The 300-byte entry (302 bytes with its header) ends with Redis's back-length:
        // 302 >> 7 = 2, then (302 & 127) | 128 = 0xae.
        let mid_end = 6 + 3 + 2 + 4 + 302;
        assert_eq!(lp[mid_end..mid_end + 2], [0x02, 0xae]);
    }

    #[test]
    fn builder_encodes_integers_as_redis_does() {
        let mut b = Builder::new();
        for v in [
            0i64,
            127,
            -1,
            4095,
            -4096,
            4096,
            -32768,
            100_000,
            -(1 << 23),
            1 << 31,
            i64::MIN,
        ] {
            b.int(v);
        }
        for s in [
            &b"12"[..],
            b"012",
            b"-0",
            b"+1",
            b"x",
            b"-9223372036854775808",
        ] {
            b.elem(s);
        }
        let lp = b.finish();
        let back = read(&lp).unwrap();
        let want: Vec<Vec<u8>> = [
            "0",
            "127",
            "-1",
            "4095",
            "-4096",
            "4096",
            "-32768",
            "100000",
            "-8388608",
            "2147483648",
            "-9223372036854775808",
            "12",
            "012",
            "-0",
            "+1",
            "x",
            "-9223372036854775808",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        assert_eq!(back, want);
        // -1 in 13 bits, as Redis wrote a stream entry's sequence delta.
        let mut one = Builder::new();
        one.int(-1);
        assert_eq!(one.finish()[6..9], [0xdf, 0xff, 0x02]);
        assert_eq!(int_size(100), 2);
        assert_eq!(int_size(1 << 40), 10);
    }

    #[test]
    fn integer_entries_read_as_text() {
        // Redis's listpack of 7, -1 (13-bit) and 100000 (int24): bytes as it writes them.
        let mut lp = vec![0, 0, 0, 0, 3, 0];
        lp.extend_from_slice(&[0x07, 0x01]);
        lp.extend_from_slice(&[0xdf, 0xff, 0x02]);
        lp.extend_from_slice(&[0xf2, 0xa0, 0x86, 0x01, 0x04]);
        lp.push(0xff);
        let n = lp.len() as u32;
        lp[..4].copy_from_slice(&n.to_le_bytes());
        let back = read(&lp).unwrap();
        assert_eq!(
            back,
            vec![b"7".to_vec(), b"-1".to_vec(), b"100000".to_vec()]
        );
        let mut set = vec![2, 0, 0, 0, 2, 0, 0, 0];
        set.extend_from_slice(&(-3i16).to_le_bytes());
        set.extend_from_slice(&9i16.to_le_bytes());
        assert_eq!(
            read_intset(&set).unwrap(),
            vec![b"-3".to_vec(), b"9".to_vec()]
        );
    }
}
