//! The process's I/O counters from `/proc/self/io` (Linux): read syscalls (`syscr`), bytes
//! passed to read calls (`rchar`, page cache hits included), bytes the process caused to be
//! fetched from the storage device (`read_bytes`: page cache misses only) and bytes it
//! caused to be sent to it (`write_bytes`). They count every thread, so background
//! compaction I/O lands in the phase during which it happens.

/// A reading of `/proc/self/io`, or the difference of two.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcIo {
    /// Read system calls.
    pub syscr: u64,
    /// Bytes read by read system calls.
    pub rchar: u64,
    /// Bytes fetched from the storage device (0 where the kernel does not account them,
    /// e.g. some containers).
    pub read_bytes: u64,
    /// Bytes sent to the storage device.
    pub write_bytes: u64,
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
            read_bytes: field("read_bytes").unwrap_or(0),
            write_bytes: field("write_bytes").unwrap_or(0),
        })
    }

    /// `self - earlier`, saturating.
    pub fn since(self, earlier: ProcIo) -> ProcIo {
        ProcIo {
            syscr: self.syscr.saturating_sub(earlier.syscr),
            rchar: self.rchar.saturating_sub(earlier.rchar),
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_proc_format() {
        let t = "rchar: 6976\nwchar: 0\nsyscr: 10\nsyscw: 0\nread_bytes: 4096\nwrite_bytes: 8192\n";
        assert_eq!(
            ProcIo::parse(t),
            Some(ProcIo {
                syscr: 10,
                rchar: 6976,
                read_bytes: 4096,
                write_bytes: 8192,
            })
        );
        assert_eq!(ProcIo::parse("wchar: 1\n"), None);
    }
}
