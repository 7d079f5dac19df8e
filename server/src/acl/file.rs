//! The ACL file (`--aclfile`, Redis's `aclfile`): one `user <name> <rules...>` line per
//! user, read at start and by `ACL LOAD`, written by `ACL SAVE` in the form `ACL LIST`
//! shows. Reading is all or nothing: every error of the file is reported, in Redis's
//! words (`path:line: ...`), and then no user changes.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

use bytes::Bytes;

use super::user::{UNKNOWN, User, merge_selectors};

/// What Redis appends to a failed load's errors.
const NO_CHANGE: &str =
    "WARNING: ACL errors detected, no change to the previously active ACL rules was performed";

/// The users an ACL file defines (`default` only if the file names it), or every error
/// found in it, as one line of Redis's text.
///
/// # Errors
/// The file cannot be read, or a line is not a valid user.
pub fn read(path: &Path) -> Result<BTreeMap<String, User>, String> {
    let text = std::fs::read(path).map_err(|e| {
        format!(
            "Error loading ACLs, opening file '{}': {}",
            path.display(),
            strerror(&e)
        )
    })?;
    parse(&path.display().to_string(), &text)
}

/// The users the lines of `text` define; `name` is the file's name in errors.
///
/// # Errors
/// Every bad line, as Redis reports them (then nothing is returned).
pub fn parse(name: &str, text: &[u8]) -> Result<BTreeMap<String, User>, String> {
    let mut users = BTreeMap::new();
    let mut errors = String::new();
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        let n = i + 1;
        let words: Vec<Bytes> = line
            .split(|&b| b.is_ascii_whitespace())
            .filter(|w| !w.is_empty())
            .map(Bytes::copy_from_slice)
            .collect();
        let Some(first) = words.first() else {
            continue;
        };
        if &first[..] != b"user" || words.len() < 2 {
            errors.push_str(&format!(
                "{name}:{n} should start with user keyword followed by the username. "
            ));
            continue;
        }
        let user_name = String::from_utf8_lossy(&words[1]).into_owned();
        if user_name.bytes().any(|b| b == 0) {
            errors.push_str(&format!(
                "'{name}:{n}: username '{user_name}' contains invalid characters. "
            ));
            continue;
        }
        if users.contains_key(&user_name) {
            errors.push_str(&format!(
                "WARNING: Duplicate user '{user_name}' found on line {n}. "
            ));
            continue;
        }
        let mut user = User::new(&user_name);
        let Ok(rules) = merge_selectors(&words[2..]) else {
            errors.push_str(&format!(
                "{name}:{n}: Unmatched parenthesis in selector definition."
            ));
            continue;
        };
        // As Redis: every unknown command or category is reported, of the other errors
        // only the first (a later one may only follow from it).
        let mut syntax_error = false;
        for rule in &rules {
            match user.apply_rule(rule) {
                Ok(()) => {}
                Err(why) if why == UNKNOWN => errors.push_str(&format!(
                    "{name}:{n}: Error in applying operation '{}': {why}. ",
                    String::from_utf8_lossy(rule)
                )),
                Err(why) if !syntax_error => {
                    errors.push_str(&format!("{name}:{n}: {why}. "));
                    syntax_error = true;
                }
                Err(_) => {}
            }
        }
        users.insert(user_name, user);
    }
    if errors.is_empty() {
        Ok(users)
    } else {
        errors.push_str(NO_CHANGE);
        Err(errors)
    }
}

/// The file's text for `users`: one `ACL LIST` line each, in name order.
pub fn render<'a>(users: impl IntoIterator<Item = &'a User>) -> String {
    let mut text = String::new();
    for u in users {
        text.push_str(&u.describe());
        text.push('\n');
    }
    text
}

/// An OS error as C's `strerror` words it (Rust adds ` (os error N)`).
fn strerror(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// Replaces the file at `path` with `text`: written to a file beside it, synced, renamed
/// over it and the directory synced, so a crash leaves the old file or the new one whole.
///
/// # Errors
/// The directory cannot be written or synced (the file beside it is then removed).
pub fn write(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // One name per save: two ACL SAVEs at once must not write the same file.
    static SAVES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SAVES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(format!(".tmp-{}-{n}", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp_name);
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written?;
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_define_users_and_blank_lines_are_skipped() {
        let text = b"user default on nopass ~* &* +@all\n\n  \nuser app on >pw ~app:* +get (+set ~w:*)\r\n";
        let users = parse("users.acl", text).unwrap();
        assert_eq!(users.len(), 2);
        assert_eq!(
            users["app"].describe(),
            format!(
                "user app on #{} ~app:* resetchannels -@all +get (~w:* resetchannels -@all +set)",
                super::super::user::password_hash(b"pw")
            )
        );
    }

    #[test]
    fn every_bad_line_is_reported_and_nothing_is_loaded() {
        let text = b"user a on +nosuch -nope\nfoo bar\nuser b on >x ~* +@all\nuser b on\nuser c #12 #34\nuser d (+get\n";
        let e = parse("f.acl", text).unwrap_err();
        assert_eq!(
            e,
            "f.acl:1: Error in applying operation '+nosuch': Unknown command or category name in ACL. \
             f.acl:1: Error in applying operation '-nope': Unknown command or category name in ACL. \
             f.acl:2 should start with user keyword followed by the username. \
             WARNING: Duplicate user 'b' found on line 4. \
             f.acl:5: The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters. \
             f.acl:6: Unmatched parenthesis in selector definition.\
             WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
        );
    }

    #[test]
    fn what_is_written_reads_back_the_same() {
        let users = parse(
            "x",
            b"user default on nopass ~* &* +@all\nuser r on #e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 %R~r:* &news.* -@all +@read -keys (+set ~w:*)\n",
        )
        .unwrap();
        let text = render(users.values());
        let again = parse("x", text.as_bytes()).unwrap();
        assert_eq!(render(again.values()), text);
        assert_eq!(again, users);
    }

    #[test]
    fn a_save_replaces_the_file_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("users.acl");
        write(&path, "user a on nopass\n").unwrap();
        write(&path, "user b off\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "user b off\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
