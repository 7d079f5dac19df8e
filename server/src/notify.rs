//! Keyspace notifications, as Redis 7.0 sends them (docs/SERVER.md, "Keyspace
//! notifications"): the classes `notify-keyspace-events` enables, and the events a write set
//! collects and publishes once it commits.
//!
//! A command names its event with one call ([`crate::store::Txn::notify`]); the write set
//! keeps it only if its class is enabled (one atomic load: nothing is built or allocated
//! while notifications are off, the default), drops it if the command is rolled back, and
//! hands the rest to the store's commit, which publishes each as Redis does: the event name
//! on `__keyspace@<db>__:<key>` (class `K`) and the key on `__keyevent@<db>__:<event>`
//! (class `E`), in the order the commands ran.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;

use crate::pubsub::PubSub;
use crate::store::keys::DbIndex;

/// Event classes, with Redis's bit values (`NOTIFY_*` in server.h).
pub mod class {
    /// `K`: publish on `__keyspace@<db>__:<key>`.
    pub const KEYSPACE: u32 = 1 << 0;
    /// `E`: publish on `__keyevent@<db>__:<event>`.
    pub const KEYEVENT: u32 = 1 << 1;
    /// `g`: DEL, EXPIRE, RENAME and the other type-independent commands.
    pub const GENERIC: u32 = 1 << 2;
    /// `$`: string commands.
    pub const STRING: u32 = 1 << 3;
    /// `l`: list commands.
    pub const LIST: u32 = 1 << 4;
    /// `s`: set commands.
    pub const SET: u32 = 1 << 5;
    /// `h`: hash commands.
    pub const HASH: u32 = 1 << 6;
    /// `z`: sorted set commands.
    pub const ZSET: u32 = 1 << 7;
    /// `x`: a key removed because its time to live ran out.
    pub const EXPIRED: u32 = 1 << 8;
    /// `e`: a key evicted for memory (never sent: this server evicts nothing).
    pub const EVICTED: u32 = 1 << 9;
    /// `t`: stream commands.
    pub const STREAM: u32 = 1 << 10;
    /// `m`: a read that found no key (accepted; not sent yet, see docs/SERVER.md).
    pub const KEY_MISS: u32 = 1 << 11;
    /// `d`: module events (accepted; this server has no modules).
    pub const MODULE: u32 = 1 << 13;
    /// `n`: a key created.
    pub const NEW: u32 = 1 << 14;
    /// `A`: every class of event but `m` and `n`, as Redis's `NOTIFY_ALL`.
    pub const ALL: u32 =
        GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM | MODULE;
}

/// Redis's CONFIG SET error for a character that names no class.
pub const BAD_FLAGS: &str = "CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";

/// The classes `flags` names (Redis's `keyspaceEventsStringToFlags`); `None` if a
/// character names none.
pub fn parse(flags: &[u8]) -> Option<u32> {
    flags.iter().try_fold(0, |acc, c| {
        let bit = match c {
            b'A' => class::ALL,
            b'g' => class::GENERIC,
            b'$' => class::STRING,
            b'l' => class::LIST,
            b's' => class::SET,
            b'h' => class::HASH,
            b'z' => class::ZSET,
            b'x' => class::EXPIRED,
            b'e' => class::EVICTED,
            b'K' => class::KEYSPACE,
            b'E' => class::KEYEVENT,
            b't' => class::STREAM,
            b'm' => class::KEY_MISS,
            b'd' => class::MODULE,
            b'n' => class::NEW,
            _ => return None,
        };
        Some(acc | bit)
    })
}

/// The string CONFIG GET shows for `flags` (Redis's `keyspaceEventsFlagsToString`): `A`
/// for the whole of [`class::ALL`], else its letters in Redis's order, then `K`, `E`, `m`.
/// As in Redis 7.0, `n` is not shown beside `A` (it stays set all the same).
pub fn format(flags: u32) -> String {
    let mut s = String::new();
    if flags & class::ALL == class::ALL {
        s.push('A');
    } else {
        for (bit, c) in [
            (class::GENERIC, 'g'),
            (class::STRING, '$'),
            (class::LIST, 'l'),
            (class::SET, 's'),
            (class::HASH, 'h'),
            (class::ZSET, 'z'),
            (class::EXPIRED, 'x'),
            (class::EVICTED, 'e'),
            (class::STREAM, 't'),
            (class::MODULE, 'd'),
            (class::NEW, 'n'),
        ] {
            if flags & bit != 0 {
                s.push(c);
            }
        }
    }
    for (bit, c) in [
        (class::KEYSPACE, 'K'),
        (class::KEYEVENT, 'E'),
        (class::KEY_MISS, 'm'),
    ] {
        if flags & bit != 0 {
            s.push(c);
        }
    }
    s
}

/// One event a write set collected: its name, and the key in the stored database `db` (the
/// SELECT index is found when it is published: they differ after SWAPDB).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The event's name (`set`, `lpush`, `del`...).
    pub name: &'static str,
    /// The stored database of the key.
    pub db: DbIndex,
    /// The key.
    pub key: Vec<u8>,
}

/// The enabled classes and where events go.
#[derive(Debug, Default)]
pub struct Notifier {
    /// The classes enabled, as [`parse`] returns them (0: off).
    flags: AtomicU32,
    /// The server's pub/sub, once a server runs on the store (a bare store, in unit
    /// tests, publishes nothing).
    sink: OnceLock<Arc<PubSub>>,
}

impl Notifier {
    /// Makes events go to `pubsub` (the first call wins: a store serves one server).
    pub fn attach(&self, pubsub: Arc<PubSub>) {
        let _ = self.sink.set(pubsub);
    }

    /// The classes enabled.
    pub fn flags(&self) -> u32 {
        self.flags.load(Ordering::Relaxed)
    }

    /// Enables exactly the classes in `flags` (CONFIG SET notify-keyspace-events).
    pub fn set_flags(&self, flags: u32) {
        self.flags.store(flags, Ordering::Relaxed);
    }

    /// True when an event of class `class` would be sent: the class is on, and so is one of
    /// the two channels (Redis sends nothing with neither `K` nor `E`). The one check a
    /// command pays while notifications are off.
    #[inline]
    pub fn wants(&self, class: u32) -> bool {
        let f = self.flags.load(Ordering::Relaxed);
        f & class != 0 && f & (class::KEYSPACE | class::KEYEVENT) != 0
    }

    /// Publishes `events`, in order, each on the channels enabled; `index_of` turns a
    /// stored database into the SELECT index channels name.
    pub fn publish(&self, events: &[Event], index_of: impl Fn(DbIndex) -> DbIndex) {
        let Some(pubsub) = self.sink.get() else {
            return;
        };
        let flags = self.flags();
        for e in events {
            let db = index_of(e.db);
            if flags & class::KEYSPACE != 0 {
                let mut channel = format!("__keyspace@{db}__:").into_bytes();
                channel.extend_from_slice(&e.key);
                pubsub.publish(
                    &Bytes::from(channel),
                    &Bytes::from_static(e.name.as_bytes()),
                );
            }
            if flags & class::KEYEVENT != 0 {
                let channel = Bytes::from(format!("__keyevent@{db}__:{}", e.name));
                pubsub.publish(&channel, &Bytes::copy_from_slice(&e.key));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_format_as_redis() {
        // Pairs checked against redis-server 7.0.15's CONFIG SET / CONFIG GET.
        for (given, shown) in [
            ("KEA", "AKE"),
            ("Kx", "xK"),
            ("gE", "gE"),
            ("", ""),
            ("A$", "A"),
            ("Aznm", "Am"),
            ("g$lshzxetd", "A"),
            ("KEAm", "AKEm"),
            ("En", "nE"),
        ] {
            let f = parse(given.as_bytes()).expect(given);
            assert_eq!(format(f), shown, "{given}");
        }
        assert_eq!(parse(b"Q"), None);
        assert_eq!(parse(b"KEq"), None);
        assert_ne!(parse(b"An").unwrap() & class::NEW, 0);
    }

    #[test]
    fn wants_needs_a_channel() {
        let n = Notifier::default();
        assert!(!n.wants(class::STRING));
        n.set_flags(parse(b"$").unwrap());
        assert!(!n.wants(class::STRING), "no K nor E: nothing is sent");
        n.set_flags(parse(b"K$").unwrap());
        assert!(n.wants(class::STRING));
        assert!(!n.wants(class::LIST));
    }
}
