//! A fast hasher for the server's small in-memory maps (a command's metadata cache, the
//! command table): std's SipHash cost about 10% of a pipelined SET's instructions.
//!
//! The mixing is a rotate-xor-multiply per 8-byte word (the scheme of rustc's FxHasher),
//! started from a per-process random seed so that clients cannot choose keys that collide.

use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;

const K: u64 = 0x517c_c1b7_2722_0a95;

/// The hasher.
#[derive(Clone, Copy, Debug)]
pub struct FastHasher(u64);

impl FastHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(K);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // A final avalanche so the low bits the table uses depend on every input bit.
        let mut z = self.0;
        z ^= z >> 33;
        z = z.wrapping_mul(0xff51_afd7_ed55_8ccd);
        z ^ (z >> 33)
    }
}

/// Builds [`FastHasher`]s from the process's seed.
#[derive(Clone, Copy, Debug, Default)]
pub struct FastState;

impl BuildHasher for FastState {
    type Hasher = FastHasher;

    #[inline]
    fn build_hasher(&self) -> FastHasher {
        static SEED: OnceLock<u64> = OnceLock::new();
        let seed = *SEED.get_or_init(|| {
            // std's RandomState is seeded from the OS: borrow its randomness once.
            std::collections::hash_map::RandomState::new().hash_one(0x5eed_u64)
        });
        FastHasher(seed)
    }
}

/// A HashMap with [`FastState`].
pub type FastMap<K, V> = std::collections::HashMap<K, V, FastState>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_keys_hash_alike_and_lengths_matter() {
        let h = |b: &[u8]| FastState.hash_one(b);
        assert_eq!(h(b"key"), h(b"key"));
        assert_ne!(h(b"key"), h(b"kez"));
        assert_ne!(h(b"a\0"), h(b"a"));
        let mut m: FastMap<Vec<u8>, u32> = FastMap::default();
        for i in 0..1000u32 {
            m.insert(i.to_le_bytes().to_vec(), i);
        }
        assert!((0..1000u32).all(|i| m[&i.to_le_bytes().to_vec()] == i));
    }
}
