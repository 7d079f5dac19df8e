//! Errors raised by the libraries written in Rust, located as Lua's `luaL_error` locates
//! them: `user_script:3: message`, the script's line that called the library.

use mlua::{Error, Lua};

/// `e` with the calling Lua line in front of a runtime error's message.
pub fn located(lua: &Lua, e: Error) -> Error {
    let Error::RuntimeError(msg) = e else {
        return e;
    };
    let place = lua
        .inspect_stack(1, |d| {
            let line = d.current_line()?;
            let src = d.source().short_src?.into_owned();
            Some(format!("{src}:{line}: "))
        })
        .flatten()
        .unwrap_or_default();
    Error::RuntimeError(format!("{place}{msg}"))
}
