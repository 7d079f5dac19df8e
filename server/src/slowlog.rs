//! SLOWLOG: the commands that ran longer than `slowlog-log-slower-than` microseconds (10,000
//! by default; 0 logs every command, a negative value none), the newest `slowlog-max-len`
//! (128) of them, as Redis keeps them: each with an id, its Unix time, its duration, its
//! arguments (at most 32, each cut to 128 bytes), the client's address and name.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};

use bytes::Bytes;
use parking_lot::Mutex;

use crate::resp::Reply;

/// Arguments kept per entry (the last one says how many more there were).
const MAX_ARGS: usize = 32;
/// Bytes kept per argument.
const MAX_ARG_BYTES: usize = 128;

/// One logged command.
#[derive(Debug)]
struct Entry {
    id: u64,
    unix_secs: u64,
    micros: u64,
    args: Vec<Vec<u8>>,
    client: String,
    name: Vec<u8>,
}

/// The log, shared by every connection.
#[derive(Debug)]
pub struct SlowLog {
    entries: Mutex<VecDeque<Entry>>,
    next_id: AtomicU64,
    slower_than: AtomicI64,
    max_len: AtomicUsize,
}

impl Default for SlowLog {
    fn default() -> SlowLog {
        SlowLog {
            entries: Mutex::new(VecDeque::new()),
            next_id: AtomicU64::new(0),
            slower_than: AtomicI64::new(10_000),
            max_len: AtomicUsize::new(128),
        }
    }
}

fn kept(args: &[Bytes]) -> Vec<Vec<u8>> {
    let shown = if args.len() > MAX_ARGS {
        MAX_ARGS - 1
    } else {
        args.len()
    };
    let mut out: Vec<Vec<u8>> = args[..shown]
        .iter()
        .map(|a| {
            if a.len() > MAX_ARG_BYTES {
                let mut v = a[..MAX_ARG_BYTES].to_vec();
                v.extend_from_slice(
                    format!("... ({} more bytes)", a.len() - MAX_ARG_BYTES).as_bytes(),
                );
                v
            } else {
                a.to_vec()
            }
        })
        .collect();
    if shown < args.len() {
        out.push(format!("... ({} more arguments)", args.len() - shown).into_bytes());
    }
    out
}

impl SlowLog {
    /// Logs a command that took `micros` if that is over the threshold (`client` gives the
    /// client's address then). Cheap when it is not: one atomic load.
    pub fn record(
        &self,
        args: &[Bytes],
        micros: u64,
        client: impl FnOnce() -> String,
        name: Option<&[u8]>,
    ) {
        let threshold = self.slower_than.load(Ordering::Relaxed);
        if threshold < 0 || micros < threshold as u64 {
            return;
        }
        let max = self.max_len.load(Ordering::Relaxed);
        if max == 0 {
            return;
        }
        let unix_secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let entry = Entry {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            unix_secs,
            micros,
            args: kept(args),
            client: client(),
            name: name.unwrap_or_default().to_vec(),
        };
        let mut e = self.entries.lock();
        e.push_front(entry);
        e.truncate(max);
    }

    /// `SLOWLOG GET [count]`: the newest `count` entries (10 by default, all for -1).
    pub fn get(&self, count: Option<i64>) -> Reply {
        let e = self.entries.lock();
        let n = match count {
            None => 10,
            Some(c) if c < 0 => e.len(),
            Some(c) => (c as usize).min(e.len()),
        };
        Reply::Array(
            e.iter()
                .take(n)
                .map(|x| {
                    Reply::Array(vec![
                        Reply::Int(x.id as i64),
                        Reply::Int(x.unix_secs as i64),
                        Reply::Int(x.micros as i64),
                        Reply::Array(x.args.iter().map(|a| Reply::bulk(a.clone())).collect()),
                        Reply::bulk(x.client.clone()),
                        Reply::bulk(x.name.clone()),
                    ])
                })
                .collect(),
        )
    }

    /// `SLOWLOG LEN`.
    pub fn len(&self) -> usize {
        self.entries.lock().len()
    }

    /// True when nothing is logged.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `SLOWLOG RESET`.
    pub fn reset(&self) {
        self.entries.lock().clear();
    }

    /// `slowlog-log-slower-than`, in microseconds.
    pub fn slower_than(&self) -> i64 {
        self.slower_than.load(Ordering::Relaxed)
    }

    /// `slowlog-max-len`.
    pub fn max_len(&self) -> usize {
        self.max_len.load(Ordering::Relaxed)
    }

    /// CONFIG SET slowlog-log-slower-than.
    pub fn set_slower_than(&self, micros: i64) {
        self.slower_than.store(micros, Ordering::Relaxed);
    }

    /// CONFIG SET slowlog-max-len (older entries beyond it go at once).
    pub fn set_max_len(&self, n: usize) {
        self.max_len.store(n, Ordering::Relaxed);
        self.entries.lock().truncate(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_arguments_and_many_arguments_are_cut_as_redis_cuts_them() {
        let long = Bytes::from(vec![b'x'; 130]);
        let k = kept(&[Bytes::from_static(b"SET"), long]);
        assert_eq!(k[1].len(), 128 + "... (2 more bytes)".len());
        assert!(k[1].ends_with(b"... (2 more bytes)"));
        let many: Vec<Bytes> = (0..40).map(|i| Bytes::from(i.to_string())).collect();
        let k = kept(&many);
        assert_eq!(k.len(), 32);
        assert_eq!(k[31], b"... (9 more arguments)".to_vec());
    }

    #[test]
    fn the_threshold_and_the_length_bound_the_log() {
        let log = SlowLog::default();
        log.record(&[Bytes::from_static(b"GET")], 5, String::new, None);
        assert_eq!(log.len(), 0);
        log.set_slower_than(0);
        log.set_max_len(2);
        for _ in 0..3 {
            log.record(&[Bytes::from_static(b"GET")], 5, String::new, None);
        }
        assert_eq!(log.len(), 2);
        log.set_slower_than(-1);
        log.record(&[Bytes::from_static(b"GET")], 1_000_000, String::new, None);
        assert_eq!(log.len(), 2);
        log.reset();
        assert!(log.is_empty());
    }
}
