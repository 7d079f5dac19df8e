//! Measured false-positive rates against the formulas: 1M inserted keys, 1M absent probes.

use bloomkv::filter::FilterSize;
use bloomkv::filter::{BloomFilter, CountingBloomFilter, Layout, math};

const N: u64 = 1_000_000;

fn present(i: u64) -> [u8; 8] {
    i.to_le_bytes()
}

fn absent(i: u64) -> [u8; 8] {
    // Disjoint from the inserted range.
    (i | 1 << 62).to_le_bytes()
}

/// Builds a filter over N keys, checks it has no false negatives, returns the measured rate.
fn measure(layout: Layout, bits_per_key: f64) -> (BloomFilter, f64) {
    let mut f =
        BloomFilter::new(FilterSize::bits_per_key(N as usize, bits_per_key).with_layout(layout))
            .unwrap();
    for i in 0..N {
        f.insert(present(i));
    }
    assert!((0..N).all(|i| f.contains(present(i))), "false negative");
    let fp = (0..N).filter(|&i| f.contains(absent(i))).count();
    (f, fp as f64 / N as f64)
}

#[test]
fn standard_layout_matches_the_textbook_formula() {
    for bpk in [4.0, 8.0, 10.0, 16.0] {
        let (f, measured) = measure(Layout::Standard, bpk);
        let theory = math::false_positive_rate(f.bit_len(), N, f.num_hashes());
        // len counts inserts that set a bit: N minus the keys already reported present when
        // inserted, about N times the average rate over the fill (below the final rate).
        let missed = N as usize - f.len();
        assert!(
            (missed as f64) < N as f64 * theory,
            "{bpk} bits/key: {missed} inserts changed nothing"
        );
        // The model behind expected_fp_rate adds the excess of keys whose probes repeat
        // bits, which falls as 1/m: at a million keys it is the textbook formula.
        let at_len = math::standard_false_positive_rate(f.bit_len(), f.len(), f.num_hashes());
        assert!((f.expected_fp_rate() - at_len).abs() < 1e-12);
        let textbook = math::false_positive_rate(f.bit_len(), f.len(), f.num_hashes());
        assert!(
            (at_len - textbook) / textbook < 1e-3,
            "{at_len} vs {textbook}"
        );
        // The rate read from the bits set agrees with the measurement.
        let est = f.estimated_fpr();
        assert!(
            (est - measured).abs() / measured < 0.15,
            "{bpk} bits/key: estimated {est} vs measured {measured}"
        );
        let rel = (measured - theory).abs() / theory;
        assert!(
            rel < 0.15,
            "{bpk} bits/key: measured {measured} vs theory {theory} ({rel:.3} off)"
        );
    }
}

#[test]
fn with_bits_per_key_is_standard_and_hits_the_issue_figures() {
    let mut f = BloomFilter::new(FilterSize::bits_per_key(N as usize, 8.0)).unwrap();
    assert_eq!(f.layout(), Layout::Standard);
    for i in 0..N {
        f.insert(present(i));
    }
    let fp = (0..N).filter(|&i| f.contains(absent(i))).count() as f64 / N as f64;
    assert!((0.019..0.025).contains(&fp), "{fp}");
}

#[test]
fn blocked_layout_penalty_is_small_at_10_bits_per_key() {
    let (f, measured) = measure(Layout::Blocked, 10.0);
    let textbook = math::false_positive_rate(10 * N, N, math::optimal_hashes(10, 1));
    assert!(
        measured <= 1.3 * textbook,
        "blocked {measured} vs textbook {textbook}"
    );
    // The block model predicts the measured rate closely.
    let model = f.expected_fp_rate();
    assert!(
        (measured - model).abs() / model < 0.15,
        "blocked {measured} vs model {model}"
    );
}

#[test]
fn with_rate_delivers_the_requested_rate_in_both_layouts() {
    for layout in [Layout::Standard, Layout::Blocked] {
        let n = 200_000u64;
        let mut f =
            BloomFilter::new(FilterSize::for_items(n as usize, 0.01).with_layout(layout)).unwrap();
        for i in 0..n {
            f.insert(present(i));
        }
        let fp = (0..N).filter(|&i| f.contains(absent(i))).count() as f64 / N as f64;
        assert!(fp < 0.0115, "{layout:?}: {fp}");
        assert!(fp > 0.008, "{layout:?}: {fp} (oversized?)");
    }
}

#[test]
fn counting_filter_rate_matches_plain_filter() {
    let n = 200_000u64;
    let mut c = CountingBloomFilter::new(FilterSize::bits_per_key(n as usize, 10.0)).unwrap();
    for i in 0..n {
        c.insert(present(i));
    }
    let fp = (0..N).filter(|&i| c.contains(absent(i))).count() as f64 / N as f64;
    let theory = c.expected_fp_rate();
    assert!((fp - theory).abs() / theory < 0.15, "{fp} vs {theory}");
}
