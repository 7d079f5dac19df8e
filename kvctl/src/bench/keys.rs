//! W1's key and value derivation: key `i` is the 16 hex digits of `f(i)`, where `f` is a
//! seeded SplitMix64-style bijection on `u64`, so keys are distinct and arrive in random
//! order; values are pseudo-random bytes derived from the key index and a version number.

/// The SplitMix64 increment (the golden ratio in 64-bit fixed point).
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// The SplitMix64 finalizer. Each step (xor with a right shift, multiplication by an odd
/// constant) is invertible, so the whole mix is a bijection on `u64`.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The keys and values of one W1 run.
#[derive(Clone, Copy, Debug)]
pub struct KeySpace {
    offset: u64,
}

impl KeySpace {
    /// The key space for `seed`.
    pub fn new(seed: u64) -> Self {
        KeySpace {
            offset: seed.wrapping_mul(GOLDEN),
        }
    }

    /// `f(i)`: distinct for distinct `i`.
    pub fn id(&self, i: u64) -> u64 {
        mix(i.wrapping_add(self.offset))
    }

    /// Key `i`: `format!("{:016x}", f(i))` without the allocation.
    pub fn key(&self, i: u64) -> [u8; 16] {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let u = self.id(i);
        let mut out = [0u8; 16];
        for (n, b) in out.iter_mut().enumerate() {
            *b = HEX[((u >> (60 - 4 * n)) & 0xf) as usize];
        }
        out
    }

    /// Fills `out` with the value of key `i` as written by write number `version` (0 for
    /// the fill, 1 for the overwrite phase).
    pub fn value(&self, i: u64, version: u64, out: &mut [u8]) {
        let mut rng = SplitMix64::new(self.id(i) ^ mix(version.wrapping_add(GOLDEN)));
        for chunk in out.chunks_mut(8) {
            let bytes = rng.next_u64().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }

    /// W2's value: the first half of `out` as [`KeySpace::value`] fills it, the second half
    /// a copy of the first (an odd middle byte stays random), so values compress about 2:1.
    pub fn half_repeated_value(&self, i: u64, version: u64, out: &mut [u8]) {
        self.value(i, version, out);
        let half = out.len() / 2;
        let (a, b) = out.split_at_mut(out.len() - half);
        b.copy_from_slice(&a[..half]);
    }
}

/// The SplitMix64 generator, for the phases' random choices.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        mix(self.state)
    }

    /// A number in `0..n` (`n > 0`), by multiply-shift (bias below 2^-32 for our sizes).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

/// `k` distinct numbers from `0..n` in random order (all of them if `k >= n`), by a partial
/// Fisher-Yates shuffle of `0..n` that keeps only the positions it has moved (a map of at
/// most `k` entries): the same numbers in the same order as shuffling the whole range, in
/// memory for `k` numbers, not `n` (the whole range was 8 bytes per key of the database, 400
/// MB at W2's 50M keys, resident for the phase and counted in its peak memory).
pub fn distinct_indices(n: u64, k: u64, rng: &mut SplitMix64) -> Vec<u64> {
    let k = k.min(n);
    // Position -> the number now there, for moved positions at or after the current one.
    let mut moved: std::collections::HashMap<u64, u64> =
        std::collections::HashMap::with_capacity(usize::try_from(k).unwrap_or(0));
    let mut out = Vec::with_capacity(usize::try_from(k).unwrap_or(0));
    for i in 0..k {
        let j = i + rng.below(n - i);
        let at_i = moved.remove(&i).unwrap_or(i);
        let at_j = if j == i {
            at_i
        } else {
            moved.insert(j, at_i).unwrap_or(j)
        };
        out.push(at_j);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// The dense partial shuffle this replaces: the same numbers must come out in the same
    /// order, so that runs before and after compare key for key.
    fn dense(n: u64, k: u64, rng: &mut SplitMix64) -> Vec<u64> {
        let k = k.min(n);
        let mut all: Vec<u64> = (0..n).collect();
        for i in 0..k {
            let j = i + rng.below(n - i);
            all.swap(i as usize, j as usize);
        }
        all.truncate(k as usize);
        all
    }

    #[test]
    fn distinct_indices_match_the_dense_shuffle() {
        for (n, k) in [
            (1, 1),
            (10, 10),
            (10, 3),
            (1000, 999),
            (100_000, 2000),
            (5, 0),
            (3, 9),
        ] {
            let (mut a, mut b) = (SplitMix64::new(n ^ k), SplitMix64::new(n ^ k));
            let got = distinct_indices(n, k, &mut a);
            assert_eq!(got, dense(n, k, &mut b), "n {n} k {k}");
            let set: HashSet<u64> = got.iter().copied().collect();
            assert_eq!(set.len(), got.len());
            assert!(got.iter().all(|&x| x < n));
        }
    }

    #[test]
    fn keys_are_distinct_hex_of_the_mix() {
        let ks = KeySpace::new(42);
        let keys: HashSet<[u8; 16]> = (0..100_000).map(|i| ks.key(i)).collect();
        assert_eq!(keys.len(), 100_000);
        assert_eq!(ks.key(7), *format!("{:016x}", ks.id(7)).as_bytes());
        assert_ne!(KeySpace::new(1).key(0), KeySpace::new(2).key(0));
    }

    #[test]
    fn values_depend_on_key_and_version() {
        let ks = KeySpace::new(42);
        let (mut a, mut b, mut c) = ([0u8; 100], [0u8; 100], [0u8; 100]);
        ks.value(3, 0, &mut a);
        ks.value(3, 1, &mut b);
        ks.value(4, 0, &mut c);
        assert!(a != b && a != c);
        let mut again = [0u8; 100];
        ks.value(3, 0, &mut again);
        assert_eq!(a, again);
    }

    #[test]
    fn half_repeated_values_repeat_their_first_half() {
        let ks = KeySpace::new(42);
        let mut v = [0u8; 100];
        ks.half_repeated_value(7, 0, &mut v);
        assert_eq!(v[..50], v[50..]);
        let mut w = [0u8; 100];
        ks.value(7, 0, &mut w);
        assert_eq!(v[..50], w[..50]);
    }

    #[test]
    fn distinct_indices_are_distinct_and_in_range() {
        let mut rng = SplitMix64::new(1);
        let v = distinct_indices(1000, 600, &mut rng);
        assert_eq!(v.len(), 600);
        assert_eq!(v.iter().collect::<HashSet<_>>().len(), 600);
        assert!(v.iter().all(|&x| x < 1000));
        assert_eq!(distinct_indices(5, 10, &mut rng).len(), 5);
    }
}
