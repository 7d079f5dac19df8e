//! Where an element lands in a sketch (MurmurHash64A with Redis's seed: the low 14 bits pick
//! the register, the run of zeros after them gives the value) and the cardinality estimate
//! Redis computes from the registers' histogram (Ertl's improved estimator, "New
//! cardinality estimation algorithms for HyperLogLog sketches", 2017).

use super::format::{Q, REGISTERS};

const SEED: u64 = 0xadc8_3b19;

/// MurmurHash64A (Austin Appleby), reading 8-byte blocks little-endian as Redis does on
/// every platform.
pub fn murmur64a(key: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (key.len() as u64).wrapping_mul(M);
    let mut blocks = key.chunks_exact(8);
    for b in &mut blocks {
        let mut k = u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// The register `element` updates and the value it offers (1 plus the zeros after the
/// index bits, at most 51).
pub fn place(element: &[u8]) -> (usize, u8) {
    let hash = murmur64a(element, SEED);
    let index = (hash as usize) & (REGISTERS - 1);
    let rest = (hash >> 14) | (1 << Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

/// The estimate from the registers (Redis's `hllCount`).
pub fn estimate(registers: &[u8]) -> u64 {
    let mut histo = [0u32; 64];
    for &r in registers {
        histo[usize::from(r)] += 1;
    }
    let m = REGISTERS as f64;
    let mut z = m * tau((m - f64::from(histo[Q + 1])) / m);
    for j in (1..=Q).rev() {
        z += f64::from(histo[j]);
        z *= 0.5;
    }
    z += m * sigma(f64::from(histo[0]) / m);
    const ALPHA_INF: f64 = 0.721_347_520_444_481_7;
    (ALPHA_INF * m * m / z).round() as u64
}

fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let prev = z;
        z += x * y;
        y += y;
        if prev == z {
            return z;
        }
    }
}

fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let prev = z;
        y *= 0.5;
        z -= (1.0 - x).powi(2) * y;
        if prev == z {
            return z / 3.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_registers_estimate_zero() {
        assert_eq!(estimate(&vec![0u8; REGISTERS]), 0);
    }

    #[test]
    fn murmur_reads_blocks_and_tails() {
        // Stable values: any change of the hash changes every stored sketch.
        assert_ne!(murmur64a(b"", SEED), murmur64a(b"\0", SEED));
        assert_ne!(murmur64a(b"abcdefgh", SEED), murmur64a(b"abcdefg", SEED));
        let (i, c) = place(b"hello");
        assert!(i < REGISTERS && (1..=51).contains(&c));
    }
}
