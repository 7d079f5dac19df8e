//! `kvctl sst dump FILE [--entries] [--json]`: everything a table file says about itself,
//! read with the library's public format pieces, every block verified (checksum, entry
//! layout, order). As text, or as one JSON document (layout in docs/CLI.md).

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

use serde_json::{Map, Value, json};

use crate::args::{GlobalArgs, HexArg};
use crate::commands::stats::rate;
use crate::escape::Codec;
use crate::exit::CliError;
use crate::output::{JSON_FORMAT, Out, document};

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
    /// The same as one JSON document on stdout, printed once every block is verified
    /// (layout in docs/CLI.md).
    #[arg(long)]
    pub json: bool,
}

type R<T> = Result<T, bloomkv::Error>;

/// Dumps the table. Text is printed as it is verified, so on damage everything before it
/// has been shown; the damage itself is the error line (exit 3), naming file and offset.
/// JSON is printed whole once every block has been read: damage that stops the dump prints
/// none, a damaged filter (which does not) is described in it and still exits 3.
pub fn run(g: &GlobalArgs, a: Args) -> Result<(), CliError> {
    let mut out = Out::new();
    let mut sink = Sink {
        out: &mut out,
        json: a.json.then(|| Doc {
            fields: Map::new(),
            entries: a.entries.then(String::new),
        }),
    };
    let result = dump(&a.file, a.entries, g.codec(), &mut sink);
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

/// Where the dump goes: text lines to stdout as each part is verified, or the fields of
/// one JSON document printed at the end.
struct Sink<'a> {
    out: &'a mut Out,
    json: Option<Doc>,
}

/// The JSON document being built.
struct Doc {
    fields: Map<String, Value>,
    /// With `--entries`: the entries array's items, already serialized and comma-separated
    /// (a large table's entries as text, not as a tree of `Value`s).
    entries: Option<String>,
}

impl Sink<'_> {
    fn json(&self) -> bool {
        self.json.is_some()
    }

    /// One part of the dump: its text lines, or its field of the document.
    fn part(
        &mut self,
        text: &str,
        name: &str,
        value: impl FnOnce() -> Value,
    ) -> Result<(), CliError> {
        match &mut self.json {
            None => self.out.bytes(text.as_bytes()),
            Some(d) => {
                d.fields.insert(name.to_string(), value());
                Ok(())
            }
        }
    }

    /// One entry (`--entries`): a text line, or an item of the `entries` array.
    fn entry(&mut self, line: &str, value: impl FnOnce() -> Value) -> Result<(), CliError> {
        match &mut self.json {
            None => self.out.line(line),
            Some(Doc {
                entries: Some(items),
                ..
            }) => {
                if !items.is_empty() {
                    items.push(',');
                }
                items.push_str(&value().to_string());
                Ok(())
            }
            Some(_) => Ok(()),
        }
    }

    /// Prints the JSON document, if that is the output.
    fn finish(&mut self) -> Result<(), CliError> {
        let Some(d) = self.json.take() else {
            return Ok(());
        };
        let mut text = document(JSON_FORMAT, Value::Object(d.fields)).to_string();
        if let Some(items) = d.entries {
            // The document is an object: its closing brace goes after the entries.
            text.pop();
            text.push_str(",\"entries\":[");
            text.push_str(&items);
            text.push_str("]}");
        }
        self.out.line(&text)
    }
}

fn dump(path: &Path, entries: bool, codec: Codec, sink: &mut Sink) -> Result<(), Failure> {
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
    sink.part(&s, "file", || json!(path.display().to_string()))?;
    sink.part("", "file_bytes", || json!(size))?;
    let s = format!(
        "footer       at {blocks_end}: format version {}, metaindex {}, index {}, magic {TABLE_MAGIC:#018x}\n",
        footer.format_version,
        handle(footer.metaindex),
        handle(footer.index)
    );
    sink.part(&s, "footer", || {
        json!({
            "offset": blocks_end,
            "format_version": footer.format_version,
            "metaindex": handle_json(footer.metaindex),
            "index": handle_json(footer.index),
            // An identifier, not a quantity: as text, since JSON numbers stop being exact
            // at 2^53.
            "magic": format!("{TABLE_MAGIC:#018x}"),
        })
    })?;
    properties(sink, props, codec)?;

    let meta = block_entries(&*file, path, footer.metaindex, blocks_end, bytewise)?;
    let mut s = String::from("metaindex   ");
    for (name, h) in &meta {
        let _ = write!(s, " {} {};", String::from_utf8_lossy(name), handle(*h));
    }
    s.push('\n');
    sink.part(&s, "metaindex", || {
        Value::Array(
            meta.iter()
                .map(|(name, h)| {
                    json!({
                        "name": String::from_utf8_lossy(name),
                        "offset": h.offset,
                        "size": h.size,
                    })
                })
                .collect(),
        )
    })?;
    range_deletions(&*file, path, props, &meta, blocks_end, entries, codec, sink)?;
    let filter_result = filter(&*file, path, props, &meta, blocks_end, sink);
    data_blocks(
        &*file, path, &footer, props, blocks_end, entries, codec, sink,
    )?;
    // Every block has been read: the JSON document (which describes a damaged filter) can
    // be printed.
    sink.finish()?;
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
    sink: &mut Sink,
) -> Result<(), Failure> {
    let found = meta
        .iter()
        .find(|(name, _)| name.as_slice() == RANGE_DELETION_BLOCK_NAME.as_bytes());
    let Some((_, h)) = found else {
        sink.part("range dels   none\n", "range_deletions", || Value::Null)?;
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
    let mut s = String::new();
    let _ = writeln!(
        s,
        "range dels   {} range tombstones at {}",
        tombstones.len(),
        handle(*h)
    );
    if entries && !sink.json() {
        for (start, end, seq) in &tombstones {
            let _ = writeln!(
                s,
                "range del    [{}, {}) @ seq {seq}",
                codec.show(start),
                codec.show(end)
            );
        }
    }
    sink.part(&s, "range_deletions", || {
        let mut o = json!({
            "count": tombstones.len(),
            "offset": h.offset,
            "size": h.size,
        });
        if entries {
            o["tombstones"] = tombstones
                .iter()
                .map(|(start, end, seq)| {
                    json!({
                        "start": codec.show(start),
                        "end": codec.show(end),
                        "sequence": seq,
                    })
                })
                .collect();
        }
        o
    })?;
    Ok(())
}

fn handle(h: BlockHandle) -> String {
    format!("@{}+{}", h.offset, h.size)
}

fn handle_json(h: BlockHandle) -> Value {
    json!({"offset": h.offset, "size": h.size})
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

/// An internal key as JSON: user key, sequence and kind, or its raw bytes when it does not
/// parse.
fn internal_key_json(codec: Codec, ikey: &[u8]) -> Value {
    match key::parse(ikey) {
        Ok(p) => json!({
            "key": codec.show(p.user_key),
            "sequence": p.seq,
            "kind": kind_word(p.kind),
        }),
        Err(_) => json!({"malformed": codec.show(ikey)}),
    }
}

fn kind_word(k: Kind) -> &'static str {
    match k {
        Kind::Put => "put",
        Kind::Delete => "del",
    }
}

fn properties(sink: &mut Sink, p: &TableProperties, codec: Codec) -> Result<(), CliError> {
    let mut s = String::new();
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
    let has_keys = p.entries > 0 || p.range_deletions > 0;
    if has_keys {
        let _ = writeln!(
            s,
            "key range    {}  ..  {}",
            internal_key(codec, &p.smallest_key),
            internal_key(codec, &p.largest_key)
        );
    }
    sink.part(&s, "properties", || {
        let key = |k: &[u8]| {
            if has_keys {
                internal_key_json(codec, k)
            } else {
                Value::Null
            }
        };
        json!({
            "format_version": p.format_version,
            "file_number": p.file_number,
            "entries": p.entries,
            "deletions": p.deletions,
            "range_deletions": p.range_deletions,
            "data_blocks": p.data_blocks,
            "raw_key_bytes": p.raw_key_bytes,
            "raw_value_bytes": p.raw_value_bytes,
            "compression": p.compression,
            "data_raw_bytes": p.data_raw_bytes,
            "data_bytes": p.data_bytes,
            "compression_ratio": p.compression_ratio(),
            "filter_policy": p.filter_policy,
            "filter_bits_per_key": p.filter_bits_per_key,
            "filter_bytes": p.filter_bytes,
            "prefix_extractor": p.prefix_extractor,
            "smallest_key": key(&p.smallest_key),
            "largest_key": key(&p.largest_key),
        })
    })
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

/// The filter block: its policy and size, checked whole, and what it predicts (a Bloom
/// filter's parameters decoded). A damaged filter is described and returned as the error.
fn filter(
    file: &dyn RandomAccessFile,
    path: &Path,
    p: &TableProperties,
    meta: &[(Vec<u8>, BlockHandle)],
    blocks_end: u64,
    sink: &mut Sink,
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
        sink.part(&s, "filter", || Value::Null)?;
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
    // What every kind shows; the checks add to it.
    let mut o = json!({
        "policy": policy_name,
        "built_bits_per_key": p.filter_bits_per_key,
        "offset": h.offset,
        "size": h.size,
    });
    let per_entry = |bits: f64| {
        if p.entries > 0 {
            bits / p.entries as f64
        } else {
            0.0
        }
    };
    let checked = if policy_name != BloomPolicy::NAME {
        // Another built-in kind (binary fuse, Ribbon): checked whole and its predicted rate
        // shown; its parameters are its own.
        let Some(policy) = bloomkv::filter::builtin_policy(&policy_name) else {
            let _ = writeln!(s, "             (unknown policy: parameters not decoded)");
            o["decoded"] = json!(false);
            sink.part(&s, "filter", || o)?;
            return Ok(());
        };
        read_block(file, path, h, blocks_end)
            .and_then(|bytes| {
                policy
                    .check_filter(&bytes)
                    .map(|()| (bytes.len(), policy.expected_fp_rate(&bytes)))
                    .map_err(|e| e.located(path, h.offset))
            })
            .map(|(len, fpr)| {
                let bits_per_entry = per_entry(len as f64 * 8.0);
                let _ = writeln!(
                    s,
                    "             {len} bytes ({bits_per_entry:.2} bits/entry), checksum verified, \
                     expected FPR {}",
                    fpr.map_or("-".to_string(), rate)
                );
                o["decoded"] = json!(true);
                o["bits_per_entry"] = json!(bits_per_entry);
                o["expected_fpr"] = json!(fpr);
            })
    } else {
        read_block(file, path, h, blocks_end)
            .and_then(|bytes| {
                BloomPolicy::default()
                    .check_filter(&bytes)
                    .and_then(|()| BloomFilter::from_bytes(&bytes))
                    .map_err(|e| e.located(path, h.offset))
            })
            .map(|f| {
                let bits_per_entry = per_entry(f.bit_len() as f64);
                let _ = writeln!(
                    s,
                    "             k = {} probes, {} bits ({bits_per_entry:.2} bits/entry), layout {:?}, {} keys, \
                     expected FPR {}, fill {:.1}%",
                    f.num_hashes(),
                    f.bit_len(),
                    f.layout(),
                    f.len(),
                    rate(f.expected_fp_rate()),
                    100.0 * f.fill_ratio()
                );
                o["decoded"] = json!(true);
                o["bits_per_entry"] = json!(bits_per_entry);
                o["expected_fpr"] = json!(f.expected_fp_rate());
                o["k"] = json!(f.num_hashes());
                o["bits"] = json!(f.bit_len());
                o["layout"] = json!(format!("{:?}", f.layout()).to_lowercase());
                o["keys"] = json!(f.len());
                o["fill_ratio"] = json!(f.fill_ratio());
            })
    };
    match checked {
        Ok(()) => {
            o["damage"] = Value::Null;
            sink.part(&s, "filter", || o)?;
            Ok(())
        }
        Err(e) => {
            let _ = writeln!(s, "             DAMAGED: {e}");
            o["damage"] = json!(e.to_string());
            sink.part(&s, "filter", || o)?;
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
    sink: &mut Sink,
) -> Result<(), Failure> {
    let index = block_entries(file, path, footer.index, blocks_end, key::compare)?;
    let (mut count, mut total, mut min, mut max) = (0u64, 0u64, u64::MAX, 0u64);
    let (mut puts, mut dels) = (0u64, 0u64);
    // A compressed block is always stored smaller than it decompresses to.
    let (mut raw_total, mut compressed) = (0u64, 0u64);
    let mut line = String::new();
    if entries && !sink.json() {
        sink.out
            .line("entries      (key<TAB>sequence<TAB>put|del<TAB>value")?;
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
                if !sink.json() {
                    codec.write(&mut line, k.user_key);
                    let _ = write!(line, "\t{}\t{}\t", k.seq, kind_word(k.kind));
                    codec.write(&mut line, it.value());
                }
                sink.entry(&line, || {
                    json!({
                        "key": codec.show(k.user_key),
                        "sequence": k.seq,
                        "kind": kind_word(k.kind),
                        "value": codec.show(it.value()),
                    })
                })?;
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
    let min = if count > 0 { min } else { 0 };
    let ratio = if total > 0 {
        raw_total as f64 / total as f64
    } else {
        1.0
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "data blocks  {count} blocks, {total} bytes (min {min}, avg {avg}, max {max}), {} entries \
         ({puts} puts, {dels} deletions); every block's checksum, layout and key order verified",
        puts + dels,
    );
    let _ = writeln!(
        s,
        "             {compressed} of {count} blocks compressed; {raw_total} bytes decompressed \
         (ratio {ratio:.2})"
    );
    sink.part(&s, "data_blocks", || {
        json!({
            "blocks": count,
            "bytes": total,
            "min_block_bytes": min,
            "avg_block_bytes": avg,
            "max_block_bytes": max,
            "entries": puts + dels,
            "puts": puts,
            "deletions": dels,
            "compressed_blocks": compressed,
            "decompressed_bytes": raw_total,
            "compression_ratio": ratio,
            "verified": ["checksum", "layout", "key_order", "entry_count"],
        })
    })?;
    Ok(())
}
