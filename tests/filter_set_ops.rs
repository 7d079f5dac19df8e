//! Union and intersection of counting and scalable filters: every key the result should hold
//! is present, keys it should not hold are mostly absent, a counting union keeps the removal
//! counts of both sides, and filters of another shape are an error.

use bloomkv::filter::FilterSize;
use bloomkv::filter::{CountingBloomFilter, ScalableBloomFilter};

fn key(i: u64) -> [u8; 8] {
    i.to_le_bytes()
}

#[test]
fn counting_union_adds_counts_and_intersect_keeps_the_common_keys() {
    let mut a = CountingBloomFilter::new(FilterSize::for_items(20_000, 0.01)).unwrap();
    let mut b = CountingBloomFilter::new(FilterSize::for_items(20_000, 0.01)).unwrap();
    // a: 0..6000, b: 4000..10000; 4000..6000 in both.
    for i in 0..6000 {
        a.insert(key(i));
    }
    for i in 4000..10_000 {
        b.insert(key(i));
    }
    let mut u = a.clone();
    u.union(&b).unwrap();
    assert_eq!(u.len(), 12_000);
    assert!((0..10_000).all(|i| u.contains(key(i))));
    // A key both held can be removed twice and then is gone (unless a false positive).
    for i in 4000..6000 {
        assert!(u.remove(key(i)) && u.contains(key(i)), "key {i}");
        assert!(u.remove(key(i)), "key {i}");
    }
    let left = (4000..6000).filter(|&i| u.contains(key(i))).count();
    assert!(left < 100, "{left} of 2000 removed keys still present");
    assert!((0..4000).chain(6000..10_000).all(|i| u.contains(key(i))));

    let mut x = a.clone();
    x.intersect(&b).unwrap();
    assert_eq!(x.len(), 6000);
    assert!((4000..6000).all(|i| x.contains(key(i))));
    let stray = (0..4000)
        .chain(6000..10_000)
        .filter(|&i| x.contains(key(i)))
        .count();
    assert!(stray < 400, "{stray} of 8000 keys held by one side only");
    // The common keys can be removed once each.
    for i in 4000..6000 {
        assert!(x.remove(key(i)), "key {i}");
    }
    assert!((4000..6000).filter(|&i| x.contains(key(i))).count() < 100);

    let other = CountingBloomFilter::new(FilterSize::for_items(1000, 0.01)).unwrap();
    assert!(a.clone().union(&other).is_err());
    assert!(a.clone().intersect(&other).is_err());
    let blocked =
        CountingBloomFilter::new(FilterSize::bits_per_key(20_000, 10.0).blocked()).unwrap();
    assert!(a.clone().union(&blocked).is_err());
}

#[test]
fn counting_union_saturates_and_a_saturated_counter_never_drops() {
    let mut a = CountingBloomFilter::new(FilterSize::for_items(100, 0.01)).unwrap();
    let mut b = a.clone();
    for _ in 0..10 {
        a.insert("hot");
        b.insert("hot");
    }
    a.union(&b).unwrap();
    assert_eq!(a.saturated_counters(), u64::from(a.num_hashes()));
    for _ in 0..30 {
        a.remove("hot");
    }
    assert!(a.contains("hot"), "saturated counters stay");
    // Intersect with a non-saturated side takes that side's counts.
    let mut c = CountingBloomFilter::new(FilterSize::for_items(100, 0.01)).unwrap();
    c.insert("hot");
    a.intersect(&c).unwrap();
    assert_eq!(a.saturated_counters(), 0);
    assert!(a.remove("hot") && !a.contains("hot"));
}

#[test]
fn scalable_union_is_stage_wise_and_intersect_needs_one_stage() {
    let mut a = ScalableBloomFilter::new(100, 0.01).unwrap();
    let mut b = ScalableBloomFilter::new(100, 0.01).unwrap();
    for i in 0..5000 {
        a.insert(key(i));
    }
    for i in 100_000..100_700 {
        b.insert(key(i));
    }
    assert!(a.stages() > b.stages() && b.stages() > 1);
    // Fewer stages on the left: the right's extra stages are appended.
    let mut u = b.clone();
    u.union(&a).unwrap();
    assert_eq!(u.stages(), a.stages());
    assert!(
        (0..5000)
            .chain(100_000..100_700)
            .all(|i| u.contains(key(i)))
    );
    let absent = (1_000_000..1_100_000u64)
        .filter(|&i| u.contains(key(i)))
        .count();
    // Stages both sides filled now hold twice their capacity: the rate is above the error
    // rate, and the estimate says so.
    let measured = absent as f64 / 100_000.0;
    let estimated = u.estimated_fpr();
    assert!(
        measured > 0.01 && estimated > 0.01,
        "{measured} {estimated}"
    );
    assert!(
        (measured / estimated - 1.0).abs() < 0.25,
        "measured {measured} vs estimated {estimated}"
    );
    // The union survives a round trip and keeps growing.
    let mut back = ScalableBloomFilter::from_bytes(&u.to_bytes()).unwrap();
    assert_eq!(back, u);
    for i in 200_000..220_000 {
        back.insert(key(i));
    }
    assert!(
        (0..5000)
            .chain(200_000..220_000)
            .all(|i| back.contains(key(i)))
    );

    let other = ScalableBloomFilter::with_growth(100, 0.01, 4, 0.9).unwrap();
    assert!(a.clone().union(&other).is_err());

    // Intersect: one stage each works; a grown filter is refused.
    let mut x = ScalableBloomFilter::new(1000, 0.01).unwrap();
    let mut y = ScalableBloomFilter::new(1000, 0.01).unwrap();
    for i in 0..600 {
        x.insert(key(i));
        y.insert(key(i + 300));
    }
    x.intersect(&y).unwrap();
    assert!((300..600).all(|i| x.contains(key(i))));
    assert!((0..300).filter(|&i| x.contains(key(i))).count() < 30);
    assert!(a.clone().intersect(&b).is_err());
    assert!(x.clone().intersect(&a).is_err());
}
