//! A blocked connection waiting for its reply: an `await`, so it holds no I/O thread. It
//! answers nothing else meanwhile (Redis's semantics: requests sent meanwhile stay queued in
//! the read buffer), but it keeps reading, so a disconnect is seen at once and the waiter
//! cancelled: nothing of it stays in the registry, and it is never served afterwards.

use std::sync::Arc;

use bytes::BytesMut;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::Instant;

use super::{Cancel, Registry, Waiter};
use crate::resp::Reply;

/// How a wait ended.
#[derive(Debug)]
pub enum Woken {
    /// The reply to send: served, or the timeout's nil.
    Reply(Reply),
    /// The client left (or sent more than its query buffer may hold), or the server is
    /// shutting down: close the connection.
    Closed,
}

/// Waits until `w` is served, its timeout passes, its client disconnects or the server
/// shuts down. Bytes the client sends meanwhile are appended to `buf` (at most `max_buf`).
pub async fn wait(
    reg: &Registry,
    w: &Arc<Waiter>,
    sock: &mut TcpStream,
    buf: &mut BytesMut,
    max_buf: usize,
    shutdown: &mut watch::Receiver<bool>,
) -> Woken {
    let deadline = w.block().timeout.map(|t| Instant::now() + t);
    let mut timed_out = false;
    let mut closed = false;
    loop {
        // Registered before looking, so a change between the look and the await is seen.
        let changed = w.changed();
        if let Some(r) = w.take_served() {
            return Woken::Reply(r);
        }
        if timed_out || closed {
            match w.cancel(closed) {
                Cancel::Cancelled => {
                    reg.remove(w);
                    return if closed {
                        Woken::Closed
                    } else {
                        Woken::Reply(w.op().timeout_reply())
                    };
                }
                Cancel::Served(r) if !closed => return Woken::Reply(r),
                Cancel::Served(_) => return Woken::Closed,
                // A write set is serving it: its outcome decides (a release makes it
                // waiting again, then this loop cancels it).
                Cancel::Busy if closed => return Woken::Closed,
                Cancel::Busy => {}
            }
        }
        tokio::select! {
            _ = changed => {}
            _ = sleep_until(deadline), if deadline.is_some() && !timed_out => timed_out = true,
            r = sock.read_buf(buf), if !closed => match r {
                Ok(0) | Err(_) => closed = true,
                Ok(_) => closed = buf.len() > max_buf,
            },
            _ = shutdown.changed(), if !closed => closed = true,
        }
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// Gives up a wait whose connection failed before it began waiting.
pub fn abandon(reg: &Registry, w: &Waiter) {
    if let Cancel::Cancelled = w.cancel(true) {
        reg.remove(w);
    }
}
