//! The linearizability checker catches planted violations and accepts valid concurrent
//! histories, including operations whose outcome is unknown.

use bloomkv_cluster_testkit::linearizability::{KvModel, KvOp, KvOut, Operation, Verdict, check};

const BUDGET: u64 = 10_000_000;

fn op(
    key: &str,
    call: u64,
    ret: Option<u64>,
    input: KvOp,
    output: Option<KvOut>,
) -> Operation<KvOp, KvOut> {
    Operation {
        key: key.as_bytes().to_vec(),
        client: 0,
        call,
        ret,
        input,
        output,
    }
}

fn set(v: &str) -> KvOp {
    KvOp::Set(v.as_bytes().to_vec())
}

fn val(v: &str) -> Option<KvOut> {
    Some(KvOut::Value(Some(v.as_bytes().to_vec())))
}

#[test]
fn concurrent_registers_and_counters_are_accepted() {
    let h = vec![
        // Two overlapping writes; reads during and after may see either order, but a
        // later read must agree with the earlier one's order.
        op("r", 0, Some(10), set("a"), Some(KvOut::Ok)),
        op("r", 5, Some(15), set("b"), Some(KvOut::Ok)),
        op("r", 6, Some(8), KvOp::Get, val("a")),
        op("r", 16, Some(20), KvOp::Get, val("b")),
        // Concurrent increments that returned 1 and 2, a read of 2 after both.
        op("c", 0, Some(10), KvOp::Incr(1), Some(KvOut::Int(2))),
        op("c", 1, Some(9), KvOp::Incr(1), Some(KvOut::Int(1))),
        op("c", 11, Some(12), KvOp::Get, val("2")),
    ];
    assert_eq!(check(&KvModel, &h, BUDGET), Verdict::Ok);
}

#[test]
fn unknown_outcomes_may_or_may_not_have_happened() {
    // An INCR that timed out: a later read of 2 means it happened (after the known one)...
    let happened = vec![
        op("c", 0, None, KvOp::Incr(1), None),
        op("c", 1, Some(2), KvOp::Incr(1), Some(KvOut::Int(1))),
        op("c", 50, Some(60), KvOp::Get, val("2")),
    ];
    assert_eq!(check(&KvModel, &happened, BUDGET), Verdict::Ok);
    // ...a read of 1 means it has not happened yet, and it may still.
    let not_yet = vec![
        op("c", 0, None, KvOp::Incr(1), None),
        op("c", 1, Some(2), KvOp::Incr(1), Some(KvOut::Int(1))),
        op("c", 50, Some(60), KvOp::Get, val("1")),
    ];
    assert_eq!(check(&KvModel, &not_yet, BUDGET), Verdict::Ok);
    // But once seen, it cannot be undone: reading 2 then 1 is a violation.
    let flicker = vec![
        op("c", 0, None, KvOp::Incr(1), None),
        op("c", 1, Some(2), KvOp::Incr(1), Some(KvOut::Int(1))),
        op("c", 50, Some(60), KvOp::Get, val("2")),
        op("c", 70, Some(80), KvOp::Get, val("1")),
    ];
    assert!(matches!(
        check(&KvModel, &flicker, BUDGET),
        Verdict::Illegal { .. }
    ));
    // And a value nobody wrote is a violation whatever is unknown.
    let invented = vec![
        op("r", 0, None, set("a"), None),
        op("r", 10, Some(20), KvOp::Get, val("z")),
    ];
    assert!(matches!(
        check(&KvModel, &invented, BUDGET),
        Verdict::Illegal { .. }
    ));
}

#[test]
fn planted_violations_are_caught_on_their_key() {
    // A stale read: the write of b completed before the read started.
    let mut h = vec![
        op("ok", 0, Some(1), set("x"), Some(KvOut::Ok)),
        op("ok", 2, Some(3), KvOp::Get, val("x")),
        op("stale", 0, Some(10), set("a"), Some(KvOut::Ok)),
        op("stale", 11, Some(20), set("b"), Some(KvOut::Ok)),
        op("stale", 21, Some(30), KvOp::Get, val("a")),
    ];
    match check(&KvModel, &h, BUDGET) {
        Verdict::Illegal { key, longest } => {
            assert_eq!(key, b"stale");
            assert!(longest.iter().all(|&i| h[i].key == b"stale"));
        }
        v => panic!("{v:?}"),
    }
    // A lost update: two increments both answered 1.
    h = vec![
        op("c", 0, Some(10), KvOp::Incr(1), Some(KvOut::Int(1))),
        op("c", 1, Some(11), KvOp::Incr(1), Some(KvOut::Int(1))),
    ];
    assert!(matches!(
        check(&KvModel, &h, BUDGET),
        Verdict::Illegal { .. }
    ));
    // The same history with overlapping times shifted apart is still illegal; with the
    // second answered 2 it is fine.
    h[1].output = Some(KvOut::Int(2));
    assert_eq!(check(&KvModel, &h, BUDGET), Verdict::Ok);
}

#[test]
fn a_larger_concurrent_history_is_checked_and_a_budget_ends_the_search() {
    // 4 clients doing 50 increments each, overlapping in pairs, with correct answers in
    // real-time order; then one answer corrupted.
    let mut h = Vec::new();
    let mut n = 0;
    for round in 0..50u64 {
        for c in 0..4u64 {
            n += 1;
            let t = round * 100 + c * 10;
            h.push(Operation {
                key: b"c".to_vec(),
                client: c,
                call: t,
                ret: Some(t + 15),
                input: KvOp::Incr(1),
                output: Some(KvOut::Int(n)),
            });
        }
    }
    assert_eq!(check(&KvModel, &h, BUDGET), Verdict::Ok);
    h[150].output = Some(KvOut::Int(7));
    assert!(matches!(
        check(&KvModel, &h, BUDGET),
        Verdict::Illegal { .. }
    ));
    assert!(matches!(check(&KvModel, &h, 10), Verdict::Unknown { .. }));
}
