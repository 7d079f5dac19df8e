//! Exactly-once application of retried requests.
//!
//! Each request carries (client, id) and its client's acknowledged mark: every id below
//! the mark has been answered to the client, or given up on, and will never be sent again.
//! The state-machine database keeps, per client, the mark and the saved answer of every
//! applied request at or above it. A request below the mark is stale (not applied); one
//! with a saved answer is a duplicate (answered from the table, not applied again).
//! Answers below a rising mark are deleted in the same batch.

use std::collections::BTreeMap;

use bloomkv::{Db, WriteBatch};

use crate::error::{Error, Result};
use crate::keys::{self, sm as k};
use crate::types::Request;

/// Up to this many answers below a rising mark are deleted one by one; a larger jump (a
/// client that gave up on many requests) uses one range delete.
const POINT_DELETES: u64 = 64;

/// What to do with a request.
pub(crate) enum Check {
    /// Apply it.
    New,
    /// Applied before: this is its saved answer.
    Answered(Vec<u8>),
    /// Applied earlier in this same batch, as the command at this position.
    Pending(usize),
    /// Below its client's mark: not applied.
    Stale,
}

struct Client {
    stored_mark: u64,
    mark: u64,
    /// Requests applied in this batch: id -> position among the batch's commands.
    pending: BTreeMap<u64, usize>,
}

/// The dedup state of one apply batch.
pub(crate) struct Dedup<'a> {
    db: &'a Db,
    clients: BTreeMap<u64, Client>,
}

impl<'a> Dedup<'a> {
    pub(crate) fn new(db: &'a Db) -> Dedup<'a> {
        Dedup {
            db,
            clients: BTreeMap::new(),
        }
    }

    fn client(&mut self, id: u64) -> Result<&mut Client> {
        if !self.clients.contains_key(&id) {
            let mark = match self.db.get(k::mark(id)) {
                Ok(None) => 0,
                Ok(Some(v)) => keys::be64(&v).ok_or_else(|| {
                    Error::Storage(format!("dedup mark of client {id} is damaged"))
                })?,
                Err(e) => return Err(Error::db("reading a dedup mark", e)),
            };
            self.clients.insert(
                id,
                Client {
                    stored_mark: mark,
                    mark,
                    pending: BTreeMap::new(),
                },
            );
        }
        self.clients
            .get_mut(&id)
            .ok_or_else(|| Error::Storage("dedup table lost a client".into()))
    }

    /// Classifies `req`, then raises its client's mark. `position` is where the request
    /// goes among the batch's commands if it is new.
    pub(crate) fn check(&mut self, req: &Request, position: usize) -> Result<Check> {
        let db = self.db;
        let c = self.client(req.client)?;
        let verdict = if req.id < c.mark {
            Check::Stale
        } else if let Some(&pos) = c.pending.get(&req.id) {
            Check::Pending(pos)
        } else {
            match db.get(k::answer(req.client, req.id)) {
                Ok(Some(a)) => Check::Answered(a),
                Ok(None) => {
                    c.pending.insert(req.id, position);
                    Check::New
                }
                Err(e) => return Err(Error::db("reading a dedup answer", e)),
            }
        };
        // A request never declares itself answered: its own id bounds the mark it raises.
        c.mark = c.mark.max(req.acked_below.min(req.id));
        Ok(verdict)
    }

    /// Adds the table's changes to `batch`: raised marks, answers dropped below them, and
    /// the answers of this batch's new requests (`answers` by command position).
    pub(crate) fn write(self, batch: &mut WriteBatch, answers: &[Vec<u8>]) -> Result<()> {
        for (client, c) in self.clients {
            if c.mark > c.stored_mark {
                batch.put(k::mark(client), c.mark.to_be_bytes());
                if c.mark - c.stored_mark <= POINT_DELETES {
                    for id in c.stored_mark..c.mark {
                        batch.delete(k::answer(client, id));
                    }
                } else {
                    batch.delete_range(k::answer(client, c.stored_mark), k::answer(client, c.mark));
                }
            }
            for (id, pos) in c.pending.range(c.mark..) {
                let a = answers.get(*pos).ok_or_else(|| {
                    Error::Storage(format!("no answer for command {pos} of the batch"))
                })?;
                batch.put(k::answer(client, *id), a);
            }
        }
        Ok(())
    }
}
