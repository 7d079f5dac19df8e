//! `kvctl sst dump FILE [--entries]`: everything a table file says about itself, read with
//! the library's public format pieces, every block verified (checksum, entry layout, order).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bloomkv::env::{Env, RandomAccessFile, StdEnv};
use bloomkv::filter::{BloomFilter, BloomPolicy, FilterPolicy};
use bloomkv::sstable::block::{Block, BlockIter, bytewise};
use bloomkv::sstable::format::{BlockHandle, FOOTER_LEN, Footer, TABLE_MAGIC, read_block};
use bloomkv::sstable::internal_key::{self as key, Kind};
use bloomkv::sstable::{
    FILTER_BLOCK_PREFIX, RANGE_DELETION_BLOCK_NAME, ReadCounters, Table, TableProperties,
    TableReadOptions, decode_range_deletions,
};

use crate::args::{GlobalArgs, HexArg};
use crate::commands::stats::rate;
use crate::escape::Codec;
use crate::exit::CliError;
use crate::output::Out;

/// Arguments of `sst dump`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub hex: HexArg,
    /// The .sst file.
    pub file: PathBuf,
    /// Also print every entry: key, sequence, put or del, value, TAB-separated.
    #[arg(
        long,
        help = "Also print every entry: key<TAB>sequence<TAB>put|del<TAB>value"
    )]
    pub entries: bool,
}

type R<T> = Result<T, bloomkv::Error>;

/// Dumps the table. Output is printed as it is verified, so on damage everything before it
/// has been shown; the damage itself is the error line (exit 3), naming file and offset.
pub fn run(g: &GlobalArgs, a: Args) -> Result<(), CliError> {
    let mut out = Out::new();
    let result = dump(&a.file, a.entries, g.codec(), &mut out);
    out.flush()?;
    result.map_err(|e| match e {
        Failure::Db(e) => CliError::db(format_args!("sst dump {}", a.file.display()), e),
        Failure::Cli(e) => e,
    })
}

enum Failure {
    Db(bloomkv::Error),
    Cli(CliError),
}

impl From<bloomkv::Error> for Failure {
    fn from(e: bloomkv::Error) -> Self {
        Failure::Db(e)
    }
}

impl From<CliError> for Failure {
    fn from(e: CliError) -> Self {
        Failure::Cli(e)
    }
}

fn dump(path: &Path, entries: bool, codec: Codec, out: &mut Out) -> Result<(), Failure> {
    let file = StdEnv.open_random_access(path)?;
    // Table::open verifies footer, metaindex, properties and index (and their agreement).
    let table = Table::open(
        file.clone(),
        TableReadOptions {
            file_number: 0,
            filter: Some(Arc::new(BloomPolicy::default())),
            cache: None,
            counters: Arc::new(ReadCounters::default()),
        },
    )?;
    let size = file.size();
    let blocks_end = size - FOOTER_LEN as u64;
    let footer = Footer::decode(&file.read_at(blocks_end, FOOTER_LEN)?)
        .map_err(|e| e.located(path, blocks_end))?;
    let props = table.properties();

    let mut s = String::new();
    let _ = writeln!(s, "file         {} ({size} bytes)", path.display());
    let _ = writeln!(
        s,
        "footer       at {blocks_end}: format version {}, metaindex {}, index {}, magic {TABLE_MAGIC:#018x}",
        footer.format_version,
        handle(footer.metaindex),
        handle(footer.index)
    );
    properties(&mut s, props, codec);
    out.bytes(s.as_bytes())?;

    let meta = block_entries(&*file, path, footer.metaindex, blocks_end, bytewise)?;
    let mut s = String::from("metaindex   ");
    for (name, h) in &meta {
        let _ = write!(s, " {} {};", String::from_utf8_lossy(name), handle(*h));
    }
    s.push('\n');
    out.bytes(s.as_bytes())?;
    range_deletions(&*file, path, props, &meta, blocks_end, entries, codec, out)?;
    let filter_result = filter(&*file, path, props, &meta, blocks_end, out);
    data_blocks(
        &*file, path, &footer, props, blocks_end, entries, codec, out,
    )?;
    // A damaged filter does not stop reads (the engine then reads without it) but is damage
    // all the same: reported after the rest has been verified.
    filter_result
}

/// The range-deletion block, verified: its tombstone count (checked against the
/// properties) and, with `--entries`, every tombstone.
#[expect(
    clippy::too_many_arguments,
    reason = "the dump's shared context, passed plainly"
)]
fn range_deletions(
    file: &dyn RandomAccessFile,
    path: &Path,
    p: &TableProperties,
    meta: &[(Vec<u8>, BlockHandle)],
    blocks_end: u64,
    entries: bool,
    codec: Codec,
    out: &mut Out,
) -> Result<(), Failure> {
    let found = meta
        .iter()
        .find(|(name, _)| name.as_slice() == RANGE_DELETION_BLOCK_NAME.as_bytes());
    let mut s = String::new();
    let Some((_, h)) = found else {
        let _ = writeln!(s, "range dels   none");
        out.bytes(s.as_bytes())?;
        return Ok(());
    };
    let tombstones = read_block(file, path, *h, blocks_end)
        .and_then(|b| decode_range_deletions(&b).map_err(|e| e.located(path, h.offset)))?;
    if tombstones.len() as u64 != p.range_deletions {
        return Err(bloomkv::Error::Corruption {
            file: path.to_path_buf(),
            offset: h.offset,
            why: format!(
                "range-deletion block holds {} tombstones, the properties say {}",
                tombstones.len(),
                p.range_deletions
            ),
        }
        .into());
    }
    let _ = writeln!(
        s,
        "range dels   {} range tombstones at {}",
        tombstones.len(),
        handle(*h)
    );
    if entries {
        for (start, end, seq) in &tombstones {
            let _ = writeln!(
                s,
                "range del    [{}, {}) @ seq {seq}",
                codec.show(start),
                codec.show(end)
            );
        }
    }
    out.bytes(s.as_bytes())?;
    Ok(())
}

fn handle(h: BlockHandle) -> String {
    format!("@{}+{}", h.offset, h.size)
}

fn internal_key(codec: Codec, ikey: &[u8]) -> String {
    match key::parse(ikey) {
        Ok(p) => format!(
            "{} @ seq {} {}",
            codec.show(p.user_key),
            p.seq,
            kind_word(p.kind)
        ),
        Err(_) => format!("{} (malformed internal key)", codec.show(ikey)),
    }
}

fn kind_word(k: Kind) -> &'static str {
    match k {
        Kind::Put => "put",
        Kind::Delete => "del",
    }
}

fn properties(s: &mut String, p: &TableProperties, codec: Codec) {
    let _ = writeln!(
        s,
        "properties   format version {}, {} entries ({} deletions), {} range tombstones, {} data blocks, raw key bytes {}, raw value bytes {}",
        p.format_version,
        p.entries,
        p.deletions,
        p.range_deletions,
        p.data_blocks,
        p.raw_key_bytes,
        p.raw_value_bytes
    );
    let _ = writeln!(
        s,
        "compression  {}: data blocks {} bytes raw, {} bytes stored (ratio {:.2})",
        p.compression,
        p.data_raw_bytes,
        p.data_bytes,
        p.compression_ratio()
    );
    if p.entries > 0 || p.range_deletions > 0 {
        let _ = writeln!(
            s,
            "key range    {}  ..  {}",
            internal_key(codec, &p.smallest_key),
            internal_key(codec, &p.largest_key)
        );
    }
}

/// The metaindex (or any bytewise block) as (name, handle) pairs.
fn block_entries(
    file: &dyn RandomAccessFile,
    path: &Path,
    h: BlockHandle,
    blocks_end: u64,
    order: fn(&[u8], &[u8]) -> std::cmp::Ordering,
) -> R<Vec<(Vec<u8>, BlockHandle)>> {
    let locate = |e: bloomkv::Error| e.located(path, h.offset);
    let block = Block::new(read_block(file, path, h, blocks_end)?).map_err(locate)?;
    let mut it = BlockIter::new(Arc::new(block), order);
    let mut v = Vec::new();
    it.seek_to_first().map_err(locate)?;
    while it.valid() {
        let at = h.offset + it.entry_offset() as u64;
        let bh = BlockHandle::decode_exact(it.value()).map_err(|e| e.located(path, at))?;
        v.push((it.key().to_vec(), bh));
        it.advance().map_err(locate)?;
    }
    Ok(v)
}

fn filter(
    file: &dyn RandomAccessFile,
    path: &Path,
    p: &TableProperties,
    meta: &[(Vec<u8>, BlockHandle)],
    blocks_end: u64,
    out: &mut Out,
) -> Result<(), Failure> {
    let mut s = String::new();
    let found = meta
        .iter()
        .find_map(|(name, h)| Some((name.strip_prefix(FILTER_BLOCK_PREFIX.as_bytes())?, *h)));
    let Some((policy_name, h)) = found else {
        let _ = writeln!(
            s,
            "filter       none (properties: policy {:?}, {} bytes)",
            p.filter_policy, p.filter_bytes
        );
        out.bytes(s.as_bytes())?;
        return Ok(());
    };
    let policy_name = String::from_utf8_lossy(policy_name).into_owned();
    let _ = writeln!(
        s,
        "filter       policy {policy_name}, built with {} bits/key, {} bytes at {}",
        p.filter_bits_per_key,
        h.size,
        handle(h)
    );
    if policy_name != BloomPolicy::NAME {
        // Another built-in kind (binary fuse, Ribbon): checked whole and its predicted rate
        // shown; its parameters are its own.
        let Some(policy) = bloomkv::filter::builtin_policy(&policy_name) else {
            let _ = writeln!(s, "             (unknown policy: parameters not decoded)");
            out.bytes(s.as_bytes())?;
            return Ok(());
        };
        let checked = read_block(file, path, h, blocks_end).and_then(|bytes| {
            policy
                .check_filter(&bytes)
                .map(|()| (bytes.len(), policy.expected_fp_rate(&bytes)))
                .map_err(|e| e.located(path, h.offset))
        });
        return match checked {
            Ok((len, fpr)) => {
                let per_entry = if p.entries > 0 {
                    len as f64 * 8.0 / p.entries as f64
                } else {
                    0.0
                };
                let _ = writeln!(
                    s,
                    "             {len} bytes ({per_entry:.2} bits/entry), checksum verified, \
                     expected FPR {}",
                    fpr.map_or("-".to_string(), rate)
                );
                out.bytes(s.as_bytes())?;
                Ok(())
            }
            Err(e) => {
                let _ = writeln!(s, "             DAMAGED: {e}");
                out.bytes(s.as_bytes())?;
                Err(Failure::Db(e))
            }
        };
    }
    let decoded = read_block(file, path, h, blocks_end).and_then(|bytes| {
        BloomPolicy::default()
            .check_filter(&bytes)
            .and_then(|()| BloomFilter::from_bytes(&bytes))
            .map_err(|e| e.located(path, h.offset))
    });
    match decoded {
        Ok(f) => {
            let per_entry = if p.entries > 0 {
                f.bit_len() as f64 / p.entries as f64
            } else {
                0.0
            };
            let _ = writeln!(
                s,
                "             k = {} probes, {} bits ({per_entry:.2} bits/entry), layout {:?}, {} keys, \
                 expected FPR {}, fill {:.1}%",
                f.num_hashes(),
                f.bit_len(),
                f.layout(),
                f.len(),
                rate(f.expected_fp_rate()),
                100.0 * f.fill_ratio()
            );
            out.bytes(s.as_bytes())?;
            Ok(())
        }
        Err(e) => {
            let _ = writeln!(s, "             DAMAGED: {e}");
            out.bytes(s.as_bytes())?;
            Err(Failure::Db(e))
        }
    }
}

#[expect(
    clippy::too_many_arguments,
    reason = "one call site; the pieces are what the dump has already read"
)]
fn data_blocks(
    file: &dyn RandomAccessFile,
    path: &Path,
    footer: &Footer,
    p: &TableProperties,
    blocks_end: u64,
    entries: bool,
    codec: Codec,
    out: &mut Out,
) -> Result<(), Failure> {
    let index = block_entries(file, path, footer.index, blocks_end, key::compare)?;
    let (mut count, mut total, mut min, mut max) = (0u64, 0u64, u64::MAX, 0u64);
    let (mut puts, mut dels) = (0u64, 0u64);
    // A compressed block is always stored smaller than it decompresses to.
    let (mut raw_total, mut compressed) = (0u64, 0u64);
    let mut line = String::new();
    if entries {
        out.line("entries      (key<TAB>sequence<TAB>put|del<TAB>value")?;
    }
    for (_, h) in &index {
        let locate = |e: bloomkv::Error| e.located(path, h.offset);
        let block = Arc::new(Block::new(read_block(file, path, *h, blocks_end)?).map_err(locate)?);
        block.verify(key::compare).map_err(locate)?;
        raw_total += block.size() as u64;
        if block.size() as u64 != h.size {
            compressed += 1;
        }
        count += 1;
        total += h.size;
        min = min.min(h.size);
        max = max.max(h.size);
        let mut it = BlockIter::new(block, key::compare);
        it.seek_to_first().map_err(locate)?;
        while it.valid() {
            let at = h.offset + it.entry_offset() as u64;
            let k = key::parse(it.key()).map_err(|e| e.located(path, at))?;
            match k.kind {
                Kind::Put => puts += 1,
                Kind::Delete => dels += 1,
            }
            if entries {
                line.clear();
                codec.write(&mut line, k.user_key);
                let _ = write!(line, "\t{}\t{}\t", k.seq, kind_word(k.kind));
                codec.write(&mut line, it.value());
                out.line(&line)?;
            }
            it.advance().map_err(locate)?;
        }
    }
    if puts + dels != p.entries || dels != p.deletions {
        return Err(Failure::Db(bloomkv::Error::corruption(
            path,
            footer.index.offset,
            format!(
                "data blocks hold {} entries ({dels} deletions), properties say {} ({})",
                puts + dels,
                p.entries,
                p.deletions
            ),
        )));
    }
    let avg = total.checked_div(count).unwrap_or(0);
    out.line(&format!(
        "data blocks  {count} blocks, {total} bytes (min {}, avg {avg}, max {max}), {} entries \
         ({puts} puts, {dels} deletions); every block's checksum, layout and key order verified",
        if count > 0 { min } else { 0 },
        puts + dels
    ))?;
    out.line(&format!(
        "             {compressed} of {count} blocks compressed; {raw_total} bytes decompressed \
         (ratio {:.2})",
        if total > 0 {
            raw_total as f64 / total as f64
        } else {
            1.0
        }
    ))?;
    Ok(())
}
