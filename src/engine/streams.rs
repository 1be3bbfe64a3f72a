//! Seeded random streams: one per purpose, keyed so that every strategy of a replication
//! faces the same workload (common random numbers).
//!
//! Two families, both xoshiro256++ (`rand::rngs::Xoshiro256PlusPlus`, period 2^256 - 1)
//! seeded with 32 bytes derived by SplitMix64 from a tuple of integers (a fixed derivation:
//! part of the output contract). xoshiro256++ replaced ChaCha8 for speed: a draw costs a few
//! instructions instead of about 27, and simulation needs statistical quality, not
//! unpredictability. Streams seeded from distinct SplitMix64 outputs overlap with
//! negligible probability (each run draws at most ~2^40 numbers of a 2^256 cycle):
//! - **workload streams**, keyed by (seed, replication, population, purpose): start offsets of
//!   closed clients, open arrival times, which client an arrival belongs to, which requests
//!   are answered 400, and a closed client's think pauses. No strategy index: every
//!   strategy of a replication sees the same arrivals, in the same order, with the same
//!   400s and the same pauses.
//! - **run streams**, keyed by (seed, replication, sweep point, purpose, service): network
//!   latency, service time, backoff jitter, error draws. Also without the strategy: two
//!   identical strategies draw identical numbers and give identical rows, and different
//!   strategies stay synchronised as long as they behave alike.
//!
//! A 400 and a think pause are counter-based draws (a hash of the request's identity: the
//! client and its request number), not stream positions, so they do not depend on the order
//! in which requests happen to start or end, which the strategy changes.

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

/// The random-number generator behind every stream: xoshiro256++ (in `rand`).
pub type SimRng = Xoshiro256PlusPlus;

/// What a stream is drawn for. The discriminant is part of the derivation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub enum Purpose {
    /// One-way network latency to a service (per service).
    Latency = 1,
    /// Service time at a service (per service).
    Service = 2,
    /// Backoff jitter.
    Backoff = 3,
    /// `errors` outage draws and downstream 400s (per service).
    Errors = 4,
    /// Think time between a closed client's requests (a workload draw per client and
    /// request, so every strategy sees the same pauses).
    Think = 5,
    /// OCC write hold times (per service).
    OccWrite = 6,
    /// Start offsets of a closed population's clients.
    Start = 16,
    /// Arrival times of an open population.
    Arrivals = 17,
    /// Which client an open or trace arrival belongs to.
    Clients = 18,
    /// Which of a population's requests are answered 400.
    BadRequest = 19,
}

/// Domain tags keep the two families apart even for equal tuples.
const WORKLOAD: u64 = 0x574f_524b;
const RUN: u64 = 0x0052_554e;

/// SplitMix64's finaliser: a bijective 64-bit mix.
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Folds `parts` through SplitMix64 into one 64-bit state.
fn fold(parts: &[u64]) -> u64 {
    parts
        .iter()
        .fold(splitmix64(0), |state, &p| splitmix64(state ^ p))
}

/// Expands a folded state to a 32-byte seed (four little-endian words).
fn expand(mut state: u64) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (i, chunk) in out.chunks_exact_mut(8).enumerate() {
        state = splitmix64(state.wrapping_add(i as u64));
        chunk.copy_from_slice(&state.to_le_bytes());
    }
    out
}

/// The identity of one run's streams: the scenario seed, the replication and the sweep
/// point. The strategy is deliberately absent (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunSeed {
    /// The scenario's seed.
    pub seed: u64,
    /// Replication index.
    pub replication: u32,
    /// Sweep point index (0 without a sweep).
    pub point: usize,
}

impl RunSeed {
    /// A run stream for `purpose` (at service `index`, 0 when it does not apply).
    pub fn run_stream(&self, purpose: Purpose, index: usize) -> SimRng {
        SimRng::from_seed(expand(fold(&[
            RUN,
            self.seed,
            self.replication as u64,
            self.point as u64,
            purpose as u64,
            index as u64,
        ])))
    }

    /// A workload stream of population `population` for `purpose`.
    pub fn workload_stream(&self, population: usize, purpose: Purpose) -> SimRng {
        SimRng::from_seed(expand(fold(&[
            WORKLOAD,
            self.seed,
            self.replication as u64,
            population as u64,
            purpose as u64,
        ])))
    }

    /// A uniform draw in [0, 1) that depends only on (seed, replication, population,
    /// purpose, a, b): a counter-based stream, the same whenever it is asked.
    pub fn workload_draw(&self, population: usize, purpose: Purpose, a: u64, b: u64) -> f64 {
        let z = self.workload_key(population, purpose, a, b);
        (z >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A stream of its own for (seed, replication, population, purpose, a, b), for a
    /// workload draw that may take several numbers (a think pause from any distribution):
    /// like [`RunSeed::workload_draw`], the same whenever and in whatever order it is asked.
    pub fn workload_rng(&self, population: usize, purpose: Purpose, a: u64, b: u64) -> SimRng {
        SimRng::from_seed(expand(self.workload_key(population, purpose, a, b)))
    }

    fn workload_key(&self, population: usize, purpose: Purpose, a: u64, b: u64) -> u64 {
        fold(&[
            WORKLOAD,
            self.seed,
            self.replication as u64,
            population as u64,
            purpose as u64,
            a,
            b,
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    #[test]
    fn streams_differ_by_every_key_and_are_stable() {
        let r = RunSeed {
            seed: 42,
            replication: 0,
            point: 0,
        };
        let first = |mut g: SimRng| g.random::<u64>();
        let base = first(r.run_stream(Purpose::Latency, 0));
        assert_eq!(base, first(r.run_stream(Purpose::Latency, 0)));
        assert_ne!(base, first(r.run_stream(Purpose::Latency, 1)));
        assert_ne!(base, first(r.run_stream(Purpose::Service, 0)));
        let other = RunSeed {
            replication: 1,
            ..r
        };
        assert_ne!(base, first(other.run_stream(Purpose::Latency, 0)));
        let w = first(r.workload_stream(0, Purpose::Arrivals));
        assert_ne!(w, first(r.workload_stream(1, Purpose::Arrivals)));
        assert_ne!(w, first(other.workload_stream(0, Purpose::Arrivals)));
        let d = r.workload_draw(0, Purpose::BadRequest, 3, 4);
        assert!((0.0..1.0).contains(&d));
        assert_eq!(d, r.workload_draw(0, Purpose::BadRequest, 3, 4));
        assert_ne!(d, r.workload_draw(0, Purpose::BadRequest, 4, 3));
    }
}
