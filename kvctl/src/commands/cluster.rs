//! `kvctl cluster status|add|remove`: membership of a cluster of `bloomkv-cluster` nodes,
//! through any node's client port (`kvctl::cluster_admin`).

use std::time::Duration;

use kvctl::cluster_admin::{Admin, AdminError, state_ok};

use crate::exit::CliError;

/// Which node to talk to.
#[derive(Debug, clap::Args)]
pub struct Node {
    /// A node's client address (`host:port`, its `--port`); any member will do.
    #[arg(long, default_value = "127.0.0.1:6379", value_name = "HOST:PORT")]
    pub node: String,
    /// The nodes' `--requirepass`, if set.
    #[arg(long, env = "KVCTL_PASSWORD", hide_env_values = true)]
    pub password: Option<String>,
    /// Seconds to wait for each reply.
    #[arg(long, default_value_t = 15)]
    pub timeout: u64,
}

/// Arguments of `cluster add`.
#[derive(Debug, clap::Args)]
pub struct AddArgs {
    #[command(flatten)]
    pub node: Node,
    /// The new node's id (its `--node-id`).
    pub id: u64,
    /// The new node's Raft address (its `--cluster-addr`).
    pub raft_addr: String,
    /// Stop once it is a learner (it replicates but does not vote); promote it later.
    #[arg(long)]
    pub learner: bool,
    /// Make it a voter even if the voters are then an even number (refused otherwise:
    /// four voters tolerate one failure, as three do). For replacing a node: add the new
    /// one with --force, then remove the old one.
    #[arg(long)]
    pub force: bool,
    /// Seconds to wait for the learner to catch up before promoting it.
    #[arg(long, default_value_t = 300)]
    pub wait: u64,
}

/// Arguments of `cluster remove`.
#[derive(Debug, clap::Args)]
pub struct RemoveArgs {
    #[command(flatten)]
    pub node: Node,
    /// The id of the node to remove.
    pub id: u64,
}

/// `kvctl cluster ...`.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Print the cluster's state, leader and term, and every node's role, applied index
    /// and lag (CLUSTER INFO). Exits 3 unless the state is ok.
    Status(Node),
    /// Add a node (started without --initial-cluster) as a learner, wait until it has
    /// caught up, then make it a voter.
    Add(AddArgs),
    /// Remove a node (voter or learner) from the cluster.
    Remove(RemoveArgs),
}

fn admin(n: &Node) -> Admin {
    Admin::new(
        n.node.clone(),
        n.password.clone(),
        Duration::from_secs(n.timeout.max(1)),
    )
}

fn fail(what: &str, e: AdminError) -> CliError {
    CliError::Database(format!("cluster {what}: {e}"))
}

/// Runs a `cluster` subcommand.
pub fn run(c: Command) -> Result<(), CliError> {
    match c {
        Command::Status(n) => {
            let text = admin(&n).status().map_err(|e| fail("status", e))?;
            print!("{text}");
            if state_ok(&text) {
                Ok(())
            } else {
                Err(CliError::Database(format!(
                    "cluster status: the cluster does not serve ({})",
                    text.lines()
                        .find(|l| l.starts_with("cluster_state:"))
                        .unwrap_or("no cluster_state line")
                )))
            }
        }
        Command::Add(a) => {
            if a.id == 0 {
                return Err(CliError::Usage("cluster add: node ids start at 1".into()));
            }
            admin(&a.node)
                .add(
                    a.id,
                    &a.raft_addr,
                    a.learner,
                    a.force,
                    Duration::from_secs(a.wait),
                    |line| eprintln!("{line}"),
                )
                .map_err(|e| fail("add", e))
        }
        Command::Remove(r) => {
            admin(&r.node).remove(r.id).map_err(|e| fail("remove", e))?;
            eprintln!("node {} removed", r.id);
            Ok(())
        }
    }
}
