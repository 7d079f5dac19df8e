//! The flags: parsed as the issue names them, and embeddable in another command line (what
//! `kvctl serve` will do).

use bloomkv_server::{AppendFsync, Config};
use clap::Parser;

#[test]
fn flags_parse_with_redis_names_and_defaults() {
    let c = Config::try_parse_from(["bloomkv-server"]).unwrap();
    assert_eq!(c.bind.to_string(), "127.0.0.1");
    assert_eq!(c.port, 6379);
    assert_eq!(c.appendfsync, AppendFsync::Everysec);
    assert_eq!(c.requirepass, None);
    let c = Config::try_parse_from([
        "bloomkv-server",
        "--dir",
        "/tmp/x",
        "--bind",
        "0.0.0.0",
        "--port",
        "7000",
        "--requirepass",
        "pw",
        "--appendfsync",
        "always",
        "--maxclients",
        "5",
        "--block-cache-mb",
        "64",
        "--bits-per-key",
        "12",
        "--block-bytes",
        "1024",
    ])
    .unwrap();
    assert_eq!(c.appendfsync, AppendFsync::Always);
    assert_eq!(c.maxclients, 5);
    assert_eq!(c.requirepass.as_deref(), Some("pw"));
    let o = c.engine_options();
    assert!(o.sync_writes);
    assert_eq!(o.block_cache_bytes, 64 << 20);
    assert_eq!(o.filter_bits_per_key, 12.0);
    assert_eq!(o.block_bytes, 1024);
    for mode in ["no", "everysec"] {
        let c = Config::try_parse_from(["s", "--appendfsync", mode]).unwrap();
        assert!(!c.engine_options().sync_writes);
    }
    assert!(Config::try_parse_from(["s", "--appendfsync", "sometimes"]).is_err());
}

#[test]
fn compression_is_per_level_and_tables_are_mapped_by_default() {
    use bloomkv::Compression::{Lz4, None, Zstd};
    let o = Config::try_parse_from(["s"]).unwrap().engine_options();
    assert_eq!(o.compression_per_level, Some(vec![Lz4]));
    assert_eq!(o.compression_for_level(0), Lz4);
    assert_eq!(o.compression_for_level(6), Lz4);
    assert!(o.mmap_reads);
    assert_eq!(
        Config::default().engine_options().compression_per_level,
        o.compression_per_level
    );
    assert!(Config::default().mmap_reads);

    let c = Config::try_parse_from(["s", "--compression", "zstd:5", "--mmap-reads", "no"]).unwrap();
    let o = c.engine_options();
    assert_eq!(o.compression_for_level(0), Zstd { level: 5 });
    assert_eq!(o.compression_for_level(6), Zstd { level: 5 });
    assert!(!o.mmap_reads);
    assert_eq!(c.compression.to_string(), "zstd:5");
    let c = Config::try_parse_from(["s", "--compression", "none, none,zstd"]).unwrap();
    assert_eq!(c.compression.to_string(), "none,none,zstd:3");
    let o = c.engine_options();
    assert_eq!(o.compression_for_level(1), None);
    assert_eq!(o.compression_for_level(3), Zstd { level: 3 });

    for bad in [
        "",
        "lz5",
        "none,,lz4",
        "none,none,none,none,none,none,none,lz4",
    ] {
        assert!(
            Config::try_parse_from(["s", "--compression", bad]).is_err(),
            "{bad:?} accepted"
        );
    }
    assert!(Config::try_parse_from(["s", "--mmap-reads", "true"]).is_err());
}

#[derive(Parser)]
struct Kvctl {
    #[command(subcommand)]
    cmd: Sub,
}

#[derive(clap::Subcommand)]
enum Sub {
    Serve(Config),
}

#[test]
fn config_embeds_as_a_subcommand() {
    let k =
        Kvctl::try_parse_from(["kvctl", "serve", "--port", "0", "--appendfsync", "no"]).unwrap();
    let Sub::Serve(c) = k.cmd;
    assert_eq!(c.port, 0);
    assert_eq!(c.appendfsync, AppendFsync::No);
}
