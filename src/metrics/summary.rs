//! Reducing the replications of one strategy to the numbers in `summary.csv`,
//! `services.csv`, `populations.csv` and `timeseries.csv`.
//!
//! Runs are folded into a [`StrategyAccumulator`] as each one ends, in whatever order they
//! finish: counters and time series are integer sums, latencies a mergeable
//! [`Latencies`] set, and the few per-replication numbers (the inputs of confidence intervals
//! and paired comparisons) are stored at their replication's index. Memory is therefore
//! independent of the number of replications (except `requests.csv` records), and the result
//! is byte-identical whatever the thread count or the order of completion.
//!
//! Means and 95% confidence half-widths are taken over replications (`1.96 · sd / √R`, sample
//! sd, 0 when R = 1). Latency percentiles pool every request of every replication and use
//! the nearest-rank definition (`sorted[⌈p·n⌉ - 1]`), exact up to a million samples (see
//! [`super::latency`]).

use serde::{Deserialize, Serialize};

use super::recovery::{Recovery, recovery};
use super::{
    AttemptRecord, BUCKET_FIELDS, Bucket, Latencies, PopulationBucket, PopulationMetrics,
    RequestRecord, RunMetrics, ServiceMetrics, latency::SortedLatencies,
};
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

/// One replication's headline numbers: what confidence intervals and paired comparisons
/// are computed from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Replicate {
    /// Client attempts that reached the entry service.
    pub calls: f64,
    /// Time from t = 0 until the last client request ended, seconds.
    pub completion_s: f64,
    /// Max over buckets of entry-service arrivals per second.
    pub peak_rps: f64,
    /// The same over buckets starting at or after the trigger's end.
    pub recovery_peak_rps: f64,
    /// Client requests that succeeded.
    pub succeeded: f64,
    /// Client requests that gave up.
    pub gave_up: f64,
    /// This replication's p99 latency of client requests, seconds.
    pub latency_p99_s: f64,
    /// Time from the trigger's end until back to normal.
    pub recovery: Recovery,
    /// Peak arrivals per second at each service.
    pub service_peaks: Vec<f64>,
    /// Length of each service's series and its slots at the end (to carry the gauge).
    service_ends: Vec<(usize, u32)>,
}

/// Integer sums of one service's counters over the runs folded so far.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct ServiceTotals {
    calls: u64,
    accepted: u64,
    rejected: u64,
    shed: u64,
    wasted: u64,
    lost: u64,
    requests: u64,
    succeeded: u64,
    gave_up: [u64; 7],
    success_attempts: u64,
    retries: [u64; 6],
    timeouts: u64,
    budget_allowed: u64,
    budget_refused: u64,
    breaker_open_ns: u128,
    timeline: Vec<[u64; BUCKET_FIELDS]>,
}

/// Sums over the runs folded so far for one population.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct PopulationTotals {
    requests: u64,
    calls: u64,
    succeeded: u64,
    gave_up: u64,
    latencies: Latencies,
    timeline: Vec<[u64; 3]>,
}

impl ServiceTotals {
    /// Adds one run's counters and time series.
    fn add_run(&mut self, s: &ServiceMetrics) {
        self.merge(ServiceTotals::counters_of_run(s));
        add_series(&mut self.timeline, s.timeline.iter().map(Bucket::fields));
    }

    /// One run's counters as totals of one run, without its time series (added in place by
    /// [`ServiceTotals::add_run`], not copied first).
    fn counters_of_run(s: &ServiceMetrics) -> Self {
        ServiceTotals {
            calls: s.calls,
            accepted: s.accepted,
            rejected: s.rejected,
            shed: s.shed,
            wasted: s.wasted,
            lost: s.lost,
            requests: s.requests,
            succeeded: s.succeeded,
            gave_up: s.gave_up,
            success_attempts: s.success_attempts,
            retries: s.retries,
            timeouts: s.timeouts,
            budget_allowed: s.budget_allowed,
            budget_refused: s.budget_refused,
            breaker_open_ns: s.breaker_open.as_nanos() as u128,
            timeline: Vec::new(),
        }
    }

    /// Adds `o`'s sums: folding runs one by one or merging accumulators gives the same.
    fn merge(&mut self, o: ServiceTotals) {
        self.calls += o.calls;
        self.accepted += o.accepted;
        self.rejected += o.rejected;
        self.shed += o.shed;
        self.wasted += o.wasted;
        self.lost += o.lost;
        self.requests += o.requests;
        self.succeeded += o.succeeded;
        add_arrays(&mut self.gave_up, &o.gave_up);
        self.success_attempts += o.success_attempts;
        add_arrays(&mut self.retries, &o.retries);
        self.timeouts += o.timeouts;
        self.budget_allowed += o.budget_allowed;
        self.budget_refused += o.budget_refused;
        self.breaker_open_ns += o.breaker_open_ns;
        add_series(&mut self.timeline, o.timeline.into_iter());
    }
}

impl PopulationTotals {
    /// Adds one run's counters and time series.
    fn add_run(&mut self, p: PopulationMetrics) {
        let series = p
            .timeline
            .iter()
            .map(|b: &PopulationBucket| [b.first_attempts, b.succeeded, b.gave_up]);
        add_series(&mut self.timeline, series);
        self.merge(PopulationTotals {
            requests: p.requests,
            calls: p.calls,
            succeeded: p.succeeded,
            gave_up: p.gave_up,
            latencies: p.latencies,
            timeline: Vec::new(),
        });
    }

    /// Adds `o`'s sums.
    fn merge(&mut self, o: PopulationTotals) {
        self.requests += o.requests;
        self.calls += o.calls;
        self.succeeded += o.succeeded;
        self.gave_up += o.gave_up;
        self.latencies.merge(&o.latencies);
        add_series(&mut self.timeline, o.timeline.into_iter());
    }
}

/// The runs of one strategy (at one sweep point), folded as they end. It serialises, so
/// shards of a sweep run on different machines can be merged into exactly the state one
/// machine would have reached ([`StrategyAccumulator::merge`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StrategyAccumulator {
    replicates: Vec<Option<Replicate>>,
    services: Vec<ServiceTotals>,
    populations: Vec<PopulationTotals>,
    latencies: Latencies,
    success_latencies: Latencies,
    fallback_calls: u64,
    fallback_succeeded: u64,
    breaker_open_ns: u128,
    events: u64,
    cut_short: u32,
    peak_requests: u32,
    requests: Vec<Vec<RequestRecord>>,
    attempts: Vec<Vec<AttemptRecord>>,
}

impl StrategyAccumulator {
    /// Nothing folded yet, for `replications` runs of `scenario`.
    pub fn new(scenario: &Scenario, replications: u32) -> Self {
        StrategyAccumulator {
            replicates: vec![None; replications as usize],
            services: vec![ServiceTotals::default(); scenario.services.len()],
            populations: vec![PopulationTotals::default(); scenario.populations.len()],
            latencies: Latencies::new(),
            success_latencies: Latencies::new(),
            fallback_calls: 0,
            fallback_succeeded: 0,
            breaker_open_ns: 0,
            events: 0,
            cut_short: 0,
            peak_requests: 0,
            requests: vec![Vec::new(); replications as usize],
            attempts: vec![Vec::new(); replications as usize],
        }
    }

    /// Folds replication `replication` (run `run` of `scenario`) in.
    pub fn add(&mut self, scenario: &Scenario, replication: u32, mut run: RunMetrics) {
        let bucket = scenario.bucket;
        let recovery_from = scenario.trigger().unwrap_or(SimTime::ZERO);
        let entry = run.entry();
        self.replicates[replication as usize] = Some(Replicate {
            calls: entry.calls as f64,
            completion_s: run.completion.as_secs_f64(),
            peak_rps: entry.peak_rps(bucket, SimTime::ZERO),
            recovery_peak_rps: entry.peak_rps(bucket, recovery_from),
            succeeded: entry.succeeded as f64,
            gave_up: entry.gave_up_total() as f64,
            latency_p99_s: run_p99(&run.latencies),
            recovery: recovery(scenario, &run),
            service_peaks: run
                .services
                .iter()
                .map(|s| s.peak_rps(bucket, SimTime::ZERO))
                .collect(),
            service_ends: run
                .services
                .iter()
                .map(|s| {
                    let last = s.timeline.last().map_or(0, |b| b.concurrency);
                    (s.timeline.len(), last)
                })
                .collect(),
        });
        for (t, s) in self.services.iter_mut().zip(&run.services) {
            t.add_run(s);
        }
        for (t, p) in self
            .populations
            .iter_mut()
            .zip(std::mem::take(&mut run.populations))
        {
            t.add_run(p);
        }
        self.latencies.merge(&run.latencies);
        self.success_latencies.merge(&run.success_latencies);
        self.fallback_calls += run.fallback_calls;
        self.fallback_succeeded += run.fallback_succeeded;
        self.breaker_open_ns += run.breaker_open.as_nanos() as u128;
        self.events += run.events;
        self.cut_short += run.cut_short as u32;
        self.peak_requests = self.peak_requests.max(run.peak_requests);
        self.requests[replication as usize] = std::mem::take(&mut run.requests);
        self.attempts[replication as usize] = std::mem::take(&mut run.attempts);
    }

    /// Adds everything `other` folded (its replications must be others than this one's):
    /// the state is then what folding both sets of runs into one accumulator gives.
    ///
    /// Panics if a replication was folded into both (a caller bug: shards are checked
    /// before merging).
    pub fn merge(&mut self, other: StrategyAccumulator) {
        for (mine, theirs) in self.replicates.iter_mut().zip(other.replicates) {
            if let Some(r) = theirs {
                assert!(
                    mine.is_none(),
                    "a replication was folded into both accumulators"
                );
                *mine = Some(r);
            }
        }
        for (t, o) in self.services.iter_mut().zip(other.services) {
            t.merge(o);
        }
        for (t, o) in self.populations.iter_mut().zip(other.populations) {
            t.merge(o);
        }
        self.latencies.merge(&other.latencies);
        self.success_latencies.merge(&other.success_latencies);
        self.fallback_calls += other.fallback_calls;
        self.fallback_succeeded += other.fallback_succeeded;
        self.breaker_open_ns += other.breaker_open_ns;
        self.events += other.events;
        self.cut_short += other.cut_short;
        self.peak_requests = self.peak_requests.max(other.peak_requests);
        for (mine, theirs) in self.requests.iter_mut().zip(other.requests) {
            if !theirs.is_empty() {
                *mine = theirs;
            }
        }
        for (mine, theirs) in self.attempts.iter_mut().zip(other.attempts) {
            if !theirs.is_empty() {
                *mine = theirs;
            }
        }
    }

    /// Events simulated by the runs folded in so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Replications folded in so far.
    pub fn folded(&self) -> usize {
        self.replicates.iter().filter(|r| r.is_some()).count()
    }

    /// The results of strategy `index` of `scenario`, once every replication is in.
    ///
    /// Panics if a replication is missing (a caller bug).
    pub fn finish(self, scenario: &Scenario, index: usize) -> StrategyResult {
        let replicates: Vec<Replicate> = self
            .replicates
            .into_iter()
            .map(|r| r.expect("every replication was folded in"))
            .collect();
        let r = replicates.len().max(1) as f64;
        let per =
            |f: &dyn Fn(&Replicate) -> f64| -> Vec<f64> { replicates.iter().map(f).collect() };
        let mean_of = |x: u64| x as f64 / r;
        let entry = &self.services[0];
        let calls = Stat::of(&per(&|x| x.calls));
        let requests = mean_of(entry.requests);
        let latencies = self.latencies.sorted();
        let success = self.success_latencies.sorted();
        let secs = |ns: Option<u64>| SimDuration(ns.unwrap_or(0)).as_secs_f64();
        let pct = |l: &SortedLatencies, p: f64| secs(l.percentile(p));
        let refused = entry.budget_refused;
        let allowed = entry.budget_allowed;
        let recovered: Vec<Option<f64>> = replicates
            .iter()
            .map(|x| match x.recovery {
                Recovery::At(s) => Some(s),
                _ => None,
            })
            .collect();
        let has_trigger = replicates.iter().any(|x| x.recovery != Recovery::NoTrigger);
        let recovered_count = recovered.iter().filter(|x| x.is_some()).count();
        let summary = StrategySummary {
            strategy: scenario.strategies[index].name.clone(),
            clients: scenario.closed_clients() as u32,
            replications: replicates.len() as u32,
            calls,
            completion_s: Stat::of(&per(&|x| x.completion_s)),
            peak_rps: Stat::of(&per(&|x| x.peak_rps)),
            recovery_peak_rps: Stat::of(&per(&|x| x.recovery_peak_rps)),
            succeeded: mean_of(entry.succeeded),
            gave_up: mean_of(entry.gave_up.iter().sum()),
            gave_up_ci95: Stat::of(&per(&|x| x.gave_up)).ci95,
            requests,
            amplification: if requests > 0.0 {
                calls.mean / requests
            } else {
                0.0
            },
            latency_s: [
                pct(&latencies, 0.50),
                pct(&latencies, 0.95),
                pct(&latencies, 0.99),
            ],
            latency_mean_s: latencies.mean().unwrap_or(0.0) / 1e9,
            success_s: (!success.is_empty()).then(|| [pct(&success, 0.95), pct(&success, 0.99)]),
            wasted: mean_of(entry.wasted),
            attempts_per_success: (entry.succeeded > 0)
                .then(|| entry.success_attempts as f64 / entry.succeeded as f64),
            retries: entry.retries.map(mean_of),
            gave_up_by: entry.gave_up.map(mean_of),
            budget_refused: mean_of(refused),
            budget_refusal_rate: if refused + allowed > 0 {
                refused as f64 / (refused + allowed) as f64
            } else {
                0.0
            },
            breaker_open_s: self.breaker_open_ns as f64 / 1e9 / r,
            fallback_calls: mean_of(self.fallback_calls),
            fallback_succeeded: mean_of(self.fallback_succeeded),
            shed: mean_of(entry.shed),
            recovered_s: (has_trigger && recovered_count == replicates.len())
                .then(|| recovered.iter().flatten().sum::<f64>() / r),
            recovered_share: has_trigger.then(|| recovered_count as f64 / r),
            events: self.events,
            cut_short: self.cut_short,
            peak_requests: self.peak_requests,
            latency_quantiles: (0..=CDF_POINTS)
                .map(|i| pct(&latencies, i as f64 / CDF_POINTS as f64))
                .collect(),
        };
        let client_requests = requests.max(f64::MIN_POSITIVE);
        let services = scenario
            .services
            .iter()
            .zip(&self.services)
            .enumerate()
            .map(|(i, (spec, t))| ServiceSummary {
                service: spec.name.clone(),
                calls: mean_of(t.calls),
                accepted: mean_of(t.accepted),
                rejected: mean_of(t.rejected),
                shed: mean_of(t.shed),
                wasted: mean_of(t.wasted),
                lost: mean_of(t.lost),
                requests: mean_of(t.requests),
                succeeded: mean_of(t.succeeded),
                gave_up: mean_of(t.gave_up.iter().sum()),
                timeouts: mean_of(t.timeouts),
                amplification: if requests > 0.0 {
                    mean_of(t.calls) / client_requests
                } else {
                    0.0
                },
                peak_rps: Stat::of(&per(&|x| x.service_peaks[i])).mean,
            })
            .collect();
        let populations = scenario
            .populations
            .iter()
            .zip(self.populations)
            .map(|(spec, t)| {
                let l = t.latencies.sorted();
                PopulationSummary {
                    population: spec.name.clone(),
                    requests: mean_of(t.requests),
                    calls: mean_of(t.calls),
                    succeeded: mean_of(t.succeeded),
                    gave_up: mean_of(t.gave_up),
                    amplification: if t.requests > 0 {
                        t.calls as f64 / t.requests as f64
                    } else {
                        0.0
                    },
                    latency_p50_s: pct(&l, 0.50),
                    latency_p99_s: pct(&l, 0.99),
                    timeline: t.timeline.iter().map(|b| b.map(|v| v as f64 / r)).collect(),
                }
            })
            .collect();
        let timelines = self
            .services
            .iter()
            .enumerate()
            .map(|(i, t)| mean_series(&t.timeline, &replicates, i, scenario.bucket))
            .collect();
        StrategyResult {
            summary,
            services,
            populations,
            timelines,
            replicates,
            requests: self.requests,
            attempts: self.attempts,
        }
    }
}

/// The summary of strategy `index` over `runs` (replications in order): a shortcut through
/// [`StrategyAccumulator`] for callers that hold every run.
pub fn summarize(scenario: &Scenario, index: usize, runs: &[RunMetrics]) -> StrategySummary {
    let mut acc = StrategyAccumulator::new(scenario, runs.len() as u32);
    for (r, run) in runs.iter().enumerate() {
        acc.add(scenario, r as u32, run.clone());
    }
    acc.finish(scenario, index).summary
}

fn add_arrays<const N: usize>(sum: &mut [u64; N], add: &[u64; N]) {
    sum.iter_mut().zip(add).for_each(|(s, a)| *s += a);
}

/// Adds per-bucket counters (a run's `u32`s, or another accumulator's sums) to the sums;
/// a longer series extends them.
fn add_series<T: Into<u64>, const N: usize>(
    sum: &mut Vec<[u64; N]>,
    buckets: impl ExactSizeIterator<Item = [T; N]>,
) {
    if sum.len() < buckets.len() {
        sum.resize(buckets.len(), [0; N]);
    }
    for (s, b) in sum.iter_mut().zip(buckets) {
        s.iter_mut().zip(b).for_each(|(x, y)| *x += y.into());
    }
}

/// One run's p99 latency (seconds), from its own samples.
fn run_p99(latencies: &Latencies) -> f64 {
    let p = latencies.clone().sorted().percentile(0.99);
    SimDuration(p.unwrap_or(0)).as_secs_f64()
}

/// The mean series of service `service`: runs that ended earlier count as idle (zeros)
/// after their last bucket, except the `concurrency` gauge, which keeps its last value.
fn mean_series(
    sums: &[[u64; BUCKET_FIELDS]],
    replicates: &[Replicate],
    service: usize,
    bucket: SimDuration,
) -> Vec<MeanBucket> {
    let n = replicates.len().max(1) as f64;
    const CONCURRENCY: usize = BUCKET_FIELDS - 1;
    sums.iter()
        .enumerate()
        .map(|(i, sum)| {
            let carried: u64 = replicates
                .iter()
                .map(|x| x.service_ends[service])
                .filter(|(len, _)| *len <= i)
                .map(|(_, last)| last as u64)
                .sum();
            let mut values = sum.map(|v| v as f64 / n);
            values[CONCURRENCY] = (sum[CONCURRENCY] + carried) as f64 / n;
            MeanBucket {
                t_s: SimDuration(bucket.0 * i as u64).as_secs_f64(),
                values,
            }
        })
        .collect()
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
    /// The same over buckets starting at or after the trigger's end.
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
    /// Calls per logical request.
    pub amplification: f64,
    /// Pooled latency percentiles of all requests, seconds (p50, p95, p99).
    pub latency_s: [f64; 3],
    /// Mean latency of all requests, seconds (exact).
    pub latency_mean_s: f64,
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
    /// Calls at this service per logical client request.
    pub amplification: f64,
    /// Mean over replications of its peak arrivals per second.
    pub peak_rps: f64,
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
    /// calls / requests.
    pub amplification: f64,
    /// Pooled p50 latency, seconds.
    pub latency_p50_s: f64,
    /// Pooled p99 latency, seconds.
    pub latency_p99_s: f64,
    /// Mean per bucket of first attempts, successes and give-ups (for charts).
    pub timeline: Vec<[f64; 3]>,
}

/// One bucket of `timeseries.csv`: the mean over replications of each [`Bucket`] field.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MeanBucket {
    /// Bucket start, seconds.
    pub t_s: f64,
    /// Means of the [`Bucket::fields`], in that order.
    pub values: [f64; BUCKET_FIELDS],
}

macro_rules! mean_fields {
    ($($name:ident = $i:expr),* $(,)?) => {
        impl MeanBucket {
            $(
                #[doc = concat!("Mean of [`Bucket::", stringify!($name), "`].")]
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
    /// Each replication's headline numbers (for paired comparisons).
    pub replicates: Vec<Replicate>,
    /// Per-request records by replication (empty unless requested).
    pub requests: Vec<Vec<RequestRecord>>,
    /// The attempts of the sampled client requests by replication (empty unless requested).
    pub attempts: Vec<Vec<AttemptRecord>>,
}

impl StrategyResult {
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
