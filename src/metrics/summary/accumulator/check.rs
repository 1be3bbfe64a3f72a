//! The checks an accumulator read back from a shard's `partial.json` must pass before
//! `merge` folds it: the shape [`StrategyAccumulator::merge`] and
//! [`StrategyAccumulator::finish`] rely on, for the scenario and the replications the shard ran.

use super::StrategyAccumulator;
use crate::metrics::{Inconsistency, counted};
use crate::model::Scenario;

impl StrategyAccumulator {
    /// Checks an accumulator read back from a shard's `partial.json` for the shape that
    /// [`StrategyAccumulator::merge`] and [`StrategyAccumulator::finish`] rely on, for
    /// `scenario` with the replications marked in `mine` folded in (one flag per
    /// replication): one entry per replication, the results of exactly those replications,
    /// one entry per service and per population, each service's series as long as its
    /// longest run's, latency sets whole, and records of the scenario's populations.
    pub fn check(&self, scenario: &Scenario, mine: &[bool]) -> Result<(), Inconsistency> {
        let services = scenario.services.len();
        let sized = |at: &str, len: usize, n: usize, one: &str, each: &str| {
            if len == n {
                Ok(())
            } else {
                let expected = format!("{} (one per {each})", counted(n as u64, one));
                Err(Inconsistency::new(at, expected, len))
            }
        };
        sized(
            "replicates",
            self.replicates.len(),
            mine.len(),
            "entry",
            "replication",
        )?;
        sized(
            "services",
            self.services.len(),
            services,
            "entry",
            "service",
        )?;
        sized(
            "populations",
            self.populations.len(),
            scenario.populations.len(),
            "entry",
            "population",
        )?;
        let mut longest = vec![0; services];
        for (r, (replicate, &ran)) in self.replicates.iter().zip(mine).enumerate() {
            let at = |e: Inconsistency| e.within(&format!("replicates[{r}]"));
            match replicate {
                None if ran => {
                    return Err(at(Inconsistency::new(
                        "",
                        format!("the results of replication {r} (a job of this shard)"),
                        "null",
                    )));
                }
                Some(_) if !ran => {
                    return Err(at(Inconsistency::new(
                        "",
                        format!("null (replication {r} is another shard's job)"),
                        "a replication's results",
                    )));
                }
                None => {}
                Some(x) => {
                    sized(
                        "service_peaks",
                        x.service_peaks.len(),
                        services,
                        "value",
                        "service",
                    )
                    .map_err(at)?;
                    sized(
                        "service_ends",
                        x.service_ends.len(),
                        services,
                        "entry",
                        "service",
                    )
                    .map_err(at)?;
                    for (l, &(len, _)) in longest.iter_mut().zip(&x.service_ends) {
                        *l = (*l).max(len);
                    }
                }
            }
        }
        for (i, (t, &len)) in self.services.iter().zip(&longest).enumerate() {
            if t.timeline.len() != len {
                return Err(Inconsistency::new(
                    format!("services[{i}].timeline"),
                    format!(
                        "{} (the longest series in replicates[..].service_ends)",
                        counted(len as u64, "bucket")
                    ),
                    t.timeline.len(),
                ));
            }
        }
        let latencies = [
            ("latencies".to_string(), &self.latencies),
            ("success_latencies".to_string(), &self.success_latencies),
        ];
        let populations = self
            .populations
            .iter()
            .enumerate()
            .map(|(p, t)| (format!("populations[{p}].latencies"), &t.latencies));
        for (at, l) in latencies.into_iter().chain(populations) {
            l.check().map_err(|e| e.within(&at))?;
        }
        let populations = scenario.populations.len();
        check_records(
            "requests",
            &self.requests,
            |x| x.population,
            mine,
            populations,
        )?;
        check_records(
            "attempts",
            &self.attempts,
            |x| x.population,
            mine,
            populations,
        )?;
        Ok(())
    }
}

/// Checks the records kept per replication (`requests` or `attempts`, named `name`): one
/// entry per replication, none for another shard's, each of one of `populations`.
fn check_records<T>(
    name: &str,
    records: &[Vec<T>],
    population: impl Fn(&T) -> u16,
    mine: &[bool],
    populations: usize,
) -> Result<(), Inconsistency> {
    if records.len() != mine.len() {
        return Err(Inconsistency::new(
            name,
            format!(
                "{} (one per replication)",
                counted(mine.len() as u64, "entry")
            ),
            records.len(),
        ));
    }
    for (r, (of_run, &ran)) in records.iter().zip(mine).enumerate() {
        if !ran && !of_run.is_empty() {
            return Err(Inconsistency::new(
                format!("{name}[{r}]"),
                format!("no records (replication {r} is another shard's job)"),
                counted(of_run.len() as u64, "record"),
            ));
        }
        if let Some(k) = of_run
            .iter()
            .position(|x| population(x) as usize >= populations)
        {
            return Err(Inconsistency::new(
                format!("{name}[{r}][{k}].population"),
                format!("a population index below {populations}"),
                population(&of_run[k]),
            ));
        }
    }
    Ok(())
}
