//! Connection-level commands that read or change the connection's state or describe the
//! server: AUTH, HELLO, CLIENT, CONFIG GET and COMMAND.

use bytes::Bytes;

use super::{Conn, WRONGPASS, wrong_arity};
use crate::cmd::{self, COMMANDS, Command, parse_i64};
use crate::resp::Reply;

impl Conn {
    fn password_ok(&self, user: &[u8], pass: &[u8]) -> bool {
        let Some(want) = self.shared.config.requirepass.as_deref() else {
            // Without a password the default user takes any (Redis's `nopass`).
            return user == b"default";
        };
        // Compare without an early exit, so timing does not tell how much of it matched.
        let want = want.as_bytes();
        let mut diff = (want.len() != pass.len()) as u8;
        for (i, w) in want.iter().enumerate() {
            diff |= w ^ pass.get(i).copied().unwrap_or(0);
        }
        user == b"default" && diff == 0
    }

    pub(super) fn auth(&mut self, a: &[Bytes]) -> Reply {
        let (user, pass) = match a.len() {
            2 => (&b"default"[..], &a[1][..]),
            3 => (&a[1][..], &a[2][..]),
            _ => return Reply::err("syntax error"),
        };
        if self.shared.config.requirepass.is_none() && a.len() == 2 {
            return Reply::err(
                "AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?",
            );
        }
        if self.password_ok(user, pass) {
            self.authed = true;
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
        if let Some((user, pass)) = auth {
            if !self.password_ok(&user, &pass) {
                return Reply::Error(WRONGPASS.into());
            }
            self.authed = true;
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
                Reply::Ok
            }
            b"info" => {
                if !arity(2) {
                    return wrong();
                }
                Reply::Verbatim(format!("{}\n", self.client_line()))
            }
            _ => Reply::err(format!(
                "unknown subcommand '{}'. Try CLIENT HELP.",
                String::from_utf8_lossy(&a[1])
            )),
        }
    }

    fn client_line(&self) -> String {
        let s = |b: &Option<Bytes>| b.as_ref().map(|b| String::from_utf8_lossy(b).into_owned());
        format!(
            "id={} addr={} name={} resp={} multi={} lib-name={} lib-ver={}",
            self.id,
            self.peer,
            s(&self.name).unwrap_or_default(),
            self.proto,
            self.multi.as_ref().map_or(-1, |q| q.len() as i64),
            s(&self.lib_name).unwrap_or_default(),
            s(&self.lib_ver).unwrap_or_default(),
        )
    }

    pub(super) fn config(&self, a: &[Bytes]) -> Reply {
        let sub = a.get(1).map(|s| s.to_ascii_lowercase()).unwrap_or_default();
        match sub.as_slice() {
            b"get" if a.len() >= 3 => {
                let cfg = &self.shared.config;
                let items: [(&str, String); 8] = [
                    ("appendonly", "yes".into()),
                    (
                        "appendfsync",
                        format!("{:?}", cfg.appendfsync).to_ascii_lowercase(),
                    ),
                    ("save", String::new()),
                    ("databases", "1".into()),
                    ("maxclients", cfg.maxclients.to_string()),
                    ("port", self.shared.port.to_string()),
                    ("bind", cfg.bind.to_string()),
                    ("proto-max-bulk-len", cfg.proto_max_bulk_len.to_string()),
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
            _ => Reply::err(format!(
                "unknown subcommand '{}'. Try CONFIG HELP.",
                String::from_utf8_lossy(a.get(1).map_or(&b""[..], |s| &s[..]))
            )),
        }
    }
}

/// Client names: printable ASCII without spaces (Redis's rule).
fn valid_name(n: &[u8]) -> bool {
    n.iter().all(|&c| (b'!'..=b'~').contains(&c))
}

fn command_info(c: &Command) -> Reply {
    Reply::Array(vec![
        Reply::bulk(c.name),
        Reply::Int(i64::from(c.arity)),
        Reply::Set(c.flags.iter().map(|f| Reply::Status((*f).into())).collect()),
        Reply::Int(i64::from(c.first_key)),
        Reply::Int(i64::from(c.last_key)),
        Reply::Int(i64::from(c.step)),
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

/// `COMMAND [COUNT | LIST | INFO name... | DOCS name...]`
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
        b"count" => wrong_arity("command|count"),
        _ => Reply::err(format!(
            "unknown subcommand '{}'. Try COMMAND HELP.",
            String::from_utf8_lossy(sub)
        )),
    }
}
