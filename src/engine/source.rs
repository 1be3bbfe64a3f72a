//! Where client requests come from during a run: closed clients, open arrivals, traces.
//!
//! Every draw here comes from a *workload* stream keyed by (seed, replication, population,
//! purpose) (see [`super::streams`]), never from a stream that depends on the strategy, so
//! every strategy of a replication faces the same clients starting at the same instants and
//! the same arrivals. Open and trace populations produce one arrival at a time: the engine
//! holds one pending arrival event per population, so nothing grows with the number of
//! arrivals over the run.

use rand::RngExt;
use rand_distr::{Distribution, Exp1};

use super::streams::{Purpose, RunSeed, SimRng};
use crate::model::dist::Sampler;
use crate::model::population::{Process, RateCurve, uniform_arrival};
use crate::model::{Population, Source};
use crate::time::{SimDuration, SimTime};

/// A population's state during a run.
#[derive(Debug)]
pub enum SourceState<'a> {
    /// Closed clients hold the request keys `first_key..first_key + count`.
    Closed {
        /// The first client's request key.
        first_key: u32,
        /// Logical requests per client.
        requests: u32,
        /// Pause between a client's requests.
        think: Option<Sampler>,
    },
    /// Open or trace arrivals, generated one at a time (boxed: a generator carries two
    /// random streams, a closed population nothing).
    Arrivals(Box<Arrivals<'a>>),
}

/// The arrival generator of an open or trace population.
#[derive(Debug)]
pub struct Arrivals<'a> {
    kind: ArrivalKind<'a>,
    /// Arrivals generated so far (the next one's number).
    pub next_number: u64,
    /// The population's clients (an arrival belongs to one of them).
    clients: u32,
    client_rng: SimRng,
}

#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one per population: size does not matter
enum ArrivalKind<'a> {
    Open {
        curve: &'a RateCurve,
        process: Process,
        start: SimTime,
        end: SimTime,
        /// Poisson: the cumulative rate reached by the last arrival.
        reached: f64,
        rng: SimRng,
    },
    Trace {
        times: &'a [SimTime],
    },
}

impl<'a> SourceState<'a> {
    /// The state of population `index` at the start of a run; closed clients take the keys
    /// from `first_key`.
    pub fn new(population: &'a Population, index: usize, seed: &RunSeed, first_key: u32) -> Self {
        let client_rng = || seed.workload_stream(index, Purpose::Clients);
        match &population.source {
            Source::Closed(c) => SourceState::Closed {
                first_key,
                requests: c.requests,
                think: c.think.as_ref().map(|d| d.sampler()),
            },
            Source::Open(o) => SourceState::Arrivals(Box::new(Arrivals {
                kind: ArrivalKind::Open {
                    curve: &o.rate,
                    process: o.process,
                    start: o.start,
                    end: o.end,
                    reached: 0.0,
                    rng: seed.workload_stream(index, Purpose::Arrivals),
                },
                next_number: 0,
                clients: population.clients,
                client_rng: client_rng(),
            })),
            Source::Trace(t) => SourceState::Arrivals(Box::new(Arrivals {
                kind: ArrivalKind::Trace { times: &t.times },
                next_number: 0,
                clients: population.clients,
                client_rng: client_rng(),
            })),
        }
    }
}

impl Arrivals<'_> {
    /// The time of the next arrival, or `None` when there is no more. Advances the
    /// generator: call it once per arrival, in order.
    pub fn next_time(&mut self) -> Option<SimTime> {
        let k = self.next_number;
        let t = match &mut self.kind {
            ArrivalKind::Open {
                curve,
                process,
                start,
                end,
                reached,
                rng,
            } => {
                let t = match process {
                    Process::Uniform => uniform_arrival(curve, *start, k),
                    Process::Poisson => {
                        // Exponential gaps on the cumulative rate: an inhomogeneous Poisson
                        // process by inversion.
                        let gap: f64 = Exp1.sample(rng);
                        *reached += gap;
                        curve.time_at(*start, *reached)
                    }
                };
                t.filter(|t| t < end)
            }
            ArrivalKind::Trace { times } => times.get(k as usize).copied(),
        };
        if t.is_some() {
            self.next_number += 1;
        }
        t
    }

    /// The client (0-based, within the population) the next arrival belongs to.
    pub fn next_client(&mut self) -> u32 {
        if self.clients <= 1 {
            0
        } else {
            self.client_rng.random_range(0..self.clients)
        }
    }
}

/// Start offsets of a closed population's clients, in client order: uniform in
/// `[0, spread)`, drawn from the population's start stream (all zero without a spread).
pub fn start_offsets(
    count: u32,
    spread: SimDuration,
    seed: &RunSeed,
    population: usize,
) -> impl Iterator<Item = SimDuration> {
    let mut rng = (spread.as_nanos() > 0).then(|| seed.workload_stream(population, Purpose::Start));
    (0..count).map(move |_| match &mut rng {
        Some(rng) => SimDuration((rng.random::<f64>() * spread.as_nanos() as f64) as u64),
        None => SimDuration::ZERO,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::population::{Open, Trace};

    fn seed() -> RunSeed {
        RunSeed {
            seed: 1,
            replication: 0,
            point: 0,
        }
    }

    fn open(rate: f64, process: Process, end_s: u64) -> Population {
        Population {
            name: "web".into(),
            source: Source::Open(Open {
                rate: RateCurve::constant(rate),
                process,
                start: SimTime(SimDuration::from_secs(1).0),
                end: SimTime(SimDuration::from_secs(end_s).0),
            }),
            clients: 1,
        }
    }

    fn all_times(p: &Population) -> Vec<SimTime> {
        let SourceState::Arrivals(mut a) = SourceState::new(p, 0, &seed(), 0) else {
            panic!("open population")
        };
        std::iter::from_fn(|| a.next_time()).collect()
    }

    #[test]
    fn uniform_arrivals_fill_start_to_end_exactly() {
        let times = all_times(&open(4.0, Process::Uniform, 3));
        let ms: Vec<u64> = times.iter().map(|t| t.0 / 1_000_000).collect();
        assert_eq!(ms, [1000, 1250, 1500, 1750, 2000, 2250, 2500, 2750]);
    }

    #[test]
    fn poisson_counts_match_the_rate() {
        // 1000 req/s for 99 s: 99 000 expected, sd ~315; 4 sd is 1 260.
        let n = all_times(&open(1000.0, Process::Poisson, 100)).len() as f64;
        assert!((n - 99_000.0).abs() < 1260.0, "{n}");
    }

    #[test]
    fn a_trace_replays_its_times() {
        let times: Vec<SimTime> = [0, 5, 5, 9].into_iter().map(SimTime).collect();
        let p = Population {
            name: "t".into(),
            source: Source::Trace(Trace::new("t.csv".into(), times.clone().into())),
            clients: 3,
        };
        assert_eq!(all_times(&p), times);
    }

    #[test]
    fn start_offsets_are_the_same_for_every_strategy_and_within_the_spread() {
        let spread = SimDuration::from_secs(2);
        let a: Vec<_> = start_offsets(100, spread, &seed(), 0).collect();
        let b: Vec<_> = start_offsets(100, spread, &seed(), 0).collect();
        assert_eq!(a, b);
        assert!(a.iter().all(|d| *d < spread));
        assert!(start_offsets(3, SimDuration::ZERO, &seed(), 0).all(|d| d.is_zero()));
    }
}
