//! The process's read counters from `/proc/self/io` (Linux): read syscalls (`syscr`) and
//! bytes passed to read calls (`rchar`, page cache hits included). They count every thread,
//! so background compaction reads land in the phase during which they happen.

/// A reading of `/proc/self/io`, or the difference of two.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcIo {
    /// Read system calls.
    pub syscr: u64,
    /// Bytes read by read system calls.
    pub rchar: u64,
}

impl ProcIo {
    /// The counters now; `None` where `/proc/self/io` does not exist or cannot be parsed.
    pub fn now() -> Option<ProcIo> {
        let text = std::fs::read_to_string("/proc/self/io").ok()?;
        Self::parse(&text)
    }

    fn parse(text: &str) -> Option<ProcIo> {
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        Some(ProcIo {
            syscr: field("syscr")?,
            rchar: field("rchar")?,
        })
    }

    /// `self - earlier`, saturating.
    pub fn since(self, earlier: ProcIo) -> ProcIo {
        ProcIo {
            syscr: self.syscr.saturating_sub(earlier.syscr),
            rchar: self.rchar.saturating_sub(earlier.rchar),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_proc_format() {
        let t = "rchar: 6976\nwchar: 0\nsyscr: 10\nsyscw: 0\n";
        assert_eq!(
            ProcIo::parse(t),
            Some(ProcIo {
                syscr: 10,
                rchar: 6976
            })
        );
        assert_eq!(ProcIo::parse("wchar: 1\n"), None);
    }
}
