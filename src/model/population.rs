//! Client populations: who sends logical requests, and when.
//!
//! A scenario has one or more [`Population`]s, each with exactly one [`Source`]:
//! - **closed**: a fixed set of clients, each sending its requests one after another (v1's
//!   `[clients]`, the herd);
//! - **open**: arrivals from a Poisson or uniform process whose rate is a constant or a
//!   piecewise-linear [`RateCurve`], each arrival one logical request with its own retry state;
//! - **trace**: arrival times read from a CSV file.
//!
//! The arrival-time arithmetic lives here as pure functions ([`RateCurve::cumulative`],
//! [`RateCurve::time_at`], [`uniform_arrival`]) so it is unit-tested apart from the engine,
//! which only asks for "the time at which the cumulative rate reaches x".

use std::sync::Arc;

use super::dist::Dist;
use super::policy::Strategy;
use crate::time::{NANOS_PER_SEC, SimDuration, SimTime};

/// One `[[clients]]` table (or the v1 `[clients]` table, named `clients`).
#[derive(Debug, Clone, PartialEq)]
pub struct Population {
    /// Unique among populations; `[a-z0-9_-]{1,64}`.
    pub name: String,
    /// Where its requests come from.
    pub source: Source,
    /// The clients behind the requests, for client-scoped budgets and breakers: `count` for a
    /// closed population; for open and trace populations the `clients` key (default 1), each
    /// arrival belonging to one of them drawn uniformly at random.
    pub clients: u32,
}

impl Population {
    /// Whether this is a closed population (a fixed set of clients looping over requests).
    pub fn is_closed(&self) -> bool {
        matches!(self.source, Source::Closed(_))
    }

    /// Logical requests it makes, when known ahead: clients x requests each for a closed
    /// population; 0 for open and trace work.
    pub fn closed_requests(&self) -> u64 {
        match &self.source {
            Source::Closed(c) => c.count as u64 * c.requests as u64,
            _ => 0,
        }
    }
}

/// Where a population's logical requests come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A fixed set of clients, each sending `requests` requests one after another.
    Closed(Closed),
    /// An arrival process.
    Open(Open),
    /// Arrival times read from a CSV file.
    Trace(Trace),
}

/// A closed population (v1 `[clients]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Closed {
    /// Number of clients (>= 1).
    pub count: u32,
    /// When the first client may start.
    pub start: SimDuration,
    /// Start offsets are uniform in `[0, start_spread)`; zero = all start together.
    pub start_spread: SimDuration,
    /// Logical requests per client, one after another (>= 1).
    pub requests: u32,
    /// Pause between a request's end and the next one's start; `None` = none.
    pub think: Option<Dist>,
}

/// An open population: arrivals in `[start, end)` at the rate of `rate`.
#[derive(Debug, Clone, PartialEq)]
pub struct Open {
    /// The arrival rate over time.
    pub rate: RateCurve,
    /// Poisson or uniform arrivals.
    pub process: Process,
    /// First instant an arrival may happen.
    pub start: SimTime,
    /// Arrivals happen strictly before this (`end > start`).
    pub end: SimTime,
}

/// A trace population: one logical request per row of a CSV file.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// The file as written in the scenario (for messages and reports).
    pub file: String,
    /// Arrival times, non-decreasing. Shared, so sweep points do not copy the trace.
    pub times: Arc<Vec<SimTime>>,
    /// The most arrivals it lists at one time (a log with one-second resolution lists
    /// thousands at each), for the stall guard; see [`Trace::new`].
    pub largest_burst: u64,
}

impl Trace {
    /// The trace of `times` (non-decreasing), read from `file`; counts its largest burst
    /// once, here, rather than in every run.
    pub fn new(file: String, times: Arc<Vec<SimTime>>) -> Trace {
        let largest_burst = times
            .chunk_by(|a, b| a == b)
            .map(|same| same.len() as u64)
            .max()
            .unwrap_or(0);
        Trace {
            file,
            times,
            largest_burst,
        }
    }
}

/// How arrivals are placed on the cumulative rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Process {
    /// The (inhomogeneous) Poisson process of the rate: exponential gaps on the cumulative
    /// rate.
    Poisson,
    /// Arrival k = 0, 1, 2, ... exactly where the cumulative rate from `start` reaches k.
    Uniform,
}

impl Process {
    /// The `process` spelling.
    pub fn label(self) -> &'static str {
        match self {
            Process::Poisson => "poisson",
            Process::Uniform => "uniform",
        }
    }
}

/// A rate in requests per second over absolute simulated time: piecewise linear through its
/// points, 0 before the first point, the last point's value after the last. A repeated time
/// is a step. A constant `rate = r` is the single point `(0, r)`.
///
/// Invariants (checked by validation): at least one point; times non-decreasing; rates
/// finite and >= 0.
#[derive(Debug, Clone, PartialEq)]
pub struct RateCurve {
    points: Vec<(SimTime, f64)>,
}

impl RateCurve {
    /// A constant rate (requests per second, > 0) from t = 0.
    pub fn constant(rate: f64) -> Self {
        RateCurve {
            points: vec![(SimTime::ZERO, rate)],
        }
    }

    /// A piecewise-linear profile. Callers guarantee the invariants above.
    pub fn profile(points: Vec<(SimTime, f64)>) -> Self {
        debug_assert!(!points.is_empty());
        debug_assert!(points.windows(2).all(|w| w[0].0 <= w[1].0));
        RateCurve { points }
    }

    /// The points, in time order.
    pub fn points(&self) -> &[(SimTime, f64)] {
        &self.points
    }

    /// `Some(r)` when the rate is one constant `r` from t = 0.
    pub fn as_constant(&self) -> Option<f64> {
        match self.points.as_slice() {
            [(SimTime::ZERO, r)] => Some(*r),
            _ => None,
        }
    }

    /// The rate at `t`, requests per second (right-continuous at steps).
    pub fn rate_at(&self, t: SimTime) -> f64 {
        let p = &self.points;
        if t < p[0].0 {
            return 0.0;
        }
        // The last point at or before t.
        let i = p.partition_point(|(pt, _)| *pt <= t) - 1;
        match p.get(i + 1) {
            None => p[i].1,
            Some(&(t1, r1)) => {
                let (t0, r0) = p[i];
                let f = (t.0 - t0.0) as f64 / (t1.0 - t0.0) as f64;
                r0 + (r1 - r0) * f
            }
        }
    }

    /// The linear pieces of the rate from `from` on: `(t0, t1, r0, r1)` with `t1 = None`
    /// for the last, unbounded piece. Steps give zero-width pieces, which are skipped.
    fn pieces(&self, from: SimTime) -> impl Iterator<Item = (SimTime, Option<SimTime>, f64, f64)> {
        let p = &self.points;
        let head = (from < p[0].0).then_some((from, Some(p[0].0), 0.0, 0.0));
        let middle = p.windows(2).filter_map(move |w| {
            let ((t0, r0), (t1, r1)) = (w[0], w[1]);
            (t1 > t0 && t1 > from).then(|| {
                if t0 >= from {
                    (t0, Some(t1), r0, r1)
                } else {
                    // The part of this piece after `from`.
                    let f = (from.0 - t0.0) as f64 / (t1.0 - t0.0) as f64;
                    (from, Some(t1), r0 + (r1 - r0) * f, r1)
                }
            })
        });
        let (tl, rl) = *p.last().expect("a rate curve has at least one point");
        let tail = std::iter::once((tl.max(from), None, rl, rl));
        head.into_iter().chain(middle).chain(tail)
    }

    /// The expected number of arrivals in `[from, to)`: the integral of the rate.
    pub fn cumulative(&self, from: SimTime, to: SimTime) -> f64 {
        if to <= from {
            return 0.0;
        }
        let mut total = 0.0;
        for (t0, t1, r0, r1) in self.pieces(from) {
            if t0 >= to {
                break;
            }
            let end = t1.map_or(to, |t1| t1.min(to));
            let width = secs(end.0 - t0.0);
            let slope = match t1 {
                Some(t1) => (r1 - r0) / secs(t1.0 - t0.0),
                None => 0.0,
            };
            total += r0 * width + slope * width * width / 2.0;
        }
        total
    }

    /// Where the cumulative rate from `from` reaches `target` (>= 0) and goes on to exceed
    /// it, rounded down to the nanosecond: the last instant before it exceeds `target`
    /// (inf { t >= from : cumulative(from, t) > target }); `None` if it never exceeds it (the
    /// rate stays 0) or only at or after `SimTime::MAX`.
    ///
    /// Where the rate is positive this is simply where the cumulative rate reaches
    /// `target`. Where it is 0 the cumulative rate stays flat, and "reaches" alone would
    /// put arrival `k` at the *start* of a stretch of zero rate that it reached exactly: one
    /// arrival too many for each such stretch (10/s over [0 s, 1 s) then 0 gave 11 arrivals,
    /// the last at 1 s), and arrival 0 at `start` before a profile's first point. Passing
    /// over the flat stretch puts it where the rate resumes instead.
    pub fn time_at(&self, from: SimTime, target: f64) -> Option<SimTime> {
        let target = target.max(0.0);
        let mut reached = 0.0;
        for (t0, t1, r0, r1) in self.pieces(from) {
            let width = t1.map(|t1| secs(t1.0 - t0.0));
            let slope = match (t1, width) {
                (Some(_), Some(w)) => (r1 - r0) / w,
                _ => 0.0,
            };
            let piece_total = width.map(|w| r0 * w + slope * w * w / 2.0);
            // A whole-number target (a uniform arrival) stands for a whole number of arrivals,
            // and float sums of rates miss it by an ulp or two (12.5/s over 4.4 s sums to
            // 55.00000000000001, 22.5/s over 2.8 s to 62.99999999999999): within 1e-12 of it,
            // `need` is that whole number, and so is a piece's total, so that the comparisons
            // below and the integer path after them see what the rates say. (Only float noise:
            // a real excess, 10.000000005/s over 1000 s = 10 000.000005, is kept.)
            let whole = target.fract() == 0.0;
            let snap = |x: f64| {
                if whole && (x - x.round()).abs() <= 1e-12 * x.abs().max(1.0) {
                    x.round()
                } else {
                    x
                }
            };
            let need = snap(target - reached);
            // A piece that only reaches `need` at its end (or adds nothing) is passed over:
            // the target is exceeded in a later piece, from its start.
            if piece_total.is_some_and(|total| snap(total) <= need) {
                reached += piece_total.expect("checked");
                continue;
            }
            if need <= 0.0 {
                // Exceeded from this piece's first instant (a ramp from 0 included); a piece
                // of zero rate adds nothing, and the search goes on past it.
                if r0 > 0.0 || slope > 0.0 {
                    return Some(t0);
                }
                continue;
            }
            // Solve r0 x + slope x^2 / 2 = need for x in this piece (seconds after t0), in
            // the form that stays accurate when the slope is tiny or negative.
            let disc = (r0 * r0 + 2.0 * slope * need).max(0.0);
            let denom = r0 + disc.sqrt();
            if denom <= 0.0 {
                // Zero rate over an unbounded piece: never reached.
                return None;
            }
            // A constant piece reached after a whole number of arrivals (a uniform process on
            // a step profile): exactly `need / r0` seconds in, in integers as for a constant
            // rate. (Checked in this order: `small_ratio` tries a thousand denominators.)
            let exact = (slope == 0.0 && need.fract() == 0.0 && need < 9.0e15)
                .then(|| small_ratio(r0))
                .flatten();
            let offset = match exact {
                Some((num, den)) => {
                    let ns = need as u128 * NANOS_PER_SEC as u128 * den as u128 / num as u128;
                    u64::try_from(ns).ok()?
                }
                _ => {
                    // Rounded down, except that for a whole-number target (a uniform
                    // arrival) a float quotient less than 1e-5 ns (or, past 5 s, about eight
                    // float steps of itself) below a whole nanosecond is that nanosecond:
                    // after half an arrival, 0.5/s then 1.1/s reaches arrival 17 at
                    // 16.5 / 1.1 = 15 s, which floats compute as 14.999999999999998 s (1 ns
                    // early, and inside an `end` of 16 s: 2e-6 ns off). An instant truly
                    // 8.4e-5 ns before a whole nanosecond (arrival 9 of a profile 10/s ->
                    // 0 over [0, 1 s], 0 to 2 s, then up to 10/s at 3 s: 2 + sqrt(0.8) s) is
                    // still rounded down. A Poisson target is a continuous draw, simply
                    // rounded down.
                    let quotient = 2.0 * need / denom * NANOS_PER_SEC as f64;
                    let nanos = if whole {
                        (quotient + (2e-15 * quotient).max(1e-5)).floor()
                    } else {
                        quotient.floor()
                    };
                    if nanos >= u64::MAX as f64 {
                        return None;
                    }
                    nanos as u64
                }
            };
            let t = SimTime(t0.0.checked_add(offset)?);
            // Never past the end of its own piece (float rounding).
            return Some(t1.map_or(t, |t1| t.min(t1)));
        }
        None
    }
}

fn secs(nanos: u64) -> f64 {
    nanos as f64 / NANOS_PER_SEC as f64
}

/// Arrival `k` (0-based) of a `uniform` process: where the cumulative rate from `start`
/// reaches `k`, rounded down to the nanosecond. A constant rate `r` gives exactly
/// `start + k/r`, computed in integers whenever `r` is a ratio of small integers (so 100 req/s
/// gives multiples of 10 ms exactly, with no float error even after millions of arrivals).
pub fn uniform_arrival(curve: &RateCurve, start: SimTime, k: u64) -> Option<SimTime> {
    if let Some(rate) = curve.as_constant()
        && let Some((num, den)) = small_ratio(rate)
    {
        // start + floor(k * 1e9 * den / num) ns.
        let offset = k as u128 * NANOS_PER_SEC as u128 * den as u128 / num as u128;
        return u64::try_from(offset)
            .ok()
            .and_then(|o| start.0.checked_add(o))
            .map(SimTime);
    }
    curve.time_at(start, k as f64)
}

/// `Some((num, den))` with `rate == num / den` exactly, for denominators up to 1000.
fn small_ratio(rate: f64) -> Option<(u64, u64)> {
    (1..=1000u64).find_map(|den| {
        let num = rate * den as f64;
        (num >= 1.0 && num.fract() == 0.0 && num < 9.0e15).then_some((num as u64, den))
    })
}

/// A population's retry policy under one compared strategy: the strategy with the
/// population's `retry = { ... }` overrides merged key by key.
#[derive(Debug, Clone, PartialEq)]
pub struct PopulationPolicy {
    /// The merged policy (its name is the compared strategy's).
    pub strategy: Strategy,
    /// The population sets its own `budget`: it gets its own budget instances.
    pub own_budget: bool,
    /// The population sets its own `breaker`: it gets its own breaker instances.
    pub own_breaker: bool,
    /// The population sets its own `client_rate_limiter`: it gets its own limiters.
    pub own_limiter: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: f64) -> SimTime {
        SimTime((x * 1e9).round() as u64)
    }

    #[test]
    fn uniform_constant_rate_is_start_plus_k_over_r_exactly() {
        let c = RateCurve::constant(100.0);
        let start = s(2.0);
        for k in [0u64, 1, 2, 99, 100, 3_600_000] {
            assert_eq!(
                uniform_arrival(&c, start, k),
                Some(SimTime(start.0 + k * 10_000_000)),
                "k = {k}"
            );
        }
        // 3 req/s: k/3 s rounded down to the nanosecond.
        let c = RateCurve::constant(3.0);
        assert_eq!(
            uniform_arrival(&c, SimTime::ZERO, 1),
            Some(SimTime(333_333_333))
        );
        assert_eq!(
            uniform_arrival(&c, SimTime::ZERO, 3),
            Some(SimTime(1_000_000_000))
        );
        // 2.5 req/s = 5/2: every 400 ms.
        let c = RateCurve::constant(2.5);
        assert_eq!(
            uniform_arrival(&c, SimTime::ZERO, 7),
            Some(SimTime(2_800_000_000))
        );
    }

    #[test]
    fn a_profile_is_zero_before_its_first_point_and_holds_its_last_value() {
        let c = RateCurve::profile(vec![(s(10.0), 100.0), (s(20.0), 300.0)]);
        assert_eq!(c.rate_at(s(5.0)), 0.0);
        assert_eq!(c.rate_at(s(10.0)), 100.0);
        assert_eq!(c.rate_at(s(15.0)), 200.0);
        assert_eq!(c.rate_at(s(25.0)), 300.0);
        // 0 for 10 s, then a ramp 100 -> 300 over 10 s (2000), then 300/s.
        assert!((c.cumulative(SimTime::ZERO, s(20.0)) - 2000.0).abs() < 1e-9);
        assert!((c.cumulative(SimTime::ZERO, s(22.0)) - 2600.0).abs() < 1e-9);
        assert!((c.cumulative(s(15.0), s(20.0)) - 1250.0).abs() < 1e-9);
    }

    #[test]
    fn steps_are_repeated_times() {
        let c = RateCurve::profile(vec![
            (s(0.0), 100.0),
            (s(60.0), 100.0),
            (s(60.0), 400.0),
            (s(70.0), 400.0),
            (s(70.0), 100.0),
        ]);
        assert_eq!(c.rate_at(s(59.0)), 100.0);
        assert_eq!(c.rate_at(s(60.0)), 400.0);
        assert_eq!(c.rate_at(s(70.0)), 100.0);
        assert!((c.cumulative(SimTime::ZERO, s(80.0)) - (6000.0 + 4000.0 + 1000.0)).abs() < 1e-6);
        // The 6 500th arrival of a uniform process falls 1.25 s into the spike.
        assert_eq!(c.time_at(SimTime::ZERO, 6500.0), Some(s(61.25)));
    }

    #[test]
    fn uniform_arrivals_never_fall_where_the_rate_is_zero() {
        // 10/s over [0 s, 1 s), then nothing: 10 arrivals, at 0, 0.1, ..., 0.9 s.
        let burst = RateCurve::profile(vec![(s(0.0), 10.0), (s(1.0), 10.0), (s(1.0), 0.0)]);
        let times: Vec<_> = (0..11)
            .map(|k| uniform_arrival(&burst, SimTime::ZERO, k))
            .collect();
        for (k, t) in times.iter().take(10).enumerate() {
            assert_eq!(*t, Some(SimTime(k as u64 * 100_000_000)), "k = {k}");
        }
        assert_eq!(
            times[10], None,
            "no 11th arrival at 1 s, where the rate is 0"
        );
        // A pause over [1 s, 2 s): arrival 10 is where the rate resumes.
        let paused = RateCurve::profile(vec![
            (s(0.0), 10.0),
            (s(1.0), 10.0),
            (s(1.0), 0.0),
            (s(2.0), 0.0),
            (s(2.0), 10.0),
        ]);
        assert_eq!(uniform_arrival(&paused, SimTime::ZERO, 9), Some(s(0.9)));
        assert_eq!(uniform_arrival(&paused, SimTime::ZERO, 10), Some(s(2.0)));
        assert_eq!(uniform_arrival(&paused, SimTime::ZERO, 11), Some(s(2.1)));
        // A profile that begins at 60 s, a population that starts at 0: the first arrival
        // is at 60 s, not at 0 where the rate is 0.
        let late = RateCurve::profile(vec![(s(60.0), 10.0), (s(61.0), 10.0)]);
        assert_eq!(uniform_arrival(&late, SimTime::ZERO, 0), Some(s(60.0)));
        assert_eq!(uniform_arrival(&late, SimTime::ZERO, 1), Some(s(60.1)));
        // A ramp from 0 exceeds 0 from its first instant: 5 t^2 arrivals by t s.
        let ramp = RateCurve::profile(vec![(s(0.0), 0.0), (s(10.0), 100.0)]);
        assert_eq!(
            uniform_arrival(&ramp, SimTime::ZERO, 0),
            Some(SimTime::ZERO)
        );
        assert_eq!(uniform_arrival(&ramp, SimTime::ZERO, 5), Some(s(1.0)));
    }

    /// A rate a hair above a whole number is no float noise: 10.000000005/s over 1000 s is
    /// 10 000.000005 arrivals, so arrival 10 000 falls just inside the piece, and the
    /// arrivals after a pause still come (the stream ended at 10 000 when the pass-over test
    /// had a tolerance of 1e-9 and a negative need on a piece of zero rate ended the search).
    #[test]
    fn a_real_excess_over_a_whole_number_is_kept() {
        let curve = RateCurve::profile(vec![
            (s(0.0), 10.000000005),
            (s(1000.0), 10.000000005),
            (s(1000.0), 0.0),
            (s(1100.0), 0.0),
            (s(1100.0), 10.0),
        ]);
        let last = uniform_arrival(&curve, SimTime::ZERO, 10_000).unwrap();
        assert!(last < s(1000.0) && last > s(999.9999), "{last:?}");
        // The 0.000005 arrival carried over: 0.999995 more at 10/s after the pause.
        let after = |k| uniform_arrival(&curve, SimTime::ZERO, k).unwrap().0;
        assert!((1_100_099_999_000..=1_100_100_000_000).contains(&after(10_001)));
        assert!((1_199_999_999_000..=1_200_000_000_000).contains(&after(11_000)));
    }

    /// Float sums of whole numbers of arrivals: 12.5/s over 4.4 s sums to a hair above 55
    /// (an arrival 55 at 4.4 s, where the rate is 0), 22.5/s over 2.8 s to a hair below 63
    /// (a need of 1e-14 left for the ramp from 0 that follows, which ended the stream).
    #[test]
    fn float_sums_of_whole_arrivals_neither_add_nor_end_arrivals() {
        let burst = RateCurve::profile(vec![(s(0.0), 12.5), (s(4.4), 12.5), (s(4.4), 0.0)]);
        assert_eq!(uniform_arrival(&burst, SimTime::ZERO, 54), Some(s(4.32)));
        assert_eq!(uniform_arrival(&burst, SimTime::ZERO, 55), None);
        let resumed = RateCurve::profile(vec![
            (s(0.0), 22.5),
            (s(2.8), 22.5),
            (s(2.8), 0.0),
            (s(5.0), 100.0),
        ]);
        assert!(uniform_arrival(&resumed, SimTime::ZERO, 62).unwrap() < s(2.8));
        // The ramp from 0 at 2.8 s to 100/s at 5 s: positive from its first instant, 110
        // arrivals in all, the first after 63 at 2.8 s + sqrt(2 x 2.2 / 100) s.
        assert_eq!(uniform_arrival(&resumed, SimTime::ZERO, 63), Some(s(2.8)));
        let first_of_ramp = uniform_arrival(&resumed, SimTime::ZERO, 64).unwrap();
        assert_eq!(first_of_ramp.0 / 1_000_000, 3_009, "{first_of_ramp:?}");
        assert_eq!(uniform_arrival(&resumed, SimTime::ZERO, 173), Some(s(5.0)));
        assert_eq!(uniform_arrival(&resumed, SimTime::ZERO, 183), Some(s(5.1)));
    }

    #[test]
    fn time_at_inverts_cumulative_on_ramps() {
        let c = RateCurve::profile(vec![(s(0.0), 10.0), (s(100.0), 1000.0), (s(200.0), 0.0)]);
        for target in [0.5, 10.0, 1234.5, 50_000.0, 90_000.0] {
            let t = c.time_at(SimTime::ZERO, target).expect("reached");
            let back = c.cumulative(SimTime::ZERO, t);
            assert!(
                (back - target).abs() < 1e-3 * target.max(1.0),
                "{target} -> {back}"
            );
        }
        // Total area 50 500 + 50 000 = 100 500; the rate is 0 afterwards.
        assert_eq!(c.time_at(SimTime::ZERO, 100_501.0), None);
    }

    #[test]
    fn time_at_starts_from_its_origin() {
        let c = RateCurve::constant(10.0);
        assert_eq!(c.time_at(s(5.0), 0.0), Some(s(5.0)));
        assert_eq!(c.time_at(s(5.0), 25.0), Some(s(7.5)));
    }
}
