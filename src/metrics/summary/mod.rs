//! Reducing the replications of one strategy to the numbers in `summary.csv`,
//! `services.csv`, `populations.csv` and `timeseries.csv`.
//!
//! Runs are folded into a [`StrategyAccumulator`] as each one ends, in whatever order they
//! finish: counters and time series are integer sums, latencies a mergeable
//! [`Latencies`](super::Latencies) set, and the few per-replication numbers (the inputs of confidence intervals
//! and paired comparisons) are stored at their replication's index. Memory is therefore
//! independent of the number of replications (except `requests.csv` records), and the result
//! is byte-identical whatever the thread count or the order of completion.
//!
//! Means and 95% confidence half-widths are taken over replications (`1.96 · sd / √R`, sample
//! sd, 0 when R = 1). Latency percentiles pool every request of every replication and use
//! the nearest-rank definition (`sorted[⌈p·n⌉ - 1]`), exact up to a million samples (see
//! [`super::latency`]). The folding is in `accumulator.rs`; the types it reduces to are here.

use crate::metrics::{AttemptRecord, BUCKET_FIELDS, RequestRecord, RunMetrics};
use crate::model::Scenario;
use crate::model::outcome::GiveUpReason;

mod accumulator;

pub use accumulator::{Replicate, StrategyAccumulator};

/// A mean over replications with its 95% confidence half-width.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stat {
    /// Mean over replications.
    pub mean: f64,
    /// `1.96 · sd / √R` (0 when R = 1).
    pub ci95: f64,
}

impl Stat {
    /// Mean and CI of `values` (one per replication; at least one).
    pub fn of(values: &[f64]) -> Stat {
        let n = values.len() as f64;
        if values.is_empty() {
            return Stat::default();
        }
        let mean = values.iter().sum::<f64>() / n;
        if values.len() < 2 {
            return Stat { mean, ci95: 0.0 };
        }
        let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
        Stat {
            mean,
            ci95: 1.96 * var.sqrt() / n.sqrt(),
        }
    }
}

/// Number of points kept of each latency distribution for charts (quantiles 0, 1/N .. 1).
pub const CDF_POINTS: usize = 200;

/// The summary of strategy `index` over `runs` (replications in order): a shortcut through
/// [`StrategyAccumulator`] for callers that hold every run.
pub fn summarize(scenario: &Scenario, index: usize, runs: &[RunMetrics]) -> StrategySummary {
    let mut acc = StrategyAccumulator::new(scenario, runs.len() as u32);
    for (r, run) in runs.iter().enumerate() {
        acc.add(scenario, r as u32, run.clone());
    }
    acc.finish(scenario, index).summary
}

/// One strategy's results over its replications: one row of `summary.csv`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StrategySummary {
    /// Strategy name.
    pub strategy: String,
    /// Clients of the closed populations.
    pub clients: u32,
    /// Replications reduced.
    pub replications: u32,
    /// Client attempts that reached the entry service.
    pub calls: Stat,
    /// Time from t = 0 until the last client request ended, seconds.
    pub completion_s: Stat,
    /// Max over buckets of arrivals per second at the entry service.
    pub peak_rps: Stat,
    /// The same over buckets starting at or after the end of the last outage.
    pub recovery_peak_rps: Stat,
    /// Client requests that succeeded (mean per replication).
    pub succeeded: f64,
    /// Client requests that gave up (mean per replication).
    pub gave_up: f64,
    /// 95% confidence half-width of `gave_up` over replications (0 when R = 1): what the
    /// verdict compares losses with.
    pub gave_up_ci95: f64,
    /// Logical client requests (mean per replication).
    pub requests: f64,
    /// Calls per logical request; `None` when there was no request (the time limit came
    /// before any arrival).
    pub amplification: Option<f64>,
    /// Pooled latency percentiles of all requests, seconds (p50, p95, p99); `None` when no
    /// request started (the time limit came first).
    pub latency_s: Option<[f64; 3]>,
    /// Mean latency of all requests, seconds (exact); `None` when no request started.
    pub latency_mean_s: Option<f64>,
    /// Pooled time-to-success percentiles of succeeded requests, seconds (p95, p99);
    /// `None` when nothing succeeded.
    pub success_s: Option<[f64; 2]>,
    /// Attempts the entry service served after their client had abandoned them.
    pub wasted: f64,
    /// Mean attempts of a succeeded request (`None` when nothing succeeded).
    pub attempts_per_success: Option<f64>,
    /// Retries by failure class (503, 500, 429, timeout, unreachable, 409), mean per
    /// replication.
    pub retries: [f64; 6],
    /// Give-ups by [`GiveUpReason`], mean per replication.
    pub gave_up_by: [f64; 7],
    /// Retries refused by the budget (mean per replication).
    pub budget_refused: f64,
    /// refused / (refused + allowed), pooled (0 without a budget).
    pub budget_refusal_rate: f64,
    /// Time breakers spent open, seconds (mean per replication).
    pub breaker_open_s: f64,
    /// Attempts that reached the fallback server (mean per replication).
    pub fallback_calls: f64,
    /// Requests that succeeded on the fallback server (mean per replication).
    pub fallback_succeeded: f64,
    /// Queued attempts the entry service dropped (`queue_timeout`), mean per replication.
    pub shed: f64,
    /// Mean time from the trigger's end until back to normal, seconds; `None` when some
    /// replication never got back to normal, or there is no trigger.
    pub recovered_s: Option<f64>,
    /// Share of replications that got back to normal; `None` without a trigger.
    pub recovered_share: Option<f64>,
    /// Events simulated, all replications.
    pub events: u64,
    /// Replications that `time_limit` cut short.
    pub cut_short: u32,
    /// Most requests in flight at once beyond the closed clients, over the replications.
    pub peak_requests: u32,
    /// Latency quantiles at 0, 1/N, .., 1 (N = [`CDF_POINTS`]), seconds, for charts.
    pub latency_quantiles: Vec<f64>,
}

impl StrategySummary {
    /// Mean give-ups for one reason.
    pub fn gave_up_for(&self, reason: GiveUpReason) -> f64 {
        self.gave_up_by[reason as usize]
    }
}

/// One row of `services.csv`: means per replication.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceSummary {
    /// Service name.
    pub service: String,
    /// Attempts that reached it.
    pub calls: f64,
    /// Calls that took a slot or queue place.
    pub accepted: f64,
    /// Calls refused at once.
    pub rejected: f64,
    /// Queued calls dropped by its queue timeout.
    pub shed: f64,
    /// Calls it served for callers that had abandoned them.
    pub wasted: f64,
    /// Calls lost in crashes.
    pub lost: f64,
    /// Logical requests made to it.
    pub requests: f64,
    /// Logical requests to it that succeeded.
    pub succeeded: f64,
    /// Logical requests to it that gave up.
    pub gave_up: f64,
    /// Attempts to it abandoned by their caller's timeout.
    pub timeouts: f64,
    /// Calls at this service per logical client request; `None` when the clients made no
    /// request.
    pub amplification: Option<f64>,
    /// Mean over replications of its peak arrivals per second.
    pub peak_rps: f64,
    /// Time the breakers guarding calls to it spent open, summed over them (mean per
    /// replication): the clients' for the entry service, the calling services' below it.
    pub breaker_open_s: f64,
}

/// One row of `populations.csv`: means per replication, latencies pooled.
#[derive(Debug, Clone, PartialEq)]
pub struct PopulationSummary {
    /// Population name.
    pub population: String,
    /// Logical requests.
    pub requests: f64,
    /// Their attempts that reached the entry service.
    pub calls: f64,
    /// Requests that succeeded.
    pub succeeded: f64,
    /// Requests that gave up.
    pub gave_up: f64,
    /// calls / requests; `None` when the population made no request (an open population
    /// whose arrivals all fall at or after the time limit).
    pub amplification: Option<f64>,
    /// Pooled p50 latency, seconds (`None`: no request started).
    pub latency_p50_s: Option<f64>,
    /// Pooled p99 latency, seconds (`None`: no request started).
    pub latency_p99_s: Option<f64>,
    /// Mean per bucket of first attempts, successes and give-ups (for charts).
    pub timeline: Vec<[f64; 3]>,
}

/// One bucket of `timeseries.csv`: the mean over replications of each [`Bucket`](super::Bucket) field.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MeanBucket {
    /// Bucket start, seconds.
    pub t_s: f64,
    /// Means of the [`Bucket::fields`](super::Bucket::fields), in that order.
    pub values: [f64; BUCKET_FIELDS],
}

macro_rules! mean_fields {
    ($($name:ident = $i:expr),* $(,)?) => {
        impl MeanBucket {
            $(
                #[doc = concat!("Mean of [`Bucket::", stringify!($name), "`](super::Bucket::", stringify!($name), ").")]
                pub fn $name(&self) -> f64 {
                    self.values[$i]
                }
            )*
        }
    };
}

mean_fields!(
    arrivals = 0,
    accepted = 1,
    rejected = 2,
    completed = 3,
    in_service = 4,
    queued = 5,
    retries = 6,
    budget_refused = 7,
    breakers_open = 8,
    fallback_arrivals = 9,
    shed = 10,
    first_attempts = 11,
    succeeded = 12,
    gave_up = 13,
    timeouts = 14,
    concurrency = 15,
);

/// The results of one strategy at one sweep point.
#[derive(Debug, Clone)]
pub struct StrategyResult {
    /// The `summary.csv` row.
    pub summary: StrategySummary,
    /// One `services.csv` row per service.
    pub services: Vec<ServiceSummary>,
    /// One `populations.csv` row per population.
    pub populations: Vec<PopulationSummary>,
    /// The mean time series of each service.
    pub timelines: Vec<Vec<MeanBucket>>,
    /// Each replication's headline numbers, for the paired comparisons; empty once they
    /// are made (see [`StrategyResult::forget_replications`]).
    pub replicates: Vec<Replicate>,
    /// Per-request records by replication (empty unless requested).
    pub requests: Vec<Vec<RequestRecord>>,
    /// The attempts of the sampled client requests by replication (empty unless requested).
    pub attempts: Vec<Vec<AttemptRecord>>,
}

impl StrategyResult {
    /// Drops what was kept per replication only for the paired comparisons, once they are
    /// made: the replicates, and the per-replication record lists when none was recorded.
    /// A sweep's results then hold no more per strategy at 1 000 replications than at 10.
    pub fn forget_replications(&mut self) {
        self.replicates = Vec::new();
        if self.requests.iter().all(Vec::is_empty) {
            self.requests = Vec::new();
        }
        if self.attempts.iter().all(Vec::is_empty) {
            self.attempts = Vec::new();
        }
    }

    /// The entry service's mean time series.
    pub fn timeline(&self) -> &[MeanBucket] {
        &self.timelines[0]
    }
}

/// Nearest-rank percentile of sorted values: `sorted[⌈p·n⌉ - 1]` (`p = 0` gives the minimum).
pub fn percentile(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles_pick_sample_values() {
        let v: Vec<u64> = (1..=10).collect();
        assert_eq!(percentile(&v, 0.5), Some(5));
        assert_eq!(percentile(&v, 0.95), Some(10));
        assert_eq!(percentile(&v, 0.0), Some(1));
        assert_eq!(percentile(&v, 1.0), Some(10));
        assert_eq!(percentile(&[], 0.5), None);
    }

    #[test]
    fn ci95_is_zero_for_one_replication_and_matches_the_formula() {
        assert_eq!(
            Stat::of(&[4.0]),
            Stat {
                mean: 4.0,
                ci95: 0.0
            }
        );
        let s = Stat::of(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(s.mean, 2.5);
        let sd = (5.0f64 / 3.0).sqrt();
        assert!((s.ci95 - 1.96 * sd / 2.0).abs() < 1e-12);
    }
}
