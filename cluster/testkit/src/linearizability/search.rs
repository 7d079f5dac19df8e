//! The search for one key: Wing & Gong's backtracking over a list of call and return
//! events, with Lowe's cache of (linearized set, state) pairs already explored.
//!
//! Events are sorted by time, calls before returns at equal times (touching operations
//! count as concurrent). The search walks the list: at a call it tries to linearize that
//! operation now (the model's output must match, unless unknown) and, if the resulting
//! (set, state) is new, removes the call and its return from the list and starts over from
//! the head; reaching a return means an operation that already returned has not been
//! linearized, so it undoes the last choice and tries the next call after it. An empty
//! list is a linearization. Operations with unknown outcomes return at "infinity": they
//! can always go last.

use std::collections::HashSet;

use super::{Model, Operation};

pub(super) enum Outcome {
    Ok,
    /// The longest linearization prefix found (indexes into the key's operations).
    Illegal(Vec<usize>),
    Exhausted,
}

#[derive(Clone, Copy)]
struct Event {
    op: usize,
    is_call: bool,
}

/// A doubly linked list over event slots `1..=n`, with sentinels 0 (head) and n + 1.
struct List {
    next: Vec<usize>,
    prev: Vec<usize>,
}

impl List {
    fn new(n: usize) -> List {
        List {
            next: (1..=n + 2).collect(),
            prev: (0..n + 2).map(|i| i.saturating_sub(1)).collect(),
        }
    }

    fn unlink(&mut self, x: usize) {
        let (p, n) = (self.prev[x], self.next[x]);
        self.next[p] = n;
        self.prev[n] = p;
    }

    /// Undoes `unlink(x)` (valid in reverse order of the unlinks).
    fn relink(&mut self, x: usize) {
        let (p, n) = (self.prev[x], self.next[x]);
        self.next[p] = x;
        self.prev[n] = x;
    }
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn clear(&mut self, i: usize) {
        self.0[i / 64] &= !(1 << (i % 64));
    }
}

pub(super) fn check_one<M: Model>(
    model: &M,
    ops: &[&Operation<M::Input, M::Output>],
    budget: u64,
) -> Outcome {
    let n = ops.len();
    // Events in time order; slot i + 1 of the list holds events[i].
    let mut events: Vec<(u64, bool, Event)> = Vec::with_capacity(2 * n);
    for (i, op) in ops.iter().enumerate() {
        events.push((
            op.call,
            false,
            Event {
                op: i,
                is_call: true,
            },
        ));
        // Calls sort before returns at equal times (`false` < `true`).
        events.push((
            op.ret.unwrap_or(u64::MAX),
            true,
            Event {
                op: i,
                is_call: false,
            },
        ));
    }
    events.sort_by_key(|&(t, is_ret, e)| (t, is_ret, e.op));
    let events: Vec<Event> = events.into_iter().map(|(_, _, e)| e).collect();
    let slots = events.len();
    let mut ret_slot = vec![0usize; n];
    for (i, e) in events.iter().enumerate() {
        if !e.is_call {
            ret_slot[e.op] = i + 1;
        }
    }
    let tail = slots + 1;
    let mut list = List::new(slots);
    let mut state = model.init();
    let mut linearized = Bits::new(n);
    let mut cache: HashSet<(Bits, M::State)> = HashSet::new();
    let mut stack: Vec<(usize, M::State)> = Vec::new();
    let mut longest: Vec<usize> = Vec::new();
    let mut steps = 0u64;
    let mut entry = list.next[0];
    while list.next[0] != tail {
        steps += 1;
        if steps > budget {
            return Outcome::Exhausted;
        }
        if entry == tail {
            // Cannot happen: a return always precedes the tail while the list is not empty.
            return Outcome::Illegal(longest);
        }
        let ev = events[entry - 1];
        if ev.is_call {
            let op = ops[ev.op];
            let (next_state, out) = model.step(&state, &op.input);
            let matches = op.output.as_ref().is_none_or(|o| *o == out);
            if matches {
                linearized.set(ev.op);
                if cache.insert((linearized.clone(), next_state.clone())) {
                    stack.push((entry, std::mem::replace(&mut state, next_state)));
                    list.unlink(entry);
                    list.unlink(ret_slot[ev.op]);
                    if stack.len() > longest.len() {
                        longest = stack.iter().map(|(s, _)| events[*s - 1].op).collect();
                    }
                    entry = list.next[0];
                    continue;
                }
                linearized.clear(ev.op);
            }
            entry = list.next[entry];
        } else {
            let Some((slot, prev_state)) = stack.pop() else {
                return Outcome::Illegal(longest);
            };
            let op = events[slot - 1].op;
            linearized.clear(op);
            state = prev_state;
            list.relink(ret_slot[op]);
            list.relink(slot);
            entry = list.next[slot];
        }
    }
    Outcome::Ok
}
