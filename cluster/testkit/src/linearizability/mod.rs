//! A linearizability checker for recorded histories: the Wing–Gong search with Lowe's
//! memoization of (linearized set, state), partitioned per key as Porcupine does
//! (P-compositionality: a history is linearizable if and only if each key's
//! sub-history is, for models whose keys are independent).
//!
//! A history is a list of [`Operation`]s, each with its call and return times (any
//! monotonic unit) and its output. An operation whose outcome is unknown (the client gave
//! up: a timeout, a broken connection) has no return time and no output: it may have taken
//! effect at any point after its call, or never, and the checker accepts both.
//!
//! ```
//! use bloomkv_cluster_testkit::linearizability::{check, KvModel, KvOp, KvOut, Operation, Verdict};
//!
//! let op = |call, ret, input, output| Operation { key: b"k".to_vec(), client: 0, call, ret, input, output };
//! // A write of 1 completes, then a read returns the old value: not linearizable.
//! let bad = vec![
//!     op(0, Some(10), KvOp::Set(b"1".to_vec()), Some(KvOut::Ok)),
//!     op(20, Some(30), KvOp::Get, Some(KvOut::Value(None))),
//! ];
//! assert!(matches!(check(&KvModel, &bad, 1_000_000), Verdict::Illegal { .. }));
//! // The same read while the write is still in flight: fine.
//! let good = vec![
//!     op(0, Some(30), KvOp::Set(b"1".to_vec()), Some(KvOut::Ok)),
//!     op(20, Some(25), KvOp::Get, Some(KvOut::Value(None))),
//! ];
//! assert_eq!(check(&KvModel, &good, 1_000_000), Verdict::Ok);
//! ```

mod kv_model;
mod recorder;
mod redis_model;
mod search;

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::hash::Hash;

pub use kv_model::{KvModel, KvOp, KvOut};
pub use recorder::Recorder;
pub use redis_model::{RedisModel, RedisOp, RedisOut, RedisState};

/// A sequential specification of one key's object.
pub trait Model {
    /// The object's state (hashed and compared by the search's cache).
    type State: Clone + Eq + Hash + Debug;
    /// An operation's input.
    type Input: Debug;
    /// An operation's output.
    type Output: PartialEq + Debug;
    /// The state before any operation.
    fn init(&self) -> Self::State;
    /// Applies `input` to `state`: the new state and the output the operation must return.
    fn step(&self, state: &Self::State, input: &Self::Input) -> (Self::State, Self::Output);
}

/// One operation of a history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation<I, O> {
    /// The key (object) it works on: the unit the history is partitioned by.
    pub key: Vec<u8>,
    /// Which client issued it (for reports only).
    pub client: u64,
    /// When it was called.
    pub call: u64,
    /// When it returned; `None`: it never did, or its outcome is unknown.
    pub ret: Option<u64>,
    /// What it was asked to do.
    pub input: I,
    /// What it returned; `None`: unknown (any output is accepted, the effect may or may
    /// not have happened).
    pub output: Option<O>,
}

/// The checker's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every key's history is linearizable.
    Ok,
    /// This key's history has no linearization. `longest` lists (as indexes into the
    /// history) the longest prefix of a linearization the search found, for a report.
    Illegal {
        /// The key.
        key: Vec<u8>,
        /// The longest linearizable prefix found.
        longest: Vec<usize>,
    },
    /// The search for this key exceeded its step budget without an answer.
    Unknown {
        /// The key.
        key: Vec<u8>,
    },
}

/// Checks `history` against `model`, one key at a time, spending at most `budget` search
/// steps per key. Keys are checked in order; the first failing key is reported.
pub fn check<M: Model>(
    model: &M,
    history: &[Operation<M::Input, M::Output>],
    budget: u64,
) -> Verdict {
    let mut by_key: BTreeMap<&[u8], Vec<usize>> = BTreeMap::new();
    for (i, op) in history.iter().enumerate() {
        by_key.entry(op.key.as_slice()).or_default().push(i);
    }
    for (key, idx) in by_key {
        let ops: Vec<&Operation<M::Input, M::Output>> = idx.iter().map(|&i| &history[i]).collect();
        match search::check_one(model, &ops, budget) {
            search::Outcome::Ok => {}
            search::Outcome::Illegal(longest) => {
                return Verdict::Illegal {
                    key: key.to_vec(),
                    longest: longest.into_iter().map(|i| idx[i]).collect(),
                };
            }
            search::Outcome::Exhausted => return Verdict::Unknown { key: key.to_vec() },
        }
    }
    Verdict::Ok
}
