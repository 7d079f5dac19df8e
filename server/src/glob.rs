//! Redis glob-style patterns for KEYS, SCAN MATCH and SSCAN MATCH: `*`, `?`, `[abc]`, `[^a]`,
//! `[a-z]`, and `\x` to match `x` literally. Works on bytes.

/// True when `s` matches `pattern`.
pub fn matches(pattern: &[u8], s: &[u8]) -> bool {
    // Iterative matcher with one backtrack point for the last `*` (linear in practice, never
    // exponential: a later `*` replaces the earlier backtrack point).
    let (mut p, mut i) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    loop {
        if p < pattern.len() {
            match pattern[p] {
                b'*' => {
                    while p < pattern.len() && pattern[p] == b'*' {
                        p += 1;
                    }
                    if p == pattern.len() {
                        return true;
                    }
                    star = Some((p, i));
                    continue;
                }
                _ if i < s.len() => {
                    if let Some(np) = match_one(pattern, p, s[i]) {
                        p = np;
                        i += 1;
                        continue;
                    }
                }
                _ => {}
            }
        } else if i == s.len() {
            return true;
        }
        match star {
            Some((sp, si)) if si < s.len() => {
                star = Some((sp, si + 1));
                p = sp;
                i = si + 1;
            }
            _ => return false,
        }
    }
}

/// Matches one byte `c` against the pattern element at `p` (not `*`); the position after
/// the element when it matches.
fn match_one(pattern: &[u8], p: usize, c: u8) -> Option<usize> {
    match pattern[p] {
        b'?' => Some(p + 1),
        b'\\' if p + 1 < pattern.len() => (pattern[p + 1] == c).then_some(p + 2),
        b'[' => {
            let mut q = p + 1;
            let negate = q < pattern.len() && pattern[q] == b'^';
            if negate {
                q += 1;
            }
            let mut hit = false;
            while q < pattern.len() && pattern[q] != b']' {
                if pattern[q] == b'\\' && q + 1 < pattern.len() {
                    hit |= pattern[q + 1] == c;
                    q += 2;
                } else if q + 2 < pattern.len() && pattern[q + 1] == b'-' && pattern[q + 2] != b']'
                {
                    let (a, b) = (
                        pattern[q].min(pattern[q + 2]),
                        pattern[q].max(pattern[q + 2]),
                    );
                    hit |= (a..=b).contains(&c);
                    q += 3;
                } else {
                    hit |= pattern[q] == c;
                    q += 1;
                }
            }
            // An unterminated class ends the pattern, as in Redis.
            let next = if q < pattern.len() { q + 1 } else { q };
            (hit != negate).then_some(next)
        }
        other => (other == c).then_some(p + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn globs() {
        assert!(matches(b"*", b""));
        assert!(matches(b"h?llo", b"hello"));
        assert!(matches(b"h*llo", b"heeeello"));
        assert!(matches(b"h[ae]llo", b"hallo"));
        assert!(!matches(b"h[ae]llo", b"hillo"));
        assert!(matches(b"h[^e]llo", b"hallo"));
        assert!(!matches(b"h[^e]llo", b"hello"));
        assert!(matches(b"h[a-b]llo", b"hbllo"));
        assert!(matches(b"user:*:name", b"user:42:name"));
        assert!(!matches(b"user:*:name", b"user:42:names"));
        assert!(matches(b"a\\*b", b"a*b"));
        assert!(!matches(b"a\\*b", b"axb"));
        assert!(matches(b"*a*b*c*", b"xxaxxbxxcxx"));
        assert!(!matches(b"a*", b"ba"));
    }
}
