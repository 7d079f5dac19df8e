//! The model of one key of the KV machine: a register that is also a counter.

use super::Model;

/// An operation on one key.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KvOp {
    /// SET to a value.
    Set(Vec<u8>),
    /// GET.
    Get,
    /// INCRBY.
    Incr(i64),
    /// DEL.
    Del,
}

/// What an operation returned.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KvOut {
    /// SET's acknowledgement.
    Ok,
    /// GET's value.
    Value(Option<Vec<u8>>),
    /// INCR's new value, DEL's count.
    Int(i64),
    /// A refused command (INCR of a non-integer, an overflow).
    Err,
}

/// Register-and-counter semantics per key, as `bloomkv_cluster::kv::KvMachine` implements them.
#[derive(Clone, Copy, Debug, Default)]
pub struct KvModel;

impl Model for KvModel {
    type State = Option<Vec<u8>>;
    type Input = KvOp;
    type Output = KvOut;

    fn init(&self) -> Self::State {
        None
    }

    fn step(&self, state: &Self::State, input: &KvOp) -> (Self::State, KvOut) {
        match input {
            KvOp::Set(v) => (Some(v.clone()), KvOut::Ok),
            KvOp::Get => (state.clone(), KvOut::Value(state.clone())),
            KvOp::Del => (None, KvOut::Int(i64::from(state.is_some()))),
            KvOp::Incr(by) => {
                let cur = match state {
                    None => Some(0),
                    Some(v) => std::str::from_utf8(v)
                        .ok()
                        .and_then(|s| s.parse::<i64>().ok()),
                };
                match cur.and_then(|c| c.checked_add(*by)) {
                    Some(n) => (Some(n.to_string().into_bytes()), KvOut::Int(n)),
                    None => (state.clone(), KvOut::Err),
                }
            }
        }
    }
}
