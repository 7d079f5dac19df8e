//! A loopback TCP proxy a test controls, to cut or slow the link between two nodes.
//!
//! Route node A's traffic to node B through a proxy (start it in front of B's address and
//! give A the proxy's address with `bloomkv_cluster::Node::set_route` or `NodeConfig::routes`);
//! one proxy per ordered pair lets a test cut A→B while B→A still works. Connections are
//! those A opens, so "A→B" carries A's requests to B and B's answers to them.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! use std::time::Duration;
//! use bloomkv_cluster_testkit::proxy::{Link, Proxy};
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//!
//! // An echo server to stand for a node.
//! let echo = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let target = echo.local_addr()?;
//! tokio::spawn(async move {
//!     while let Ok((mut s, _)) = echo.accept().await {
//!         tokio::spawn(async move {
//!             let (mut r, mut w) = s.split();
//!             let _ = tokio::io::copy(&mut r, &mut w).await;
//!         });
//!     }
//! });
//! let proxy = Proxy::start(target).await?;
//! proxy.set(Link::Delay(Duration::from_millis(20)));
//! let mut c = tokio::net::TcpStream::connect(proxy.addr()).await?;
//! c.write_all(b"ping").await?;
//! let mut buf = [0u8; 4];
//! c.read_exact(&mut buf).await?;
//! assert_eq!(&buf, b"ping");
//! proxy.set(Link::Cut); // this connection is closed, new ones are refused
//! assert_eq!(c.read(&mut buf).await.unwrap_or(0), 0);
//! # Ok(()) }
//! ```

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// What the link does to traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Link {
    /// Forward at once.
    Pass,
    /// The link is down: open connections are closed, new ones are closed on accept.
    Cut,
    /// Packets vanish: open and new connections stay open but nothing is forwarded either
    /// way (the peer sees timeouts, not errors).
    Blackhole,
    /// Forward each chunk this long after it was read (in each direction).
    Delay(Duration),
    /// Connections are reset: open ones are aborted with a TCP RST (both sides see
    /// "connection reset", not an orderly close), new ones are reset on accept. A crashed
    /// peer's kernel, or a middlebox dropping state, does this.
    Reset,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Link(Link),
    Closed,
}

/// A running proxy. Dropping it closes the listener and every connection.
#[derive(Debug)]
pub struct Proxy {
    addr: SocketAddr,
    state: watch::Sender<State>,
}

impl Proxy {
    /// Starts a proxy on a free loopback port that forwards to `target`, in [`Link::Pass`].
    /// Must be called inside a tokio runtime.
    ///
    /// # Errors
    /// The listener could not be bound.
    pub async fn start(target: SocketAddr) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let (state, rx) = watch::channel(State::Link(Link::Pass));
        tokio::spawn(accept_loop(listener, target, rx));
        Ok(Proxy { addr, state })
    }

    /// The address to dial instead of the target.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Changes what the link does, for open connections too.
    pub fn set(&self, link: Link) {
        self.state.send_replace(State::Link(link));
    }

    /// What the link does now.
    pub fn link(&self) -> Link {
        match *self.state.borrow() {
            State::Link(l) => l,
            State::Closed => Link::Cut,
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.state.send_replace(State::Closed);
    }
}

async fn accept_loop(listener: TcpListener, target: SocketAddr, mut state: watch::Receiver<State>) {
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            changed = state.changed() => {
                if changed.is_err() || *state.borrow() == State::Closed {
                    return;
                }
                continue;
            }
        };
        let Ok((client, _)) = accepted else { continue };
        if *state.borrow() == State::Link(Link::Reset) {
            reset(client);
            continue;
        }
        if matches!(*state.borrow(), State::Link(Link::Cut) | State::Closed) {
            drop(client);
            continue;
        }
        let rx = state.clone();
        tokio::spawn(async move {
            let Ok(server) = TcpStream::connect(target).await else {
                return;
            };
            let _ = client.set_nodelay(true);
            let _ = server.set_nodelay(true);
            let (cr, cw) = client.into_split();
            let (sr, sw) = server.into_split();
            let up = pump(cr, sw, rx.clone());
            let down = pump(sr, cw, rx);
            tokio::pin!(up, down);
            // When one direction ends, the other may still carry the answer to what was
            // delivered (a request that was in flight when its client hung up still
            // reaches the server, as a delayed packet would): give it a while. A server
            // that closed (or died) is told to the client at once with a FIN, as the
            // server's kernel would: a client holding a pooled connection must not take
            // it for a live one and send a request into it for the whole linger.
            let (a, b) = tokio::select! {
                a = &mut up => (Some(a), tokio::time::timeout(LINGER, &mut down).await.ok()),
                b = &mut down => {
                    let b = match b {
                        Some(mut cw) => {
                            let _ = cw.shutdown().await;
                            Some(cw)
                        }
                        None => None,
                    };
                    (tokio::time::timeout(LINGER, &mut up).await.ok(), Some(b))
                }
            };
            drop((a, b));
        });
    }
}

/// Aborts a connection with a TCP RST (SO_LINGER 0, then close).
fn reset(stream: TcpStream) {
    let _ = stream.set_zero_linger();
    drop(stream);
}

/// How long a connection stays open after one direction ended.
const LINGER: Duration = Duration::from_secs(2);

/// Whether the state tells a pump to drop its connection.
fn closes(s: State) -> bool {
    matches!(s, State::Link(Link::Cut | Link::Reset) | State::Closed)
}

/// Moves bytes one way, honouring the link state. Returns (with the writing half, still
/// open) when the reader reaches its end and everything read was delivered after its
/// delay, when a write fails, or when the link is cut or reset (a reset aborts the
/// connection with an RST).
async fn pump(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    mut state: watch::Receiver<State>,
) -> Option<OwnedWriteHalf> {
    let (tx, mut rx) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    let mut reader_state = state.clone();
    let reader = async move {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = tokio::select! {
                r = from.read(&mut buf) => match r { Ok(0) | Err(_) => return, Ok(n) => n },
                c = reader_state.changed() => {
                    if c.is_err() || closes(*reader_state.borrow()) { return; }
                    continue;
                }
            };
            let due = match *reader_state.borrow() {
                State::Link(Link::Delay(d)) => Instant::now() + d,
                State::Link(Link::Blackhole) => continue,
                _ => Instant::now(),
            };
            if tx.send((due, buf[..n].to_vec())).is_err() {
                return;
            }
        }
    };
    let writer = async move {
        let mut queue: VecDeque<(Instant, Vec<u8>)> = VecDeque::new();
        let mut reader_done = false;
        loop {
            let now = *state.borrow();
            if now == State::Link(Link::Reset) {
                // Aborted with an RST, not closed: no FIN goes out first.
                let _ = to.as_ref().set_zero_linger();
                to.forget();
                return None;
            }
            if closes(now) {
                return None;
            }
            if reader_done && queue.is_empty() {
                return Some(to);
            }
            let next_due = queue.front().map(|(d, _)| *d);
            tokio::select! {
                item = rx.recv(), if !reader_done => match item {
                    Some(i) => queue.push_back(i),
                    None => reader_done = true,
                },
                () = async {
                    match next_due {
                        Some(d) => tokio::time::sleep_until(d).await,
                        None => std::future::pending().await,
                    }
                } => {
                    if let Some((_, data)) = queue.pop_front() {
                        if *state.borrow() == State::Link(Link::Blackhole) {
                            continue;
                        }
                        if to.write_all(&data).await.is_err() {
                            return None;
                        }
                    }
                }
                c = state.changed() => {
                    if c.is_err() { return None; }
                }
            }
        }
    };
    let ((), to) = tokio::join!(reader, writer);
    to
}
