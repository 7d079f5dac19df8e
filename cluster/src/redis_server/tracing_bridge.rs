//! The node's `tracing` events written to its log in Redis's format.
//!
//! The replication layer's own events (targets `bloomkv_cluster::*`: elections, leader
//! changes, peers lost and back, snapshots, membership, purges, slow appends) are the
//! operator's view: info at `notice`, warnings and errors at `warning`, debug at
//! `verbose`. openraft's events are detail for chasing a problem: its errors and warnings
//! at `verbose` (under faults it warns about every timed-out RPC), its info at `debug`.
//! Spans and finer events are never built.

use std::fmt::Write as _;

use bloomkv_server::log::{self, Level};
use tracing::field::{Field, Visit};
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber, span};

/// The `tracing` subscriber installed by [`super::run`].
pub(crate) struct Bridge;

fn level_of(meta: &Metadata<'_>) -> Option<Level> {
    if meta.target().starts_with("bloomkv_cluster") {
        return Some(match *meta.level() {
            tracing::Level::ERROR | tracing::Level::WARN => Level::Warning,
            tracing::Level::INFO => Level::Notice,
            tracing::Level::DEBUG => Level::Verbose,
            tracing::Level::TRACE => Level::Debug,
        });
    }
    match *meta.level() {
        tracing::Level::ERROR | tracing::Level::WARN => Some(Level::Verbose),
        tracing::Level::INFO => Some(Level::Debug),
        _ => None,
    }
}

/// The event's message first, then its other fields as `name=value`.
#[derive(Default)]
struct Text {
    message: String,
    fields: String,
}

impl Visit for Text {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let _ = write!(self.fields, " {}={value}", field.name());
        }
    }
}

impl Subscriber for Bridge {
    fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
        if meta.is_event() && level_of(meta).is_some() {
            // Asked per event: `CONFIG SET loglevel` can turn these on and off.
            Interest::sometimes()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        meta.is_event() && level_of(meta).is_some_and(log::enabled)
    }

    fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
        span::Id::from_u64(1)
    }

    fn record(&self, _: &span::Id, _: &span::Record<'_>) {}

    fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}

    fn event(&self, event: &Event<'_>) {
        let Some(level) = level_of(event.metadata()) else {
            return;
        };
        let mut text = Text::default();
        event.record(&mut text);
        let target = event.metadata().target();
        if target.starts_with("bloomkv_cluster") {
            log::log(level, &format!("{}{}", text.message, text.fields));
        } else {
            log::log(
                level,
                &format!("raft {target}: {}{}", text.message, text.fields),
            );
        }
    }

    fn enter(&self, _: &span::Id) {}

    fn exit(&self, _: &span::Id) {}
}
