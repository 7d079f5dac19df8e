//! The INFO command's text: `server`, `clients`, `memory`, `persistence`, `stats`,
//! `replication`, `cpu`, `commandstats`, `errorstats` (in Redis 7's formats, from
//! `crate::stats`), `keyspace` and `bloomkv` (the engine's filter and block counters from
//! `Db::stats`).

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use bytes::Bytes;

use crate::server::Shared;

/// The Redis version this server reports (the command set and replies follow Redis 7.2).
pub const REDIS_VERSION: &str = "7.2.0";

/// The sections in Redis's order.
const SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "commandstats",
    "errorstats",
    "cluster",
    "keyspace",
    "bloomkv",
];

/// Sections only `all`, `everything` or their own name shows (as in Redis).
const NOT_DEFAULT: &[&str] = &["commandstats"];

/// This process's resident memory in bytes, and the part of it that maps files (tables
/// read through memory maps: the page cache's pages, which the OS can take back at any
/// time), from `/proc/self/statm` (zeros where there is no /proc).
fn process_memory() -> (u64, u64) {
    const PAGE: u64 = 4096;
    let Ok(s) = std::fs::read_to_string("/proc/self/statm") else {
        return (0, 0);
    };
    let mut f = s.split_whitespace().map(|x| x.parse::<u64>().unwrap_or(0));
    let _size = f.next();
    let resident = f.next().unwrap_or(0);
    let file_backed = f.next().unwrap_or(0);
    (resident * PAGE, file_backed.min(resident) * PAGE)
}

/// Peak resident memory in bytes (`VmHWM` of `/proc/self/status`).
fn peak_memory() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// Bytes as Redis's `*_human` fields show them (`1.50M`).
fn human(b: u64) -> String {
    let units = ["B", "K", "M", "G", "T"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b}B")
    } else {
        format!("{v:.2}{}", units[u])
    }
}

/// CPU seconds (system, user) this process has used, from `/proc/self/stat`.
fn cpu_seconds() -> (f64, f64) {
    // Linux reports clock ticks of 1/100 s (USER_HZ) here on every architecture it runs on.
    const TICKS: f64 = 100.0;
    let Ok(s) = std::fs::read_to_string("/proc/self/stat") else {
        return (0.0, 0.0);
    };
    // Fields after the command name (which may hold spaces, so split after its ')').
    let rest = s.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0) / TICKS;
    // utime and stime are fields 14 and 15 of the line: 11 and 12 after the name's ')'.
    (tick(12), tick(11))
}

/// Renders the sections asked for (`default`, `all` and `everything` mean all of them).
pub fn render(shared: &Shared, args: &[Bytes]) -> String {
    let wanted: Vec<String> = args
        .iter()
        .map(|a| String::from_utf8_lossy(a).to_ascii_lowercase())
        .collect();
    let has = |x: &str| wanted.iter().any(|w| w == x);
    let all = has("all") || has("everything");
    let default = wanted.is_empty() || has("default");
    let mut out = String::new();
    for s in SECTIONS {
        let shown = all || has(s) || (default && !NOT_DEFAULT.contains(s));
        if !shown {
            continue;
        }
        if !out.is_empty() {
            out.push_str("\r\n");
        }
        section(shared, s, &mut out);
    }
    out
}

fn section(shared: &Shared, name: &str, o: &mut String) {
    let cfg = &shared.config;
    // Writing to a String cannot fail.
    let _ = match name {
        "server" => {
            let up = shared.started.elapsed().as_secs();
            write!(
                o,
                "# Server\r\nredis_version:{REDIS_VERSION}\r\nbloomkv_server_version:{}\r\nredis_mode:standalone\r\nos:{} {}\r\narch_bits:64\r\nprocess_id:{}\r\ntcp_port:{}\r\nuptime_in_seconds:{up}\r\nuptime_in_days:{}\r\n",
                env!("CARGO_PKG_VERSION"),
                std::env::consts::OS,
                std::env::consts::ARCH,
                std::process::id(),
                shared.port,
                up / 86_400,
            )
        }
        "clients" => write!(
            o,
            "# Clients\r\nconnected_clients:{}\r\nmaxclients:{}\r\nblocked_clients:{}\r\ntotal_watched_keys:{}\r\n",
            shared.clients.load(Ordering::Relaxed),
            shared.maxclients.load(Ordering::Relaxed),
            shared.blocked.len()
                + shared
                    .replica
                    .as_ref()
                    .map_or(0, |c| c.applier.waits().len()),
            shared.store.watches().watched_keys(),
        ),
        "memory" => {
            // used_memory is what the server allocated (Redis: its allocator's count); the
            // mapped tables' pages count only in used_memory_rss.
            let (rss, mapped) = process_memory();
            let used = rss - mapped;
            let peak = peak_memory().max(rss);
            let stats = shared.store.db().stats();
            let tables: u64 = stats.levels.iter().map(|l| l.bytes).sum();
            // Two short prefix scans of the function records (a few per library).
            let (libraries, functions) =
                crate::script::functions::registry::counts(&shared.store.reader())
                    .unwrap_or((0, 0));
            let scripts = shared.store.scripts().len();
            write!(
                o,
                "# Memory\r\nused_memory:{used}\r\nused_memory_human:{}\r\nused_memory_rss:{rss}\r\nused_memory_rss_human:{}\r\nused_memory_peak:{peak}\r\nused_memory_peak_human:{}\r\nnumber_of_cached_scripts:{scripts}\r\nnumber_of_functions:{functions}\r\nnumber_of_libraries:{libraries}\r\nmaxmemory:0\r\nmaxmemory_policy:noeviction\r\nmem_fragmentation_ratio:1.00\r\nbloomkv_block_cache_bytes:{}\r\nbloomkv_memtable_bytes:{}\r\nbloomkv_disk_table_bytes:{tables}\r\n",
                human(used),
                human(rss),
                human(peak),
                cfg.block_cache_mb << 20,
                cfg.memtable_mb << 20,
            )
        }
        "cpu" => {
            let (sys, user) = cpu_seconds();
            write!(
                o,
                "# CPU\r\nused_cpu_sys:{sys:.6}\r\nused_cpu_user:{user:.6}\r\nused_cpu_sys_children:0.000000\r\nused_cpu_user_children:0.000000\r\n"
            )
        }
        "cluster" => write!(
            o,
            "# Cluster\r\ncluster_enabled:{}\r\n",
            u8::from(shared.replica.is_some())
        ),
        "replication" if shared.replica.is_some() => {
            if let Some(c) = &shared.replica {
                crate::replica::report::info_replication(&c.replicator.status(), o);
            }
            Ok(())
        }
        "replication" => write!(
            o,
            "# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_failover_state:no-failover\r\nmaster_replid:{}\r\nmaster_replid2:0000000000000000000000000000000000000000\r\nmaster_repl_offset:0\r\nsecond_repl_offset:-1\r\nrepl_backlog_active:0\r\nrepl_backlog_size:0\r\nrepl_backlog_first_byte_offset:0\r\nrepl_backlog_histlen:0\r\n",
            "0".repeat(40)
        ),
        "stats" => {
            let t = shared.stats.totals();
            let (ops, kbps_in, kbps_out) = shared.stats.rates();
            write!(
                o,
                "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\ninstantaneous_ops_per_sec:{ops}\r\ntotal_net_input_bytes:{}\r\ntotal_net_output_bytes:{}\r\ninstantaneous_input_kbps:{kbps_in:.2}\r\ninstantaneous_output_kbps:{kbps_out:.2}\r\nrejected_connections:{}\r\nexpired_keys:{}\r\ntotal_error_replies:{}\r\ntotal_reads_processed:{}\r\ntotal_writes_processed:{}\r\n",
                shared.total_connections.load(Ordering::Relaxed),
                t.processed,
                t.net_in,
                t.net_out,
                shared.rejected_connections.load(Ordering::Relaxed),
                shared.store.expired_keys(),
                t.errors,
                t.reads,
                t.writes,
            )
        }
        "commandstats" => {
            o.push_str("# Commandstats\r\n");
            let t = shared.stats.totals();
            for (c, [calls, usec, rejected, failed]) in crate::cmd::COMMANDS.iter().zip(t.commands)
            {
                if calls + rejected + failed == 0 {
                    continue;
                }
                let per_call = if calls == 0 {
                    0.0
                } else {
                    usec as f64 / calls as f64
                };
                let _ = write!(
                    o,
                    "cmdstat_{}:calls={calls},usec={usec},usec_per_call={per_call:.2},rejected_calls={rejected},failed_calls={failed}\r\n",
                    c.name
                );
            }
            Ok(())
        }
        "errorstats" => {
            o.push_str("# Errorstats\r\n");
            for (code, n) in shared.stats.error_codes() {
                let _ = write!(o, "errorstat_{code}:count={n}\r\n");
            }
            Ok(())
        }
        "persistence" => {
            let stopped = shared.store.writes_stopped();
            let (stops, resumes) = shared.store.stop_counts();
            write!(
                o,
                "# Persistence\r\nloading:0\r\nrdb_bgsave_in_progress:{}\r\nrdb_last_save_time:{}\r\nrdb_last_bgsave_status:{}\r\naof_enabled:1\r\naof_rewrite_in_progress:0\r\naof_last_write_status:{}\r\nappendfsync:{}\r\nwal_background_syncs:{}\r\nbloomkv_writes_stopped:{}\r\nbloomkv_write_error:{}\r\nbloomkv_write_stops:{stops}\r\nbloomkv_write_resumes:{resumes}\r\ndir:{}\r\n",
                u8::from(shared.saves.running()),
                shared.saves.last(),
                if shared.saves.last_failed() {
                    "err"
                } else {
                    "ok"
                },
                if stopped.is_some() { "err" } else { "ok" },
                format!("{:?}", cfg.appendfsync).to_ascii_lowercase(),
                shared.store.wal_syncs(),
                u8::from(stopped.is_some()),
                stopped.unwrap_or_default().replace(['\r', '\n'], " "),
                cfg.dir.display()
            )
        }
        "keyspace" => {
            o.push_str("# Keyspace\r\n");
            for (db, n, e) in shared.store.keyspace() {
                let e = e.max(0);
                let _ = write!(o, "db{db}:keys={n},expires={e},avg_ttl=0\r\n");
            }
            Ok(())
        }
        "bloomkv" => {
            let s = shared.store.db().stats();
            let _ = write!(
                o,
                "# Bloomkv\r\nfilter_checks:{}\r\nfilter_saved_reads:{}\r\nfilter_false_positives:{}\r\nfilter_unavailable:{}\r\ndata_blocks_read:{}\r\nblock_cache_hits:{}\r\nbytes_read:{}\r\ngets:{}\r\nflushes:{}\r\ncompactions:{}\r\nuser_bytes_written:{}\r\nstall_micros:{}\r\n",
                s.filter_checks,
                s.filter_useful,
                s.filter_false_positives,
                s.filter_unavailable,
                s.data_blocks_read,
                s.block_cache_hits,
                s.bytes_read,
                s.gets,
                s.flushes,
                s.compactions,
                s.user_bytes_written,
                s.stall_micros,
            );
            for (i, l) in s.levels.iter().enumerate() {
                if l.files > 0 {
                    let _ = write!(
                        o,
                        "level{i}:files={},bytes={},entries={},filter_bits_per_key={:.2}\r\n",
                        l.files, l.bytes, l.entries, l.filter_bits_per_key
                    );
                }
            }
            Ok(())
        }
        _ => Ok(()),
    };
}
