//! `FUNCTION DUMP` / `FUNCTION RESTORE`'s payload, Redis's own: per library the RDB opcode
//! `FUNCTION2` (245) and the library's code as an RDB string, then the RDB version and the
//! CRC-64, the footer `DUMP` of a key has (`cmd::dump::rdb`). So a payload dumped by Redis
//! 7.0 restores here and one dumped here restores in Redis.

use bytes::Bytes;

use crate::cmd::dump::rdb::{self, Reader};

/// RDB's opcode before each library (Redis 7.0 GA and later).
pub const OPCODE_FUNCTION2: u8 = 245;
/// The opcode of Redis 7.0's release candidates (name, engine, description, code), which
/// Redis refuses too.
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
            Ok(OPCODE_FUNCTION_PRE_GA) => {
                return Err("Pre-GA function format not supported".into());
            }
            Ok(OPCODE_FUNCTION2) => {}
            Ok(_) => return Err("given type is not a function".into()),
        }
        match r.string() {
            Ok(code) => codes.push(Bytes::from(code)),
            Err(_) => return Err("Failed loading library payload".into()),
        }
    }
    Ok(codes)
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
    }
}
