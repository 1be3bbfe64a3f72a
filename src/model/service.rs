//! Servers and services: the validated description of what answers requests.
//!
//! A [`ServerSpec`] is one server's behaviour: slots, a queue and its discipline, service
//! time and how it degrades (slowdown under load, capacity steps, autoscaling), outage
//! windows, a rate limiter, optimistic concurrency control. A [`ServiceSpec`] is a server in a
//! service graph: it adds a name, the latency to reach it, the downstream services it calls
//! while holding a slot, and the retry policy of those calls. v1's `[server]` is a graph of
//! one service named `server`; `[fallback]` is a server outside the graph.
//!
//! The runtime state (who holds a slot now, the queue) lives in [`crate::engine`]; the pure
//! rules here ([`Slowdown::factor`], [`ServerSpec::capacity_cut_end`]) are unit-tested alone.

use super::dist::Dist;
use super::policy::Strategy;
use crate::time::{SimDuration, SimTime};

/// A Retry-After hint a server sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hint {
    /// No header.
    None,
    /// Always this value.
    Fixed(SimDuration),
    /// Computed by the simulated server, rounded up to whole seconds as real servers send it.
    Auto,
}

/// What an outage does to arrivals during `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OutageKind {
    /// Every arrival is refused at once with 503.
    Down,
    /// Nothing answers: the attempt fails when the client's connect timeout or timeout expires.
    Unreachable,
    /// This share of arrivals is served, then answered 500.
    Errors(f64),
    /// Service times of services starting in the window are multiplied by this (>= 1).
    Slow(f64),
    /// As `Unreachable`, and at the window's start every queued and in-service request is
    /// lost without an answer.
    Crash,
}

impl OutageKind {
    /// The `kind` spelling.
    pub fn label(&self) -> &'static str {
        match self {
            OutageKind::Down => "down",
            OutageKind::Unreachable => "unreachable",
            OutageKind::Errors(_) => "errors",
            OutageKind::Slow(_) => "slow",
            OutageKind::Crash => "crash",
        }
    }

    /// Whether nothing answers during the window (`unreachable` and `crash`).
    pub fn is_unreachable(&self) -> bool {
        matches!(self, OutageKind::Unreachable | OutageKind::Crash)
    }
}

/// One `[[server.outages]]` window, `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outage {
    /// First instant of the window.
    pub start: SimTime,
    /// First instant after the window (`start < end`).
    pub end: SimTime,
    /// What the outage does.
    pub kind: OutageKind,
    /// The hint sent with a `down` outage's 503s (`Auto`: until the outage ends).
    pub retry_after: Hint,
}

/// `[server.rate_limit]`: a token bucket in front of the server.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimiter {
    /// Tokens per second (> 0).
    pub rate: f64,
    /// Bucket size, and initial fill (>= 1).
    pub burst: f64,
    /// Hint sent with 429s (`Auto`: until the next token, rounded up to whole seconds).
    pub retry_after: Hint,
}

/// Which queued request a freed slot takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Discipline {
    /// The oldest (first in, first out).
    #[default]
    Fifo,
    /// The newest (last in, first out).
    Lifo,
}

impl Discipline {
    /// The `discipline` spelling.
    pub fn label(self) -> &'static str {
        match self {
            Discipline::Fifo => "fifo",
            Discipline::Lifo => "lifo",
        }
    }
}

/// Optimistic concurrency control on one row (Brooker 2015; BOSIM).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Occ {
    /// An ordinary server: slots, queue, service time.
    #[default]
    Off,
    /// Each attempt reads the row's version (a round trip), then writes (another); the write
    /// holds `occ_write`, then commits only if no other write committed since its read.
    ReadWrite,
    /// Each attempt only writes: it holds `occ_write` and commits only if no other write
    /// committed during its own write time (BOSIM's write-only model).
    WriteOnly,
}

/// `slowdown = [[h, factor], ...]`: the service-time multiplier as a piecewise-linear
/// function of `h`, the requests the server holds (in service + queued, counting the one
/// starting) when a service starts.
///
/// Invariants (checked by validation): at least one point, `h` strictly increasing and >= 0,
/// factors >= 0, and the curve extended stays >= 0 up to the most requests its server can
/// hold ([`Slowdown::extended`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Slowdown {
    points: Vec<(f64, f64)>,
}

impl Slowdown {
    /// A slowdown through `points`; callers guarantee the invariants above.
    pub fn new(points: Vec<(f64, f64)>) -> Self {
        debug_assert!(!points.is_empty());
        debug_assert!(points.windows(2).all(|w| w[0].0 < w[1].0));
        Slowdown { points }
    }

    /// The points as written.
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// The multiplier at `h` held requests: [`Slowdown::extended`], never below 0. Validation
    /// refuses a curve that falls below 0 for an `h` its server can hold, so the floor only
    /// guards specs built by hand.
    pub fn factor(&self, h: u32) -> f64 {
        self.extended(h as f64).max(0.0)
    }

    /// The curve at `h`: the first value before the first point, linear between points, the
    /// last segment extended with its slope beyond the last point (DESIGN.md; a single point
    /// is a constant). `[[0, 1.0], [100, 2.0]]` is `1 + h/100`. A falling last segment
    /// falls below 0 far enough out: validation compares it with the most requests the
    /// server can hold.
    pub fn extended(&self, h: f64) -> f64 {
        let p = &self.points;
        let (h0, f0) = p[0];
        if p.len() == 1 || h <= h0 {
            return f0;
        }
        // The segment containing h, or the last one when h is beyond the last point.
        let i = p.partition_point(|(x, _)| *x <= h).clamp(1, p.len() - 1);
        let ((ha, fa), (hb, fb)) = (p[i - 1], p[i]);
        fa + (fb - fa) * (h - ha) / (hb - ha)
    }
}

/// `[[server.capacity]]`: from `at` on, the server has `concurrency` slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CapacityStep {
    /// When the step takes effect.
    pub at: SimTime,
    /// Slots from then on (may be 0).
    pub concurrency: u32,
}

/// `autoscale = { min, max, target, interval, warmup }`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Autoscale {
    /// Fewest slots (>= 1).
    pub min: u32,
    /// Most slots (>= min).
    pub max: u32,
    /// Target utilisation, in (0, 1].
    pub target: f64,
    /// Time between decisions, from t = 0 (> 0).
    pub interval: SimDuration,
    /// Delay before an increase takes effect; decreases are immediate.
    pub warmup: SimDuration,
}

impl Autoscale {
    /// The size wanted after an interval in which slots were busy `busy_area`
    /// slot-nanoseconds: `clamp(ceil(concurrency * u / target), min, max)` with
    /// `u = mean busy slots / concurrency`, that is
    /// `clamp(ceil(busy_area / (interval x target)), min, max)`.
    ///
    /// In whole numbers, with the target as the decimal fraction it was written as (0.7 is
    /// 7/10), so a ratio that is whole is not pushed over by float rounding (10.5 / 0.7 is
    /// 15.000000000000002 in floats) and the smallest excess rounds up (one slot-nanosecond
    /// more than 2 slots' worth at target 1 wants 3).
    pub fn desired(&self, busy_area: u128) -> u32 {
        let interval = u128::from(self.interval.as_nanos()).max(1);
        let want = decimal_fraction(self.target)
            .and_then(|(num, den)| Some((busy_area.checked_mul(den)?, interval.checked_mul(num)?)))
            .map_or_else(
                // A target of more than ~30 decimal places, or an interval of centuries: floats.
                || (busy_area as f64 / (interval as f64 * self.target)).ceil() as u128,
                |(area, per_slot)| area.div_ceil(per_slot.max(1)),
            );
        want.clamp(u128::from(self.min), u128::from(self.max)) as u32
    }
}

/// `x` (finite, > 0) as the fraction `numerator / 10^k` of its shortest decimal spelling
/// (the one Rust prints, which reads back as the same double): 0.7 gives (7, 10). `None`
/// when that does not fit in 36 digits.
fn decimal_fraction(x: f64) -> Option<(u128, u128)> {
    let text = format!("{x}");
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let digits = format!("{whole}{fraction}");
    if digits.len() > 36 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let numerator: u128 = digits.parse().ok()?;
    let denominator = 10u128.checked_pow(u32::try_from(fraction.len()).ok()?)?;
    Some((numerator, denominator))
}

/// One server: `[server]`, each `[[service]]`'s server part, and `[fallback]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    /// Slots at t = 0 (>= 1; ignored by OCC servers).
    pub concurrency: u32,
    /// Waiting places.
    pub queue: u32,
    /// Service time per request.
    pub service: Dist,
    /// Sorted by start, pairwise disjoint.
    pub outages: Vec<Outage>,
    /// Optional rate limiter.
    pub rate_limit: Option<RateLimiter>,
    /// Hint sent with overload 503s (`Auto`: estimated wait for a place).
    pub retry_after: Hint,
    /// Share of logical requests answered 400 on every attempt, in [0, 1].
    pub client_error_rate: f64,
    /// Optimistic concurrency control (slots, queue and service do not apply when on).
    pub occ: Occ,
    /// How long an OCC write holds before it commits (default zero).
    pub occ_write: Dist,
    /// Which queued request a freed slot takes.
    pub discipline: Discipline,
    /// A queued request is dropped (503, counted as `shed`) this long after it joined.
    pub queue_timeout: Option<SimDuration>,
    /// Service time multiplier by requests held.
    pub slowdown: Option<Slowdown>,
    /// Capacity steps, strictly increasing in `at`.
    pub capacity: Vec<CapacityStep>,
    /// Autoscaling, when configured.
    pub autoscale: Option<Autoscale>,
}

impl ServerSpec {
    /// A plain server: `concurrency` slots, `queue` places, `service` time, nothing else.
    pub fn plain(concurrency: u32, queue: u32, service: Dist) -> Self {
        ServerSpec {
            concurrency,
            queue,
            service,
            outages: Vec::new(),
            rate_limit: None,
            retry_after: Hint::None,
            client_error_rate: 0.0,
            occ: Occ::Off,
            occ_write: Dist::Constant(SimDuration::ZERO),
            discipline: Discipline::Fifo,
            queue_timeout: None,
            slowdown: None,
            capacity: Vec::new(),
            autoscale: None,
        }
    }

    /// The slots the scenario alone gives the server just before `t`: the starting
    /// `concurrency`, then that of each capacity step at or after which `t` comes (`at < t`).
    /// `None` for an autoscaled server, whose size its runs decide.
    pub fn scheduled_slots_before(&self, t: SimTime) -> Option<u32> {
        if self.autoscale.is_some() {
            return None;
        }
        let set = self.capacity.iter().take_while(|step| step.at < t).last();
        Some(set.map_or(self.concurrency, |step| step.concurrency))
    }

    /// The end of the last outage window, if any.
    pub fn last_outage_end(&self) -> Option<SimTime> {
        self.outages.iter().map(|o| o.end).max()
    }

    /// Whether this is an OCC server (attempts write a row instead of taking a slot).
    pub fn is_occ(&self) -> bool {
        self.occ != Occ::Off
    }

    /// The end of the last capacity cut: a cut starts at a step below the starting
    /// `concurrency` and ends at the first later step back to at least it. A cut that never
    /// ends counts as ending where it started (the trigger is the drop itself).
    pub fn capacity_cut_end(&self) -> Option<SimTime> {
        let mut end = None;
        let mut cut_since: Option<SimTime> = None;
        for step in &self.capacity {
            if step.concurrency < self.concurrency {
                cut_since.get_or_insert(step.at);
            } else if cut_since.take().is_some() {
                end = Some(step.at);
            }
        }
        // An unfinished cut started after every finished one ended.
        cut_since.or(end)
    }

    /// Its outages and capacity cuts as `[start, end)` spans, outages first (a cut never
    /// restored is `[start, start]`, as in [`Self::capacity_cut_end`]).
    pub fn disruptions(&self) -> Vec<(SimTime, SimTime)> {
        let mut spans: Vec<(SimTime, SimTime)> =
            self.outages.iter().map(|o| (o.start, o.end)).collect();
        let mut cut_since: Option<SimTime> = None;
        for step in &self.capacity {
            if step.concurrency < self.concurrency {
                cut_since.get_or_insert(step.at);
            } else if let Some(since) = cut_since.take() {
                spans.push((since, step.at));
            }
        }
        spans.extend(cut_since.map(|since| (since, since)));
        spans
    }

    /// The end of the last outage or capacity cut: where this server's trigger ends.
    pub fn trigger_end(&self) -> Option<SimTime> {
        self.last_outage_end().max(self.capacity_cut_end())
    }

    /// The slots scheduled at `t` by capacity steps alone (no autoscaling).
    pub fn scheduled_concurrency(&self, t: SimTime) -> u32 {
        self.capacity
            .iter()
            .take_while(|s| s.at <= t)
            .last()
            .map_or(self.concurrency, |s| s.concurrency)
    }
}

/// How a service retries its downstream calls.
#[derive(Debug, Clone, PartialEq)]
pub enum ServiceRetry {
    /// `retry = "strategy"`: the compared strategy, as the clients use it.
    Strategy,
    /// An inline policy (or, when `retry` is absent, a single attempt with no retry): the
    /// same for every compared strategy.
    Fixed(Box<Strategy>),
}

/// One `[[service]]` (or v1's `[server]`, a graph of one service named `server`).
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceSpec {
    /// Unique among services; `[a-z0-9_-]{1,64}`.
    pub name: String,
    /// The server.
    pub server: ServerSpec,
    /// One-way latency to this service from its callers (both directions).
    pub latency: Dist,
    /// Downstream services called one after another while a slot is held, by index.
    /// The graph is acyclic (validated).
    pub calls: Vec<usize>,
    /// The policy of its downstream calls.
    pub retry: ServiceRetry,
    /// Cap each downstream call's deadline at the remaining deadline of the request served.
    pub propagate_deadline: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slowdown(points: &[(f64, f64)]) -> Slowdown {
        Slowdown::new(points.to_vec())
    }

    #[test]
    fn two_points_make_a_line_that_extends() {
        let s = slowdown(&[(0.0, 1.0), (100.0, 2.0)]);
        assert_eq!(s.factor(0), 1.0);
        assert_eq!(s.factor(50), 1.5);
        assert_eq!(s.factor(100), 2.0);
        assert_eq!(s.factor(300), 4.0);
    }

    #[test]
    fn the_first_value_holds_before_the_first_point_and_the_last_segment_continues() {
        let s = slowdown(&[(10.0, 1.0), (200.0, 1.0), (600.0, 4.0)]);
        assert_eq!(s.factor(0), 1.0);
        assert_eq!(s.factor(150), 1.0);
        assert_eq!(s.factor(400), 2.5);
        assert_eq!(s.factor(1000), 7.0);
        // A falling last segment goes on falling, below 0 beyond h = 200 (validation
        // refuses it where its server can hold that many); the factor itself stops at 0.
        let s = slowdown(&[(0.0, 2.0), (100.0, 1.0)]);
        assert_eq!(s.extended(200.0), 0.0);
        assert_eq!(s.extended(300.0), -1.0);
        assert_eq!(s.factor(300), 0.0);
        assert_eq!(slowdown(&[(5.0, 3.0)]).factor(1000), 3.0);
    }

    #[test]
    fn a_capacity_cut_ends_when_capacity_returns() {
        let mut s = ServerSpec::plain(100, 0, Dist::Constant(SimDuration::ZERO));
        let at = |x| SimTime(SimDuration::from_secs(x).0);
        s.capacity = vec![
            CapacityStep {
                at: at(60),
                concurrency: 20,
            },
            CapacityStep {
                at: at(70),
                concurrency: 50,
            },
            CapacityStep {
                at: at(80),
                concurrency: 100,
            },
        ];
        assert_eq!(s.capacity_cut_end(), Some(at(80)));
        assert_eq!(s.scheduled_concurrency(at(75)), 50);
        assert_eq!(s.scheduled_concurrency(at(5)), 100);
        // Growth above the start is not a cut.
        s.capacity = vec![CapacityStep {
            at: at(10),
            concurrency: 200,
        }];
        assert_eq!(s.capacity_cut_end(), None);
        // A cut that never ends: the drop itself.
        s.capacity = vec![CapacityStep {
            at: at(10),
            concurrency: 10,
        }];
        assert_eq!(s.capacity_cut_end(), Some(at(10)));
    }

    #[test]
    fn autoscale_rounds_up_to_the_target_utilisation() {
        let a = Autoscale {
            min: 2,
            max: 50,
            target: 0.7,
            interval: SimDuration::from_secs(10),
            warmup: SimDuration::from_secs(60),
        };
        // Mean busy slots over the 10 s interval, in slot-nanoseconds.
        let busy = |slots: f64| (slots * 1e10) as u128;
        assert_eq!(a.desired(busy(14.0)), 20);
        assert_eq!(a.desired(busy(14.1)), 21);
        assert_eq!(a.desired(0), 2);
        assert_eq!(a.desired(busy(1000.0)), 50);
        // 10.5 / 0.7 is 15.000000000000002 in floats: still 15.
        assert_eq!(a.desired(busy(10.5)), 15);
        // One slot-nanosecond over whole slots rounds up: 1 busy slot plus 1 ns over 10 s at
        // target 0.5 wants 2.0000000000002 slots, so 3; and so does 1e-12 of a slot at 1000 s.
        let half = Autoscale { target: 0.5, ..a };
        assert_eq!(half.desired(busy(1.0) + 1), 3);
        assert_eq!(half.desired(busy(1.0)), 2);
        let slow = Autoscale {
            interval: SimDuration::from_secs(1000),
            ..half
        };
        assert_eq!(slow.desired(1_000_000_000_001), 3);
        assert_eq!(slow.desired(1_000_000_000_000), 2);
        // Targets written with many decimals, and 1.
        let odd = Autoscale { target: 0.333, ..a };
        assert_eq!(odd.desired(busy(3.33)), 10);
        assert_eq!(odd.desired(busy(3.33) + 1), 11);
        let one = Autoscale { target: 1.0, ..a };
        assert_eq!(one.desired(busy(7.0)), 7);
        assert_eq!(decimal_fraction(0.7), Some((7, 10)));
        assert_eq!(decimal_fraction(1.0), Some((1, 1)));
        assert_eq!(decimal_fraction(0.125), Some((125, 1000)));
        assert_eq!(decimal_fraction(1e-40), None);
    }
}
