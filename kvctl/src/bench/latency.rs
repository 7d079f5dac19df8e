//! Per-operation latencies, kept exactly (one `u32` of nanoseconds per operation) so the
//! percentiles are not bucketed.

/// Latencies of one phase's operations.
#[derive(Clone, Debug, Default)]
pub struct Latencies {
    nanos: Vec<u32>,
}

impl Latencies {
    /// An empty record with room for `ops` operations.
    pub fn with_capacity(ops: usize) -> Self {
        Latencies {
            nanos: Vec::with_capacity(ops),
        }
    }

    /// Records one operation (saturating at about 4.3 s).
    pub fn record(&mut self, nanos: u128) {
        self.nanos.push(u32::try_from(nanos).unwrap_or(u32::MAX));
    }

    /// Adds every operation `other` recorded (e.g. another thread's).
    pub fn extend(&mut self, other: &Latencies) {
        self.nanos.extend_from_slice(&other.nanos);
    }

    /// The `q`-quantile (0..=1) in nanoseconds, nearest rank; `None` without operations.
    pub fn quantile(&mut self, q: f64) -> Option<u64> {
        if self.nanos.is_empty() {
            return None;
        }
        let last = self.nanos.len() - 1;
        let rank = ((q.clamp(0.0, 1.0) * last as f64).round() as usize).min(last);
        let (_, v, _) = self.nanos.select_nth_unstable(rank);
        Some(u64::from(*v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_by_rank() {
        let mut l = Latencies::with_capacity(100);
        assert_eq!(l.quantile(0.5), None);
        for v in (1..=100).rev() {
            l.record(v);
        }
        assert_eq!(l.quantile(0.5), Some(51));
        assert_eq!(l.quantile(0.99), Some(99));
        assert_eq!(l.quantile(1.0), Some(100));
        l.record(u128::MAX);
        assert_eq!(l.quantile(1.0), Some(u64::from(u32::MAX)));
    }
}
