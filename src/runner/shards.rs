//! Sharded runs: one shard's share of a scenario's jobs ([`Shard`]), what it ran and keeps
//! unreduced ([`Partial`], written as a shard's `partial.json`), the checks a partial read
//! back must pass before it is folded, and [`merge`], which folds every shard's partial and
//! reduces them to the results, bit for bit, of an unsharded run.

use super::{Folded, Slot, assemble, first_groups, fold, plan, sweep_point};
use super::{RunOptions, ScenarioResult};
use crate::error::Result;
use crate::metrics::Inconsistency;
use crate::metrics::summary::StrategyAccumulator;
use crate::scenario::sweep::ScenarioFile;

/// One shard's share of a scenario file: the jobs whose index in plan order is
/// `index mod count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This shard, `0..count`.
    pub index: u32,
    /// How many shards the jobs are split into (>= 1).
    pub count: u32,
}

impl Shard {
    /// The indices (in plan order) of this shard's jobs among `jobs` jobs.
    pub fn jobs(&self, jobs: usize) -> Vec<usize> {
        (self.index as usize..jobs)
            .step_by(self.count as usize)
            .collect()
    }
}

/// What one shard ran: its jobs, and per (point, strategy) group the accumulator its runs
/// were folded into (`None` for a group it had no job of). Merging the partials of every
/// shard gives exactly the state one unsharded run reaches.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Partial {
    /// Indices (in plan order) of the jobs run.
    pub jobs: Vec<usize>,
    /// One per (point, strategy), in plan order.
    pub groups: Vec<Option<StrategyAccumulator>>,
}

impl Partial {
    /// Checks a partial read back from a shard's `partial.json` against `file`, the scenario
    /// it ran, for what [`merge`] relies on: one group per (point, strategy), each holding
    /// the runs of exactly this shard's jobs of it (none where it has no job), in the shape
    /// its point's scenario gives ([`StrategyAccumulator::check`]). The jobs themselves are
    /// checked against the other shards' by the caller (every job exactly once).
    pub fn check(&self, file: &ScenarioFile) -> std::result::Result<(), Inconsistency> {
        let jobs = plan(file);
        // Per group, in plan order: its point, strategy and which replications are mine.
        let mut groups: Vec<(usize, usize, Vec<bool>)> = Vec::new();
        for (point, p) in file.points.iter().enumerate() {
            for strategy in 0..p.scenario.strategies.len() {
                groups.push((
                    point,
                    strategy,
                    vec![false; p.scenario.replications as usize],
                ));
            }
        }
        if self.groups.len() != groups.len() {
            return Err(Inconsistency::new(
                "groups",
                format!(
                    "{} (one per sweep point and strategy)",
                    crate::metrics::counted(groups.len() as u64, "entry")
                ),
                self.groups.len(),
            ));
        }
        let first_group = first_groups(file);
        for (k, &j) in self.jobs.iter().enumerate() {
            let Some(job) = jobs.get(j) else {
                return Err(Inconsistency::new(
                    format!("jobs[{k}]"),
                    format!("a job of the plan's {}", jobs.len()),
                    j,
                ));
            };
            groups[first_group[job.point] + job.strategy].2[job.replication as usize] = true;
        }
        for (g, (group, (point, strategy, mine))) in self.groups.iter().zip(&groups).enumerate() {
            let scenario = &file.points[*point].scenario;
            let which = || {
                let name = format!("strategy \"{}\"", scenario.strategies[*strategy].name);
                match sweep_point(file, *point) {
                    Some(p) => format!("{name} at {p}"),
                    None => name,
                }
            };
            let at = format!("groups[{g}]");
            match (group, mine.contains(&true)) {
                (None, false) => {}
                (None, true) => {
                    return Err(Inconsistency::new(
                        at,
                        format!("the runs of this shard's jobs of {}", which()),
                        "null",
                    ));
                }
                (Some(_), false) => {
                    return Err(Inconsistency::new(
                        at,
                        format!("null (this shard has no job of {})", which()),
                        "runs",
                    ));
                }
                (Some(acc), true) => acc.check(scenario, mine).map_err(|e| e.within(&at))?,
            }
        }
        Ok(())
    }
}

/// Runs the jobs of `shard` and keeps them unreduced, for [`merge`].
pub fn run_shard(
    file: &ScenarioFile,
    shard: Shard,
    options: RunOptions,
    on_run_done: &(dyn Fn() + Sync),
) -> Result<Partial> {
    let jobs = plan(file);
    let mine = shard.jobs(jobs.len());
    let Folded { slots, .. } = fold(file, &jobs, &mine, options, on_run_done, false)?;
    let groups = slots
        .into_iter()
        .map(|slot| match slot {
            Slot::Running {
                accumulator,
                remaining: _,
            } => (accumulator.folded() > 0).then_some(*accumulator),
            Slot::Done(_) => unreachable!("a shard does not reduce its groups"),
        })
        .collect();
    Ok(Partial { jobs: mine, groups })
}

/// Merges the partials of every shard of `file` (checked beforehand: every job exactly
/// once) and reduces them: the same results, bit for bit, as [`run_scenario`](super::run_scenario).
pub fn merge(file: &ScenarioFile, partials: Vec<Partial>) -> ScenarioResult {
    let mut groups: Vec<Option<StrategyAccumulator>> = Vec::new();
    for p in &file.points {
        for _ in &p.scenario.strategies {
            groups.push(None);
        }
    }
    for partial in partials {
        for (sum, part) in groups.iter_mut().zip(partial.groups) {
            match (sum.as_mut(), part) {
                (_, None) => {}
                (None, Some(part)) => *sum = Some(part),
                (Some(sum), Some(part)) => sum.merge(part),
            }
        }
    }
    let mut groups = groups.into_iter();
    let mut results = Vec::new();
    for p in &file.points {
        for s in 0..p.scenario.strategies.len() {
            let acc = groups
                .next()
                .expect("one group per strategy")
                .expect("every job was run by some shard");
            results.push(acc.finish(&p.scenario, s));
        }
    }
    assemble(file, results.into_iter(), vec![None; file.points.len()])
}
