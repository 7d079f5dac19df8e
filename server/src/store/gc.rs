//! Space reclaimed without a read: the compaction filter that drops what no command will ever
//! read again, and the sweep that makes compactions pass over a big dropped collection soon.
//!
//! * A **member, field, element or chunk** (any versioned sub-key) is garbage once its
//!   collection's metadata no longer names its version: the key was deleted, overwritten,
//!   re-created (under a newer version), or has expired. Versions are never reused and expiry
//!   times never move back for a key that has expired (commands see it as absent), so what is
//!   garbage stays garbage, which is what the engine asks of a filter.
//! * An **expired string's value** is cut to an empty one: the metadata key stays (DBSIZE and
//!   the expiry index still count it until the reclaimer removes it) but its bytes go.
//!
//! Members of one collection sit next to each other, so the filter looks the owner's
//! metadata up once per run of members (a per-compaction cache), at the state the
//! compaction reads.
//!
//! Compactions reach data only as the tree grows above it, so a big collection deleted at
//! the bottom of a quiet tree would keep its space for a long time: [`Sweeps`] queues the
//! key ranges of collections of [`SWEEP_MIN`] or more entries that a commit dropped, and the
//! housekeeping thread compacts each range (`Db::compact_range`), which filters it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bloomkv::{CompactionDecision, CompactionFilter, CompactionFilterContext};
use parking_lot::Mutex;

use super::keys::{self, meta_key, prefix_end, sub_prefix, tag};
use super::meta::{Meta, Record};

/// Expired string values longer than this are cut by compaction.
const STUB_OVER: usize = 64;

/// Collections of at least this many engine keys get their range compacted soon after they
/// are dropped.
pub const SWEEP_MIN: u64 = 4096;

/// Most ranges waiting for a sweep (more are left to ordinary compactions).
const MAX_SWEEPS: usize = 1024;

/// The filter the server's databases run with.
pub fn filter() -> Arc<dyn CompactionFilter> {
    Arc::new(Gc)
}

/// The filter of a replicated state machine's database (cluster mode): the same decisions
/// as [`filter`], but "now" is `log_clock`, the newest leader timestamp applied from the
/// replicated log (`replica::Applier::log_clock`), not this machine's wall clock. Every
/// node's commands judge expiry by the log's times; a node whose clock ran ahead of the
/// leader's would otherwise drop members of a collection its own state machine (and every
/// other node's) still holds live, and a later PERSIST would bring the collection back
/// without them on that node only. The log's times never go back, so what is garbage at
/// one reading stays garbage; before anything is applied the clock reads 0 and nothing is
/// judged expired.
pub fn filter_at_log_clock(log_clock: Arc<AtomicU64>) -> Arc<dyn CompactionFilter> {
    Arc::new(LogClockGc(log_clock))
}

/// The server's compaction filter (see the module's doc).
#[derive(Debug)]
pub struct Gc;

/// [`Gc`] judging expiry at the replicated log's time ([`filter_at_log_clock`]).
#[derive(Debug)]
pub struct LogClockGc(Arc<AtomicU64>);

/// The owner last looked up in a compaction: its Redis key and (version, expiry) if it is a
/// live-or-expired collection, `None` if it has no metadata or is a string.
#[derive(Default)]
struct Owner {
    db: keys::DbIndex,
    key: Vec<u8>,
    looked_up: bool,
    meta: Option<(u64, u64)>,
}

impl CompactionFilter for Gc {
    fn name(&self) -> &str {
        "bloomkv-server.gc"
    }

    fn filter(
        &self,
        ctx: &mut CompactionFilterContext<'_>,
        key: &[u8],
        value: &[u8],
    ) -> CompactionDecision {
        decide(ctx, key, value, now_ms)
    }
}

impl CompactionFilter for LogClockGc {
    fn name(&self) -> &str {
        "bloomkv-server.gc-log-clock"
    }

    fn filter(
        &self,
        ctx: &mut CompactionFilterContext<'_>,
        key: &[u8],
        value: &[u8],
    ) -> CompactionDecision {
        decide(ctx, key, value, || self.0.load(Ordering::Acquire))
    }
}

/// [`Gc`]'s decision on one entry, with `now` the time expiry is judged at.
fn decide(
    ctx: &mut CompactionFilterContext<'_>,
    key: &[u8],
    value: &[u8],
    now: impl Fn() -> u64,
) -> CompactionDecision {
    match key.first() {
        Some(&(tag::META | tag::META_DB)) => expired_string(value, now),
        Some(t) if tag::SUBKEYS.contains(t) => member(ctx, key, now),
        _ => CompactionDecision::Keep,
    }
}

fn now_ms() -> u64 {
    super::txn::unix_ms()
}

/// An expired inline string with a long value: the value goes, the record stays.
fn expired_string(value: &[u8], now: impl Fn() -> u64) -> CompactionDecision {
    if value.len() <= STUB_OVER {
        return CompactionDecision::Keep;
    }
    match Record::decode(value) {
        Ok(
            r @ Record {
                meta: Meta::Str(_), ..
            },
        ) if r.expired(now()) => CompactionDecision::ChangeValue(
            Record {
                expire_at: r.expire_at,
                meta: Meta::Str(Vec::new()),
            }
            .encode(),
        ),
        _ => CompactionDecision::Keep,
    }
}

/// A versioned sub-key: garbage unless its owner's metadata names its version and has not
/// expired. A read error keeps the entry (a filter may only ever save space).
fn member(
    ctx: &mut CompactionFilterContext<'_>,
    key: &[u8],
    now: impl Fn() -> u64,
) -> CompactionDecision {
    let Some(sub) = keys::parse_sub_key(key) else {
        return CompactionDecision::Keep;
    };
    // The version names the database: versions are unique across databases.
    let db = keys::version_db(sub.version);
    let cached = ctx.job_state::<Owner>();
    if !(cached.looked_up && cached.db == db && cached.key == sub.key) {
        let meta = match ctx.get(meta_key(db, sub.key)) {
            Ok(Some(v)) => {
                Record::peek(&v).and_then(|(_, at)| Record::peek_version(&v).map(|ver| (ver, at)))
            }
            Ok(None) => None,
            Err(_) => return CompactionDecision::Keep,
        };
        let cached = ctx.job_state::<Owner>();
        cached.db = db;
        cached.key.clear();
        cached.key.extend_from_slice(sub.key);
        cached.looked_up = true;
        cached.meta = meta;
    }
    let owner = ctx.job_state::<Owner>();
    match owner.meta {
        Some((version, at)) if version == sub.version && (at == 0 || at > now()) => {
            CompactionDecision::Keep
        }
        _ => CompactionDecision::Remove,
    }
}

/// Key ranges of big dropped collections, waiting for the housekeeping thread to compact
/// them.
#[derive(Debug, Default)]
pub struct Sweeps {
    ranges: Mutex<Vec<(Vec<u8>, Vec<u8>)>>,
}

impl Sweeps {
    /// Queues the sub-key ranges of `key`'s collection `meta`, if it is big enough to matter.
    pub fn dropped(&self, key: &[u8], meta: &Meta) {
        let Some(version) = meta.version().filter(|_| is_big(meta)) else {
            return;
        };
        let mut ranges = self.ranges.lock();
        for &t in tags_of(meta) {
            if ranges.len() >= MAX_SWEEPS {
                return;
            }
            let start = sub_prefix(t, key, version);
            if let Some(end) = prefix_end(&start) {
                ranges.push((start, end));
            }
        }
    }

    /// Takes the ranges queued so far.
    pub fn take(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        std::mem::take(&mut *self.ranges.lock())
    }

    /// Puts back ranges a sweep did not get to.
    fn requeue(&self, rest: Vec<(Vec<u8>, Vec<u8>)>) {
        let mut ranges = self.ranges.lock();
        ranges.extend(rest);
        ranges.truncate(MAX_SWEEPS);
    }
}

/// Whether `meta` is a collection big enough to sweep when dropped.
pub fn is_big(meta: &Meta) -> bool {
    meta.version().is_some() && entries(meta) >= SWEEP_MIN
}

/// Compacts the queued ranges of big dropped collections, so their space returns without
/// waiting for compactions to reach them; does nothing while writes are under pressure or
/// stopped (the ranges wait for the next call).
///
/// # Errors
/// The engine's error compacting a range (the ranges after it stay queued).
pub fn sweep(store: &super::Store) -> Result<(), bloomkv::Error> {
    if store.db().write_pressure().may_wait() || store.writes_stopped().is_some() {
        return Ok(());
    }
    let ranges = store.sweeps().take();
    for (i, (start, end)) in ranges.iter().enumerate() {
        if let Err(e) = store.db().compact_range(start.as_slice()..end.as_slice()) {
            store.sweeps().requeue(ranges[i..].to_vec());
            return Err(e);
        }
    }
    Ok(())
}

/// Engine keys a collection holds (roughly, for chunked values).
fn entries(meta: &Meta) -> u64 {
    match meta {
        Meta::Str(_) => 0,
        Meta::Chunked { len, .. } => len / crate::store::CHUNK_BYTES as u64,
        Meta::Set { card, .. } | Meta::Zset { card, .. } => *card,
        Meta::Hash { len, .. } => *len,
        Meta::List { head, tail, .. } => tail - head,
        Meta::Bloom { filter, .. } => filter.layers.iter().map(|l| l.bits / 4096).sum(),
        Meta::Cuckoo { filter, .. } => filter.slot_bytes() / 512,
        Meta::Stream(m) => m.len,
    }
}

/// The sub-key tags a collection's entries use.
pub(crate) fn tags_of(meta: &Meta) -> &'static [u8] {
    match meta {
        Meta::Str(_) => &[],
        Meta::Chunked { .. } => &[tag::CHUNK],
        Meta::Set { .. } => &[tag::MEMBER],
        Meta::Bloom { .. } => &[tag::BLOOM],
        Meta::Cuckoo { .. } => &[tag::CUCKOO],
        Meta::Hash { .. } => &[tag::FIELD],
        Meta::List { .. } => &[tag::ELEMENT],
        Meta::Zset { .. } => &[tag::ZMEMBER, tag::ZSCORE],
        Meta::Stream(_) => &[tag::STREAM, tag::GROUP],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::sets::store as sets;

    fn decide(key: &[u8], value: &[u8], meta: Option<Vec<u8>>) -> CompactionDecision {
        let read = move |_k: &[u8]| -> bloomkv::Result<Option<Vec<u8>>> { Ok(meta.clone()) };
        let mut ctx = CompactionFilterContext::new(1, &read);
        Gc.filter(&mut ctx, key, value)
    }

    fn set_meta(version: u64, expire_at: u64) -> Vec<u8> {
        Record {
            expire_at,
            meta: Meta::Set { version, card: 1 },
        }
        .encode()
    }

    #[test]
    fn a_member_is_judged_by_its_own_databases_metadata() {
        // A set `k` in database 1 (its version says so), and a different `k` in database 0.
        let v1 = keys::db_version(1, 7);
        let m = keys::member_key(b"k", v1, b"a");
        let in_db1 = meta_key(1, b"k");
        let read = move |k: &[u8]| -> bloomkv::Result<Option<Vec<u8>>> {
            Ok(if k == in_db1.as_slice() {
                Some(set_meta(v1, 0))
            } else {
                Some(set_meta(99, 0))
            })
        };
        let mut ctx = CompactionFilterContext::new(1, &read);
        assert_eq!(Gc.filter(&mut ctx, &m, b""), CompactionDecision::Keep);
        // The same key and number in database 0 is another collection: garbage here.
        let m0 = keys::member_key(b"k", 7, b"a");
        assert_eq!(Gc.filter(&mut ctx, &m0, b""), CompactionDecision::Remove);
    }

    #[test]
    fn members_of_a_named_live_version_stay() {
        let m = keys::member_key(b"k", 7, b"a");
        assert_eq!(
            decide(&m, b"", Some(set_meta(7, 0))),
            CompactionDecision::Keep
        );
        let later = now_ms() + 60_000;
        assert_eq!(
            decide(&m, b"", Some(set_meta(7, later))),
            CompactionDecision::Keep
        );
    }

    #[test]
    fn members_of_gone_replaced_or_expired_collections_go() {
        let m = keys::member_key(b"k", 7, b"a");
        assert_eq!(decide(&m, b"", None), CompactionDecision::Remove);
        assert_eq!(
            decide(&m, b"", Some(set_meta(8, 0))),
            CompactionDecision::Remove
        );
        assert_eq!(
            decide(&m, b"", Some(set_meta(7, 1))),
            CompactionDecision::Remove
        );
        let string = Record {
            expire_at: 0,
            meta: Meta::Str(b"v".to_vec()),
        }
        .encode();
        assert_eq!(decide(&m, b"", Some(string)), CompactionDecision::Remove);
    }

    #[test]
    fn the_log_clock_judges_expiry_in_cluster_mode() {
        let clock = Arc::new(AtomicU64::new(0));
        let gc = filter_at_log_clock(Arc::clone(&clock));
        let run = |key: &[u8], value: &[u8], meta: Option<Vec<u8>>| {
            let read = move |_k: &[u8]| -> bloomkv::Result<Option<Vec<u8>>> { Ok(meta.clone()) };
            let mut ctx = CompactionFilterContext::new(1, &read);
            gc.filter(&mut ctx, key, value)
        };
        // Expiring at 10 s after the epoch: long past by the wall clock, so the standalone
        // filter drops the members; by the log's clock only once the log has reached it.
        let m = keys::member_key(b"k", 7, b"a");
        let meta = || Some(set_meta(7, 10_000));
        assert_eq!(decide(&m, b"", meta()), CompactionDecision::Remove);
        assert_eq!(
            run(&m, b"", meta()),
            CompactionDecision::Keep,
            "nothing applied yet"
        );
        clock.store(9_999, Ordering::Release);
        assert_eq!(run(&m, b"", meta()), CompactionDecision::Keep);
        let long = Record {
            expire_at: 10_000,
            meta: Meta::Str(vec![b'x'; 1000]),
        }
        .encode();
        assert_eq!(
            run(&meta_key(0, b"k"), &long, None),
            CompactionDecision::Keep
        );
        clock.store(10_000, Ordering::Release);
        assert_eq!(run(&m, b"", meta()), CompactionDecision::Remove);
        assert!(matches!(
            run(&meta_key(0, b"k"), &long, None),
            CompactionDecision::ChangeValue(_)
        ));
        // Versions and deletions do not depend on the clock.
        clock.store(0, Ordering::Release);
        assert_eq!(run(&m, b"", None), CompactionDecision::Remove);
        assert_eq!(
            run(&m, b"", Some(set_meta(8, 0))),
            CompactionDecision::Remove
        );
    }

    #[test]
    fn expired_long_strings_lose_their_bytes_only() {
        let long = Record {
            expire_at: 1,
            meta: Meta::Str(vec![b'x'; 1000]),
        };
        let d = decide(&meta_key(0, b"k"), &long.encode(), None);
        let CompactionDecision::ChangeValue(v) = d else {
            panic!("{d:?}")
        };
        let stub = Record::decode(&v).unwrap();
        assert_eq!((stub.expire_at, stub.meta), (1, Meta::Str(Vec::new())));
        let live = Record {
            expire_at: 0,
            ..long
        };
        assert_eq!(
            decide(&meta_key(0, b"k"), &live.encode(), None),
            CompactionDecision::Keep
        );
        // The expiry index and the server's own records are never touched.
        assert_eq!(
            decide(&keys::expiry_key(0, 1, b"k"), b"", None),
            CompactionDecision::Keep
        );
        assert_eq!(
            decide(keys::VERSION_KEY, b"12345678", None),
            CompactionDecision::Keep
        );
    }

    /// Raw engine keys starting with `t`.
    fn raw_count(store: &crate::store::Store, t: u8) -> usize {
        store.db().scan([t].as_slice()..[t + 1].as_slice()).count()
    }

    #[test]
    fn a_deleted_big_set_and_an_expired_one_leave_no_members_behind() {
        let (_dir, store) = crate::store::temp_store();
        for key in [&b"big"[..], b"volatile"] {
            let mut t = store.txn();
            let members: Vec<Vec<u8>> = (0..SWEEP_MIN + 10)
                .map(|i| format!("m{i}").into_bytes())
                .collect();
            sets::add_members(&mut t, key, members.iter().map(Vec::as_slice)).unwrap();
            t.commit().unwrap();
        }
        let mut t = store.txn();
        sets::add_members(&mut t, b"small", [&b"x"[..]]).unwrap();
        t.commit().unwrap();
        store.db().flush().unwrap();
        let before = raw_count(&store, tag::MEMBER);
        assert_eq!(before as u64, 2 * (SWEEP_MIN + 10) + 1);
        // DEL is one metadata write; the sweep compacts the set's range, and the filter drops
        // its members there without the server reading one of them.
        let mut t = store.txn();
        t.remove_key(b"big").unwrap();
        t.commit().unwrap();
        sweep(&store).unwrap();
        assert_eq!(raw_count(&store, tag::MEMBER) as u64, SWEEP_MIN + 10 + 1);
        // An expired set's members go at the next compaction that reaches them.
        let mut t = store.txn();
        expire_long_ago(&mut t, b"volatile");
        t.commit().unwrap();
        store.db().compact().unwrap();
        assert_eq!(
            raw_count(&store, tag::MEMBER),
            1,
            "only the live small set's member stays"
        );
        let mut t = store.txn();
        assert!(t.meta(b"small").unwrap().is_some());
        assert!(sets::remove_members(&mut t, b"small", [&b"x"[..]]).unwrap() == 1);
    }

    /// Gives `key` an expiry time long past, as an expiry that fired while nothing read it.
    fn expire_long_ago(t: &mut crate::store::Txn<'_>, key: &[u8]) {
        let rec = t.record(key).unwrap().unwrap();
        t.put_record(
            key,
            Record {
                expire_at: 1,
                ..rec
            },
        )
        .unwrap();
    }

    fn args(words: &[&str]) -> Vec<bytes::Bytes> {
        words
            .iter()
            .map(|w| bytes::Bytes::copy_from_slice(w.as_bytes()))
            .collect()
    }

    /// Adds `n` entries (IDs 1-1, 2-1, ...) to the stream `key`.
    fn fill_stream(store: &crate::store::Store, key: &str, n: u64) {
        let mut t = store.txn();
        for i in 1..=n {
            let id = format!("{i}-1");
            crate::cmd::streams::xadd(&mut t, &args(&["xadd", key, &id, "f", "v"])).unwrap();
        }
        t.commit().unwrap();
    }

    #[test]
    fn entries_of_deleted_overwritten_or_expired_streams_go_and_live_ones_stay() {
        let (_dir, store) = crate::store::temp_store();
        let big = SWEEP_MIN + 10;
        fill_stream(&store, "big", big);
        for key in ["deleted", "overwritten", "volatile", "live"] {
            fill_stream(&store, key, 20);
        }
        store.db().flush().unwrap();
        assert_eq!(raw_count(&store, tag::STREAM) as u64, big + 4 * 20);
        // DEL of a big stream is one metadata write, and queues its range for a sweep,
        // which drops its entries without the server reading one of them.
        let mut t = store.txn();
        assert!(t.remove_key(b"big").unwrap());
        t.commit().unwrap();
        sweep(&store).unwrap();
        assert_eq!(raw_count(&store, tag::STREAM), 4 * 20);
        // A small stream deleted, one overwritten by SET, one expired: their entries go at
        // the next compaction that reaches them.
        let mut t = store.txn();
        assert!(t.remove_key(b"deleted").unwrap());
        crate::cmd::strings::set(&mut t, &args(&["set", "overwritten", "now a string"])).unwrap();
        expire_long_ago(&mut t, b"volatile");
        t.commit().unwrap();
        store.db().compact().unwrap();
        assert_eq!(
            raw_count(&store, tag::STREAM),
            20,
            "only the live stream's entries stay"
        );
        let mut t = store.txn();
        let r = crate::cmd::streams::xrange(&mut t, &args(&["xrange", "live", "-", "+"])).unwrap();
        let crate::resp::Reply::Array(entries) = r else {
            panic!("{r:?}")
        };
        assert_eq!(entries.len(), 20);
    }

    #[test]
    fn big_dropped_collections_are_queued_for_a_sweep() {
        let s = Sweeps::default();
        s.dropped(
            b"small",
            &Meta::Set {
                version: 1,
                card: 10,
            },
        );
        assert!(s.take().is_empty());
        s.dropped(
            b"big",
            &Meta::Zset {
                version: 2,
                card: SWEEP_MIN,
            },
        );
        let r = s.take();
        assert_eq!(r.len(), 2);
        assert!(r.iter().all(|(a, b)| a < b));
        assert!(s.take().is_empty());
        s.dropped(
            b"stream",
            &Meta::Stream(crate::store::meta::StreamMeta {
                version: 3,
                len: SWEEP_MIN,
                ..Default::default()
            }),
        );
        // A stream's entries and its consumer groups' records.
        let mut r: Vec<u8> = s.take().iter().map(|(start, _)| start[0]).collect();
        r.sort_unstable();
        assert_eq!(r, vec![tag::GROUP, tag::STREAM]);
    }
}
