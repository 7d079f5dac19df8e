//! `bloomkv-server`: serves a bloomkv database over the Redis protocol until SIGINT/SIGTERM.

use clap::Parser;

// jemalloc, as Redis uses, instead of glibc's malloc: a command allocates a few small buffers
// (its keys, the write set, memtable entries), and at a pipeline's rate glibc's malloc and
// free cost more than most of the command's own steps. mimalloc was faster than glibc too
// but held a fifth more memory at its peak (docs/bench-log.md).
#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    let config = bloomkv_server::Config::parse();
    match bloomkv_server::run(config) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bloomkv-server: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
