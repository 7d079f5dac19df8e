//! The INFO command's text: `server`, `clients`, `stats`, `persistence`, `keyspace` and
//! `bloomkv` (the engine's filter and block counters from `Db::stats`).

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use bytes::Bytes;

use crate::server::Shared;

/// The Redis version this server reports (the command set and replies follow Redis 7.2).
pub const REDIS_VERSION: &str = "7.2.0";

const SECTIONS: &[&str] = &[
    "server",
    "clients",
    "stats",
    "persistence",
    "keyspace",
    "bloomkv",
];

/// Renders the sections asked for (`default`, `all` and `everything` mean all of them).
pub fn render(shared: &Shared, args: &[Bytes]) -> String {
    let wanted: Vec<String> = args
        .iter()
        .map(|a| String::from_utf8_lossy(a).to_ascii_lowercase())
        .collect();
    let all = wanted.is_empty()
        || wanted
            .iter()
            .any(|w| matches!(w.as_str(), "all" | "default" | "everything"));
    let mut out = String::new();
    for s in SECTIONS {
        if !all && !wanted.iter().any(|w| w == s) {
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
            "# Clients\r\nconnected_clients:{}\r\nmaxclients:{}\r\nblocked_clients:{}\r\n",
            shared.clients.load(Ordering::Relaxed),
            cfg.maxclients,
            shared.blocked.len()
        ),
        "stats" => write!(
            o,
            "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\nrejected_connections:{}\r\nexpired_keys:{}\r\n",
            shared.total_connections.load(Ordering::Relaxed),
            shared.total_commands.load(Ordering::Relaxed),
            shared.rejected_connections.load(Ordering::Relaxed),
            shared.store.expired_keys(),
        ),
        "persistence" => write!(
            o,
            "# Persistence\r\naof_enabled:1\r\nappendfsync:{}\r\nwal_background_syncs:{}\r\ndir:{}\r\n",
            format!("{:?}", cfg.appendfsync).to_ascii_lowercase(),
            shared.store.env().syncs(),
            cfg.dir.display()
        ),
        "keyspace" => {
            let n = shared.store.dbsize();
            o.push_str("# Keyspace\r\n");
            if n > 0 {
                let e = shared.store.volatile_keys().max(0);
                write!(o, "db0:keys={n},expires={e},avg_ttl=0\r\n")
            } else {
                Ok(())
            }
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
