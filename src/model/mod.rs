//! The validated scenario: typed, with defaults resolved and every invariant checked once.
//!
//! This module owns the types a scenario file means, and the pure rules on them; it knows
//! nothing of TOML. [`crate::scenario::check`] builds a [`Scenario`] from the raw file, or
//! reports *all* the problems found, each with file, line:column, key, what was expected and
//! what was found. After that, nothing downstream re-checks input: the engine relies on the
//! invariants documented on each type (e.g. `cap >= base`, outages sorted and disjoint).

pub mod backoff;
pub mod dist;
pub mod outcome;
pub mod policy;
pub mod population;
pub mod service;

pub use population::{Closed, Population, PopulationPolicy, Source};
pub use service::{
    Discipline, Hint, Occ, Outage, OutageKind, RateLimiter, ServerSpec, ServiceRetry, ServiceSpec,
};

use crate::time::{SimDuration, SimTime};
use backoff::{Backoff, Jitter};
use dist::Dist;
use outcome::{ReasonSet, StatusSet};
use policy::{RetryAfterPolicy, RetryPolicy, Strategy};

/// A fully validated scenario (one sweep point, when the file has a `[sweep]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// `[a-z0-9_-]{1,64}`; names the output folder.
    pub name: String,
    /// Free text for reports.
    pub description: String,
    /// The base seed every run's stream is derived from.
    pub seed: u64,
    /// Runs per strategy (>= 1).
    pub replications: u32,
    /// Simulated-time safety stop (> 0).
    pub time_limit: SimDuration,
    /// One or more client populations with unique names, in file order (v1's `[clients]`
    /// is one closed population named `clients`).
    pub populations: Vec<Population>,
    /// `[network].latency`: the default one-way latency to a service.
    pub latency: Dist,
    /// One or more services; clients call `services[0]`. v1's `[server]` is one service
    /// named `server`.
    pub services: Vec<ServiceSpec>,
    /// The fallback server, when `[fallback]` is present (client requests only).
    pub fallback: Option<FallbackSpec>,
    /// Time-series resolution (> 0).
    pub bucket: SimDuration,
    /// `[metrics] trigger_end`: where recovery is measured from (default: the end of the
    /// last outage or capacity cut of any service).
    pub trigger_end: Option<SimTime>,
    /// One or more strategies with unique names, in file order.
    pub strategies: Vec<Strategy>,
    /// `population_policies[strategy][population]`: the compared strategy with each
    /// population's overrides merged.
    pub population_policies: Vec<Vec<PopulationPolicy>>,
}

/// `[fallback]`: where requests that would give up for a `fallback_on` reason are sent once.
#[derive(Debug, Clone, PartialEq)]
pub struct FallbackSpec {
    /// The fallback server.
    pub server: ServerSpec,
    /// One-way latency to it (default: `[network].latency`).
    pub latency: Dist,
}

impl Scenario {
    /// The service clients call (`services[0]`).
    pub fn entry(&self) -> &ServiceSpec {
        &self.services[0]
    }

    /// Clients of the closed populations.
    pub fn closed_clients(&self) -> u64 {
        self.populations
            .iter()
            .map(|p| match &p.source {
                Source::Closed(c) => c.count as u64,
                _ => 0,
            })
            .sum()
    }

    /// Logical requests of the closed populations (clients x requests each).
    pub fn closed_requests(&self) -> u64 {
        self.populations.iter().map(|p| p.closed_requests()).sum()
    }

    /// How many requests may begin at one instant, at most (roughly): every closed client,
    /// and for a trace the most arrivals it lists at one time (a log with one-second
    /// resolution lists thousands at each). Sizes the stall guard
    /// ([`SAME_INSTANT_PER_CLIENT`](crate::engine::SAME_INSTANT_PER_CLIENT) events per
    /// request): counting a trace as its `clients` (default 1) stopped a valid burst of
    /// 1.1 million arrivals at one instant as if time had stopped advancing.
    pub fn requests_at_one_instant(&self) -> u64 {
        self.populations
            .iter()
            .map(|p| {
                let burst = match &p.source {
                    Source::Trace(t) => t.largest_burst,
                    Source::Closed(_) | Source::Open(_) => 0,
                };
                u64::from(p.clients).max(burst)
            })
            .sum()
    }

    /// Whether some population is open or a trace (work keeps arriving).
    pub fn has_open_work(&self) -> bool {
        self.populations.iter().any(|p| !p.is_closed())
    }

    /// Where `recovery_peak_rps` is measured from: the end of the last outage of any
    /// service, as version 1 defines the column (capacity cuts and `trigger_end` are not
    /// outages: they move `recovered_s`'s trigger, not this); `None` without an outage.
    pub fn recovery_from(&self) -> Option<SimTime> {
        self.services
            .iter()
            .filter_map(|s| s.server.last_outage_end())
            .max()
    }

    /// Whether no time-series bucket of the run starts at or after `t`: the first one that
    /// does (where the recovery peak and `recovered_s` start looking) would begin at or
    /// after `time_limit`.
    pub fn unseen_after(&self, t: SimTime) -> bool {
        let bucket = self.bucket.as_nanos().max(1);
        t.0.div_ceil(bucket).saturating_mul(bucket) >= self.time_limit.as_nanos()
    }

    /// Whether the last outage ends too late for the run to measure anything after it: at or
    /// after `time_limit`, or inside the last bucket before it. `recovery_peak_rps` (over no
    /// bucket) is then 0 and says nothing; the verdict and the charts speak of the whole
    /// run's peak, as without an outage.
    pub fn outage_outlasts_run(&self) -> bool {
        self.recovery_from()
            .is_some_and(|end| self.unseen_after(end))
    }

    /// Whether the trigger of `recovered_s` ends too late for the run to see a recovery (at
    /// or after `time_limit`, or inside the last bucket before it).
    pub fn trigger_outlasts_run(&self) -> bool {
        self.trigger().is_some_and(|end| self.unseen_after(end))
    }

    /// [`Scenario::recovery_from`] when the run sees that outage end: what the verdict calls
    /// the recovery peak is measured from there.
    pub fn recovery_seen(&self) -> Option<SimTime> {
        self.recovery_from().filter(|_| !self.outage_outlasts_run())
    }

    /// Where recovery (`recovered_s`) is measured from: `[metrics] trigger_end`, else the
    /// end of the last outage or capacity cut of any service; `None` when there is no
    /// trigger.
    pub fn trigger(&self) -> Option<SimTime> {
        self.trigger_end.or_else(|| {
            self.services
                .iter()
                .filter_map(|s| s.server.trigger_end())
                .max()
        })
    }

    /// Where the trouble that the trigger ends began: the start of the last stretch of
    /// outages and capacity cuts (of any service, overlapping or back to back) that starts at
    /// or before the trigger's end; 0 when there is none (a `[metrics] trigger_end` alone).
    /// An earlier disruption, over before that stretch began, is not part of it. `None`
    /// without a trigger. Successes before it say nothing about recovery (`recovered_s`).
    pub fn trigger_start(&self) -> Option<SimTime> {
        let end = self.trigger()?;
        let mut spans: Vec<(SimTime, SimTime)> = self
            .services
            .iter()
            .flat_map(|s| s.server.disruptions())
            .filter(|&(start, _)| start <= end)
            .collect();
        spans.sort();
        let mut stretch: Option<(SimTime, SimTime)> = None;
        for (start, stop) in spans {
            stretch = match stretch {
                Some((from, to)) if start <= to => Some((from, to.max(stop))),
                _ => Some((start, stop)),
            };
        }
        Some(stretch.map_or(SimTime::ZERO, |(from, _)| from))
    }

    /// The policy of the downstream calls of service `service` under strategy `strategy`.
    pub fn service_policy(&self, strategy: usize, service: usize) -> &Strategy {
        match &self.services[service].retry {
            ServiceRetry::Strategy => &self.strategies[strategy],
            ServiceRetry::Fixed(s) => s,
        }
    }
}

/// Most time-series buckets a run may need (`time_limit / metrics.bucket`): 40 bytes each, so
/// at most ~400 MB per run in the worst case.
pub const MAX_BUCKETS: u64 = 10_000_000;

/// The largest client population: each client's state is 64 bytes and every client has an
/// event in flight, so this is about 5 GB per run in progress; more would fail to allocate.
pub const MAX_CLIENTS: i64 = 50_000_000;

/// Checks a name used for folders and CSV values: `[a-z0-9_-]{1,64}`.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

/// The policy of a service that declares no `retry`: one attempt, no retry, no timeout.
pub fn no_retry() -> Strategy {
    Strategy {
        name: String::new(),
        backoff: Backoff {
            base: SimDuration::ZERO,
            cap: SimDuration::ZERO,
            multiplier: 1.0,
            increment: SimDuration::ZERO,
            jitter: Jitter::None,
            jitter_past_cap: true,
        },
        retry: RetryPolicy {
            max_attempts: 1,
            timeout: None,
            timeout_multiplier: 1.0,
            connect_timeout: None,
            deadline: None,
            clamp_to_deadline: false,
            retry_on: StatusSet::all_retryable(),
            retry_after: RetryAfterPolicy::default(),
            immediate_retries: 0,
            throttle_base: None,
            rate_limit: None,
            budget: None,
            breaker: None,
            client_rate_limiter: None,
            fallback_on: ReasonSet::default(),
        },
    }
}
