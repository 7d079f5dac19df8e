//! `bloomkv-server`: serves a bloomkv database over the Redis protocol until SIGINT/SIGTERM.

use clap::Parser;

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
