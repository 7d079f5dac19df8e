//! `FUNCTION DUMP` / `FUNCTION RESTORE`'s payload, Redis's own: per library the RDB opcode
//! `FUNCTION2` (245) and the library's code as an RDB string, then the RDB version and the
//! CRC-64, the footer `DUMP` of a key has (`cmd::dump::rdb`). So a payload dumped by Redis
//! 7.0 restores here and one dumped here restores in Redis.

use bytes::Bytes;

use crate::cmd::dump::rdb::{self, Reader};

/// RDB's opcode before each library (Redis 7.0 GA and later).
pub const OPCODE_FUNCTION2: u8 = 245;
/// The opcode of Redis 7.0's release candidates: name, engine, a description flag (and the
/// description), then the code without its first line; Redis 7.0 still reads it.
const OPCODE_FUNCTION_PRE_GA: u8 = 246;

/// The payload of libraries whose codes are `codes`.
pub fn dump<'a>(codes: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    for code in codes {
        out.push(OPCODE_FUNCTION2);
        rdb::put_string(&mut out, code);
    }
    rdb::seal(out)
}

/// The codes of the libraries in a payload, in order.
///
/// # Errors
/// Redis's texts (without the `ERR ` code).
pub fn read(payload: &[u8]) -> Result<Vec<Bytes>, String> {
    let Some(body) = rdb::unseal(payload) else {
        return Err("DUMP payload version or checksum are wrong".into());
    };
    let mut r = Reader::new(body);
    let mut codes = Vec::new();
    while !r.done() {
        match r.byte() {
            Err(_) => return Err("can not read data type".into()),
            Ok(OPCODE_FUNCTION_PRE_GA) => codes.push(pre_ga(&mut r)?),
            Ok(OPCODE_FUNCTION2) => match r.string() {
                Ok(code) => codes.push(Bytes::from(code)),
                Err(_) => return Err("Failed loading library payload".into()),
            },
            Ok(_) => return Err("given type is not a function".into()),
        }
    }
    Ok(codes)
}

/// A release candidate's library, as Redis 7.0 turns it into a library's text: its first
/// line made of the engine and the name, then the code.
fn pre_ga(r: &mut Reader<'_>) -> Result<Bytes, String> {
    let name = r.string().map_err(|_| "Failed loading library name")?;
    let engine = r.string().map_err(|_| "Failed loading engine name")?;
    let has_description = r
        .length()
        .map_err(|_| "Failed loading library description indicator")?;
    if has_description != 0 {
        r.string()
            .map_err(|_| "Failed loading library description")?;
    }
    let blob = r.string().map_err(|_| "Failed loading library blob")?;
    Ok(Bytes::from(
        [b"#!".as_slice(), &engine, b" name=", &name, b"\n", &blob].concat(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_round_trip_and_damage_is_refused() {
        let codes: [&[u8]; 2] = [b"#!lua name=a\nx", b"12"];
        let p = dump(codes);
        assert_eq!(p[0], OPCODE_FUNCTION2);
        let back = read(&p).expect("reads");
        assert_eq!(back, codes.map(Bytes::copy_from_slice).to_vec());
        let mut bad = p.clone();
        bad[3] ^= 1;
        assert_eq!(
            read(&bad).expect_err("checksum"),
            "DUMP payload version or checksum are wrong"
        );
        assert_eq!(read(&dump([])), Ok(vec![]));
        assert_eq!(
            read(&rdb::seal(vec![0, 1, b'x'])).expect_err("a key"),
            "given type is not a function"
        );
        assert_eq!(
            read(&rdb::seal(vec![OPCODE_FUNCTION2, 5, b'x'])).expect_err("short"),
            "Failed loading library payload"
        );
        let mut rc = vec![OPCODE_FUNCTION_PRE_GA];
        for field in [&b"lib"[..], b"LUA"] {
            rdb::put_string(&mut rc, field);
        }
        rc.push(1);
        rdb::put_string(&mut rc, b"about");
        rdb::put_string(&mut rc, b"return 1");
        assert_eq!(
            read(&rdb::seal(rc.clone())),
            Ok(vec![Bytes::from_static(b"#!LUA name=lib\nreturn 1")])
        );
        rc.truncate(1 + 4);
        assert_eq!(
            read(&rdb::seal(rc)).expect_err("cut"),
            "Failed loading engine name"
        );
    }
}
