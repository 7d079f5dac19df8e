//! Binary encoding of log entries, metadata and RPC bodies (bincode 1, fixed-width integers,
//! little-endian), with a size limit so a damaged or hostile length cannot make a decoder
//! allocate without bound.

use bincode::Options;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// No single encoded value (a log entry, an AppendEntries batch, a metadata record) may be
/// larger than this.
pub(crate) const MAX_ENCODED: u64 = 1 << 30;

fn options() -> impl Options {
    bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .with_little_endian()
        .with_limit(MAX_ENCODED)
}

/// Encodes `value`.
pub(crate) fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, String> {
    options().serialize(value).map_err(|e| e.to_string())
}

/// Decodes a whole buffer (trailing bytes are an error).
pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    options().deserialize(bytes).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_trailing_bytes() {
        let v = (7u64, vec![1u8, 2, 3], String::from("x"));
        let mut b = encode(&v).unwrap();
        assert_eq!(decode::<(u64, Vec<u8>, String)>(&b).unwrap(), v);
        b.push(0);
        assert!(decode::<(u64, Vec<u8>, String)>(&b).is_err());
    }

    #[test]
    fn huge_length_is_refused_not_allocated() {
        // A Vec<u8> whose length prefix claims 2^62 bytes.
        let mut b = (1u64 << 62).to_le_bytes().to_vec();
        b.extend_from_slice(&[0; 8]);
        assert!(decode::<Vec<u8>>(&b).is_err());
    }
}
