//! `bloomkv-cluster`: bloomkv-server in cluster mode, one node of a Raft-replicated
//! cluster (docs/CLUSTER.md). Serves until SIGINT, SIGTERM or a client's `SHUTDOWN`.

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = bloomkv_cluster::redis_server::ClusterArgs::parse();
    match bloomkv_cluster::redis_server::run(args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bloomkv-cluster: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
