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

use serde::{Deserialize, Serialize};

use crate::model::outcome::{GiveUpReason, Status};
use crate::time::{SimDuration, SimTime};
pub use latency::Latencies;

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

/// Counts for one time bucket `[t, t + bucket)` of one service.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bucket {
    /// Attempts reaching the service (= accepted + rejected).
    pub arrivals: u32,
    /// Arrivals that took a slot or a queue place.
    pub accepted: u32,
    /// Arrivals refused at once (400, 409, 429, 503).
    pub rejected: u32,
    /// Requests that released their slot (service and downstream calls finished).
    pub completed: u32,
    /// Largest number of slots held during the bucket.
    pub in_service: u32,
    /// Largest queue length during the bucket.
    pub queued: u32,
    /// Retry attempts sent to the service (not first attempts).
    pub retries: u32,
    /// Retries to the service refused by a budget.
    pub budget_refused: u32,
    /// Open breakers guarding calls to the service, at the bucket's end.
    pub breakers_open: u32,
    /// Attempts reaching the fallback server (the entry service's block only).
    pub fallback_arrivals: u32,
    /// Queued requests dropped by `queue_timeout` (answered 503, never served).
    pub shed: u32,
    /// First attempts of logical requests to the service.
    pub first_attempts: u32,
    /// Logical requests to the service that succeeded.
    pub succeeded: u32,
    /// Logical requests to the service that gave up.
    pub gave_up: u32,
    /// Attempts to the service abandoned by their caller's timeout.
    pub timeouts: u32,
    /// Slots at the bucket's end.
    pub concurrency: u32,
}

/// The number of counters in a [`Bucket`], in [`Bucket::fields`] order.
pub const BUCKET_FIELDS: usize = 16;

impl Bucket {
    /// Every counter, in declaration order (the `timeseries.csv` column order).
    pub fn fields(&self) -> [u32; BUCKET_FIELDS] {
        [
            self.arrivals,
            self.accepted,
            self.rejected,
            self.completed,
            self.in_service,
            self.queued,
            self.retries,
            self.budget_refused,
            self.breakers_open,
            self.fallback_arrivals,
            self.shed,
            self.first_attempts,
            self.succeeded,
            self.gave_up,
            self.timeouts,
            self.concurrency,
        ]
    }
}

/// Per-bucket counters of one service, with gauges carried across empty buckets.
#[derive(Debug, Clone)]
pub struct Timeline {
    width: u64,
    buckets: Vec<Bucket>,
    current_end: u64,
    in_service: u32,
    queued: u32,
    breakers_open: u32,
    concurrency: u32,
    /// The start of the last bucket (`u64::MAX` before the first): changes at that very
    /// instant do not raise its gauges from the values carried in (see `occupancy`).
    carried_start: u64,
    /// The largest `in_service` and `queued` reached by an increase at `carried_start`.
    start_peaks: (u32, u32),
}

impl Timeline {
    /// An empty timeline of `width`-wide buckets (width > 0) for a service that starts with
    /// `concurrency` slots.
    pub fn new(width: SimDuration, concurrency: u32) -> Self {
        Timeline {
            width: width.as_nanos().max(1),
            buckets: spare_series(),
            current_end: 0,
            in_service: 0,
            queued: 0,
            breakers_open: 0,
            concurrency,
            carried_start: u64::MAX,
            start_peaks: (0, 0),
        }
    }

    /// The bucket containing `t`, creating it (and any empty ones before it) as needed.
    /// Amortised O(1): events arrive in time order, so this is almost always the last bucket.
    #[inline]
    pub fn at(&mut self, t: SimTime) -> &mut Bucket {
        if t.0 >= self.current_end || self.buckets.is_empty() {
            self.extend_to(t);
        }
        self.buckets.last_mut().expect("extend_to leaves a bucket")
    }

    #[cold]
    fn extend_to(&mut self, t: SimTime) {
        let index = (t.0 / self.width) as usize;
        while self.buckets.len() <= index {
            self.buckets.push(Bucket {
                in_service: self.in_service,
                queued: self.queued,
                breakers_open: self.breakers_open,
                concurrency: self.concurrency,
                ..Bucket::default()
            });
        }
        self.current_end = (index as u64 + 1) * self.width;
        self.carried_start = index as u64 * self.width;
        self.start_peaks = (0, 0);
    }

    /// Records the service's occupancy after a change at `t`.
    ///
    /// A bucket's `in_service` and `queued` are the largest values reached during it, time
    /// being half-open like every interval here: a value carried in from before the bucket
    /// counts only if it is still held once the bucket's first instant is over (a service
    /// busy over [50 ms, 100 ms) is not busy in the bucket [100 ms, 200 ms)). At that first
    /// instant a value counts when an increase reaches it, even for no time (a request
    /// queued at 100 ms that a slot freed at 100 ms takes at once makes `queued` 1), as it
    /// would later in the bucket; a value passed on the way down does not (two slots freed
    /// at 100 ms, one event each, leave 0, not the 1 between, which no request held), so
    /// the gauges do not depend on the order of events at one instant.
    #[inline]
    pub fn occupancy(&mut self, t: SimTime, in_service: u32, queued: u32) {
        // Extend first: the empty buckets before `t` held the old values throughout.
        if t.0 >= self.current_end || self.buckets.is_empty() {
            self.extend_to(t);
        }
        // At the bucket's first instant: the value held now, or a larger one an increase
        // reached at this instant; later in the bucket, the maxima rise as usual.
        let b = self.buckets.last_mut().expect("extend_to leaves a bucket");
        if t.0 == self.carried_start {
            let peaks = &mut self.start_peaks;
            if in_service > self.in_service {
                peaks.0 = peaks.0.max(in_service);
            }
            if queued > self.queued {
                peaks.1 = peaks.1.max(queued);
            }
            b.in_service = peaks.0.max(in_service);
            b.queued = peaks.1.max(queued);
        } else {
            b.in_service = b.in_service.max(in_service);
            b.queued = b.queued.max(queued);
        }
        self.in_service = in_service;
        self.queued = queued;
    }

    /// Records the number of open breakers after a change at `t`.
    pub fn breakers(&mut self, t: SimTime, open: u32) {
        // Extend first: the empty buckets before `t` end with the old count.
        self.at(t).breakers_open = open;
        self.breakers_open = open;
    }

    /// Records the service's slots after a change at `t`.
    pub fn concurrency(&mut self, t: SimTime, slots: u32) {
        self.at(t).concurrency = slots;
        self.concurrency = slots;
    }

    /// The buckets up to and including the one containing `end`.
    pub fn finish(mut self, end: SimTime) -> Vec<Bucket> {
        self.at(end);
        self.buckets
    }
}

thread_local! {
    /// Series buffers of this thread's finished runs, emptied, for its next runs (see
    /// [`RunMetrics::recycle`]).
    static SPARE_SERIES: std::cell::RefCell<Vec<Vec<Bucket>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Spare series buffers a thread keeps: one per service of the largest graphs people run.
const SPARE_SERIES_COUNT: usize = 16;
/// Largest series (in buckets) kept as a spare: 4 MiB. Longer series are rare (hours at a
/// fine bucket) and regrow cheaply relative to their runs.
const SPARE_SERIES_LIMIT: usize = 1 << 16;

/// An empty series buffer, reusing one a finished run of this thread gave back.
fn spare_series() -> Vec<Bucket> {
    SPARE_SERIES
        .with(|spares| spares.borrow_mut().pop())
        .unwrap_or_default()
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
    /// From first send to end; `None` for a request the time limit kept from starting (it
    /// has no latency sample).
    pub latency: Option<SimDuration>,
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
    /// First attempts sent (the offered load).
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
    /// Latency (end - first send) of every request that ended, in ns.
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
    /// When the last client request that started before the trigger's end ended (`None`:
    /// no such request, or no trigger); `backlog_open` when one of them never ended.
    pub backlog_cleared: Option<SimTime>,
    /// A request that started before the trigger's end was still open at the time limit.
    pub backlog_open: bool,
    /// A request that started before the trigger's end ended at or after the trigger's
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
        SPARE_SERIES.with(|spares| {
            let mut spares = spares.borrow_mut();
            for mut series in self.services.into_iter().map(|s| s.timeline) {
                if spares.len() < SPARE_SERIES_COUNT && series.capacity() <= SPARE_SERIES_LIMIT {
                    series.clear();
                    spares.push(series);
                }
            }
        });
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Buckets with no event of their own carry the gauges' values from before the next
    /// change, not after it.
    #[test]
    fn empty_buckets_carry_the_value_held_before_the_next_change() {
        let ms = |n| SimTime(SimDuration::from_millis(n).0);
        let mut t = Timeline::new(SimDuration::from_millis(100), 8);
        t.breakers(ms(20), 1);
        t.occupancy(ms(30), 4, 2);
        t.concurrency(ms(40), 5);
        t.breakers(ms(1020), 0);
        t.occupancy(ms(1030), 0, 0);
        let b = t.finish(ms(1100));
        let open: Vec<u32> = b.iter().map(|b| b.breakers_open).collect();
        assert_eq!(open, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0]);
        assert!(b[..=10].iter().all(|b| (b.in_service, b.queued) == (4, 2)));
        assert_eq!((b[11].in_service, b[11].queued), (0, 0));
        assert!(b.iter().all(|b| b.concurrency == 5));
    }

    /// Intervals are half-open: a value that ends at a bucket's first instant was not held
    /// during that bucket, one that ends later was.
    #[test]
    fn a_change_at_a_buckets_first_instant_replaces_the_carried_value() {
        let ms = |n: u64| SimTime(SimDuration::from_millis(n).0);
        let mut t = Timeline::new(SimDuration::from_millis(100), 1);
        t.occupancy(ms(50), 1, 1);
        // Bucket [100, 200) opens with a counter, then a change at its first instant: the
        // busy [50, 100) ms is the first bucket's.
        t.at(ms(100)).arrivals += 1;
        t.occupancy(ms(100), 1, 0);
        t.occupancy(ms(150), 2, 0);
        // Two slots free at 200 ms, one change each: the 1 between them is passed on the way
        // down, not reached.
        t.occupancy(ms(200), 1, 0);
        t.occupancy(ms(200), 0, 0);
        t.occupancy(ms(250), 0, 1);
        // Bucket [300, 400) opens at 301 ms: the queue of 1 was held over [300, 301).
        t.occupancy(ms(301), 0, 0);
        let b = t.finish(ms(350));
        let gauges: Vec<(u32, u32)> = b.iter().map(|b| (b.in_service, b.queued)).collect();
        assert_eq!(gauges, [(1, 1), (2, 0), (0, 1), (0, 1)]);
    }

    /// A value an increase reaches for no time counts at a bucket's first instant as it
    /// does later in the bucket: a request that joins the queue at 100 ms and takes a slot
    /// freed at 100 ms; the slot it takes is in service again once the instant is over.
    #[test]
    fn a_momentary_value_counts_at_a_buckets_first_instant_as_anywhere() {
        let ms = |n: u64| SimTime(SimDuration::from_millis(n).0);
        let mut t = Timeline::new(SimDuration::from_millis(100), 1);
        for start in [50, 100] {
            t.occupancy(ms(start), 1, 0);
            t.occupancy(ms(start), 1, 1);
            t.occupancy(ms(start), 0, 1);
            t.occupancy(ms(start), 1, 0);
        }
        let b = t.finish(ms(150));
        let gauges: Vec<(u32, u32)> = b.iter().map(|b| (b.in_service, b.queued)).collect();
        assert_eq!(gauges, [(1, 1), (1, 1)]);
    }
}
