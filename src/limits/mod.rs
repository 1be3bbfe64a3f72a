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

mod size;

pub use size::{Bytes, LimitSource, MemoryLimit, default_limit, mem_total, parse_size};

use crate::model::{Scenario, Source};
use crate::scenario::sweep::ScenarioFile;
use crate::time::SimTime;

/// Peak RSS of a run with nothing to do (1 client, 1 run): the binary, the allocator, the
/// thread pool. Measured 4.6 MB; rounded up for the report and charts code paths.
pub const BASE_BYTES: u64 = 16 << 20;

/// Per request in flight in a run in progress (a closed client holds one for the whole
/// run): its 96-byte state, its events in the queue (24 bytes each, in vectors that grow by
/// doubling). Measured 130-150 bytes per client (1 and 4 million clients, all starting at
/// once, an outage and retries).
pub const REQUEST_BYTES: u64 = 160;

/// Extra per client of a run in progress whose strategy has a per-client budget or breaker:
/// one state with its rolling window (two `VecDeque` headers and counters).
pub const CLIENT_POLICY_BYTES: u64 = 128;

/// Extra per client of a run in progress whose strategy has a per-client
/// `client_rate_limiter`: one limiter's state (its bucket, CUBIC curve, measured rate and
/// an empty queue header; the engine's unit tests hold it to this size).
pub const CLIENT_LIMITER_BYTES: u64 = 128;

/// Extra per request in flight of a run in progress when a breaker counts slow calls: the
/// send time of its current attempt.
pub const SLOW_CALL_BYTES: u64 = 8;

/// Extra per request in flight of a run in progress when a budget caps each request's
/// retries (`per_request`): the request's cap.
pub const REQUEST_CAP_BYTES: u64 = 4;

/// Per run in progress: its counters, streams and vector headers.
pub const RUN_BYTES: u64 = 16 << 10;

/// Per time-series bucket of a run in progress, per service: a 64-byte counter record
/// (vectors grow by doubling, so up to twice that).
pub const BUCKET_BYTES: u64 = 128;

/// Per bucket of a (sweep point, strategy) group while its runs are folded in, per service:
/// 16 integer sums; and after reduction, the mean record, its `timeseries.csv` row and the
/// load chart's points.
pub const GROUP_BUCKET_BYTES: u64 = 128 + 320;

/// Per latency sample kept exactly (8 bytes), per set: a run keeps every client request's
/// latency, its successes' and each population's, up to
/// [`crate::metrics::latency::EXACT_LIMIT`] samples per set; a larger set is a fixed
/// 450 KB histogram.
pub const LATENCY_BYTES: u64 = 8;

/// Per client request with `--requests`: its record (kept until the end) and its
/// `requests.csv` row. Measured 138 bytes (10 and 20 runs of 1 000 000 requests) before
/// the record kept its 8-byte start time and the row its `start_s`.
pub const RECORD_BYTES: u64 = 156;

/// Per attempt of the attempt sample (`--attempts`, `attempts.csv`): its 32-byte record,
/// kept until the end, and its `attempts.csv` row (under 64 bytes). Sized from the record
/// and the row, not measured: the sample is at most [`crate::engine::ATTEMPT_SAMPLE`]
/// requests per run.
pub const ATTEMPT_BYTES: u64 = 96;

/// Per place of a server's queue that can fill: a queued attempt.
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
    /// Bytes of one group's accumulator (the largest over sweep points).
    pub per_group: u64,
    /// Groups being accumulated at once (one per run in progress, and one finishing).
    pub open_groups: u64,
    /// Bytes of results kept for the files beyond the runs' own: the reduced time series of
    /// every group and the first replication's attempt sample.
    pub results: u64,
    /// PNG charts drawn at once (one per worker thread; see
    /// [`Estimate::drawing_png_charts`]).
    pub charts_parallel: u64,
    /// Bytes of the largest chart's bitmap; 0 without PNG charts.
    pub per_chart: u64,
}

impl fmt::Display for Estimate {
    /// `5.8 GB (16.8 MB for the program, 1000000 runs x 5.8 KB kept until the end, 2 x
    /// 1.2 MB in progress, 3 x 4.0 MB accumulating, 12.0 MB of reduced results)`: the parts
    /// add up to the total.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({} for the program, {} run{} x {} kept until the end, {} x {} in progress, {} x {} accumulating, {} of reduced results",
            Bytes(self.total),
            Bytes(BASE_BYTES),
            self.runs,
            if self.runs == 1 { "" } else { "s" },
            Bytes(self.per_run_kept),
            self.parallel,
            Bytes(self.per_run_working),
            self.open_groups,
            Bytes(self.per_group),
            Bytes(self.results),
        )?;
        if self.per_chart > 0 {
            write!(
                f,
                ", {} x {} drawing PNG charts",
                self.charts_parallel,
                Bytes(self.per_chart)
            )?;
        }
        write!(f, ")")
    }
}

impl Estimate {
    /// The estimate with PNG charts drawn (`run` without `--no-charts`, `png` among its
    /// formats): each chart is drawn on an RGB bitmap of its whole size, one chart per
    /// worker thread at once, and the charts grow a row per strategy (their sizes are the
    /// chart modules', [`crate::report::chart::largest_png_bytes`]). Without this, 1 000
    /// strategies were accepted at an estimate of 294 MB and peaked at 1.76 GB drawing their
    /// charts (helper-102).
    pub fn drawing_png_charts(mut self, file: &ScenarioFile, threads: usize) -> Estimate {
        let per_chart = largest_png_chart(file);
        self.charts_parallel = threads.max(1) as u64;
        self.per_chart = per_chart;
        self.total = self
            .total
            .saturating_add(self.charts_parallel.saturating_mul(per_chart));
        self
    }

    /// The estimate for one shard of the file (`run --shard`): a shard keeps the accumulator
    /// of every group it has jobs in until it writes them (they are merged later, not
    /// reduced), and round robin gives each shard jobs in nearly every group, so all
    /// `groups` count as open instead of one per thread.
    pub fn holding_every_group(mut self, groups: u64) -> Estimate {
        if groups > self.open_groups {
            let extra = (groups - self.open_groups).saturating_mul(self.per_group);
            self.total = self.total.saturating_add(extra);
            self.open_groups = groups;
        }
        self
    }
}

/// Bytes of the RGB bitmap of `file`'s largest chart (see [`Estimate::drawing_png_charts`]).
pub fn largest_png_chart(file: &ScenarioFile) -> u64 {
    file.points
        .iter()
        .map(|p| crate::report::chart::largest_png_bytes(&p.scenario))
        .max()
        .unwrap_or(0)
}

/// Time-series buckets a run of `s` holds at most: it stops at `time_limit`.
pub fn max_buckets(s: &Scenario) -> u64 {
    s.time_limit.as_nanos().div_ceil(s.bucket.as_nanos().max(1)) + 1
}

/// Client requests a run of `s` makes at most: closed clients x requests, the expected
/// arrivals of open populations before `end` (and the time limit), the rows of traces.
pub fn requests_per_run(s: &Scenario) -> u64 {
    let limit = SimTime(s.time_limit.as_nanos());
    s.populations
        .iter()
        .map(|p| match &p.source {
            Source::Closed(c) => c.count as u64 * c.requests as u64,
            // Poisson counts above the mean are rare beyond a few standard deviations.
            Source::Open(o) => {
                let mean = o.rate.cumulative(o.start, o.end.min(limit));
                (mean + 6.0 * mean.sqrt() + 1.0).min(u64::MAX as f64) as u64
            }
            Source::Trace(t) => t.times.len() as u64,
        })
        .fold(0, u64::saturating_add)
}

/// Attempts the attempt sample of one run of `s` can hold: the sampled client requests
/// (as the engine picks them: at most [`crate::engine::ATTEMPT_SAMPLE`] clients or
/// arrivals, all requests of a sampled closed client) times the most attempts one request
/// can send (`max_attempts`, the 429 ladder, the fallback call).
pub fn sampled_attempts_per_run(s: &Scenario) -> u64 {
    let limit = SimTime(s.time_limit.as_nanos());
    let share = (crate::engine::ATTEMPT_SAMPLE / s.populations.len().max(1) as u64).max(1);
    let requests = s
        .populations
        .iter()
        .map(|p| {
            let (units, per_unit) = match &p.source {
                Source::Closed(c) => (c.count as u64, c.requests as u64),
                Source::Open(o) => (
                    o.rate.cumulative(o.start, o.end.min(limit)).ceil() as u64,
                    1,
                ),
                Source::Trace(t) => (t.times.len() as u64, 1),
            };
            let every = units.div_ceil(share).max(1);
            units.div_ceil(every).saturating_mul(per_unit)
        })
        .fold(0, u64::saturating_add);
    let attempts = s
        .population_policies
        .iter()
        .flatten()
        .map(|pp| {
            let r = &pp.strategy.retry;
            (r.max_attempts as u64)
                .saturating_add(
                    r.rate_limit
                        .as_ref()
                        .map_or(0, |l| l.max_retries as u64 + 1),
                )
                .saturating_add(1)
        })
        .max()
        .unwrap_or(1);
    requests
        .saturating_mul(attempts)
        .min(crate::engine::ATTEMPT_SAMPLE_MAX as u64)
}

/// Requests in flight at once in a run of `s`: every closed client, and for open and trace
/// populations their peak arrival rate times how long a request can live (its deadline, or
/// its attempts' timeouts and backoff caps, at most the time limit), each possibly holding
/// one downstream call per tier below.
pub fn requests_in_flight(s: &Scenario) -> u64 {
    let limit = s.time_limit.as_secs_f64();
    let mut open = 0.0;
    for (p, population) in s.populations.iter().enumerate() {
        let policy = &s.population_policies[0][p].strategy;
        let retry = &policy.retry;
        let lifetime = match retry.deadline {
            Some(d) => d.as_secs_f64(),
            None => {
                let attempt = retry.timeout.map_or(limit, |t| t.as_secs_f64())
                    + policy.backoff.cap.as_secs_f64();
                retry.max_attempts as f64 * attempt
            }
        }
        .min(limit);
        let peak_rate = match &population.source {
            Source::Closed(_) => continue,
            Source::Open(o) => o.rate.points().iter().map(|(_, r)| *r).fold(0.0, f64::max),
            Source::Trace(t) => t.times.len() as f64 / limit.max(1e-9),
        };
        open += peak_rate * lifetime.max(1.0);
    }
    let tiers = graph_depth(s) as f64;
    let open = (open * tiers).min(requests_per_run(s) as f64 * tiers);
    (s.closed_clients() as f64 * tiers + open).min(u64::MAX as f64) as u64
}

/// Services on the longest chain of calls from the entry service.
fn graph_depth(s: &Scenario) -> u64 {
    fn depth(s: &Scenario, i: usize) -> u64 {
        1 + s.services[i]
            .calls
            .iter()
            .map(|&c| depth(s, c))
            .max()
            .unwrap_or(0)
    }
    depth(s, 0)
}

/// Bytes of a latency set of `samples` samples: exact up to the limit, else a histogram.
fn latency_set(samples: u64) -> u64 {
    if samples <= crate::metrics::latency::EXACT_LIMIT as u64 {
        LATENCY_BYTES.saturating_mul(samples)
    } else {
        450 << 10
    }
}

/// The estimated peak memory of running every job of `file` on `threads` workers.
/// `requests`: `--requests` is on. Saturates instead of overflowing.
///
/// Runs are folded into their (sweep point, strategy) group as they end and each group is
/// reduced as soon as its last run is in, so what is held is: every run in progress (its
/// requests, time series, latencies), the groups being folded (at most a few per worker:
/// workers take contiguous runs), and every group's reduced result until the files are
/// written. `requests`: with `--requests`; `attempts`: the attempt sample is taken in every
/// replication (`Some(true)`, `--attempts`) or the first only (`Some(false)`).
pub fn estimate(
    file: &ScenarioFile,
    threads: usize,
    requests: bool,
    attempts: Option<bool>,
) -> Estimate {
    let mut kept = 0u64;
    let mut results = 0u64;
    let mut runs = 0u64;
    let mut groups = 0u64;
    let mut per_run_kept = 0u64;
    let mut per_run_working = 0u64;
    let mut per_group = 0u64;
    for p in &file.points {
        let s = &p.scenario;
        let strategies = s.strategies.len() as u64;
        let reps = s.replications as u64;
        let buckets = max_buckets(s);
        let services = s.services.len() as u64;
        let sets = 2 + s.populations.len() as u64;
        let per_run_requests = requests_per_run(s);
        let in_flight = requests_in_flight(s);
        let clients: u64 = s.populations.iter().map(|p| p.clients as u64).sum();
        let policy =
            s.population_policies.iter().flatten().any(|pp| {
                pp.strategy.retry.budget.is_some() || pp.strategy.retry.breaker.is_some()
            });
        let limiter = s.population_policies.iter().flatten().any(|pp| {
            pp.strategy
                .retry
                .client_rate_limiter
                .is_some_and(|l| l.scope == crate::model::policy::Scope::Client)
        });
        let mut retry_policies = s
            .strategies
            .iter()
            .chain(
                s.population_policies
                    .iter()
                    .flatten()
                    .map(|pp| &pp.strategy),
            )
            .chain(s.services.iter().filter_map(|svc| match &svc.retry {
                crate::model::service::ServiceRetry::Fixed(strategy) => Some(&**strategy),
                crate::model::service::ServiceRetry::Strategy => None,
            }))
            .map(|st| &st.retry);
        let slow_calls = retry_policies
            .clone()
            .any(|r| r.breaker.is_some_and(|b| b.slow_call.is_some()));
        let request_caps = retry_policies.any(|r| {
            matches!(
                r.budget.map(|b| b.kind),
                Some(crate::model::policy::BudgetKind::Ratio {
                    per_request: Some(_),
                    ..
                })
            )
        });
        let queues: u64 = s
            .services
            .iter()
            .map(|svc| svc.server.queue as u64)
            .chain(s.fallback.as_ref().map(|f| f.server.queue as u64))
            .map(|q| q.min(in_flight))
            .fold(0, u64::saturating_add);
        let working = RUN_BYTES
            .saturating_add(REQUEST_BYTES.saturating_mul(in_flight))
            .saturating_add(if policy {
                CLIENT_POLICY_BYTES.saturating_mul(clients)
            } else {
                0
            })
            .saturating_add(if limiter {
                CLIENT_LIMITER_BYTES.saturating_mul(clients)
            } else {
                0
            })
            .saturating_add(
                (u64::from(slow_calls) * SLOW_CALL_BYTES
                    + u64::from(request_caps) * REQUEST_CAP_BYTES)
                    .saturating_mul(in_flight),
            )
            .saturating_add(QUEUE_PLACE_BYTES.saturating_mul(queues))
            .saturating_add(
                BUCKET_BYTES
                    .saturating_mul(buckets)
                    .saturating_mul(services),
            )
            .saturating_add(latency_set(per_run_requests).saturating_mul(sets));
        // Kept until the files are written: every group's reduced series, and every
        // request's record with --requests.
        let mut run_kept = 0u64;
        if requests {
            run_kept = RECORD_BYTES.saturating_mul(per_run_requests);
        }
        let sample = ATTEMPT_BYTES.saturating_mul(sampled_attempts_per_run(s));
        let mut first_only = 0u64;
        match attempts {
            Some(true) => run_kept = run_kept.saturating_add(sample),
            Some(false) => first_only = sample.saturating_mul(strategies),
            None => {}
        }
        let group = GROUP_BUCKET_BYTES
            .saturating_mul(buckets)
            .saturating_mul(services)
            .saturating_add(
                latency_set(per_run_requests.saturating_mul(reps)).saturating_mul(sets),
            );
        let point_runs = strategies.saturating_mul(reps);
        runs = runs.saturating_add(point_runs);
        groups = groups.saturating_add(strategies);
        kept = kept.saturating_add(run_kept.saturating_mul(point_runs));
        results = results.saturating_add(first_only).saturating_add(
            (GROUP_BUCKET_BYTES / 2)
                .saturating_mul(buckets)
                .saturating_mul(services)
                .saturating_mul(strategies),
        );
        per_run_kept = per_run_kept.max(run_kept);
        per_run_working = per_run_working.max(working);
        per_group = per_group.max(group);
    }
    let parallel = (threads.max(1) as u64).min(runs.max(1));
    // One per run in progress and one finishing, but never more than there are (helper-98:
    // one strategy read "3 x 16.1 MB accumulating" on two threads).
    let open_groups = (parallel + 1).min(groups.max(1));
    let total = BASE_BYTES
        .saturating_add(kept)
        .saturating_add(results)
        .saturating_add(parallel.saturating_mul(per_run_working))
        .saturating_add(open_groups.saturating_mul(per_group));
    Estimate {
        total,
        runs,
        per_run_kept,
        per_run_working,
        parallel,
        per_group,
        open_groups,
        results,
        charts_parallel: 0,
        per_chart: 0,
    }
}

/// Peak memory of `herdsim merge` per byte of the shards' `partial.json` files: each file
/// is read whole and parsed, and the parsed groups are folded into the whole run's.
/// Measured 2.3 (two shards of brooker-occ.toml at 1 000 replications: 36.0 MB of partial
/// results, 82.9 MB peak RSS).
pub const MERGE_BYTES_PER_PARTIAL_BYTE: u64 = 3;

/// The estimated peak memory of merging shards whose `partial.json` files hold `partial`
/// bytes in all.
pub fn merge_estimate(partial: u64) -> u64 {
    BASE_BYTES.saturating_add(partial.saturating_mul(MERGE_BYTES_PER_PARTIAL_BYTE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_holds_every_group_open() {
        let e = Estimate {
            total: 1_000,
            runs: 40,
            per_run_kept: 0,
            per_run_working: 100,
            parallel: 2,
            per_group: 50,
            open_groups: 3,
            results: 0,
            charts_parallel: 0,
            per_chart: 0,
        };
        let shard = e.holding_every_group(10);
        assert_eq!((shard.open_groups, shard.total), (10, 1_000 + 7 * 50));
        // Fewer groups than the unsharded run keeps open: unchanged.
        assert_eq!(e.holding_every_group(2).total, 1_000);
    }
}
