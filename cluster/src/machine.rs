//! The application's state machine: what a committed client request does to the
//! state-machine database.

use bloomkv::{Db, WriteBatch};

/// The error a [`Machine`] returns when it cannot apply at all (an I/O error reading its
/// database). Such an error stops the node's Raft core: a replicated state machine that
/// skipped an entry would diverge from the others. A command that is merely refused (a
/// wrong type, a bad argument) is not an error: its refusal is the command's response.
pub type MachineError = Box<dyn std::error::Error + Send + Sync>;

/// One committed client request, handed to [`Machine::apply`] in log order.
///
/// Everything a command may depend on besides the database is here and is the same on
/// every node: `time_ms` for expiry times and `seed` for any random choice (SPOP,
/// SRANDMEMBER, a filter's hash seed), never the local clock or a local random source.
#[derive(Debug, Clone, Copy)]
pub struct Command<'a> {
    /// The log index of the entry carrying the request: non-decreasing along the log, and
    /// shared by the requests the leader proposed together in one entry (in their order).
    pub index: u64,
    /// Milliseconds since the Unix epoch: the leader's clock when it proposed the entry,
    /// made non-decreasing along the log (a new leader with a slower clock cannot move
    /// time backwards). Identical on every node.
    pub time_ms: u64,
    /// A pseudo-random 64-bit value derived from `index` and the request's position in
    /// its entry ([`request_seed`]): identical on every node, different for every request.
    pub seed: u64,
    /// The request's bytes, as given to [`crate::Node::write`].
    pub request: &'a [u8],
}

/// A deterministic state machine over the state-machine database: the real one is
/// bloomkv-server's command layer; `kv::KvMachine` (feature `test-machine`) is a small one for tests.
///
/// The node calls [`Machine::apply`] once per batch of committed entries, from one task at
/// a time, never concurrently with itself or with [`Machine::reset`]. Other tasks read the
/// database meanwhile (clients' reads); they see each apply call's writes all at once.
///
/// # Determinism
/// Given the same database contents and the same commands, `apply` must produce the same
/// writes and responses on every node and at every replay: no local clock, no local
/// randomness, no iteration over a hash map's order, no dependence on in-memory state
/// that [`Machine::reset`] could not rebuild from the database.
///
/// # Keys
/// Keys starting with [`RESERVED_PREFIX`](crate::RESERVED_PREFIX) (`0xFF`) belong to the
/// replication layer (applied index, membership, dedup table); the machine must neither
/// write nor depend on them, and whole-keyspace commands must stop short of them (a
/// `FLUSHALL` deletes up to `[0xFF]`, `SCAN`/`KEYS`/`DBSIZE` skip them).
pub trait Machine: Send + Sync + 'static {
    /// Applies `commands` (committed, in log order, already deduplicated: a retried request
    /// is not handed over twice) to `db`: puts its writes into `batch` and returns exactly
    /// one response per command, in order. The node adds its own records (applied index,
    /// membership, dedup answers) to the same `batch` and writes it as one atomic batch, so
    /// data and applied index always agree, also after a crash.
    ///
    /// `db` shows the state before this call: the writes of earlier commands of the same
    /// call are only in `batch`, so a machine whose later command reads what an earlier one
    /// wrote (INCR twice on one key) must look at its own pending writes first.
    ///
    /// Do not keep `db` (or a clone of it) past the call: a snapshot install replaces it.
    ///
    /// # Errors
    /// Only when the machine cannot apply at all (an I/O error); this stops the node.
    fn apply(
        &self,
        db: &Db,
        commands: &[Command<'_>],
        batch: &mut WriteBatch,
    ) -> Result<Vec<Vec<u8>>, MachineError>;

    /// The state-machine database is now `db`: called once when the node starts and again
    /// after every snapshot install replaced the database. Rebuild any in-memory state
    /// (counters, caches) from it and drop anything derived from the previous one.
    ///
    /// # Errors
    /// Reading `db` failed; the node then fails to start, or stops.
    fn reset(&self, db: &Db) -> Result<(), MachineError>;
}

/// A pseudo-random value for log index `index` (SplitMix64 of the index).
///
/// # Examples
/// ```
/// assert_eq!(bloomkv_cluster::seed_for(7), bloomkv_cluster::seed_for(7));
/// assert_ne!(bloomkv_cluster::seed_for(7), bloomkv_cluster::seed_for(8));
/// ```
pub fn seed_for(index: u64) -> u64 {
    let mut z = index.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed [`Command::seed`] carries for the request at `position` in the entry at log
/// index `index`: the first request's is [`seed_for`]`(index)`, each later one's is mixed
/// again with its position, so no two requests' random streams overlap.
///
/// # Examples
/// ```
/// use bloomkv_cluster::{request_seed, seed_for};
/// assert_eq!(request_seed(7, 0), seed_for(7));
/// assert_ne!(request_seed(7, 1), request_seed(7, 2));
/// ```
pub fn request_seed(index: u64, position: u64) -> u64 {
    match position {
        0 => seed_for(index),
        p => seed_for(seed_for(index) ^ p),
    }
}
