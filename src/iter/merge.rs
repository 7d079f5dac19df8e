//! Merging many sorted sources into one sorted view.
//!
//! [`MergingIterator`] keeps the valid children in a binary min-heap of child indices ordered
//! by (current internal key, child index). The top of the heap is the current entry; `next`
//! advances that one child and restores the heap in O(log n) comparisons. Ties between
//! byte-equal keys go to the lower child index, so callers list sources newest first
//! (memtable, immutable memtable, level-0 tables newest first, ...) and the newest copy of a
//! duplicated entry comes out first.
//!
//! Backwards the heap is a max-heap under the same (key, child index) order, so a reverse walk
//! yields exactly the forward sequence reversed. Changing direction repositions every child
//! other than the current one on the far side of the current entry (as LevelDB's merging
//! iterator does), which costs one seek per child.

use std::cmp::Ordering;

use crate::error::Result;
use crate::iter::InternalIterator;
use crate::util::key;

/// An [`InternalIterator`] over the union of its children, in [`key::compare`] order.
pub struct MergingIterator {
    children: Vec<Box<dyn InternalIterator>>,
    /// Indices of the valid children, a min-heap under [`MergingIterator::less`].
    heap: Vec<usize>,
    /// Walking backwards: the heap is a max-heap and every child sits at or before the
    /// current entry.
    reverse: bool,
}

impl MergingIterator {
    /// Merges `children` (each sorted by [`key::compare`]); unpositioned until a seek.
    pub fn new(children: Vec<Box<dyn InternalIterator>>) -> MergingIterator {
        let heap = Vec::with_capacity(children.len());
        MergingIterator {
            children,
            heap,
            reverse: false,
        }
    }

    /// Whether child `a`'s entry belongs nearer the top of the heap than child `b`'s: it
    /// comes first in the current direction. Both must be valid.
    fn less(&self, a: usize, b: usize) -> bool {
        let before = match key::compare(self.children[a].key(), self.children[b].key()) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => a < b,
        };
        before != self.reverse
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

    /// Turns a backward walk around: every child other than the current one moves to its
    /// first entry after the current entry in (key, child index) order.
    fn turn_forward(&mut self) -> Result<()> {
        let top = self.heap[0];
        let current = self.children[top].key().to_vec();
        self.heap.clear();
        for (i, child) in self.children.iter_mut().enumerate() {
            if i == top {
                continue;
            }
            child.seek(&current)?;
            // A byte-equal entry of a lower-index child sorts before the current one.
            if i < top && child.valid() && child.key() == current.as_slice() {
                child.next()?;
            }
        }
        self.reverse = false;
        self.children[top].next()?;
        self.rebuild();
        Ok(())
    }

    /// Turns a forward walk around: every child other than the current one moves to its
    /// last entry before the current entry in (key, child index) order.
    fn turn_backward(&mut self) -> Result<()> {
        let top = self.heap[0];
        let current = self.children[top].key().to_vec();
        self.heap.clear();
        for (i, child) in self.children.iter_mut().enumerate() {
            if i == top {
                continue;
            }
            if i < top {
                // A byte-equal entry of a lower-index child sorts before the current one.
                child.seek_for_prev(&current)?;
            } else {
                child.seek(&current)?;
                if child.valid() {
                    child.prev()?;
                } else {
                    child.seek_to_last()?;
                }
            }
        }
        self.reverse = true;
        self.children[top].prev()?;
        self.rebuild();
        Ok(())
    }

    /// Steps the top child with `step` and restores the heap.
    fn step_top(
        &mut self,
        step: impl FnOnce(&mut dyn InternalIterator) -> Result<()>,
    ) -> Result<()> {
        let Some(&top) = self.heap.first() else {
            return Ok(());
        };
        if let Err(e) = step(self.children[top].as_mut()) {
            self.heap.clear();
            return Err(e);
        }
        if !self.children[top].valid() {
            self.heap.swap_remove(0);
        }
        self.sift_down(0);
        Ok(())
    }
}

impl InternalIterator for MergingIterator {
    fn seek_to_first(&mut self) -> Result<()> {
        self.reverse = false;
        self.reposition(|c| c.seek_to_first())
    }

    fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.reverse = false;
        self.reposition(|c| c.seek(target))
    }

    fn next(&mut self) -> Result<()> {
        if self.reverse && !self.heap.is_empty() {
            let turned = self.turn_forward();
            if turned.is_err() {
                self.heap.clear();
            }
            return turned;
        }
        self.step_top(|c| c.next())
    }

    fn seek_to_last(&mut self) -> Result<()> {
        self.reverse = true;
        self.reposition(|c| c.seek_to_last())
    }

    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        self.reverse = true;
        self.reposition(|c| c.seek_for_prev(target))
    }

    fn prev(&mut self) -> Result<()> {
        if !self.reverse && !self.heap.is_empty() {
            let turned = self.turn_backward();
            if turned.is_err() {
                self.heap.clear();
            }
            return turned;
        }
        self.step_top(|c| c.prev())
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
