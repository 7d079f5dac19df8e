//! Decoding random and mutated bytes as blocks and as whole tables never panics.

use std::sync::{Arc, OnceLock};

use crate::filter::{FilterPolicy, hash_key};
use crate::iter::InternalIterator;
use crate::sstable::TableBuildOptions;
use crate::sstable::block::{Block, BlockBuilder, BlockIter, bytewise};
use crate::test_util::sstable::*;
use crate::util::key::{self, KIND_SEEK, Kind};
use proptest::prelude::*;

/// Walks a block every way the reader does; any result but a panic is fine.
fn exercise_block(bytes: Vec<u8>, targets: &[Vec<u8>]) {
    let Ok(block) = Block::new(bytes) else { return };
    let block = Arc::new(block);
    let _ = block.verify(key::compare);
    let _ = block.verify(bytewise);
    let mut it = BlockIter::new(block.clone(), bytewise);
    let mut res = it.seek_to_first();
    let mut steps = 0;
    while res.is_ok() && it.valid() && steps < 10_000 {
        let _ = (it.key(), it.value());
        res = it.advance();
        steps += 1;
    }
    for t in targets {
        let mut it = BlockIter::new(block.clone(), key::compare);
        if it.seek(t).is_ok() && it.valid() {
            let _ = it.advance();
        }
    }
}

fn exercise_table(bytes: Vec<u8>, probes: &[Vec<u8>]) {
    let policy: Arc<dyn FilterPolicy> = Arc::new(ExactPolicy);
    let cache = Arc::new(crate::sstable::cache::BlockCache::new(64 << 10));
    let Ok(table) = open(bytes, read_opts(Some(policy), Some(cache))) else {
        return;
    };
    let mut it = table.iter();
    let mut res = it.seek_to_first();
    let mut steps = 0;
    while res.is_ok() && it.valid() && steps < 10_000 {
        res = it.next();
        steps += 1;
    }
    for p in probes {
        let _ = table.get(&key::encode(p, 99, KIND_SEEK), hash_key(p));
        let _ = it.seek(p);
    }
}

fn sample_table() -> &'static (Vec<u8>, Layout) {
    static T: OnceLock<(Vec<u8>, Layout)> = OnceLock::new();
    T.get_or_init(|| {
        let entries = (0..300u32).map(|i| {
            (
                key::encode(format!("k{:04}", i * 3).as_bytes(), u64::from(i), Kind::Put),
                vec![i as u8; (i % 17) as usize],
            )
        });
        let (bytes, _) = build(
            entries,
            TableBuildOptions {
                block_bytes: 256,
                restart_interval: 4,
                filter: Some(Arc::new(ExactPolicy)),
                // Raw blocks: the damage below is aimed at block contents.
                compression: bloomkv::Compression::None,
                file_number: None,
                prefix_extractor: None,
            },
        );
        let l = layout(&bytes);
        (bytes, l)
    })
}

fn sample_block() -> Vec<u8> {
    let mut b = BlockBuilder::new(3);
    for i in 0..40u32 {
        b.add(
            &key::encode(format!("key{i:03}").as_bytes(), 5, Kind::Put),
            &[i as u8; 3],
        );
    }
    b.finish()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_as_block(bytes in proptest::collection::vec(any::<u8>(), 0..300),
                             targets in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..12), 0..4)) {
        exercise_block(bytes, &targets);
    }

    #[test]
    fn mutated_block(flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
                     cut in any::<prop::sample::Index>()) {
        let mut b = sample_block();
        for (i, x) in &flips {
            let at = i.index(b.len());
            b[at] ^= x | 1;
        }
        exercise_block(b.clone(), &[key::encode(b"key020", 5, KIND_SEEK), vec![]]);
        b.truncate(cut.index(b.len() + 1));
        exercise_block(b, &[key::encode(b"key001", 5, KIND_SEEK)]);
    }

    #[test]
    fn random_bytes_as_table(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        exercise_table(bytes, &[b"k0003".to_vec(), vec![]]);
    }

    /// Mutations inside one block with its checksum recomputed, so the decoders behind the
    /// checksum really see the damage.
    #[test]
    fn mutated_table_with_valid_checksums(which in 0usize..5, pick in any::<prop::sample::Index>(),
                                          flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..5)) {
        let (bytes, l) = sample_table();
        let mut b = bytes.clone();
        let h = match which {
            0 => l.data[pick.index(l.data.len())],
            1 => l.filter.unwrap(),
            2 => l.properties,
            3 => l.metaindex,
            _ => l.index,
        };
        for (i, x) in &flips {
            let at = h.offset as usize + i.index(h.size as usize);
            b[at] ^= x | 1;
        }
        fix_crc(&mut b, h);
        exercise_table(b, &[b"k0003".to_vec(), b"k0450".to_vec(), b"k0451".to_vec()]);
    }

    #[test]
    fn mutated_table_raw(flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
                         cut in any::<prop::sample::Index>()) {
        let (bytes, _) = sample_table();
        let mut b = bytes.clone();
        for (i, x) in &flips {
            let at = i.index(b.len());
            b[at] ^= x | 1;
        }
        exercise_table(b.clone(), &[b"k0003".to_vec()]);
        b.truncate(cut.index(b.len() + 1));
        exercise_table(b, &[b"k0003".to_vec()]);
    }
}
