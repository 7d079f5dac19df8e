//! The model of one Redis key for the fault-injection harness: a string (SET, GET, INCR),
//! a set (SADD, SMEMBERS) or a Bloom filter (BF.ADD, BF.EXISTS).
//!
//! A Bloom filter may answer "present" for an item never added (a false positive): then
//! BF.ADD answers 0 and BF.EXISTS 1 although the item is new. So for an item not added
//! yet the model accepts either answer ([`RedisOut::AnyBit`]), and is strict where a filter
//! must be: an item added before is present (BF.EXISTS 1) and is not added again (BF.ADD
//! 0). That is exactly what a lost BF.ADD would break.

use std::collections::BTreeSet;

use super::Model;

/// An operation on one key.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RedisOp {
    /// `SET key value`.
    Set(Vec<u8>),
    /// `GET key`.
    Get,
    /// `INCR key`.
    Incr,
    /// `SADD key member`.
    SAdd(Vec<u8>),
    /// `SMEMBERS key`.
    SMembers,
    /// `BF.ADD key item`.
    BfAdd(Vec<u8>),
    /// `BF.EXISTS key item`.
    BfExists(Vec<u8>),
}

/// What an operation returned (or, from the model, may return).
#[derive(Clone, Debug, Eq)]
#[non_exhaustive]
pub enum RedisOut {
    /// `+OK`.
    Ok,
    /// A bulk string or nil.
    Value(Option<Vec<u8>>),
    /// An integer.
    Int(i64),
    /// A set's members.
    Members(BTreeSet<Vec<u8>>),
    /// An error reply (INCR of a non-integer).
    Err,
    /// Model only: 0 or 1 both match (a Bloom filter's answer for an item not added).
    AnyBit,
}

impl PartialEq for RedisOut {
    fn eq(&self, other: &RedisOut) -> bool {
        use RedisOut::{AnyBit, Err, Int, Members, Ok, Value};
        match (self, other) {
            (AnyBit, Int(0 | 1)) | (Int(0 | 1), AnyBit) | (AnyBit, AnyBit) => true,
            (Ok, Ok) | (Err, Err) => true,
            (Value(a), Value(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (Members(a), Members(b)) => a == b,
            _ => false,
        }
    }
}

/// A key's value in the model.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RedisState {
    /// No such key.
    Absent,
    /// A string.
    Str(Vec<u8>),
    /// A set.
    Set(BTreeSet<Vec<u8>>),
    /// A Bloom filter: the items added (it reports them present, and maybe others).
    Bloom(BTreeSet<Vec<u8>>),
}

/// Redis semantics for the operations of [`RedisOp`] (no type errors: the harness gives
/// each kind of value keys of its own).
#[derive(Clone, Copy, Debug, Default)]
pub struct RedisModel;

impl Model for RedisModel {
    type State = RedisState;
    type Input = RedisOp;
    type Output = RedisOut;

    fn init(&self) -> RedisState {
        RedisState::Absent
    }

    fn step(&self, state: &RedisState, input: &RedisOp) -> (RedisState, RedisOut) {
        use RedisState::{Absent, Bloom, Set, Str};
        match (input, state) {
            (RedisOp::Set(v), _) => (Str(v.clone()), RedisOut::Ok),
            (RedisOp::Get, Str(v)) => (state.clone(), RedisOut::Value(Some(v.clone()))),
            (RedisOp::Get, _) => (state.clone(), RedisOut::Value(None)),
            (RedisOp::Incr, Absent) => (Str(b"1".to_vec()), RedisOut::Int(1)),
            (RedisOp::Incr, Str(v)) => {
                let n = std::str::from_utf8(v)
                    .ok()
                    .and_then(|s| s.parse::<i64>().ok())
                    .and_then(|n| n.checked_add(1));
                match n {
                    Some(n) => (Str(n.to_string().into_bytes()), RedisOut::Int(n)),
                    None => (state.clone(), RedisOut::Err),
                }
            }
            (RedisOp::SAdd(m), Set(s)) => {
                let mut s = s.clone();
                let added = s.insert(m.clone());
                (Set(s), RedisOut::Int(i64::from(added)))
            }
            (RedisOp::SAdd(m), Absent) => (Set([m.clone()].into()), RedisOut::Int(1)),
            (RedisOp::SMembers, Set(s)) => (state.clone(), RedisOut::Members(s.clone())),
            (RedisOp::SMembers, _) => (state.clone(), RedisOut::Members(BTreeSet::new())),
            (RedisOp::BfAdd(x), Bloom(s)) if s.contains(x) => (state.clone(), RedisOut::Int(0)),
            (RedisOp::BfAdd(x), Bloom(s)) => {
                let mut s = s.clone();
                s.insert(x.clone());
                (Bloom(s), RedisOut::AnyBit)
            }
            // The first BF.ADD creates the filter: nothing can be a false positive yet.
            (RedisOp::BfAdd(x), Absent) => (Bloom([x.clone()].into()), RedisOut::Int(1)),
            (RedisOp::BfExists(x), Bloom(s)) if s.contains(x) => (state.clone(), RedisOut::Int(1)),
            (RedisOp::BfExists(_), Bloom(_)) => (state.clone(), RedisOut::AnyBit),
            (RedisOp::BfExists(_), _) => (state.clone(), RedisOut::Int(0)),
            // A type the harness never mixes: the command would answer WRONGTYPE.
            (_, _) => (state.clone(), RedisOut::Err),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Operation, Verdict, check};
    use super::*;

    fn op(
        call: u64,
        ret: Option<u64>,
        input: RedisOp,
        output: Option<RedisOut>,
    ) -> Operation<RedisOp, RedisOut> {
        Operation {
            key: b"k".to_vec(),
            client: 0,
            call,
            ret,
            input,
            output,
        }
    }

    #[test]
    fn a_lost_set_member_is_caught() {
        let m = |v: &[&str]| RedisOut::Members(v.iter().map(|s| s.as_bytes().to_vec()).collect());
        let ok = vec![
            op(
                0,
                Some(5),
                RedisOp::SAdd(b"a".to_vec()),
                Some(RedisOut::Int(1)),
            ),
            op(6, None, RedisOp::SAdd(b"b".to_vec()), None),
            op(10, Some(12), RedisOp::SMembers, Some(m(&["a"]))),
            op(13, Some(15), RedisOp::SMembers, Some(m(&["a", "b"]))),
        ];
        assert_eq!(check(&RedisModel, &ok, 100_000), Verdict::Ok);
        // The acknowledged SADD of "a" missing from a later read.
        let lost = vec![
            op(
                0,
                Some(5),
                RedisOp::SAdd(b"a".to_vec()),
                Some(RedisOut::Int(1)),
            ),
            op(10, Some(12), RedisOp::SMembers, Some(m(&[]))),
        ];
        assert!(matches!(
            check(&RedisModel, &lost, 100_000),
            Verdict::Illegal { .. }
        ));
    }

    #[test]
    fn bloom_false_positives_pass_and_false_negatives_fail() {
        let add = |x: &str| RedisOp::BfAdd(x.as_bytes().to_vec());
        let exists = |x: &str| RedisOp::BfExists(x.as_bytes().to_vec());
        let fp = vec![
            op(0, Some(1), add("a"), Some(RedisOut::Int(1))),
            // "b" is new, but the filter says present: BF.ADD answers 0, BF.EXISTS 1.
            op(2, Some(3), add("b"), Some(RedisOut::Int(0))),
            op(4, Some(5), exists("c"), Some(RedisOut::Int(1))),
            op(6, Some(7), exists("a"), Some(RedisOut::Int(1))),
        ];
        assert_eq!(check(&RedisModel, &fp, 100_000), Verdict::Ok);
        let lost = vec![
            op(0, Some(1), add("a"), Some(RedisOut::Int(1))),
            op(2, Some(3), exists("a"), Some(RedisOut::Int(0))),
        ];
        assert!(matches!(
            check(&RedisModel, &lost, 100_000),
            Verdict::Illegal { .. }
        ));
        let twice = vec![
            op(0, Some(1), add("a"), Some(RedisOut::Int(1))),
            op(2, Some(3), add("a"), Some(RedisOut::Int(1))),
        ];
        assert!(matches!(
            check(&RedisModel, &twice, 100_000),
            Verdict::Illegal { .. }
        ));
    }

    #[test]
    fn a_double_applied_incr_is_caught() {
        let h = vec![
            op(0, Some(1), RedisOp::Incr, Some(RedisOut::Int(1))),
            op(2, None, RedisOp::Incr, None),
            op(
                3,
                Some(4),
                RedisOp::Get,
                Some(RedisOut::Value(Some(b"3".to_vec()))),
            ),
        ];
        assert!(matches!(
            check(&RedisModel, &h, 100_000),
            Verdict::Illegal { .. }
        ));
    }
}
