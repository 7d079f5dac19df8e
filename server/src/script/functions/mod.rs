//! Redis 7.0 functions: libraries of Lua functions loaded with `FUNCTION LOAD` and called
//! with `FCALL` / `FCALL_RO` (docs/SERVER.md, "Functions"). The commands' argument handling
//! and replies are in `cmd::functions`.
//!
//! * [`library`]: the `#!lua name=...` first line, names, flags, the stored record.
//! * [`registry`]: the libraries as records in the engine, read and written through the
//!   command's write set.
//! * [`engine`]: the Lua side: `redis.register_function`, and calling a function.
//! * [`dump`]: `FUNCTION DUMP` / `RESTORE`'s payload (Redis's RDB form).
//!
//! Libraries are data, not server state: they live in the engine, so they outlast a
//! restart, commit with the write set that changed them (all or nothing with an EXEC), and
//! in cluster mode `FUNCTION LOAD`, `DELETE`, `FLUSH` and `RESTORE` go through the log as
//! writes and every node applies them alike (loading a library is deterministic:
//! `engine`), as it applies `FCALL`.

pub mod dump;
pub mod engine;
pub mod library;
pub mod registry;

use bytes::Bytes;

use crate::resp::Reply;
use crate::store::Txn;
use library::Library;

/// Checks a library's first line, then runs its code to register its functions.
///
/// `exists`: whether a library of the name it declares already exists and may not be
/// replaced (Redis checks this before running the code).
///
/// # Errors
/// Redis's texts, as `ERR` replies.
fn build(
    code: &Bytes,
    exists: impl FnOnce(&[u8]) -> Result<bool, Reply>,
) -> Result<Library, Reply> {
    let h = library::header(code).map_err(Reply::err)?;
    if exists(&h.name)? {
        return Err(Reply::err(format!(
            "Library '{}' already exists",
            String::from_utf8_lossy(&h.name)
        )));
    }
    let functions = super::run::register_library(&code[h.code_start..])?;
    if functions.is_empty() {
        return Err(Reply::err("No functions registered"));
    }
    Ok(Library {
        name: h.name,
        code: code.clone(),
        functions,
    })
}

fn taken(name: &[u8]) -> Reply {
    Reply::err(format!(
        "Function {} already exists",
        String::from_utf8_lossy(name)
    ))
}

/// `FUNCTION LOAD [REPLACE] code`: the library's name.
///
/// # Errors
/// Redis's texts; engine errors.
pub fn load(txn: &mut Txn<'_>, code: &Bytes, replace: bool) -> Result<Vec<u8>, Reply> {
    let mut old = None;
    let lib = build(code, |name| {
        old = registry::library(txn, name)?;
        Ok(old.is_some() && !replace)
    })?;
    for f in &lib.functions {
        if let Some(owner) = registry::owner(txn, &f.name)?
            && owner != lib.name
        {
            return Err(taken(&f.name));
        }
    }
    if let Some(old) = &old {
        registry::remove(txn, old);
    }
    registry::put(txn, &lib);
    Ok(lib.name)
}

/// `FUNCTION DELETE name`.
///
/// # Errors
/// `Library not found`; engine errors.
pub fn delete(txn: &mut Txn<'_>, name: &[u8]) -> Result<(), Reply> {
    let Some(lib) = registry::library(txn, name)? else {
        return Err(Reply::err("Library not found"));
    };
    registry::remove(txn, &lib);
    Ok(())
}

/// What `FUNCTION RESTORE` does with the libraries already loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Removes them all first.
    Flush,
    /// Keeps them; a library of the same name fails the restore.
    Append,
    /// Keeps them; a library of the same name is replaced.
    Replace,
}

/// `FUNCTION RESTORE payload [policy]`: nothing changes unless every library of the
/// payload loads and fits.
///
/// # Errors
/// Redis's texts; engine errors.
pub fn restore(txn: &mut Txn<'_>, payload: &[u8], policy: Policy) -> Result<(), Reply> {
    let codes = dump::read(payload).map_err(Reply::err)?;
    let mut libs: Vec<Library> = Vec::with_capacity(codes.len());
    for code in &codes {
        let lib = build(code, |name| Ok(libs.iter().any(|l| l.name == name)))?;
        for f in &lib.functions {
            let clash = libs
                .iter()
                .flat_map(|l| &l.functions)
                .any(|g| g.name.eq_ignore_ascii_case(&f.name));
            if clash {
                return Err(taken(&f.name));
            }
        }
        libs.push(lib);
    }
    if policy == Policy::Flush {
        registry::clear(txn);
    } else {
        // Libraries the payload replaces are set aside first, so that their functions do
        // not count as taken (Redis's `libraryJoin`); nothing is written before the checks
        // pass.
        let mut replaced = Vec::new();
        for lib in &libs {
            if registry::library(txn, &lib.name)?.is_some() {
                if policy == Policy::Append {
                    return Err(Reply::err(format!(
                        "Library {} already exists",
                        String::from_utf8_lossy(&lib.name)
                    )));
                }
                replaced.push(lib.name.clone());
            }
        }
        for f in libs.iter().flat_map(|l| &l.functions) {
            if let Some(owner) = registry::owner(txn, &f.name)?
                && !replaced.contains(&owner)
            {
                return Err(taken(&f.name));
            }
        }
        for name in &replaced {
            if let Some(old) = registry::library(txn, name)? {
                registry::remove(txn, &old);
            }
        }
    }
    for lib in &libs {
        registry::put(txn, lib);
    }
    Ok(())
}
