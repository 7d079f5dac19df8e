//! The latency monitor: with `latency-monitor-threshold` set to N milliseconds (0, the
//! default, turns it off), every command that took N ms or more is a sample of the event
//! `command` (or `fast-command` for commands flagged fast), kept as Redis keeps them: one
//! sample per second (the worst of that second), the newest 160 per event, and the worst
//! ever. LATENCY LATEST, HISTORY and RESET read them.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

use crate::resp::Reply;

/// Samples kept per event (Redis: 160).
const HISTORY: usize = 160;

#[derive(Debug, Default)]
struct Event {
    /// (Unix seconds, milliseconds), oldest first, one per second.
    samples: VecDeque<(u64, u64)>,
    /// The worst sample ever (since the last reset).
    max_ms: u64,
}

/// Every event's samples, shared by every connection.
#[derive(Debug, Default)]
pub struct Latency {
    threshold_ms: AtomicU64,
    events: Mutex<BTreeMap<&'static str, Event>>,
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Latency {
    /// `latency-monitor-threshold` in milliseconds; 0 when off.
    pub fn threshold_ms(&self) -> u64 {
        self.threshold_ms.load(Ordering::Relaxed)
    }

    /// Sets `latency-monitor-threshold`.
    pub fn set_threshold_ms(&self, ms: u64) {
        self.threshold_ms.store(ms, Ordering::Relaxed);
    }

    /// Notes a command that took `usec` µs, if the monitor is on and it was that slow;
    /// `fast` (asked only then) says whether it is flagged fast.
    pub fn command(&self, usec: u64, fast: impl FnOnce() -> bool) {
        let threshold = self.threshold_ms();
        let ms = usec / 1000;
        if threshold > 0 && ms >= threshold {
            let event = if fast() { "fast-command" } else { "command" };
            self.add(event, now_secs(), ms);
        }
    }

    fn add(&self, event: &'static str, secs: u64, ms: u64) {
        let mut events = self.events.lock();
        let e = events.entry(event).or_default();
        e.max_ms = e.max_ms.max(ms);
        match e.samples.back_mut() {
            Some((t, worst)) if *t == secs => *worst = (*worst).max(ms),
            _ => {
                if e.samples.len() == HISTORY {
                    e.samples.pop_front();
                }
                e.samples.push_back((secs, ms));
            }
        }
    }

    /// `LATENCY LATEST`: per event, its name, the latest sample's time and milliseconds,
    /// and the worst ever.
    pub fn latest(&self) -> Reply {
        let events = self.events.lock();
        Reply::Array(
            events
                .iter()
                .filter_map(|(name, e)| {
                    let &(t, ms) = e.samples.back()?;
                    Some(Reply::Array(vec![
                        Reply::bulk(name.to_string()),
                        Reply::Int(t as i64),
                        Reply::Int(ms as i64),
                        Reply::Int(e.max_ms as i64),
                    ]))
                })
                .collect(),
        )
    }

    /// `LATENCY HISTORY event`: its samples, oldest first, as (time, milliseconds) pairs.
    pub fn history(&self, event: &[u8]) -> Reply {
        let events = self.events.lock();
        let samples = events
            .iter()
            .find(|(name, _)| name.as_bytes() == event)
            .map(|(_, e)| {
                e.samples
                    .iter()
                    .map(|&(t, ms)| Reply::Array(vec![Reply::Int(t as i64), Reply::Int(ms as i64)]))
                    .collect()
            })
            .unwrap_or_default();
        Reply::Array(samples)
    }

    /// `LATENCY RESET [event ...]`: forgets the named events (every event when none is
    /// named); answers how many were forgotten.
    pub fn reset(&self, names: &[bytes::Bytes]) -> i64 {
        let mut events = self.events.lock();
        if names.is_empty() {
            let n = events.len();
            events.clear();
            return n as i64;
        }
        let before = events.len();
        events.retain(|name, _| !names.iter().any(|n| n.as_ref() == name.as_bytes()));
        (before - events.len()) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sample_per_second_the_worst_and_160_kept() {
        let l = Latency::default();
        l.add("command", 100, 5);
        l.add("command", 100, 9);
        l.add("command", 100, 7);
        l.add("command", 101, 3);
        {
            let events = l.events.lock();
            assert_eq!(events["command"].samples, [(100, 9), (101, 3)]);
            assert_eq!(events["command"].max_ms, 9);
        }
        for s in 0..500 {
            l.add("fast-command", 1_000 + s, s);
        }
        let events = l.events.lock();
        let e = &events["fast-command"];
        assert_eq!(e.samples.len(), HISTORY);
        assert_eq!(
            e.samples.front(),
            Some(&(1_000 + 500 - HISTORY as u64, 500 - HISTORY as u64))
        );
    }

    #[test]
    fn off_by_default_and_below_the_threshold() {
        let l = Latency::default();
        l.command(50_000, || false);
        assert!(l.events.lock().is_empty());
        l.set_threshold_ms(10);
        l.command(9_999, || false);
        assert!(l.events.lock().is_empty());
        l.command(10_000, || true);
        assert_eq!(
            l.events.lock().keys().copied().collect::<Vec<_>>(),
            ["fast-command"]
        );
        assert_eq!(l.reset(&[bytes::Bytes::from_static(b"nope")]), 0);
        assert_eq!(l.reset(&[]), 1);
    }
}
