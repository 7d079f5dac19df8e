//! bloomkv-server's command layer as this package's [`Machine`].

use std::sync::Arc;

use bloomkv::{Db, WriteBatch};
use bloomkv_server::replica::{Applier, LogCommand};

use crate::machine::{Command, Machine, MachineError};

/// The [`Machine`] of a replicated bloomkv-server: each committed request (a group of
/// Redis commands, an EXEC, a WATCH, an expiry sweep, a PUBLISH) applied by the server's
/// [`Applier`] to a `Store` over the state-machine database, which the applier rebuilds on
/// every [`Machine::reset`].
#[derive(Debug, Clone)]
pub struct ServerMachine {
    applier: Arc<Applier>,
}

impl ServerMachine {
    /// A machine applying through `applier`.
    pub fn new(applier: Arc<Applier>) -> ServerMachine {
        ServerMachine { applier }
    }

    /// The applier (the server shares it: its store, blocked clients, subscribers).
    pub fn applier(&self) -> &Arc<Applier> {
        &self.applier
    }
}

impl Machine for ServerMachine {
    fn apply(
        &self,
        _db: &Db,
        commands: &[Command<'_>],
        batch: &mut WriteBatch,
    ) -> Result<Vec<Vec<u8>>, MachineError> {
        // The applier's store serves the database of the last reset, which is `_db`.
        let cmds: Vec<LogCommand<'_>> = commands
            .iter()
            .map(|c| LogCommand {
                index: c.index,
                time_ms: c.time_ms,
                seed: c.seed,
                request: c.request,
            })
            .collect();
        self.applier.apply(&cmds, batch).map_err(MachineError::from)
    }

    fn reset(&self, db: &Db) -> Result<(), MachineError> {
        self.applier.reset(db).map_err(MachineError::from)
    }
}
