//! Merging many sorted sources into one sorted view.
//!
//! [`MergingIterator`] keeps the valid children in a binary min-heap of child indices ordered
//! by (current internal key, child index). The top of the heap is the current entry; `next`
//! advances that one child and restores the heap in O(log n) comparisons. Ties between
//! byte-equal keys go to the lower child index, so callers list sources newest first
//! (memtable, immutable memtable, level-0 tables newest first, ...) and the newest copy of a
//! duplicated entry comes out first.

use std::cmp::Ordering;

use crate::error::Result;
use crate::iter::InternalIterator;
use crate::key;

/// An [`InternalIterator`] over the union of its children, in [`key::compare`] order.
pub struct MergingIterator {
    children: Vec<Box<dyn InternalIterator>>,
    /// Indices of the valid children, a min-heap under [`MergingIterator::less`].
    heap: Vec<usize>,
}

impl MergingIterator {
    /// Merges `children` (each sorted by [`key::compare`]); unpositioned until a seek.
    pub fn new(children: Vec<Box<dyn InternalIterator>>) -> MergingIterator {
        let heap = Vec::with_capacity(children.len());
        MergingIterator { children, heap }
    }

    /// Whether child `a`'s entry comes before child `b`'s. Both must be valid.
    fn less(&self, a: usize, b: usize) -> bool {
        match key::compare(self.children[a].key(), self.children[b].key()) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => a < b,
        }
    }

    /// Rebuilds the heap from every valid child (after all of them were repositioned).
    fn rebuild(&mut self) {
        self.heap.clear();
        for i in 0..self.children.len() {
            if self.children[i].valid() {
                self.heap.push(i);
            }
        }
        for at in (0..self.heap.len() / 2).rev() {
            self.sift_down(at);
        }
    }

    fn sift_down(&mut self, mut at: usize) {
        let n = self.heap.len();
        loop {
            let left = 2 * at + 1;
            if left >= n {
                return;
            }
            let right = left + 1;
            let mut smallest = left;
            if right < n && self.less(self.heap[right], self.heap[left]) {
                smallest = right;
            }
            if self.less(self.heap[smallest], self.heap[at]) {
                self.heap.swap(smallest, at);
                at = smallest;
            } else {
                return;
            }
        }
    }

    /// Repositions every child with `position`; on the first error the iterator is left
    /// invalid and the error returned.
    fn reposition(
        &mut self,
        mut position: impl FnMut(&mut dyn InternalIterator) -> Result<()>,
    ) -> Result<()> {
        self.heap.clear();
        for child in &mut self.children {
            position(child.as_mut())?;
        }
        self.rebuild();
        Ok(())
    }
}

impl InternalIterator for MergingIterator {
    fn seek_to_first(&mut self) -> Result<()> {
        self.reposition(|c| c.seek_to_first())
    }

    fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.reposition(|c| c.seek(target))
    }

    fn next(&mut self) -> Result<()> {
        let Some(&top) = self.heap.first() else {
            return Ok(());
        };
        if let Err(e) = self.children[top].next() {
            self.heap.clear();
            return Err(e);
        }
        if !self.children[top].valid() {
            self.heap.swap_remove(0);
        }
        self.sift_down(0);
        Ok(())
    }

    fn valid(&self) -> bool {
        !self.heap.is_empty()
    }

    fn key(&self) -> &[u8] {
        self.children[self.heap[0]].key()
    }

    fn value(&self) -> &[u8] {
        self.children[self.heap[0]].value()
    }
}
