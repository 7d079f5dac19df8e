//! Filters a program uses on its own: [`BloomFilter`], [`CountingBloomFilter`],
//! [`ScalableBloomFilter`] and [`AnyFilter`] (whichever a file holds), sized by one type,
//! [`FilterSize`], and saved in one file format (`encoding`, `file`).

mod any;
pub(crate) mod bloom;
mod counting;
mod cuckoo;
pub(crate) mod encoding;
mod file;
mod scalable;
mod size;

pub use any::AnyFilter;
pub use bloom::BloomFilter;
pub use counting::CountingBloomFilter;
pub use cuckoo::{CuckooFilter, CuckooParams, CuckooRead, CuckooSlots, CuckooState};
pub use scalable::ScalableBloomFilter;
pub use size::FilterSize;
