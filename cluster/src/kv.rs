//! A small key-value [`Machine`] (SET, INCR, DEL; reads with [`KvMachine::get`]): the
//! machine the package's tests and examples replicate, and a model for writing the real
//! one.
//!
//! Values live under `k` + key in the state-machine database. It keeps one piece of
//! in-memory state, the number of live keys, rebuilt from the database by
//! [`Machine::reset`], to show (and test) what a machine must do when a snapshot install
//! replaces its database.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use bloomkv::{Db, WriteBatch};
use serde::{Deserialize, Serialize};

use crate::codec;
use crate::error::{Error, Result};
use crate::machine::{Command, Machine, MachineError};

/// A write to the KV machine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum KvRequest {
    /// Sets `key` to `value`; answers [`KvResponse::Ok`].
    Set {
        /// The key.
        key: Vec<u8>,
        /// The value.
        value: Vec<u8>,
    },
    /// Adds `by` to the decimal integer at `key` (0 when absent); answers the new value,
    /// or an error for a non-integer value or an overflow.
    Incr {
        /// The key.
        key: Vec<u8>,
        /// The increment.
        by: i64,
    },
    /// Deletes `key`; answers 1 if it existed, else 0.
    Del {
        /// The key.
        key: Vec<u8>,
    },
}

/// The KV machine's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum KvResponse {
    /// Done.
    Ok,
    /// An integer result.
    Int(i64),
    /// The command was refused (the refusal is replicated like any answer).
    Err(String),
}

impl KvRequest {
    /// `SET key value`.
    pub fn set(key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> KvRequest {
        KvRequest::Set {
            key: key.into(),
            value: value.into(),
        }
    }

    /// `INCRBY key by`.
    pub fn incr(key: impl Into<Vec<u8>>, by: i64) -> KvRequest {
        KvRequest::Incr {
            key: key.into(),
            by,
        }
    }

    /// `DEL key`.
    pub fn del(key: impl Into<Vec<u8>>) -> KvRequest {
        KvRequest::Del { key: key.into() }
    }

    /// The request's bytes, for [`crate::Node::write`].
    pub fn encode(&self) -> Vec<u8> {
        // Encoding an enum of byte strings and integers cannot fail.
        codec::encode(self).unwrap_or_default()
    }

    /// Decodes request bytes.
    ///
    /// # Errors
    /// [`Error::Network`] for bytes that are not a request.
    pub fn decode(bytes: &[u8]) -> Result<KvRequest> {
        codec::decode(bytes).map_err(|e| Error::Network(format!("not a KV request: {e}")))
    }
}

impl KvResponse {
    /// The response's bytes.
    pub fn encode(&self) -> Vec<u8> {
        codec::encode(self).unwrap_or_default()
    }

    /// Decodes response bytes (what [`crate::Node::write`] returned).
    ///
    /// # Errors
    /// [`Error::Network`] for bytes that are not a response.
    pub fn decode(bytes: &[u8]) -> Result<KvResponse> {
        codec::decode(bytes).map_err(|e| Error::Network(format!("not a KV response: {e}")))
    }
}

fn data_key(key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(key.len() + 1);
    k.push(b'k');
    k.extend_from_slice(key);
    k
}

/// The KV machine. See the [module docs](self).
#[derive(Debug, Default)]
pub struct KvMachine {
    keys: AtomicU64,
    applied: AtomicU64,
    resets: AtomicU64,
}

impl KvMachine {
    /// A machine with no state yet ([`Machine::reset`] loads it).
    pub fn new() -> KvMachine {
        KvMachine::default()
    }

    /// Reads `key` from a state-machine database.
    ///
    /// # Errors
    /// The engine's read error.
    pub fn get(db: &Db, key: &[u8]) -> bloomkv::Result<Option<Vec<u8>>> {
        db.get(data_key(key))
    }

    /// Live keys, as counted in memory (rebuilt by [`Machine::reset`]).
    pub fn len(&self) -> u64 {
        self.keys.load(Ordering::Relaxed)
    }

    /// Whether no key is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many times [`Machine::reset`] was called: once at start, once per snapshot
    /// install.
    pub fn resets(&self) -> u64 {
        self.resets.load(Ordering::Relaxed)
    }

    /// Commands this machine applied since it was created (a duplicate answered from the
    /// dedup table is not applied, so it does not count).
    pub fn applied_commands(&self) -> u64 {
        self.applied.load(Ordering::Relaxed)
    }
}

impl Machine for KvMachine {
    fn apply(
        &self,
        db: &Db,
        commands: &[Command<'_>],
        batch: &mut WriteBatch,
    ) -> Result<Vec<Vec<u8>>, MachineError> {
        // Writes of earlier commands of this call, which `db` does not show yet.
        let mut pending: BTreeMap<Vec<u8>, Option<Vec<u8>>> = BTreeMap::new();
        let read = |pending: &BTreeMap<Vec<u8>, Option<Vec<u8>>>, k: &[u8]| match pending.get(k) {
            Some(v) => Ok::<_, bloomkv::Error>(v.clone()),
            None => db.get(k),
        };
        let mut delta: i64 = 0;
        let mut out = Vec::with_capacity(commands.len());
        for c in commands {
            let resp = match KvRequest::decode(c.request) {
                Err(e) => KvResponse::Err(format!("ERR {e}")),
                Ok(KvRequest::Set { key, value }) => {
                    let k = data_key(&key);
                    if read(&pending, &k)?.is_none() {
                        delta += 1;
                    }
                    pending.insert(k, Some(value));
                    KvResponse::Ok
                }
                Ok(KvRequest::Incr { key, by }) => {
                    let k = data_key(&key);
                    let old = read(&pending, &k)?;
                    let cur = match &old {
                        None => Some(0),
                        Some(v) => std::str::from_utf8(v)
                            .ok()
                            .and_then(|s| s.parse::<i64>().ok()),
                    };
                    match cur.map(|c| c.checked_add(by)) {
                        None => KvResponse::Err("ERR value is not an integer".into()),
                        Some(None) => KvResponse::Err("ERR increment would overflow".into()),
                        Some(Some(n)) => {
                            if old.is_none() {
                                delta += 1;
                            }
                            pending.insert(k, Some(n.to_string().into_bytes()));
                            KvResponse::Int(n)
                        }
                    }
                }
                Ok(KvRequest::Del { key }) => {
                    let k = data_key(&key);
                    if read(&pending, &k)?.is_some() {
                        delta -= 1;
                        pending.insert(k, None);
                        KvResponse::Int(1)
                    } else {
                        KvResponse::Int(0)
                    }
                }
            };
            out.push(resp.encode());
        }
        for (k, v) in pending {
            match v {
                Some(v) => batch.put(k, v),
                None => batch.delete(k),
            }
        }
        if delta >= 0 {
            self.keys.fetch_add(delta.unsigned_abs(), Ordering::Relaxed);
        } else {
            self.keys.fetch_sub(delta.unsigned_abs(), Ordering::Relaxed);
        }
        self.applied
            .fetch_add(commands.len() as u64, Ordering::Relaxed);
        Ok(out)
    }

    fn reset(&self, db: &Db) -> Result<(), MachineError> {
        let mut n = 0u64;
        for kv in db.prefix(b"k") {
            kv?;
            n += 1;
        }
        self.keys.store(n, Ordering::Relaxed);
        self.resets.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}
