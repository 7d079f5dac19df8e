//! A compaction filter that collects the members of deleted and re-created collections (the
//! server's versioned collections), against a model, with long-lived snapshots and a tree
//! several levels deep:
//! * every snapshot's (and the latest) logical answers — an owner's metadata, then the
//!   members of its current version — are exactly the model's at that moment;
//! * every member key, read raw, holds the model's value at that moment, or, only if its
//!   collection is garbage at that moment, nothing: never an older version (a member the
//!   filter removed above an older version of it must not bring that version back);
//! * once no snapshot is left, a full compaction has dropped every garbage member.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bloomkv::{
    CompactionDecision, CompactionFilter, CompactionFilterContext, Compression, Db, Options,
    Snapshot,
};
use common::{NoSyncEnv, Rng};

type Map = BTreeMap<Vec<u8>, Vec<u8>>;
type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

const OWNERS: u64 = 12;

fn meta_key(owner: u64) -> Vec<u8> {
    format!("m/{owner:03}").into_bytes()
}

fn member_prefix(owner: u64, version: u64) -> Vec<u8> {
    format!("d/{owner:03}/{version:08}/").into_bytes()
}

fn member_key(owner: u64, version: u64, member: u64) -> Vec<u8> {
    format!("d/{owner:03}/{version:08}/{member:04}").into_bytes()
}

/// Whether member key `key` belongs to a collection that is gone in `state` (its owner is
/// deleted or holds another version). Versions only grow, so once garbage, always garbage.
fn is_garbage(state: &Map, key: &[u8]) -> bool {
    let owner = &key[2..5];
    let version = &key[6..14];
    let meta = state.get(format!("m/{}", String::from_utf8_lossy(owner)).as_bytes());
    meta.map(Vec::as_slice) != Some(version)
}

/// The server's collector: a member whose owner's metadata (read as of the compaction's
/// start) does not name the member's version is garbage. The owner's metadata is looked up
/// once per run of its members (they are contiguous in key order).
#[derive(Debug, Default)]
struct CollectionGc {
    consulted: AtomicU64,
    removed: AtomicU64,
    lookups: AtomicU64,
}

/// The last owner looked up in this compaction, and its metadata.
#[derive(Default)]
struct LastOwner(Option<(Vec<u8>, Option<Vec<u8>>)>);

impl CompactionFilter for CollectionGc {
    fn name(&self) -> &str {
        "collection-gc"
    }

    fn filter(
        &self,
        ctx: &mut CompactionFilterContext<'_>,
        key: &[u8],
        _value: &[u8],
    ) -> CompactionDecision {
        self.consulted.fetch_add(1, Ordering::Relaxed);
        if !key.starts_with(b"d/") || key.len() < 15 {
            return CompactionDecision::Keep;
        }
        let (owner, version) = (&key[2..5], &key[6..14]);
        let cached = match &ctx.job_state::<LastOwner>().0 {
            Some((o, meta)) if o == owner => Some(meta.clone()),
            _ => None,
        };
        let meta = match cached {
            Some(meta) => meta,
            None => {
                self.lookups.fetch_add(1, Ordering::Relaxed);
                let mut meta_key = b"m/".to_vec();
                meta_key.extend_from_slice(owner);
                let Ok(meta) = ctx.get(&meta_key) else {
                    return CompactionDecision::Keep;
                };
                ctx.job_state::<LastOwner>().0 = Some((owner.to_vec(), meta.clone()));
                meta
            }
        };
        if meta.as_deref() == Some(version) {
            CompactionDecision::Keep
        } else {
            self.removed.fetch_add(1, Ordering::Relaxed);
            CompactionDecision::Remove
        }
    }
}

/// Reads through `get` (a snapshot's or the database's) and compares with `state`.
fn check(
    context: &str,
    state: &Map,
    members_ever: &BTreeSet<Vec<u8>>,
    get: &dyn Fn(&[u8]) -> Option<Vec<u8>>,
    scan: &dyn Fn(Vec<u8>) -> Pairs,
) {
    // Logical reads: metadata, then the members of the current version.
    for owner in 0..OWNERS {
        let meta = get(&meta_key(owner));
        assert_eq!(
            meta.as_ref(),
            state.get(&meta_key(owner)),
            "{context}: owner {owner}"
        );
        if let Some(v) = meta {
            let prefix = member_prefix(owner, String::from_utf8(v).unwrap().parse().unwrap());
            let want: Vec<(Vec<u8>, Vec<u8>)> = state
                .range(prefix.clone()..)
                .take_while(|(k, _)| k.starts_with(&prefix))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            assert_eq!(
                readable(&scan(prefix)),
                readable(&want),
                "{context}: members of owner {owner}"
            );
        }
    }
    // Raw reads: the value at this moment, or nothing for garbage; never an older version.
    for key in members_ever {
        let got = get(key);
        let want = state.get(key);
        let ok = got.as_ref() == want || (got.is_none() && is_garbage(state, key));
        assert!(
            ok,
            "{context}: {} holds {:?}, the model {:?} (garbage: {})",
            String::from_utf8_lossy(key),
            got.map(|v| String::from_utf8_lossy(&v).into_owned()),
            want.map(|v| String::from_utf8_lossy(v).into_owned()),
            is_garbage(state, key)
        );
    }
}

fn readable(kvs: &[(Vec<u8>, Vec<u8>)]) -> Vec<(String, String)> {
    kvs.iter()
        .map(|(k, v)| {
            (
                String::from_utf8_lossy(k).into_owned(),
                String::from_utf8_lossy(v).into_owned(),
            )
        })
        .collect()
}

fn scan_prefix(
    it: impl Iterator<Item = bloomkv::Result<(Vec<u8>, Vec<u8>)>>,
    prefix: &[u8],
) -> Vec<(Vec<u8>, Vec<u8>)> {
    it.map(|kv| kv.unwrap())
        .take_while(|(k, _)| k.starts_with(prefix))
        .collect()
}

fn check_all(
    context: &str,
    db: &Db,
    model: &Map,
    snaps: &[(Snapshot, Map)],
    members_ever: &BTreeSet<Vec<u8>>,
) {
    check(
        &format!("{context}, latest"),
        model,
        members_ever,
        &|k| db.get(k).unwrap(),
        &|p| scan_prefix(db.scan(p.clone()..), &p),
    );
    for (i, (snap, state)) in snaps.iter().enumerate() {
        check(
            &format!("{context}, snapshot {i} at {}", snap.sequence()),
            state,
            members_ever,
            &|k| snap.get(k).unwrap(),
            &|p| scan_prefix(snap.scan(p.clone()..), &p),
        );
    }
}

#[test]
fn collected_collections_never_change_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    let gc = Arc::new(CollectionGc::default());
    let opts = Options {
        compaction_filter: Some(Arc::clone(&gc) as Arc<dyn CompactionFilter>),
        compression: Compression::None,
        memtable_bytes: 24 << 10,
        target_file_bytes: 16 << 10,
        max_bytes_for_level_base: 64 << 10,
        level_size_multiplier: 4,
        level0_compaction_trigger: 2,
        env: NoSyncEnv::shared(),
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let mut rng = Rng::new(0x6c0ec7);
    let mut model = Map::new();
    let mut snaps: Vec<(Snapshot, Map)> = Vec::new();
    let mut members_ever = BTreeSet::new();
    let mut next_version = 1u64;
    let mut n = 0u64;
    for step in 0..30_000u64 {
        let owner = rng.below(OWNERS);
        let current = model.get(&meta_key(owner)).map(|v| {
            String::from_utf8(v.clone())
                .unwrap()
                .parse::<u64>()
                .unwrap()
        });
        match (rng.below(100), current) {
            // A new collection (or a new version of an existing one: the old is garbage).
            (0..=2, _) | (_, None) => {
                let v = format!("{next_version:08}").into_bytes();
                next_version += 1;
                db.put(meta_key(owner), &v).unwrap();
                model.insert(meta_key(owner), v);
            }
            // The collection is deleted: its members are garbage.
            (3..=4, Some(_)) => {
                db.delete(meta_key(owner)).unwrap();
                model.remove(&meta_key(owner));
            }
            (5..=14, Some(version)) => {
                let key = member_key(owner, version, rng.below(200));
                db.delete(&key).unwrap();
                model.remove(&key);
            }
            (_, Some(version)) => {
                let key = member_key(owner, version, rng.below(200));
                n += 1;
                let value = format!("value-{n}-{}", "x".repeat((n % 50) as usize)).into_bytes();
                db.put(&key, &value).unwrap();
                members_ever.insert(key.clone());
                model.insert(key, value);
            }
        }
        if step % 1500 == 700 {
            if snaps.len() >= 4 {
                // Drop a random one; the oldest often stays for long.
                let i = rng.below(snaps.len() as u64) as usize;
                snaps.remove(i);
            }
            snaps.push((db.snapshot(), model.clone()));
        }
        if step % 6000 == 5999 {
            db.flush().unwrap();
            db.wait_for_compactions().unwrap();
            check_all(&format!("step {step}"), &db, &model, &snaps, &members_ever);
        }
    }
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let levels: Vec<u64> = db.stats().levels.iter().map(|l| l.files).collect();
    assert!(
        levels.iter().skip(2).any(|&f| f > 0),
        "a tree several levels deep: {levels:?}"
    );
    check_all("settled", &db, &model, &snaps, &members_ever);
    db.compact().unwrap();
    check_all(
        "after a full compaction",
        &db,
        &model,
        &snaps,
        &members_ever,
    );
    assert!(
        gc.removed.load(Ordering::Relaxed) > 0,
        "the filter removed nothing"
    );
    assert!(
        gc.lookups.load(Ordering::Relaxed) < gc.consulted.load(Ordering::Relaxed),
        "metadata looked up once per run of members"
    );

    // With no snapshot left, a full compaction collects every garbage member.
    snaps.clear();
    db.compact().unwrap();
    check_all(
        "no snapshots, compacted",
        &db,
        &model,
        &snaps,
        &members_ever,
    );
    let left: Vec<String> = db
        .scan(b"d/".as_slice()..b"d0".as_slice())
        .map(|kv| kv.unwrap().0)
        .filter(|k| is_garbage(&model, k))
        .map(|k| String::from_utf8_lossy(&k).into_owned())
        .collect();
    assert!(left.is_empty(), "garbage left after compaction: {left:?}");
    let tables_hold: u64 = db.stats().levels.iter().map(|l| l.entries).sum();
    let live = model.len() as u64;
    assert!(
        tables_hold <= live,
        "{tables_hold} entries in the tables for {live} live keys"
    );
}
