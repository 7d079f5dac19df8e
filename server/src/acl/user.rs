//! One ACL user: whether it is on, its passwords (SHA-256), and what it may run and touch
//! (a root selector and any further selectors, as Redis 7: a command is allowed when one of
//! them allows the command, its keys and its channels). Rules are Redis's `ACL SETUSER`
//! words; [`User::describe`] writes them back in Redis's canonical form.

use bytes::Bytes;
use sha2::{Digest, Sha256};

use super::category::{CATEGORIES, in_category};
use super::key_access;
use crate::cmd::{self, COMMANDS, Command};
use crate::glob;

/// Read and write access a key pattern grants (`~` both, `%R~` read, `%W~` write).
#[derive(Clone, Debug, PartialEq, Eq)]
struct KeyPattern {
    read: bool,
    write: bool,
    pattern: Vec<u8>,
}

/// What a selector allows: commands (one flag per entry of the command table, plus
/// subcommands allowed or denied apart from their command), keys and channels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    allowed: Vec<bool>,
    /// Set by `+@all`: commands the table will gain are allowed too (Redis's future bit).
    all_future: bool,
    /// `(command index, lowercase subcommand, allowed)`.
    subs: Vec<(usize, Vec<u8>, bool)>,
    /// The command rules since the last `+@all` or `-@all`, as Redis 7.2 keeps them for
    /// ACL LIST and GETUSER: a later rule for the same command or category replaces an
    /// earlier one.
    rules: Vec<String>,
    keys: Vec<KeyPattern>,
    all_keys: bool,
    channels: Vec<Vec<u8>>,
    all_channels: bool,
}

/// Why a selector refuses a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Denied {
    /// The command (its name, `cmd|sub` for a subcommand).
    Command(String),
    /// This key.
    Key(Bytes),
    /// This channel.
    Channel(Bytes),
}

impl Selector {
    /// Nothing allowed (`-@all resetkeys resetchannels`).
    fn none() -> Selector {
        Selector {
            allowed: vec![false; COMMANDS.len()],
            all_future: false,
            subs: Vec::new(),
            rules: Vec::new(),
            keys: Vec::new(),
            all_keys: false,
            channels: Vec::new(),
            all_channels: false,
        }
    }

    /// Everything allowed (`+@all ~* &*`).
    fn all() -> Selector {
        Selector {
            allowed: vec![true; COMMANDS.len()],
            all_future: true,
            all_keys: true,
            all_channels: true,
            ..Selector::none()
        }
    }

    fn unrestricted(&self) -> bool {
        self.all_keys
            && self.all_channels
            && self.subs.is_empty()
            && self.allowed.iter().all(|a| *a)
    }

    /// Applies one selector rule.
    fn apply(&mut self, rule: &[u8]) -> Result<(), String> {
        let lower = rule.to_ascii_lowercase();
        match lower.as_slice() {
            b"allkeys" | b"~*" => {
                self.all_keys = true;
                self.keys.clear();
            }
            b"resetkeys" => {
                self.all_keys = false;
                self.keys.clear();
            }
            b"allchannels" | b"&*" => {
                self.all_channels = true;
                self.channels.clear();
            }
            b"resetchannels" => {
                self.all_channels = false;
                self.channels.clear();
            }
            b"allcommands" | b"+@all" => self.set_all(true),
            b"nocommands" | b"-@all" => self.set_all(false),
            _ if rule.starts_with(b"~") || rule.starts_with(b"%") => self.add_keys(rule)?,
            _ if rule.starts_with(b"&") => {
                if self.all_channels {
                    return Err("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels".into());
                }
                if has_space(&rule[1..]) {
                    return Err("Syntax error".into());
                }
                let pattern = rule[1..].to_vec();
                if !self.channels.contains(&pattern) {
                    self.channels.push(pattern);
                }
            }
            [sign @ (b'+' | b'-'), b'@', cat @ ..] => {
                let cat = String::from_utf8_lossy(cat);
                if !CATEGORIES.contains(&cat.as_ref()) {
                    return Err(UNKNOWN.into());
                }
                for (i, c) in COMMANDS.iter().enumerate() {
                    if in_category(c, &cat) {
                        self.set_command(i, *sign == b'+');
                    }
                }
                let rule = format!("{}@{cat}", *sign as char);
                self.rules.retain(|r| r[1..] != rule[1..]);
                self.rules.push(rule);
            }
            [sign @ (b'+' | b'-'), name @ ..] => self.command_rule(*sign == b'+', name)?,
            _ => return Err("Syntax error".into()),
        }
        Ok(())
    }

    fn set_all(&mut self, allow: bool) {
        self.allowed.iter_mut().for_each(|a| *a = allow);
        self.all_future = allow;
        self.subs.clear();
        self.rules.clear();
    }

    fn set_command(&mut self, i: usize, allow: bool) {
        self.allowed[i] = allow;
        self.subs.retain(|(c, _, _)| *c != i);
    }

    /// `+cmd`, `-cmd`, `+cmd|sub`, `-cmd|sub`.
    fn command_rule(&mut self, allow: bool, name: &[u8]) -> Result<(), String> {
        let (name, sub) = match name.iter().position(|&b| b == b'|') {
            Some(p) => (&name[..p], Some(name[p + 1..].to_ascii_lowercase())),
            None => (name, None),
        };
        let i = cmd::index(name).ok_or(UNKNOWN)?;
        let sign = if allow { '+' } else { '-' };
        let name = COMMANDS[i].name;
        let Some(sub) = sub else {
            self.set_command(i, allow);
            let sub_prefix = format!("{name}|");
            self.rules
                .retain(|r| r[1..] != *name && !r[1..].starts_with(&sub_prefix));
            self.rules.push(format!("{sign}{name}"));
            return Ok(());
        };
        if sub.is_empty() {
            return Err(UNKNOWN.into());
        }
        if allow && self.allowed[i] {
            return Err("Adding a subcommand of a command already fully added is not allowed. Remove the command to start. Example: -DEBUG +DEBUG|DIGEST".into());
        }
        self.subs.retain(|(c, s, _)| !(*c == i && *s == sub));
        let rule = format!("{sign}{name}|{}", String::from_utf8_lossy(&sub));
        self.rules.retain(|r| r[1..] != rule[1..]);
        self.rules.push(rule);
        // A subcommand rule that only repeats its command's state is no rule.
        if allow != self.allowed[i] {
            self.subs.push((i, sub, allow));
        }
        Ok(())
    }

    fn add_keys(&mut self, rule: &[u8]) -> Result<(), String> {
        let (read, write, pattern) = if let Some(p) = rule.strip_prefix(b"~") {
            (true, true, p)
        } else {
            let tilde = rule.iter().position(|&b| b == b'~').ok_or("Syntax error")?;
            let flags = rule[1..tilde].to_ascii_uppercase();
            if flags.is_empty() || flags.iter().any(|f| !matches!(f, b'R' | b'W')) {
                return Err("Syntax error".into());
            }
            (
                flags.contains(&b'R'),
                flags.contains(&b'W'),
                &rule[tilde + 1..],
            )
        };
        if has_space(pattern) {
            return Err("Syntax error".into());
        }
        if self.all_keys {
            return Err("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns".into());
        }
        if read && write && pattern == b"*" {
            self.all_keys = true;
            self.keys.clear();
            return Ok(());
        }
        let key = KeyPattern {
            read,
            write,
            pattern: pattern.to_vec(),
        };
        if !self.keys.contains(&key) {
            self.keys.push(key);
        }
        Ok(())
    }

    /// Whether this selector allows `args` (command `c`, at `pos` in the table).
    pub fn check(&self, pos: usize, c: &Command, args: &[Bytes]) -> Result<(), Denied> {
        let sub = args.get(1).map(|s| s.to_ascii_lowercase());
        let sub_rule = sub.as_ref().and_then(|s| {
            self.subs
                .iter()
                .find(|(i, name, _)| *i == pos && name == s)
                .map(|(_, _, allow)| *allow)
        });
        if !sub_rule.unwrap_or(self.allowed[pos]) {
            // Redis names a container command's subcommand, which is a command of its own.
            return Err(Denied::Command(match sub {
                Some(s) if sub_rule.is_some() || CONTAINERS.contains(&c.name) => {
                    format!("{}|{}", c.name, String::from_utf8_lossy(&s))
                }
                _ => c.name.to_string(),
            }));
        }
        if !self.all_keys && key_access::has_keys(c) {
            let positions = cmd::getkeys::positions(c, args).unwrap_or_default();
            for (nth, i) in positions.into_iter().enumerate() {
                let key = &args[i];
                let need = key_access::need(c, args, nth);
                let ok = self.keys.iter().any(|k| {
                    (k.read || !need.read)
                        && (k.write || !need.write)
                        && glob::matches(&k.pattern, key)
                });
                if !ok {
                    return Err(Denied::Key(key.clone()));
                }
            }
        }
        if !self.all_channels {
            let (literal, channels): (bool, &[Bytes]) = match c.name {
                "publish" | "spublish" => (false, args.get(1..2).unwrap_or_default()),
                "subscribe" | "ssubscribe" => (false, args.get(1..).unwrap_or_default()),
                "psubscribe" => (true, args.get(1..).unwrap_or_default()),
                _ => (false, &[]),
            };
            for ch in channels {
                let ok = self.channels.iter().any(|p| {
                    if literal {
                        p == ch
                    } else {
                        glob::matches(p, ch)
                    }
                });
                if !ok {
                    return Err(Denied::Channel(ch.clone()));
                }
            }
        }
        Ok(())
    }

    /// The keys part of a description: `~a* %R~b*`, `~*`, or nothing.
    fn describe_keys(&self) -> String {
        if self.all_keys {
            return "~*".into();
        }
        let words: Vec<String> = self
            .keys
            .iter()
            .map(|k| {
                let flags = match (k.read, k.write) {
                    (true, true) => "",
                    (true, false) => "%R",
                    _ => "%W",
                };
                format!("{flags}~{}", String::from_utf8_lossy(&k.pattern))
            })
            .collect();
        words.join(" ")
    }

    /// The channels part: `&*`, or the patterns (`&a &b`, or nothing).
    fn describe_channels(&self) -> String {
        if self.all_channels {
            return "&*".into();
        }
        let words: Vec<String> = self
            .channels
            .iter()
            .map(|c| format!("&{}", String::from_utf8_lossy(c)))
            .collect();
        words.join(" ")
    }

    /// The commands part, as Redis 7.2 writes it: `+@all` or `-@all`, then the rules since.
    fn describe_commands(&self) -> String {
        let mut words = vec![if self.all_future { "+@all" } else { "-@all" }.to_string()];
        words.extend(self.rules.iter().cloned());
        words.join(" ")
    }

    /// The whole selector as ACL LIST writes it: keys, channels (`resetchannels` first when
    /// not all), commands.
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        let keys = self.describe_keys();
        if !keys.is_empty() {
            parts.push(keys);
        }
        if self.all_channels {
            parts.push("&*".into());
        } else {
            parts.push("resetchannels".into());
            let ch = self.describe_channels();
            if !ch.is_empty() {
                parts.push(ch);
            }
        }
        parts.push(self.describe_commands());
        parts.join(" ")
    }
}

pub(super) const UNKNOWN: &str = "Unknown command or category name in ACL";

/// Redis 7's container commands: each subcommand is a command of its own there, so a
/// refusal names `client|list`, not `client`.
const CONTAINERS: &[&str] = &[
    "acl", "client", "cluster", "command", "config", "function", "latency", "memory", "module",
    "object", "pubsub", "script", "slowlog", "xgroup", "xinfo",
];

/// Whether a pattern holds a space or a NUL, which Redis refuses in patterns (an ACL file's
/// line could not hold it).
fn has_space(pattern: &[u8]) -> bool {
    pattern.iter().any(|&b| b.is_ascii_whitespace() || b == 0)
}

/// Why a list of rules was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuleError {
    /// A selector opened by this word (`(+get`) is never closed.
    Unmatched(String),
    /// This rule is bad, for this reason (Redis's words, e.g. `Syntax error`).
    Bad {
        /// The rule as given.
        rule: String,
        /// Why.
        why: String,
    },
}

/// `rules` with each selector that spans several words (`(+get`, `~k)`) joined into one,
/// with single spaces, as Redis joins them.
pub(super) fn merge_selectors(rules: &[Bytes]) -> Result<Vec<Bytes>, RuleError> {
    let mut out = Vec::with_capacity(rules.len());
    let mut open: Option<Vec<u8>> = None;
    for rule in rules {
        if let Some(sel) = open.as_mut() {
            sel.push(b' ');
            sel.extend_from_slice(rule);
            if rule.ends_with(b")") {
                out.extend(open.take().map(Bytes::from));
            }
        } else if rule.starts_with(b"(") && !rule.ends_with(b")") {
            open = Some(rule.to_vec());
        } else {
            out.push(rule.clone());
        }
    }
    match open {
        Some(sel) => {
            let first = sel.split(|&b| b == b' ').next().unwrap_or_default();
            Err(RuleError::Unmatched(
                String::from_utf8_lossy(first).into_owned(),
            ))
        }
        None => Ok(out),
    }
}

/// One user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    /// Its name.
    pub name: String,
    /// `on` (may authenticate) or `off`.
    pub enabled: bool,
    /// Any password is accepted.
    pub nopass: bool,
    /// `sanitize-payload` or `skip-sanitize-payload`, once set (shown only).
    sanitize: Option<bool>,
    /// SHA-256 of each password, in lowercase hex, in the order they were added.
    passwords: Vec<String>,
    root: Selector,
    selectors: Vec<Selector>,
    unrestricted: bool,
}

/// The hex SHA-256 of a password, as Redis keeps and shows it.
pub fn password_hash(password: &[u8]) -> String {
    Sha256::digest(password)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl User {
    /// A new user as `ACL SETUSER name` makes it: off, no password, nothing allowed.
    pub fn new(name: &str) -> User {
        User {
            name: name.to_string(),
            enabled: false,
            nopass: false,
            sanitize: None,
            passwords: Vec::new(),
            root: Selector::none(),
            selectors: Vec::new(),
            unrestricted: false,
        }
    }

    /// Redis's `default` user: on, allowed everything, with `password` (none: `nopass`).
    pub fn default_user(password: Option<&str>) -> User {
        let mut u = User {
            enabled: true,
            root: Selector::all(),
            ..User::new("default")
        };
        u.set_password(password);
        u.finish();
        u
    }

    /// `resetpass` then `>password`, or `nopass` without one (CONFIG SET requirepass).
    pub fn set_password(&mut self, password: Option<&str>) {
        self.passwords.clear();
        match password {
            Some(p) => {
                self.nopass = false;
                self.passwords.push(password_hash(p.as_bytes()));
            }
            None => self.nopass = true,
        }
        self.finish();
    }

    /// Whether the user allows everything everywhere (no check is needed).
    pub fn unrestricted(&self) -> bool {
        self.unrestricted
    }

    fn finish(&mut self) {
        self.unrestricted = self.root.unrestricted();
    }

    /// Applies `ACL SETUSER` rules in order; on an error the user is unchanged (the caller
    /// applies them to a copy) and the error names the rule.
    pub fn apply(&mut self, rules: &[Bytes]) -> Result<(), String> {
        self.apply_rules(rules).map_err(|e| match e {
            RuleError::Unmatched(start) => {
                format!("Unmatched parenthesis in acl selector starting at '{start}'.")
            }
            RuleError::Bad { rule, why } => {
                format!("Error in ACL SETUSER modifier '{rule}': {why}")
            }
        })
    }

    /// Applies rules in order, a selector split over several words (an ACL file's line is
    /// split at spaces, and clients may send `(+get` and `~k)` apart) joined first; the
    /// error says which rule failed and why, for the caller to word.
    pub fn apply_rules(&mut self, rules: &[Bytes]) -> Result<(), RuleError> {
        for rule in merge_selectors(rules)? {
            self.apply_one(&rule).map_err(|why| RuleError::Bad {
                rule: String::from_utf8_lossy(&rule).into_owned(),
                why,
            })?;
        }
        self.finish();
        Ok(())
    }

    /// Applies one rule (a whole selector counts as one); the error is Redis's reason
    /// alone, without the rule. On an error the user may be half-changed, as with `apply`.
    pub fn apply_rule(&mut self, rule: &Bytes) -> Result<(), String> {
        self.apply_one(rule)?;
        self.finish();
        Ok(())
    }

    fn apply_one(&mut self, rule: &Bytes) -> Result<(), String> {
        let lower = rule.to_ascii_lowercase();
        match lower.as_slice() {
            b"on" => self.enabled = true,
            b"off" => self.enabled = false,
            b"nopass" => {
                self.nopass = true;
                self.passwords.clear();
            }
            b"resetpass" => {
                self.nopass = false;
                self.passwords.clear();
            }
            b"sanitize-payload" => self.sanitize = Some(true),
            b"skip-sanitize-payload" => self.sanitize = Some(false),
            b"clearselectors" => self.selectors.clear(),
            b"reset" => {
                let name = std::mem::take(&mut self.name);
                *self = User::new(&name);
                self.sanitize = Some(true);
            }
            _ if rule.starts_with(b">") => {
                let h = password_hash(&rule[1..]);
                self.nopass = false;
                if !self.passwords.contains(&h) {
                    self.passwords.push(h);
                }
            }
            _ if rule.starts_with(b"#") => {
                let h = &rule[1..];
                if h.len() != 64 || !h.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')) {
                    return Err("The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters".into());
                }
                let h = String::from_utf8_lossy(h).into_owned();
                self.nopass = false;
                if !self.passwords.contains(&h) {
                    self.passwords.push(h);
                }
            }
            _ if rule.starts_with(b"<") || rule.starts_with(b"!") => {
                let h = if rule[0] == b'<' {
                    password_hash(&rule[1..])
                } else {
                    String::from_utf8_lossy(&rule[1..]).into_owned()
                };
                let before = self.passwords.len();
                self.passwords.retain(|p| *p != h);
                if self.passwords.len() == before {
                    return Err(
                        "The password you are trying to remove from the user does not exist".into(),
                    );
                }
            }
            _ if rule.starts_with(b"(") => {
                if !rule.ends_with(b")") || rule.len() < 2 {
                    return Err("Unmatched parenthesis in acl selector starting at '('.".into());
                }
                let mut s = Selector::none();
                for word in rule[1..rule.len() - 1].split(|b| b.is_ascii_whitespace()) {
                    if !word.is_empty() {
                        s.apply(word)?;
                    }
                }
                self.selectors.push(s);
            }
            _ => self.root.apply(rule)?,
        }
        Ok(())
    }

    /// Whether `password` opens this user (on, and `nopass` or one of its hashes).
    pub fn password_ok(&self, password: &[u8]) -> bool {
        if !self.enabled {
            return false;
        }
        if self.nopass {
            return true;
        }
        let h = password_hash(password);
        // Compared without an early exit, so timing does not tell how much matched.
        self.passwords.iter().fold(false, |found, p| {
            let same = p.len() == h.len()
                && p.bytes().zip(h.bytes()).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0;
            found | same
        })
    }

    /// Whether the user may run `args` (command `c` at `pos`): its root selector or any
    /// other allows it; otherwise the root selector's reason.
    pub fn check(&self, pos: usize, c: &Command, args: &[Bytes]) -> Result<(), Denied> {
        if self.unrestricted {
            return Ok(());
        }
        let root = self.root.check(pos, c, args);
        if root.is_ok() || self.selectors.iter().any(|s| s.check(pos, c, args).is_ok()) {
            return Ok(());
        }
        root
    }

    /// The user as one line of ACL LIST (`user <name> on #... ~* &* +@all (...)`).
    pub fn describe(&self) -> String {
        let mut parts = vec![format!("user {}", self.name)];
        parts.extend(self.flags());
        parts.extend(self.passwords.iter().map(|p| format!("#{p}")));
        parts.push(self.root.describe());
        parts.extend(self.selectors.iter().map(|s| format!("({})", s.describe())));
        parts.join(" ")
    }

    /// `on`/`off`, `nopass`, the payload flag: ACL GETUSER's `flags`.
    pub fn flags(&self) -> Vec<String> {
        let mut f = vec![if self.enabled { "on" } else { "off" }.to_string()];
        if self.nopass {
            f.push("nopass".into());
        }
        match self.sanitize {
            Some(true) => f.push("sanitize-payload".into()),
            Some(false) => f.push("skip-sanitize-payload".into()),
            None => {}
        }
        f
    }

    /// The password hashes (ACL GETUSER's `passwords`).
    pub fn passwords(&self) -> &[String] {
        &self.passwords
    }

    /// ACL GETUSER's `commands`, `keys` and `channels` of the root selector, and the same
    /// for each other selector.
    pub fn selector_parts(&self) -> ([String; 3], Vec<[String; 3]>) {
        let parts = |s: &Selector| {
            [
                s.describe_commands(),
                s.describe_keys(),
                s.describe_channels(),
            ]
        };
        (
            parts(&self.root),
            self.selectors.iter().map(parts).collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(rules: &str) -> User {
        let mut u = User::new("u");
        // Words split at spaces outside parentheses: a selector is one argument.
        let (mut words, mut depth, mut word) = (Vec::new(), 0, String::new());
        for ch in rules.chars() {
            match ch {
                ' ' if depth == 0 => words.push(Bytes::from(std::mem::take(&mut word))),
                _ => {
                    depth += i32::from(ch == '(') - i32::from(ch == ')');
                    word.push(ch);
                }
            }
        }
        words.push(Bytes::from(word));
        let rules = words;
        u.apply(&rules).expect("rules");
        u
    }

    fn run(u: &User, words: &[&str]) -> Result<(), Denied> {
        let args: Vec<Bytes> = words.iter().map(|w| Bytes::from(w.to_string())).collect();
        let pos = cmd::index(&args[0]).expect("command");
        u.check(pos, &COMMANDS[pos], &args)
    }

    /// Descriptions keep the rules as given, as Redis 7.2 does (7.0 rewrote them into a
    /// minimal form); a later rule for the same command or category replaces the earlier.
    /// The expected lines are the ones the fakeredis suite recorded from Redis.
    #[test]
    fn descriptions_keep_the_rules() {
        for (rules, want) in [
            ("+get +@hash -hset", "-@all +get +@hash -hset"),
            ("+get -get", "-@all -get"),
            ("+@hash +get -@hash", "-@all +get -@hash"),
            ("+@all -get +@string", "+@all -get +@string"),
            ("+@all -@all +get", "-@all +get"),
            ("+client|list +client", "-@all +client"),
            ("+client|list", "-@all +client|list"),
        ] {
            assert_eq!(user(rules).root.describe_commands(), want, "{rules}");
        }
        let u = user("on >p ~a* %R~b* &ch* +get (+set %W~app*) (-hset %W~app*)");
        assert_eq!(
            u.describe(),
            "user u on #148de9c5a7a44d19e56cd9ae1a554bf67847afb0c58f6e12fa29ac7ddfca9940 ~a* %R~b* resetchannels &ch* -@all +get (%W~app* resetchannels -@all +set) (%W~app* resetchannels -@all -hset)"
        );
        assert_eq!(
            user("reset").describe(),
            "user u off sanitize-payload resetchannels -@all"
        );
    }

    #[test]
    fn checks_commands_keys_channels_and_selectors() {
        let u = user("on nopass +get +publish ~a* &c* (+set %W~w*)");
        assert_eq!(run(&u, &["get", "a1"]), Ok(()));
        assert_eq!(run(&u, &["get", "b"]), Err(Denied::Key("b".into())));
        assert_eq!(
            run(&u, &["set", "a1", "v"]),
            Err(Denied::Command("set".into()))
        );
        assert_eq!(run(&u, &["set", "w1", "v"]), Ok(()));
        assert_eq!(run(&u, &["publish", "c1", "m"]), Ok(()));
        assert_eq!(
            run(&u, &["publish", "x", "m"]),
            Err(Denied::Channel("x".into()))
        );
        let r = user("on nopass %R~r* +@all");
        assert_eq!(run(&r, &["get", "r1"]), Ok(()));
        assert_eq!(run(&r, &["set", "r1", "v"]), Err(Denied::Key("r1".into())));
        let s = user("on nopass allkeys -@all +client|list");
        assert_eq!(run(&s, &["client", "list"]), Ok(()));
        assert_eq!(
            run(&s, &["client", "kill", "x"]),
            Err(Denied::Command("client|kill".into()))
        );
    }

    #[test]
    fn bad_rules_are_refused_by_name_and_change_nothing() {
        let mut u = User::new("u");
        let before = u.clone();
        let rules = [Bytes::from("on"), Bytes::from("+nosuch")];
        assert_eq!(
            u.apply(&rules),
            Err(
                "Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL"
                    .into()
            )
        );
        // `apply` stops at the error; callers apply to a copy and keep it only on success.
        assert_ne!(u, before);
        assert!(User::new("x").apply(&[Bytes::from("foo")]).is_err());
        assert!(user("on allkeys").apply(&[Bytes::from("~a")]).is_err());
        assert!(user("on >a").password_ok(b"a"));
        assert!(!user("on >a").password_ok(b"b"));
        assert!(!user("off >a").password_ok(b"a"));
        assert!(user("on >a <a nopass").password_ok(b"zz"));
    }

    #[test]
    fn patterns_with_spaces_are_refused() {
        for rule in ["~a b", "%R~a\tb", "&a b"] {
            assert_eq!(
                User::new("u").apply(&[Bytes::from(rule)]),
                Err(format!(
                    "Error in ACL SETUSER modifier '{rule}': Syntax error"
                ))
            );
        }
    }

    #[test]
    fn a_selector_sent_as_several_words_is_one_rule() {
        let words =
            |s: &str| -> Vec<Bytes> { s.split(' ').map(|w| Bytes::from(w.to_string())).collect() };
        let mut u = User::new("u");
        u.apply(&words("on (+get ~a:*) (+set ~b:*)")).unwrap();
        assert_eq!(
            u.describe(),
            "user u on resetchannels -@all (~a:* resetchannels -@all +get) (~b:* resetchannels -@all +set)"
        );
        assert_eq!(
            User::new("v").apply(&words("on (+get ~a:* +set")),
            Err("Unmatched parenthesis in acl selector starting at '(+get'.".into())
        );
    }
}
