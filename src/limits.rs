//! Resource limits: how much memory a run will need, how much it may have, and how many runs
//! one scenario file may ask for.
//!
//! Every input the validator accepts must run in bounded memory, so before anything runs
//! [`estimate`] adds up what the run will hold at its peak, item by item, and the command
//! refuses (exit 2, nothing written) when that exceeds the limit: by default a share of the
//! machine's memory ([`default_limit`]), else `--max-memory`. The estimate is one function
//! over named per-item byte constants, measured on the engine with `/usr/bin/time -v` (peak
//! RSS, release build, `--threads 1`), so they can be re-measured when the engine changes:
//! run the scenario twice with one quantity doubled and divide the difference in peak RSS by
//! the difference in the quantity. Each constant says what was measured.
//!
//! It is an estimate, not a proof: it assumes each run reaches its `time_limit` (the time
//! series then has `time_limit / metrics.bucket` buckets, the most it can have) and a few
//! events in flight per client, which holds unless attempts abandoned by a timeout pile up
//! far in the future (a heavy-tailed latency with a short timeout).

use std::fmt;

use crate::model::Scenario;
use crate::scenario::sweep::ScenarioFile;

/// Peak RSS of a run with nothing to do (1 client, 1 run): the binary, the allocator, the
/// thread pool. Measured 4.6 MB; rounded up for the report and charts code paths.
pub const BASE_BYTES: u64 = 16 << 20;

/// Per client of a run in progress: its 64-byte state, its events in flight (24 bytes each,
/// in vectors that grow by doubling) and its latency sample. Measured 127-137 bytes (1, 2
/// and 4 million clients, all starting at once, an outage and retries).
pub const CLIENT_BYTES: u64 = 144;

/// Extra per client of a run in progress whose strategy has a per-client budget or breaker:
/// one state with its rolling window (two `VecDeque` headers and counters).
pub const CLIENT_POLICY_BYTES: u64 = 128;

/// Per run, kept until every run of the file has ended (the runner reduces them at the
/// end): its counters and vector headers. Measured 500 bytes beside a 10-bucket time series
/// (100 000 and 200 000 one-client runs: 915 bytes per run).
pub const RUN_BYTES: u64 = 512;

/// Per time-series bucket per run, kept until the end: a 40-byte counter record. Measured
/// 40 bytes (10 and 40 runs of 1 000 000 buckets); the vector's doubling is covered by
/// counting `time_limit / bucket + 1` buckets, the most a run can have.
pub const BUCKET_BYTES: u64 = 40;

/// Per bucket per (sweep point, strategy) after reduction: the 88-byte mean record, its
/// `timeseries.csv` row (about 60 bytes of text) and the load chart's points.
pub const MEAN_BUCKET_BYTES: u64 = 192;

/// Per logical request per run: its latency sample (8 bytes, kept until the end) and the
/// two pooled copies that percentiles are taken from (16 bytes while its strategy is
/// reduced). Measured 23 bytes (10 and 20 runs of 1 000 000 requests).
pub const LATENCY_BYTES: u64 = 24;

/// Per logical request per run with `--requests`: its `RequestRecord` (kept until the end)
/// and its `requests.csv` row. Measured 138 bytes (10 and 20 runs of 1 000 000 requests).
pub const RECORD_BYTES: u64 = 144;

/// Per place of a server's queue that can fill (at most one per client): a queued job.
pub const QUEUE_PLACE_BYTES: u64 = 32;

/// The share of physical memory a run may use by default.
pub const DEFAULT_SHARE: f64 = 0.8;

/// The limit when the machine's memory cannot be read.
pub const FALLBACK_LIMIT: u64 = 4 << 30;

/// Largest `replications` (in the file or `--replications`); the scenario validator uses
/// the same bound (a test checks they agree).
pub const MAX_REPLICATIONS: u32 = 1_000_000;

/// Most worker threads (`--threads`): more than any machine herdsim targets has cores, and
/// few enough that the pool can always be started (each thread reserves a stack).
pub const MAX_THREADS: usize = 1024;

/// Most sweep points a file may expand to (each is a validated scenario kept in memory).
pub const MAX_SWEEP_POINTS: u64 = 100_000;

/// Most runs (sweep points x strategies x replications) one scenario file may ask for.
/// The largest `replications` (1 000 000) of one strategy fits.
pub const MAX_RUNS: u64 = 1_000_000;

/// What a run of one scenario file is expected to need at its peak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Estimate {
    /// Total bytes.
    pub total: u64,
    /// Runs in the file.
    pub runs: u64,
    /// Bytes kept per run until the end (the largest over sweep points).
    pub per_run_kept: u64,
    /// Bytes of one run in progress (the largest over sweep points).
    pub per_run_working: u64,
    /// Runs in progress at once (the worker threads).
    pub parallel: u64,
}

impl fmt::Display for Estimate {
    /// `5.8 GB (1000000 runs x 5.8 KB kept until the end, 2 x 1.2 MB in progress)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({} run{} x {} kept until the end, {} x {} in progress)",
            Bytes(self.total),
            self.runs,
            if self.runs == 1 { "" } else { "s" },
            Bytes(self.per_run_kept),
            self.parallel,
            Bytes(self.per_run_working),
        )
    }
}

/// Time-series buckets a run of `s` holds at most: it stops at `time_limit`.
pub fn max_buckets(s: &Scenario) -> u64 {
    s.time_limit.as_nanos().div_ceil(s.bucket.as_nanos().max(1)) + 1
}

/// The estimated peak memory of running every job of `file` on `threads` workers.
/// `requests`: `--requests` is on. Saturates instead of overflowing.
pub fn estimate(file: &ScenarioFile, threads: usize, requests: bool) -> Estimate {
    let mut kept = 0u64;
    let mut reduced = 0u64;
    let mut runs = 0u64;
    let mut per_run_kept = 0u64;
    let mut per_run_working = 0u64;
    let mut per_group_reducing = 0u64;
    for p in &file.points {
        let s = &p.scenario;
        let strategies = s.strategies.len() as u64;
        let reps = s.replications as u64;
        let clients = s.clients.count as u64;
        let buckets = max_buckets(s);
        let requests_per_run = s.logical_requests();
        let mut run_kept = RUN_BYTES
            .saturating_add(BUCKET_BYTES.saturating_mul(buckets))
            .saturating_add(8u64.saturating_mul(requests_per_run));
        if requests {
            run_kept = run_kept.saturating_add(RECORD_BYTES.saturating_mul(requests_per_run));
        }
        let policy = s
            .strategies
            .iter()
            .any(|st| st.retry.budget.is_some() || st.retry.breaker.is_some());
        let per_client = CLIENT_BYTES + if policy { CLIENT_POLICY_BYTES } else { 0 };
        let queue = (s.server.queue as u64).min(clients)
            + s.fallback
                .as_ref()
                .map_or(0, |f| (f.server.queue as u64).min(clients));
        let working = per_client
            .saturating_mul(clients)
            .saturating_add(QUEUE_PLACE_BYTES.saturating_mul(queue));
        let point_runs = strategies.saturating_mul(reps);
        runs = runs.saturating_add(point_runs);
        kept = kept.saturating_add(run_kept.saturating_mul(point_runs));
        reduced = reduced.saturating_add(
            MEAN_BUCKET_BYTES
                .saturating_mul(buckets)
                .saturating_mul(strategies),
        );
        per_run_kept = per_run_kept.max(run_kept);
        per_run_working = per_run_working.max(working);
        // Reducing one strategy pools the latency samples of all its replications.
        per_group_reducing = per_group_reducing
            .max((LATENCY_BYTES - 8).saturating_mul(requests_per_run.saturating_mul(reps)));
    }
    let parallel = (threads.max(1) as u64).min(runs.max(1));
    let total = BASE_BYTES
        .saturating_add(kept)
        .saturating_add(reduced)
        .saturating_add(parallel.saturating_mul(per_run_working))
        .saturating_add(parallel.saturating_mul(per_group_reducing));
    Estimate {
        total,
        runs,
        per_run_kept,
        per_run_working,
        parallel,
    }
}

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
