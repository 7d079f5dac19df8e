//! The consumer-group commands: XGROUP, XREADGROUP (with BLOCK, served by XADD as blocking
//! pops are), XACK, XPENDING, XCLAIM and XAUTOCLAIM, as Redis 7 answers them: their
//! parsing, replies, error texts and events, over [`groups`](super::groups)' records and
//! `pel`'s delivering, acknowledging and claiming.
//!
//! Delivery times are the command's time (`Txn::now_ms`), so in cluster mode every node
//! records the same PEL.

use bytes::Bytes;

use super::super::blocking::{Op, Outcome};
use super::super::{NOT_INT, parse_i64};
use super::groups::{Group, Groups, Pending, Session, UNKNOWN_READ};
use super::pel::{
    AutoClaimed, Claim, Retries, ack, autoclaim, claim, deliver_history, deliver_new,
    stream_and_group,
};
use super::store::{Entry, Id, get_stream, new_stream, store_stream};
use super::{
    entries_reply, entry_reply, fmt_id, found_or_block, parse_block_ms, parse_bound, parse_id,
    xread_reply,
};
use crate::notify::class;
use crate::resp::Reply;
use crate::store::meta::StreamMeta;
use crate::store::{Meta, R, Txn};

const KEY_NEEDED: &str = "The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.";

fn s(b: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(b)
}

/// `NOGROUP No such key 'k' or consumer group 'g'`, as XPENDING, XCLAIM and XAUTOCLAIM say it.
fn no_key_or_group(key: &[u8], group: &[u8]) -> Reply {
    Reply::Error(format!(
        "NOGROUP No such key '{}' or consumer group '{}'",
        s(key),
        s(group)
    ))
}

/// `NOGROUP No such consumer group 'g' for key name 'k'`, as XGROUP and XINFO say it.
pub(super) fn no_group(key: &[u8], group: &[u8]) -> Reply {
    Reply::Error(format!(
        "NOGROUP No such consumer group '{}' for key name '{}'",
        s(group),
        s(key)
    ))
}

fn syntax() -> Reply {
    Reply::err("syntax error")
}

fn not_int() -> Reply {
    Reply::err(NOT_INT)
}

/// A strict ID (no `-`/`+`, a missing sequence is 0), as XGROUP CREATE, XACK and XCLAIM
/// parse them.
fn strict_id(b: &[u8]) -> Result<Id, Reply> {
    parse_id(b, 0, false)
}

const XGROUP_HELP: &[&str] = &[
    "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
    "HELP",
    "    Prints this help.",
];

/// The error for a known container subcommand with the wrong number of arguments, or an
/// unknown one.
pub(super) fn subcommand_error(cmd: &str, sub: &[u8], known: bool) -> Reply {
    if known {
        Reply::err(format!(
            "wrong number of arguments for '{}|{}' command",
            cmd.to_ascii_lowercase(),
            s(sub).to_ascii_lowercase()
        ))
    } else {
        Reply::err(format!("unknown subcommand '{}'. Try {cmd} HELP.", s(sub)))
    }
}

/// Redis's error for options a subcommand does not take.
fn bad_options(sub: &[u8]) -> Reply {
    Reply::err(format!(
        "unknown subcommand or wrong number of arguments for '{}'. Try XGROUP HELP.",
        s(sub)
    ))
}

/// Parses ENTRIESREAD's value: a count, or -1 for unknown.
fn entries_read_arg(b: &[u8]) -> Result<i64, Reply> {
    let n = parse_i64(b).ok_or_else(not_int)?;
    if n < 0 && n != UNKNOWN_READ {
        return Err(Reply::err("value for ENTRIESREAD must be positive or -1"));
    }
    Ok(n)
}

/// `XGROUP CREATE|SETID|DESTROY|CREATECONSUMER|DELCONSUMER|HELP ...`
pub fn xgroup(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let sub = a[1].to_ascii_uppercase();
    let arity_ok = match &sub[..] {
        b"HELP" => a.len() == 2,
        b"CREATE" | b"SETID" => a.len() >= 5,
        b"DESTROY" => a.len() == 4,
        b"CREATECONSUMER" | b"DELCONSUMER" => a.len() == 5,
        _ => return Err(subcommand_error("XGROUP", &a[1], false)),
    };
    if !arity_ok {
        return Err(subcommand_error("XGROUP", &a[1], true));
    }
    if &sub[..] == b"HELP" {
        return Ok(Reply::Array(
            XGROUP_HELP
                .iter()
                .map(|l| Reply::Status((*l).into()))
                .collect(),
        ));
    }
    let (key, name) = (&a[2], &a[3]);
    let mut mkstream = false;
    let mut entries_read = UNKNOWN_READ;
    match &sub[..] {
        b"CREATE" => {
            let mut i = 5;
            while i < a.len() {
                if a[i].eq_ignore_ascii_case(b"MKSTREAM") {
                    mkstream = true;
                    i += 1;
                } else if a[i].eq_ignore_ascii_case(b"ENTRIESREAD") && i + 1 < a.len() {
                    entries_read = entries_read_arg(&a[i + 1])?;
                    i += 2;
                } else {
                    return Err(bad_options(&a[1]));
                }
            }
        }
        b"SETID" => match a.len() {
            5 => {}
            7 if a[5].eq_ignore_ascii_case(b"ENTRIESREAD") => {
                entries_read = entries_read_arg(&a[6])?;
            }
            _ => return Err(bad_options(&a[1])),
        },
        _ => {}
    }
    let stream = get_stream(txn, key)?;
    let Some(m) = stream.or_else(|| mkstream.then(StreamMeta::default)) else {
        return Err(Reply::err(KEY_NEEDED));
    };
    let groups = Groups::of(key, m.version);
    let group = if stream.is_some() {
        groups.get(txn, name)?
    } else {
        None
    };
    let group = match (&sub[..], group) {
        (b"SETID" | b"CREATECONSUMER" | b"DELCONSUMER", None) => {
            return Err(no_group(key, name));
        }
        (_, g) => g,
    };
    match &sub[..] {
        b"CREATE" => {
            let last = if a[4].as_ref() == b"$" {
                m.last
            } else {
                strict_id(&a[4])?
            };
            if group.is_some() {
                return Err(Reply::Error(
                    "BUSYGROUP Consumer Group name already exists".into(),
                ));
            }
            let m = match stream {
                Some(m) => m,
                None => {
                    let m = new_stream(txn)?;
                    store_stream(txn, key, m)?;
                    m
                }
            };
            let groups = Groups::of(key, m.version);
            groups.check_names(name, b"")?;
            groups.put(
                txn,
                &Group {
                    name: name.clone(),
                    last,
                    entries_read,
                    pending: 0,
                    consumers: 0,
                },
            );
            txn.notify(class::STREAM, "xgroup-create", key);
            Ok(Reply::Ok)
        }
        b"SETID" => {
            let mut g = group.ok_or_else(|| no_group(key, name))?;
            g.last = if a[4].as_ref() == b"$" {
                m.last
            } else {
                parse_id(&a[4], 0, true)?
            };
            g.entries_read = entries_read;
            groups.put(txn, &g);
            txn.notify(class::STREAM, "xgroup-setid", key);
            Ok(Reply::Ok)
        }
        b"DESTROY" => {
            if group.is_none() {
                return Ok(Reply::Int(0));
            }
            groups.destroy(txn, name);
            // Clients blocked in XREADGROUP on this group get NOGROUP.
            txn.signal_ready(key);
            txn.notify(class::STREAM, "xgroup-destroy", key);
            Ok(Reply::Int(1))
        }
        b"CREATECONSUMER" => {
            let g = group.ok_or_else(|| no_group(key, name))?;
            groups.check_names(name, &a[4])?;
            let mut session = Session::new(groups, g);
            let (_, created) = session.consumer(txn, &a[4], txn.now_ms())?;
            session.finish(txn);
            if created {
                txn.notify(class::STREAM, "xgroup-createconsumer", key);
            }
            Ok(Reply::Int(i64::from(created)))
        }
        _ => {
            let g = group.ok_or_else(|| no_group(key, name))?;
            let mut session = Session::new(groups, g);
            let pending = session.delete_consumer(txn, &a[4])?;
            session.finish(txn);
            // Redis tells only of a consumer that existed.
            if pending.is_some() {
                txn.notify(class::STREAM, "xgroup-delconsumer", key);
            }
            Ok(Reply::Int(pending.unwrap_or(0) as i64))
        }
    }
}

/// What a blocked XREADGROUP waits for: entries its group has not delivered yet.
#[derive(Clone, Debug, PartialEq)]
pub struct XReadGroupWait {
    /// The group.
    pub group: Bytes,
    /// The consumer reading.
    pub consumer: Bytes,
    /// COUNT.
    pub count: Option<u64>,
    /// NOACK: delivered entries are not made pending.
    pub noack: bool,
}

impl XReadGroupWait {
    /// Delivers what `key`'s group has not delivered yet: `[[key, entries]]`; NOGROUP if
    /// the group went, UNBLOCKED if the stream did.
    ///
    /// # Errors
    /// Engine errors.
    pub fn serve(&self, txn: &mut Txn<'_>, key: &Bytes) -> Result<Option<Reply>, Reply> {
        let m = match txn.meta(key)? {
            Some(Meta::Stream(m)) => m,
            _ => {
                return Ok(Some(Reply::Error(
                    "UNBLOCKED the stream key no longer exists".into(),
                )));
            }
        };
        let groups = Groups::of(key, m.version);
        let Some(g) = groups.get(txn, &self.group)? else {
            return Ok(Some(Reply::Error(
                "NOGROUP the consumer group this client was blocked on no longer exists".into(),
            )));
        };
        let mut session = Session::new(groups, g);
        let now = txn.now_ms();
        let entries = deliver_new(
            txn,
            key,
            &m,
            &mut session,
            &self.consumer,
            self.count,
            self.noack,
            now,
        )?;
        if entries.is_empty() {
            return Ok(None);
        }
        session.finish(txn);
        Ok(Some(xread_reply(vec![(
            key.clone(),
            entries_reply(entries),
        )])))
    }
}

/// `XREADGROUP GROUP group consumer [COUNT n] [BLOCK ms] [NOACK] STREAMS key ... id ...`
pub fn xreadgroup(txn: &mut Txn<'_>, a: &[Bytes]) -> Result<Outcome, Reply> {
    let mut i = 1;
    let mut count = None;
    let mut block = None;
    let mut noack = false;
    let mut names: Option<(Bytes, Bytes)> = None;
    let streams_at = loop {
        let Some(w) = a.get(i) else {
            return Err(syntax());
        };
        let more = a.len() - i - 1;
        let w = w.to_ascii_uppercase();
        match w.as_slice() {
            b"BLOCK" if more > 0 => {
                block = Some(parse_block_ms(&a[i + 1])?);
                i += 2;
            }
            b"COUNT" if more > 0 => {
                let n = parse_i64(&a[i + 1]).ok_or_else(not_int)?;
                count = (n > 0).then_some(n as u64);
                i += 2;
            }
            b"STREAMS" if more > 0 => break i + 1,
            b"GROUP" if more >= 2 => {
                names = Some((a[i + 1].clone(), a[i + 2].clone()));
                i += 3;
            }
            b"NOACK" => {
                noack = true;
                i += 1;
            }
            _ => return Err(syntax()),
        }
    };
    let rest = &a[streams_at..];
    if !rest.len().is_multiple_of(2) {
        return Err(Reply::err(
            "Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.",
        ));
    }
    let Some((group, consumer)) = names else {
        return Err(Reply::err("Missing GROUP option for XREADGROUP"));
    };
    let (keys, ids) = rest.split_at(rest.len() / 2);
    // Each key's stream, group and ID (`None`: `>`), checked in order as Redis does.
    let mut plan = Vec::with_capacity(keys.len());
    for (k, id) in keys.iter().zip(ids) {
        let Some((m, g)) = stream_and_group(txn, k, &group)? else {
            return Err(Reply::Error(format!(
                "NOGROUP No such key '{}' or consumer group '{}' in XREADGROUP with GROUP option",
                s(k),
                s(&group)
            )));
        };
        let after = match id.as_ref() {
            b"$" => {
                return Err(Reply::err(
                    "The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.",
                ));
            }
            b">" => None,
            _ => Some(strict_id(id)?),
        };
        plan.push((k, m, g, after));
    }
    let now = txn.now_ms();
    let mut found = Vec::new();
    for (k, m, g, after) in plan {
        let groups = Groups::of(k, m.version);
        groups.check_names(&group, &consumer)?;
        // Group state as this command left it (a key named twice reads on).
        let g = groups.get(txn, &g.name)?.unwrap_or(g);
        let mut session = Session::new(groups, g);
        session.seen(txn, &consumer, now)?;
        match after {
            Some(after) => {
                let r = deliver_history(txn, k, &m, &mut session, &consumer, after, count, now)?;
                found.push((k.clone(), history_reply(r)));
            }
            None => {
                let entries = deliver_new(txn, k, &m, &mut session, &consumer, count, noack, now)?;
                if !entries.is_empty() {
                    found.push((k.clone(), entries_reply(entries)));
                }
            }
        }
        session.finish(txn);
    }
    let op = Op::XReadGroup(XReadGroupWait {
        group,
        consumer,
        count,
        noack,
    });
    Ok(found_or_block(txn, found, block, keys, op))
}

/// A consumer's history as XREADGROUP replies it: each entry, or `[id, nil]` for one
/// deleted from the stream since it was delivered.
fn history_reply(history: Vec<(Id, Option<Entry>)>) -> Reply {
    Reply::Array(
        history
            .into_iter()
            .map(|(id, e)| match e {
                Some(e) => entry_reply(e),
                None => Reply::Array(vec![Reply::bulk(fmt_id(id)), Reply::NilArray]),
            })
            .collect(),
    )
}

/// `XACK key group id [id ...]`
pub fn xack(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let Some((m, g)) = stream_and_group(txn, &a[1], &a[2])? else {
        return Ok(Reply::Int(0));
    };
    let ids = a[3..]
        .iter()
        .map(|b| strict_id(b))
        .collect::<Result<Vec<_>, _>>()?;
    let mut session = Session::new(Groups::of(&a[1], m.version), g);
    let acked = ack(txn, &mut session, ids)?;
    session.finish(txn);
    Ok(Reply::Int(acked))
}

/// `XPENDING key group [[IDLE min-idle] start end count [consumer]]`
pub fn xpending(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    if a.len() != 3 && !(6..=9).contains(&a.len()) {
        return Err(syntax());
    }
    let mut range_args = None;
    if a.len() >= 6 {
        let mut at = 3;
        let mut min_idle = 0i64;
        if a[3].eq_ignore_ascii_case(b"IDLE") {
            min_idle = parse_i64(&a[4]).ok_or_else(not_int)?;
            if a.len() < 8 {
                return Err(syntax());
            }
            at += 2;
        }
        let count = parse_i64(a.get(at + 2).ok_or_else(syntax)?).ok_or_else(not_int)?;
        let from = parse_bound(&a[at], 0, true)?;
        let to = parse_bound(&a[at + 1], u64::MAX, false)?;
        // Arguments after the consumer are ignored, as Redis does.
        let consumer = a.get(at + 3).cloned();
        range_args = Some((min_idle, from, to, count.max(0) as u64, consumer));
    }
    let Some((m, g)) = stream_and_group(txn, &a[1], &a[2])? else {
        return Err(no_key_or_group(&a[1], &a[2]));
    };
    let groups = Groups::of(&a[1], m.version);
    let Some((min_idle, from, to, count, consumer)) = range_args else {
        return pending_summary(txn, groups, &g);
    };
    let now = txn.now_ms();
    let mut out = Vec::new();
    let row = |id: Id, p: Pending| -> Result<bool, Reply> {
        let idle = now.saturating_sub(p.delivered);
        if min_idle > 0 && (idle as i64) < min_idle {
            return Ok(true);
        }
        out.push(Reply::Array(vec![
            Reply::bulk(fmt_id(id)),
            Reply::Bulk(p.consumer),
            Reply::Int(idle as i64),
            Reply::Int(p.deliveries as i64),
        ]));
        Ok((out.len() as u64) < count)
    };
    if count == 0 {
        return Ok(Reply::Array(vec![]));
    }
    match consumer {
        None => groups.for_each_pending(txn, &g.name, from, to, false, row)?,
        Some(c) => groups.for_each_owned_pending(txn, &g.name, &c, from, to, u64::MAX, row)?,
    }
    Ok(Reply::Array(out))
}

/// XPENDING's summary: the count, the smallest and largest pending IDs, and each consumer
/// with pending entries and how many.
fn pending_summary(txn: &Txn<'_>, groups: Groups<'_>, g: &Group) -> R {
    let Some((first, last)) = groups.pending_bounds(txn, &g.name)? else {
        return Ok(Reply::Array(vec![
            Reply::Int(0),
            Reply::Nil,
            Reply::Nil,
            Reply::NilArray,
        ]));
    };
    let owners = groups
        .consumers(txn, &g.name)?
        .into_iter()
        .filter(|c| c.pending > 0)
        .map(|c| {
            Reply::Array(vec![
                Reply::Bulk(c.name),
                Reply::bulk(c.pending.to_string()),
            ])
        })
        .collect();
    Ok(Reply::Array(vec![
        Reply::Int(g.pending as i64),
        Reply::bulk(fmt_id(first)),
        Reply::bulk(fmt_id(last)),
        Reply::Array(owners),
    ]))
}

/// Parses an integer option of XCLAIM, with its own error text.
fn claim_int(b: &[u8], what: &str) -> Result<i64, Reply> {
    parse_i64(b).ok_or_else(|| Reply::err(format!("Invalid {what} argument for XCLAIM")))
}

/// `XCLAIM key group consumer min-idle id ... [IDLE ms] [TIME ms] [RETRYCOUNT n] [FORCE]
/// [JUSTID] [LASTID id]`
pub fn xclaim(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let Some((m, g)) = stream_and_group(txn, &a[1], &a[2])? else {
        return Err(no_key_or_group(&a[1], &a[2]));
    };
    let min_idle = claim_int(&a[4], "min-idle-time")?.max(0) as u64;
    let ids_end = (5..a.len())
        .find(|&j| strict_id(&a[j]).is_err())
        .unwrap_or(a.len());
    let ids: Vec<Id> = a[5..ids_end]
        .iter()
        .map(|b| strict_id(b))
        .collect::<Result<_, _>>()?;
    let now = txn.now_ms();
    let (mut force, mut justid) = (false, false);
    let mut delivered: Option<i64> = None;
    let mut retry: Option<i64> = None;
    let mut last_id = (0, 0);
    let mut j = ids_end;
    while j < a.len() {
        let more = j + 1 < a.len();
        let opt = a[j].to_ascii_uppercase();
        match opt.as_slice() {
            b"FORCE" => force = true,
            b"JUSTID" => justid = true,
            b"IDLE" if more => {
                j += 1;
                let idle = claim_int(&a[j], "IDLE option")?;
                delivered = Some((now as i64).saturating_sub(idle));
            }
            b"TIME" if more => {
                j += 1;
                delivered = Some(claim_int(&a[j], "TIME option")?);
            }
            b"RETRYCOUNT" if more => {
                j += 1;
                retry = Some(claim_int(&a[j], "RETRYCOUNT option")?);
            }
            b"LASTID" if more => {
                j += 1;
                last_id = strict_id(&a[j])?;
            }
            _ => {
                return Err(Reply::err(format!(
                    "Unrecognized XCLAIM option '{}'",
                    s(&a[j])
                )));
            }
        }
        j += 1;
    }
    let mut session = Session::new(Groups::of(&a[1], m.version), g);
    session.raise_last(last_id);
    // A time in the future or before the epoch means now (a client's clock may differ).
    let at = delivered
        .filter(|&t| t >= 0 && t as u64 <= now)
        .map_or(now, |t| t as u64);
    let retries = match retry {
        Some(n) if n >= 0 => Retries::Set(n as u64),
        _ if justid => Retries::Keep,
        _ => Retries::Increment,
    };
    let consumer = a[3].clone();
    let how = Claim {
        min_idle,
        force,
        at,
        retries,
        now,
    };
    let claimed = claim(txn, &mut session, (&a[1], &m), ids, &consumer, how)?;
    session.finish(txn);
    Ok(claimed_reply(claimed, justid))
}

/// Claimed entries as XCLAIM and XAUTOCLAIM reply them: each entry, or its ID (JUSTID).
fn claimed_reply(claimed: Vec<Entry>, justid: bool) -> Reply {
    Reply::Array(
        claimed
            .into_iter()
            .map(|e| {
                if justid {
                    Reply::bulk(fmt_id(e.0))
                } else {
                    entry_reply(e)
                }
            })
            .collect(),
    )
}

/// `XAUTOCLAIM key group consumer min-idle start [COUNT n] [JUSTID]`
pub fn xautoclaim(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let min_idle = parse_i64(&a[4])
        .ok_or_else(|| Reply::err("Invalid min-idle-time argument for XAUTOCLAIM"))?
        .max(0) as u64;
    let start = parse_bound(&a[5], 0, true)?;
    let mut count: u64 = 100;
    let mut justid = false;
    let mut j = 6;
    while j < a.len() {
        let more = j + 1 < a.len();
        if a[j].eq_ignore_ascii_case(b"COUNT") && more {
            let max = i64::MAX / 16;
            count = match parse_i64(&a[j + 1]) {
                Some(n) if (1..=max).contains(&n) => n as u64,
                _ => return Err(Reply::err("COUNT must be > 0")),
            };
            j += 2;
        } else if a[j].eq_ignore_ascii_case(b"JUSTID") {
            justid = true;
            j += 1;
        } else {
            return Err(syntax());
        }
    }
    let Some((m, g)) = stream_and_group(txn, &a[1], &a[2])? else {
        return Err(no_key_or_group(&a[1], &a[2]));
    };
    let consumer = a[3].clone();
    let mut session = Session::new(Groups::of(&a[1], m.version), g);
    let now = txn.now_ms();
    // XCLAIM without FORCE, delivered now, one delivery more unless JUSTID.
    let how = Claim {
        min_idle,
        force: false,
        at: now,
        retries: if justid {
            Retries::Keep
        } else {
            Retries::Increment
        },
        now,
    };
    let AutoClaimed {
        cursor,
        claimed,
        deleted,
    } = autoclaim(
        txn,
        &mut session,
        (&a[1], &m),
        &consumer,
        how,
        (start, count),
    )?;
    session.finish(txn);
    Ok(Reply::Array(vec![
        Reply::bulk(fmt_id(cursor)),
        claimed_reply(claimed, justid),
        Reply::Array(
            deleted
                .into_iter()
                .map(|id| Reply::bulk(fmt_id(id)))
                .collect(),
        ),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subcommand_errors_read_as_redis_words_them() {
        assert_eq!(
            subcommand_error("XGROUP", b"Create", true),
            Reply::err("wrong number of arguments for 'xgroup|create' command")
        );
        assert_eq!(
            subcommand_error("XINFO", b"foo", false),
            Reply::err("unknown subcommand 'foo'. Try XINFO HELP.")
        );
    }
}
