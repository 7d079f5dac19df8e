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

/// Where a [`RateLimiter`] gets the time and how it waits: the real clock, or a test's.
pub(crate) trait Clock: Send + Sync + std::fmt::Debug {
    fn now(&self) -> Instant;
    fn sleep(&self, d: Duration);
}

/// The real clock.
#[derive(Debug)]
pub(crate) struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }
}

/// A rate shared by every thread that writes through it (`Options::compaction_bytes_per_sec`
/// for the compaction threads): each caller charges what it wrote and sleeps off the debt
/// outside the lock, so together they stay at the rate.
#[derive(Debug)]
pub(crate) struct RateLimiter {
    bytes_per_sec: u64,
    bucket: parking_lot::Mutex<TokenBucket>,
    clock: Box<dyn Clock>,
}

impl RateLimiter {
    pub(crate) fn new(bytes_per_sec: u64) -> RateLimiter {
        RateLimiter::with_clock(bytes_per_sec, Box::new(SystemClock))
    }

    pub(crate) fn with_clock(bytes_per_sec: u64, clock: Box<dyn Clock>) -> RateLimiter {
        RateLimiter {
            bytes_per_sec,
            bucket: parking_lot::Mutex::new(TokenBucket::default()),
            clock,
        }
    }

    /// Accounts for `bytes` written, pausing the caller as long as the rate requires.
    pub(crate) fn wrote(&self, bytes: u64) {
        let now = self.clock.now();
        let pause = self.bucket.lock().charge(now, bytes, self.bytes_per_sec);
        if !pause.is_zero() {
            self.clock.sleep(pause);
        }
    }
}

#[cfg(test)]
mod limiter_tests {
    use std::sync::Arc;

    use parking_lot::Mutex;

    use super::*;

    /// A clock that only moves when someone sleeps on it.
    #[derive(Debug)]
    struct TestClock {
        start: Instant,
        elapsed: Arc<Mutex<Duration>>,
    }

    impl Clock for TestClock {
        fn now(&self) -> Instant {
            self.start + *self.elapsed.lock()
        }
        fn sleep(&self, d: Duration) {
            *self.elapsed.lock() += d;
        }
    }

    fn limiter(rate: u64) -> (RateLimiter, Arc<Mutex<Duration>>) {
        let elapsed = Arc::new(Mutex::new(Duration::ZERO));
        let clock = TestClock {
            start: Instant::now(),
            elapsed: Arc::clone(&elapsed),
        };
        (RateLimiter::with_clock(rate, Box::new(clock)), elapsed)
    }

    #[test]
    fn writes_through_the_limiter_take_their_bytes_over_the_rate() {
        let (l, elapsed) = limiter(4 << 20);
        // 8 MiB in 64 KiB pieces at 4 MiB/s: 2 s.
        for _ in 0..128 {
            l.wrote(64 << 10);
        }
        let t = *elapsed.lock();
        assert!(
            (Duration::from_millis(1999)..=Duration::from_secs(2)).contains(&t),
            "{t:?}"
        );
    }

    #[test]
    fn threads_share_one_rate() {
        let (l, elapsed) = limiter(1 << 20);
        let l = Arc::new(l);
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let l = Arc::clone(&l);
                std::thread::spawn(move || {
                    for _ in 0..16 {
                        l.wrote(16 << 10);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        // 4 x 256 KiB at 1 MiB/s: the clock moved by at least the last pause's 1 s, less
        // the carried-over remainder under a millisecond. (With a test clock that moves on
        // every sleep, concurrent sleepers can add up to more; never less.)
        let t = *elapsed.lock();
        assert!(t >= Duration::from_millis(999), "{t:?}");
    }
}
