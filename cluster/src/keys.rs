//! Key layout of the two databases of a node (described in docs/CLUSTER.md, "On disk").
//!
//! Log database: `l` + be64(index) -> an encoded entry; `m/...` -> the vote, the committed
//! and last purged log ids, the format version. Big-endian indexes sort numerically, and
//! every entry key sorts below every `m/` key, so one range covers "all entries from i".
//!
//! State-machine database: the machine's own keys, and the replication layer's under
//! [`RESERVED_PREFIX`] (`0xFF`): the applied log id, the membership, the clock, the format
//! version, and the dedup table (`0xFF d` + be64(client) + `r` + be64(request) -> answer,
//! `0xFF d` + be64(client) + `w` -> the client's acknowledged mark).

/// Keys starting with this byte belong to the replication layer in the state-machine
/// database; a [`crate::Machine`] must not write them. (bloomkv-server's keys start with an
/// ASCII tag, and slot-prefixed keys with a byte below `0x40`.)
pub const RESERVED_PREFIX: u8 = 0xFF;

/// Version of the log database's layout, stored under [`log::FORMAT`]. 2: an entry's
/// payload carries a list of requests (a proposal); 1: one request (upgraded on open).
pub(crate) const LOG_FORMAT_VERSION: u32 = 2;

/// Version of the state-machine database's layout, stored under [`sm::FORMAT`].
pub(crate) const SM_FORMAT_VERSION: u32 = 1;

pub(crate) mod log {
    pub(crate) const ENTRY: u8 = b'l';
    /// Just past every entry key.
    pub(crate) const ENTRY_END: &[u8] = b"m";
    pub(crate) const VOTE: &[u8] = b"m/vote";
    pub(crate) const COMMITTED: &[u8] = b"m/committed";
    pub(crate) const PURGED: &[u8] = b"m/purged";
    pub(crate) const FORMAT: &[u8] = b"m/format";

    pub(crate) fn entry(index: u64) -> [u8; 9] {
        let mut k = [0u8; 9];
        k[0] = ENTRY;
        k[1..].copy_from_slice(&index.to_be_bytes());
        k
    }

    /// The index of an entry key, `None` for any other key.
    pub(crate) fn index_of(key: &[u8]) -> Option<u64> {
        match key {
            [ENTRY, rest @ ..] => Some(u64::from_be_bytes(rest.try_into().ok()?)),
            _ => None,
        }
    }
}

pub(crate) mod sm {
    pub(crate) const APPLIED: &[u8] = b"\xffm/applied";
    pub(crate) const MEMBERSHIP: &[u8] = b"\xffm/membership";
    pub(crate) const CLOCK: &[u8] = b"\xffm/clock";
    pub(crate) const FORMAT: &[u8] = b"\xffm/format";

    fn client_prefix(client: u64) -> [u8; 10] {
        let mut k = [0u8; 10];
        k[0] = super::RESERVED_PREFIX;
        k[1] = b'd';
        k[2..].copy_from_slice(&client.to_be_bytes());
        k
    }

    /// The saved answer of request `id` of `client`.
    pub(crate) fn answer(client: u64, id: u64) -> Vec<u8> {
        let mut k = client_prefix(client).to_vec();
        k.push(b'r');
        k.extend_from_slice(&id.to_be_bytes());
        k
    }

    /// The acknowledged mark of `client`: ids below it are answered and never retried.
    pub(crate) fn mark(client: u64) -> Vec<u8> {
        let mut k = client_prefix(client).to_vec();
        k.push(b'w');
        k
    }
}

/// Decodes a stored be64.
pub(crate) fn be64(bytes: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(bytes.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_keys_sort_by_index_and_below_metadata() {
        assert!(log::entry(1) < log::entry(256));
        assert!(log::entry(u64::MAX).as_slice() < log::ENTRY_END);
        assert!(log::ENTRY_END <= log::VOTE);
        assert_eq!(log::index_of(&log::entry(77)), Some(77));
        assert_eq!(log::index_of(log::VOTE), None);
    }

    #[test]
    fn answers_of_a_client_are_contiguous_and_ordered() {
        assert!(sm::answer(1, 5) < sm::answer(1, 6));
        assert!(sm::answer(1, u64::MAX) < sm::answer(2, 0));
        assert_eq!(sm::answer(3, 0)[0], RESERVED_PREFIX);
        assert_eq!(sm::mark(3)[0], RESERVED_PREFIX);
    }
}
