//! The replication layer's records in the state-machine database: applied log id,
//! membership, clock and format version (keys in [`crate::keys::sm`]).

use bloomkv::{Db, WriteBatch};
use serde::de::DeserializeOwned;

use crate::codec;
use crate::error::{Error, Result};
use crate::keys::{self, SM_FORMAT_VERSION, sm as k};
use crate::types::{LogId, StoredMembership};

/// What the state-machine database says it holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct AppliedState {
    pub applied: Option<LogId>,
    pub membership: StoredMembership,
    /// The largest leader timestamp applied (ms).
    pub clock: u64,
}

fn get<T: DeserializeOwned>(db: &Db, key: &[u8], what: &str) -> Result<Option<T>> {
    match db.get(key) {
        Ok(None) => Ok(None),
        Ok(Some(v)) => codec::decode(&v).map(Some).map_err(|e| {
            Error::Storage(format!(
                "state-machine database {}: {what} is damaged: {e}",
                db.path().display()
            ))
        }),
        Err(e) => Err(Error::db(format!("reading the {what}"), e)),
    }
}

/// Reads the applied state (an empty database has applied nothing).
pub(crate) fn read(db: &Db) -> Result<AppliedState> {
    check_format(db)?;
    Ok(AppliedState {
        applied: get::<Option<LogId>>(db, k::APPLIED, "applied log id")?.flatten(),
        membership: get(db, k::MEMBERSHIP, "membership")?.unwrap_or_default(),
        clock: match db.get(k::CLOCK) {
            Ok(None) => 0,
            Ok(Some(v)) => keys::be64(&v).ok_or_else(|| {
                Error::Storage(format!(
                    "state-machine database {}: clock record is damaged",
                    db.path().display()
                ))
            })?,
            Err(e) => return Err(Error::db("reading the clock", e)),
        },
    })
}

fn check_format(db: &Db) -> Result<()> {
    match get::<u32>(db, k::FORMAT, "format version")? {
        None | Some(SM_FORMAT_VERSION) => Ok(()),
        Some(v) => Err(Error::Storage(format!(
            "state-machine database {} has format version {v}; this build reads {SM_FORMAT_VERSION}",
            db.path().display()
        ))),
    }
}

/// Writes the format version into a writable database that has none yet.
pub(crate) fn stamp_format(db: &Db) -> Result<()> {
    check_format(db)?;
    if get::<u32>(db, k::FORMAT, "format version")?.is_none() {
        let v = codec::encode(&SM_FORMAT_VERSION).map_err(Error::Storage)?;
        db.put(k::FORMAT, v)
            .map_err(|e| Error::db("writing the state-machine format version", e))?;
    }
    Ok(())
}

/// Adds the applied state to `batch` (the batch that carries the data it describes).
pub(crate) fn put(
    batch: &mut WriteBatch,
    st: &AppliedState,
    membership_changed: bool,
) -> Result<()> {
    batch.put(
        k::APPLIED,
        codec::encode(&st.applied).map_err(Error::Storage)?,
    );
    if membership_changed {
        batch.put(
            k::MEMBERSHIP,
            codec::encode(&st.membership).map_err(Error::Storage)?,
        );
    }
    batch.put(k::CLOCK, st.clock.to_be_bytes());
    Ok(())
}
