//! Prefix extractors: which part of a key a table's prefix filter holds, so a scan of one
//! prefix can skip every table that holds no key with it (RocksDB's `prefix_extractor`).

use std::fmt::Debug;

/// Maps a key to its prefix, for prefix filters ([`crate::Options::prefix_extractor`]).
///
/// Each table records the extractor's [`name`](PrefixExtractor::name) beside its prefix
/// filter, and a scan uses a table's prefix filter only under an extractor of the same name:
/// two extractors that cut keys differently must have different names, or scans could skip
/// tables that hold their keys.
///
/// # Examples
/// ```
/// use bloomkv::filter::{DelimiterPrefix, FixedPrefix, PrefixExtractor};
///
/// assert_eq!(FixedPrefix::new(4).prefix(b"user1234"), Some(&b"user"[..]));
/// assert_eq!(FixedPrefix::new(4).prefix(b"abc"), None); // too short: outside the domain
/// assert_eq!(DelimiterPrefix::new(b'/').prefix(b"tenant7/orders/1"), Some(&b"tenant7/"[..]));
/// assert_eq!(DelimiterPrefix::new(b'/').prefix(b"no-delimiter"), None);
/// ```
pub trait PrefixExtractor: Send + Sync + Debug {
    /// A stable name naming the way keys are cut (with its parameters).
    fn name(&self) -> &str;

    /// The prefix of `key`, or `None` when the key has none (it is outside the extractor's
    /// domain and stays out of prefix filters).
    fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]>;
}

/// The first `len` bytes of every key at least `len` bytes long (RocksDB's
/// `NewFixedPrefixTransform`); shorter keys have no prefix.
///
/// # Examples
/// ```
/// use bloomkv::filter::{FixedPrefix, PrefixExtractor};
/// let p = FixedPrefix::new(5);
/// assert_eq!(p.prefix(b"user:42"), Some(&b"user:"[..]));
/// assert_eq!(p.name(), "bloomkv.FixedPrefix.5");
/// ```
#[derive(Debug, Clone)]
pub struct FixedPrefix {
    len: usize,
    name: String,
}

impl FixedPrefix {
    /// Prefixes of `len` bytes; named `bloomkv.FixedPrefix.<len>`.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::filter::{FixedPrefix, PrefixExtractor};
    /// assert_eq!(FixedPrefix::new(2).prefix(b"abc"), Some(&b"ab"[..]));
    /// assert_eq!(FixedPrefix::new(8).prefix(b"abc"), None);
    /// ```
    pub fn new(len: usize) -> FixedPrefix {
        FixedPrefix {
            len,
            name: format!("bloomkv.FixedPrefix.{len}"),
        }
    }
}

impl PrefixExtractor for FixedPrefix {
    fn name(&self) -> &str {
        &self.name
    }

    fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        key.get(..self.len)
    }
}

/// Every key up to and including the first occurrence of a delimiter byte (`tenant7/` of
/// `tenant7/orders/1`); keys without the delimiter have no prefix.
///
/// # Examples
/// ```
/// use bloomkv::filter::{DelimiterPrefix, PrefixExtractor};
/// let p = DelimiterPrefix::new(b':');
/// assert_eq!(p.prefix(b"user:42:name"), Some(&b"user:"[..]));
/// assert_eq!(p.prefix(b"plain"), None);
/// ```
#[derive(Debug, Clone)]
pub struct DelimiterPrefix {
    delimiter: u8,
    name: String,
}

impl DelimiterPrefix {
    /// Prefixes ending at the first `delimiter`; named `bloomkv.DelimiterPrefix.<hex byte>`.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::filter::{DelimiterPrefix, PrefixExtractor};
    /// assert_eq!(DelimiterPrefix::new(b'/').name(), "bloomkv.DelimiterPrefix.2f");
    /// ```
    pub fn new(delimiter: u8) -> DelimiterPrefix {
        DelimiterPrefix {
            delimiter,
            name: format!("bloomkv.DelimiterPrefix.{delimiter:02x}"),
        }
    }
}

impl PrefixExtractor for DelimiterPrefix {
    fn name(&self) -> &str {
        &self.name
    }

    fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        let at = key.iter().position(|&b| b == self.delimiter)?;
        Some(&key[..=at])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_the_parameters() {
        assert_eq!(FixedPrefix::new(8).name(), "bloomkv.FixedPrefix.8");
        assert_ne!(FixedPrefix::new(8).name(), FixedPrefix::new(9).name());
        assert_eq!(
            DelimiterPrefix::new(b'/').name(),
            "bloomkv.DelimiterPrefix.2f"
        );
        assert_eq!(
            DelimiterPrefix::new(0xff).name(),
            "bloomkv.DelimiterPrefix.ff"
        );
    }

    #[test]
    fn prefixes_and_the_domain() {
        assert_eq!(FixedPrefix::new(0).prefix(b"abc"), Some(&b""[..]));
        assert_eq!(FixedPrefix::new(3).prefix(b"abc"), Some(&b"abc"[..]));
        assert_eq!(FixedPrefix::new(3).prefix(b"ab"), None);
        assert_eq!(DelimiterPrefix::new(b':').prefix(b":x"), Some(&b":"[..]));
        assert_eq!(
            DelimiterPrefix::new(b':').prefix(b"a:b:c"),
            Some(&b"a:"[..])
        );
        assert_eq!(DelimiterPrefix::new(b':').prefix(b""), None);
    }
}
