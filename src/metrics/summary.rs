//! Reducing the replications of one strategy to the numbers in `summary.csv` and
//! `timeseries.csv`.
//!
//! Means and 95% confidence half-widths are taken over replications (`1.96 · sd / √R`, sample
//! sd, 0 when R = 1). Latency percentiles pool every request of every replication and use
//! the nearest-rank definition (`sorted[⌈p·n⌉ - 1]`), so a small hand-worked case gives an
//! exact sample value, never an interpolation.

use super::{Bucket, RunMetrics, SUCCESS_BIT};
use crate::model::Scenario;
use crate::model::outcome::GiveUpReason;
use crate::time::{SimDuration, SimTime};

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

/// One strategy's results over its replications: one row of `summary.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct StrategySummary {
    /// Strategy name.
    pub strategy: String,
    /// Clients in the scenario.
    pub clients: u32,
    /// Replications reduced.
    pub replications: u32,
    /// Attempts that reached the server.
    pub calls: Stat,
    /// Time from t = 0 until the last request ended, seconds.
    pub completion_s: Stat,
    /// Max over buckets of arrivals per second.
    pub peak_rps: Stat,
    /// The same over buckets starting at or after the last outage's end.
    pub recovery_peak_rps: Stat,
    /// Requests that succeeded (mean per replication).
    pub succeeded: f64,
    /// Requests that gave up (mean per replication).
    pub gave_up: f64,
    /// Logical requests (mean per replication).
    pub requests: f64,
    /// Calls per logical request.
    pub amplification: f64,
    /// Pooled latency percentiles of all requests, seconds (p50, p95, p99).
    pub latency_s: [f64; 3],
    /// Pooled time-to-success percentiles of succeeded requests, seconds (p95, p99);
    /// `None` when nothing succeeded.
    pub success_s: Option<[f64; 2]>,
    /// Served attempts already abandoned by their client (mean per replication).
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
    /// Events simulated, all replications.
    pub events: u64,
    /// Replications that `time_limit` cut short.
    pub cut_short: u32,
    /// Latency quantiles at 0, 1/N, .., 1 (N = [`CDF_POINTS`]), seconds, for charts.
    pub latency_quantiles: Vec<f64>,
}

impl StrategySummary {
    /// Mean give-ups for one reason.
    pub fn gave_up_for(&self, reason: GiveUpReason) -> f64 {
        self.gave_up_by[reason as usize]
    }
}

/// Reduces the replications (`runs`, in replication order) of strategy `index`.
pub fn summarize(scenario: &Scenario, index: usize, runs: &[RunMetrics]) -> StrategySummary {
    let per_run = |f: &dyn Fn(&RunMetrics) -> f64| -> Vec<f64> { runs.iter().map(f).collect() };
    let mean = |f: &dyn Fn(&RunMetrics) -> f64| Stat::of(&per_run(f)).mean;
    let bucket = scenario.bucket;
    let recovery_from = scenario
        .entry()
        .server
        .last_outage_end()
        .unwrap_or(SimTime::ZERO);
    let calls = Stat::of(&per_run(&|r| r.calls as f64));

    let mut all: Vec<u64> = runs
        .iter()
        .flat_map(|r| r.latencies.iter().map(|l| l & !SUCCESS_BIT))
        .collect();
    let mut ok: Vec<u64> = runs
        .iter()
        .flat_map(|r| {
            r.latencies
                .iter()
                .filter(|l| *l & SUCCESS_BIT != 0)
                .map(|l| l & !SUCCESS_BIT)
        })
        .collect();
    all.sort_unstable();
    ok.sort_unstable();
    let secs = |ns: u64| SimDuration(ns).as_secs_f64();
    let pct = |v: &[u64], p: f64| secs(percentile(v, p).unwrap_or(0));

    let succeeded: u64 = runs.iter().map(|r| r.succeeded).sum();
    let success_attempts: u64 = runs.iter().map(|r| r.success_attempts).sum();
    let refused: u64 = runs.iter().map(|r| r.budget_refused).sum();
    let allowed: u64 = runs.iter().map(|r| r.budget_allowed).sum();
    let mut retries = [0.0; 6];
    for (k, slot) in retries.iter_mut().enumerate() {
        *slot = mean(&|r| r.retries[k] as f64);
    }
    let mut gave_up_by = [0.0; 7];
    for (k, slot) in gave_up_by.iter_mut().enumerate() {
        *slot = mean(&|r| r.gave_up[k] as f64);
    }

    StrategySummary {
        strategy: scenario.strategies[index].name.clone(),
        clients: scenario.closed_clients() as u32,
        replications: runs.len() as u32,
        calls,
        completion_s: Stat::of(&per_run(&|r| r.completion.as_secs_f64())),
        peak_rps: Stat::of(&per_run(&|r| r.peak_rps(bucket, SimTime::ZERO))),
        recovery_peak_rps: Stat::of(&per_run(&|r| r.peak_rps(bucket, recovery_from))),
        succeeded: mean(&|r| r.succeeded as f64),
        gave_up: mean(&|r| r.gave_up_total() as f64),
        requests: mean(&|r| (r.succeeded + r.gave_up_total()) as f64),
        amplification: calls.mean / mean(&|r| (r.succeeded + r.gave_up_total()) as f64).max(1.0),
        latency_s: [pct(&all, 0.50), pct(&all, 0.95), pct(&all, 0.99)],
        success_s: (!ok.is_empty()).then(|| [pct(&ok, 0.95), pct(&ok, 0.99)]),
        wasted: mean(&|r| r.wasted as f64),
        attempts_per_success: (succeeded > 0).then(|| success_attempts as f64 / succeeded as f64),
        retries,
        gave_up_by,
        budget_refused: mean(&|r| r.budget_refused as f64),
        budget_refusal_rate: if refused + allowed > 0 {
            refused as f64 / (refused + allowed) as f64
        } else {
            0.0
        },
        breaker_open_s: mean(&|r| r.breaker_open.as_secs_f64()),
        fallback_calls: mean(&|r| r.fallback_calls as f64),
        fallback_succeeded: mean(&|r| r.fallback_succeeded as f64),
        events: runs.iter().map(|r| r.events).sum(),
        cut_short: runs.iter().filter(|r| r.cut_short).count() as u32,
        latency_quantiles: (0..=CDF_POINTS)
            .map(|i| pct(&all, i as f64 / CDF_POINTS as f64))
            .collect(),
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

/// One bucket of `timeseries.csv`: the mean over replications of each [`Bucket`] field.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MeanBucket {
    /// Bucket start, seconds.
    pub t_s: f64,
    /// Mean of [`Bucket::arrivals`].
    pub arrivals: f64,
    /// Mean of [`Bucket::accepted`].
    pub accepted: f64,
    /// Mean of [`Bucket::rejected`].
    pub rejected: f64,
    /// Mean of [`Bucket::completed`].
    pub completed: f64,
    /// Mean of [`Bucket::in_service`].
    pub in_service: f64,
    /// Mean of [`Bucket::queued`].
    pub queued: f64,
    /// Mean of [`Bucket::retries`].
    pub retries: f64,
    /// Mean of [`Bucket::budget_refused`].
    pub budget_refused: f64,
    /// Mean of [`Bucket::breakers_open`].
    pub breakers_open: f64,
    /// Mean of [`Bucket::fallback_arrivals`].
    pub fallback_arrivals: f64,
}

/// The mean time series of `runs`; runs that ended earlier count as idle (zeros) after
/// their last bucket.
pub fn mean_timeline(runs: &[RunMetrics], bucket: SimDuration) -> Vec<MeanBucket> {
    let len = runs.iter().map(|r| r.timeline.len()).max().unwrap_or(0);
    let n = runs.len().max(1) as f64;
    (0..len)
        .map(|i| {
            let mut sum = [0u64; 10];
            for r in runs {
                if let Some(b) = r.timeline.get(i) {
                    for (s, v) in sum.iter_mut().zip(fields(b)) {
                        *s += v as u64;
                    }
                }
            }
            let m = |k: usize| sum[k] as f64 / n;
            MeanBucket {
                t_s: SimDuration(bucket.0 * i as u64).as_secs_f64(),
                arrivals: m(0),
                accepted: m(1),
                rejected: m(2),
                completed: m(3),
                in_service: m(4),
                queued: m(5),
                retries: m(6),
                budget_refused: m(7),
                breakers_open: m(8),
                fallback_arrivals: m(9),
            }
        })
        .collect()
}

fn fields(b: &Bucket) -> [u32; 10] {
    [
        b.arrivals,
        b.accepted,
        b.rejected,
        b.completed,
        b.in_service,
        b.queued,
        b.retries,
        b.budget_refused,
        b.breakers_open,
        b.fallback_arrivals,
    ]
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
