//! Pub/sub on a connection: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, the
//! sharded SSUBSCRIBE, SUNSUBSCRIBE and SPUBLISH, PUBSUB, RESP2's subscribed mode, and
//! writing out the messages of its mailbox.

use std::collections::BTreeSet;
use std::sync::Arc;

use bytes::Bytes;

use super::{Conn, wrong_arity};
use crate::pubsub::{Kind, Mailbox};
use crate::resp::Reply;

/// Message bytes taken from the mailbox per socket write: what sits outside the limits'
/// count (in the connection's write buffer) stays about this small.
pub(super) const DELIVER_CHUNK: usize = 1 << 20;

/// A connection's subscriptions and mailbox.
#[derive(Debug, Default)]
pub(super) struct Subscriptions {
    pub(super) mailbox: Arc<Mailbox>,
    channels: BTreeSet<Bytes>,
    patterns: BTreeSet<Bytes>,
    shard_channels: BTreeSet<Bytes>,
    /// True after MONITOR.
    pub(super) monitoring: bool,
}

/// Commands a RESP2 client may send while subscribed.
const ALLOWED_SUBSCRIBED: &[&str] = &[
    "subscribe",
    "psubscribe",
    "unsubscribe",
    "punsubscribe",
    "ssubscribe",
    "sunsubscribe",
    "ping",
    "quit",
    "reset",
];

impl Subscriptions {
    fn of(&mut self, kind: Kind) -> &mut BTreeSet<Bytes> {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard => &mut self.shard_channels,
        }
    }

    /// The count a (un)subscription of `kind` reports: channels and patterns together, shard
    /// channels on their own (as Redis 7 counts them).
    fn count(&self, kind: Kind) -> i64 {
        match kind {
            Kind::Channel | Kind::Pattern => (self.channels.len() + self.patterns.len()) as i64,
            Kind::Shard => self.shard_channels.len() as i64,
        }
    }
}

/// The frame names of a subscription and an unsubscription of `kind`.
fn frames(kind: Kind) -> (&'static str, &'static str) {
    match kind {
        Kind::Channel => ("subscribe", "unsubscribe"),
        Kind::Pattern => ("psubscribe", "punsubscribe"),
        Kind::Shard => ("ssubscribe", "sunsubscribe"),
    }
}

impl Conn {
    /// Channels, patterns and shard channels this client subscribes to.
    fn sub_count(&self) -> i64 {
        (self.subs.channels.len() + self.subs.patterns.len() + self.subs.shard_channels.len())
            as i64
    }

    /// Shows this client's subscription counts in CLIENT LIST.
    pub(super) fn publish_sub_counts(&self) {
        use std::sync::atomic::Ordering;
        self.entry
            .subscriptions
            .store(self.subs.channels.len(), Ordering::Relaxed);
        self.entry
            .pattern_subscriptions
            .store(self.subs.patterns.len(), Ordering::Relaxed);
        self.entry
            .shard_subscriptions
            .store(self.subs.shard_channels.len(), Ordering::Relaxed);
    }

    /// True while subscribed to anything.
    pub(super) fn subscribed(&self) -> bool {
        self.sub_count() > 0
    }

    /// True in RESP2's subscribed mode, where only [`ALLOWED_SUBSCRIBED`] may run.
    pub(super) fn resp2_subscribed(&self) -> bool {
        self.proto == 2 && self.sub_count() > 0
    }

    /// Redis's refusal of `name` in RESP2's subscribed mode, if it is refused.
    pub(super) fn refused_while_subscribed(&self, name: &str) -> Option<Reply> {
        (self.resp2_subscribed() && !ALLOWED_SUBSCRIBED.contains(&name)).then(|| {
            Reply::err(format!(
                "Can't execute '{name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
            ))
        })
    }

    /// PING: in RESP2's subscribed mode an array `pong <message or "">`.
    pub(super) fn ping(&self, a: &[Bytes]) -> Reply {
        if self.resp2_subscribed() {
            return Reply::Array(vec![
                Reply::bulk("pong"),
                Reply::Bulk(a.get(1).cloned().unwrap_or_default()),
            ]);
        }
        match a.len() {
            1 => Reply::Status("PONG".into()),
            2 => Reply::Bulk(a[1].clone()),
            _ => wrong_arity("ping"),
        }
    }

    /// `SUBSCRIBE channel ...`, `PSUBSCRIBE pattern ...`, `SSUBSCRIBE shardchannel ...`:
    /// one confirmation per name, each with the client's count of that kind.
    pub(super) fn subscribe(&mut self, a: &[Bytes], kind: Kind) -> Reply {
        let ps = &self.shared.pubsub;
        let (frame, _) = frames(kind);
        let mut out = Vec::with_capacity(a.len() - 1);
        for name in &a[1..] {
            ps.subscribe(kind, name, &self.subs.mailbox);
            self.subs.of(kind).insert(name.clone());
            out.push(Reply::Push(vec![
                Reply::bulk(frame),
                Reply::Bulk(name.clone()),
                Reply::Int(self.subs.count(kind)),
            ]));
        }
        Reply::Seq(out)
    }

    /// `UNSUBSCRIBE [channel ...]`, `PUNSUBSCRIBE [pattern ...]`, `SUNSUBSCRIBE
    /// [shardchannel ...]`: without names, from all of that kind; one confirmation per name
    /// (a nil name when there was none).
    pub(super) fn unsubscribe(&mut self, a: &[Bytes], kind: Kind) -> Reply {
        let (_, frame) = frames(kind);
        let names: Vec<Bytes> = if a.len() > 1 {
            a[1..].to_vec()
        } else {
            self.subs.of(kind).iter().cloned().collect()
        };
        if names.is_empty() {
            return Reply::Push(vec![
                Reply::bulk(frame),
                Reply::Nil,
                Reply::Int(self.subs.count(kind)),
            ]);
        }
        let ps = &self.shared.pubsub;
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            ps.unsubscribe(kind, &name, &self.subs.mailbox);
            self.subs.of(kind).remove(&name);
            out.push(Reply::Push(vec![
                Reply::bulk(frame),
                Reply::Bulk(name),
                Reply::Int(self.subs.count(kind)),
            ]));
        }
        Reply::Seq(out)
    }

    /// Leaves every channel, pattern and shard channel without a reply (RESET, disconnect).
    pub(super) fn unsubscribe_all(&mut self) {
        let ps = &self.shared.pubsub;
        for kind in [Kind::Channel, Kind::Pattern, Kind::Shard] {
            for name in std::mem::take(self.subs.of(kind)) {
                ps.unsubscribe(kind, &name, &self.subs.mailbox);
            }
        }
        if std::mem::take(&mut self.subs.monitoring) {
            ps.unmonitor(&self.subs.mailbox);
        }
    }

    /// `PUBLISH channel message`: the number of messages handed out.
    pub(super) fn publish(&self, a: &[Bytes]) -> Reply {
        Reply::Int(self.shared.pubsub.publish(&a[1], &a[2]) as i64)
    }

    /// `SPUBLISH shardchannel message`: the number of subscribers that got it.
    pub(super) fn spublish(&self, a: &[Bytes]) -> Reply {
        Reply::Int(self.shared.pubsub.spublish(&a[1], &a[2]) as i64)
    }

    /// `PUBSUB CHANNELS [pattern] | NUMSUB [channel ...] | NUMPAT | SHARDCHANNELS [pattern] |
    /// SHARDNUMSUB [shardchannel ...] | HELP`
    pub(super) fn pubsub(&self, a: &[Bytes]) -> Reply {
        let sub = a[1].to_ascii_lowercase();
        let ps = &self.shared.pubsub;
        let channels = |shard: bool| {
            Reply::Array(
                ps.channels(shard, a.get(2).map(|p| &p[..]))
                    .into_iter()
                    .map(Reply::Bulk)
                    .collect(),
            )
        };
        let numsub = |shard: bool| {
            let mut out = Vec::with_capacity(2 * (a.len() - 2));
            for c in &a[2..] {
                out.push(Reply::Bulk(c.clone()));
                out.push(Reply::Int(ps.numsub(shard, c) as i64));
            }
            Reply::Array(out)
        };
        match sub.as_slice() {
            b"channels" if a.len() <= 3 => channels(false),
            b"shardchannels" if a.len() <= 3 => channels(true),
            b"numsub" => numsub(false),
            b"shardnumsub" => numsub(true),
            b"numpat" if a.len() == 2 => Reply::Int(ps.numpat() as i64),
            b"help" if a.len() == 2 => Reply::Array(
                [
                    "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                    "CHANNELS [<pattern>]",
                    "    Return the currently active channels matching a <pattern> (default: '*').",
                    "NUMPAT",
                    "    Return number of subscriptions to patterns.",
                    "NUMSUB [<channel> ...]",
                    "    Return the number of subscribers for the specified channels, excluding",
                    "    pattern subscriptions(default: no channels).",
                    "SHARDCHANNELS [<pattern>]",
                    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
                    "SHARDNUMSUB [<shardchannel> ...]",
                    "    Return the number of subscribers for the specified shard level channel(s)",
                    "HELP",
                    "    Print this help.",
                ]
                .into_iter()
                .map(|l| Reply::Status(l.into()))
                .collect(),
            ),
            // NUMPAT and HELP have their own arity in Redis's command table; CHANNELS takes
            // any number there and refuses extra arguments itself.
            b"numpat" | b"help" => {
                wrong_arity(&format!("pubsub|{}", String::from_utf8_lossy(&sub)))
            }
            b"channels" | b"shardchannels" => {
                let name: String = String::from_utf8_lossy(&a[1]).chars().take(128).collect();
                Reply::err(format!(
                    "unknown subcommand or wrong number of arguments for '{name}'. Try PUBSUB HELP."
                ))
            }
            _ => {
                let name: String = String::from_utf8_lossy(&a[1]).chars().take(128).collect();
                Reply::err(format!("unknown subcommand '{name}'. Try PUBSUB HELP."))
            }
        }
    }

    /// Encodes up to [`DELIVER_CHUNK`] bytes of queued messages into `out`; returns whether
    /// more wait.
    pub(super) fn deliver(&self, out: &mut Vec<u8>) -> bool {
        for m in self.subs.mailbox.take(DELIVER_CHUNK) {
            m.reply().encode(self.proto, out);
        }
        self.subs.mailbox.has_messages()
    }
}
