//! Reading a log written by an older layout, and rewriting it in the current one.
//!
//! Layout 1 carried one client request per entry; layout 2 carries a [`Proposal`] (a list
//! of requests). A layout-1 log is rewritten whole when it is opened: every entry decoded
//! with the old payload and encoded again with a proposal of one request, and the format
//! key set to 2, in one batch, synced. A crash before the batch leaves the old log, which
//! the next open upgrades again.

use std::ops::Bound;

use bloomkv::{Db, WriteBatch};
use openraft::{BasicNode, EntryPayload, Membership};
use serde::{Deserialize, Serialize};

use crate::codec;
use crate::error::{Error, Result};
use crate::keys::{self, LOG_FORMAT_VERSION, log as k};
use crate::types::{Entry, LogId, NodeId, Proposal, Request};

/// A layout-1 entry: openraft's `Entry` with a single [`Request`] as its normal payload.
/// Its fields and variants are in the order openraft serializes them.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct EntryV1 {
    pub(crate) log_id: LogId,
    pub(crate) payload: PayloadV1,
}

/// A layout-1 payload (openraft's `EntryPayload` variants, in their order).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum PayloadV1 {
    Blank,
    Normal(Request),
    Membership(Membership<NodeId, BasicNode>),
}

impl From<EntryV1> for Entry {
    fn from(e: EntryV1) -> Entry {
        Entry {
            log_id: e.log_id,
            payload: match e.payload {
                PayloadV1::Blank => EntryPayload::Blank,
                PayloadV1::Normal(r) => EntryPayload::Normal(Proposal { requests: vec![r] }),
                PayloadV1::Membership(m) => EntryPayload::Membership(m),
            },
        }
    }
}

/// Rewrites every entry of the layout-1 log in `db` in the current layout and records the
/// new format version; returns how many entries it rewrote.
///
/// # Errors
/// An entry that does not decode as layout 1 (naming its index), or the database's error.
pub(crate) fn from_v1(db: &Db) -> Result<usize> {
    let mut batch = WriteBatch::new();
    let mut n = 0;
    let entries = db.scan((
        Bound::Included(k::entry(0).to_vec()),
        Bound::Excluded(k::ENTRY_END.to_vec()),
    ));
    for kv in entries {
        let (key, v) = kv.map_err(|e| Error::db("reading the log to upgrade it", e))?;
        let old: EntryV1 = codec::decode(&v).map_err(|e| {
            Error::Storage(format!(
                "log database {}: entry {:?} is not a format-1 entry: {e}",
                db.path().display(),
                keys::log::index_of(&key)
            ))
        })?;
        batch.put(
            key,
            codec::encode(&Entry::from(old)).map_err(Error::Storage)?,
        );
        n += 1;
    }
    batch.put(
        k::FORMAT,
        codec::encode(&LOG_FORMAT_VERSION).map_err(Error::Storage)?,
    );
    db.write(batch)
        .map_err(|e| Error::db("writing the upgraded log", e))?;
    db.sync_wal()
        .map_err(|e| Error::db("syncing the upgraded log", e))?;
    Ok(n)
}
