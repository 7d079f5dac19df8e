//! Redis Cluster's hash slots: a key belongs to slot `CRC16(key) mod 16384`, where only the
//! part between the first `{` and the next `}` is hashed when that part is not empty (a
//! hash tag, so that related keys share a slot).

/// How many hash slots a Redis Cluster has.
pub const SLOTS: u16 = 16384;

/// The hash slot of `key`.
pub fn key_slot(key: &[u8]) -> u16 {
    crc16(hash_tag(key)) % SLOTS
}

/// The part of `key` that is hashed: its hash tag when it has a non-empty one.
fn hash_tag(key: &[u8]) -> &[u8] {
    let Some(open) = key.iter().position(|&b| b == b'{') else {
        return key;
    };
    match key[open + 1..].iter().position(|&b| b == b'}') {
        Some(len) if len > 0 => &key[open + 1..open + 1 + len],
        _ => key,
    }
}

/// CRC-16/XMODEM (polynomial 0x1021, initial value 0), the checksum Redis Cluster uses.
fn crc16(data: &[u8]) -> u16 {
    let mut crc = 0u16;
    for &b in data {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_redis_clusters() {
        // The check value of CRC-16/XMODEM.
        assert_eq!(crc16(b"123456789"), 0x31C3);
        // What redis-server 7.0.15 answers to CLUSTER KEYSLOT.
        for (key, slot) in [
            (&b"foo"[..], 12182),
            (b"{user1000}.following", 3443),
            (b"{user1000}.followers", 3443),
            (b"a{}b", 13694),
            (b"", 0),
        ] {
            assert_eq!(key_slot(key), slot, "{}", String::from_utf8_lossy(key));
        }
        // Only the first tag counts, and `{}` is no tag.
        assert_eq!(key_slot(b"x{foo}{bar}"), key_slot(b"foo"));
        assert_eq!(key_slot(b"{}{foo}"), crc16(b"{}{foo}") % SLOTS);
        assert_eq!(key_slot(b"{foo"), crc16(b"{foo") % SLOTS);
    }
}
