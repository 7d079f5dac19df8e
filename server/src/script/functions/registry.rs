//! The loaded libraries, stored in the engine beside the data (docs/SERVER.md, "Function
//! libraries"), so they are written with the command's write set (atomic with the rest of
//! an EXEC, durable as every write, replicated through the log in cluster mode) and read
//! through it (a transaction sees the libraries it loaded):
//!
//! ```text
//! 0x00 "flib/" library name          the library's record (`library`)
//! 0x00 "fname/" lowercased function  the name of the library that registered it
//! ```
//! Function names are looked up in any case, as in Redis; library names are case-sensitive.

use crate::resp::Reply;
use crate::store::Txn;
use crate::store::keys::{FUNCTION_LIBRARY_PREFIX, FUNCTION_NAME_PREFIX, prefix_end};

use super::library::{FunctionInfo, Library};

fn library_key(name: &[u8]) -> Vec<u8> {
    [FUNCTION_LIBRARY_PREFIX, name].concat()
}

fn function_key(name: &[u8]) -> Vec<u8> {
    [FUNCTION_NAME_PREFIX, &name.to_ascii_lowercase()].concat()
}

fn corrupt(name: &[u8]) -> Reply {
    Reply::err(format!(
        "corrupt function library record '{}' in the store",
        String::from_utf8_lossy(name)
    ))
}

/// The library named `name`.
///
/// # Errors
/// Engine errors; a record that does not decode.
pub fn library(txn: &Txn<'_>, name: &[u8]) -> Result<Option<Library>, Reply> {
    match txn.get(&library_key(name))? {
        Some(rec) => Library::decode(name, &rec)
            .map(Some)
            .map_err(|_| corrupt(name)),
        None => Ok(None),
    }
}

/// The library holding the function `name` (any case), and the function.
///
/// # Errors
/// Engine errors; a damaged record, or a name record naming a library that lacks it.
pub fn function(txn: &Txn<'_>, name: &[u8]) -> Result<Option<(Library, FunctionInfo)>, Reply> {
    let Some(lib_name) = txn.get(&function_key(name))? else {
        return Ok(None);
    };
    let lib = library(txn, &lib_name)?.ok_or_else(|| corrupt(&lib_name))?;
    let f = lib
        .functions
        .iter()
        .find(|f| f.name.eq_ignore_ascii_case(name))
        .cloned()
        .ok_or_else(|| corrupt(&lib_name))?;
    Ok(Some((lib, f)))
}

/// The library holding the function `name` (any case), by its name only.
///
/// # Errors
/// Engine errors.
pub fn owner(txn: &Txn<'_>, name: &[u8]) -> Result<Option<Vec<u8>>, Reply> {
    txn.get(&function_key(name))
}

/// Every library, by name.
///
/// # Errors
/// Engine errors; a record that does not decode.
pub fn libraries(txn: &Txn<'_>) -> Result<Vec<Library>, Reply> {
    let mut out = Vec::new();
    let mut bad = None;
    txn.for_each_prefix(FUNCTION_LIBRARY_PREFIX, None, false, |k, v| {
        let name = &k[FUNCTION_LIBRARY_PREFIX.len()..];
        match Library::decode(name, v) {
            Ok(lib) => out.push(lib),
            Err(_) => bad = Some(name.to_vec()),
        }
        Ok(bad.is_none())
    })?;
    match bad {
        Some(name) => Err(corrupt(&name)),
        None => Ok(out),
    }
}

/// Numbers of libraries and of functions (`FUNCTION STATS`, `INFO`).
///
/// # Errors
/// Engine errors.
pub fn counts(txn: &Txn<'_>) -> Result<(usize, usize), Reply> {
    let mut libs = 0;
    txn.for_each_prefix(FUNCTION_LIBRARY_PREFIX, None, false, |_, _| {
        libs += 1;
        Ok(true)
    })?;
    let mut functions = 0;
    txn.for_each_prefix(FUNCTION_NAME_PREFIX, None, false, |_, _| {
        functions += 1;
        Ok(true)
    })?;
    Ok((libs, functions))
}

/// Stores `lib` (the caller has removed any library of its name and checked that its
/// functions' names are free).
pub fn put(txn: &mut Txn<'_>, lib: &Library) {
    for f in &lib.functions {
        txn.put(function_key(&f.name), lib.name.clone());
    }
    txn.put(library_key(&lib.name), lib.encode());
}

/// Removes `lib` and its functions' names.
pub fn remove(txn: &mut Txn<'_>, lib: &Library) {
    for f in &lib.functions {
        txn.delete(function_key(&f.name));
    }
    txn.delete(library_key(&lib.name));
}

/// Removes every library.
pub fn clear(txn: &mut Txn<'_>) {
    for prefix in [FUNCTION_LIBRARY_PREFIX, FUNCTION_NAME_PREFIX] {
        let end = prefix_end(prefix).unwrap_or_else(|| vec![0xff]);
        txn.delete_range(prefix.to_vec(), end);
    }
}
