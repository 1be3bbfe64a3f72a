//! Backoff formulas: pure functions of (retry number, previous delay, parameters, one draw).
//!
//! The random draw `u` is an argument, uniform in `[0, 1)`, never generated here. The engine
//! passes a draw from its seeded stream; tests pass fixed values and check exact results
//! against the seeds' worked examples. `herdsim schedule` calls the same functions.
//!
//! Retry numbers count from 1: retry `n = 1` is the first retry (attempt 2) and waits
//! `expo(1) = base`. All results are whole nanoseconds: the ladder `expo(n)` rounded to
//! the nearest (halves up), a jittered delay drawn around it rounded down.

use crate::time::SimDuration;

/// How a delay is randomised around the exponential ladder `expo(n)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Jitter {
    /// `expo(n)`: every client computes the same ladder (the herd stays synchronised).
    None,
    /// `U(0, expo(n))` (AWS "full jitter").
    Full,
    /// `expo(n)/2 + U(0, expo(n)/2)` (AWS "equal jitter").
    Equal,
    /// `d(n) = min(cap, U(base, 3·d(n-1)))`, `d(0) = base`; state is kept per request.
    Decorrelated,
    /// `expo(n) · (1 + U(-f, f))`, applied after the cap, so it may exceed the cap by `f`
    /// (seed 000's multiplicative ±10%). `f` in `[0, 1)`.
    Proportional(f64),
    /// `expo(n) · (1 - j·U[0, 1))` (seed 003): 0 = none, 0.5 = equal-like, 1 = full. `j` in `[0, 1]`.
    Fraction(f64),
    /// Polly's `DecorrelatedJitterBackoffV2` (what Polly v8's exponential backoff with
    /// jitter uses): `t = (n - 1) + U[0, 1)`, `g(t) = 2^t · tanh(sqrt(4t))`, and retry `n`
    /// waits `min(cap, (g(t) - g(t_prev)) · base / 1.4)`, `g(t_prev)` starting at 0. The
    /// delays telescope: their sum before the cap is `g(t) · base / 1.4`, which is the state
    /// a request keeps. The median first delay is about `base`, and medians about double per
    /// retry; `multiplier` is not used.
    DecorrelatedV2,
    /// `min(cap, expo(n) + U(0, d))`: a random amount added to the ladder, then capped
    /// (tenacity's `wait_exponential_jitter`, urllib3's `backoff_jitter`).
    Additive(SimDuration),
}

/// Polly V2's `2^t · tanh(sqrt(4t))` (`pFactor` 4).
fn polly_v2(t: f64) -> f64 {
    2f64.powf(t) * (4.0 * t).sqrt().tanh()
}

/// Polly V2's running total (ns) beyond which a delay is the cap: 2^62 ns is 146 years, so
/// any cap is reached long before, and the total stays exact in a `u64`.
const POLLY_V2_TOTAL_MAX: f64 = (1u64 << 62) as f64;

impl Jitter {
    /// Whether the delay is drawn around the ladder `expo(n)`: decorrelated jitters carry
    /// each delay into the next from `base` alone, so `increment` and `throttle_base`
    /// (another ladder) mean nothing to them.
    pub fn uses_ladder(&self) -> bool {
        !matches!(self, Jitter::Decorrelated | Jitter::DecorrelatedV2)
    }

    /// The name used in tables and charts, e.g. `full` or `proportional(0.1)`.
    pub fn describe(&self) -> String {
        match self {
            Jitter::None => "none".into(),
            Jitter::Full => "full".into(),
            Jitter::Equal => "equal".into(),
            Jitter::Decorrelated => "decorrelated".into(),
            Jitter::Proportional(f) => format!("proportional({f})"),
            Jitter::Fraction(j) => format!("fraction({j})"),
            Jitter::DecorrelatedV2 => "decorrelated-v2".into(),
            Jitter::Additive(d) => format!("additive({d})"),
        }
    }
}

/// The ladder step of retry `retry_n` (counted from where the ladder last started) when the
/// first `immediate` retries are sent at once: `None` for one of those, else `retry_n -
/// immediate` (>= 1), so the first retry after them waits the ladder's first step.
#[inline]
pub fn ladder_step(retry_n: u32, immediate: u32) -> Option<u32> {
    retry_n.checked_sub(immediate).filter(|&step| step > 0)
}

/// A backoff ladder: `expo(n) = min(cap, base · multiplier^(n-1) + increment · (n-1))`,
/// then jitter. With `multiplier = 1` it is linear: Polly's linear backoff (`base · n`) is
/// `increment = base`, tenacity's `wait_incrementing(start, increment, max)` is `base =
/// start`, `cap = max`.
///
/// Invariant (checked when the scenario is validated): `cap >= base`, `multiplier >= 1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// The first retry's un-jittered delay.
    pub base: SimDuration,
    /// The largest un-jittered delay.
    pub cap: SimDuration,
    /// Growth per retry; 1 gives a constant delay.
    pub multiplier: f64,
    /// Added per retry after the first (0 for a geometric ladder).
    pub increment: SimDuration,
    /// How the delay is randomised.
    pub jitter: Jitter,
    /// Whether a retry whose ladder has passed the cap (`base · multiplier^(n-1) +
    /// increment · (n-1) > cap`) is jittered like the others (`true`, the rule everywhere
    /// but one library) or waits exactly `cap` (`false`: aws-sdk-go-v2 before its 2026
    /// update returns its 20 s maximum with no jitter once `2^attempt` s exceeds it).
    pub jitter_past_cap: bool,
}

impl Backoff {
    /// The capped ladder `min(cap, base · multiplier^(n-1) + increment · (n-1))` for retry
    /// `n >= 1`.
    pub fn expo(&self, n: u32) -> SimDuration {
        let raw = self.uncapped(n);
        if raw >= self.cap.as_nanos() as f64 {
            self.cap
        } else {
            SimDuration::from_nanos_f64(raw)
        }
    }

    /// The ladder before the cap, in nanoseconds: `base · multiplier^(n-1) + increment ·
    /// (n-1)`.
    fn uncapped(&self, n: u32) -> f64 {
        let exponent = n.saturating_sub(1).min(i32::MAX as u32) as i32;
        self.base.as_nanos() as f64 * self.multiplier.powi(exponent)
            + self.increment.as_nanos() as f64 * f64::from(exponent)
    }

    /// Whether retry `n` waits exactly `cap`, unjittered: `jitter_past_cap = false` and the
    /// ladder has passed the cap (reaching it exactly is not passing it: Go's
    /// `attempt > log2(max)` keeps the jitter at `2^attempt = max`).
    #[inline]
    fn exact_cap(&self, n: u32) -> bool {
        !self.jitter_past_cap && self.passes_cap(n)
    }

    /// Whether the ladder has passed the cap at retry `n`, in whole nanoseconds as `expo`
    /// rounds it (1.1^2 x 100 ms is 121000000.00000001 ns in floats: that reaches a 121 ms
    /// cap, it does not pass it).
    fn passes_cap(&self, n: u32) -> bool {
        let raw = self.uncapped(n);
        raw > self.cap.as_nanos() as f64 && SimDuration::from_nanos_f64(raw) > self.cap
    }

    /// Whether [`Backoff::delay`] may depend on its draw (so the engine can skip drawing).
    /// A retry past the cap under `jitter_past_cap = false` still takes its draw, unused:
    /// the stream then stays where the other retries leave it.
    pub fn uses_draw(&self) -> bool {
        !matches!(self.jitter, Jitter::None)
    }

    /// What a request carries from one retry's delay to the next, before its first retry:
    /// decorrelated jitter's previous delay (`base`), Polly V2's running total (0). The
    /// other jitters ignore it.
    pub fn initial_state(&self) -> SimDuration {
        match self.jitter {
            Jitter::DecorrelatedV2 => SimDuration::ZERO,
            _ => self.base,
        }
    }

    /// The delay before retry `n` (n >= 1). `state` is the request's backoff state (see
    /// [`Backoff::initial_state`]; for decorrelated jitter, the previous delay). `u` is a
    /// draw in `[0, 1)`.
    pub fn delay(&self, n: u32, state: SimDuration, u: f64) -> SimDuration {
        self.next_from(n, self.expo(n), state, u).0
    }

    /// The delay before retry `n` and the request's next backoff state, given
    /// `expo = self.expo(n)` (so a caller can keep the ladder in a table instead of raising
    /// the multiplier to a power at every retry).
    #[inline]
    pub fn next_from(
        &self,
        n: u32,
        expo: SimDuration,
        state: SimDuration,
        u: f64,
    ) -> (SimDuration, SimDuration) {
        if !self.jitter_past_cap {
            // A tail call: the jittered path below keeps its lean prologue (a call made
            // here for `passes_cap` cost every retry about 18 instructions).
            return self.next_from_past_cap(n, expo, state, u);
        }
        self.jittered(n, expo, state, u)
    }

    /// [`Backoff::next_from`] under `jitter_past_cap = false`.
    #[cold]
    #[inline(never)]
    fn next_from_past_cap(
        &self,
        n: u32,
        expo: SimDuration,
        state: SimDuration,
        u: f64,
    ) -> (SimDuration, SimDuration) {
        if self.passes_cap(n) {
            (self.cap, self.cap)
        } else {
            self.jittered(n, expo, state, u)
        }
    }

    /// The jitter's delay around `expo` and the next backoff state.
    #[inline(always)]
    fn jittered(
        &self,
        n: u32,
        expo: SimDuration,
        state: SimDuration,
        u: f64,
    ) -> (SimDuration, SimDuration) {
        let scaled = |lo: f64, width: f64| SimDuration::from_nanos_f64_truncated(lo + u * width);
        let delay = match self.jitter {
            Jitter::None => expo,
            Jitter::Full => scaled(0.0, expo.as_nanos() as f64),
            Jitter::Equal => {
                let half = expo.as_nanos() as f64 / 2.0;
                scaled(half, half)
            }
            Jitter::Decorrelated => {
                let lo = self.base.as_nanos() as f64;
                let hi = 3.0 * state.as_nanos() as f64;
                scaled(lo, (hi - lo).max(0.0)).min(self.cap)
            }
            Jitter::Proportional(f) => {
                let e = expo.as_nanos() as f64;
                SimDuration((e * (1.0 + f * (2.0 * u - 1.0))).max(0.0) as u64)
            }
            Jitter::Fraction(j) => {
                let e = expo.as_nanos() as f64;
                SimDuration((e * (1.0 - j * u)).max(0.0) as u64)
            }
            Jitter::Additive(d) => {
                scaled(expo.as_nanos() as f64, d.as_nanos() as f64).min(self.cap)
            }
            Jitter::DecorrelatedV2 => return self.polly_v2_next(n, state, u),
        };
        (delay, delay)
    }

    /// Polly V2's delay before retry `n` and its next running total (out of line: the
    /// engine inlines `next_from` for the common jitters).
    #[inline(never)]
    fn polly_v2_next(&self, n: u32, state: SimDuration, u: f64) -> (SimDuration, SimDuration) {
        if self.base.is_zero() {
            return (SimDuration::ZERO, SimDuration::ZERO);
        }
        let total = polly_v2(f64::from(n - 1) + u) * self.base.as_nanos() as f64 / 1.4;
        if !total.is_finite() || total >= POLLY_V2_TOTAL_MAX {
            return (self.cap, SimDuration(POLLY_V2_TOTAL_MAX as u64));
        }
        let total = SimDuration(total as u64);
        (
            SimDuration(total.0.saturating_sub(state.0)).min(self.cap),
            total,
        )
    }

    /// `expo(1), expo(2), ...` (at most `max` values) until they stop changing (the cap is
    /// reached, or a constant ladder): every later retry has the last value's `expo`.
    pub fn ladder(&self, max: u32) -> Vec<SimDuration> {
        let mut out: Vec<SimDuration> = Vec::new();
        for n in 1..=max.max(1) {
            let e = self.expo(n);
            if out.last() == Some(&e) {
                break;
            }
            out.push(e);
            if e >= self.cap {
                break;
            }
        }
        out
    }

    /// The closed range every delay for retry `n` lies in (for property tests and
    /// `herdsim schedule`); `prev` as for [`Backoff::delay`].
    pub fn bounds(&self, n: u32, prev: SimDuration) -> (SimDuration, SimDuration) {
        let e = self.expo(n);
        if self.exact_cap(n) {
            return (self.cap, self.cap);
        }
        match self.jitter {
            Jitter::None => (e, e),
            Jitter::Full => (SimDuration::ZERO, e),
            Jitter::Equal => (SimDuration(e.0 / 2), e),
            Jitter::Decorrelated => {
                let hi = SimDuration(prev.0.saturating_mul(3)).max(self.base);
                (self.base.min(self.cap), hi.min(self.cap))
            }
            Jitter::Proportional(f) => (
                SimDuration((e.0 as f64 * (1.0 - f)) as u64),
                // Same float expression as `delay` with u -> 1 (rounding is monotone), floored.
                SimDuration((e.0 as f64 * (1.0 + f)) as u64),
            ),
            Jitter::Fraction(j) => (SimDuration((e.0 as f64 * (1.0 - j)) as u64), e),
            Jitter::Additive(d) => (
                e.min(self.cap),
                SimDuration(e.0.saturating_add(d.0)).min(self.cap),
            ),
            Jitter::DecorrelatedV2 if self.base.is_zero() => (SimDuration::ZERO, SimDuration::ZERO),
            Jitter::DecorrelatedV2 => {
                // `g` rises with t, so the delay lies between the draws u = 0 and u -> 1.
                let at = |t: f64| {
                    let total = polly_v2(t) * self.base.as_nanos() as f64 / 1.4;
                    if total < POLLY_V2_TOTAL_MAX {
                        SimDuration((total as u64).saturating_sub(prev.0)).min(self.cap)
                    } else {
                        self.cap
                    }
                };
                (at(f64::from(n - 1)), at(f64::from(n)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ladder(base_ms: u64, cap_ms: u64, jitter: Jitter) -> Backoff {
        Backoff {
            base: SimDuration::from_millis(base_ms),
            cap: SimDuration::from_millis(cap_ms),
            multiplier: 2.0,
            increment: SimDuration::ZERO,
            jitter,
            jitter_past_cap: true,
        }
    }

    #[test]
    fn the_ladder_table_gives_expo_for_every_retry() {
        for b in [
            ladder(100, 1000, Jitter::None),
            Backoff {
                multiplier: 1.0,
                ..ladder(100, 1000, Jitter::Full)
            },
            Backoff {
                multiplier: 1.5,
                ..ladder(7, 10_000, Jitter::Equal)
            },
            Backoff {
                multiplier: 1.0,
                increment: SimDuration::from_millis(100),
                ..ladder(100, 1050, Jitter::Full)
            },
        ] {
            let table = b.ladder(65_535);
            assert!(table.len() < 40, "{}", table.len());
            let last = *table.last().unwrap();
            for n in 1..200u32 {
                let e = table.get(n as usize - 1).copied().unwrap_or(last);
                assert_eq!(e, b.expo(n), "retry {n}");
            }
        }
    }

    #[test]
    fn first_retry_waits_base_then_doubles_to_the_cap() {
        let b = ladder(100, 1000, Jitter::None);
        let got: Vec<u64> = (1..=6)
            .map(|n| b.delay(n, b.base, 0.7).as_nanos() / 1_000_000)
            .collect();
        assert_eq!(got, vec![100, 200, 400, 800, 1000, 1000]);
    }

    #[test]
    fn multiplier_one_is_a_constant_delay_and_base_zero_is_immediate() {
        let constant = Backoff {
            multiplier: 1.0,
            ..ladder(250, 1000, Jitter::None)
        };
        assert!((1..10).all(|n| constant.expo(n) == SimDuration::from_millis(250)));
        let immediate = ladder(0, 1000, Jitter::Full);
        assert!((1..10).all(|n| immediate.delay(n, immediate.base, 0.9) == SimDuration::ZERO));
    }

    #[test]
    fn full_and_equal_jitter_scale_the_draw() {
        let full = ladder(100, 10_000, Jitter::Full);
        assert_eq!(full.delay(3, full.base, 0.0), SimDuration::ZERO);
        assert_eq!(full.delay(3, full.base, 0.5), SimDuration::from_millis(200));
        let equal = ladder(100, 10_000, Jitter::Equal);
        assert_eq!(
            equal.delay(3, equal.base, 0.0),
            SimDuration::from_millis(200)
        );
        assert_eq!(
            equal.delay(3, equal.base, 0.5),
            SimDuration::from_millis(300)
        );
    }

    #[test]
    fn decorrelated_reads_the_previous_delay_and_clamps_at_cap() {
        let d = ladder(100, 1000, Jitter::Decorrelated);
        // d(0) = base: U(100, 300)
        assert_eq!(d.delay(1, d.base, 0.0), SimDuration::from_millis(100));
        assert_eq!(d.delay(1, d.base, 0.5), SimDuration::from_millis(200));
        // prev 300 -> U(100, 900)
        assert_eq!(
            d.delay(2, SimDuration::from_millis(300), 0.5),
            SimDuration::from_millis(500)
        );
        // prev 900 -> U(100, 2700) clamped at 1000
        assert_eq!(
            d.delay(3, SimDuration::from_millis(900), 0.9),
            SimDuration::from_millis(1000)
        );
    }

    #[test]
    fn every_jitter_stays_within_its_bounds() {
        let kinds = [
            Jitter::None,
            Jitter::Full,
            Jitter::Equal,
            Jitter::Decorrelated,
            Jitter::Proportional(0.1),
            Jitter::Fraction(0.5),
            Jitter::DecorrelatedV2,
            Jitter::Additive(SimDuration::from_millis(250)),
        ];
        for jitter in kinds {
            let b = Backoff {
                multiplier: 1.7,
                ..ladder(37, 5000, jitter)
            };
            let mut state = b.initial_state();
            for n in 1..20 {
                for u in [0.0, 0.25, 0.5, 0.999_999] {
                    let d = b.delay(n, state, u);
                    let (lo, hi) = b.bounds(n, state);
                    assert!(
                        lo <= d && d <= hi,
                        "{jitter:?} n={n} u={u}: {d:?} not in {lo:?}..{hi:?}"
                    );
                }
                state = b.next_from(n, b.expo(n), state, 0.6).1;
            }
        }
    }

    /// tenacity's `wait_exponential_jitter(initial=0.1, max=10, jitter=1)` and urllib3's
    /// `backoff_jitter`: `min(cap, expo(n) + U(0, d))`, capped after the draw is added.
    #[test]
    fn additive_jitter_adds_up_to_d_then_caps() {
        let b = ladder(100, 10_000, Jitter::Additive(SimDuration::from_secs(1)));
        let ms = |n: u32, u: f64| b.delay(n, b.base, u).as_nanos() / 1_000_000;
        assert_eq!([ms(1, 0.0), ms(1, 0.5), ms(3, 0.25)], [100, 600, 650]);
        // 6.4 s + 0.9 s is 7.3 s; 12.8 s (the cap) + anything is the cap.
        assert_eq!(
            [ms(7, 0.9), ms(8, 0.0), ms(8, 0.9)],
            [7_300, 10_000, 10_000]
        );
    }

    /// Polly's `DecorrelatedJitterBackoffV2` with base 1 s, against the formula computed
    /// in doubles as Polly does (`(next - prev) / 1.4 x base`, prev the previous `next`):
    /// herdsim keeps the running total in nanoseconds, so each delay is within 1 ns.
    #[test]
    fn polly_v2_follows_pollys_formula() {
        let b = ladder(1000, 3_600_000, Jitter::DecorrelatedV2);
        let expected = [
            (0.5, 897_404_935.579_2),
            (0.5, 1_093_003_547.381_679),
            (0.5, 2_035_747_962.621_633),
            (0.25, 2_759_285_417.172_066),
            (0.9, 14_534_938_444.648_81),
        ];
        let mut state = b.initial_state();
        assert_eq!(state, SimDuration::ZERO);
        for (n, (u, want)) in (1..).zip(expected) {
            let (d, next) = b.next_from(n, b.expo(n), state, u);
            assert!(
                (d.as_nanos() as f64 - want).abs() <= 1.0,
                "retry {n}: {d:?} vs {want}"
            );
            state = next;
        }
        // The cap limits the delay, not the running total: the next delay still grows from
        // the uncapped sum, as Polly's `prev` does.
        let capped = ladder(1000, 10_000, Jitter::DecorrelatedV2);
        let mut state = capped.initial_state();
        let mut delays = Vec::new();
        for (n, (u, _)) in (1..).zip(expected) {
            let (d, next) = capped.next_from(n, capped.expo(n), state, u);
            delays.push(d.as_nanos() / 1_000_000);
            state = next;
        }
        assert_eq!(delays, [897, 1093, 2035, 2759, 10_000]);
        // A zero base waits 0 at every retry, however far (not NaN from 0 x infinity).
        let zero = ladder(0, 10_000, Jitter::DecorrelatedV2);
        assert_eq!(zero.delay(2_000, SimDuration::ZERO, 0.5), SimDuration::ZERO);
        assert_eq!(zero.bounds(2_000, SimDuration::ZERO).1, SimDuration::ZERO);
        // Far beyond any run (t near 1 024, where Polly's double overflows), the cap.
        let far = capped.next_from(2_000, capped.expo(2_000), state, 0.5);
        assert_eq!(far.0, capped.cap);
    }

    /// aws-sdk-go-v2 before 2026: `U[0, 1) x 2^attempt` s below its 20 s maximum, exactly
    /// 20 s once `attempt > floor(log2(20))` (base 2 s: `attempt` is 1 at the first retry).
    #[test]
    fn past_the_cap_without_jitter_waits_exactly_the_cap() {
        let go = Backoff {
            jitter_past_cap: false,
            ..ladder(2_000, 20_000, Jitter::Full)
        };
        let ms = |n| go.delay(n, go.base, 0.5).as_nanos() / 1_000_000;
        assert_eq!(
            (1..=7).map(ms).collect::<Vec<_>>(),
            [1_000, 2_000, 4_000, 8_000, 20_000, 20_000, 20_000]
        );
        assert_eq!(go.bounds(4, go.base), (SimDuration::ZERO, go.expo(4)));
        assert_eq!(go.bounds(5, go.base), (go.cap, go.cap));
        // Reaching the cap exactly is not passing it (Go: 2^4 = 16 with a 16 s maximum
        // still draws): retry 4 is jittered, retry 5 is not.
        let exact = Backoff {
            jitter_past_cap: false,
            ..ladder(2_000, 16_000, Jitter::Full)
        };
        assert_eq!(exact.delay(4, exact.base, 0.5), SimDuration::from_secs(8));
        assert_eq!(exact.delay(5, exact.base, 0.5), SimDuration::from_secs(16));
        // The default jitters every retry, past the cap too.
        let jittered = ladder(2_000, 20_000, Jitter::Full);
        assert_eq!(
            jittered.delay(6, jittered.base, 0.5),
            SimDuration::from_secs(10)
        );
        // A proportional jitter past the cap stays at the cap too (not cap x (1 + f)).
        let grpc = Backoff {
            jitter_past_cap: false,
            ..ladder(1_000, 3_000, Jitter::Proportional(0.2))
        };
        assert_eq!(grpc.delay(3, grpc.base, 0.99), SimDuration::from_secs(3));
        assert_eq!(grpc.bounds(3, grpc.base), (grpc.cap, grpc.cap));
        // A ladder that reaches the cap through float rounding (1.1^2 x 100 ms is
        // 121000000.00000001 ns) reaches it, and is jittered there; the next step passes it.
        let rounded = Backoff {
            multiplier: 1.1,
            jitter_past_cap: false,
            ..ladder(100, 121, Jitter::Full)
        };
        assert_eq!(
            rounded.delay(3, rounded.base, 0.5),
            SimDuration::from_nanos(60_500_000)
        );
        assert_eq!(
            rounded.delay(4, rounded.base, 0.5),
            SimDuration::from_millis(121)
        );
    }

    #[test]
    fn an_increment_makes_a_linear_ladder() {
        // Polly's linear backoff with a 200 ms delay and a 1 s MaxDelay: 200, 400 ... 1000.
        let polly = Backoff {
            multiplier: 1.0,
            increment: SimDuration::from_millis(200),
            ..ladder(200, 1000, Jitter::None)
        };
        let ms = |n| polly.expo(n).as_nanos() / 1_000_000;
        assert_eq!(
            (1..=7).map(ms).collect::<Vec<_>>(),
            [200, 400, 600, 800, 1000, 1000, 1000]
        );
        assert_eq!(polly.ladder(100).len(), 5);
        // tenacity's wait_incrementing(start=1s, increment=2s, max=6s): 1, 3, 5, 6 s.
        let tenacity = Backoff {
            multiplier: 1.0,
            increment: SimDuration::from_secs(2),
            ..ladder(1000, 6000, Jitter::None)
        };
        let s = |n| tenacity.expo(n).as_nanos() as f64 / 1e9;
        assert_eq!(
            (1..=5).map(s).collect::<Vec<_>>(),
            [1.0, 3.0, 5.0, 6.0, 6.0]
        );
        // Polly's jitter on a linear ladder, U(0.75 d, 1.25 d), is proportional(0.25).
        let jittered = Backoff {
            jitter: Jitter::Proportional(0.25),
            ..polly
        };
        assert_eq!(
            jittered.bounds(2, SimDuration::ZERO),
            (SimDuration::from_millis(300), SimDuration::from_millis(500))
        );
    }
}
