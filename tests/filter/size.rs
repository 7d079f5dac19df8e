//! One sizing type and one constructor for `BloomFilter` and `CountingBloomFilter`
//! (`FilterSize`): its errors name the argument the caller passed.

use bloomkv::Error;
use bloomkv::filter::{BloomFilter, CountingBloomFilter, FilterSize};

fn message(r: Result<BloomFilter, Error>) -> String {
    match r {
        Err(Error::InvalidArgument(m)) => m,
        other => panic!("{other:?}"),
    }
}

#[test]
fn errors_name_the_argument_the_caller_used() {
    let cases = [
        (FilterSize::for_items(0, 0.01), "capacity"),
        (FilterSize::for_items(10, 1.5), "error_rate"),
        (FilterSize::for_items(10, f64::NAN), "error_rate"),
        (FilterSize::bits_per_key(0, 10), "capacity"),
        (FilterSize::bits_per_key(10, -2.0), "bits_per_key"),
        (FilterSize::bits(0, 3), "bits"),
        (FilterSize::bits(64, 0), "k"),
        (FilterSize::bits(64, 65), "k"),
    ];
    for (size, arg) in cases {
        let m = message(BloomFilter::new(size));
        assert!(m.contains(&format!("{arg} must")), "{size:?}: {m}");
        let c = CountingBloomFilter::new(size).unwrap_err().to_string();
        assert!(c.contains(&format!("{arg} must")), "{size:?}: {c}");
    }
}
