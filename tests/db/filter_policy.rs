//! `Options::filter_policy`: a database builds and reads its tables' filters with the policy
//! it is given; a table records which policy built it and is read with that one.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bloomkv::filter::{BloomPolicy, FilterPolicy};
use bloomkv::{Db, Error, Options};

/// A blocked Bloom filter under another name, counting the hashes and probes it serves.
#[derive(Debug)]
struct Counted {
    inner: BloomPolicy,
    hashes: Arc<AtomicU64>,
    probes: Arc<AtomicU64>,
}

impl FilterPolicy for Counted {
    fn name(&self) -> &str {
        "test.Counted"
    }
    fn bits_per_key(&self) -> f64 {
        self.inner.bits_per_key()
    }
    fn with_bits_per_key(&self, bits_per_key: f64) -> Option<Arc<dyn FilterPolicy>> {
        Some(Arc::new(Counted {
            inner: BloomPolicy::new(bits_per_key),
            hashes: Arc::clone(&self.hashes),
            probes: Arc::clone(&self.probes),
        }))
    }
    fn hash_key(&self, key: &[u8]) -> u64 {
        self.hashes.fetch_add(1, Ordering::Relaxed);
        // A hash of its own: tables built by this policy must be probed with it.
        bloomkv::filter::hash_key(key).rotate_left(17) ^ 0x5555
    }
    fn create_filter_from_hashes(&self, hashes: &[u64]) -> Vec<u8> {
        self.inner.create_filter_from_hashes(hashes)
    }
    fn check_filter(&self, filter: &[u8]) -> bloomkv::Result<()> {
        self.inner.check_filter(filter)
    }
    fn may_contain_hash(&self, filter: &[u8], hash: u64) -> bool {
        self.probes.fetch_add(1, Ordering::Relaxed);
        self.inner.may_contain_hash(filter, hash)
    }
    fn expected_fp_rate(&self, filter: &[u8]) -> Option<f64> {
        self.inner.expected_fp_rate(filter)
    }
}

fn counted() -> (Arc<dyn FilterPolicy>, Arc<AtomicU64>, Arc<AtomicU64>) {
    let hashes = Arc::new(AtomicU64::new(0));
    let probes = Arc::new(AtomicU64::new(0));
    let p = Counted {
        inner: BloomPolicy::new(10.0),
        hashes: Arc::clone(&hashes),
        probes: Arc::clone(&probes),
    };
    (Arc::new(p), hashes, probes)
}

#[test]
fn a_custom_policy_builds_and_answers_and_its_tables_need_it_to_open() {
    let dir = tempfile::tempdir().unwrap();
    let (policy, hashes, probes) = counted();
    let opts = Options {
        filter_policy: Arc::clone(&policy),
        ..Options::default()
    };
    {
        let db = Db::open(dir.path(), opts.clone()).unwrap();
        for i in 0..2000u32 {
            db.put(format!("k{i:05}"), b"v").unwrap();
        }
        db.flush().unwrap();
        assert!(
            hashes.load(Ordering::Relaxed) >= 2000,
            "built through the policy"
        );
        let before = probes.load(Ordering::Relaxed);
        let mut filtered = 0;
        for i in 0..2000u32 {
            assert_eq!(db.get(format!("k{i:05}")).unwrap(), Some(b"v".to_vec()));
            if db.get(format!("k{i:05}x")).unwrap().is_none() {
                filtered += 1;
            }
        }
        assert_eq!(filtered, 2000);
        // Every get but the one past the largest key probed the filter.
        assert_eq!(probes.load(Ordering::Relaxed), before + 3999);
        let s = db.stats();
        // Its own hash was used: present keys all passed, absent ones were mostly ruled out.
        assert!(s.filter_useful > 1900, "{s:?}");
    }
    // Tables record their policy: the default policy can't read them, and says why (tables
    // open lazily, so at the first read that needs one).
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let err = db.get("k00042").unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    assert!(err.to_string().contains("test.Counted"), "{err}");
    drop(db);
    // With the policy again, everything is there.
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(db.get("k00042").unwrap(), Some(b"v".to_vec()));
}

#[test]
fn tables_of_the_built_in_policy_stay_readable_under_a_custom_one() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), Options::default()).unwrap();
        for i in 0..1000u32 {
            db.put(format!("k{i:05}"), b"v").unwrap();
        }
        db.flush().unwrap();
    }
    let (policy, _, probes) = counted();
    let db = Db::open(
        dir.path(),
        Options {
            filter_policy: policy,
            ..Options::default()
        },
    )
    .unwrap();
    for i in 0..1000u32 {
        assert_eq!(db.get(format!("k{i:05}")).unwrap(), Some(b"v".to_vec()));
        assert_eq!(db.get(format!("k{i:05}x")).unwrap(), None);
    }
    // The old table is read with the built-in Bloom policy (its own hash), not the new one.
    assert_eq!(probes.load(Ordering::Relaxed), 0);
    assert!(db.stats().filter_useful > 950);
}

/// The static-set filters plug into the engine: every answer stays right, and an absent key
/// is ruled out at least as often as with the blocked Bloom filter at about the same memory.
#[test]
fn ribbon_and_binary_fuse_filters_serve_a_database() {
    use bloomkv::filter::{BinaryFusePolicy, RibbonPolicy};
    let kinds: [Arc<dyn FilterPolicy>; 2] = [
        Arc::new(RibbonPolicy::default()),
        Arc::new(BinaryFusePolicy::new()),
    ];
    for policy in kinds {
        let dir = tempfile::tempdir().unwrap();
        let name = policy.name().to_string();
        let opts = Options {
            filter_policy: policy,
            ..Options::default()
        };
        let db = Db::open(dir.path(), opts.clone()).unwrap();
        for i in 0..5000u32 {
            db.put(format!("k{i:05}"), b"v").unwrap();
        }
        db.compact().unwrap();
        for i in 0..5000u32 {
            assert_eq!(
                db.get(format!("k{i:05}")).unwrap(),
                Some(b"v".to_vec()),
                "{name}"
            );
            assert_eq!(db.get(format!("k{i:05}x")).unwrap(), None, "{name}");
        }
        let s = db.stats();
        assert!(s.filter_checks >= 9999, "{name}: {s:?}");
        // At most ~1% of the absent keys pass the filter.
        let passed = s.filter_checks - s.filter_useful - 5000;
        assert!(passed < 60, "{name}: {passed} false positives of 5000");
        drop(db);
        // Reopened with the default policy, the tables are read with their own (built-in).
        let db = Db::open(dir.path(), Options::default()).unwrap();
        assert_eq!(db.get("k00042").unwrap(), Some(b"v".to_vec()), "{name}");
        assert_eq!(db.get("k00042x").unwrap(), None, "{name}");
    }
}

/// `filter_policy_per_level`: level-0 tables get the first kind, deeper levels the last, and
/// every answer stays right (each table is read with the policy that built it).
#[test]
fn filter_kinds_are_chosen_per_level() {
    use bloomkv::filter::RibbonPolicy;
    let dir = tempfile::tempdir().unwrap();
    let (bloom, _, bloom_probes) = counted();
    let opts = Options {
        memtable_bytes: 64 << 10,
        target_file_bytes: 32 << 10,
        filter_policy_per_level: Some(vec![bloom, Arc::new(RibbonPolicy::default())]),
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..20_000u32 {
        db.put(format!("k{i:06}"), b"value").unwrap();
    }
    db.compact().unwrap();
    // Everything is below level 0 now: Ribbon tables only.
    let before = bloom_probes.load(Ordering::Relaxed);
    for i in (0..20_000u32).step_by(7) {
        assert_eq!(db.get(format!("k{i:06}")).unwrap(), Some(b"value".to_vec()));
        assert_eq!(db.get(format!("k{i:06}x")).unwrap(), None);
    }
    assert_eq!(
        bloom_probes.load(Ordering::Relaxed),
        before,
        "no level-0 table is left"
    );
    let s = db.stats();
    assert!(s.levels[0].files == 0 && s.filter_useful > 2800, "{s:?}");
    // A new level-0 table is built by the level-0 kind.
    db.put("k000001x", b"new").unwrap();
    db.flush().unwrap();
    assert_eq!(db.get("k000001x").unwrap(), Some(b"new".to_vec()));
    assert!(bloom_probes.load(Ordering::Relaxed) > before);
}
