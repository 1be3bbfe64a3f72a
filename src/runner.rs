//! Planning and running: every (sweep point, strategy, replication) is one job on rayon.
//!
//! Each job gets its own ChaCha8 stream, seeded by [`derive_seed`] from (scenario seed,
//! strategy index, replication index, sweep point index). rayon's `collect` keeps job order,
//! and reductions run over that fixed order, so results are byte-identical whatever the
//! thread count and whichever run finishes first.

use rayon::prelude::*;

use crate::engine::Simulation;
use crate::metrics::summary::{MeanBucket, StrategySummary, mean_timeline, summarize};
use crate::metrics::{RequestRecord, RunMetrics};
use crate::scenario::sweep::ScenarioFile;

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

/// SplitMix64's finaliser: a bijective 64-bit mix.
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The 32-byte ChaCha8 seed of one run. A fixed derivation (part of the output contract):
/// fold the scenario seed, strategy, replication and point indices through SplitMix64, then
/// expand to four little-endian words.
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

/// The results of one strategy at one sweep point.
#[derive(Debug, Clone)]
pub struct StrategyResult {
    /// The `summary.csv` row.
    pub summary: StrategySummary,
    /// The mean time series.
    pub timeline: Vec<MeanBucket>,
    /// Per-request records by replication (empty unless requested).
    pub requests: Vec<Vec<RequestRecord>>,
}

/// The results at one sweep point (the only point without a sweep).
#[derive(Debug, Clone)]
pub struct PointResult {
    /// Value labels of the swept keys.
    pub labels: Vec<String>,
    /// One per strategy, in scenario order.
    pub strategies: Vec<StrategyResult>,
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
    /// The first run (in job order) stopped because simulated time stopped advancing, and
    /// the instant where it stalled: the scenario's results are meaningless.
    pub stalled: Option<(Job, crate::time::SimTime)>,
}

/// Options that change what is recorded, not what is simulated.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions {
    /// Keep a record per logical request (`requests.csv`).
    pub record_requests: bool,
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
    let seed = derive_seed(scenario.seed, job.strategy, job.replication, job.point);
    Simulation::new(scenario, job.strategy, seed, options.record_requests).run()
}

/// Runs every job of `file` on the current rayon pool and reduces them. `on_run_done` is
/// called (from worker threads) after each run, for progress reporting.
pub fn run_scenario(
    file: &ScenarioFile,
    options: RunOptions,
    on_run_done: &(dyn Fn() + Sync),
) -> ScenarioResult {
    let jobs = plan(file);
    let mut runs: Vec<RunMetrics> = jobs
        .par_iter()
        .map(|job| {
            let metrics = run_job(file, *job, options);
            on_run_done();
            metrics
        })
        .collect();
    let events = runs.iter().map(|r| r.events).sum();
    let cut_short = runs.iter().filter(|r| r.cut_short).count() as u32;
    let stalled = jobs
        .iter()
        .zip(&runs)
        .find_map(|(job, r)| r.stalled_at.map(|t| (*job, t)));

    // Jobs are contiguous per (point, strategy): reduce each group, in parallel, in order.
    let mut groups: Vec<(usize, usize, Vec<RunMetrics>)> = Vec::new();
    let mut rest = runs.drain(..);
    for (point, p) in file.points.iter().enumerate() {
        for strategy in 0..p.scenario.strategies.len() {
            let group: Vec<RunMetrics> = rest
                .by_ref()
                .take(p.scenario.replications as usize)
                .collect();
            groups.push((point, strategy, group));
        }
    }
    let reduced: Vec<StrategyResult> = groups
        .into_par_iter()
        .map(|(point, strategy, mut group)| {
            let scenario = &file.points[point].scenario;
            StrategyResult {
                summary: summarize(scenario, strategy, &group),
                timeline: mean_timeline(&group, scenario.bucket),
                requests: group
                    .iter_mut()
                    .map(|r| std::mem::take(&mut r.requests))
                    .collect(),
            }
        })
        .collect();
    let mut reduced = reduced.into_iter();
    let points = file
        .points
        .iter()
        .map(|p| PointResult {
            labels: p.labels.clone(),
            strategies: reduced.by_ref().take(p.scenario.strategies.len()).collect(),
        })
        .collect();
    ScenarioResult {
        points,
        events,
        cut_short,
        stalled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
