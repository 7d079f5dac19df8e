//! A token bucket: paces a stream of bytes to a rate, in pauses of at least
//! [`MIN_PAUSE`], so that a writer sleeps seldom and briefly rather than on every write.
//! The clock is a parameter ([`TokenBucket::charge`] takes `now`), so the arithmetic is tested
//! without sleeping.

use std::time::{Duration, Instant};

/// Pauses shorter than this are carried over to a later charge instead of slept: sleeping
/// costs a system call and rounds up to the scheduler's tick anyway.
pub(crate) const MIN_PAUSE: Duration = Duration::from_millis(1);

/// The pacing state of one stream.
#[derive(Debug, Default)]
pub(crate) struct TokenBucket {
    /// When the bytes charged so far will have been paid for at the rates they were charged
    /// at; `None` when nothing is owed.
    paid_until: Option<Instant>,
}

impl TokenBucket {
    /// Charges `bytes` at `bytes_per_sec` at time `now`, and returns how long the caller
    /// should pause now: zero while the debt is under [`MIN_PAUSE`]. Time the stream spent
    /// idle is not banked (a stream that was quiet gets no burst beyond the current debt).
    pub(crate) fn charge(&mut self, now: Instant, bytes: u64, bytes_per_sec: u64) -> Duration {
        let start = self.paid_until.filter(|t| *t > now).unwrap_or(now);
        let cost = Duration::from_secs_f64(bytes as f64 / bytes_per_sec.max(1) as f64);
        let until = start + cost;
        self.paid_until = Some(until);
        let owed = until - now;
        if owed >= MIN_PAUSE {
            owed
        } else {
            Duration::ZERO
        }
    }

    /// Forgets any debt (the stream is no longer paced).
    pub(crate) fn reset(&mut self) {
        self.paid_until = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn small_charges_accumulate_until_a_pause_is_worth_it() {
        let mut b = TokenBucket::default();
        let t0 = Instant::now();
        // 1 KiB at 1 MiB/s is ~0.98 ms: carried over.
        assert_eq!(b.charge(t0, 1024, MIB), Duration::ZERO);
        // The second KiB brings the debt to ~1.95 ms: pause for all of it.
        let pause = b.charge(t0, 1024, MIB);
        assert!(
            (Duration::from_micros(1900)..Duration::from_micros(2000)).contains(&pause),
            "{pause:?}"
        );
    }

    #[test]
    fn the_rate_holds_over_many_charges() {
        let mut b = TokenBucket::default();
        let mut now = Instant::now();
        let start = now;
        // 10 MiB in 4 KiB writes at 5 MiB/s, the writer sleeping exactly what it is told.
        for _ in 0..(10 * MIB / 4096) {
            now += b.charge(now, 4096, 5 * MIB);
        }
        let elapsed = now - start;
        // Everything but the last sub-millisecond debt is paid for: 2 s.
        assert!(
            (Duration::from_millis(1999)..=Duration::from_millis(2000)).contains(&elapsed),
            "{elapsed:?}"
        );
    }

    #[test]
    fn idle_time_is_not_banked_and_reset_forgets_debt() {
        let mut b = TokenBucket::default();
        let t0 = Instant::now();
        assert_eq!(b.charge(t0, MIB, MIB), Duration::from_secs(1));
        // Ten seconds later the debt is long paid; a new charge starts from now.
        let later = t0 + Duration::from_secs(10);
        assert_eq!(b.charge(later, MIB / 2, MIB), Duration::from_millis(500));
        b.reset();
        assert_eq!(b.charge(later, MIB / 2, MIB), Duration::from_millis(500));
    }
}
