//! What a run measures, and how runs are reduced to the numbers a planner reads.
//!
//! During a run the engine writes into [`RunMetrics`]: per service, counters for the calls it
//! received and for the logical requests made *to* it, one [`Bucket`] per `metrics.bucket` of
//! simulated time; per population, its requests, calls and latencies. No event log is kept
//! (except `requests.csv` records when asked for). After each run, [`summary`] folds the run
//! into its strategy's accumulator; every fold is an integer sum, a mergeable latency set or
//! a value stored at its replication's index, so the result does not depend on which thread
//! (or shard) finished first.

pub mod latency;
pub mod paired;
pub mod recovery;
pub mod summary;
mod timeline;

use serde::{Deserialize, Serialize};

use crate::model::outcome::{GiveUpReason, Status};
use crate::time::{SimDuration, SimTime};
pub use latency::Latencies;
pub use timeline::{BUCKET_FIELDS, Bucket, Timeline};
pub(crate) use timeline::{give_back, spare_series};

/// Where an accumulator read back from a shard's `partial.json` breaks an invariant that
/// merging and reducing rely on: the place, as a JSON path (`groups[0].replicates[1]`), with
/// what was expected there and what was found. Such a file was altered (its checksum
/// recomputed) or written by something other than this herdsim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inconsistency {
    /// The JSON path of the value.
    pub at: String,
    /// What it should be.
    pub expected: String,
    /// What it is.
    pub found: String,
}

impl Inconsistency {
    /// At `at` (a field name or an index `[i]`, relative to the value checked).
    pub fn new(at: impl Into<String>, expected: impl Into<String>, found: impl ToString) -> Self {
        Inconsistency {
            at: at.into(),
            expected: expected.into(),
            found: found.to_string(),
        }
    }

    /// The same place seen from the value holding it at `outer` (a field name or `[i]`).
    pub fn within(mut self, outer: &str) -> Self {
        self.at = if self.at.is_empty() {
            outer.to_string()
        } else if self.at.starts_with('[') {
            format!("{outer}{}", self.at)
        } else {
            format!("{outer}.{}", self.at)
        };
        self
    }
}

impl std::fmt::Display for Inconsistency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: expected {}, found {}",
            self.at, self.expected, self.found
        )
    }
}

/// `n` things, `one` being the singular: `1 entry`, `3 entries`, `0 samples`.
pub fn counted(n: impl Into<u64>, one: &str) -> String {
    let n = n.into();
    match (n, one.strip_suffix('y')) {
        (1, _) => format!("1 {one}"),
        (_, Some(stem)) => format!("{n} {stem}ies"),
        (_, None) => format!("{n} {one}s"),
    }
}

/// Index of a retryable failure class in per-class arrays (output-column order).
pub fn class_index(s: Status) -> usize {
    Status::RETRYABLE
        .iter()
        .position(|c| *c == s)
        .expect("only retryable classes are counted per class")
}

/// How one logical request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    /// Succeeded (possibly on the fallback server).
    Succeeded,
    /// Gave up for this reason.
    GaveUp(GiveUpReason),
}

impl Outcome {
    /// `succeeded` or the reason's label.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Succeeded => "succeeded",
            Outcome::GaveUp(r) => r.label(),
        }
    }
}

/// One row of `requests.csv`: the `retries_exhausted` record of a client request.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RequestRecord {
    /// The population it came from (index in the scenario).
    pub population: u16,
    /// Client id within its population (0-based; 0 for a single-client open population).
    pub client: u32,
    /// The client's request number for a closed population, the arrival number for an open
    /// or trace population (0-based).
    pub request: u32,
    /// How it ended.
    pub outcome: Outcome,
    /// The last status seen (`None` if no attempt was ever answered or timed out).
    pub last_status: Option<Status>,
    /// Attempts sent, all ladders and the fallback call included.
    pub attempts: u32,
    /// Total time spent waiting between attempts.
    pub total_wait: SimDuration,
    /// The last Retry-After hint received, if any.
    pub retry_after: Option<SimDuration>,
    /// From when the request started (before any `client_rate_limiter` wait) to its end;
    /// `None` for a request the time limit kept from starting (it has no latency sample).
    pub latency: Option<SimDuration>,
    /// When the request started, before any `client_rate_limiter` wait (meaningless, 0, when
    /// `latency` is `None`). Required in a shard's partial: one from a build before it
    /// cannot be read (the shard is run again) rather than merged with every start at 0.
    pub start: SimTime,
}

/// What became of one attempt, as the raster chart colours it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum AttemptOutcome {
    /// Answered 200.
    Served,
    /// Refused or failed: 400, 409, 429, 500 or 503 (not a queue-timeout drop).
    Rejected,
    /// Dropped from the server's queue after `queue_timeout` (answered 503).
    Shed,
    /// No answer in time: the caller's timeout or connect timeout, or an unreachable server.
    TimedOut,
    /// Still outstanding when the run reached `time_limit` (its request ends there as
    /// `time_limit`).
    CutShort,
}

impl AttemptOutcome {
    /// The spelling in `attempts.csv`.
    pub fn label(self) -> &'static str {
        match self {
            AttemptOutcome::Served => "served",
            AttemptOutcome::Rejected => "rejected",
            AttemptOutcome::Shed => "shed",
            AttemptOutcome::TimedOut => "timed_out",
            AttemptOutcome::CutShort => "time_limit",
        }
    }
}

/// One attempt of a sampled client request (`attempts.csv`, the raster chart).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptRecord {
    /// The population it came from (index in the scenario).
    pub population: u16,
    /// Client id within its population.
    pub client: u32,
    /// The client's request number (closed) or the arrival number (open, trace).
    pub request: u32,
    /// Attempt number within the request (1-based, every ladder counted).
    pub attempt: u32,
    /// When it was sent.
    pub sent: SimTime,
    /// What became of it.
    pub outcome: AttemptOutcome,
}

/// What one service saw in a run: the calls it received, and the logical requests made to
/// it (by clients for the entry service, by upstream services for the others).
#[derive(Debug, Clone, Default)]
pub struct ServiceMetrics {
    /// Attempts that reached it (accepted + rejected).
    pub calls: u64,
    /// Calls that took a slot or queue place.
    pub accepted: u64,
    /// Calls refused at once.
    pub rejected: u64,
    /// Queued calls dropped by `queue_timeout`.
    pub shed: u64,
    /// Calls it finished for a caller that had already abandoned them.
    pub wasted: u64,
    /// Calls lost in a crash (queued or in service at its start), never answered.
    pub lost: u64,
    /// Logical requests made to it.
    pub requests: u64,
    /// Logical requests to it that succeeded.
    pub succeeded: u64,
    /// Logical requests to it that gave up, by [`GiveUpReason`] index.
    pub gave_up: [u64; 7],
    /// Attempts made by the requests that succeeded (for attempts per success).
    pub success_attempts: u64,
    /// Retries sent to it, by failure class (see [`class_index`]).
    pub retries: [u64; 6],
    /// Attempts to it abandoned by their caller's timeout.
    pub timeouts: u64,
    /// Retries to it a budget allowed.
    pub budget_allowed: u64,
    /// Retries to it a budget refused.
    pub budget_refused: u64,
    /// Total time the breakers guarding calls to it spent open.
    pub breaker_open: SimDuration,
    /// Per-bucket counts, from t = 0.
    pub timeline: Vec<Bucket>,
}

impl ServiceMetrics {
    /// Logical requests that gave up, all reasons.
    pub fn gave_up_total(&self) -> u64 {
        self.gave_up.iter().sum()
    }

    /// Largest arrivals per second over the buckets starting at or after `from`.
    pub fn peak_rps(&self, bucket: SimDuration, from: SimTime) -> f64 {
        let first = from.0.div_ceil(bucket.0.max(1)) as usize;
        let peak = self
            .timeline
            .iter()
            .skip(first)
            .map(|b| b.arrivals)
            .max()
            .unwrap_or(0);
        peak as f64 / bucket.as_secs_f64()
    }
}

/// One bucket of a population's own series (what recovery of open work is measured on).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PopulationBucket {
    /// Open and trace requests that began (arrived): the offered load, whether or not the
    /// client then sent their first attempt at once (a client-side rate limiter may hold it,
    /// an open breaker refuse it). 0 for a closed population, whose recovery is judged by
    /// its backlog instead.
    pub arrived: u32,
    /// First attempts sent.
    pub first_attempts: u32,
    /// Requests that succeeded.
    pub succeeded: u32,
    /// Requests that gave up.
    pub gave_up: u32,
}

/// What one population's requests did in a run.
#[derive(Debug, Clone, Default)]
pub struct PopulationMetrics {
    /// Logical requests.
    pub requests: u64,
    /// Their attempts that reached the entry service.
    pub calls: u64,
    /// Requests that succeeded.
    pub succeeded: u64,
    /// Requests that gave up.
    pub gave_up: u64,
    /// Latency (end - start, a limiter wait included) of every request that ended, in ns.
    pub latencies: Latencies,
    /// Per-bucket first attempts and outcomes, from t = 0.
    pub timeline: Vec<PopulationBucket>,
}

/// Everything one run (one strategy, one replication) measured.
#[derive(Debug, Clone, Default)]
pub struct RunMetrics {
    /// Events popped from the queue.
    pub events: u64,
    /// One per service, in scenario order (`services[0]` is the entry service, whose
    /// requests are the clients').
    pub services: Vec<ServiceMetrics>,
    /// One per population, in scenario order.
    pub populations: Vec<PopulationMetrics>,
    /// Attempts that reached the fallback server.
    pub fallback_calls: u64,
    /// Client requests that succeeded on the fallback server.
    pub fallback_succeeded: u64,
    /// When the last client request ended.
    pub completion: SimTime,
    /// Whether `time_limit` cut the run short: some client request ended as gave_up
    /// (`time_limit`), open at the limit or never started (a closed client's later request,
    /// a trace row at or after the limit). A downstream call open at the limit, or an open
    /// population's arrival due after it, does not count: it is no client request.
    pub cut_short: bool,
    /// Set when the run was stopped because events kept happening at this one instant
    /// (a zero-delay retry loop that time could never end).
    pub stalled_at: Option<SimTime>,
    /// Total time the breakers of client requests spent open.
    pub breaker_open: SimDuration,
    /// The most requests in flight at once beyond the closed clients (open arrivals and
    /// downstream calls): what memory grows with.
    pub peak_requests: u32,
    /// Latency of every client request that ended.
    pub latencies: Latencies,
    /// Latency of every client request that succeeded.
    pub success_latencies: Latencies,
    /// When the last request of a closed population that started before the trigger's end
    /// ended (`None`: no such request, or no trigger); `backlog_open` when one of them
    /// never ended. These requests are the closed rule's *backlog* (see [`recovery`]).
    pub backlog_cleared: Option<SimTime>,
    /// A request of the backlog was still open at the time limit.
    pub backlog_open: bool,
    /// A request of the backlog ended at or after the trigger's
    /// start ([`crate::model::Scenario::trigger_start`]): it met the trouble.
    pub backlog_met_trouble: bool,
    /// One of those succeeded (at or after the trigger's start).
    pub backlog_succeeded: bool,
    /// A client request succeeded at or after the trigger's end.
    pub served_after_trigger: bool,
    /// Per-request records of client requests, when requested.
    pub requests: Vec<RequestRecord>,
    /// Every attempt of the sampled client requests, when requested, in the order their
    /// outcomes became known.
    pub attempts: Vec<AttemptRecord>,
}

impl RunMetrics {
    /// Gives the services' series buffers back to this thread, for its next runs'
    /// [`Timeline`]s, once they are folded into the sums. A sweep's small runs (Brooker's
    /// 2015 experiment: about 3 000 events and a few hundred buckets each) otherwise grow
    /// every series from nothing, bucket by bucket: the reallocations and their copies took
    /// 3% of that experiment's instructions.
    pub fn recycle(self) {
        timeline::give_back(self.services.into_iter().map(|s| s.timeline));
    }

    /// The entry service (the clients' view).
    pub fn entry(&self) -> &ServiceMetrics {
        &self.services[0]
    }

    /// Client requests that succeeded.
    pub fn succeeded(&self) -> u64 {
        self.entry().succeeded
    }

    /// Client requests that gave up, all reasons.
    pub fn gave_up_total(&self) -> u64 {
        self.entry().gave_up_total()
    }

    /// Attempts clients made that reached the entry service.
    pub fn calls(&self) -> u64 {
        self.entry().calls
    }
}
