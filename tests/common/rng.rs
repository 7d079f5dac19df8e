//! The tests' one seeded random-number generator (SplitMix64), shared by the integration tests
//! (`tests/common`) and the library's unit tests (`src/test_util.rs` includes this file).

/// SplitMix64's increment, the golden ratio as a 64-bit fraction.
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function: a bijective 64-bit mix.
fn finalize(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A bijective scramble of `i` (SplitMix64's output for state `i`), so distinct `i` give
/// distinct, scattered numbers.
pub fn mix(i: u64) -> u64 {
    finalize(i.wrapping_add(GOLDEN))
}

/// A small, seeded, reproducible generator: the same seed gives the same sequence.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator whose sequence is fixed by `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        finalize(self.0)
    }

    /// A number in `0..n` (`n` > 0; the tiny modulo bias does not matter to a test).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// `len` random bytes.
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next_u64() as u8).collect()
    }
}
