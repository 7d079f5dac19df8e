//! Test helper shared by the iterator tests: a Vec-backed `InternalIterator`.
#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bloomkv::Error;
use bloomkv::Result;
use bloomkv::iter::InternalIterator;
use bloomkv::key;

/// Entries sorted by `key::compare`, with an optional injected failure and a record of the
/// furthest index ever positioned on (to check read-ahead).
pub struct VecIter {
    entries: Arc<Vec<(Vec<u8>, Vec<u8>)>>,
    pos: usize,
    /// Calls (seek/seek_to_first/next) that succeed before every later call fails.
    pub fail_after: Option<usize>,
    calls: usize,
    /// Largest index positioned on + 1 (0 = none).
    pub furthest: Arc<AtomicUsize>,
}

impl VecIter {
    /// Sorts `entries` by internal key.
    pub fn new(mut entries: Vec<(Vec<u8>, Vec<u8>)>) -> VecIter {
        entries.sort_by(|a, b| key::compare(&a.0, &b.0));
        VecIter {
            entries: Arc::new(entries),
            pos: usize::MAX,
            fail_after: None,
            calls: 0,
            furthest: Arc::new(AtomicUsize::new(0)),
        }
    }

    pub fn boxed(entries: Vec<(Vec<u8>, Vec<u8>)>) -> Box<dyn InternalIterator> {
        Box::new(VecIter::new(entries))
    }

    fn call(&mut self) -> Result<()> {
        self.calls += 1;
        match self.fail_after {
            Some(n) if self.calls > n => {
                self.pos = usize::MAX;
                Err(Error::corrupt_bytes(self.calls as u64, "injected failure"))
            }
            _ => Ok(()),
        }
    }

    fn note(&self) {
        if self.pos < self.entries.len() {
            self.furthest.fetch_max(self.pos + 1, Ordering::Relaxed);
        }
    }
}

impl InternalIterator for VecIter {
    fn seek_to_first(&mut self) -> Result<()> {
        self.call()?;
        self.pos = 0;
        self.note();
        Ok(())
    }
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.call()?;
        self.pos = self
            .entries
            .partition_point(|(k, _)| key::compare(k, target) == std::cmp::Ordering::Less);
        self.note();
        Ok(())
    }
    fn next(&mut self) -> Result<()> {
        assert!(self.valid(), "next on an invalid iterator");
        self.call()?;
        self.pos += 1;
        self.note();
        Ok(())
    }
    fn seek_to_last(&mut self) -> Result<()> {
        self.call()?;
        self.pos = self.entries.len().checked_sub(1).unwrap_or(usize::MAX);
        self.note();
        Ok(())
    }
    fn prev(&mut self) -> Result<()> {
        assert!(self.valid(), "prev on an invalid iterator");
        self.call()?;
        self.pos = self.pos.checked_sub(1).unwrap_or(usize::MAX);
        self.note();
        Ok(())
    }
    fn valid(&self) -> bool {
        self.pos < self.entries.len()
    }
    fn key(&self) -> &[u8] {
        &self.entries[self.pos].0
    }
    fn value(&self) -> &[u8] {
        &self.entries[self.pos].1
    }
}

/// Drains an internal iterator from its current position.
pub fn drain(it: &mut dyn InternalIterator) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next().unwrap();
    }
    out
}
