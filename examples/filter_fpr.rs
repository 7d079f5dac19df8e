//! Builds Bloom filters over a word list and prints their measured false-positive rates next
//! to theory, for several bits per key and both layouts.
//!
//! ```sh
//! cargo run --release --example filter_fpr                     # 1M generated words
//! cargo run --release --example filter_fpr -- /usr/share/dict/words
//! cargo run --release --example filter_fpr -- --probes 10000000 # finer rates at 16-32 bits/key
//! ```
//!
//! Absent probes are words guaranteed not to be in the list (checked against it).

use std::collections::HashSet;
use std::error::Error;

use bloomkv::filter::FilterSize;
use bloomkv::filter::{BloomFilter, Layout, math};

const GENERATED_WORDS: usize = 1_000_000;
const BITS_PER_KEY: [f64; 7] = [1.0, 2.0, 4.0, 8.0, 10.0, 16.0, 32.0];

/// A small deterministic generator (xorshift64*), so runs are reproducible without a file.
struct Words(u64);

impl Words {
    fn next_word(&mut self) -> String {
        let mut word = String::new();
        let len = 4 + self.next() % 9;
        for _ in 0..len {
            word.push(char::from(b'a' + (self.next() % 26) as u8));
        }
        word
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut path = None;
    let mut probes = 1_000_000usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--probes" {
            probes = args.next().ok_or("--probes needs a number")?.parse()?;
        } else {
            path = Some(arg);
        }
    }

    let (source, words): (String, Vec<String>) = match &path {
        Some(p) => {
            let text = std::fs::read_to_string(p)?;
            let mut seen = HashSet::new();
            let words = text
                .split_whitespace()
                .filter(|w| seen.insert(*w))
                .map(str::to_owned)
                .collect();
            (p.clone(), words)
        }
        None => {
            let mut g = Words(0x9e37_79b9_7f4a_7c15);
            let mut seen = HashSet::with_capacity(GENERATED_WORDS);
            while seen.len() < GENERATED_WORDS {
                seen.insert(g.next_word());
            }
            ("generated".to_owned(), seen.into_iter().collect())
        }
    };
    if words.is_empty() {
        return Err("the word list is empty".into());
    }
    let set: HashSet<&str> = words.iter().map(String::as_str).collect();
    // Absent probes: generated words (other seed) that are not in the list.
    let mut g = Words(0x2545_f491_4f6c_dd1d);
    let mut absent = Vec::with_capacity(probes);
    while absent.len() < probes {
        let w = g.next_word();
        if !set.contains(w.as_str()) {
            absent.push(w);
        }
    }

    println!(
        "{} distinct words ({source}), {} absent probes",
        words.len(),
        absent.len()
    );
    println!();
    println!(
        "| bits/key | layout   | k  | theory    | measured  | measured/theory | measured/textbook |"
    );
    println!(
        "|---------:|----------|---:|----------:|----------:|----------------:|------------------:|"
    );
    for bpk in BITS_PER_KEY {
        let textbook = math::false_positive_rate(bpk, 1.0, math::optimal_hashes(bpk, 1.0));
        for layout in [Layout::Standard, Layout::Blocked] {
            let mut f =
                BloomFilter::new(FilterSize::bits_per_key(words.len(), bpk).with_layout(layout))?;
            for w in &words {
                f.insert(w);
            }
            if let Some(w) = words.iter().find(|w| !f.contains(w)) {
                return Err(format!("false negative for {w:?}: this is a bug").into());
            }
            let hits = absent.iter().filter(|w| f.contains(w)).count();
            let measured = hits as f64 / absent.len() as f64;
            let theory = f.expected_fp_rate();
            println!(
                "| {bpk:>8} | {:<8} | {:>2} | {theory:>9.3e} | {measured:>9.3e} | {:>15} | {:>17} |",
                format!("{layout:?}"),
                f.num_hashes(),
                ratio(measured, theory),
                ratio(measured, textbook),
            );
        }
    }
    println!();
    println!("theory: textbook formula (standard), Poisson block-load model (blocked);");
    println!("textbook: (1 - e^(-k/b))^k at b bits/key with the standard layout's k.");
    Ok(())
}

fn ratio(measured: f64, theory: f64) -> String {
    if theory > 0.0 {
        format!("{:.3}", measured / theory)
    } else {
        "-".to_owned()
    }
}
