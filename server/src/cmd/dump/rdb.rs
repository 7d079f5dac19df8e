//! The pieces of Redis's RDB value encoding that DUMP payloads use: lengths, strings (raw,
//! small integers, LZF-compressed), binary doubles, and the payload's footer (RDB version
//! and CRC-64).

/// RDB object types (Redis's `rdb.h`) this server reads or writes.
pub mod kind {
    /// A string.
    pub const STRING: u8 = 0;
    /// A list as a linked list of strings (old payloads).
    pub const LIST: u8 = 1;
    /// A set of strings.
    pub const SET: u8 = 2;
    /// A sorted set with scores as strings (old payloads).
    pub const ZSET: u8 = 3;
    /// A hash of field-value pairs.
    pub const HASH: u8 = 4;
    /// A sorted set with binary double scores.
    pub const ZSET_2: u8 = 5;
    /// A set of integers (an intset).
    pub const SET_INTSET: u8 = 11;
    /// A hash as one listpack of fields and values.
    pub const HASH_LISTPACK: u8 = 16;
    /// A sorted set as one listpack of members and scores.
    pub const ZSET_LISTPACK: u8 = 17;
    /// A list as a quicklist of listpack (or plain) nodes.
    pub const LIST_QUICKLIST_2: u8 = 18;
    /// A stream as listpack nodes (Redis 5-6: no first ID, tombstone or read counters).
    pub const STREAM_LISTPACKS: u8 = 15;
    /// A stream as listpack nodes with Redis 7.0's counters.
    pub const STREAM_LISTPACKS_2: u8 = 19;
    /// A set as one listpack (Redis 7.2).
    pub const SET_LISTPACK: u8 = 20;
    /// A stream as Redis 7.2 writes it (consumers' active time too).
    pub const STREAM_LISTPACKS_3: u8 = 21;
}

/// The RDB version this server writes in a DUMP payload (Redis 7.0's: readable by 7.0 and
/// later).
pub const WRITE_VERSION: u16 = 10;
/// The newest RDB version RESTORE reads (Redis 7.2's).
pub const READ_VERSION: u16 = 11;

/// The longest string a payload may hold (Redis's `proto-max-bulk-len`, 512 MiB): a longer
/// declared length is damage, not something to allocate.
pub const MAX_STRING: usize = 512 << 20;

/// The most bytes LZF can expand one input byte to (a 3-byte back reference copies 264).
const LZF_MAX_RATIO: usize = 88;

/// A payload that does not decode.
#[derive(Debug, PartialEq, Eq)]
pub struct Bad;

/// Redis's CRC-64 (Jones polynomial, reflected, no final xor).
pub fn crc64(data: &[u8]) -> u64 {
    const POLY: u64 = 0x95ac_9329_ac4b_c9b5; // 0xad93d23594c935a9 reflected
    let mut crc = 0u64;
    for &b in data {
        crc ^= u64::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ POLY
            } else {
                crc >> 1
            };
        }
    }
    crc
}

/// Appends RDB's length encoding of `n`.
pub fn put_len(out: &mut Vec<u8>, n: u64) {
    if n < 1 << 6 {
        out.push(n as u8);
    } else if n < 1 << 14 {
        out.push(0x40 | (n >> 8) as u8);
        out.push(n as u8);
    } else if n <= u64::from(u32::MAX) {
        out.push(0x80);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

/// Appends a string: as a small integer when Redis would store it as one, else raw.
pub fn put_string(out: &mut Vec<u8>, s: &[u8]) {
    if s.len() <= 11
        && let Some(v) = crate::cmd::parse_i64(s)
    {
        if let Ok(v) = i8::try_from(v) {
            out.push(0xc0);
            out.push(v as u8);
            return;
        }
        if let Ok(v) = i16::try_from(v) {
            out.push(0xc1);
            out.extend_from_slice(&v.to_le_bytes());
            return;
        }
        if let Ok(v) = i32::try_from(v) {
            out.push(0xc2);
            out.extend_from_slice(&v.to_le_bytes());
            return;
        }
    }
    put_len(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// Appends a string as Redis's `rdbSaveRawString` does with `rdbcompression yes`: LZF when
/// it is longer than 20 bytes and compresses by at least 4, else as [`put_string`].
pub fn put_string_lzf(out: &mut Vec<u8>, s: &[u8]) {
    if s.len() > 20
        && let Some(c) = lzf_compress(s, s.len() - 4)
    {
        out.push(0xc3);
        put_len(out, c.len() as u64);
        put_len(out, s.len() as u64);
        out.extend_from_slice(&c);
        return;
    }
    put_string(out, s);
}

/// Wraps an encoded object (type byte first) with the footer: RDB version, CRC-64.
pub fn seal(mut body: Vec<u8>) -> Vec<u8> {
    body.extend_from_slice(&WRITE_VERSION.to_le_bytes());
    let crc = crc64(&body);
    body.extend_from_slice(&crc.to_le_bytes());
    body
}

/// The object bytes of a payload whose version this server reads and whose checksum holds.
pub fn unseal(p: &[u8]) -> Option<&[u8]> {
    if p.len() < 10 {
        return None;
    }
    let (body, crc) = p.split_at(p.len() - 8);
    let version = u16::from_le_bytes([body[body.len() - 2], body[body.len() - 1]]);
    if version > READ_VERSION {
        return None;
    }
    let want = u64::from_le_bytes(crc.try_into().ok()?);
    (crc64(body) == want).then(|| &body[..body.len() - 2])
}

/// A reader over an object's bytes.
pub struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Reads `b` from the start.
    pub fn new(b: &'a [u8]) -> Reader<'a> {
        Reader { b, pos: 0 }
    }

    /// True when every byte was read.
    pub fn done(&self) -> bool {
        self.pos == self.b.len()
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], Bad> {
        let end = self.pos.checked_add(n).ok_or(Bad)?;
        let s = self.b.get(self.pos..end).ok_or(Bad)?;
        self.pos = end;
        Ok(s)
    }

    /// The next byte.
    pub fn byte(&mut self) -> Result<u8, Bad> {
        Ok(self.take(1)?[0])
    }

    /// A length, or `Err(Ok(enc))` for a special string encoding.
    fn len_or_enc(&mut self) -> Result<Result<u64, u8>, Bad> {
        let first = self.byte()?;
        Ok(match first >> 6 {
            0 => Ok(u64::from(first & 0x3f)),
            1 => Ok((u64::from(first & 0x3f) << 8) | u64::from(self.byte()?)),
            3 => Err(first & 0x3f),
            _ => match first {
                0x80 => Ok(u64::from(u32::from_be_bytes(
                    self.take(4)?.try_into().map_err(|_| Bad)?,
                ))),
                0x81 => Ok(u64::from_be_bytes(
                    self.take(8)?.try_into().map_err(|_| Bad)?,
                )),
                _ => return Err(Bad),
            },
        })
    }

    /// A length.
    pub fn length(&mut self) -> Result<u64, Bad> {
        self.len_or_enc()?.map_err(|_| Bad)
    }

    /// A count of items, checked against the bytes left (each item takes at least one).
    pub fn count(&mut self) -> Result<usize, Bad> {
        let n = self.length()?;
        if n > (self.b.len() - self.pos) as u64 {
            return Err(Bad);
        }
        Ok(n as usize)
    }

    /// A string in any of its encodings.
    pub fn string(&mut self) -> Result<Vec<u8>, Bad> {
        match self.len_or_enc()? {
            Ok(n) => Ok(self.take(usize::try_from(n).map_err(|_| Bad)?)?.to_vec()),
            Err(0) => Ok((self.byte()? as i8).to_string().into_bytes()),
            Err(1) => Ok(
                i16::from_le_bytes(self.take(2)?.try_into().map_err(|_| Bad)?)
                    .to_string()
                    .into_bytes(),
            ),
            Err(2) => Ok(
                i32::from_le_bytes(self.take(4)?.try_into().map_err(|_| Bad)?)
                    .to_string()
                    .into_bytes(),
            ),
            Err(3) => {
                let clen = usize::try_from(self.length()?).map_err(|_| Bad)?;
                let len = usize::try_from(self.length()?).map_err(|_| Bad)?;
                if len > MAX_STRING {
                    return Err(Bad);
                }
                lzf_decompress(self.take(clen)?, len)
            }
            Err(_) => Err(Bad),
        }
    }

    /// A binary double (little-endian).
    pub fn double(&mut self) -> Result<f64, Bad> {
        Ok(f64::from_le_bytes(
            self.take(8)?.try_into().map_err(|_| Bad)?,
        ))
    }

    /// A double as old payloads write it: a length byte and its text (253: NaN, 254: +inf,
    /// 255: -inf).
    pub fn text_double(&mut self) -> Result<f64, Bad> {
        match self.byte()? {
            253 => Err(Bad),
            254 => Ok(f64::INFINITY),
            255 => Ok(f64::NEG_INFINITY),
            n => {
                let s = std::str::from_utf8(self.take(usize::from(n))?).map_err(|_| Bad)?;
                s.parse().map_err(|_| Bad)
            }
        }
    }
}

/// LZF decompression (the format Redis compresses long strings with); `len` is the
/// expected output size.
pub fn lzf_decompress(input: &[u8], len: usize) -> Result<Vec<u8>, Bad> {
    // A declared length the input cannot reach is damage: refuse it before allocating.
    if len > input.len().saturating_mul(LZF_MAX_RATIO) {
        return Err(Bad);
    }
    let mut out: Vec<u8> = Vec::with_capacity(len);
    let mut i = 0;
    while i < input.len() {
        let ctrl = usize::from(input[i]);
        i += 1;
        if ctrl < 32 {
            // A literal run of ctrl + 1 bytes.
            let n = ctrl + 1;
            out.extend_from_slice(input.get(i..i + n).ok_or(Bad)?);
            i += n;
        } else {
            // A back reference.
            let mut n = ctrl >> 5;
            if n == 7 {
                n += usize::from(*input.get(i).ok_or(Bad)?);
                i += 1;
            }
            let back = ((ctrl & 0x1f) << 8) + usize::from(*input.get(i).ok_or(Bad)?) + 1;
            i += 1;
            let start = out.len().checked_sub(back).ok_or(Bad)?;
            for k in 0..n + 2 {
                let b = out[start + k];
                out.push(b);
            }
        }
        if out.len() > len {
            return Err(Bad);
        }
    }
    if out.len() == len { Ok(out) } else { Err(Bad) }
}

/// LZF compression as Redis's bundled liblzf does it (`lzf_c.c` with Redis's settings: a
/// 2^16-slot hash table starting empty, the "very fast" hashing, two slots refreshed after
/// each match), so the output is byte for byte Redis's; `None` when it does not fit in
/// `max` bytes, by liblzf's own (conservative) tests.
pub fn lzf_compress(input: &[u8], max: usize) -> Option<Vec<u8>> {
    const HLOG: u32 = 16;
    const MAX_LIT: usize = 1 << 5;
    const MAX_OFF: usize = 1 << 13;
    const MAX_REF: usize = (1 << 8) + (1 << 3);
    let n = input.len();
    // Positions are kept in 32 bits, as liblzf keeps its offsets.
    if n < 2 || u32::try_from(n).is_err() {
        return None;
    }
    let idx = |h: u32| -> usize {
        ((h >> (24 - HLOG)).wrapping_sub(h.wrapping_mul(5)) & ((1 << HLOG) - 1)) as usize
    };
    let at = |i: usize| u32::from(input[i]);
    // Slot values are input positions; 0 (never a usable reference) marks an empty slot.
    let mut htab = vec![0u32; 1 << HLOG];
    let mut out: Vec<u8> = Vec::with_capacity(max + 1);
    // `lit`: bytes in the open literal run, whose length byte is at `run`.
    let mut lit = 0usize;
    let mut run = 0usize;
    out.push(0);
    let mut ip = 0usize;
    let mut hval = (at(0) << 8) | at(1);
    while ip + 2 < n {
        hval = (hval << 8) | at(ip + 2);
        let slot = idx(hval);
        let r = htab[slot] as usize;
        htab[slot] = ip as u32;
        let off = ip.wrapping_sub(r).wrapping_sub(1);
        if r > 0
            && r < ip
            && off < MAX_OFF
            && input[r + 2] == input[ip + 2]
            && input[r..r + 2] == input[ip..ip + 2]
        {
            let mut len = 2usize;
            let maxlen = (n - ip - len).min(MAX_REF);
            // The output position liblzf tests against its end (`op`): after the run byte.
            let op = out.len();
            if op + 3 + 1 >= max && op - usize::from(lit == 0) + 3 + 1 >= max {
                return None;
            }
            out[run] = (lit as u8).wrapping_sub(1);
            if lit == 0 {
                out.pop();
            }
            let mut done = false;
            if maxlen > 16 {
                for _ in 0..16 {
                    len += 1;
                    if input[r + len] != input[ip + len] {
                        done = true;
                        break;
                    }
                }
            }
            if !done {
                loop {
                    len += 1;
                    if !(len < maxlen && input[r + len] == input[ip + len]) {
                        break;
                    }
                }
            }
            len -= 2;
            ip += 1;
            if len < 7 {
                out.push(((off >> 8) + (len << 5)) as u8);
            } else {
                out.push(((off >> 8) + (7 << 5)) as u8);
                out.push((len - 7) as u8);
            }
            out.push(off as u8);
            lit = 0;
            run = out.len();
            out.push(0);
            ip += len + 1;
            if ip + 2 >= n {
                break;
            }
            ip -= 2;
            hval = (at(ip) << 8) | at(ip + 1);
            for _ in 0..2 {
                hval = (hval << 8) | at(ip + 2);
                htab[idx(hval)] = ip as u32;
                ip += 1;
            }
        } else {
            if out.len() >= max {
                return None;
            }
            lit += 1;
            out.push(input[ip]);
            ip += 1;
            if lit == MAX_LIT {
                out[run] = (lit - 1) as u8;
                lit = 0;
                run = out.len();
                out.push(0);
            }
        }
    }
    if out.len() + 3 > max {
        return None;
    }
    while ip < n {
        lit += 1;
        out.push(input[ip]);
        ip += 1;
        if lit == MAX_LIT {
            out[run] = (lit - 1) as u8;
            lit = 0;
            run = out.len();
            out.push(0);
        }
    }
    out[run] = (lit as u8).wrapping_sub(1);
    if lit == 0 {
        out.pop();
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc64_is_redis_s() {
        // Redis's own test vector (crc64.c).
        assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    }

    #[test]
    fn lengths_and_strings_round_trip() {
        for n in [0u64, 63, 64, 16383, 16384, u64::from(u32::MAX), 1 << 40] {
            let mut b = Vec::new();
            put_len(&mut b, n);
            assert_eq!(Reader::new(&b).length(), Ok(n));
        }
        for s in [
            &b"hello"[..],
            b"12",
            b"-129",
            b"40000",
            b"-2147483648",
            b"012",
            b"",
        ] {
            let mut b = Vec::new();
            put_string(&mut b, s);
            let mut r = Reader::new(&b);
            assert_eq!(r.string().unwrap(), s);
            assert!(r.done());
        }
        let sealed = seal(vec![kind::STRING, 1, b'x']);
        assert_eq!(unseal(&sealed), Some(&[kind::STRING, 1, b'x'][..]));
        let mut bad = sealed.clone();
        bad[2] = b'y';
        assert_eq!(unseal(&bad), None);
    }

    #[test]
    fn lzf_compression_reads_back_and_matches_redis() {
        // SET lzf ("abc" x 11) x 3 on redis-server 7.0.15 dumped these LZF bytes.
        let text = "abc".repeat(33);
        let c = lzf_compress(text.as_bytes(), text.len() - 4).unwrap();
        assert_eq!(
            c,
            [
                0x03, b'a', b'b', b'c', b'a', 0xe0, 0x54, 0x02, 0x01, b'b', b'c'
            ]
        );
        let mut varied = Vec::new();
        for i in 0..3000u32 {
            varied.extend_from_slice(format!("{}:{}", i % 37, i / 5).as_bytes());
        }
        let c = lzf_compress(&varied, varied.len() - 4).unwrap();
        assert_eq!(lzf_decompress(&c, varied.len()).unwrap(), varied);
        assert_eq!(lzf_compress(b"abcdefghijklmnopqrstuvwxyz", 22), None);
        let mut out = Vec::new();
        put_string_lzf(&mut out, text.as_bytes());
        assert_eq!(Reader::new(&out).string().unwrap(), text.as_bytes());
    }

    #[test]
    fn lzf_back_references_expand() {
        // "aaaaaaaaaa": literal 'a', then a back reference of length 9 at distance 1.
        let c = [0x00, b'a', 0xe0, 0x00, 0x00];
        assert_eq!(lzf_decompress(&c, 10).unwrap(), b"aaaaaaaaaa");
        assert!(lzf_decompress(&c, 9).is_err());
        // A length the input cannot produce is refused, not allocated.
        assert!(lzf_decompress(&c, usize::MAX).is_err());
        let mut huge = vec![0xc3];
        put_len(&mut huge, 5);
        put_len(&mut huge, 1 << 40);
        huge.extend_from_slice(&c);
        assert_eq!(Reader::new(&huge).string(), Err(Bad));
        assert!(lzf_decompress(&[0x20, 0x05], 3).is_err());
    }
}
