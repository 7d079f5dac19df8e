//! Delayed writes (RocksDB's idea): before writers would have to stop dead, they are paced to
//! a rate that falls as the pressure grows, so a writer slows gradually and compactions and
//! flushes get the time to catch up.
//!
//! Two pressures count:
//! * level 0 holding `level0_slowdown_writes` tables or more: the rate starts at
//!   [`MAX_DELAYED_WRITE_RATE`] and halves with every table beyond that, until writes stop at
//!   `level0_stop_writes`;
//! * a frozen memtable still waiting for its flush while the active one fills: from half full
//!   the rate halves with every eighth of the memtable written, so writes slow down before
//!   they would have to wait for the flush. Once the active memtable is full (a single write
//!   larger than the memtable fills it at once) this pressure no longer delays: the next
//!   write freezes it and waits (stopped) for the flush, and pacing it as if the memtable
//!   were over-full would charge that write at the lowest rate on top of the wait (LevelDB's
//!   RepeatedWritesToSameKey, 200 KB values in a 100 KB memtable, waited ~12 s per put).
//!
//! The slower of the two applies. Writers are paced in pauses of at least a millisecond (see
//! [`crate::util::rate`]), slept in slices of [`DELAY_SLICE`]: a pause ends early as soon as the
//! pressure it was computed for is gone.

use std::time::Duration;

use crate::options::Options;

/// The rate writes are paced to when pressure begins: above what one writer thread sustains
/// on most disks once compactions run (so the first steps cost little), halved per step.
pub(crate) const MAX_DELAYED_WRITE_RATE: u64 = 16 << 20;

/// The longest a delayed writer sleeps before it re-checks the pressure (it is also woken
/// whenever a flush or compaction finishes).
pub(crate) const DELAY_SLICE: Duration = Duration::from_millis(1);

/// Halvings beyond which the rate stops falling (16 MiB/s >> 10 = 16 KiB/s).
const MAX_STEPS: u32 = 10;

/// The rate (bytes of batches per second) writes are paced to with `l0_files` level-0
/// tables, `frozen_waiting` when a frozen memtable is not yet flushed, and the active memtable
/// `active_fill` full (1.0 = `memtable_bytes`); `None` when writes run free. A full active
/// memtable (`active_fill >= 1.0`) adds no delay: the write that meets it waits for the flush.
pub(crate) fn delayed_write_rate(
    opts: &Options,
    l0_files: usize,
    frozen_waiting: bool,
    active_fill: f64,
) -> Option<u64> {
    let from_l0 = l0_files
        .checked_sub(opts.effective_level0_slowdown())
        .map(|beyond| beyond as u32);
    let from_memtable = (frozen_waiting && (0.5..1.0).contains(&active_fill))
        .then(|| ((active_fill - 0.5) * 8.0).clamp(0.0, MAX_STEPS as f64) as u32);
    let steps = match (from_l0, from_memtable) {
        (None, None) => return None,
        (a, b) => a.unwrap_or(0).max(b.unwrap_or(0)),
    };
    Some(MAX_DELAYED_WRITE_RATE >> steps.min(MAX_STEPS))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> Options {
        Options {
            level0_compaction_trigger: 4,
            level0_slowdown_writes: 8,
            level0_stop_writes: 12,
            ..Options::default()
        }
    }

    #[test]
    fn level_zero_below_the_slowdown_runs_free_and_each_table_beyond_halves_the_rate() {
        let o = opts();
        for l0 in 0..8 {
            assert_eq!(delayed_write_rate(&o, l0, false, 0.9), None, "{l0}");
        }
        let rates: Vec<u64> = (8..12)
            .map(|l0| delayed_write_rate(&o, l0, false, 0.0).unwrap())
            .collect();
        assert_eq!(
            rates,
            [16 << 20, 8 << 20, 4 << 20, 2 << 20],
            "8..12 level-0 tables"
        );
        // Never zero, however far past the stop level 0 has got.
        assert_eq!(delayed_write_rate(&o, 1000, false, 0.0), Some(16 << 10));
    }

    /// The pace follows the slowdown as `Options` brings it within trigger..stop: with only
    /// the stop lowered below the default slowdown, writes slow one table before the stop.
    #[test]
    fn a_slowdown_past_the_stop_slows_writes_just_before_the_stop() {
        let o = Options {
            level0_stop_writes: 12,
            ..Options::default()
        };
        assert!(o.level0_slowdown_writes >= 12, "precondition: default slowdown past the stop");
        assert_eq!(delayed_write_rate(&o, 10, false, 0.0), None);
        assert_eq!(
            delayed_write_rate(&o, 11, false, 0.0),
            Some(MAX_DELAYED_WRITE_RATE)
        );
    }

    #[test]
    fn a_waiting_frozen_memtable_slows_writes_as_the_active_one_fills() {
        let o = opts();
        assert_eq!(delayed_write_rate(&o, 0, true, 0.49), None);
        assert_eq!(
            delayed_write_rate(&o, 0, false, 0.99),
            None,
            "nothing waits"
        );
        assert_eq!(delayed_write_rate(&o, 0, true, 0.5), Some(16 << 20));
        assert_eq!(delayed_write_rate(&o, 0, true, 0.76), Some(4 << 20));
        assert_eq!(delayed_write_rate(&o, 0, true, 0.99), Some(2 << 20));
        // The slower of the two pressures applies.
        assert_eq!(delayed_write_rate(&o, 11, true, 0.5), Some(2 << 20));
        assert_eq!(delayed_write_rate(&o, 8, true, 0.99), Some(2 << 20));
    }

    #[test]
    fn a_full_memtable_is_not_charged_as_over_full() {
        let o = opts();
        // One write larger than the memtable: the write after it waits for the flush, so
        // the memtable pressure adds no pacing (it would have been the lowest rate).
        assert_eq!(delayed_write_rate(&o, 0, true, 1.0), None);
        assert_eq!(delayed_write_rate(&o, 0, true, 2.0), None);
        // Level 0's pressure still applies.
        assert_eq!(delayed_write_rate(&o, 9, true, 2.0), Some(8 << 20));
    }
}
