//! Recording a history from concurrent clients.

use std::time::Instant;

use parking_lot::Mutex;

use super::Operation;

/// Collects [`Operation`]s from concurrent clients, timing them in microseconds since
/// the recorder was made.
///
/// ```
/// use bloomkv_cluster_testkit::linearizability::{check, KvModel, KvOp, KvOut, Recorder, Verdict};
///
/// let rec = Recorder::new();
/// let a = rec.call(1, b"k", KvOp::Incr(1));
/// rec.ret(a, Some(KvOut::Int(1)));
/// let b = rec.call(2, b"k", KvOp::Incr(1));
/// rec.ret(b, None); // timed out: outcome unknown
/// assert_eq!(check(&KvModel, &rec.history(), 1_000_000), Verdict::Ok);
/// ```
pub struct Recorder<I, O> {
    start: Instant,
    ops: Mutex<Vec<Operation<I, O>>>,
}

impl<I: Clone, O: Clone> Default for Recorder<I, O> {
    fn default() -> Self {
        Recorder::new()
    }
}

impl<I: Clone, O: Clone> Recorder<I, O> {
    /// An empty history.
    pub fn new() -> Recorder<I, O> {
        Recorder {
            start: Instant::now(),
            ops: Mutex::new(Vec::new()),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    /// Records the call of an operation; returns its handle for [`Recorder::ret`].
    pub fn call(&self, client: u64, key: &[u8], input: I) -> usize {
        let call = self.now();
        let mut ops = self.ops.lock();
        ops.push(Operation {
            key: key.to_vec(),
            client,
            call,
            ret: None,
            input,
            output: None,
        });
        ops.len() - 1
    }

    /// Records the return of operation `id`: `Some(output)`, or `None` when its outcome is
    /// unknown (it then stays open forever, as the checker requires).
    pub fn ret(&self, id: usize, output: Option<O>) {
        let now = self.now();
        if let Some(op) = self.ops.lock().get_mut(id) {
            if output.is_some() {
                op.ret = Some(now);
            }
            op.output = output;
        }
    }

    /// The history so far.
    pub fn history(&self) -> Vec<Operation<I, O>> {
        self.ops.lock().clone()
    }
}
