//! Command-line flags and the server's configuration.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::{Parser, ValueEnum};

/// When the write-ahead log is forced to stable storage (Redis's `appendfsync`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum AppendFsync {
    /// Every write command's batch is fsynced before it is acknowledged (`sync_writes`).
    Always,
    /// A background thread fsyncs the WAL once a second: a power cut loses at most about a
    /// second of acknowledged writes; a crash of the process alone loses none.
    #[default]
    Everysec,
    /// Never fsync explicitly (the OS writes back when it likes); a process crash loses
    /// nothing, a power cut may lose recent writes.
    No,
}

/// Configuration of a server: every flag of `bloomkv-server`.
#[derive(Clone, Debug, Parser)]
#[command(
    name = "bloomkv-server",
    version,
    about = "A Redis-protocol server in front of the bloomkv LSM engine"
)]
pub struct Config {
    /// Database directory (created if missing).
    #[arg(long, default_value = "./bloomkv-data")]
    pub dir: PathBuf,
    /// Address to listen on. Clients from other hosts are refused unless --requirepass is set.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// TCP port (0: any free port).
    #[arg(long, default_value_t = 6379)]
    pub port: u16,
    /// Password for the default user; clients must AUTH before other commands.
    #[arg(long)]
    pub requirepass: Option<String>,
    /// The ACL file (Redis's `aclfile`): its users (`user <name> <rules...>` lines) are
    /// loaded at start, replacing `default` if it names it (a server whose file has an
    /// error does not start); `ACL LOAD` reads it again, `ACL SAVE` writes the users to it.
    #[arg(long, value_name = "PATH")]
    pub aclfile: Option<PathBuf>,
    /// WAL sync policy: always, everysec or no (Redis's meanings).
    #[arg(long, value_enum, default_value_t = AppendFsync::Everysec)]
    pub appendfsync: AppendFsync,
    /// Most clients connected at once.
    #[arg(long, default_value_t = 10_000)]
    pub maxclients: usize,
    /// Longest bulk string accepted from a client, in bytes (Redis's proto-max-bulk-len).
    #[arg(long, default_value_t = 512 * 1024 * 1024)]
    pub proto_max_bulk_len: usize,
    /// Most unparsed input bytes one client may hold (Redis's client-query-buffer-limit).
    #[arg(long, default_value_t = 1024 * 1024 * 1024)]
    pub client_query_buffer_limit: usize,
    /// Block cache size in MiB.
    #[arg(long, default_value_t = 8)]
    pub block_cache_mb: usize,
    /// Bloom filter bits per key in the engine's SSTables (0 disables them).
    #[arg(long, default_value_t = 10.0)]
    pub bits_per_key: f64,
    /// Target size of the engine's data blocks in bytes (smaller blocks make a block-cache
    /// miss cheaper and the index larger).
    #[arg(long, default_value_t = 4096)]
    pub block_bytes: usize,
    /// Block compression of the engine's tables per level, as a comma-separated list (none,
    /// lz4, zstd or zstd:LEVEL): entry i for level i, the last entry for every level below.
    /// `none,none,lz4` keeps levels 0 and 1 (the newest ~256 MiB) raw: reads there
    /// decompress nothing and, with --mmap-reads, copy nothing, but compressible values are
    /// flushed and compacted at full size.
    #[arg(long, default_value = "lz4", value_parser = parse_compression, value_name = "C,...")]
    pub compression: CompressionPerLevel,
    /// Read the engine's tables through memory maps (yes) or with pread (no). Uncompressed
    /// blocks are then read in place, with no system call, no copy and no room in the block
    /// cache; the pages they touch count in the process's RSS as the page cache's.
    #[arg(long, default_value = "yes", value_parser = parse_yes_no, value_name = "yes|no", action = clap::ArgAction::Set)]
    pub mmap_reads: bool,
    /// Memtable size in MiB (the engine's default: large values and write bursts need room;
    /// a small memtable makes every big write wait for a flush).
    #[arg(long, default_value_t = 64)]
    pub memtable_mb: usize,
    /// Worker threads for client I/O (0: one per CPU).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Number of databases `SELECT` can address (Redis's `databases`): 1 to 256.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub databases: u16,
    /// Least serious log lines written: debug, verbose, notice or warning (Redis's levels).
    #[arg(long, value_enum, default_value_t = crate::log::Level::Notice)]
    pub loglevel: crate::log::Level,
    /// File the log is appended to (reopened for every line, so it can be rotated); the
    /// default is stderr.
    #[arg(long)]
    pub logfile: Option<PathBuf>,
    /// Keyspace notifications to send, in Redis's letters (`KEA`, `Elg`...; empty: none),
    /// as Redis's `notify-keyspace-events`; CONFIG SET changes it at run time.
    #[arg(long, default_value = "", value_parser = parse_notify_flags, value_name = "FLAGS")]
    pub notify_keyspace_events: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            dir: PathBuf::from("./bloomkv-data"),
            bind: IpAddr::from([127, 0, 0, 1]),
            port: 6379,
            requirepass: None,
            aclfile: None,
            appendfsync: AppendFsync::Everysec,
            maxclients: 10_000,
            proto_max_bulk_len: 512 * 1024 * 1024,
            client_query_buffer_limit: 1024 * 1024 * 1024,
            block_cache_mb: 8,
            bits_per_key: 10.0,
            block_bytes: 4096,
            compression: CompressionPerLevel::default(),
            mmap_reads: true,
            memtable_mb: 64,
            threads: 0,
            databases: 16,
            loglevel: crate::log::Level::Notice,
            logfile: None,
            notify_keyspace_events: 0,
        }
    }
}

/// Block compression per level of the engine (`--compression`): never empty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompressionPerLevel(pub Vec<bloomkv::Compression>);

impl Default for CompressionPerLevel {
    fn default() -> Self {
        CompressionPerLevel(vec![bloomkv::Compression::Lz4])
    }
}

impl std::fmt::Display for CompressionPerLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, c) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

fn parse_yes_no(s: &str) -> Result<bool, String> {
    match s {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err(format!("{s:?}: expected yes or no")),
    }
}

fn parse_notify_flags(s: &str) -> Result<u32, String> {
    crate::notify::parse(s.as_bytes())
        .ok_or_else(|| format!("{s:?}: invalid event class character; use 'Ag$lshzxeKEtmdn'"))
}

fn parse_compression(s: &str) -> Result<CompressionPerLevel, String> {
    let levels = s
        .split(',')
        .map(|c| c.trim().parse::<bloomkv::Compression>())
        .collect::<Result<Vec<_>, _>>()?;
    if levels.len() > bloomkv::NUM_LEVELS {
        return Err(format!(
            "{} levels given; the engine has {}",
            levels.len(),
            bloomkv::NUM_LEVELS
        ));
    }
    Ok(CompressionPerLevel(levels))
}

impl Config {
    /// The engine options these flags ask for (the env is set by the server).
    pub fn engine_options(&self) -> bloomkv::Options {
        bloomkv::Options {
            filter_bits_per_key: self.bits_per_key,
            block_cache_bytes: self.block_cache_mb << 20,
            block_bytes: self.block_bytes.clamp(256, 1 << 20),
            memtable_bytes: (self.memtable_mb << 20).max(64 << 10),
            sync_writes: self.appendfsync == AppendFsync::Always,
            compression: *self
                .compression
                .0
                .last()
                .unwrap_or(&bloomkv::Compression::Lz4),
            compression_per_level: Some(self.compression.0.clone()),
            mmap_reads: self.mmap_reads,
            // Members of deleted, re-created or expired collections, and expired strings'
            // bytes, are dropped by compaction without a read (store::gc).
            compaction_filter: Some(crate::store::gc::filter()),
            ..Default::default()
        }
    }

    /// [`Config::engine_options`] for a replicated state machine's database (cluster mode):
    /// the same options, with the compaction-filter GC judging expiry by `log_clock`, the
    /// newest leader time the node applied (`replica::Applier::log_clock`), as the
    /// replicated commands do (`store::gc::filter_at_log_clock`).
    pub fn replicated_engine_options(
        &self,
        log_clock: std::sync::Arc<std::sync::atomic::AtomicU64>,
    ) -> bloomkv::Options {
        bloomkv::Options {
            compaction_filter: Some(crate::store::gc::filter_at_log_clock(log_clock)),
            ..self.engine_options()
        }
    }
}
