//! Pub/sub on a connection: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH,
//! PUBSUB, RESP2's subscribed mode, and writing out the messages of its mailbox.

use std::collections::BTreeSet;
use std::sync::Arc;

use bytes::Bytes;

use super::{Conn, wrong_arity};
use crate::pubsub::Mailbox;
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
    /// True after MONITOR.
    pub(super) monitoring: bool,
}

/// Commands a RESP2 client may send while subscribed.
const ALLOWED_SUBSCRIBED: &[&str] = &[
    "subscribe",
    "psubscribe",
    "unsubscribe",
    "punsubscribe",
    "ping",
    "quit",
    "reset",
];

impl Conn {
    /// Channels and patterns this client subscribes to.
    fn sub_count(&self) -> i64 {
        (self.subs.channels.len() + self.subs.patterns.len()) as i64
    }

    /// Shows this client's subscription counts in CLIENT LIST.
    pub(super) fn publish_sub_counts(&self) {
        use std::sync::atomic::Ordering;
        self.entry
            .subscriptions
            .store(self.sub_count() as usize, Ordering::Relaxed);
        self.entry
            .pattern_subscriptions
            .store(self.subs.patterns.len(), Ordering::Relaxed);
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

    /// `SUBSCRIBE channel ...` / `PSUBSCRIBE pattern ...`: one confirmation per name, each
    /// with the client's subscription count.
    pub(super) fn subscribe(&mut self, a: &[Bytes], pattern: bool) -> Reply {
        let ps = &self.shared.pubsub;
        let mut out = Vec::with_capacity(a.len() - 1);
        for name in &a[1..] {
            let (set, kind) = if pattern {
                ps.psubscribe(name, &self.subs.mailbox);
                (&mut self.subs.patterns, "psubscribe")
            } else {
                ps.subscribe(name, &self.subs.mailbox);
                (&mut self.subs.channels, "subscribe")
            };
            set.insert(name.clone());
            out.push(Reply::Push(vec![
                Reply::bulk(kind),
                Reply::Bulk(name.clone()),
                Reply::Int(self.sub_count()),
            ]));
        }
        Reply::Seq(out)
    }

    /// `UNSUBSCRIBE [channel ...]` / `PUNSUBSCRIBE [pattern ...]`: without names, from all;
    /// one confirmation per name (a nil name when there was none).
    pub(super) fn unsubscribe(&mut self, a: &[Bytes], pattern: bool) -> Reply {
        let kind = if pattern {
            "punsubscribe"
        } else {
            "unsubscribe"
        };
        let names: Vec<Bytes> = if a.len() > 1 {
            a[1..].to_vec()
        } else if pattern {
            self.subs.patterns.iter().cloned().collect()
        } else {
            self.subs.channels.iter().cloned().collect()
        };
        if names.is_empty() {
            return Reply::Push(vec![
                Reply::bulk(kind),
                Reply::Nil,
                Reply::Int(self.sub_count()),
            ]);
        }
        let ps = &self.shared.pubsub;
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            if pattern {
                ps.punsubscribe(&name, &self.subs.mailbox);
                self.subs.patterns.remove(&name);
            } else {
                ps.unsubscribe(&name, &self.subs.mailbox);
                self.subs.channels.remove(&name);
            }
            out.push(Reply::Push(vec![
                Reply::bulk(kind),
                Reply::Bulk(name),
                Reply::Int(self.sub_count()),
            ]));
        }
        Reply::Seq(out)
    }

    /// Leaves every channel and pattern without a reply (RESET, disconnect).
    pub(super) fn unsubscribe_all(&mut self) {
        let ps = &self.shared.pubsub;
        for c in std::mem::take(&mut self.subs.channels) {
            ps.unsubscribe(&c, &self.subs.mailbox);
        }
        for p in std::mem::take(&mut self.subs.patterns) {
            ps.punsubscribe(&p, &self.subs.mailbox);
        }
        if std::mem::take(&mut self.subs.monitoring) {
            ps.unmonitor(&self.subs.mailbox);
        }
    }

    /// `PUBLISH channel message`: the number of messages handed out.
    pub(super) fn publish(&self, a: &[Bytes]) -> Reply {
        Reply::Int(self.shared.pubsub.publish(&a[1], &a[2]) as i64)
    }

    /// `PUBSUB CHANNELS [pattern] | NUMSUB [channel ...] | NUMPAT | HELP`
    pub(super) fn pubsub(&self, a: &[Bytes]) -> Reply {
        let sub = a[1].to_ascii_lowercase();
        let ps = &self.shared.pubsub;
        match sub.as_slice() {
            b"channels" if a.len() <= 3 => Reply::Array(
                ps.channels(a.get(2).map(|p| &p[..]))
                    .into_iter()
                    .map(Reply::Bulk)
                    .collect(),
            ),
            b"numsub" => {
                let mut out = Vec::with_capacity(2 * (a.len() - 2));
                for c in &a[2..] {
                    out.push(Reply::Bulk(c.clone()));
                    out.push(Reply::Int(ps.numsub(c) as i64));
                }
                Reply::Array(out)
            }
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
            b"channels" => {
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
