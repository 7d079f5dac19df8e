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

/// The process's resident memory (`VmRSS`) and its peak (`VmHWM`) from
/// `/proc/self/status`, in bytes; `None` off Linux.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    /// Resident now.
    pub rss: u64,
    /// The most resident at once since the process started or since [`Memory::reset_peak`].
    pub peak: u64,
}

impl Memory {
    /// The figures now.
    pub fn now() -> Option<Memory> {
        let text = std::fs::read_to_string("/proc/self/status").ok()?;
        Self::parse(&text)
    }

    fn parse(text: &str) -> Option<Memory> {
        let kib = |name: &str| -> Option<u64> {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))?
                .trim()
                .strip_suffix("kB")?
                .trim()
                .parse()
                .ok()
        };
        Some(Memory {
            rss: kib("VmRSS")? * 1024,
            peak: kib("VmHWM")? * 1024,
        })
    }

    /// Restarts the peak from the current resident size (Linux 4.0 and later; nothing
    /// where the kernel does not allow it), so that a phase's peak is its own.
    pub fn reset_peak() {
        let _ = std::fs::write("/proc/self/clear_refs", "5");
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

    #[test]
    fn parses_the_status_format() {
        let t = "Name:\tkvctl\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n";
        assert_eq!(
            Memory::parse(t),
            Some(Memory {
                rss: 1 << 20,
                peak: 2 << 20
            })
        );
        assert_eq!(Memory::parse("VmRSS: 1 kB\n"), None);
    }
}
