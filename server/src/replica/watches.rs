//! WATCH in cluster mode: which connection tokens watch which keys, and whether a write
//! touched them since, as part of the replicated state.
//!
//! A WATCH, an EXEC's check and every write's marks must fall in one order on every node,
//! so the watch table is state-machine state: `WATCH` is a log entry that registers the
//! connection's token on its keys, every applied write marks the tokens watching the keys
//! it touched, and `EXEC` (a log entry too) finds its token clean or dirty exactly as every
//! other node does. The table lives in memory for speed and is written, record by record,
//! into the batch of the apply call that changes it (`0x00 "watch/" be64(token)`), so
//! [`WatchTable::load`] rebuilds the same table after a restart or a snapshot install.
//!
//! A token whose connection vanished without an `UNWATCH` (its node crashed) is dropped
//! by the first expiry sweep an hour after its WATCH; an `EXEC` of a token no longer in
//! the table fails (nil), as a WATCH that was broken.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use bloomkv::{Db, WriteBatch};

use crate::store::keys::WATCH_PREFIX;
use crate::store::watch::Touched;

/// How long a token's watches live without an EXEC or UNWATCH.
pub const WATCH_TTL_MS: u64 = 3_600_000;

/// One connection's watched keys.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Watch {
    /// Leader time of its first WATCH (for the hour's limit).
    pub since_ms: u64,
    /// A watched key was written since it was watched.
    pub dirty: bool,
    /// The keys, each with whether it was expired but not yet reclaimed when watched (its
    /// removal is then no change, as in Redis).
    pub keys: BTreeMap<Vec<u8>, bool>,
}

impl Watch {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.keys.len() * 16);
        out.extend_from_slice(&self.since_ms.to_le_bytes());
        out.push(u8::from(self.dirty));
        out.extend_from_slice(&(self.keys.len() as u32).to_le_bytes());
        for (k, stale) in &self.keys {
            out.push(u8::from(*stale));
            out.extend_from_slice(&(k.len() as u32).to_le_bytes());
            out.extend_from_slice(k);
        }
        out
    }

    fn decode(b: &[u8]) -> Option<Watch> {
        let mut pos = 0usize;
        let mut take = |n: usize| -> Option<&[u8]> {
            let s = b.get(pos..pos.checked_add(n)?)?;
            pos += n;
            Some(s)
        };
        let since_ms = u64::from_le_bytes(take(8)?.try_into().ok()?);
        let dirty = take(1)?[0] != 0;
        let n = u32::from_le_bytes(take(4)?.try_into().ok()?);
        let mut keys = BTreeMap::new();
        for _ in 0..n {
            let stale = take(1)?[0] != 0;
            let len = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
            keys.insert(take(len)?.to_vec(), stale);
        }
        (pos == b.len()).then_some(Watch {
            since_ms,
            dirty,
            keys,
        })
    }
}

fn record_key(token: u64) -> Vec<u8> {
    let mut k = WATCH_PREFIX.to_vec();
    k.extend_from_slice(&token.to_be_bytes());
    k
}

/// The replicated watch table (see the module doc).
#[derive(Debug, Default)]
pub struct WatchTable {
    tokens: BTreeMap<u64, Watch>,
    by_key: HashMap<Vec<u8>, BTreeSet<u64>>,
}

impl WatchTable {
    /// The table the records in `db` describe.
    ///
    /// # Errors
    /// Engine errors, or a damaged record (named by its token).
    pub fn load(db: &Db) -> Result<WatchTable, String> {
        let mut t = WatchTable::default();
        let mut end = WATCH_PREFIX.to_vec();
        if let Some(last) = end.last_mut() {
            *last += 1;
        }
        for kv in db.scan(WATCH_PREFIX..end.as_slice()) {
            let (k, v) = kv.map_err(|e| format!("reading the watch table: {e}"))?;
            let token = k[WATCH_PREFIX.len()..]
                .try_into()
                .map(u64::from_be_bytes)
                .map_err(|_| format!("watch record with a bad key {k:?}"))?;
            let w = Watch::decode(&v).ok_or_else(|| format!("watch record {token} is damaged"))?;
            t.index(token, &w);
            t.tokens.insert(token, w);
        }
        Ok(t)
    }

    /// True while no connection watches anything (writes then skip the bookkeeping).
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Number of tokens (connections) watching.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Every watched key.
    pub fn keys(&self) -> impl Iterator<Item = &Vec<u8>> {
        self.by_key.keys()
    }

    fn index(&mut self, token: u64, w: &Watch) {
        for k in w.keys.keys() {
            self.by_key.entry(k.clone()).or_default().insert(token);
        }
    }

    fn unindex(&mut self, token: u64, w: &Watch) {
        for k in w.keys.keys() {
            if let Some(set) = self.by_key.get_mut(k) {
                set.remove(&token);
                if set.is_empty() {
                    self.by_key.remove(k);
                }
            }
        }
    }

    /// Adds `keys` (each with its stale flag) to `token`'s watches, as of leader time
    /// `now_ms`; the record goes into `batch`.
    pub fn watch(
        &mut self,
        token: u64,
        keys: impl IntoIterator<Item = (Vec<u8>, bool)>,
        now_ms: u64,
        batch: &mut WriteBatch,
    ) {
        let mut w = self.tokens.remove(&token).unwrap_or(Watch {
            since_ms: now_ms,
            ..Watch::default()
        });
        for (k, stale) in keys {
            // A key watched again keeps its first flag (Redis ignores a repeated WATCH).
            w.keys.entry(k).or_insert(stale);
        }
        self.index(token, &w);
        batch.put(record_key(token), w.encode());
        self.tokens.insert(token, w);
    }

    /// Forgets `token` (UNWATCH, EXEC); returns its watches.
    pub fn remove(&mut self, token: u64, batch: &mut WriteBatch) -> Option<Watch> {
        let w = self.tokens.remove(&token)?;
        self.unindex(token, &w);
        batch.delete(record_key(token));
        Some(w)
    }

    /// Marks the tokens watching the keys a log entry touched (a key removed while its
    /// watch is stale only stops being stale).
    pub fn touch(&mut self, touched: &[Touched], batch: &mut WriteBatch) {
        let mut changed = BTreeSet::new();
        // Keys are watched by name, whatever their database: a write to a key of the same
        // name in another database breaks the watch too (an extra EXEC failure, never a
        // missed change).
        for (_, key, gone) in touched {
            let Some(tokens) = self.by_key.get(key) else {
                continue;
            };
            for t in tokens {
                let Some(w) = self.tokens.get_mut(t) else {
                    continue;
                };
                let stale = w.keys.get_mut(key);
                match stale {
                    Some(s) if *s && *gone => *s = false,
                    _ if w.dirty => continue,
                    _ => w.dirty = true,
                }
                changed.insert(*t);
            }
        }
        for t in changed {
            if let Some(w) = self.tokens.get(&t) {
                batch.put(record_key(t), w.encode());
            }
        }
    }

    /// Drops tokens watched for longer than [`WATCH_TTL_MS`] at leader time `now_ms`.
    pub fn expire(&mut self, now_ms: u64, batch: &mut WriteBatch) -> usize {
        let old: Vec<u64> = self
            .tokens
            .iter()
            .filter(|(_, w)| w.since_ms.saturating_add(WATCH_TTL_MS) < now_ms)
            .map(|(t, _)| *t)
            .collect();
        for t in &old {
            self.remove(*t, batch);
        }
        old.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_rebuild_the_same_table() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), bloomkv::Options::default()).unwrap();
        let mut t = WatchTable::default();
        let mut b = WriteBatch::new();
        t.watch(
            5,
            [(b"a".to_vec(), false), (b"b".to_vec(), true)],
            100,
            &mut b,
        );
        t.watch(9, [(b"a".to_vec(), false)], 200, &mut b);
        t.touch(&[(0, b"b".to_vec(), true)], &mut b);
        assert!(!t.tokens[&5].dirty, "the stale key's removal is no change");
        t.touch(&[(0, b"a".to_vec(), false)], &mut b);
        assert!(t.tokens[&5].dirty && t.tokens[&9].dirty);
        t.watch(11, [(b"c".to_vec(), false)], 300, &mut b);
        assert!(t.remove(11, &mut b).is_some());
        db.write(b).unwrap();
        let back = WatchTable::load(&db).unwrap();
        assert_eq!(back.tokens, t.tokens);
        assert_eq!(back.by_key, t.by_key);
        let mut b = WriteBatch::new();
        let mut t = back;
        assert_eq!(t.expire(100 + WATCH_TTL_MS + 1, &mut b), 1);
        assert_eq!(t.len(), 1);
        assert!(t.keys().all(|k| k == b"a"));
    }

    #[test]
    fn a_damaged_record_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), bloomkv::Options::default()).unwrap();
        db.put(record_key(3), [1, 2, 3]).unwrap();
        let e = WatchTable::load(&db).unwrap_err();
        assert!(e.contains("watch record 3"), "{e}");
    }
}
