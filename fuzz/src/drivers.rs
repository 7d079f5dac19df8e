//! One driver per fuzz target. Each must never panic, hang or allocate more than its input
//! justifies, whatever the bytes; where there is an oracle (a structure built from the input,
//! then damaged), anything read back without an error must be what was written.
//!
//! The drivers reach engine internals through `bloomkv::` paths: the fuzz package builds
//! bloomkv with its `internals` feature, and the library's unit test `src/fuzz_regressions.rs`
//! includes this file (there `bloomkv` names the crate itself).

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use bloomkv::WriteBatch;
use bloomkv::db::manifest::{self, VersionEdit};
use bloomkv::db::version::{TableFile, Version};
use bloomkv::db::wal::{LogReader, LogWriter, RecoveryMode};
use bloomkv::env::{MemRandomAccessFile, MemWritableFile, StdEnv};
use bloomkv::filter::{BloomFilter, BloomPolicy, FilterPolicy};
use bloomkv::iter::InternalIterator;
use bloomkv::sstable::block::{Block, BlockIter, bytewise};
use bloomkv::sstable::{ReadCounters, Table, TableBuildOptions, TableBuilder, TableReadOptions};
use bloomkv::util::key::{self, KIND_SEEK, Kind, MAX_SEQ};

/// Splits `data` into length-prefixed chunks (1-byte lengths), the last one taking the rest.
fn chunks(mut data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while let Some((&n, rest)) = data.split_first() {
        let n = usize::from(n).min(rest.len());
        out.push(&rest[..n]);
        data = &rest[n..];
    }
    out
}

/// Serialized Bloom filters: `BloomFilter::from_bytes` and the table policy's
/// `check_filter`/`may_contain_hash`.
pub fn filter_from_bytes(data: &[u8]) {
    if let Ok(f) = BloomFilter::from_bytes(data) {
        let probes: [&[u8]; 3] = [b"", b"a", data];
        let answers: Vec<bool> = probes.iter().map(|k| f.contains(k)).collect();
        let _ = (f.expected_fp_rate(), f.fill_ratio(), f.len());
        // What decodes re-encodes to something that decodes to the same filter.
        let again = BloomFilter::from_bytes(&f.to_bytes()).expect("re-encoded filter decodes");
        let answers2: Vec<bool> = probes.iter().map(|k| again.contains(k)).collect();
        assert_eq!(answers, answers2);
    }
    let policy = BloomPolicy::new(10.0);
    if policy.check_filter(data).is_ok() {
        let _ = policy.may_contain_hash(data, 0x1234_5678_9abc_def0);
        let _ = policy.may_contain(data, b"key");
        let _ = policy.expected_fp_rate(data);
    }
}

/// Block decoding and iteration, under both key orders.
pub fn block_decode(data: &[u8]) {
    let Ok(block) = Block::new(data.to_vec()) else {
        return;
    };
    let block = Arc::new(block);
    for order in [
        bytewise as fn(&[u8], &[u8]) -> std::cmp::Ordering,
        key::compare,
    ] {
        let _ = block.verify(order);
        let mut it = BlockIter::new(Arc::clone(&block), order);
        let mut steps = 0usize;
        if it.seek_to_first().is_ok() {
            while it.valid() {
                let _ = (it.key().len(), it.value().len());
                steps += 1;
                // Every entry takes at least one byte: more steps than bytes is a loop.
                assert!(steps <= data.len(), "block iteration does not advance");
                if it.advance().is_err() {
                    break;
                }
            }
        }
        let target = &data[..data.len().min(12)];
        if it.seek(target).is_ok() && it.valid() {
            let _ = it.key();
        }
    }
}

fn table_read_options() -> TableReadOptions {
    TableReadOptions {
        file_number: 7,
        filter: Some(Arc::new(BloomPolicy::new(10.0))),
        cache: None,
        counters: Arc::new(ReadCounters::default()),
    }
}

/// Opens `bytes` as a table and reads all of it; returns the entries if nothing failed.
type Entries = Vec<(Vec<u8>, Vec<u8>)>;

fn read_table(bytes: Vec<u8>) -> Option<(Arc<Table>, Entries)> {
    let file = Arc::new(MemRandomAccessFile::new(bytes, "fuzz.sst"));
    let table = Arc::new(Table::open(file, table_read_options()).ok()?);
    let mut it = table.iter();
    let mut out = Vec::new();
    it.seek_to_first().ok()?;
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next().ok()?;
    }
    Some((table, out))
}

/// Table open + iterate + get. First byte 0: the input is a table file. Otherwise the input
/// describes entries; they are written as a real table (with a Bloom filter), then one or
/// two bytes of it are changed at input-chosen offsets. Whatever reads back without an error
/// must be exactly what was written.
pub fn table_open_iterate(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode == 0 {
        if let Some((table, entries)) = read_table(rest.to_vec()) {
            for (k, _) in entries.iter().take(16) {
                if k.len() >= key::TRAILER_LEN {
                    let uk = key::user_key(k);
                    let policy = BloomPolicy::new(10.0);
                    let _ = table.get(&key::encode(uk, MAX_SEQ, KIND_SEEK), policy.hash_key(uk));
                }
            }
        }
        return;
    }
    if rest.len() < 4 {
        return;
    }
    let (edits, body) = rest.split_at(4);
    // Entries: sorted unique user keys from the chunks, values from the following chunk.
    let parts = chunks(body);
    let mut kv: Vec<(Vec<u8>, Vec<u8>)> = parts
        .chunks(2)
        .map(|p| {
            (
                p[0].to_vec(),
                p.get(1).map(|v| v.to_vec()).unwrap_or_default(),
            )
        })
        .collect();
    kv.sort_by(|a, b| a.0.cmp(&b.0));
    kv.dedup_by(|a, b| a.0 == b.0);
    let entries: Vec<(Vec<u8>, Vec<u8>)> = kv
        .into_iter()
        .enumerate()
        .map(|(i, (uk, v))| {
            let kind = if v.first() == Some(&0) {
                Kind::Delete
            } else {
                Kind::Put
            };
            (key::encode(&uk, i as u64 + 1, kind), v)
        })
        .collect();
    let file = MemWritableFile::new();
    let mut b = TableBuilder::new(
        Box::new(file.clone()),
        PathBuf::from("fuzz.sst"),
        TableBuildOptions {
            block_bytes: 32 + usize::from(mode) * 4,
            restart_interval: 1 + usize::from(mode % 8),
            filter: Some(Arc::new(BloomPolicy::new(10.0))),
            // Raw, LZ4 and zstd blocks in turn, so damage reaches the decompressors too.
            compression: [
                bloomkv::Compression::None,
                bloomkv::Compression::Lz4,
                bloomkv::Compression::Zstd { level: 1 },
            ][usize::from(mode % 3)],
            file_number: None,
            // Every other table also carries a prefix filter (format version 4).
            prefix_extractor: (mode % 2 == 1).then(|| {
                Arc::new(bloomkv::filter::FixedPrefix::new(2))
                    as Arc<dyn bloomkv::filter::PrefixExtractor>
            }),
        },
    );
    for (k, v) in &entries {
        b.add(k, v).expect("in-memory table build");
    }
    b.finish().expect("in-memory table finish");
    let written = file.contents();
    let mut bytes = written.clone();
    // Damage: edits[0..2] pick an offset (scaled to the file), edits[2] the xor mask (0 =
    // none), edits[3] odd = also cut the file there.
    let at = (usize::from(u16::from_le_bytes([edits[0], edits[1]])) * bytes.len()) >> 16;
    if let Some(byte) = bytes.get_mut(at) {
        *byte ^= edits[2];
    }
    if edits[3] % 2 == 1 {
        bytes.truncate(at + usize::from(edits[3] / 2));
    }
    let damaged = bytes != written;
    let Some((table, read)) = read_table(bytes) else {
        return;
    };
    assert_eq!(
        read, entries,
        "table read back wrong entries (damaged: {damaged})"
    );
    let policy = BloomPolicy::new(10.0);
    for (k, v) in &entries {
        let uk = key::user_key(k);
        if let Ok(got) = table.get(&key::encode(uk, MAX_SEQ, KIND_SEEK), policy.hash_key(uk)) {
            let (kind, seq, value) = got.entry.expect("a key the table holds was not found");
            let p = key::parse(k).unwrap();
            assert_eq!((kind, seq), (p.kind, p.seq));
            if kind == Kind::Put {
                assert_eq!(&value, v);
            }
        }
    }
}

/// Frames `records` as a log (or manifest) image with valid checksums.
fn framed(records: &[&[u8]]) -> Vec<u8> {
    let file = MemWritableFile::new();
    let mut w = LogWriter::new(Box::new(file.clone()));
    for r in records {
        w.add_record(r).expect("in-memory log write");
    }
    w.flush().expect("in-memory log flush");
    file.contents()
}

/// First byte even: the input is a raw log image. Odd: the rest is split into records that are
/// framed with valid checksums, so the record contents (write batches) get fuzzed too.
fn log_image(data: &[u8]) -> Option<Vec<u8>> {
    let (&mode, rest) = data.split_first()?;
    Some(if mode % 2 == 0 {
        rest.to_vec()
    } else {
        framed(&chunks(rest))
    })
}

/// WAL replay as recovery does it: records, then write batches, in both recovery modes.
pub fn wal_replay(data: &[u8]) {
    let Some(image) = log_image(data) else {
        return;
    };
    for mode in [RecoveryMode::Strict, RecoveryMode::BestEffort] {
        let mut r = LogReader::new(image.clone(), PathBuf::from("fuzz.log"), mode);
        let mut total = 0usize;
        while let Ok(Some(record)) = r.next_record() {
            total += record.len();
            assert!(
                total <= image.len(),
                "log returned more bytes than it holds"
            );
            if let Ok(batch) = WriteBatch::from_payload(&record) {
                let mut n = 0;
                for (_kind, k, v) in batch.ops() {
                    n += 1;
                    assert!(k.len() + v.len() <= record.len());
                }
                assert_eq!(n, batch.len());
            }
        }
        let _ = (r.valid_len(), r.tail_dropped(), r.dropped().len());
    }
}

struct ManifestScratch {
    dir: tempfile::TempDir,
    cache: Arc<bloomkv::db::table_cache::TableCache>,
}

fn scratch() -> &'static ManifestScratch {
    static S: OnceLock<ManifestScratch> = OnceLock::new();
    S.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let cache = Arc::new(bloomkv::db::table_cache::TableCache::new(
            StdEnv::shared(),
            dir.path().to_path_buf(),
            4,
            None,
            Arc::new(ReadCounters::default()),
        ));
        ManifestScratch { dir, cache }
    })
}

/// Manifest replay: `read_manifest` on the image (raw, or records framed after a valid
/// header), then every edit applied to a `Version` as `open` does.
pub fn manifest_replay(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let image = if mode % 2 == 0 {
        rest.to_vec()
    } else {
        let mut header = manifest::MANIFEST_MAGIC.to_vec();
        header.extend_from_slice(&manifest::MANIFEST_FORMAT_VERSION.to_le_bytes());
        let mut records: Vec<&[u8]> = vec![&header];
        records.extend(chunks(rest));
        framed(&records)
    };
    let s = scratch();
    let path = s.dir.path().join("MANIFEST-000001");
    std::fs::write(&path, &image).expect("write scratch manifest");
    let Ok(edits) = manifest::read_manifest(&StdEnv, &path) else {
        return;
    };
    let mut version = Version::default();
    for edit in &edits {
        // Encoding is canonical enough to round-trip what it decoded.
        assert_eq!(
            VersionEdit::decode(&edit.encode()).ok().as_ref(),
            Some(edit)
        );
        let applied = version.apply(edit, |meta| {
            let path = s.dir.path().join(format!("{:06}.sst", meta.number));
            Arc::new(TableFile::new(
                meta,
                path,
                StdEnv::shared(),
                Arc::clone(&s.cache),
            ))
        });
        match applied {
            Ok(v) => version = v,
            Err(_) => return,
        }
    }
    let _ = version.all_files().count();
}
