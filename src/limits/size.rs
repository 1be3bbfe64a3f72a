//! The memory limit a run is held to: `--max-memory` or a share of the machine's (or the
//! container's) memory, reading that memory, parsing sizes in either unit system, and
//! printing byte counts short.

use std::fmt;

use super::{DEFAULT_SHARE, FALLBACK_LIMIT};

/// Where a memory limit comes from, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitSource {
    /// `--max-memory`.
    Flag,
    /// [`DEFAULT_SHARE`] of the machine's (or the container's) memory.
    Share,
    /// [`FALLBACK_LIMIT`]: the machine's memory could not be read.
    Fallback,
}

/// A memory limit and where it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryLimit {
    /// Bytes.
    pub bytes: u64,
    /// Why this value.
    pub source: LimitSource,
}

impl fmt::Display for MemoryLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.source {
            LimitSource::Flag => write!(f, "{} (--max-memory)", Bytes(self.bytes)),
            LimitSource::Share => write!(
                f,
                "{} ({:.0}% of this machine's memory)",
                Bytes(self.bytes),
                DEFAULT_SHARE * 100.0
            ),
            LimitSource::Fallback => write!(
                f,
                "{} (the default when this machine's memory cannot be read)",
                Bytes(self.bytes)
            ),
        }
    }
}

impl MemoryLimit {
    /// `--max-memory` when given, else [`default_limit`].
    pub fn new(flag: Option<u64>) -> Self {
        match flag {
            Some(bytes) => MemoryLimit {
                bytes,
                source: LimitSource::Flag,
            },
            None => default_limit(),
        }
    }
}

/// [`DEFAULT_SHARE`] of the memory this process can have: the machine's `MemTotal`, or a
/// cgroup v2 `memory.max` when lower (a container); [`FALLBACK_LIMIT`] when neither reads.
pub fn default_limit() -> MemoryLimit {
    let physical = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| mem_total(&t));
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|t| t.trim().parse::<u64>().ok());
    let available = match (physical, cgroup) {
        (Some(p), Some(c)) => Some(p.min(c)),
        (p, c) => p.or(c),
    };
    match available {
        Some(bytes) => MemoryLimit {
            bytes: (bytes as f64 * DEFAULT_SHARE) as u64,
            source: LimitSource::Share,
        },
        None => MemoryLimit {
            bytes: FALLBACK_LIMIT,
            source: LimitSource::Fallback,
        },
    }
}

/// `MemTotal` of a `/proc/meminfo` text, in bytes.
pub fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line["MemTotal:".len()..].split_whitespace();
    let n: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => n.checked_mul(1024),
        None => Some(n),
        Some(_) => None,
    }
}

/// Parses a size such as `2GiB`, `512MiB`, `1.5GB`, `800M` or `1000000` (bytes). Binary
/// (`KiB`, `MiB`, `GiB`, `TiB`) and decimal (`kB`/`K`, `MB`/`M`, `GB`/`G`, `TB`/`T`) units;
/// case does not matter. Zero is refused.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let unit = unit.trim().to_ascii_lowercase();
    let scale: f64 = match unit.as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "t" | "tb" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => {
            return Err(format!(
                "expected a size such as 2GiB, 512MiB or 1.5GB, found \"{}\"",
                crate::text::escape(text)
            ));
        }
    };
    let n: f64 = number.parse().map_err(|_| {
        format!(
            "expected a size such as 2GiB, 512MiB or 1.5GB, found \"{}\"",
            crate::text::escape(text)
        )
    })?;
    let bytes = n * scale;
    if !(bytes >= 1.0 && bytes < u64::MAX as f64) {
        return Err(format!(
            "expected a size from 1 byte to 16 EiB, found \"{}\"",
            crate::text::escape(text)
        ));
    }
    Ok(bytes as u64)
}

/// A byte count in short form: `512 B`, `23.4 MB`, `5.8 GB`, `2.1 TB` (decimal units).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bytes(pub u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0 as f64;
        const UNITS: [&str; 6] = ["kB", "MB", "GB", "TB", "PB", "EB"];
        if b < 1000.0 {
            return write!(f, "{} B", self.0);
        }
        let mut v = b / 1000.0;
        let mut unit = 0;
        while v >= 999.95 && unit < UNITS.len() - 1 {
            v /= 1000.0;
            unit += 1;
        }
        write!(f, "{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_both_unit_systems() {
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("512 MiB"), Ok(512 << 20));
        assert_eq!(parse_size("1.5GB"), Ok(1_500_000_000));
        assert_eq!(parse_size("800m"), Ok(800_000_000));
        assert_eq!(parse_size("1000000"), Ok(1_000_000));
        assert!(parse_size("0").is_err());
        assert!(parse_size("lots").is_err());
        assert!(parse_size("2 parsecs").is_err());
        assert!(parse_size("1e30").is_err());
        assert!(parse_size("99999999999TiB").is_err());
    }

    #[test]
    fn bytes_print_in_short_form() {
        assert_eq!(Bytes(512).to_string(), "512 B");
        assert_eq!(Bytes(23_400_000).to_string(), "23.4 MB");
        assert_eq!(Bytes(5_800_000_000).to_string(), "5.8 GB");
        assert_eq!(Bytes(999_999).to_string(), "1.0 MB");
        assert_eq!(Bytes(u64::MAX).to_string(), "18.4 EB");
    }

    #[test]
    fn mem_total_reads_kilobytes() {
        let text = "MemTotal:       24683584 kB\nMemFree:        1 kB\n";
        assert_eq!(mem_total(text), Some(24_683_584 * 1024));
        assert_eq!(mem_total("nothing"), None);
    }
}
