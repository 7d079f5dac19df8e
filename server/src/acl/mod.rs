//! Users and what each may do, as Redis 7's ACL: the registry of users (`default` always
//! among them, its password `--requirepass`), and the log of refusals and failed logins
//! (`ACL LOG`). Per server (Redis Cluster keeps ACLs per node too), in memory, and in the
//! ACL file when the server has one (`--aclfile`).
//!
//! * [`category`]: which commands `@read`, `@hash`, ... hold.
//! * [`user`]: one user's rules, checks and canonical description.
//! * [`file`]: the ACL file's lines.
//! * [`key_access`]: what each key of a command needs a pattern to grant.

pub mod category;
pub mod file;
pub mod key_access;
pub mod user;

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use parking_lot::{Mutex, RwLock};

pub use user::{Denied, User};

/// Most entries ACL LOG keeps (Redis's `acllog-max-len`).
const LOG_MAX: usize = 128;

/// An entry repeats the one before it when they match and come within this long (Redis: 60 s).
const LOG_MERGE_MS: u128 = 60_000;

/// The users and the ACL log.
#[derive(Debug)]
pub struct Acl {
    users: RwLock<BTreeMap<String, Arc<User>>>,
    /// Bumped on every change, so connections know to look their user up again.
    generation: AtomicU64,
    log: Mutex<Log>,
}

#[derive(Debug, Default)]
struct Log {
    entries: VecDeque<LogEntry>,
    next_id: u64,
}

/// One ACL LOG entry.
#[derive(Debug, Clone)]
struct LogEntry {
    id: u64,
    count: u64,
    reason: &'static str,
    context: &'static str,
    object: String,
    username: String,
    client_info: String,
    created: Instant,
    created_unix_ms: u128,
    updated: Instant,
    updated_unix_ms: u128,
}

fn unix_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

impl Acl {
    /// The registry with `default` alone, its password `requirepass`.
    pub fn new(requirepass: Option<&str>) -> Acl {
        let mut users = BTreeMap::new();
        users.insert(
            "default".to_string(),
            Arc::new(User::default_user(requirepass)),
        );
        Acl {
            users: RwLock::new(users),
            generation: AtomicU64::new(0),
            log: Mutex::new(Log::default()),
        }
    }

    /// `ACL LOAD`, and the start of a server with `--aclfile`: every user replaced by the
    /// file's, all or none; `default` as the file defines it, else as a new server's with
    /// no password. Returns the users that were replaced, whose connections Redis closes
    /// (every one but `default`, which changes in place).
    ///
    /// # Errors
    /// Redis's text for every error in the file (then nothing changes).
    pub fn load(&self, path: &Path) -> Result<Vec<String>, String> {
        let mut loaded = file::read(path)?;
        if !loaded.contains_key("default") {
            loaded.insert("default".to_string(), User::default_user(None));
        }
        let loaded = loaded
            .into_iter()
            .map(|(name, u)| (name, Arc::new(u)))
            .collect();
        let old = std::mem::replace(&mut *self.users.write(), loaded);
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(old.into_keys().filter(|n| n != "default").collect())
    }

    /// `ACL SAVE`: writes every user to the file at `path`, replacing it whole.
    ///
    /// # Errors
    /// The file cannot be written.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let text = file::render(self.users.read().values().map(|u| &**u));
        file::write(path, &text)
    }

    /// Changes whenever a user does.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The user called `name`.
    pub fn get(&self, name: &str) -> Option<Arc<User>> {
        self.users.read().get(name).cloned()
    }

    /// Every user, by name.
    pub fn users(&self) -> Vec<Arc<User>> {
        self.users.read().values().cloned().collect()
    }

    /// `ACL SETUSER name rules...`: creates the user if needed; all rules apply or none.
    ///
    /// # Errors
    /// Redis's text for the first bad rule, or for a bad name.
    pub fn set_user(&self, name: &str, rules: &[Bytes]) -> Result<(), String> {
        if name.bytes().any(|b| b.is_ascii_whitespace() || b == 0) {
            return Err("Usernames can't contain spaces or null characters".into());
        }
        let mut users = self.users.write();
        let mut user = users
            .get(name)
            .map_or_else(|| User::new(name), |u| (**u).clone());
        user.apply(rules)?;
        users.insert(name.to_string(), Arc::new(user));
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// `CONFIG SET requirepass`: the default user's password (`None`: `nopass`).
    pub fn set_default_password(&self, password: Option<&str>) {
        let mut users = self.users.write();
        let mut user = users
            .get("default")
            .map_or_else(|| User::default_user(None), |u| (**u).clone());
        user.set_password(password);
        users.insert("default".into(), Arc::new(user));
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// `ACL DELUSER`: removes the users named (never `default`); answers how many there were.
    ///
    /// # Errors
    /// When `default` is among them (then nothing is removed).
    pub fn delete(&self, names: &[String]) -> Result<usize, String> {
        if names.iter().any(|n| n == "default") {
            return Err("The 'default' user cannot be removed".into());
        }
        let mut users = self.users.write();
        let n = names.iter().filter(|n| users.remove(*n).is_some()).count();
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(n)
    }

    /// Records a refusal or failed login: `reason` is `command`, `key`, `channel` or `auth`.
    pub fn log(
        &self,
        reason: &'static str,
        context: &'static str,
        object: &[u8],
        username: &str,
        client_info: String,
    ) {
        let object = String::from_utf8_lossy(object).into_owned();
        let mut log = self.log.lock();
        let now = Instant::now();
        if let Some(e) = log.entries.iter_mut().find(|e| {
            e.reason == reason
                && e.context == context
                && e.object == object
                && e.username == username
                && now.duration_since(e.updated).as_millis() < LOG_MERGE_MS
        }) {
            e.count += 1;
            e.updated = now;
            e.updated_unix_ms = unix_ms();
            e.client_info = client_info;
            return;
        }
        let id = log.next_id;
        log.next_id += 1;
        log.entries.push_front(LogEntry {
            id,
            count: 1,
            reason,
            context,
            object,
            username: username.to_string(),
            client_info,
            created: now,
            created_unix_ms: unix_ms(),
            updated: now,
            updated_unix_ms: unix_ms(),
        });
        log.entries.truncate(LOG_MAX);
    }

    /// `ACL LOG RESET`.
    pub fn reset_log(&self) {
        self.log.lock().entries.clear();
    }

    /// `ACL LOG [count]`: the newest entries first, as maps of Redis 7.2's fields.
    pub fn log_reply(&self, count: usize) -> crate::resp::Reply {
        use crate::resp::Reply;
        let log = self.log.lock();
        let s = |x: &str| Reply::bulk(x.to_string());
        Reply::Array(
            log.entries
                .iter()
                .take(count)
                .map(|e| {
                    Reply::Map(vec![
                        (s("count"), Reply::Int(e.count as i64)),
                        (s("reason"), s(e.reason)),
                        (s("context"), s(e.context)),
                        (s("object"), s(&e.object)),
                        (s("username"), s(&e.username)),
                        (
                            s("age-seconds"),
                            Reply::Double(e.created.elapsed().as_secs_f64()),
                        ),
                        (s("client-info"), s(&e.client_info)),
                        (s("entry-id"), Reply::Int(e.id as i64)),
                        (s("timestamp-created"), Reply::Int(e.created_unix_ms as i64)),
                        (
                            s("timestamp-last-updated"),
                            Reply::Int(e.updated_unix_ms as i64),
                        ),
                    ])
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_refusal_counts_in_one_entry() {
        let acl = Acl::new(None);
        acl.log("key", "toplevel", b"b", "u", "id=1".into());
        acl.log("key", "toplevel", b"b", "u", "id=2".into());
        acl.log("command", "toplevel", b"set", "u", "id=2".into());
        let log = acl.log.lock();
        assert_eq!(log.entries.len(), 2);
        assert_eq!(log.entries[0].reason, "command");
        assert_eq!(log.entries[1].count, 2);
        assert_eq!(log.entries[1].client_info, "id=2");
    }

    #[test]
    fn users_change_whole_or_not_at_all() {
        let acl = Acl::new(Some("pw"));
        assert!(acl.get("default").is_some_and(|u| u.password_ok(b"pw")));
        let g = acl.generation();
        assert!(
            acl.set_user("u", &[Bytes::from("on"), Bytes::from("+nosuch")])
                .is_err()
        );
        assert!(acl.get("u").is_none());
        acl.set_user("u", &[Bytes::from("on"), Bytes::from("nopass")])
            .expect("set");
        assert!(acl.generation() > g);
        assert_eq!(acl.delete(&["u".into(), "v".into()]), Ok(1));
        assert!(acl.delete(&["default".into()]).is_err());
    }
}
