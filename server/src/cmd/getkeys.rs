//! The keys of a request as Redis reports them (COMMAND GETKEYS, and COMMAND INFO's key
//! triple and `movablekeys` flag), which cluster clients route by.
//!
//! The command table's own key positions say what a command locks, which is sometimes more
//! than its keys (XREAD locks every argument, since its keys follow `STREAMS`); here each
//! command whose keys move with its arguments finds them as Redis's key specs do.

use bytes::Bytes;

use super::{Command, parse_i64};

/// How a command's keys are found.
enum Spec {
    /// The table's positions.
    Table,
    /// `numkeys` at this index, the keys right after it; `dst`: a destination at 1 as well.
    NumKeys { at: usize, dst: bool },
    /// The keys are the first half of what follows `STREAMS`.
    Streams,
    /// The key at 1, and the key after each `STORE` (SORT, skipping LIMIT's, GET's and BY's
    /// arguments).
    Sort,
    /// The key at 1, then the keys after the last `STORE` and the last `STOREDIST` from
    /// `from` on.
    GeoStore { from: usize },
    /// A container command: its key at 2, when the subcommand has one.
    Container,
}

fn spec(name: &str) -> Spec {
    match name {
        "zunion" | "zinter" | "zdiff" | "zintercard" | "sintercard" | "lmpop" | "zmpop" => {
            Spec::NumKeys { at: 1, dst: false }
        }
        "blmpop" | "bzmpop" => Spec::NumKeys { at: 2, dst: false },
        "zunionstore" | "zinterstore" | "zdiffstore" => Spec::NumKeys { at: 2, dst: true },
        "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro" => {
            Spec::NumKeys { at: 2, dst: false }
        }
        "xread" | "xreadgroup" => Spec::Streams,
        "sort" | "sort_ro" => Spec::Sort,
        "georadius" | "georadiusbymember" => Spec::GeoStore { from: 5 },
        "object" | "xgroup" | "xinfo" | "memory" => Spec::Container,
        _ => Spec::Table,
    }
}

/// Redis's legacy key triple for COMMAND INFO (first, last, step) and whether the keys
/// move with the arguments (`movablekeys`).
pub fn reported(c: &Command) -> (i32, i32, i32, bool) {
    match spec(c.name) {
        Spec::Table => (c.first_key, c.last_key, c.step, false),
        Spec::Container => (0, 0, 0, false),
        Spec::NumKeys { dst: true, .. } | Spec::Sort | Spec::GeoStore { .. } => (1, 1, 1, true),
        Spec::NumKeys { dst: false, .. } | Spec::Streams => (0, 0, 0, true),
    }
}

/// True when the request's command (or subcommand) has keys at all (COMMAND GETKEYS
/// refuses the others).
pub fn has_keys(c: &Command, a: &[Bytes]) -> bool {
    match spec(c.name) {
        Spec::Table => c.first_key > 0,
        Spec::Container => a.get(1).is_some_and(|s| !s.eq_ignore_ascii_case(b"HELP")),
        _ => true,
    }
}

/// The positions of the keys in `a` (the request, name first); `None` when the arguments
/// do not say (a bad `numkeys`, no `STREAMS`).
pub fn positions(c: &Command, a: &[Bytes]) -> Option<Vec<usize>> {
    match spec(c.name) {
        Spec::Table => Some(c.key_positions(a.len()).collect()),
        Spec::Container => {
            let keyed = a.len() > 2 && !a[1].eq_ignore_ascii_case(b"HELP");
            Some(if keyed { vec![2] } else { Vec::new() })
        }
        Spec::NumKeys { at, dst } => {
            let n = usize::try_from(parse_i64(a.get(at)?)?).ok()?;
            if at + n >= a.len() {
                return None;
            }
            let mut out: Vec<usize> = if dst { vec![1] } else { Vec::new() };
            out.extend(at + 1..at + 1 + n);
            Some(out)
        }
        Spec::Streams => {
            let s = a.iter().position(|w| w.eq_ignore_ascii_case(b"STREAMS"))?;
            let rest = a.len() - s - 1;
            if rest == 0 || !rest.is_multiple_of(2) {
                return None;
            }
            Some((s + 1..s + 1 + rest / 2).collect())
        }
        Spec::Sort => {
            let mut out = vec![1];
            let mut i = 2;
            while i < a.len() {
                let w = a[i].to_ascii_uppercase();
                match w.as_slice() {
                    b"LIMIT" => i += 2,
                    b"GET" | b"BY" => i += 1,
                    b"STORE" if i + 1 < a.len() && c.name == "sort" => {
                        // Redis reports the last STORE's key only, and reads on from the
                        // word after STORE.
                        out.truncate(1);
                        out.push(i + 1);
                    }
                    _ => {}
                }
                i += 1;
            }
            Some(out)
        }
        Spec::GeoStore { from } => {
            // Redis's key specs: the last STORE's key, then the last STOREDIST's.
            let mut store = None;
            let mut store_dist = None;
            let mut i = from;
            while i + 1 < a.len() {
                let w = a[i].to_ascii_uppercase();
                if w == b"STORE" {
                    store = Some(i + 1);
                } else if w == b"STOREDIST" {
                    store_dist = Some(i + 1);
                }
                i += 1;
            }
            let mut out = vec![1];
            out.extend(store);
            out.extend(store_dist);
            Some(out)
        }
    }
}

/// The request's keys span more than one hash slot (Redis Cluster's `-CROSSSLOT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrossSlot;

/// The hash slot every key of the request is in: `Ok(None)` for a request without keys
/// (or whose arguments do not say where its keys are: the command's own checks answer it).
///
/// # Errors
/// [`CrossSlot`] when its keys are in different slots.
pub fn request_slot(c: &Command, a: &[Bytes]) -> Result<Option<u16>, CrossSlot> {
    if !has_keys(c, a) {
        return Ok(None);
    }
    let mut slot = None;
    for i in positions(c, a).unwrap_or_default() {
        let Some(key) = a.get(i) else { continue };
        let s = crate::keyslot::key_slot(key);
        match slot {
            None => slot = Some(s),
            Some(first) if first != s => return Err(CrossSlot),
            Some(_) => {}
        }
    }
    Ok(slot)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::lookup;

    fn keys(line: &str) -> Option<Vec<String>> {
        let a: Vec<Bytes> = line
            .split(' ')
            .map(|w| Bytes::from(w.to_string()))
            .collect();
        let c = lookup(&a[0]).unwrap();
        positions(c, &a).map(|p| {
            p.into_iter()
                .map(|i| String::from_utf8_lossy(&a[i]).into_owned())
                .collect()
        })
    }

    #[test]
    fn keys_are_found_as_redis_finds_them() {
        let k = |l: &str| keys(l).map(|v| v.join(","));
        assert_eq!(k("SET a b").as_deref(), Some("a"));
        assert_eq!(k("MSET a 1 b 2").as_deref(), Some("a,b"));
        assert_eq!(
            k("ZUNIONSTORE d 2 x y WEIGHTS 1 2").as_deref(),
            Some("d,x,y")
        );
        assert_eq!(k("ZUNION 2 x y WITHSCORES").as_deref(), Some("x,y"));
        assert_eq!(k("ZUNION 3 x y"), None);
        assert_eq!(k("EVAL s 2 k1 k2 a1").as_deref(), Some("k1,k2"));
        assert_eq!(k("EVAL s 0 a1").as_deref(), Some(""));
        assert_eq!(k("BLMPOP 0 2 l1 l2 LEFT").as_deref(), Some("l1,l2"));
        assert_eq!(
            k("XREADGROUP GROUP g c COUNT 1 STREAMS s1 s2 > >").as_deref(),
            Some("s1,s2")
        );
        assert_eq!(k("XREAD STREAMS s1 0").as_deref(), Some("s1"));
        assert_eq!(
            k("SORT l BY w_* LIMIT 0 1 GET STORE STORE dst").as_deref(),
            Some("l,dst")
        );
        assert_eq!(
            k("GEORADIUS g 1 2 3 km STOREDIST d").as_deref(),
            Some("g,d")
        );
        assert_eq!(
            k("GEORADIUS g 1 2 3 km STOREDIST e STORE d").as_deref(),
            Some("g,d,e")
        );
        assert_eq!(k("XINFO STREAM s").as_deref(), Some("s"));
        assert_eq!(k("OBJECT HELP").as_deref(), Some(""));
    }

    fn slot(line: &str) -> Result<Option<u16>, CrossSlot> {
        let a: Vec<Bytes> = line
            .split(' ')
            .map(|w| Bytes::from(w.to_string()))
            .collect();
        request_slot(lookup(&a[0]).unwrap(), &a)
    }

    #[test]
    fn a_request_has_one_slot_or_is_cross_slot() {
        // What redis-server answers to CLUSTER KEYSLOT foo.
        assert_eq!(slot("GET foo"), Ok(Some(12182)));
        assert_eq!(slot("PING"), Ok(None));
        assert_eq!(slot("EVAL s 0 a1"), Ok(None));
        assert_eq!(
            slot("MSET {u}a 1 {u}b 2"),
            Ok(Some(crate::keyslot::key_slot(b"u")))
        );
        assert_eq!(slot("MSET foo 1 bar 2"), Err(CrossSlot));
        // Values and arguments are not keys.
        assert_eq!(slot("SET foo bar"), Ok(Some(12182)));
        assert_eq!(slot("EVAL s 1 foo bar"), Ok(Some(12182)));
        assert_eq!(slot("ZUNIONSTORE {t}d 2 {t}x y"), Err(CrossSlot));
        assert_eq!(slot("XREAD STREAMS foo bar 0 0"), Err(CrossSlot));
        assert_eq!(slot("XREAD STREAMS foo 0"), Ok(Some(12182)));
    }
}
