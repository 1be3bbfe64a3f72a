//! Client-side rate limiters during a run: the AWS SDKs' adaptive retry mode, per client or
//! fleet-wide.
//!
//! The SDKs (botocore's `retries/adaptive.py`, `throttling.py` and `bucket.py`; the
//! smithy-typescript `DefaultRateLimiter` has the same constants) put a token bucket in front
//! of every attempt, first attempts included, once a throttling response has been seen. Its
//! rate follows TCP CUBIC: a throttle cuts it to `beta` times the rate in use and remembers
//! that rate as `w_max`; each later response raises it along `scale * (t - k)^3 + w_max`,
//! `t` the time since the throttle and `k = cbrt(w_max * (1 - beta) / scale)` the time the
//! curve takes to climb back to `w_max`. The rate is never set above twice the measured
//! response rate (a moving average over half-second buckets), and the bucket fills at no
//! less than `min_fill_rate` tokens per second. An attempt that finds no whole token waits
//! until the bucket has one (the SDK sleeps in `acquire`, woken when the rate changes) and is
//! sent then. Attempts waiting on one limiter queue in the order they came: the first is
//! woken when the bucket reaches a whole token at the current rate (again whenever a result
//! changes the rate), takes it and leaves, and the next starts waiting for the one after.
//! (The SDK wakes its sleeping threads to race for each token; a queue gives the same
//! tokens out in a fixed order, without a herd of wake-ups.)
//!
//! Times are seconds as `f64`, as in the SDK, from integer nanoseconds: the arithmetic is
//! the same on every machine, so runs stay deterministic.

use std::collections::VecDeque;

use crate::model::policy::LimiterSpec;
use crate::time::{SimDuration, SimTime};

/// The SDK's measured-rate buckets: half a second.
const MEASURE_BUCKETS_PER_S: f64 = 2.0;
/// The most the new rate may be above the measured rate (`_MAX_RATE_ADJUST_SCALE`).
const MAX_RATE_ADJUST_SCALE: f64 = 2.0;
/// A bucket this close to a whole token has one: the refill's float sum may fall a hair
/// short of it.
const WHOLE_TOKEN: f64 = 1.0 - 1e-9;

/// One limiter's state (botocore's `ClientRateLimiter` with its `TokenBucket`,
/// `CubicCalculator` and `RateClocker`).
#[derive(Debug, Clone)]
struct State {
    /// Whether a throttle has been seen: until then attempts pass freely.
    enabled: bool,
    fill_rate: f64,
    max_capacity: f64,
    tokens: f64,
    /// When the bucket was last refilled (integer time: the elapsed time is exact however
    /// late in the run, where a difference of two large float seconds was not).
    refilled_at: SimTime,
    w_max: f64,
    k: f64,
    last_fail: f64,
    measured_rate: f64,
    counted: f64,
    last_bucket: f64,
    /// Attempts waiting for a token, oldest first: (request key, waiting since).
    waiting: VecDeque<(u32, SimTime)>,
    /// Numbers the wake-ups of the first waiter: only the latest is live.
    generation: u32,
}

/// What an attempt must do after asking its limiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Send it now (it took a token, or the limiter is not enabled yet).
    Go,
    /// It waits in the limiter's queue; schedule the wake-up when one is given (it is the
    /// first waiter).
    Queued(Option<Wake>),
}

/// A wake-up to schedule for the first attempt waiting on limiter `index`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wake {
    /// When the bucket reaches a whole token at the current rate.
    pub at: SimTime,
    /// The limiter within its set.
    pub index: u32,
    /// Which wake-up this is (only the latest is live).
    pub generation: u32,
}

/// What a wake-up did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Woken {
    /// A later wake-up replaced it.
    Stale,
    /// Nobody is left waiting (they all left the queue): the token stays in the bucket.
    Idle,
    /// The first waiter took its token: send request `key`, which waited since `since`;
    /// schedule the next waiter's wake-up when one is given.
    Send {
        /// The request whose attempt leaves.
        key: u32,
        /// When it began to wait.
        since: SimTime,
        /// The next waiter's wake-up, if one waits.
        next: Option<Wake>,
    },
}

/// All limiters of one policy in a run: one (global) or one per client.
#[derive(Debug, Clone)]
pub struct Limiters {
    spec: LimiterSpec,
    states: Vec<State>,
}

fn seconds(t: SimTime) -> f64 {
    t.0 as f64 / 1e9
}

impl Limiters {
    /// Fresh limiters for `clients` clients, made at t = 0: disabled, the bucket empty and
    /// filling at 1 token/s, the CUBIC curve starting from 0 (botocore's
    /// `TokenBucket(max_rate=1)` and `CubicCalculator(starting_max_rate=0)`).
    pub fn new(spec: &LimiterSpec, clients: u32) -> Self {
        let n = spec.scope.instances(clients);
        let fresh = State {
            enabled: false,
            fill_rate: 1f64.max(spec.min_fill_rate),
            max_capacity: 1.0,
            tokens: 0.0,
            refilled_at: SimTime::ZERO,
            w_max: 0.0,
            k: 0.0,
            last_fail: 0.0,
            measured_rate: 0.0,
            counted: 0.0,
            last_bucket: 0.0,
            waiting: VecDeque::new(),
            generation: 0,
        };
        Limiters {
            spec: *spec,
            states: vec![fresh; n],
        }
    }

    /// The limiter serving `client`.
    #[inline]
    pub fn index(&self, client: u32) -> u32 {
        self.spec.scope.index(client)
    }

    /// Attempt `key` is about to be sent at `now` through limiter `index`.
    pub fn acquire(&mut self, index: u32, key: u32, now: SimTime) -> Gate {
        let s = &mut self.states[index as usize];
        if !s.enabled {
            return Gate::Go;
        }
        s.refill(now);
        if s.waiting.is_empty() && s.tokens >= WHOLE_TOKEN {
            s.tokens = (s.tokens - 1.0).max(0.0);
            return Gate::Go;
        }
        s.waiting.push_back((key, now));
        let first = s.waiting.len() == 1;
        Gate::Queued(first.then(|| s.wake_first(index, now)))
    }

    /// Whether wake-up `generation` of limiter `index` was replaced by a later one.
    #[inline]
    pub fn is_stale(&self, index: u32, generation: u32) -> bool {
        self.states[index as usize].generation != generation
    }

    /// The first attempt waiting on limiter `index`, if any.
    pub fn first_waiting(&self, index: u32) -> Option<u32> {
        self.states[index as usize]
            .waiting
            .front()
            .map(|&(key, _)| key)
    }

    /// The first waiter leaves the queue without a token (its call was orphaned, or its
    /// deadline passed); returns when it began to wait.
    pub fn leave_first(&mut self, index: u32) -> SimTime {
        let s = &mut self.states[index as usize];
        s.waiting.pop_front().expect("a first waiter").1
    }

    /// The wake-up `generation` of limiter `index`'s first waiter fired at `now`.
    pub fn wake(&mut self, index: u32, generation: u32, now: SimTime) -> Woken {
        let s = &mut self.states[index as usize];
        if generation != s.generation {
            return Woken::Stale;
        }
        s.refill(now);
        let Some((key, since)) = s.waiting.pop_front() else {
            return Woken::Idle;
        };
        // A live wake-up is the instant the bucket holds a whole token (rounded up to the
        // nanosecond); what the float sum falls short of it is rounding.
        s.tokens = (s.tokens.max(1.0) - 1.0).max(0.0);
        let next = (!s.waiting.is_empty()).then(|| s.wake_first(index, now));
        Woken::Send { key, since, next }
    }

    /// An attempt's result reached a client of limiter `index` at `now` (any response or a
    /// timeout); `throttled` when it was a throttling error (429). Returns the first
    /// waiter's new wake-up when the rate changed under waiting attempts.
    pub fn on_response(&mut self, index: u32, now: SimTime, throttled: bool) -> Option<Wake> {
        let spec = self.spec;
        let s = &mut self.states[index as usize];
        let t = seconds(now);
        let measured = s.record(t);
        let new_rate = if throttled {
            let rate = if s.enabled {
                measured.min(s.fill_rate)
            } else {
                measured
            };
            s.w_max = rate;
            s.k = zero_point(rate, &spec);
            s.last_fail = t;
            s.enabled = true;
            rate * spec.beta
        } else {
            spec.scale * (t - s.last_fail - s.k).powi(3) + s.w_max
        };
        s.set_rate(
            new_rate.min(MAX_RATE_ADJUST_SCALE * measured),
            now,
            spec.min_fill_rate,
        );
        (!s.waiting.is_empty()).then(|| s.wake_first(index, now))
    }

    /// Every attempt still waiting, with when it began to (for the end of a run).
    pub fn waiting(&self) -> impl Iterator<Item = (u32, SimTime)> + '_ {
        self.states.iter().flat_map(|s| s.waiting.iter().copied())
    }
}

/// CUBIC's `k`: how long after a throttle the curve is back at `w_max`.
fn zero_point(w_max: f64, spec: &LimiterSpec) -> f64 {
    (w_max * (1.0 - spec.beta) / spec.scale).cbrt()
}

impl State {
    /// A new wake-up for the first waiter, when the bucket reaches a whole token at the
    /// current rate (rounded up to the nanosecond); earlier ones are stale.
    fn wake_first(&mut self, index: u32, now: SimTime) -> Wake {
        self.generation = self.generation.wrapping_add(1);
        let short = (1.0 - self.tokens).max(0.0);
        let wait = SimDuration((short / self.fill_rate * 1e9).ceil() as u64);
        Wake {
            at: now + wait,
            index,
            generation: self.generation,
        }
    }

    fn refill(&mut self, now: SimTime) {
        let elapsed = (now.0 - self.refilled_at.0) as f64 / 1e9;
        let filled = self.tokens + elapsed * self.fill_rate;
        self.tokens = filled.min(self.max_capacity);
        self.refilled_at = now;
    }

    /// The bucket's `max_rate` setter: the fill rate (at least `min_fill_rate`) and the
    /// capacity (at least 1 token) follow the new rate.
    fn set_rate(&mut self, rate: f64, now: SimTime, min_fill_rate: f64) {
        self.refill(now);
        self.fill_rate = rate.max(min_fill_rate);
        self.max_capacity = rate.max(1.0);
        self.tokens = self.tokens.min(self.max_capacity);
    }

    /// Counts one response and returns the measured rate: an exponentially smoothed rate of
    /// responses, updated when a response falls in a later half-second bucket.
    fn record(&mut self, t: f64) -> f64 {
        const SMOOTHING: f64 = 0.8;
        let bucket = (t * MEASURE_BUCKETS_PER_S).floor() / MEASURE_BUCKETS_PER_S;
        self.counted += 1.0;
        if bucket > self.last_bucket {
            let rate = self.counted / (bucket - self.last_bucket);
            self.measured_rate = rate * SMOOTHING + self.measured_rate * (1.0 - SMOOTHING);
            self.counted = 0.0;
            self.last_bucket = bucket;
        }
        self.measured_rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::policy::Scope;

    fn spec() -> LimiterSpec {
        LimiterSpec {
            beta: 0.7,
            scale: 0.4,
            min_fill_rate: 0.5,
            scope: Scope::Client,
        }
    }

    fn at(s: f64) -> SimTime {
        SimTime((s * 1e9) as u64)
    }

    fn wake_at(gate: Gate) -> SimTime {
        match gate {
            Gate::Queued(Some(w)) => w.at,
            other => panic!("expected a first waiter, found {other:?}"),
        }
    }

    #[test]
    fn attempts_pass_freely_until_the_first_throttle() {
        let mut l = Limiters::new(&spec(), 1);
        for i in 0..100 {
            assert_eq!(l.acquire(0, i, at(f64::from(i) * 0.01)), Gate::Go);
            assert_eq!(
                l.on_response(0, at(f64::from(i) * 0.01 + 0.005), false),
                None
            );
        }
    }

    #[test]
    fn a_throttle_cuts_the_rate_to_beta_of_the_measured_rate() {
        let mut l = Limiters::new(&spec(), 1);
        // Ten responses in [0, 0.5) s, then one at 0.5 s: 11 in the bucket that closes there,
        // a measured rate of 11 / 0.5 x 0.8 = 17.6 /s.
        for i in 0..10 {
            l.on_response(0, at(f64::from(i) * 0.05), false);
        }
        l.on_response(0, at(0.5), true);
        let s = &l.states[0];
        assert!((s.measured_rate - 17.6).abs() < 1e-9, "{}", s.measured_rate);
        assert!(s.enabled);
        assert!((s.w_max - 17.6).abs() < 1e-9);
        // The new rate: 0.7 x 17.6 = 12.32 tokens/s, capacity 12.32.
        assert!((s.fill_rate - 12.32).abs() < 1e-9, "{}", s.fill_rate);
        assert!((s.max_capacity - 12.32).abs() < 1e-9);
        // k = cbrt(17.6 x 0.3 / 0.4) = cbrt(13.2).
        assert!((s.k - 13.2f64.cbrt()).abs() < 1e-12);
        // While disabled the bucket kept filling at the rates the successes set, up to its
        // capacity of 1: what is left of a token is under 1, so the next attempt waits for
        // the rest, then takes it; one behind it waits its turn.
        let partial = l.states[0].tokens;
        assert!((0.0..1.0).contains(&partial), "{partial}");
        let first = wake_at(l.acquire(0, 1, at(0.5)));
        let rest = SimDuration(((1.0 - partial) / 12.32 * 1e9).ceil() as u64);
        assert_eq!(first, at(0.5) + rest);
        assert_eq!(l.acquire(0, 2, at(0.5)), Gate::Queued(None));
        // Woken, it takes the token; the second is woken a whole token's time later.
        let Woken::Send { key, since, next } = l.wake(0, 1, first) else {
            panic!("a live wake-up")
        };
        assert_eq!((key, since), (1, at(0.5)));
        let next = next.expect("a second waiter");
        let whole = 1e9 / 12.32;
        assert!(
            ((next.at.0 - first.0) as f64 - whole).abs() <= 1.0,
            "{next:?}"
        );
        assert!(matches!(
            l.wake(0, next.generation, next.at),
            Woken::Send {
                key: 2,
                next: None,
                ..
            }
        ));
    }

    #[test]
    fn a_rate_change_moves_the_first_waiters_wake_up() {
        let mut l = Limiters::new(&spec(), 1);
        l.on_response(0, at(0.6), true); // rate 1.12 (see below), 0.6 token
        let old = match l.acquire(0, 7, at(0.6)) {
            Gate::Queued(Some(w)) => w,
            other => panic!("{other:?}"),
        };
        // A success at 0.7 s sets the rate again: the wake-up moves, the old one is stale.
        let new = l.on_response(0, at(0.7), false).expect("a waiter");
        assert_ne!(new.generation, old.generation);
        assert_eq!(l.wake(0, old.generation, old.at), Woken::Stale);
        assert!(matches!(
            l.wake(0, new.generation, new.at),
            Woken::Send { key: 7, .. }
        ));
        assert_eq!(l.waiting().count(), 0);
    }

    #[test]
    fn the_rate_climbs_back_along_the_cubic_and_no_higher_than_twice_the_measured_rate() {
        let mut l = Limiters::new(&spec(), 1);
        for i in 0..10 {
            l.on_response(0, at(f64::from(i) * 0.05), false);
        }
        l.on_response(0, at(0.5), true); // w_max 17.6, k = cbrt(13.2) = 2.36 s
        // Just after the throttle the curve starts at beta x w_max = 12.32 (CUBIC's
        // w_max - C k^3) and climbs back to w_max at t = 0.5 + k.
        let k = 13.2f64.cbrt();
        l.on_response(0, at(0.75), false);
        let cubic = |t: f64| 0.4 * (t - 0.5 - k).powi(3) + 17.6;
        assert!((cubic(0.5) - 12.32).abs() < 1e-9);
        // The measured rate bounds it: one response per 0.25 s since 0.5 s brings the
        // smoothed rate down towards 4 /s, and the rate set to at most twice that.
        let mut t = 1.0;
        while t < 0.5 + k {
            l.on_response(0, at(t), false);
            let s = &l.states[0];
            assert!(s.fill_rate <= (2.0 * s.measured_rate).max(0.5) + 1e-9);
            assert!(s.fill_rate <= cubic(t) + 1e-9);
            t += 0.25;
        }
        let s = &l.states[0];
        assert!((s.measured_rate - 4.0).abs() < 0.1, "{}", s.measured_rate);
        assert!(s.fill_rate < cubic(t - 0.25), "{}", s.fill_rate);
    }

    #[test]
    fn a_global_limiter_is_shared_and_a_client_one_is_not() {
        let global = LimiterSpec {
            scope: Scope::Global,
            ..spec()
        };
        let mut g = Limiters::new(&global, 3);
        let mut c = Limiters::new(&spec(), 3);
        for l in [&mut g, &mut c] {
            l.on_response(0, at(0.6), true);
        }
        // The throttle at 0.6 s closes the first half-second bucket: one result in 0.5 s,
        // a measured rate of 2 x 0.8 = 1.6 /s, so the rate is 0.7 x 1.6 = 1.12 tokens/s. The
        // bucket holds 0.6 token (filled at 1 token/s since t = 0): the shared bucket's
        // first waiter leaves 0.4 / 1.12 s from now, the others queue behind it.
        assert_eq!((g.index(2), c.index(2)), (0, 2));
        let first = wake_at(g.acquire(0, 0, at(0.6)));
        assert_eq!(
            first,
            at(0.6) + SimDuration((0.4 / 1.12 * 1e9f64).ceil() as u64)
        );
        assert_eq!(g.acquire(0, 1, at(0.6)), Gate::Queued(None));
        assert_eq!(g.waiting().count(), 2);
        // Client 2's own limiter saw no throttle; client 0's did.
        assert_eq!(c.acquire(2, 2, at(0.6)), Gate::Go);
        assert!(matches!(c.acquire(0, 0, at(0.6)), Gate::Queued(Some(_))));
    }

    #[test]
    fn a_limiter_fits_the_memory_estimate() {
        assert!(std::mem::size_of::<State>() as u64 <= crate::limits::CLIENT_LIMITER_BYTES);
    }
}
