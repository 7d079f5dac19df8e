//! Scores: parsed as Redis 7.2 parses them, and encoded so that byte order is numeric order
//! (the score index `'r' ... score(8) member` sorts by score, then member).

/// C's `isspace`.
fn c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// True when the text before any exponent holds a non-zero digit (so a zero result is an
/// underflow, not a zero).
fn has_nonzero_digit(s: &str) -> bool {
    s.bytes()
        .take_while(|c| !matches!(c, b'e' | b'E'))
        .any(|c| (b'1'..=b'9').contains(&c))
}

/// True when the text names an infinity (`inf`, `-Infinity`, ...) rather than overflowing.
fn names_infinity(s: &str) -> bool {
    s.bytes().any(|c| c.eq_ignore_ascii_case(&b'i'))
}

/// Parses a score, an increment or a timeout as Redis's `string2d` does: the whole text
/// must be a number (no leading space), `inf` and `-inf` are accepted, NaN is not, and a
/// number too large (`1e400`) or too small (`1e-400`, which would round to zero) for a
/// double is refused.
pub fn parse_score(b: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(b).ok()?;
    if s.is_empty() || c_space(b[0]) {
        return None;
    }
    let v: f64 = s.parse().ok()?;
    if v.is_nan() || (v.is_infinite() && !names_infinity(s)) || (v == 0.0 && has_nonzero_digit(s)) {
        return None;
    }
    Some(v)
}

/// Parses one end of a score range as Redis's `zslParseRange` does with `strtod`: leading
/// spaces are skipped, an empty text is 0, an overflow is an infinity; NaN is refused.
pub fn parse_range_float(b: &[u8]) -> Option<f64> {
    if b.is_empty() {
        return Some(0.0);
    }
    let start = b.iter().position(|&c| !c_space(c))?;
    let s = std::str::from_utf8(&b[start..]).ok()?;
    let v: f64 = s.parse().ok()?;
    (!v.is_nan()).then_some(v)
}

/// The 8 bytes whose byte order is `v`'s numeric order (-0.0 encodes as 0.0, so the two are
/// one score, as Redis compares them). `v` must not be NaN.
pub fn encode(v: f64) -> [u8; 8] {
    let v = if v == 0.0 { 0.0 } else { v };
    let bits = v.to_bits();
    let ordered = if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    };
    ordered.to_be_bytes()
}

/// The score [`encode`] encoded.
pub fn decode(b: [u8; 8]) -> f64 {
    let ordered = u64::from_be_bytes(b);
    let bits = if ordered >> 63 == 1 {
        ordered & !(1 << 63)
    } else {
        !ordered
    };
    f64::from_bits(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_parse_like_string2d() {
        assert_eq!(parse_score(b"1.5"), Some(1.5));
        assert_eq!(parse_score(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_score(b"+inf"), Some(f64::INFINITY));
        assert_eq!(parse_score(b"1e308"), Some(1e308));
        assert_eq!(parse_score(b"4.9e-324"), Some(4.9e-324));
        assert_eq!(parse_score(b"0e5"), Some(0.0));
        assert_eq!(parse_score(b"-0"), Some(-0.0));
        for bad in [
            &b""[..],
            b" 1",
            b"1 ",
            b"nan",
            b"1e400",
            b"-1e400",
            b"1e-400",
            b"abc",
            b"1x",
        ] {
            assert_eq!(parse_score(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn range_ends_parse_like_strtod() {
        assert_eq!(parse_range_float(b""), Some(0.0));
        assert_eq!(parse_range_float(b" 2"), Some(2.0));
        assert_eq!(parse_range_float(b"1e400"), Some(f64::INFINITY));
        assert_eq!(parse_range_float(b"  "), None);
        assert_eq!(parse_range_float(b"2 "), None);
        assert_eq!(parse_range_float(b"nan"), None);
    }

    #[test]
    fn encoding_orders_like_numbers() {
        let xs = [
            f64::NEG_INFINITY,
            -1e300,
            -2.5,
            -1.0,
            -f64::MIN_POSITIVE,
            -4.9e-324,
            0.0,
            4.9e-324,
            f64::MIN_POSITIVE,
            1.0,
            2.5,
            1e300,
            f64::INFINITY,
        ];
        for w in xs.windows(2) {
            assert!(encode(w[0]) < encode(w[1]), "{} < {}", w[0], w[1]);
        }
        for x in xs {
            assert_eq!(decode(encode(x)), x);
        }
        assert_eq!(encode(-0.0), encode(0.0));
    }
}
