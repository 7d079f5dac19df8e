//! `kvctl serve`: the same server as the `bloomkv-server` binary, on the database `--db`
//! names (else `$KVCTL_DB`, else `./kvdb`), like every other command.

use crate::args::{DbArg, GlobalArgs};
use crate::exit::{self, CliError};
use crate::open;

/// Arguments of `serve`: `--db` and `bloomkv-server`'s flags.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub db: DbArg,
    #[command(flatten)]
    pub config: bloomkv_server::Config,
}

/// Serves the database until SIGINT/SIGTERM. `dir_given`: `bloomkv-server`'s own `--dir`
/// was on the command line (accepted as another name for `--db`).
pub fn run(g: &GlobalArgs, a: Args, db_given: bool, dir_given: bool) -> Result<(), CliError> {
    let mut config = a.config;
    if dir_given && db_given && config.dir != g.db {
        return Err(CliError::Usage(format!(
            "serve: --db {} and --dir {} name different databases (--dir is the other name of \
             --db; pass one)",
            g.db.display(),
            config.dir.display()
        )));
    }
    if !dir_given {
        config.dir = g.db.clone();
    }
    bloomkv_server::run(config).map_err(|e| match e {
        // Options the engine rejects at open are a usage error, as for every command.
        bloomkv_server::ServerError::Engine(e) => open::failure("serve: database", e),
        e => exit::CliError::Database(format!("serve: {e}")),
    })
}
