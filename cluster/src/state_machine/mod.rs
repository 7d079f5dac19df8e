//! The replicated state machine: the live state-machine database generation, the
//! application's [`Machine`], snapshots, and openraft's `RaftStateMachine` over them.
//!
//! Each `apply` call is one [`WriteBatch`]: the machine's writes, the dedup table's
//! changes, the applied log id, membership and clock, written together (not synced: the
//! log is the durable record, and a snapshot build makes the state machine durable up to
//! the snapshot before openraft purges the log below it).

mod dedup;

use std::path::PathBuf;
use std::sync::Arc;

use arc_swap::ArcSwap;
use bloomkv::{Options, WriteBatch};
use openraft::storage::RaftStateMachine;
use openraft::{AnyError, EntryPayload, RaftSnapshotBuilder, StorageIOError};
use parking_lot::Mutex;

use crate::error::{Error, Result};
use crate::machine::{Command, Machine, request_seed};
use crate::sm_meta::{self, AppliedState};
use crate::snapshot::{SnapshotData, SnapshotStore, Stored};
use crate::state_db::{Generation, Generations, StateDb};
use crate::types::{
    Applied, Entry, LogId, Reply, SnapshotMeta, StorageError, StoredMembership, TypeConfig,
};
use dedup::{Check, Dedup};

/// Everything the state machine's handles share.
pub(crate) struct Shared {
    node_id: u64,
    gens: Generations,
    current: ArcSwap<Generation>,
    snapshots: SnapshotStore,
    machine: Arc<dyn Machine>,
    applied: Mutex<AppliedState>,
}

/// openraft's handle on the state machine (and the node's, through [`Shared`]).
#[derive(Clone)]
pub(crate) struct StateMachine {
    pub(crate) shared: Arc<Shared>,
}

fn sm_err(e: impl std::fmt::Display) -> StorageError {
    StorageIOError::write_state_machine(AnyError::error(e.to_string())).into()
}

fn snap_err(e: impl std::fmt::Display) -> StorageError {
    StorageIOError::write_snapshot(None, AnyError::error(e.to_string())).into()
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::Storage(format!("state-machine task failed: {e}")))?
}

/// Where a request's reply comes from.
enum Slot {
    Fresh(usize),
    Answer(Vec<u8>),
    Stale,
}

/// Where an entry's replies come from.
enum EntrySlots {
    Internal,
    Requests(Vec<Slot>),
}

impl StateMachine {
    /// Opens the live generation in `sm_dir` and the snapshots in `snap_dir`, and hands
    /// the database to `machine` ([`Machine::reset`]).
    pub(crate) fn open(
        node_id: u64,
        sm_dir: PathBuf,
        snap_dir: PathBuf,
        options: Options,
        machine: Arc<dyn Machine>,
    ) -> Result<StateMachine> {
        let gens = Generations::new(sm_dir, options.clone());
        let live = gens.open_live()?;
        sm_meta::stamp_format(&live.db)?;
        let st = sm_meta::read(&live.db)?;
        let snapshots = SnapshotStore::open(snap_dir, options)?;
        machine
            .reset(&live.db)
            .map_err(|e| Error::Storage(format!("the machine could not load its state: {e}")))?;
        Ok(StateMachine {
            shared: Arc::new(Shared {
                node_id,
                gens,
                current: ArcSwap::from_pointee(live),
                snapshots,
                machine,
                applied: Mutex::new(st),
            }),
        })
    }
}

impl Shared {
    /// The state-machine database as it is now.
    pub(crate) fn state_db(&self) -> StateDb {
        StateDb(self.current.load_full())
    }

    /// The applied log id.
    pub(crate) fn applied(&self) -> Option<LogId> {
        self.applied.lock().applied
    }

    /// A new directory to receive a snapshot into.
    pub(crate) fn incoming_snapshot(&self) -> Result<SnapshotData> {
        self.snapshots.incoming()
    }

    /// Startup check against the log: if the state machine is behind the purged log (it
    /// lost unsynced applies in a crash below a purge), restores it from the local
    /// snapshot, which covers the purge point since the log is purged only up to one.
    pub(crate) fn restore_if_behind(&self, purged: Option<LogId>) -> Result<()> {
        let Some(purged) = purged else { return Ok(()) };
        let applied = self.applied();
        if applied.is_some_and(|a| a.index >= purged.index) {
            return Ok(());
        }
        match self.snapshots.current() {
            Some(s) if s.meta.last_log_id.is_some_and(|l| l.index >= purged.index) => {
                self.switch_to(&s)
            }
            other => Err(Error::Storage(format!(
                "the state machine (applied {applied:?}) is behind the purged log \
                 ({purged:?}) and no local snapshot covers it (newest: {:?})",
                other.and_then(|s| s.meta.last_log_id)
            ))),
        }
    }

    /// Makes a new generation from snapshot `s` the live database.
    fn switch_to(&self, s: &Stored) -> Result<()> {
        let g = self.gens.create_from(s.dir())?;
        let st = sm_meta::read(&g.db)?;
        if st.applied != s.meta.last_log_id {
            g.retire();
            return Err(Error::Storage(format!(
                "snapshot {} holds state up to {:?} but its metadata says {:?}",
                s.dir().display(),
                st.applied,
                s.meta.last_log_id
            )));
        }
        // Durable switch first: after a crash the node restarts on the new generation.
        self.gens.point_to(&g)?;
        let g = Arc::new(g);
        let old = self.current.swap(Arc::clone(&g));
        old.retire();
        *self.applied.lock() = st;
        self.machine
            .reset(&g.db)
            .map_err(|e| Error::Storage(format!("the machine could not load a snapshot: {e}")))
    }

    fn apply_blocking(&self, entries: Vec<Entry>) -> Result<Vec<Applied>> {
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        let g = self.current.load_full();
        let db = &g.db;
        let mut st = self.applied.lock().clone();
        let mut membership_changed = false;
        let mut dedup = Dedup::new(db);
        let mut slots = Vec::with_capacity(entries.len());
        let mut commands = Vec::new();
        for e in &entries {
            st.applied = Some(e.log_id);
            match &e.payload {
                EntryPayload::Blank => slots.push(EntrySlots::Internal),
                EntryPayload::Membership(m) => {
                    st.membership = StoredMembership::new(Some(e.log_id), m.clone());
                    membership_changed = true;
                    slots.push(EntrySlots::Internal);
                }
                EntryPayload::Normal(proposal) => {
                    let mut own = Vec::with_capacity(proposal.requests.len());
                    for (position, req) in proposal.requests.iter().enumerate() {
                        st.clock = st.clock.max(req.time_ms);
                        own.push(match dedup.check(req, commands.len())? {
                            Check::New => {
                                commands.push(Command {
                                    index: e.log_id.index,
                                    time_ms: st.clock,
                                    seed: request_seed(e.log_id.index, position as u64),
                                    request: &req.body,
                                });
                                Slot::Fresh(commands.len() - 1)
                            }
                            Check::Answered(a) => Slot::Answer(a),
                            Check::Pending(pos) => Slot::Fresh(pos),
                            Check::Stale => Slot::Stale,
                        });
                    }
                    slots.push(EntrySlots::Requests(own));
                }
            }
        }
        let mut batch = WriteBatch::new();
        let answers = if commands.is_empty() {
            Vec::new()
        } else {
            let answers = self
                .machine
                .apply(db, &commands, &mut batch)
                .map_err(|e| Error::Storage(format!("the machine failed to apply: {e}")))?;
            if answers.len() != commands.len() {
                return Err(Error::Storage(format!(
                    "the machine answered {} of {} commands",
                    answers.len(),
                    commands.len()
                )));
            }
            answers
        };
        dedup.write(&mut batch, &answers)?;
        sm_meta::put(&mut batch, &st, membership_changed)?;
        db.write(batch)
            .map_err(|e| Error::db("writing applied entries to the state machine", e))?;
        *self.applied.lock() = st;
        let reply = |s: Slot| match s {
            Slot::Fresh(i) => Reply::Response(answers[i].clone()),
            Slot::Answer(a) => Reply::Response(a),
            Slot::Stale => Reply::Stale,
        };
        Ok(slots
            .into_iter()
            .map(|s| match s {
                EntrySlots::Internal => Applied::Internal,
                EntrySlots::Requests(own) => {
                    Applied::Requests(own.into_iter().map(reply).collect())
                }
            })
            .collect())
    }

    fn install_blocking(&self, meta: &SnapshotMeta, data: &SnapshotData) -> Result<()> {
        let stored = self.snapshots.adopt(meta, &data.dir)?;
        self.switch_to(&stored)
    }
}

impl RaftStateMachine<TypeConfig> for StateMachine {
    type SnapshotBuilder = StateMachine;

    async fn applied_state(&mut self) -> Result<(Option<LogId>, StoredMembership), StorageError> {
        let st = self.shared.applied.lock();
        Ok((st.applied, st.membership.clone()))
    }

    async fn apply<I>(&mut self, entries: I) -> Result<Vec<Applied>, StorageError>
    where
        I: IntoIterator<Item = Entry> + openraft::OptionalSend,
        I::IntoIter: openraft::OptionalSend,
    {
        let entries: Vec<Entry> = entries.into_iter().collect();
        let shared = Arc::clone(&self.shared);
        blocking(move || shared.apply_blocking(entries))
            .await
            .map_err(sm_err)
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        self.clone()
    }

    async fn begin_receiving_snapshot(&mut self) -> Result<Box<SnapshotData>, StorageError> {
        let shared = Arc::clone(&self.shared);
        blocking(move || shared.incoming_snapshot())
            .await
            .map(Box::new)
            .map_err(snap_err)
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta,
        snapshot: Box<SnapshotData>,
    ) -> Result<(), StorageError> {
        let shared = Arc::clone(&self.shared);
        let meta = meta.clone();
        blocking(move || shared.install_blocking(&meta, &snapshot))
            .await
            .map_err(snap_err)
    }

    async fn get_current_snapshot(
        &mut self,
    ) -> Result<Option<openraft::Snapshot<TypeConfig>>, StorageError> {
        Ok(self.shared.snapshots.current().map(|s| s.to_openraft()))
    }
}

impl RaftSnapshotBuilder<TypeConfig> for StateMachine {
    async fn build_snapshot(&mut self) -> Result<openraft::Snapshot<TypeConfig>, StorageError> {
        let shared = Arc::clone(&self.shared);
        blocking(move || {
            let g = shared.current.load_full();
            shared.snapshots.build(&g.db, shared.node_id)
        })
        .await
        .map(|s| s.to_openraft())
        .map_err(snap_err)
    }
}
