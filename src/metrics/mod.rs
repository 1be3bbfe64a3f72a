//! What a run measures, and how runs are reduced to the numbers a planner reads.
//!
//! During a run the engine writes into [`RunMetrics`]: counters, one [`Bucket`] per
//! `metrics.bucket` of simulated time, and each logical request's latency. No event log is
//! kept. After the runs, [`summary::summarize`] and [`summary::mean_timeline`] reduce the
//! replications of one strategy; both depend only on the order of their input (fixed by the
//! runner), never on which thread finished first.

use crate::model::outcome::{GiveUpReason, Status};
use crate::time::{SimDuration, SimTime};

/// Counts for one time bucket `[t, t + bucket)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bucket {
    /// Attempts reaching the primary server (= accepted + rejected).
    pub arrivals: u32,
    /// Arrivals that took a slot or a queue place.
    pub accepted: u32,
    /// Arrivals refused at once (400, 429, 503).
    pub rejected: u32,
    /// Services finished.
    pub completed: u32,
    /// Largest number in service during the bucket.
    pub in_service: u32,
    /// Largest queue length during the bucket.
    pub queued: u32,
    /// Retry attempts sent (not first attempts).
    pub retries: u32,
    /// Retries refused by a budget.
    pub budget_refused: u32,
    /// Open breakers at the bucket's end.
    pub breakers_open: u32,
    /// Attempts reaching the fallback server.
    pub fallback_arrivals: u32,
}

/// Per-bucket counters with gauges carried across empty buckets.
#[derive(Debug, Clone)]
pub struct Timeline {
    width: u64,
    buckets: Vec<Bucket>,
    current_end: u64,
    in_service: u32,
    queued: u32,
    breakers_open: u32,
}

impl Timeline {
    /// An empty timeline of `width`-wide buckets (width > 0).
    pub fn new(width: SimDuration) -> Self {
        Timeline {
            width: width.as_nanos().max(1),
            buckets: Vec::new(),
            current_end: 0,
            in_service: 0,
            queued: 0,
            breakers_open: 0,
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
                ..Bucket::default()
            });
        }
        self.current_end = (index as u64 + 1) * self.width;
    }

    /// Records the primary server's occupancy after a change at `t`.
    #[inline]
    pub fn occupancy(&mut self, t: SimTime, in_service: u32, queued: u32) {
        // Extend first: the empty buckets before `t` held the old values throughout.
        let b = self.at(t);
        b.in_service = b.in_service.max(in_service);
        b.queued = b.queued.max(queued);
        self.in_service = in_service;
        self.queued = queued;
    }

    /// Records the number of open breakers after a change at `t`.
    pub fn breakers(&mut self, t: SimTime, open: u32) {
        // Extend first: the empty buckets before `t` end with the old count.
        self.at(t).breakers_open = open;
        self.breakers_open = open;
    }

    /// The buckets up to and including the one containing `end`.
    pub fn finish(mut self, end: SimTime) -> Vec<Bucket> {
        self.at(end);
        self.buckets
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// One row of `requests.csv`: seed 002's `retries_exhausted` record, for every request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RequestRecord {
    /// Client id (0-based).
    pub client: u32,
    /// The client's request number (0-based).
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
    /// From first send to end.
    pub latency: SimDuration,
}

/// Everything one run (one strategy, one replication) measured.
#[derive(Debug, Clone, Default)]
pub struct RunMetrics {
    /// Events popped from the queue.
    pub events: u64,
    /// Attempts that reached the primary server (accepted + rejected).
    pub calls: u64,
    /// Calls that took a slot or queue place.
    pub accepted: u64,
    /// Calls refused at once.
    pub rejected: u64,
    /// Served attempts whose client had already abandoned them (timeout) when served.
    pub wasted: u64,
    /// Logical requests that succeeded.
    pub succeeded: u64,
    /// Logical requests that gave up, by [`GiveUpReason`] index.
    pub gave_up: [u64; 7],
    /// Attempts made by the requests that succeeded (for attempts per success).
    pub success_attempts: u64,
    /// Retries sent, by failure class (see [`class_index`]).
    pub retries: [u64; 6],
    /// Retries a budget allowed.
    pub budget_allowed: u64,
    /// Retries a budget refused.
    pub budget_refused: u64,
    /// Total time breakers spent open.
    pub breaker_open: SimDuration,
    /// Attempts that reached the fallback server.
    pub fallback_calls: u64,
    /// Requests that succeeded on the fallback server.
    pub fallback_succeeded: u64,
    /// When the last logical request ended.
    pub completion: SimTime,
    /// Whether `time_limit` cut the run short (some requests ended as `time_limit`).
    pub cut_short: bool,
    /// The instant at which the run was stopped because simulated time stopped advancing
    /// (see `engine::SAME_INSTANT_PER_CLIENT`); its results are meaningless.
    pub stalled_at: Option<SimTime>,
    /// Per-bucket counts, from t = 0.
    pub timeline: Vec<Bucket>,
    /// Latency of every started request in ns; the top bit marks a success.
    pub latencies: Vec<u64>,
    /// Per-request records, when requested.
    pub requests: Vec<RequestRecord>,
}

/// The bit of a latency sample that marks a successful request.
pub const SUCCESS_BIT: u64 = 1 << 63;

impl RunMetrics {
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

pub mod summary;

#[cfg(test)]
mod tests {
    use super::*;

    /// Buckets with no event of their own carry the gauges' values from before the next
    /// change, not after it.
    #[test]
    fn empty_buckets_carry_the_value_held_before_the_next_change() {
        let ms = |n| SimTime(SimDuration::from_millis(n).0);
        let mut t = Timeline::new(SimDuration::from_millis(100));
        t.breakers(ms(20), 1);
        t.occupancy(ms(30), 4, 2);
        t.breakers(ms(1020), 0);
        t.occupancy(ms(1030), 0, 0);
        let b = t.finish(ms(1100));
        let open: Vec<u32> = b.iter().map(|b| b.breakers_open).collect();
        assert_eq!(open, [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0]);
        assert!(b[..=10].iter().all(|b| (b.in_service, b.queued) == (4, 2)));
        assert_eq!((b[11].in_service, b[11].queued), (0, 0));
    }
}
