//! Planning and running: every (sweep point, strategy, replication) is one job on rayon.
//!
//! Each job's random streams are keyed by (scenario seed, replication, sweep point) and
//! purpose (see [`crate::engine::streams`]): the strategy is not part of the key, so every
//! strategy of a replication faces the same workload. Each run is folded into its
//! (point, strategy) accumulator as soon as it ends; folds are order-independent, so results
//! are byte-identical whatever the thread count and whichever run finishes first, and memory
//! does not grow with the number of replications.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::engine::{RunSeed, Simulation};
use crate::error::{Error, Fault, Result, ScenarioError, ScenarioErrors};
use crate::metrics::RunMetrics;
use crate::metrics::paired::{Comparisons, PairedRow, compare};
use crate::metrics::summary::{StrategyAccumulator, StrategyResult};
use crate::scenario::sweep::ScenarioFile;

mod shards;
pub use shards::{Partial, Shard, merge, run_shard};

/// One run to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    /// Sweep point index (0 without a sweep).
    pub point: usize,
    /// Strategy index in the scenario.
    pub strategy: usize,
    /// Replication index.
    pub replication: u32,
}

impl Job {
    /// The seed of this job's streams.
    pub fn seed(&self, file: &ScenarioFile) -> RunSeed {
        RunSeed {
            seed: file.points[self.point].scenario.seed,
            replication: self.replication,
            point: self.point,
        }
    }
}

/// SplitMix64's finaliser: a bijective 64-bit mix.
fn splitmix64(z: u64) -> u64 {
    crate::engine::streams::splitmix64(z)
}

/// A 32-byte stream seed from (seed, a, b, c), by the fixed SplitMix64 derivation of v1.
/// `herdsim schedule` seeds each sample client's stream with it.
pub fn derive_seed(seed: u64, strategy: usize, replication: u32, point: usize) -> [u8; 32] {
    let mut state = splitmix64(seed);
    for part in [strategy as u64, replication as u64, point as u64] {
        state = splitmix64(state ^ part);
    }
    let mut out = [0u8; 32];
    for (i, chunk) in out.chunks_exact_mut(8).enumerate() {
        state = splitmix64(state.wrapping_add(i as u64));
        chunk.copy_from_slice(&state.to_le_bytes());
    }
    out
}

/// One (point, strategy) group of runs: folding them in, then its result.
enum Slot {
    /// Runs still to come.
    Running {
        accumulator: Box<StrategyAccumulator>,
        remaining: u32,
    },
    /// Every run folded in and reduced.
    Done(Box<StrategyResult>),
}

impl Slot {
    /// The result of a reduced group.
    fn result(&self) -> &StrategyResult {
        match self {
            Slot::Done(result) => result,
            Slot::Running { .. } => unreachable!("the group is reduced"),
        }
    }

    /// Folds in replication `replication` of strategy `strategy`; the last one reduces the
    /// group.
    fn add(
        &mut self,
        scenario: &crate::model::Scenario,
        strategy: usize,
        replication: u32,
        run: RunMetrics,
    ) {
        let Slot::Running {
            accumulator,
            remaining,
        } = self
        else {
            unreachable!("a group receives each replication once")
        };
        accumulator.add(scenario, replication, run);
        *remaining -= 1;
        if *remaining == 0 {
            let accumulator =
                std::mem::replace(accumulator, Box::new(StrategyAccumulator::new(scenario, 0)));
            *self = Slot::Done(Box::new(accumulator.finish(scenario, strategy)));
        }
    }
}

/// The results at one sweep point (the only point without a sweep).
#[derive(Debug, Clone)]
pub struct PointResult {
    /// Value labels of the swept keys.
    pub labels: Vec<String>,
    /// One per strategy, in scenario order.
    pub strategies: Vec<StrategyResult>,
    /// Every strategy after the first against the first, replication by replication.
    pub paired: Vec<PairedRow>,
    /// `loses_more[a][b]`: strategy `a` loses more client requests than `b`, judged
    /// replication by replication ([`crate::metrics::paired::loses_more`]).
    pub loses_more: Vec<Vec<bool>>,
}

/// Everything one scenario file produced.
#[derive(Debug, Clone)]
pub struct ScenarioResult {
    /// One per sweep point, in sweep order.
    pub points: Vec<PointResult>,
    /// Events simulated over all runs.
    pub events: u64,
    /// Runs that the time limit cut short.
    pub cut_short: u32,
}

/// Options that change what is recorded, not what is simulated.
#[derive(Clone, Copy, Default)]
pub struct RunOptions<'a> {
    /// Keep a record per client request (`requests.csv`).
    pub record_requests: bool,
    /// Record every attempt of a sample of client requests (`attempts.csv`, the raster
    /// chart): in every replication, or (`false`) only in the first.
    pub sample_attempts: Option<AllReplications>,
    /// Called from worker threads with the number of events simulated since the last call
    /// (every few hundred thousand events), for progress inside long runs.
    pub on_events: Option<&'a (dyn Fn(u64) + Sync)>,
}

/// Whether the attempt sample is taken in every replication (`true`) or the first only.
pub type AllReplications = bool;

impl std::fmt::Debug for RunOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("record_requests", &self.record_requests)
            .field("sample_attempts", &self.sample_attempts)
            .field("on_events", &self.on_events.is_some())
            .finish()
    }
}

/// Every job of a scenario file, point-major, replication innermost.
pub fn plan(file: &ScenarioFile) -> Vec<Job> {
    let mut jobs = Vec::new();
    for (point, p) in file.points.iter().enumerate() {
        for strategy in 0..p.scenario.strategies.len() {
            for replication in 0..p.scenario.replications {
                jobs.push(Job {
                    point,
                    strategy,
                    replication,
                });
            }
        }
    }
    jobs
}

/// Runs one job.
pub fn run_job(file: &ScenarioFile, job: Job, options: RunOptions) -> RunMetrics {
    let scenario = &file.points[job.point].scenario;
    let mut sim = Simulation::new(
        scenario,
        job.strategy,
        job.seed(file),
        options.record_requests,
    );
    if options
        .sample_attempts
        .is_some_and(|all| all || job.replication == 0)
    {
        sim = sim.sample_attempts();
    }
    match options.on_events {
        Some(f) => sim.run_with_progress(f),
        None => sim.run(),
    }
}

/// `sweep point a = 1, b = 2`, the point `point` of `file` by its values; `None` without a
/// sweep.
fn sweep_point(file: &ScenarioFile, point: usize) -> Option<String> {
    if file.axes.is_empty() {
        return None;
    }
    let labels: Vec<String> = file
        .axes
        .iter()
        .zip(&file.points[point].labels)
        .map(|(a, l)| format!("{} = {l}", a.path))
        .collect();
    Some(format!("sweep point {}", labels.join(", ")))
}

/// The error for a run stopped because simulated time stopped advancing: a scenario
/// problem (exit 2), named after the strategy (and sweep point) that looped.
fn stalled_error(file: &ScenarioFile, job: Job, at: crate::time::SimTime) -> Error {
    let scenario = &file.points[job.point].scenario;
    let limit = crate::engine::SAME_INSTANT_FLOOR
        + crate::engine::SAME_INSTANT_PER_CLIENT.saturating_mul(scenario.requests_at_one_instant());
    let at_point = sweep_point(file, job.point).map_or(String::new(), |p| format!(" at {p}"));
    Error::Scenario(ScenarioErrors(vec![ScenarioError {
        file: file.file.clone(),
        line: None,
        col: None,
        key: format!("strategy[{}]", job.strategy),
        msg: format!(
            "simulated time stopped advancing: strategy \"{}\"{at_point} processed more than {limit} events at t = {} s and was stopped. Retries that take no simulated time (zero network latency, zero service time, a zero backoff delay or think time) cannot be stopped by time_limit: give one of them a non-zero value",
            scenario.strategies[job.strategy].name,
            crate::report::fmt_num(at.as_secs_f64()),
        ),
        fault: Fault::Other,
    }]))
}

/// Runs every job of `file` on the current rayon pool and reduces them. `on_run_done` is
/// called (from worker threads) after each run, for progress reporting.
///
/// Fails when a run had to be stopped because its events never advanced time (a zero-delay
/// retry loop).
pub fn run_scenario(
    file: &ScenarioFile,
    options: RunOptions,
    on_run_done: &(dyn Fn() + Sync),
) -> Result<ScenarioResult> {
    let jobs = plan(file);
    let all: Vec<usize> = (0..jobs.len()).collect();
    let Folded { slots, paired } = fold(file, &jobs, &all, options, on_run_done, true)?;
    Ok(assemble(
        file,
        slots.into_iter().map(|slot| match slot {
            Slot::Done(result) => *result,
            Slot::Running { .. } => unreachable!("every replication of every strategy has run"),
        }),
        paired,
    ))
}

/// What [`fold`] leaves: a slot per (point, strategy) group in plan order, and per point
/// its paired comparisons when they were made as its last group was reduced.
struct Folded {
    slots: Vec<Slot>,
    paired: Vec<Option<Comparisons>>,
}

/// Runs `chosen` (indices into `jobs`) on the current rayon pool, folding each run into its
/// (point, strategy) slot as it ends. With `reduce`, a slot is reduced to its result as soon
/// as its last replication is in, so only the groups being worked on hold latency samples
/// and series sums; and as soon as every group of a point is reduced, the point's paired
/// comparisons are made and its per-replication values dropped, so that what finished
/// points keep does not grow with replications either.
fn fold(
    file: &ScenarioFile,
    jobs: &[Job],
    chosen: &[usize],
    options: RunOptions,
    on_run_done: &(dyn Fn() + Sync),
    reduce: bool,
) -> Result<Folded> {
    let first_slot = first_groups(file);
    let slot_of = |job: &Job| first_slot[job.point] + job.strategy;
    let groups: usize = file
        .points
        .iter()
        .map(|p| p.scenario.strategies.len())
        .sum();
    let mut remaining = vec![0u32; groups];
    for &i in chosen {
        remaining[slot_of(&jobs[i])] += 1;
    }
    let mut slots = Vec::new();
    for p in &file.points {
        for _ in &p.scenario.strategies {
            let left = remaining[slots.len()];
            slots.push(Mutex::new(Slot::Running {
                accumulator: Box::new(StrategyAccumulator::new(
                    &p.scenario,
                    p.scenario.replications,
                )),
                // Without reduction the count never reaches 0.
                remaining: if reduce { left } else { u32::MAX },
            }));
        }
    }
    // Per point, its groups not reduced yet (only counted down with `reduce`).
    let groups_left: Vec<AtomicUsize> = file
        .points
        .iter()
        .map(|p| AtomicUsize::new(p.scenario.strategies.len()))
        .collect();
    let paired_rows: Vec<Mutex<Option<Comparisons>>> =
        file.points.iter().map(|_| Mutex::new(None)).collect();
    chosen.par_iter().try_for_each(|&i| {
        let job = jobs[i];
        let scenario = &file.points[job.point].scenario;
        let metrics = run_job(file, job, options);
        if let Some(at) = metrics.stalled_at {
            return Err(stalled_error(file, job, at));
        }
        let reduced = {
            let mut slot = slots[slot_of(&job)]
                .lock()
                .expect("no run panics while holding an accumulator");
            slot.add(scenario, job.strategy, job.replication, metrics);
            matches!(*slot, Slot::Done(_))
        };
        // The thread that reduces a point's last group compares its strategies. Every
        // group of the point is done, so no other thread locks these slots any more.
        if reduced && groups_left[job.point].fetch_sub(1, Ordering::AcqRel) == 1 {
            let first = first_slot[job.point];
            let mut guards: Vec<_> = slots[first..first + scenario.strategies.len()]
                .iter()
                .map(|m| {
                    m.lock()
                        .expect("no run panics while holding an accumulator")
                })
                .collect();
            let results: Vec<&StrategyResult> = guards.iter().map(|g| g.result()).collect();
            let rows = compare(&results);
            for g in &mut guards {
                if let Slot::Done(result) = &mut **g {
                    result.forget_replications();
                }
            }
            *paired_rows[job.point]
                .lock()
                .expect("no run panics while holding paired rows") = Some(rows);
        }
        on_run_done();
        Ok(())
    })?;
    Ok(Folded {
        slots: slots
            .into_iter()
            .map(|m| {
                m.into_inner()
                    .expect("no run panics while holding an accumulator")
            })
            .collect(),
        paired: paired_rows
            .into_iter()
            .map(|m| {
                m.into_inner()
                    .expect("no run panics while holding paired rows")
            })
            .collect(),
    })
}

/// Groups per-strategy results (in plan order) into points, with their paired comparisons
/// (`made`, per point, when [`fold`] made them already), and drops the per-replication
/// values the comparisons needed.
fn assemble(
    file: &ScenarioFile,
    results: impl Iterator<Item = StrategyResult>,
    made: Vec<Option<Comparisons>>,
) -> ScenarioResult {
    let mut results = results;
    let mut made = made.into_iter();
    let mut events = 0;
    let mut cut_short = 0;
    let points = file
        .points
        .iter()
        .map(|p| {
            let mut strategies: Vec<StrategyResult> =
                results.by_ref().take(p.scenario.strategies.len()).collect();
            for s in &strategies {
                events += s.summary.events;
                cut_short += s.summary.cut_short;
            }
            let compared = made.next().flatten().unwrap_or_else(|| {
                let results: Vec<&StrategyResult> = strategies.iter().collect();
                compare(&results)
            });
            for s in &mut strategies {
                s.forget_replications();
            }
            PointResult {
                labels: p.labels.clone(),
                paired: compared.rows,
                loses_more: compared.loses_more,
                strategies,
            }
        })
        .collect();
    ScenarioResult {
        points,
        events,
        cut_short,
    }
}

/// The index of each sweep point's first (point, strategy) group: groups are numbered point
/// by point, strategies in file order within a point.
fn first_groups(file: &ScenarioFile) -> Vec<usize> {
    file.points
        .iter()
        .scan(0, |next, p| {
            let first = *next;
            *next += p.scenario.strategies.len();
            Some(first)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Once a point's paired comparisons are made, its per-replication values are gone
    /// (what a sweep keeps must not grow with replications), and the rows are the ones the
    /// replicates give: the baseline's mean calls is its summary's mean.
    #[test]
    fn finished_points_keep_their_paired_rows_but_not_their_replicates() {
        let text = r#"
            name = "p"
            replications = 3
            [clients]
            count = 20
            [network]
            latency = { dist = "constant", value = "1ms" }
            [server]
            concurrency = 2
            service = { dist = "exponential", mean = "5ms" }
            [retry]
            max_attempts = 5
            cap = "1s"
            [[strategy]]
            name = "a"
            base = "10ms"
            jitter = "none"
            [[strategy]]
            name = "b"
            base = "10ms"
            jitter = "full"
        "#;
        let file =
            crate::scenario::sweep::load_str("p.toml", text).unwrap_or_else(|e| panic!("{e:?}"));
        let result = run_scenario(&file, RunOptions::default(), &|| {}).expect("runs");
        let point = &result.points[0];
        for s in &point.strategies {
            assert!(s.replicates.is_empty(), "{}", s.summary.strategy);
            assert!(s.requests.is_empty() && s.attempts.is_empty());
            assert_eq!(s.summary.replications, 3);
        }
        assert_eq!(point.paired.len(), METRICS_COMPARED);
        let calls = point
            .paired
            .iter()
            .find(|r| r.metric == "calls")
            .expect("a row");
        assert_eq!(calls.baseline_mean, point.strategies[0].summary.calls.mean);
        assert_eq!(
            calls.ratio,
            Some(point.strategies[1].summary.calls.mean / calls.baseline_mean)
        );
    }

    const METRICS_COMPARED: usize = crate::metrics::paired::METRICS.len();

    #[test]
    fn seeds_differ_by_every_component_and_are_stable() {
        let base = derive_seed(42, 0, 0, 0);
        assert_eq!(base, derive_seed(42, 0, 0, 0));
        assert_ne!(base, derive_seed(43, 0, 0, 0));
        assert_ne!(base, derive_seed(42, 1, 0, 0));
        assert_ne!(base, derive_seed(42, 0, 1, 0));
        assert_ne!(base, derive_seed(42, 0, 0, 1));
        assert_ne!(derive_seed(42, 1, 0, 0), derive_seed(42, 0, 1, 0));
    }
}
