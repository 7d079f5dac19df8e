//! [`FaultController`]: which calls fail, the call counts, and the power-cut model.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use parking_lot::Mutex;

use super::{Fault, FaultKind, FaultOp};
use crate::env::Env;
use crate::error::Result;

/// A planned failure, counting the calls it matches.
#[derive(Clone, Debug)]
struct Plan {
    fault: Fault,
    /// Matching calls still to let through before the fault fires.
    skip: u64,
    fired: bool,
}

impl Plan {
    fn matches(&self, op: FaultOp, path: &Path) -> bool {
        self.fault.op == op
            && self
                .fault
                .file
                .as_deref()
                .is_none_or(|name| path.file_name().is_some_and(|f| f.to_str() == Some(name)))
    }
}

/// A rename not yet made durable by a directory fsync: what `to` held before, if anything.
#[derive(Debug)]
pub(super) struct PendingRename {
    pub(super) to: PathBuf,
    pub(super) old_contents: Option<Vec<u8>>,
}

#[derive(Debug, Default)]
pub(super) struct CtlState {
    calls: [u64; FaultOp::COUNT],
    /// The failures to come; usually one, several when a test needs two calls to fail
    /// (see [`FaultController::also_fail_nth`]).
    plans: Vec<Plan>,
    injected: u64,
    /// Per tracked file: the length known to be on stable storage.
    pub(super) synced_len: HashMap<PathBuf, u64>,
    pub(super) unsynced_creates: HashSet<PathBuf>,
    pub(super) unsynced_renames: Vec<PendingRename>,
    /// Model fsyncs without making them (see [`FaultController::set_simulated_sync`]).
    simulated_sync: bool,
    /// How long each file fsync takes on top of its own time (see
    /// [`FaultController::set_sync_delay`]).
    sync_delay: std::time::Duration,
}

/// Decides which calls fail, counts them, and models what a crash loses. Shared by a
/// [`FaultEnv`](super::FaultEnv) and the test driving it.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::env::StdEnv;
/// use bloomkv::env::fault::{FaultEnv, FaultOp};
/// let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
/// let dir = tempfile::tempdir()?;
/// let db = bloomkv::Db::open(dir.path(), bloomkv::Options { env, ..Default::default() })?;
/// let before = ctl.calls(FaultOp::Write);
/// db.put("k", "v")?;
/// assert!(ctl.calls(FaultOp::Write) > before);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Default)]
pub struct FaultController {
    pub(super) state: Mutex<CtlState>,
}

impl FaultController {
    /// Makes the `n`th call of `op` from now (1 = the next one) fail with `kind`.
    /// Replaces any earlier plan.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::env::StdEnv;
    /// use bloomkv::env::fault::{FaultEnv, FaultKind, FaultOp};
    /// let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
    /// let dir = tempfile::tempdir()?;
    /// let db = bloomkv::Db::open(dir.path(), bloomkv::Options { env, ..Default::default() })?;
    /// ctl.fail_nth(FaultOp::Write, 2, FaultKind::Eio); // the second append from now
    /// db.put("a", "1")?;
    /// assert!(db.put("b", "2").is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn fail_nth(&self, op: FaultOp, n: u64, kind: FaultKind) {
        self.clear();
        self.add(Fault::nth(op, n, kind));
    }

    /// Like [`FaultController::fail_nth`], but every later call of `op` fails too.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::env::StdEnv;
    /// use bloomkv::env::fault::{FaultEnv, FaultKind, FaultOp};
    /// let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
    /// let dir = tempfile::tempdir()?;
    /// let db = bloomkv::Db::open(dir.path(), bloomkv::Options { env, ..Default::default() })?;
    /// ctl.fail_from_nth(FaultOp::Write, 1, FaultKind::NoSpace); // a full disk
    /// assert!(db.put("a", "1").is_err());
    /// db.resume()?; // a fresh WAL (nothing written into it yet)
    /// assert!(db.put("a", "1").is_err()); // still full
    /// ctl.clear(); // space freed
    /// db.resume()?;
    /// db.put("a", "1")?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn fail_from_nth(&self, op: FaultOp, n: u64, kind: FaultKind) {
        self.clear();
        self.add(Fault::nth(op, n, kind).and_later());
    }

    /// Like [`FaultController::fail_nth`], but keeps the plans already made, so that calls of
    /// several operations fail (a WAL sync, then the truncate that would take its record
    /// back).
    ///
    /// # Examples
    /// ```
    /// use bloomkv::env::StdEnv;
    /// use bloomkv::env::fault::{FaultEnv, FaultKind, FaultOp};
    /// let (_env, ctl) = FaultEnv::wrap(StdEnv::shared());
    /// ctl.fail_nth(FaultOp::Sync, 1, FaultKind::Eio);
    /// ctl.also_fail_nth(FaultOp::Truncate, 1, FaultKind::Eio); // both plans stand
    /// ```
    pub fn also_fail_nth(&self, op: FaultOp, n: u64, kind: FaultKind) {
        self.add(Fault::nth(op, n, kind));
    }

    /// Adds `fault` to the plans already made. Its calls are counted from now.
    ///
    /// # Examples
    /// Every read of CURRENT fails, and nothing else does:
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::env::StdEnv;
    /// use bloomkv::env::fault::{Fault, FaultEnv, FaultKind, FaultOp};
    /// let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
    /// let dir = tempfile::tempdir()?;
    /// let options = bloomkv::Options { env, ..Default::default() };
    /// drop(bloomkv::Db::open(dir.path(), options.clone())?);
    /// ctl.add(Fault::nth(FaultOp::Read, 1, FaultKind::Eio).on_file("CURRENT").and_later());
    /// let err = bloomkv::Db::open(dir.path(), options.clone()).unwrap_err();
    /// assert!(err.to_string().contains("CURRENT"), "{err}");
    /// assert!(bloomkv::Db::open(dir.path(), options.clone()).is_err()); // and again
    /// ctl.clear();
    /// bloomkv::Db::open(dir.path(), options)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn add(&self, fault: Fault) {
        let skip = fault.n.max(1) - 1;
        self.state.lock().plans.push(Plan {
            fault,
            skip,
            fired: false,
        });
    }

    /// With `true`, file and directory fsyncs are recorded for [`FaultController::crash`]
    /// but not made for real (a file sync only hands the data to the OS). The crash model
    /// does not need real fsyncs, and tests run far faster without them.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::env::StdEnv;
    /// use bloomkv::env::fault::FaultEnv;
    /// let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
    /// ctl.set_simulated_sync(true); // fast, and the crash model still knows what was synced
    /// let dir = tempfile::tempdir()?;
    /// let opts = bloomkv::Options { env: env.clone(), sync_writes: true, ..Default::default() };
    /// let db = bloomkv::Db::open(dir.path(), opts.clone())?;
    /// db.put("k", "v")?;
    /// drop(db);
    /// ctl.crash(&StdEnv)?;
    /// assert_eq!(bloomkv::Db::open(dir.path(), opts)?.get("k")?, Some(b"v".to_vec()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn set_simulated_sync(&self, on: bool) {
        self.state.lock().simulated_sync = on;
    }

    pub(super) fn simulated_sync(&self) -> bool {
        self.state.lock().simulated_sync
    }

    /// Makes every file fsync (of a file or through a sync handle) take `delay` longer, as
    /// on a slow disk: with simulated syncs, concurrent writers then meet the same fsync the
    /// way they do on real hardware. Zero (the default) adds nothing.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::env::StdEnv;
    /// use bloomkv::env::fault::FaultEnv;
    /// let (_env, ctl) = FaultEnv::wrap(StdEnv::shared());
    /// ctl.set_sync_delay(std::time::Duration::from_millis(2));
    /// ```
    pub fn set_sync_delay(&self, delay: std::time::Duration) {
        self.state.lock().sync_delay = delay;
    }

    /// Sleeps for the sync delay, if one is set.
    pub(super) fn delay_sync(&self) {
        let delay = self.state.lock().sync_delay;
        if !delay.is_zero() {
            std::thread::sleep(delay);
        }
    }

    /// Stops injecting failures.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::env::StdEnv;
    /// use bloomkv::env::fault::{FaultEnv, FaultKind, FaultOp};
    /// let (_env, ctl) = FaultEnv::wrap(StdEnv::shared());
    /// ctl.fail_nth(FaultOp::Rename, 1, FaultKind::Eio);
    /// ctl.clear();
    /// assert_eq!(ctl.injected(), 0);
    /// ```
    pub fn clear(&self) {
        self.state.lock().plans.clear();
    }

    /// Calls of `op` made so far.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::env::StdEnv;
    /// use bloomkv::env::fault::{FaultEnv, FaultOp};
    /// let (_env, ctl) = FaultEnv::wrap(StdEnv::shared());
    /// assert_eq!(ctl.calls(FaultOp::Create), 0);
    /// ```
    pub fn calls(&self, op: FaultOp) -> u64 {
        self.state.lock().calls[op.index()]
    }

    /// Failures injected so far.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::env::StdEnv;
    /// use bloomkv::env::fault::FaultEnv;
    /// let (_env, ctl) = FaultEnv::wrap(StdEnv::shared());
    /// assert_eq!(ctl.injected(), 0);
    /// ```
    pub fn injected(&self) -> u64 {
        self.state.lock().injected
    }

    /// Counts a call of `op` on `path` and says whether (and how) it must fail. Every plan
    /// the call matches counts it, whichever fires.
    pub(super) fn check(&self, op: FaultOp, path: &Path) -> Option<FaultKind> {
        let mut st = self.state.lock();
        st.calls[op.index()] += 1;
        let mut fails = None;
        for plan in st.plans.iter_mut().filter(|p| p.matches(op, path)) {
            if plan.skip > 0 {
                plan.skip -= 1;
            } else if !plan.fired || plan.fault.sticky {
                plan.fired = true;
                fails = fails.or(Some(plan.fault.kind));
            }
        }
        if fails.is_some() {
            st.injected += 1;
        }
        fails
    }

    pub(super) fn created(&self, path: &Path) {
        let mut st = self.state.lock();
        st.synced_len.insert(path.to_path_buf(), 0);
        st.unsynced_creates.insert(path.to_path_buf());
    }

    pub(super) fn synced(&self, path: &Path, len: u64) {
        self.state.lock().synced_len.insert(path.to_path_buf(), len);
    }

    /// An fsync made the first `len` bytes of `path` durable; another running beside it may
    /// have recorded more already.
    pub(super) fn synced_at_least(&self, path: &Path, len: u64) {
        let mut st = self.state.lock();
        if let Some(synced) = st.synced_len.get_mut(path) {
            *synced = (*synced).max(len);
        }
    }

    /// Turns the directory into what a power cut at this moment would leave: un-synced
    /// renames are undone (newest first), files created since their directory's last fsync
    /// are deleted, and every other tracked file is cut to its last synced length.
    /// Close every database using the env first. `env` is the env the
    /// [`FaultEnv`](super::FaultEnv) wraps (the real files), not the `FaultEnv` itself, whose
    /// calls take the controller's lock that this holds.
    ///
    /// # Errors
    /// I/O errors from the underlying env while rewinding.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::env::StdEnv;
    /// use bloomkv::env::fault::FaultEnv;
    /// let (env, ctl) = FaultEnv::wrap(StdEnv::shared());
    /// let dir = tempfile::tempdir()?;
    /// let opts = bloomkv::Options { env: env.clone(), ..Default::default() };
    /// let db = bloomkv::Db::open(dir.path(), opts.clone())?;
    /// db.put("synced", "1")?;
    /// db.sync_wal()?;
    /// db.put("unsynced", "2")?;
    /// drop(db);
    /// ctl.crash(&StdEnv)?; // a power cut now
    /// let db = bloomkv::Db::open(dir.path(), opts)?;
    /// assert_eq!(db.get("synced")?, Some(b"1".to_vec()));
    /// assert_eq!(db.get("unsynced")?, None);
    /// # Ok(())
    /// # }
    /// ```
    pub fn crash(&self, env: &dyn Env) -> Result<()> {
        let mut st = self.state.lock();
        for r in std::mem::take(&mut st.unsynced_renames).into_iter().rev() {
            match r.old_contents {
                Some(bytes) => {
                    let mut f = env.create_writable(&r.to)?;
                    f.append(&bytes)?;
                    f.sync()?;
                    st.synced_len.insert(r.to.clone(), bytes.len() as u64);
                }
                None => {
                    let _ = env.remove_file(&r.to);
                    st.synced_len.remove(&r.to);
                }
            }
        }
        for path in std::mem::take(&mut st.unsynced_creates) {
            let _ = env.remove_file(&path);
            st.synced_len.remove(&path);
        }
        for (path, &len) in &st.synced_len {
            if env.exists(path) && env.file_size(path)? > len {
                env.truncate(path, len)?;
            }
        }
        Ok(())
    }
}
