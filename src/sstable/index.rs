//! A table's index as held in memory for as long as the table is open: per data block its
//! separator and handle, packed into three arrays. One `Vec` per separator (the previous
//! form) cost a 24-byte header and a heap allocation of at least 32 bytes per data block,
//! about 90 bytes per block with the vector's spare room; packed it is the separator's own
//! bytes plus 20 (W2 at 20M keys keeps ~600k data blocks' entries in memory).

use super::format::BlockHandle;

/// The separators and handles of a table's data blocks, in index order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Index {
    /// Every separator, back to back.
    keys: Vec<u8>,
    /// `ends[i]`: where separator `i` ends in `keys` (it starts where `i - 1` ends).
    ends: Vec<u32>,
    handles: Vec<BlockHandle>,
}

impl Index {
    /// Appends a block's entry; `false` (and nothing appended) once the separators exceed
    /// 4 GiB, which no readable index block holds.
    pub(crate) fn push(&mut self, separator: &[u8], handle: BlockHandle) -> bool {
        let Ok(end) = u32::try_from(self.keys.len() + separator.len()) else {
            return false;
        };
        self.keys.extend_from_slice(separator);
        self.ends.push(end);
        self.handles.push(handle);
        true
    }

    /// Gives back the arrays' spare room (called once the index is complete).
    pub(crate) fn shrink_to_fit(&mut self) {
        self.keys.shrink_to_fit();
        self.ends.shrink_to_fit();
        self.handles.shrink_to_fit();
    }

    /// Data blocks.
    pub(crate) fn len(&self) -> usize {
        self.handles.len()
    }

    /// No data blocks.
    pub(crate) fn is_empty(&self) -> bool {
        self.handles.is_empty()
    }

    /// Every block's handle, in index order.
    pub(crate) fn handles(&self) -> &[BlockHandle] {
        &self.handles
    }

    /// Block `i`'s separator (`i < len()`).
    pub(crate) fn separator(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.keys[start..self.ends[i] as usize]
    }

    /// Block `i`'s handle (`i < len()`).
    pub(crate) fn handle(&self, i: usize) -> BlockHandle {
        self.handles[i]
    }

    /// Block `i`'s handle, if there is a block `i`.
    pub(crate) fn get(&self, i: usize) -> Option<BlockHandle> {
        self.handles.get(i).copied()
    }

    /// The first position whose separator `is_below` says no to (separators are sorted, so
    /// `is_below` holds for a prefix of them): a binary search.
    pub(crate) fn partition_point(&self, mut is_below: impl FnMut(&[u8]) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if is_below(self.separator(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Bytes of memory the index holds.
    pub(crate) fn bytes(&self) -> usize {
        self.keys.capacity()
            + self.ends.capacity() * std::mem::size_of::<u32>()
            + self.handles.capacity() * std::mem::size_of::<BlockHandle>()
            + std::mem::size_of::<Index>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_come_back_as_pushed_and_search_finds_the_first_not_below() {
        let mut index = Index::default();
        let seps: [&[u8]; 5] = [b"", b"b", b"bb", b"d", b"zzzz"];
        for (i, s) in seps.iter().enumerate() {
            let h = BlockHandle {
                offset: i as u64 * 100,
                size: 90 + i as u64,
            };
            assert!(index.push(s, h));
        }
        index.shrink_to_fit();
        assert_eq!(index.len(), 5);
        for (i, s) in seps.iter().enumerate() {
            assert_eq!(index.separator(i), *s);
            assert_eq!(index.get(i), Some(index.handle(i)));
            assert_eq!(index.handle(i).size, 90 + i as u64);
        }
        assert!(index.get(5).is_none());
        for (target, want) in [
            (&b""[..], 0),
            (b"a", 1),
            (b"b", 1),
            (b"ba", 2),
            (b"c", 3),
            (b"zzzzz", 5),
        ] {
            assert_eq!(index.partition_point(|s| s < target), want, "{target:?}");
        }
        assert_eq!(Index::default().partition_point(|_| true), 0);
        assert!(index.bytes() >= 1 + 1 + 2 + 1 + 4 + 5 * (4 + 16));
    }
}
