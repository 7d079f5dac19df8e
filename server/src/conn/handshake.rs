//! Connection-level commands that read or change the connection's state or describe the
//! server: AUTH, HELLO, CLIENT, CONFIG GET and COMMAND.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use bytes::Bytes;

use super::{Conn, WRONGPASS, wrong_arity};
use crate::cmd::{self, COMMANDS, Command, parse_i64};
use crate::resp::Reply;

impl Conn {
    pub(super) fn auth(&mut self, a: &[Bytes]) -> Reply {
        let (user, pass) = match a.len() {
            2 => (&b"default"[..], &a[1][..]),
            3 => (&a[1][..], &a[2][..]),
            _ => return Reply::err("syntax error"),
        };
        let default_nopass = self.shared.acl.get("default").is_some_and(|u| u.nopass);
        if default_nopass && a.len() == 2 {
            return Reply::err(
                "AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?",
            );
        }
        if self.log_in(user, pass) {
            Reply::Ok
        } else {
            Reply::Error(WRONGPASS.into())
        }
    }

    pub(super) fn hello(&mut self, a: &[Bytes]) -> Reply {
        let mut proto = self.proto;
        if let Some(v) = a.get(1) {
            match parse_i64(v) {
                Some(p @ 2..=3) => proto = p as u8,
                Some(_) => return Reply::Error("NOPROTO unsupported protocol version".into()),
                None => return Reply::err("Protocol version is not an integer or out of range"),
            }
        }
        let mut i = 2;
        let mut auth = None;
        let mut name = None;
        while i < a.len() {
            let opt = a[i].to_ascii_uppercase();
            if opt == b"AUTH" && i + 2 < a.len() {
                auth = Some((a[i + 1].clone(), a[i + 2].clone()));
                i += 3;
            } else if opt == b"SETNAME" && i + 1 < a.len() {
                name = Some(a[i + 1].clone());
                i += 2;
            } else {
                return Reply::err(format!(
                    "Syntax error in HELLO option '{}'",
                    String::from_utf8_lossy(&a[i])
                ));
            }
        }
        if let Some((user, pass)) = auth
            && !self.log_in(&user, &pass)
        {
            return Reply::Error(WRONGPASS.into());
        }
        if !self.authed {
            return Reply::Error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time".into());
        }
        if let Some(n) = name {
            if !valid_name(&n) {
                return Reply::err(
                    "Client names cannot contain spaces, newlines or special characters.",
                );
            }
            self.name = (!n.is_empty()).then_some(n);
        }
        self.proto = proto;
        self.publish_meta();
        let s = |x: &str| Reply::bulk(x.to_string());
        Reply::Map(vec![
            (s("server"), s("redis")),
            (s("version"), s(crate::info::REDIS_VERSION)),
            (s("proto"), Reply::Int(i64::from(proto))),
            (s("id"), Reply::Int(self.id as i64)),
            (s("mode"), s("standalone")),
            (s("role"), s("master")),
            (s("modules"), Reply::Array(Vec::new())),
        ])
    }

    pub(super) fn client(&mut self, a: &[Bytes]) -> Reply {
        let sub = a[1].to_ascii_lowercase();
        let arity = |n: usize| a.len() == n;
        let sub_name = String::from_utf8_lossy(&sub).into_owned();
        let wrong = || wrong_arity(&format!("client|{sub_name}"));
        match sub.as_slice() {
            b"setname" => {
                if !arity(3) {
                    return wrong();
                }
                if !valid_name(&a[2]) {
                    return Reply::err(
                        "Client names cannot contain spaces, newlines or special characters.",
                    );
                }
                self.name = (!a[2].is_empty()).then(|| a[2].clone());
                self.publish_meta();
                Reply::Ok
            }
            b"getname" => {
                if !arity(2) {
                    return wrong();
                }
                self.name.clone().map_or(Reply::Nil, Reply::Bulk)
            }
            b"id" => {
                if !arity(2) {
                    return wrong();
                }
                Reply::Int(self.id as i64)
            }
            b"setinfo" => {
                if !arity(4) {
                    return wrong();
                }
                let attr = a[2].to_ascii_lowercase();
                let (slot, label) = match attr.as_slice() {
                    b"lib-name" => (&mut self.lib_name, "lib-name"),
                    b"lib-ver" => (&mut self.lib_ver, "lib-ver"),
                    _ => {
                        return Reply::err(format!(
                            "Unrecognized option '{}'",
                            String::from_utf8_lossy(&a[2])
                        ));
                    }
                };
                if !valid_name(&a[3]) {
                    return Reply::err(format!(
                        "{label} cannot contain spaces, newlines or special characters."
                    ));
                }
                *slot = Some(a[3].clone());
                self.publish_meta();
                Reply::Ok
            }
            b"info" => {
                if !arity(2) {
                    return wrong();
                }
                self.publish_meta();
                Reply::Verbatim(format!("{}\n", self.entry.line()))
            }
            b"list" => self.client_list(&a[2..]),
            b"kill" => self.client_kill(&a[2..]),
            b"no-evict" | b"no-touch" => match a.get(2).map(|v| v.to_ascii_lowercase()) {
                Some(v) if a.len() == 3 && (v == b"on" || v == b"off") => {
                    let flag = if sub == b"no-evict" {
                        &self.entry.no_evict
                    } else {
                        &self.entry.no_touch
                    };
                    flag.store(v == b"on", std::sync::atomic::Ordering::Relaxed);
                    Reply::Ok
                }
                _ if a.len() != 3 => wrong(),
                _ => Reply::err("syntax error"),
            },
            b"reply" => {
                if !arity(3) {
                    return wrong();
                }
                if self.cluster.is_some() {
                    return Reply::err("CLIENT REPLY is not supported in cluster mode");
                }
                match a[2].to_ascii_uppercase().as_slice() {
                    b"ON" => {
                        self.replies_off = false;
                        self.replies_skipped = 0;
                        Reply::Ok
                    }
                    b"OFF" => {
                        self.replies_off = true;
                        Reply::Ok
                    }
                    b"SKIP" => {
                        // This command's reply and the next one's.
                        self.replies_skipped = 2;
                        Reply::Ok
                    }
                    _ => Reply::err("syntax error"),
                }
            }
            b"unblock" => {
                if !(3..=4).contains(&a.len()) {
                    return wrong();
                }
                let Some(id) = crate::cmd::parse_i64(&a[2]) else {
                    return Reply::err(crate::cmd::NOT_INT);
                };
                let error = match a.get(3).map(|v| v.to_ascii_uppercase()) {
                    None => false,
                    Some(v) if v == b"TIMEOUT" => false,
                    Some(v) if v == b"ERROR" => true,
                    Some(_) => {
                        return Reply::err("CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
                    }
                };
                let done = u64::try_from(id).is_ok_and(|id| self.shared.blocked.unblock(id, error));
                Reply::Int(i64::from(done))
            }
            b"pause" if (3..=4).contains(&a.len()) => self.client_pause(a),
            b"pause" if a.len() < 3 => wrong(),
            // Redis 7.0's words for a CLIENT PAUSE of too many arguments.
            b"pause" => Reply::err(format!(
                "unknown subcommand or wrong number of arguments for '{}'. Try CLIENT HELP.",
                String::from_utf8_lossy(&a[1])
            )),
            b"unpause" if arity(2) => {
                self.shared.pause.unpause();
                Reply::Ok
            }
            b"unpause" => wrong(),
            b"help" => help_reply(CLIENT_HELP),
            _ => unknown_subcommand(&a[1], "CLIENT"),
        }
    }

    /// Copies what the client told about itself to its registry entry.
    /// `SWAPDB index1 index2`: the two database indexes exchange their data, for every
    /// client (one SELECTed to either sees the other's keys from now on). The data does not
    /// move: the map from index to stored database changes (`Store::swap_dbs`). Keys WATCHed
    /// in either database are touched, so their EXEC fails. `locked`: the caller (EXEC)
    /// already holds every writer lock.
    pub(super) fn swapdb(&mut self, a: &[Bytes], locked: bool) -> Reply {
        self.swapdb_waking(a, locked, None)
    }

    /// [`Conn::swapdb`]; the clients blocked on keys of either database now wait on the
    /// other's, and are served at once if it holds what they wait for: in `exec_txn` (EXEC's
    /// write set, served when it commits), or in a write set of its own.
    pub(super) fn swapdb_waking(
        &mut self,
        a: &[Bytes],
        locked: bool,
        exec_txn: Option<&mut crate::store::Txn<'_>>,
    ) -> Reply {
        if self.cluster.is_some() {
            return Reply::err("SWAPDB is not allowed in cluster mode");
        }
        let store = Arc::clone(&self.shared.store);
        let index = |b: &[u8], which: &str| -> Result<crate::store::DbIndex, Reply> {
            let n = parse_i64(b).ok_or_else(|| Reply::err(format!("invalid {which} DB index")))?;
            if n < 0 || n >= i64::from(store.databases()) {
                return Err(Reply::err("DB index is out of range"));
            }
            Ok(n as crate::store::DbIndex)
        };
        let (x, y) = match (index(&a[1], "first"), index(&a[2], "second")) {
            (Ok(x), Ok(y)) => (x, y),
            (Err(e), _) | (_, Err(e)) => return e,
        };
        if x == y {
            return Reply::Ok;
        }
        let guard = (!locked).then(|| store.lock_all());
        let stored = [store.physical(x), store.physical(y)];
        if let Err(e) = store.swap_dbs(x, y) {
            return e;
        }
        let reg = &self.shared.blocked;
        let waited = if reg.is_empty() {
            Vec::new()
        } else {
            reg.swap_dbs(stored[0], stored[1])
        };
        let touched: Vec<crate::store::watch::Touched> = store
            .watches()
            .keys()
            .into_iter()
            .filter(|(db, _)| stored.contains(db))
            .map(|(db, key)| (db, key, false))
            .collect();
        store.watches().touch(&touched);
        if waited.is_empty() {
            return Reply::Ok;
        }
        let mark = |txn: &mut crate::store::Txn<'_>| {
            let db = txn.db();
            for (stored, key) in &waited {
                txn.select_stored(*stored);
                txn.signal_ready(key);
            }
            txn.select_stored(db);
        };
        match (exec_txn, guard) {
            (Some(txn), _) => {
                mark(txn);
                Reply::Ok
            }
            (None, Some(g)) => {
                let mut txn = store.txn();
                mark(&mut txn);
                super::commit::commit_serving(reg, txn, super::commit::Lock::All(g), Reply::Ok)
            }
            // Locked by the caller without its write set: the clients stay blocked until
            // their keys are next written (not reached: EXEC passes its write set).
            (None, None) => Reply::Ok,
        }
    }

    /// `SELECT index`: later commands (and queued ones after it in MULTI) address that
    /// database.
    pub(super) fn select(&mut self, index: &[u8]) -> Reply {
        let db = match self.select_index(index) {
            Ok(db) => db,
            Err(e) => return e,
        };
        self.db = db;
        self.publish_meta();
        Reply::Ok
    }

    /// The database `SELECT index` would address, or its error. A node answering as Redis
    /// Cluster (`--cluster-redirects yes`) serves database 0 only, and says so as Redis
    /// Cluster does.
    pub(super) fn select_index(&self, index: &[u8]) -> Result<crate::store::DbIndex, Reply> {
        let db = crate::cmd::db_index(&self.shared.store, index)?;
        if db != 0 && self.cluster.as_ref().is_some_and(|c| c.cluster.redirects) {
            return Err(Reply::err("SELECT is not allowed in cluster mode"));
        }
        Ok(db)
    }

    pub(super) fn publish_meta(&self) {
        let s = |b: &Option<Bytes>| {
            b.as_ref()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default()
        };
        self.entry.set_meta(crate::clients::ClientMeta {
            name: s(&self.name),
            lib_name: s(&self.lib_name),
            lib_ver: s(&self.lib_ver),
            proto: self.proto,
            db: self.db,
            user: self.user.name.clone(),
        });
    }

    /// `CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id ...]`
    fn client_list(&self, a: &[Bytes]) -> Reply {
        self.publish_meta();
        let mut clients = self.shared.client_list.all();
        match a.first().map(|o| o.to_ascii_uppercase()) {
            None => {}
            Some(o) if o == b"TYPE" && a.len() == 2 => {
                let t = a[1].to_ascii_lowercase();
                match t.as_slice() {
                    b"normal" => clients.retain(|c| !c.is_pubsub()),
                    b"pubsub" => clients.retain(|c| c.is_pubsub()),
                    b"master" | b"replica" | b"slave" => clients.clear(),
                    _ => {
                        return Reply::err(format!(
                            "Unknown client type '{}'",
                            String::from_utf8_lossy(&a[1])
                        ));
                    }
                }
            }
            Some(o) if o == b"ID" && a.len() >= 2 => {
                let mut ids = Vec::new();
                for v in &a[1..] {
                    match parse_i64(v) {
                        Some(id) if id > 0 => ids.push(id as u64),
                        _ => return Reply::err("Invalid client ID"),
                    }
                }
                clients.retain(|c| ids.contains(&c.id));
            }
            Some(_) => return Reply::err("syntax error"),
        }
        let mut text = String::new();
        for c in clients {
            text.push_str(&c.line());
            text.push('\n');
        }
        Reply::Verbatim(text)
    }

    /// `CLIENT KILL addr` (the old form: OK or an error) or `CLIENT KILL <filter> <value>
    /// ...` with ID, ADDR, LADDR, TYPE, USER, SKIPME and MAXAGE (the number killed).
    fn client_kill(&self, a: &[Bytes]) -> Reply {
        let clients = self.shared.client_list.all();
        if a.len() == 1 {
            let addr = String::from_utf8_lossy(&a[0]);
            return match clients.iter().find(|c| c.addr.to_string() == addr) {
                Some(c) => {
                    c.kill();
                    Reply::Ok
                }
                None => Reply::err("No such client"),
            };
        }
        if a.is_empty() || !a.len().is_multiple_of(2) {
            return Reply::err("syntax error");
        }
        let mut skipme = true;
        let mut filters: Vec<Filter> = Vec::new();
        for pair in a.chunks(2) {
            let v = String::from_utf8_lossy(&pair[1]).into_owned();
            match pair[0].to_ascii_uppercase().as_slice() {
                b"ID" => match parse_i64(&pair[1]) {
                    Some(id) if id > 0 => filters.push(Box::new(move |c| c.id == id as u64)),
                    _ => return Reply::err("client-id should be greater than 0"),
                },
                b"ADDR" => filters.push(Box::new(move |c| c.addr.to_string() == v)),
                b"LADDR" => filters.push(Box::new(move |c| c.laddr.to_string() == v)),
                b"USER" if self.shared.acl.get(&v).is_some() => {
                    filters.push(Box::new(move |c| c.user() == v));
                }
                b"USER" => return Reply::err(format!("No such user '{v}'")),
                b"TYPE" => match v.to_ascii_lowercase().as_str() {
                    "normal" => filters.push(Box::new(|c| !c.is_pubsub())),
                    "pubsub" => filters.push(Box::new(|c| c.is_pubsub())),
                    "master" | "replica" | "slave" => filters.push(Box::new(|_| false)),
                    _ => return Reply::err(format!("Unknown client type '{v}'")),
                },
                b"SKIPME" => match v.to_ascii_lowercase().as_str() {
                    "yes" => skipme = true,
                    "no" => skipme = false,
                    _ => return Reply::err("syntax error"),
                },
                b"MAXAGE" => match parse_i64(&pair[1]) {
                    Some(age) if age >= 0 => filters.push(Box::new(move |c| c.age() >= age as u64)),
                    _ => return Reply::err("syntax error"),
                },
                _ => return Reply::err("syntax error"),
            }
        }
        let mut killed = 0;
        for c in clients {
            if skipme && c.id == self.id {
                continue;
            }
            if filters.iter().all(|f| f(&c)) {
                c.kill();
                killed += 1;
            }
        }
        Reply::Int(killed)
    }

    /// `LATENCY LATEST | HISTORY event | RESET [event ...] | HELP`.
    pub(super) fn latency(&self, a: &[Bytes]) -> Reply {
        let l = &self.shared.latency;
        let sub = a[1].to_ascii_lowercase();
        match (sub.as_slice(), a.len()) {
            (b"latest", 2) => l.latest(),
            (b"history", 3) => l.history(&a[2]),
            (b"reset", _) => Reply::Int(l.reset(&a[2..])),
            (b"help", 2) => help_reply(LATENCY_HELP),
            (b"latest" | b"history" | b"help", _) => {
                wrong_arity(&format!("latency|{}", String::from_utf8_lossy(&sub)))
            }
            _ => unknown_subcommand(&a[1], "LATENCY"),
        }
    }

    /// `SLOWLOG GET [count] | LEN | RESET | HELP`.
    pub(super) fn slowlog(&self, a: &[Bytes]) -> Reply {
        let log = &self.shared.slowlog;
        let sub = a[1].to_ascii_lowercase();
        match (sub.as_slice(), a.len()) {
            (b"get", 2) => log.get(None),
            (b"get", 3) => match parse_i64(&a[2]) {
                Some(n) if n >= -1 => log.get(Some(n)),
                Some(_) => Reply::err("count should be greater than or equal to -1"),
                None => Reply::err(crate::cmd::NOT_INT),
            },
            (b"len", 2) => Reply::Int(log.len() as i64),
            (b"reset", 2) => {
                log.reset();
                Reply::Ok
            }
            (b"help", 2) => help_reply(SLOWLOG_HELP),
            (b"get" | b"len" | b"reset" | b"help", _) => {
                wrong_arity(&format!("slowlog|{}", String::from_utf8_lossy(&sub)))
            }
            _ => unknown_subcommand(&a[1], "SLOWLOG"),
        }
    }

    pub(super) fn config(&self, a: &[Bytes]) -> Reply {
        let sub = a.get(1).map(|s| s.to_ascii_lowercase()).unwrap_or_default();
        match sub.as_slice() {
            b"get" if a.len() >= 3 => {
                let cfg = &self.shared.config;
                let busy = crate::script::BUSY_THRESHOLD.as_millis().to_string();
                let items: Vec<(&str, String)> = vec![
                    ("appendonly", "yes".into()),
                    ("loglevel", crate::log::level().name().into()),
                    (
                        "logfile",
                        crate::log::logfile()
                            .map(|p| p.display().to_string())
                            .unwrap_or_default(),
                    ),
                    (
                        "appendfsync",
                        format!("{:?}", cfg.appendfsync).to_ascii_lowercase(),
                    ),
                    ("save", String::new()),
                    ("databases", self.shared.store.databases().to_string()),
                    (
                        "maxclients",
                        self.shared.maxclients.load(Ordering::Relaxed).to_string(),
                    ),
                    ("port", self.shared.port.to_string()),
                    ("bind", cfg.bind.to_string()),
                    ("proto-max-bulk-len", cfg.proto_max_bulk_len.to_string()),
                    (
                        "client-query-buffer-limit",
                        cfg.client_query_buffer_limit.to_string(),
                    ),
                    ("dir", cfg.dir.display().to_string()),
                    (
                        "aclfile",
                        cfg.aclfile
                            .as_ref()
                            .map(|p| p.display().to_string())
                            .unwrap_or_default(),
                    ),
                    (
                        "requirepass",
                        self.shared.requirepass.read().clone().unwrap_or_default(),
                    ),
                    // Clients from other hosts are refused without a password.
                    ("protected-mode", "yes".into()),
                    (
                        "cluster-enabled",
                        if self.cluster.is_some() { "yes" } else { "no" }.into(),
                    ),
                    ("io-threads", cfg.threads.to_string()),
                    // Nothing is evicted and no memory limit applies.
                    ("maxmemory", "0".into()),
                    ("maxmemory-policy", "noeviction".into()),
                    (
                        "notify-keyspace-events",
                        crate::notify::format(self.shared.store.notifier().flags()),
                    ),
                    // Idle clients are never closed.
                    ("timeout", "0".into()),
                    ("busy-reply-threshold", busy.clone()),
                    ("lua-time-limit", busy),
                    // The thresholds OBJECT ENCODING answers by.
                    ("hash-max-listpack-entries", "128".into()),
                    ("hash-max-listpack-value", "64".into()),
                    ("zset-max-listpack-entries", "128".into()),
                    ("zset-max-listpack-value", "64".into()),
                    ("set-max-intset-entries", "512".into()),
                    ("list-max-listpack-size", "-2".into()),
                    (
                        "slowlog-log-slower-than",
                        self.shared.slowlog.slower_than().to_string(),
                    ),
                    ("slowlog-max-len", self.shared.slowlog.max_len().to_string()),
                    (
                        "latency-monitor-threshold",
                        self.shared.latency.threshold_ms().to_string(),
                    ),
                ];
                let pairs = items
                    .into_iter()
                    .filter(|(k, _)| {
                        a[2..]
                            .iter()
                            .any(|p| crate::glob::matches(&p.to_ascii_lowercase(), k.as_bytes()))
                    })
                    .map(|(k, v)| (Reply::bulk(k.to_string()), Reply::bulk(v)))
                    .collect();
                Reply::Map(pairs)
            }
            b"get" => wrong_arity("config|get"),
            // The settings that change at run time; the rest of Redis's are not here yet.
            b"set" if a.len() >= 4 && a.len().is_multiple_of(2) => {
                let mut level = None;
                let mut slower_than = None;
                let mut max_len = None;
                let mut latency = None;
                let mut password = None;
                let mut maxclients = None;
                let mut notify = None;
                for pair in a[2..].chunks(2) {
                    let name = String::from_utf8_lossy(&pair[0]).to_ascii_lowercase();
                    let value = String::from_utf8_lossy(&pair[1]);
                    let bad = || {
                        Reply::err(format!(
                            "CONFIG SET failed (possibly related to argument '{name}') - argument couldn't be parsed into an integer"
                        ))
                    };
                    match name.as_str() {
                        "slowlog-log-slower-than" => match value.parse::<i64>() {
                            Ok(n) => slower_than = Some(n),
                            Err(_) => return bad(),
                        },
                        "latency-monitor-threshold" => match value.parse::<u64>() {
                            Ok(n) => latency = Some(n),
                            Err(_) => return bad(),
                        },
                        "requirepass" => {
                            password = Some((!pair[1].is_empty()).then(|| value.to_string()));
                        }
                        "maxclients" => match value.parse::<usize>() {
                            Ok(n) if n >= 1 => maxclients = Some(n),
                            _ => return bad(),
                        },
                        // What this server always is: setting it to that is accepted, any
                        // other value refused, rather than silently ignored.
                        "save" | "appendonly" | "maxmemory" | "maxmemory-policy" => {
                            let fixed = match name.as_str() {
                                "save" => "",
                                "appendonly" => "yes",
                                "maxmemory" => "0",
                                _ => "noeviction",
                            };
                            if !value.eq_ignore_ascii_case(fixed) {
                                return Reply::err(format!(
                                    "CONFIG SET failed (possibly related to argument '{name}') - bloomkv-server only runs with {name} '{fixed}'"
                                ));
                            }
                        }
                        "notify-keyspace-events" => match crate::notify::parse(&pair[1]) {
                            Some(f) => notify = Some(f),
                            None => return Reply::err(crate::notify::BAD_FLAGS),
                        },
                        "slowlog-max-len" => match value.parse::<u32>() {
                            Ok(n) => max_len = Some(n as usize),
                            Err(_) => return bad(),
                        },
                        "loglevel" => match crate::log::Level::parse(&value) {
                            Some(l) => level = Some(l),
                            None => {
                                return Reply::err(
                                    "CONFIG SET failed (possibly related to argument 'loglevel') - argument(s) must be one of the following: debug, verbose, notice, warning",
                                );
                            }
                        },
                        // Fixed at start in Redis too.
                        "aclfile" | "databases" | "io-threads" | "logfile" => {
                            return Reply::err(format!(
                                "CONFIG SET failed (possibly related to argument '{name}') - can't set immutable config"
                            ));
                        }
                        _ => {
                            return Reply::err(format!(
                                "Unknown option or number of arguments for CONFIG SET - '{name}'"
                            ));
                        }
                    }
                }
                if let Some(n) = slower_than {
                    self.shared.slowlog.set_slower_than(n);
                }
                if let Some(n) = max_len {
                    self.shared.slowlog.set_max_len(n);
                }
                if let Some(n) = latency {
                    self.shared.latency.set_threshold_ms(n);
                }
                if let Some(l) = level {
                    crate::log::set_level(l);
                }
                if let Some(p) = password {
                    // Connections already authenticated stay so, as in Redis.
                    self.shared.acl.set_default_password(p.as_deref());
                    *self.shared.requirepass.write() = p;
                }
                if let Some(n) = maxclients {
                    self.shared.maxclients.store(n, Ordering::Relaxed);
                }
                if let Some(f) = notify {
                    self.shared.store.notifier().set_flags(f);
                }
                Reply::Ok
            }
            b"set" => wrong_arity("config|set"),
            b"resetstat" if a.len() == 2 => {
                self.shared.reset_stats();
                Reply::Ok
            }
            b"resetstat" => wrong_arity("config|resetstat"),
            b"help" => help_reply(CONFIG_HELP),
            _ => unknown_subcommand(a.get(1).map_or(&b""[..], |s| &s[..]), "CONFIG"),
        }
    }
}

/// One condition of CLIENT KILL's filter form.
type Filter = Box<dyn Fn(&crate::clients::ClientEntry) -> bool>;

/// Redis's reply to an unknown subcommand: the argument as given, at most 128 bytes of it.
pub(crate) fn unknown_subcommand(sub: &[u8], cmd: &str) -> Reply {
    let shown = String::from_utf8_lossy(&sub[..sub.len().min(128)]).into_owned();
    Reply::err(format!("unknown subcommand '{shown}'. Try {cmd} HELP."))
}

/// A HELP reply: its lines as status replies, as Redis sends them.
fn help_reply(lines: &[&str]) -> Reply {
    Reply::Array(
        lines
            .iter()
            .map(|l| Reply::Status((*l).to_string()))
            .collect(),
    )
}

const CLIENT_HELP: &[&str] = &[
    "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "    * ID <client-id>",
    "      Kill connections by client id.",
    "    * MAXAGE <maxage>",
    "      Kill connections older than the specified age.",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "    * ID <client-id> [<client-id> ...]",
    "      Return clients of specified IDs only.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "SETINFO <option> <value>",
    "    Set client meta attr. Options are:",
    "    * LIB-NAME: the client lib name.",
    "    * LIB-VER: the client lib version.",
    "NO-EVICT (ON|OFF)",
    "    Accepted for compatibility (this server never evicts).",
    "NO-TOUCH (ON|OFF)",
    "    Accepted for compatibility.",
    "PAUSE <timeout> [WRITE|ALL]",
    "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    "UNPAUSE",
    "    Stop the current client pause, resuming traffic.",
    "HELP",
    "    Print this help.",
];

const LATENCY_HELP: &[&str] = &[
    "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HELP",
    "    Print this help.",
];

const SLOWLOG_HELP: &[&str] = &[
    "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET [<count>]",
    "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
    "    Entries are made of:",
    "    id, timestamp, time in microseconds, arguments array, client IP and port,",
    "    client name",
    "LEN",
    "    Return the length of the slowlog.",
    "RESET",
    "    Reset the slowlog.",
    "HELP",
    "    Print this help.",
];

const CONFIG_HELP: &[&str] = &[
    "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value> [<directive> <value> ...]",
    "    Set the configuration <directive> to <value> (bloomkv-server: loglevel, requirepass,",
    "    maxclients, slowlog-log-slower-than, slowlog-max-len, latency-monitor-threshold).",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "HELP",
    "    Print this help.",
];

/// Client names: printable ASCII without spaces (Redis's rule).
fn valid_name(n: &[u8]) -> bool {
    n.iter().all(|&c| (b'!'..=b'~').contains(&c))
}

fn command_info(c: &Command) -> Reply {
    let (first, last, step, movable) = cmd::getkeys::reported(c);
    let mut flags: Vec<Reply> = c.flags.iter().map(|f| Reply::Status((*f).into())).collect();
    if movable && !c.flags.contains(&"movablekeys") {
        flags.push(Reply::Status("movablekeys".into()));
    }
    Reply::Array(vec![
        Reply::bulk(c.name),
        Reply::Int(i64::from(c.arity)),
        Reply::Set(flags),
        Reply::Int(i64::from(first)),
        Reply::Int(i64::from(last)),
        Reply::Int(i64::from(step)),
        Reply::Set(Vec::new()),
        Reply::Set(Vec::new()),
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
    ])
}

fn command_doc(c: &Command) -> Reply {
    Reply::Map(vec![
        (Reply::bulk("summary"), Reply::bulk(c.summary)),
        (Reply::bulk("since"), Reply::bulk("1.0.0")),
        (Reply::bulk("group"), Reply::bulk(c.group)),
    ])
}

/// `COMMAND GETKEYS command arg ...`: the keys of a request, as Redis finds them.
fn getkeys(req: &[Bytes]) -> Reply {
    let Some(c) = cmd::lookup(&req[0]) else {
        return Reply::err("Invalid command specified");
    };
    if !cmd::getkeys::has_keys(c, req) {
        return Reply::err("The command has no key arguments");
    }
    if !c.arity_ok(req.len()) {
        return Reply::err("Invalid number of arguments specified for command");
    }
    let no_mandatory_keys = c.flags.contains(&"no_mandatory_keys");
    match cmd::getkeys::positions(c, req) {
        Some(p) if !p.is_empty() || no_mandatory_keys => {
            Reply::Array(p.into_iter().map(|i| Reply::Bulk(req[i].clone())).collect())
        }
        None if no_mandatory_keys => Reply::Array(Vec::new()),
        _ => Reply::err("Invalid arguments specified for command"),
    }
}

/// `COMMAND [COUNT | LIST | INFO name... | DOCS name... | GETKEYS command arg ...]`
pub(super) fn command(a: &[Bytes]) -> Reply {
    let Some(sub) = a.get(1) else {
        return Reply::Array(COMMANDS.iter().map(command_info).collect());
    };
    let pick = |names: &[Bytes]| -> Vec<&'static Command> {
        if names.is_empty() {
            COMMANDS.iter().collect()
        } else {
            names.iter().filter_map(|n| cmd::lookup(n)).collect()
        }
    };
    match sub.to_ascii_lowercase().as_slice() {
        b"count" if a.len() == 2 => Reply::Int(COMMANDS.len() as i64),
        b"list" => Reply::Array(COMMANDS.iter().map(|c| Reply::bulk(c.name)).collect()),
        b"info" => {
            if a.len() == 2 {
                return Reply::Array(COMMANDS.iter().map(command_info).collect());
            }
            Reply::Array(
                a[2..]
                    .iter()
                    .map(|n| cmd::lookup(n).map_or(Reply::NilArray, command_info))
                    .collect(),
            )
        }
        b"docs" => Reply::Map(
            pick(&a[2..])
                .into_iter()
                .map(|c| (Reply::bulk(c.name), command_doc(c)))
                .collect(),
        ),
        b"getkeys" if a.len() >= 4 => getkeys(&a[2..]),
        b"getkeys" => wrong_arity("command|getkeys"),
        b"count" => wrong_arity("command|count"),
        _ => unknown_subcommand(sub, "COMMAND"),
    }
}
