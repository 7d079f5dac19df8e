//! A Bloom filter's metadata (`Meta::Bloom`): its parameters, counts and sub-filters, and
//! their encoding in the metadata key. The filter's logic and commands are `cmd::bloom`.

use bloomkv::filter::math;

/// One sub-filter.
#[derive(Clone, Debug, PartialEq)]
pub struct Layer {
    /// Items it is sized for.
    pub capacity: u64,
    /// Items added to it.
    pub items: u64,
    /// Its size in bits (a multiple of 512).
    pub bits: u64,
    /// Probes per item.
    pub k: u32,
    /// Its target false-positive rate.
    pub error: f64,
}

/// A filter's parameters and counts, kept in its metadata key.
#[derive(Clone, Debug, PartialEq)]
pub struct BloomMeta {
    /// Error rate asked for at creation.
    pub error_rate: f64,
    /// Capacity asked for at creation.
    pub capacity: u64,
    /// Growth factor of each new sub-filter.
    pub expansion: u32,
    /// True when the filter may not add sub-filters.
    pub nonscaling: bool,
    /// Items added (the count BF.CARD answers).
    pub items: u64,
    /// The sub-filters, oldest first.
    pub layers: Vec<Layer>,
}

impl BloomMeta {
    /// Appends the encoding (after the type tag) to `o`.
    pub fn encode(&self, o: &mut Vec<u8>) {
        o.extend_from_slice(&self.error_rate.to_le_bytes());
        o.extend_from_slice(&self.capacity.to_le_bytes());
        o.extend_from_slice(&self.expansion.to_le_bytes());
        o.push(u8::from(self.nonscaling));
        o.extend_from_slice(&self.items.to_le_bytes());
        o.extend_from_slice(&(self.layers.len() as u32).to_le_bytes());
        for l in &self.layers {
            o.extend_from_slice(&l.capacity.to_le_bytes());
            o.extend_from_slice(&l.items.to_le_bytes());
            o.extend_from_slice(&l.bits.to_le_bytes());
            o.extend_from_slice(&l.k.to_le_bytes());
            o.extend_from_slice(&l.error.to_le_bytes());
        }
    }

    /// Decodes what [`BloomMeta::encode`] wrote; `None` if damaged.
    pub fn decode(mut b: &[u8]) -> Option<BloomMeta> {
        fn take<const N: usize>(b: &mut &[u8]) -> Option<[u8; N]> {
            let (head, rest) = b.split_at_checked(N)?;
            *b = rest;
            head.try_into().ok()
        }
        let error_rate = f64::from_le_bytes(take(&mut b)?);
        let capacity = u64::from_le_bytes(take(&mut b)?);
        let expansion = u32::from_le_bytes(take(&mut b)?);
        let nonscaling = take::<1>(&mut b)?[0] != 0;
        let items = u64::from_le_bytes(take(&mut b)?);
        let n = u32::from_le_bytes(take(&mut b)?);
        let mut layers = Vec::with_capacity((n as usize).min(64));
        for _ in 0..n {
            let l = Layer {
                capacity: u64::from_le_bytes(take(&mut b)?),
                items: u64::from_le_bytes(take(&mut b)?),
                bits: u64::from_le_bytes(take(&mut b)?),
                k: u32::from_le_bytes(take(&mut b)?),
                error: f64::from_le_bytes(take(&mut b)?),
            };
            if l.bits == 0 || !l.bits.is_multiple_of(math::BLOCK_BITS) || l.k == 0 {
                return None;
            }
            layers.push(l);
        }
        (b.is_empty() && !layers.is_empty()).then_some(BloomMeta {
            error_rate,
            capacity,
            expansion,
            nonscaling,
            items,
            layers,
        })
    }
}
