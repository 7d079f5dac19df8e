//! Pub/sub: who subscribes to which channels, patterns and shard channels, each subscriber's mailbox of
//! messages not yet written to its socket, and the limits on slow subscribers
//! (docs/SERVER.md, "Pub/sub").
//!
//! PUBLISH hands a message to the mailbox of every subscriber of the channel and of every
//! matching pattern and wakes its connection (SPUBLISH: of the shard channel; shard channels
//! are a namespace of their own, which patterns do not match), which writes the message out even while the
//! client sends nothing. A subscriber that does not read its messages has them queue up: past
//! [`HARD_LIMIT`] queued bytes, or above [`SOFT_LIMIT`] for [`SOFT_SECONDS`], it is cut off,
//! as Redis's `client-output-buffer-limit pubsub 32mb 8mb 60` does.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use parking_lot::{Mutex, RwLock};
use tokio::sync::Notify;

use crate::resp::Reply;

/// Queued bytes past which a subscriber is disconnected at once (Redis: 32 MB).
pub const HARD_LIMIT: usize = 32 << 20;
/// Queued bytes a subscriber may stay above for at most [`SOFT_SECONDS`] (Redis: 8 MB).
pub const SOFT_LIMIT: usize = 8 << 20;
/// See [`SOFT_LIMIT`] (Redis: 60 s).
pub const SOFT_SECONDS: u64 = 60;

/// A message for one subscriber.
#[derive(Clone, Debug, PartialEq)]
#[expect(
    clippy::enum_variant_names,
    reason = "named after the frames they become: `message` and `pmessage`"
)]
pub enum Message {
    /// Published to a channel the subscriber subscribed to.
    Message {
        /// The channel.
        channel: Bytes,
        /// What was published.
        payload: Bytes,
    },
    /// A command some client sent, as MONITOR shows it (the line without its `+`).
    Monitor(String),
    /// Published with SPUBLISH to a shard channel the subscriber subscribed to.
    SMessage {
        /// The shard channel.
        channel: Bytes,
        /// What was published.
        payload: Bytes,
    },
    /// Published to a channel matching a pattern the subscriber subscribed to.
    PMessage {
        /// The pattern.
        pattern: Bytes,
        /// The channel.
        channel: Bytes,
        /// What was published.
        payload: Bytes,
    },
}

impl Message {
    /// Bytes it holds, as counted against the limits (with a little for the framing).
    pub fn size(&self) -> usize {
        match self {
            Message::Message { channel, payload } | Message::SMessage { channel, payload } => {
                32 + channel.len() + payload.len()
            }
            Message::Monitor(line) => 16 + line.len(),
            Message::PMessage {
                pattern,
                channel,
                payload,
            } => 48 + pattern.len() + channel.len() + payload.len(),
        }
    }

    /// The reply frame: `message channel payload`, `smessage channel payload` or `pmessage
    /// pattern channel payload`, a push in RESP3 and an array in RESP2; a MONITOR line is a
    /// status reply in both.
    pub fn reply(&self) -> Reply {
        match self {
            Message::Message { channel, payload } => Reply::Push(vec![
                Reply::bulk("message"),
                Reply::Bulk(channel.clone()),
                Reply::Bulk(payload.clone()),
            ]),
            Message::Monitor(line) => Reply::Status(line.clone()),
            Message::SMessage { channel, payload } => Reply::Push(vec![
                Reply::bulk("smessage"),
                Reply::Bulk(channel.clone()),
                Reply::Bulk(payload.clone()),
            ]),
            Message::PMessage {
                pattern,
                channel,
                payload,
            } => Reply::Push(vec![
                Reply::bulk("pmessage"),
                Reply::Bulk(pattern.clone()),
                Reply::Bulk(channel.clone()),
                Reply::Bulk(payload.clone()),
            ]),
        }
    }
}

#[derive(Debug, Default)]
struct Queue {
    msgs: VecDeque<Message>,
    bytes: usize,
    /// Since when the queue has been above the soft limit.
    soft_since: Option<Instant>,
}

/// The messages waiting for one connection, and its wake-ups.
#[derive(Debug, Default)]
pub struct Mailbox {
    queue: Mutex<Queue>,
    ready: Notify,
    kill: Notify,
    killed: AtomicBool,
}

impl Mailbox {
    /// An empty mailbox.
    pub fn new() -> Arc<Mailbox> {
        Arc::new(Mailbox::default())
    }

    /// Queues `m` and wakes the connection; past the limits, drops everything queued and
    /// marks the subscriber to be disconnected instead.
    pub fn push(&self, m: Message) {
        if self.is_killed() {
            return;
        }
        let mut q = self.queue.lock();
        q.bytes += m.size();
        q.msgs.push_back(m);
        let soft_expired = if q.bytes > SOFT_LIMIT {
            let since = *q.soft_since.get_or_insert_with(Instant::now);
            since.elapsed() >= Duration::from_secs(SOFT_SECONDS)
        } else {
            false
        };
        if q.bytes > HARD_LIMIT || soft_expired {
            q.msgs.clear();
            q.bytes = 0;
            drop(q);
            self.killed.store(true, Ordering::Release);
            self.kill.notify_one();
            return;
        }
        drop(q);
        self.ready.notify_one();
    }

    /// Takes queued messages off the front, about `max_bytes` of them (at least one).
    pub fn take(&self, max_bytes: usize) -> Vec<Message> {
        let mut q = self.queue.lock();
        let mut out = Vec::new();
        let mut taken = 0;
        while let Some(m) = q.msgs.front() {
            let n = m.size();
            if !out.is_empty() && taken + n > max_bytes {
                break;
            }
            taken += n;
            if let Some(m) = q.msgs.pop_front() {
                out.push(m);
            }
        }
        q.bytes -= taken;
        if q.bytes <= SOFT_LIMIT {
            q.soft_since = None;
        }
        out
    }

    /// True when messages wait.
    pub fn has_messages(&self) -> bool {
        !self.queue.lock().msgs.is_empty()
    }

    /// Waits until a message may have arrived.
    pub async fn ready(&self) {
        self.ready.notified().await;
    }

    /// True once the subscriber passed the limits.
    pub fn is_killed(&self) -> bool {
        self.killed.load(Ordering::Acquire)
    }

    /// Waits until the subscriber passes the limits.
    pub async fn killed(&self) {
        if !self.is_killed() {
            self.kill.notified().await;
        }
    }
}

/// What a subscription names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A channel (SUBSCRIBE).
    Channel,
    /// A pattern of channels (PSUBSCRIBE).
    Pattern,
    /// A shard channel (SSUBSCRIBE).
    Shard,
}

/// Subscribers by channel, by pattern and by shard channel.
#[derive(Debug, Default)]
struct Registry {
    channels: HashMap<Bytes, Vec<Arc<Mailbox>>>,
    patterns: HashMap<Bytes, Vec<Arc<Mailbox>>>,
    shard_channels: HashMap<Bytes, Vec<Arc<Mailbox>>>,
}

impl Registry {
    fn of(&mut self, kind: Kind) -> &mut HashMap<Bytes, Vec<Arc<Mailbox>>> {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard => &mut self.shard_channels,
        }
    }

    fn channels_of(&self, shard: bool) -> &HashMap<Bytes, Vec<Arc<Mailbox>>> {
        if shard {
            &self.shard_channels
        } else {
            &self.channels
        }
    }
}

/// The server's pub/sub registry.
#[derive(Debug, Default)]
pub struct PubSub {
    inner: RwLock<Registry>,
    /// The mailboxes of MONITOR clients.
    monitors: RwLock<Vec<Arc<Mailbox>>>,
    /// `monitors.len()`, read without the lock after every command.
    monitor_count: AtomicUsize,
}

fn add(map: &mut HashMap<Bytes, Vec<Arc<Mailbox>>>, name: &Bytes, mb: &Arc<Mailbox>) {
    let list = map.entry(name.clone()).or_default();
    if !list.iter().any(|m| Arc::ptr_eq(m, mb)) {
        list.push(Arc::clone(mb));
    }
}

fn remove(map: &mut HashMap<Bytes, Vec<Arc<Mailbox>>>, name: &[u8], mb: &Arc<Mailbox>) {
    if let Some(list) = map.get_mut(name) {
        list.retain(|m| !Arc::ptr_eq(m, mb));
        if list.is_empty() {
            map.remove(name);
        }
    }
}

impl PubSub {
    /// Makes `mb` receive every command clients send (MONITOR).
    pub fn monitor(&self, mb: &Arc<Mailbox>) {
        let mut m = self.monitors.write();
        if !m.iter().any(|x| Arc::ptr_eq(x, mb)) {
            m.push(Arc::clone(mb));
        }
        self.monitor_count.store(m.len(), Ordering::Release);
    }

    /// Stops sending commands to `mb`.
    pub fn unmonitor(&self, mb: &Arc<Mailbox>) {
        let mut m = self.monitors.write();
        m.retain(|x| !Arc::ptr_eq(x, mb));
        self.monitor_count.store(m.len(), Ordering::Release);
    }

    /// True while some client monitors: the one check every command pays.
    pub fn has_monitors(&self) -> bool {
        self.monitor_count.load(Ordering::Acquire) > 0
    }

    /// Hands a MONITOR line to every monitoring client.
    pub fn feed_monitors(&self, line: &str) {
        for mb in self.monitors.read().iter() {
            mb.push(Message::Monitor(line.to_string()));
        }
    }

    /// Subscribes `mb` to the channel, pattern or shard channel `name`.
    pub fn subscribe(&self, kind: Kind, name: &Bytes, mb: &Arc<Mailbox>) {
        add(self.inner.write().of(kind), name, mb);
    }

    /// Unsubscribes `mb` from the channel, pattern or shard channel `name`.
    pub fn unsubscribe(&self, kind: Kind, name: &[u8], mb: &Arc<Mailbox>) {
        remove(self.inner.write().of(kind), name, mb);
    }

    /// Hands `payload` to every subscriber of shard channel `channel`; returns how many got
    /// it (SPUBLISH).
    pub fn spublish(&self, channel: &Bytes, payload: &Bytes) -> usize {
        let reg = self.inner.read();
        let Some(list) = reg.shard_channels.get(channel) else {
            return 0;
        };
        for mb in list {
            mb.push(Message::SMessage {
                channel: channel.clone(),
                payload: payload.clone(),
            });
        }
        list.len()
    }

    /// Hands `payload` to every subscriber of `channel` and of every pattern matching it;
    /// returns how many messages went out (a client subscribed to the channel and to two
    /// matching patterns gets three, as in Redis).
    pub fn publish(&self, channel: &Bytes, payload: &Bytes) -> usize {
        let reg = self.inner.read();
        let mut n = 0;
        if let Some(list) = reg.channels.get(channel) {
            for mb in list {
                mb.push(Message::Message {
                    channel: channel.clone(),
                    payload: payload.clone(),
                });
                n += 1;
            }
        }
        for (pattern, list) in &reg.patterns {
            if !crate::glob::matches(pattern, channel) {
                continue;
            }
            for mb in list {
                mb.push(Message::PMessage {
                    pattern: pattern.clone(),
                    channel: channel.clone(),
                    payload: payload.clone(),
                });
                n += 1;
            }
        }
        n
    }

    /// The channels (`shard`: shard channels) with subscribers, those matching `pattern` if
    /// given (PUBSUB CHANNELS, SHARDCHANNELS).
    pub fn channels(&self, shard: bool, pattern: Option<&[u8]>) -> Vec<Bytes> {
        let reg = self.inner.read();
        let mut out: Vec<Bytes> = reg
            .channels_of(shard)
            .keys()
            .filter(|c| pattern.is_none_or(|p| crate::glob::matches(p, c)))
            .cloned()
            .collect();
        out.sort();
        out
    }

    /// Subscribers of `channel` (`shard`: of the shard channel) (PUBSUB NUMSUB, SHARDNUMSUB).
    pub fn numsub(&self, shard: bool, channel: &[u8]) -> usize {
        self.inner
            .read()
            .channels_of(shard)
            .get(channel)
            .map_or(0, Vec::len)
    }

    /// Patterns with subscribers (PUBSUB NUMPAT).
    pub fn numpat(&self) -> usize {
        self.inner.read().patterns.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(n: usize) -> Message {
        Message::Message {
            channel: Bytes::from_static(b"c"),
            payload: Bytes::from(vec![0u8; n]),
        }
    }

    #[test]
    fn publish_reaches_channels_and_patterns() {
        let ps = PubSub::default();
        let (a, b) = (Mailbox::new(), Mailbox::new());
        let news = Bytes::from_static(b"news.tech");
        ps.subscribe(Kind::Channel, &news, &a);
        ps.subscribe(Kind::Channel, &news, &a);
        ps.subscribe(Kind::Pattern, &Bytes::from_static(b"news.*"), &a);
        ps.subscribe(Kind::Pattern, &Bytes::from_static(b"n*"), &b);
        ps.subscribe(Kind::Shard, &news, &b);
        assert_eq!(ps.publish(&news, &Bytes::from_static(b"hi")), 3);
        assert_eq!(a.take(usize::MAX).len(), 2);
        assert_eq!(
            b.take(usize::MAX),
            vec![Message::PMessage {
                pattern: Bytes::from_static(b"n*"),
                channel: news.clone(),
                payload: Bytes::from_static(b"hi"),
            }]
        );
        assert_eq!(ps.channels(false, None), vec![news.clone()]);
        assert!(ps.channels(false, Some(b"x*")).is_empty());
        assert_eq!((ps.numsub(false, b"news.tech"), ps.numpat()), (1, 2));
        // A shard channel is its own namespace: SPUBLISH reaches only its subscribers.
        assert_eq!(ps.spublish(&news, &Bytes::from_static(b"s")), 1);
        assert_eq!(
            b.take(usize::MAX),
            vec![Message::SMessage {
                channel: news.clone(),
                payload: Bytes::from_static(b"s"),
            }]
        );
        assert!(a.take(usize::MAX).is_empty());
        assert_eq!(ps.channels(true, None), vec![news.clone()]);
        assert_eq!(ps.numsub(true, b"news.tech"), 1);
        ps.unsubscribe(Kind::Channel, b"news.tech", &a);
        ps.unsubscribe(Kind::Pattern, b"news.*", &a);
        ps.unsubscribe(Kind::Pattern, b"n*", &b);
        ps.unsubscribe(Kind::Shard, b"news.tech", &b);
        assert_eq!(ps.publish(&news, &Bytes::new()), 0);
        assert_eq!(ps.spublish(&news, &Bytes::new()), 0);
        assert!(ps.channels(false, None).is_empty());
        assert!(ps.channels(true, None).is_empty());
    }

    #[test]
    fn a_slow_subscriber_passes_the_hard_limit() {
        let mb = Mailbox::new();
        for _ in 0..31 {
            mb.push(msg(1 << 20));
        }
        assert!(!mb.is_killed());
        assert_eq!(mb.take(4 << 20).len(), 3, "take stops at max_bytes");
        mb.push(msg(4 << 20));
        mb.push(msg(2 << 20));
        assert!(mb.is_killed());
        assert!(!mb.has_messages(), "its messages are dropped");
        mb.push(msg(1));
        assert!(!mb.has_messages());
    }
}
