//! INCRBYFLOAT and HINCRBYFLOAT arithmetic as Redis does it: in the x87 80-bit `long double`
//! (a 64-bit mantissa), parsed as `strtold` parses (decimal or hex, `inf`), printed as
//! `%.17Lf` with trailing zeros trimmed. Computing in `f64` instead answers `0.1 + 0.2` with
//! `0.30000000000000004` where Redis answers `0.3`, and prints `1e-20` in full where Redis
//! prints `0`; this module gives Redis's exact text. Conversions are exact (big integers,
//! round-half-even), so the result does not depend on the platform's own `long double`.

use std::cmp::Ordering;

/// Longest text Redis parses as a long double (`MAX_LONG_DOUBLE_CHARS`).
const MAX_CHARS: usize = 5 * 1024;
/// Largest binary exponent of a long double's leading bit.
const MAX_EXP: i64 = 16383;
/// Smallest binary exponent of a subnormal long double's lowest bit.
const MIN_EXP: i64 = -16445;

/// A finite long double: `(-1)^neg * m * 2^exp`, `m` normalized to `[2^63, 2^64)` (0: zero).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LongDouble {
    neg: bool,
    m: u64,
    exp: i64,
}

/// A parsed number: finite, or an infinity (which arithmetic refuses).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Parsed {
    /// A finite value.
    Finite(LongDouble),
    /// `inf`, `+inf`, `-infinity`, ...
    Infinite,
}

/// A non-negative big integer, little-endian 32-bit limbs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Big(Vec<u32>);

impl Big {
    fn from_u128(mut x: u128) -> Big {
        let mut v = Vec::new();
        while x > 0 {
            v.push(x as u32);
            x >>= 32;
        }
        Big(v)
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn bit_len(&self) -> usize {
        match self.0.last() {
            None => 0,
            Some(&top) => 32 * (self.0.len() - 1) + (32 - top.leading_zeros() as usize),
        }
    }

    fn bit(&self, i: usize) -> bool {
        self.0.get(i / 32).is_some_and(|l| l >> (i % 32) & 1 == 1)
    }

    fn mul_add_small(&mut self, k: u32, add: u32) {
        let mut carry = u64::from(add);
        for l in &mut self.0 {
            let v = u64::from(*l) * u64::from(k) + carry;
            *l = v as u32;
            carry = v >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
        self.trim();
    }

    /// Divides by `k`, returning the remainder.
    fn div_small(&mut self, k: u32) -> u32 {
        let mut rem = 0u64;
        for l in self.0.iter_mut().rev() {
            let v = (rem << 32) | u64::from(*l);
            *l = (v / u64::from(k)) as u32;
            rem = v % u64::from(k);
        }
        self.trim();
        rem as u32
    }

    fn shl(&mut self, bits: usize) {
        if self.is_zero() || bits == 0 {
            return;
        }
        let (limbs, b) = (bits / 32, bits % 32);
        let mut v = vec![0u32; limbs];
        let mut carry = 0u32;
        for &l in &self.0 {
            v.push((l << b) | carry);
            carry = if b == 0 { 0 } else { l >> (32 - b) };
        }
        v.push(carry);
        self.0 = v;
        self.trim();
    }

    fn shr(&mut self, bits: usize) {
        let (limbs, b) = (bits / 32, bits % 32);
        if limbs >= self.0.len() {
            self.0.clear();
            return;
        }
        let src = &self.0[limbs..];
        let mut v = Vec::with_capacity(src.len());
        for i in 0..src.len() {
            let hi = src.get(i + 1).copied().unwrap_or(0);
            v.push(if b == 0 {
                src[i]
            } else {
                (src[i] >> b) | (hi << (32 - b))
            });
        }
        self.0 = v;
        self.trim();
    }

    fn cmp_big(&self, o: &Big) -> Ordering {
        self.0
            .len()
            .cmp(&o.0.len())
            .then_with(|| self.0.iter().rev().cmp(o.0.iter().rev()))
    }

    fn add_big(&mut self, o: &Big) {
        let mut carry = 0u64;
        for i in 0..self.0.len().max(o.0.len()) {
            if i == self.0.len() {
                self.0.push(0);
            }
            let v = u64::from(self.0[i]) + u64::from(o.0.get(i).copied().unwrap_or(0)) + carry;
            self.0[i] = v as u32;
            carry = v >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
    }

    /// `self -= o`, for `self >= o`.
    fn sub_big(&mut self, o: &Big) {
        let mut borrow = 0i64;
        for i in 0..self.0.len() {
            let v = i64::from(self.0[i]) - i64::from(o.0.get(i).copied().unwrap_or(0)) - borrow;
            self.0[i] = v.rem_euclid(1 << 32) as u32;
            borrow = i64::from(v < 0);
        }
        self.trim();
    }

    /// The low 128 bits.
    fn low_u128(&self) -> u128 {
        self.0
            .iter()
            .take(4)
            .enumerate()
            .fold(0, |acc, (i, &l)| acc | (u128::from(l) << (32 * i)))
    }

    fn mul_pow10(&mut self, n: usize) {
        for _ in 0..n / 9 {
            self.mul_add_small(1_000_000_000, 0);
        }
        for _ in 0..n % 9 {
            self.mul_add_small(10, 0);
        }
    }

    fn pow10(n: usize) -> Big {
        let mut b = Big::from_u128(1);
        b.mul_pow10(n);
        b
    }
}

/// Rounds `n * 2^exp` (`n` > 0) to a long double, half to even; `sticky` says a nonzero
/// remainder lies below `n`'s lowest bit. `None` past the largest long double.
fn round(neg: bool, mut n: Big, mut exp: i64, sticky: bool) -> Option<LongDouble> {
    let bl = n.bit_len() as i64;
    // Lowest bit a long double of this magnitude can hold: 64 bits below the top, and not
    // below the subnormal limit.
    let lowest = (exp + bl - 64).max(MIN_EXP);
    let mut m = if lowest > exp {
        let drop = (lowest - exp) as usize;
        let half = drop >= 1 && n.bit(drop - 1);
        let below = sticky || (0..drop.saturating_sub(1)).any(|i| n.bit(i));
        n.shr(drop);
        let mut m = n.low_u128();
        if half && (below || m & 1 == 1) {
            m += 1;
        }
        exp = lowest;
        m
    } else {
        let up = (exp - lowest) as usize;
        n.shl(up);
        exp = lowest;
        n.low_u128()
    };
    if m == 0 {
        return Some(LongDouble { neg, m: 0, exp: 0 });
    }
    while m >= 1 << 64 {
        m >>= 1;
        exp += 1;
    }
    // Normalize (subnormals keep their small mantissa at the lowest exponent).
    let mut m = m as u64;
    while m < 1 << 63 && exp > MIN_EXP {
        m <<= 1;
        exp -= 1;
    }
    if exp + 63 > MAX_EXP {
        return None;
    }
    Some(LongDouble { neg, m, exp })
}

/// Parses `s` as Redis's `string2ld` does: `strtold` on the whole text (no leading space,
/// nothing after the number), NaN refused, overflow and underflow to zero refused.
pub fn parse(s: &[u8]) -> Option<Parsed> {
    if s.is_empty() || s.len() >= MAX_CHARS {
        return None;
    }
    let (neg, body) = match s[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    if lower == b"inf" || lower == b"infinity" {
        return Some(Parsed::Infinite);
    }
    let (hex, digits) = match lower.strip_prefix(b"0x") {
        Some(rest) => (true, rest),
        None => (false, &lower[..]),
    };
    let radix: u32 = if hex { 16 } else { 10 };
    let exp_mark = if hex { b'p' } else { b'e' };
    let (mantissa, exponent) = match digits.iter().position(|&c| c == exp_mark) {
        Some(i) => (&digits[..i], Some(&digits[i + 1..])),
        None => (digits, None),
    };
    let mut n = Big::default();
    let mut frac_digits = 0i64;
    let mut seen_digit = false;
    let mut seen_dot = false;
    for &c in mantissa {
        if c == b'.' && !seen_dot {
            seen_dot = true;
            continue;
        }
        let d = (c as char).to_digit(radix)?;
        seen_digit = true;
        n.mul_add_small(radix, d);
        if seen_dot {
            frac_digits += 1;
        }
    }
    if !seen_digit {
        return None;
    }
    let mut e: i64 = 0;
    if let Some(x) = exponent {
        let (eneg, ed) = match x.first() {
            Some(b'-') => (true, &x[1..]),
            Some(b'+') => (false, &x[1..]),
            _ => (false, x),
        };
        if ed.is_empty() || !ed.iter().all(u8::is_ascii_digit) {
            return None;
        }
        for &c in ed {
            e = (e * 10 + i64::from(c - b'0')).min(1 << 40);
        }
        if eneg {
            e = -e;
        }
    }
    if n.is_zero() {
        return Some(Parsed::Finite(LongDouble { neg, m: 0, exp: 0 }));
    }
    let finite = |v: Option<LongDouble>| match v {
        Some(v) if v.m != 0 => Some(Parsed::Finite(v)),
        // Overflow (HUGE_VAL) and underflow to zero are ERANGE errors to string2ld.
        _ => None,
    };
    if hex {
        // n * 16^-frac * 2^e.
        return finite(round(neg, n, e - 4 * frac_digits, false));
    }
    let d10 = e - frac_digits;
    let digits_len = n.bit_len() as i64 / 3;
    if d10 + digits_len > 5000 {
        return None;
    }
    if d10 + digits_len < -5200 {
        return None;
    }
    if d10 >= 0 {
        let mut v = n;
        v.mul_pow10(d10 as usize);
        return finite(round(neg, v, 0, false));
    }
    // n / 10^-d10: a quotient of about 66 bits by long division, the rest as sticky.
    let den = Big::pow10((-d10) as usize);
    let s = 66 - (n.bit_len() as i64 - den.bit_len() as i64);
    let mut num = n;
    let mut den = den;
    if s >= 0 {
        num.shl(s as usize);
    } else {
        den.shl((-s) as usize);
    }
    let t = num.bit_len().saturating_sub(den.bit_len());
    let mut r = num.clone();
    r.shr(t);
    let mut q: u128 = 0;
    if r.cmp_big(&den) != Ordering::Less {
        r.sub_big(&den);
        q = 1;
    }
    for i in (0..t).rev() {
        r.shl(1);
        if num.bit(i) {
            r.add_big(&Big::from_u128(1));
        }
        q <<= 1;
        if r.cmp_big(&den) != Ordering::Less {
            r.sub_big(&den);
            q |= 1;
        }
    }
    finite(round(neg, Big::from_u128(q), -s, !r.is_zero()))
}

/// `a + b`, rounded to a long double; `None` when it overflows to infinity.
pub fn add(a: LongDouble, b: LongDouble) -> Option<LongDouble> {
    if a.m == 0 {
        return Some(if b.m == 0 {
            LongDouble {
                neg: a.neg && b.neg,
                m: 0,
                exp: 0,
            }
        } else {
            b
        });
    }
    if b.m == 0 {
        return Some(a);
    }
    let (big, small) = if a.exp >= b.exp { (a, b) } else { (b, a) };
    if big.exp - small.exp > 130 {
        // The smaller is below half of the larger's last place (both are normalized).
        return Some(big);
    }
    let mut x = Big::from_u128(u128::from(big.m));
    x.shl((big.exp - small.exp) as usize);
    let y = Big::from_u128(u128::from(small.m));
    let (neg, sum) = if big.neg == small.neg {
        x.add_big(&y);
        (big.neg, x)
    } else {
        match x.cmp_big(&y) {
            Ordering::Less => {
                let mut y = y;
                y.sub_big(&x);
                (small.neg, y)
            }
            Ordering::Equal => return Some(LongDouble::default()),
            Ordering::Greater => {
                x.sub_big(&y);
                (big.neg, x)
            }
        }
    };
    round(neg, sum, small.exp, false)
}

/// Redis's text for a long double (`ld2string` in human mode): `%.17Lf`, trailing zeros and
/// a trailing point removed, `-0` written `0`.
pub fn format(v: LongDouble) -> String {
    let ten17: u128 = 100_000_000_000_000_000;
    let (int, frac): (String, u128) = if v.exp >= 0 {
        let mut n = Big::from_u128(u128::from(v.m));
        n.shl(v.exp as usize);
        (big_to_decimal(n), 0)
    } else {
        let k = (-v.exp) as u32;
        let (mut int, frac_bits) = if k < 64 {
            (u128::from(v.m >> k), u128::from(v.m & ((1u64 << k) - 1)))
        } else {
            (0, u128::from(v.m))
        };
        let f = frac_bits * ten17;
        let mut q = if k < 128 { f >> k } else { 0 };
        if k < 128 {
            let r = f & ((1u128 << k) - 1);
            let half = 1u128 << (k - 1);
            if r > half || (r == half && q & 1 == 1) {
                q += 1;
            }
        }
        if q == ten17 {
            q = 0;
            int += 1;
        }
        (int.to_string(), q)
    };
    let mut s = String::with_capacity(int.len() + 19);
    if v.neg {
        s.push('-');
    }
    s.push_str(&int);
    let f = format!("{frac:017}");
    let f = f.trim_end_matches('0');
    if !f.is_empty() {
        s.push('.');
        s.push_str(f);
    }
    if s == "-0" { "0".into() } else { s }
}

fn big_to_decimal(mut n: Big) -> String {
    if n.is_zero() {
        return "0".into();
    }
    let mut chunks = Vec::new();
    while !n.is_zero() {
        chunks.push(n.div_small(1_000_000_000));
    }
    let mut s = chunks.pop().map(|c| c.to_string()).unwrap_or_default();
    for c in chunks.iter().rev() {
        s.push_str(&format!("{c:09}"));
    }
    s
}

/// What an increment of a stored number failed on.
#[derive(Debug, PartialEq, Eq)]
pub enum IncrError {
    /// The stored value is not a number.
    Value,
    /// The increment is not a number.
    Increment,
    /// The increment is infinite.
    InfiniteIncrement,
    /// The sum is infinite.
    Overflow,
}

/// `current + by` as Redis's INCRBYFLOAT/HINCRBYFLOAT compute it (a missing value is 0),
/// in Redis's text.
///
/// # Errors
/// Which operand is not a number, an infinite increment, an infinite result.
pub fn incr(current: Option<&[u8]>, by: &[u8]) -> Result<String, IncrError> {
    let by = match parse(by).ok_or(IncrError::Increment)? {
        Parsed::Finite(v) => v,
        Parsed::Infinite => return Err(IncrError::InfiniteIncrement),
    };
    let cur = match current {
        None => LongDouble::default(),
        Some(c) => match parse(c).ok_or(IncrError::Value)? {
            Parsed::Finite(v) => v,
            Parsed::Infinite => return Err(IncrError::Overflow),
        },
    };
    add(cur, by).map(format).ok_or(IncrError::Overflow)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(a: &str, b: &str) -> String {
        incr(Some(a.as_bytes()), b.as_bytes()).unwrap()
    }

    #[test]
    fn sums_print_as_redis_prints_them() {
        // Answers of redis-server 7.0 (x86-64, 80-bit long double).
        assert_eq!(sum("0.1", "0.2"), "0.3");
        assert_eq!(sum("10.5", "0.1"), "10.6");
        assert_eq!(sum("0", "3.0000000000000001"), "3.0000000000000001");
        assert_eq!(sum("0", "1e-20"), "0");
        assert_eq!(sum("0", "5e-18"), "0");
        assert_eq!(sum("0", "-1e-20"), "0");
        assert_eq!(sum("0", "-0.0"), "0");
        assert_eq!(sum("0", "0x10"), "16");
        assert_eq!(sum("0", ".5"), "0.5");
        assert_eq!(sum("0", "5."), "5");
        assert_eq!(sum("0", "+5"), "5");
        assert_eq!(sum("17179869184", "1.5"), "17179869185.5");
        assert_eq!(sum("-2", "5.0e3"), "4998");
        assert_eq!(sum("1.5", "-1.5"), "0");
        assert_eq!(
            sum("0", "1e308"),
            "99999999999999999996685879655845645660560099847415567207797047994921734868838061\
             87210012692188853932044674722505401322315213474959396058359742081443019641876795\
             91000196031907786631096045071066679391533957889389145605435630612683649016186302\
             17086589253444881623791300855757318142424510452728255046343928578048"
        );
        assert!(sum("1e308", "1e308").starts_with(
            "199999999999999999993371759311691291321120199694831134415594095989843469737676123744200253843777078640893494450108026446"
        ));
        assert!(sum("0", "1e400").starts_with(
            "10000000000000000000281880683947586514586453433629052038625910693539685534008629862039363994848324160522094053927317616200295822777259255734023828976593340661017797447434546173917862448116674971723778943824391593338047470675026246684401359237513603830343735485505244955964979021825038280091068"
        ));
        assert!(
            sum("0", "1.18973149535723176502e+4932")
                .starts_with("118973149535723176502126385303097020516906332229462420044032")
        );
        assert!(
            sum("0", "0x1p16383")
                .starts_with("594865747678615882542879663314003565381722343548255118736337")
        );
        assert_eq!(
            sum("0", "123456789012345678901234567890"),
            "123456789012345678899921813504"
        );
        assert_eq!(sum("0", "0x1.8p3"), "12");
        assert_eq!(sum("0", "1e-4940"), "0");
        assert_eq!(sum("0", "4e-4951"), "0");
        assert_eq!(sum("0", "0.000000000000000005"), "0");
        assert_eq!(sum("0", "0.000000000000000015"), "0.00000000000000002");
        assert_eq!(sum("0", "2.5e-17"), "0.00000000000000002");
        assert_eq!(sum("0", "1.5e-17"), "0.00000000000000002");
        // Huge values print every integer digit.
        assert_eq!(sum("0", "1e4000").len(), 4000);
        assert!(
            sum("1e4000", "1e4000")
                .starts_with("19999999999999999999930927746199247569864985167013")
        );
    }

    #[test]
    fn refusals_are_redis_refusals() {
        for bad in [
            "", " 1", "1 ", "abc", "nan", "1e", "1e+", "0x", ".", "1_0", "--1", "1e5000",
            "1e-5000", "1e-4952", "1.2e4932",
        ] {
            assert!(parse(bad.as_bytes()).is_none(), "{bad:?}");
        }
        assert_eq!(parse(b"inf"), Some(Parsed::Infinite));
        assert_eq!(parse(b"-Infinity"), Some(Parsed::Infinite));
        assert_eq!(incr(None, b"inf"), Err(IncrError::InfiniteIncrement));
        assert_eq!(incr(Some(b"inf"), b"1"), Err(IncrError::Overflow));
        assert_eq!(incr(Some(b"x"), b"1"), Err(IncrError::Value));
        assert_eq!(incr(Some(b"1"), b"x"), Err(IncrError::Increment));
        assert_eq!(incr(Some(b"1e4932"), b"1e4932"), Err(IncrError::Overflow));
        assert!(parse(&vec![b'1'; MAX_CHARS]).is_none());
    }

    #[test]
    fn big_integers() {
        let mut b = Big::from_u128(u128::MAX);
        b.shl(37);
        b.shr(37);
        assert_eq!(b.low_u128(), u128::MAX);
        let mut p = Big::pow10(30);
        assert_eq!(p.div_small(1_000_000_000), 0);
        assert_eq!(big_to_decimal(p), "1000000000000000000000");
        let mut x = Big::from_u128(10);
        x.sub_big(&Big::from_u128(3));
        assert_eq!(x.low_u128(), 7);
    }
}
