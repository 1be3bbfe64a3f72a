//! Folding runs into a strategy's sums as each one ends, and reducing the sums to the
//! numbers of the output files once every replication is in.
//!
//! A [`StrategyAccumulator`] holds integer sums of counters and time series, a mergeable
//! [`Latencies`] set, and, at each replication's index, the few per-replication numbers
//! (a [`Replicate`]: the inputs of confidence intervals and paired comparisons). Folding
//! runs in any order, or merging accumulators of disjoint replications (shards), gives the
//! same state, so the result does not depend on the thread count or order of completion.

use serde::{Deserialize, Serialize};

use super::{
    CDF_POINTS, MeanBucket, PopulationSummary, ServiceSummary, Stat, StrategyResult,
    StrategySummary,
};
use crate::metrics::recovery::{Recovery, recovery};
use crate::metrics::{
    AttemptRecord, BUCKET_FIELDS, Bucket, Latencies, PopulationBucket, PopulationMetrics,
    RequestRecord, RunMetrics, ServiceMetrics, latency::SortedLatencies,
};
use crate::model::{Scenario, ServerSpec};
use crate::time::{SimDuration, SimTime};

mod check;

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
    /// The same over buckets starting at or after the end of the last outage.
    pub recovery_peak_rps: f64,
    /// Client requests that succeeded.
    pub succeeded: f64,
    /// Client requests that gave up.
    pub gave_up: f64,
    /// This replication's p99 latency of client requests, seconds (`None`: no request
    /// started).
    pub latency_p99_s: Option<f64>,
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
    fn add_run(&mut self, mut p: PopulationMetrics) {
        let series = p
            .timeline
            .iter()
            .map(|b: &PopulationBucket| [b.first_attempts, b.succeeded, b.gave_up]);
        add_series(&mut self.timeline, series);
        crate::metrics::give_back(std::iter::once(std::mem::take(&mut p.timeline)));
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
        let recovery_from = scenario.recovery_from().unwrap_or(SimTime::ZERO);
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
        run.recycle();
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

    /// Runs folded in so far that the time limit cut short.
    pub fn cut_short(&self) -> u32 {
        self.cut_short
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
            // A ratio with nothing to divide by has no value (an empty cell), like a
            // percentile without samples: 0 would read as "no calls per request".
            amplification: (requests > 0.0).then(|| calls.mean / requests),
            latency_s: (!latencies.is_empty()).then(|| {
                [
                    pct(&latencies, 0.50),
                    pct(&latencies, 0.95),
                    pct(&latencies, 0.99),
                ]
            }),
            latency_mean_s: latencies.mean().map(|ns| ns / 1e9),
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
                amplification: (requests > 0.0).then(|| mean_of(t.calls) / requests),
                peak_rps: Stat::of(&per(&|x| x.service_peaks[i])).mean,
                breaker_open_s: t.breaker_open_ns as f64 / 1e9 / r,
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
                    amplification: (t.requests > 0).then(|| t.calls as f64 / t.requests as f64),
                    latency_p50_s: l.percentile(0.50).map(|ns| SimDuration(ns).as_secs_f64()),
                    latency_p99_s: l.percentile(0.99).map(|ns| SimDuration(ns).as_secs_f64()),
                    timeline: t.timeline.iter().map(|b| b.map(|v| v as f64 / r)).collect(),
                }
            })
            .collect();
        let timelines = self
            .services
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let server = &scenario.services[i].server;
                let horizon = SimTime(scenario.time_limit.0);
                mean_series(
                    &t.timeline,
                    &replicates,
                    i,
                    server,
                    scenario.bucket,
                    horizon,
                )
            })
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
fn run_p99(latencies: &Latencies) -> Option<f64> {
    let p = latencies.clone().sorted().percentile(0.99);
    p.map(|ns| SimDuration(ns).as_secs_f64())
}

/// The mean series of service `service`: runs that ended earlier count as idle (zeros)
/// after their last bucket, except the `concurrency` gauge: a server's slots outlive the
/// work. An ended run then has the slots the scenario sets (its capacity steps go on), or,
/// for an autoscaled server, whose size no run decides after its end, its last slots. A
/// bucket has the slots at its end, or at `time_limit` when that comes first.
fn mean_series(
    sums: &[[u64; BUCKET_FIELDS]],
    replicates: &[Replicate],
    service: usize,
    server: &ServerSpec,
    bucket: SimDuration,
    time_limit: SimTime,
) -> Vec<MeanBucket> {
    let n = replicates.len().max(1) as f64;
    const CONCURRENCY: usize = BUCKET_FIELDS - 1;
    // A run whose series has `len` buckets carries its slots into buckets `len..`: mark
    // where each starts carrying (how many runs, and their last slots), then running sums
    // give each bucket's carried slots (one pass over runs and one over buckets, not runs x
    // buckets: that product took 2% of Brooker's 2015 experiment at 100 replications, and
    // grows with replications).
    let mut starts_carrying = vec![(0u64, 0u64); sums.len()];
    for x in replicates {
        let (len, last) = x.service_ends[service];
        if let Some((runs, slots)) = starts_carrying.get_mut(len) {
            *runs += 1;
            *slots += last as u64;
        }
    }
    let (mut ended, mut carried) = (0u64, 0u64);
    sums.iter()
        .zip(starts_carrying)
        .enumerate()
        .map(|(i, (sum, (runs, slots)))| {
            ended += runs;
            carried += slots;
            let bucket_end = SimTime(bucket.0.saturating_mul(i as u64 + 1)).min(time_limit);
            let carried = server
                .scheduled_slots_before(bucket_end)
                .map_or(carried, |scheduled| ended * u64::from(scheduled));
            let mut values = sum.map(|v| v as f64 / n);
            values[CONCURRENCY] = (sum[CONCURRENCY] + carried) as f64 / n;
            MeanBucket {
                t_s: SimDuration(bucket.0 * i as u64).as_secs_f64(),
                values,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::dist::Dist;
    use crate::model::service::CapacityStep;

    fn ended_at(len: usize, slots: u32) -> Replicate {
        Replicate {
            calls: 0.0,
            completion_s: 0.0,
            peak_rps: 0.0,
            recovery_peak_rps: 0.0,
            succeeded: 0.0,
            gave_up: 0.0,
            latency_p99_s: None,
            recovery: Recovery::NoTrigger,
            service_peaks: vec![0.0],
            service_ends: vec![(len, slots)],
        }
    }

    /// Two runs of 100 ms buckets under a 950 ms time limit: one taken on to the limit (ten
    /// buckets, 4 slots in each), one over after three buckets with 4 slots. The ended run
    /// carries the scenario's slots into the last bucket as they are at the limit, where
    /// the run stops, not at the bucket's end: a step at 960 ms never comes, one at 940 ms
    /// does.
    #[test]
    fn an_ended_run_carries_the_slots_the_scenario_has_at_the_time_limit() {
        let ms = |n: u64| SimTime(n * 1_000_000);
        const CONCURRENCY: usize = BUCKET_FIELDS - 1;
        let last_bucket = |step_at: SimTime, own_last: u32| {
            // The sums of both runs' own buckets: the first run's last has its own slots.
            let mut sums = vec![[0u64; BUCKET_FIELDS]; 10];
            for (i, b) in sums.iter_mut().enumerate() {
                b[CONCURRENCY] = if i < 3 { 8 } else { 4 };
            }
            sums[9][CONCURRENCY] = u64::from(own_last);
            let runs = [ended_at(10, own_last), ended_at(3, 4)];
            let mut server = ServerSpec::plain(4, 0, Dist::Constant(SimDuration::ZERO));
            server.capacity = vec![CapacityStep {
                at: step_at,
                concurrency: 1,
            }];
            let series = mean_series(
                &sums,
                &runs,
                0,
                &server,
                SimDuration::from_millis(100),
                ms(950),
            );
            assert_eq!(series.len(), 10);
            assert_eq!(series[8].concurrency(), 4.0);
            series[9].concurrency()
        };
        assert_eq!(last_bucket(ms(960), 4), 4.0);
        assert_eq!(last_bucket(ms(940), 1), 1.0);
    }
}
