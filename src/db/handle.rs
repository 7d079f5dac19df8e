//! [`Handle`]: what the clones of one `Db` share. Dropping the last one stops the background
//! threads before the database closes; the database, and with it its lock, is gone when the
//! drop returns.

use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::Mutex;

use super::core::DbInner;
use super::{open_handles, secondary_tail};

pub(super) struct Handle {
    pub(super) inner: Arc<DbInner>,
    /// The flush thread and the compaction threads.
    pub(super) background: Mutex<Vec<JoinHandle<()>>>,
    /// A secondary's reading position ([`Db::open_secondary`](crate::Db::open_secondary));
    /// `None` for other handles.
    pub(super) secondary: Option<Mutex<secondary_tail::Tail>>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        if self.inner._lock.is_some() {
            // Cleared only when `inner` itself is dropped, just before its lock.
            *self.inner.closing.lock() = Some(open_handles::busy(
                &self.inner.dir,
                open_handles::Activity::Closing,
            ));
        }
        {
            let mut st = self.inner.state.lock();
            st.shutting_down = true;
            self.inner.work_cv.notify_all();
            self.inner.done_cv.notify_all();
        }
        for t in self.background.lock().drain(..) {
            let _ = t.join();
        }
    }
}
