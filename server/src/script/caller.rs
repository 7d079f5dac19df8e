//! The user a script runs for, when that user's rules restrict it: each command the script
//! calls is checked against them, as Redis 7 checks it, and a refusal goes to ACL LOG with
//! the context `lua`. Set by the connection around the command that runs scripts (EVAL,
//! FCALL and their forms, EXEC); scripts run on the thread that runs that command.
//!
//! Not set where scripts run in a cluster's state machine: there, a script's calls are not
//! checked (the connection checked the script command itself).

use std::cell::RefCell;
use std::sync::Arc;

use bytes::Bytes;

use crate::acl::{Acl, Denied, User};
use crate::cmd::Command;
use crate::resp::Reply;

/// Who runs the scripts of the command being served.
pub struct Caller {
    /// The connection's user.
    pub user: Arc<User>,
    /// Where refusals are logged.
    pub acl: Arc<Acl>,
    /// The connection as CLIENT INFO shows it, for the log.
    pub client_info: String,
}

thread_local! {
    static CALLER: RefCell<Option<Caller>> = const { RefCell::new(None) };
}

/// Makes `caller` the scripts' user on this thread until the guard drops.
pub fn enter(caller: Caller) -> Entered {
    CALLER.with(|c| *c.borrow_mut() = Some(caller));
    Entered(())
}

/// Ends [`enter`]'s scope when dropped.
pub struct Entered(());

impl Drop for Entered {
    fn drop(&mut self) {
        CALLER.with(|c| *c.borrow_mut() = None);
    }
}

/// Redis's error for a command a script calls that its user may not run (logged), if so.
pub fn refusal(pos: usize, c: &Command, args: &[Bytes]) -> Option<Reply> {
    CALLER.with(|cell| {
        let guard = cell.borrow();
        let caller = guard.as_ref()?;
        let denied = caller.user.check(pos, c, args).err()?;
        let (reason, object, text) = match &denied {
            Denied::Command(name) => (
                "command",
                Bytes::from(name.clone()),
                "The user executing the script can't run this command or subcommand",
            ),
            Denied::Key(k) => (
                "key",
                k.clone(),
                "The user executing the script can't access at least one of the keys mentioned in the command arguments",
            ),
            Denied::Channel(ch) => (
                "channel",
                ch.clone(),
                "The user executing the script can't publish to the channel mentioned in the command",
            ),
        };
        caller.acl.log(
            reason,
            "lua",
            &object,
            &caller.user.name,
            caller.client_info.clone(),
        );
        Some(Reply::err(text))
    })
}
