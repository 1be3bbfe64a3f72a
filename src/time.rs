//! Simulated time: integer nanoseconds, never floats.
//!
//! [`SimTime`] is an instant since the start of a run (t = 0) and [`SimDuration`] a span
//! between two instants. Both wrap a `u64` count of nanoseconds, so event ordering is exact
//! and identical on every machine (a float clock could reorder events between builds). Seconds
//! as `f64` appear only at the edges: parsing distribution parameters and writing output
//! columns (`*_s`).

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Nanoseconds in one second.
pub const NANOS_PER_SEC: u64 = 1_000_000_000;

/// An instant of simulated time, in nanoseconds since t = 0.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct SimTime(pub u64);

/// A span of simulated time, in nanoseconds.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct SimDuration(pub u64);

impl SimTime {
    /// t = 0, the start of every run.
    pub const ZERO: SimTime = SimTime(0);
    /// The largest representable instant; used as "never".
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// Nanoseconds since t = 0.
    pub fn as_nanos(self) -> u64 {
        self.0
    }

    /// Seconds since t = 0, for output columns.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }

    /// The span from `earlier` to `self`, zero if `earlier` is later.
    pub fn saturating_since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    /// No time at all.
    pub const ZERO: SimDuration = SimDuration(0);

    /// A duration of `n` nanoseconds.
    pub const fn from_nanos(n: u64) -> Self {
        SimDuration(n)
    }

    /// A duration of `n` milliseconds.
    pub const fn from_millis(n: u64) -> Self {
        SimDuration(n * 1_000_000)
    }

    /// A duration of `n` whole seconds.
    pub const fn from_secs(n: u64) -> Self {
        SimDuration(n * NANOS_PER_SEC)
    }

    /// The duration nearest to `secs` seconds; negative and NaN give zero, huge values saturate.
    pub fn from_secs_f64(secs: f64) -> Self {
        SimDuration::from_nanos_f64(secs * NANOS_PER_SEC as f64)
    }

    /// Rounds a float count of nanoseconds to the nearest whole nanosecond: negative and NaN
    /// give zero, huge values saturate (Rust's float-to-int `as` saturates). Written as
    /// `(x + 0.5) as u64` because `f64::round` is a libm call on baseline x86-64, and this
    /// sits on the hot path of every latency and service draw.
    ///
    /// The conversion goes through `i64`: its saturating cast is cheaper on x86-64 than
    /// `u64`'s (no second conversion for values of 2^63 and up), and one comparison sends
    /// the rare rest (negative: the cast gives below zero; 2^63 and up: `i64::MAX`, which no
    /// smaller f64 truncates to) to the `u64` cast out of line, so every input, NaN included
    /// (the `i64` cast gives 0), gives what `as u64` gives. Measured: quickstart
    /// 551.5 M -> 547.0 M instructions (0.81%; Brooker 979.3 M -> 971.3 M).
    ///
    /// The `i64` conversion is the processor's own (`cvttsd2si`): Rust's saturating `as i64`
    /// added a NaN test and a clamp to every draw, and every input it would clamp (NaN,
    /// 2^63 and up, and negative values) already goes to the out-of-line path, where the
    /// processor's answer (`i64::MIN`, or a negative number) sends it.
    #[inline]
    pub fn from_nanos_f64(nanos: f64) -> Self {
        let x = nanos + 0.5;
        match truncate_in_range(x) {
            Some(n) => SimDuration(n),
            None => SimDuration(saturate_nanos(x)),
        }
    }

    /// `SimDuration(nanos.max(0.0) as u64)`: a float count of nanoseconds truncated,
    /// negative and NaN giving zero and huge values saturating, with the conversion of
    /// [`SimDuration::from_nanos_f64`].
    #[inline]
    pub fn from_nanos_f64_truncated(nanos: f64) -> Self {
        match truncate_in_range(nanos) {
            Some(n) => SimDuration(n),
            None => SimDuration(saturate_nanos(nanos)),
        }
    }

    /// A duration for a legend or a note: as written when it is one whole unit (`20ms`, `1s`), else
    /// three significant digits of its largest unit (`2.27ms`, not `2ms 266us 297ns`: a
    /// distribution's mean is rarely round).
    pub fn short(self) -> String {
        let exact = self.to_string();
        if !exact.contains(' ') {
            return exact;
        }
        // Rounded to three significant digits before the unit is chosen, so that 999.6us
        // shows as 1ms, not 1000us.
        let ns = self.as_nanos() as f64;
        let magnitude = 10f64.powi(ns.log10().floor() as i32 - 2);
        let ns = (ns / magnitude).round() * magnitude;
        let units = [
            (3.6e12, "h"),
            (6e10, "m"),
            (1e9, "s"),
            (1e6, "ms"),
            (1e3, "us"),
        ];
        let (scale, unit) = units
            .into_iter()
            .find(|(scale, _)| ns >= *scale)
            .unwrap_or((1.0, "ns"));
        let v = ns / scale;
        let places = (2 - v.log10().floor() as i32).max(0) as usize;
        let text = format!("{v:.places$}");
        let text = if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            text
        };
        format!("{text}{unit}")
    }

    /// Nanoseconds.
    pub fn as_nanos(self) -> u64 {
        self.0
    }

    /// Seconds, for output columns and for formulas written in seconds.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }

    /// Whether this is the zero duration.
    pub fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// Rounded up to a whole number of seconds, as an HTTP `Retry-After` header carries it.
    pub fn ceil_to_secs(self) -> SimDuration {
        SimDuration(self.0.div_ceil(NANOS_PER_SEC).saturating_mul(NANOS_PER_SEC))
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    /// Saturates at [`SimTime::MAX`], which the engine treats as "never".
    fn add(self, rhs: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign<SimDuration> for SimDuration {
    fn add_assign(&mut self, rhs: SimDuration) {
        self.0 = self.0.saturating_add(rhs.0);
    }
}

impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, rhs: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(rhs.0))
    }
}

impl Sub for SimTime {
    type Output = SimDuration;
    /// Saturates at zero.
    fn sub(self, rhs: SimTime) -> SimDuration {
        self.saturating_since(rhs)
    }
}

impl fmt::Display for SimDuration {
    /// Human form, e.g. `1s 500ms`, as `humantime` writes it (`0s` for zero).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}",
            humantime::format_duration(std::time::Duration::from_nanos(self.0))
        )
    }
}

/// Parses a duration string with a unit (`"250us"`, `"100ms"`, `"2s"`, `"5m"`, `"1h"`).
///
/// A bare number has no unit and is refused, so `"5"` never silently means 5 ns or 5 s.
pub fn parse_duration(text: &str) -> Result<SimDuration, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err("an empty string is not a duration".to_string());
    }
    if let Some(n) = unitless_number(trimmed) {
        return Err(format!(
            "\"{trimmed}\" has no unit (write e.g. \"{n}ms\" or \"{n}s\")"
        ));
    }
    match humantime::parse_duration(trimmed) {
        Ok(d) => {
            let nanos = d.as_nanos();
            if nanos > u64::MAX as u128 {
                Err(format!("\"{trimmed}\" is too long (at most ~584 years)"))
            } else {
                Ok(SimDuration(nanos as u64))
            }
        }
        Err(e) => Err(format!("\"{trimmed}\" is not a duration ({})", why_not(&e))),
    }
}

/// `text` as a number written the way a duration takes it (`1e3` is `1000`: durations have
/// no exponent form), when it is a finite number at all.
pub fn unitless_number(text: &str) -> Option<String> {
    let x = text.parse::<f64>().ok().filter(|x| x.is_finite())?;
    Some(if text.contains(['e', 'E']) {
        x.to_string()
    } else {
        text.to_string()
    })
}

/// Why `humantime` refused a duration, in the user's words (its own messages name byte
/// offsets: "expected number at 0").
fn why_not(e: &humantime::DurationError) -> String {
    use humantime::DurationError as E;
    const FORM: &str = "a duration is a number and a unit, such as \"100ms\" or \"1m30s\"";
    match e {
        E::NumberExpected(at) => format!("{FORM}; expected a number at character {}", at + 1),
        E::InvalidCharacter(at) => format!("{FORM}; unexpected character at {}", at + 1),
        E::UnknownUnit { unit, .. } => format!(
            "unknown time unit \"{unit}\"; the units are ns, us, ms, s, m, h, d, w, M, y and their long forms (sec, min, hours, days...)"
        ),
        // humantime counts in whole nanoseconds: a fraction finer than that overflows too.
        E::NumberOverflow => {
            "the number is too large, or has digits finer than 1ns, the smallest unit of time"
                .to_string()
        }
        E::Empty => "it is empty".to_string(),
    }
}

/// `x` truncated toward zero when that lands in `[0, 2^63 - 1)` (so `-0.5` gives
/// `Some(0)`), else `None` (NaN, -1 and below, 2^63 and up), without Rust's saturating
/// float-to-int fix-ups on x86-64: `cvttsd2si` gives `i64::MIN` for NaN and out
/// of range, and a negative number for the negative rest, all of which fail the one test.
#[inline(always)]
fn truncate_in_range(x: f64) -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of the x86-64 baseline; the conversion has no precondition.
    #[allow(unused_unsafe)]
    let i = unsafe {
        use std::arch::x86_64::{_mm_cvttsd_si64, _mm_set_sd};
        _mm_cvttsd_si64(_mm_set_sd(x))
    };
    #[cfg(not(target_arch = "x86_64"))]
    let i = x as i64;
    ((i as u64) < i64::MAX as u64).then_some(i as u64)
}

/// `from_nanos_f64`'s rare inputs (negative, 2^63 ns and up): Rust's saturating `as u64`.
#[cold]
#[inline(never)]
fn saturate_nanos(x: f64) -> u64 {
    x as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_documented_unit() {
        assert_eq!(parse_duration("250us"), Ok(SimDuration(250_000)));
        assert_eq!(parse_duration("100ms"), Ok(SimDuration::from_millis(100)));
        assert_eq!(parse_duration("2s"), Ok(SimDuration::from_secs(2)));
        assert_eq!(parse_duration("5m"), Ok(SimDuration::from_secs(300)));
        assert_eq!(parse_duration("1h"), Ok(SimDuration::from_secs(3600)));
        assert_eq!(parse_duration("0s"), Ok(SimDuration::ZERO));
    }

    #[test]
    fn refuses_bare_numbers_and_garbage() {
        assert!(parse_duration("5").unwrap_err().contains("no unit"));
        assert!(parse_duration("1.5").unwrap_err().contains("no unit"));
        assert!(parse_duration("-5ms").is_err());
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn ceil_to_secs_rounds_up_partial_seconds_only() {
        assert_eq!(
            SimDuration::from_millis(1).ceil_to_secs(),
            SimDuration::from_secs(1)
        );
        assert_eq!(
            SimDuration::from_secs(2).ceil_to_secs(),
            SimDuration::from_secs(2)
        );
        assert_eq!(
            SimDuration::from_millis(2001).ceil_to_secs(),
            SimDuration::from_secs(3)
        );
        assert_eq!(SimDuration::ZERO.ceil_to_secs(), SimDuration::ZERO);
    }

    #[test]
    fn time_arithmetic_saturates() {
        assert_eq!(SimTime::MAX + SimDuration(5), SimTime::MAX);
        assert_eq!(SimTime(3) - SimTime(5), SimDuration::ZERO);
    }

    /// The `i64` route of `from_nanos_f64` gives `(x + 0.5) as u64` for every kind of input.
    #[test]
    fn rounding_matches_saturating_u64_cast() {
        let two63 = 9_223_372_036_854_775_808.0_f64;
        let mut xs = vec![
            0.0,
            -0.0,
            0.49,
            0.5,
            -0.5,
            -0.51,
            -1.0,
            -1e300,
            1.5,
            2.5,
            1e18,
            two63,
            two63 - 1024.0,
            two63 - 2048.0,
            two63 + 2048.0,
            2.0 * two63,
            4.0 * two63,
            1e300,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            f64::EPSILON,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
        ];
        let mut bits = 0x9E37_79B9_7F4A_7C15_u64;
        for _ in 0..100_000 {
            bits ^= bits << 13;
            bits ^= bits >> 7;
            bits ^= bits << 17;
            xs.push(f64::from_bits(bits));
            xs.push((bits >> 11) as f64 / 7.0);
        }
        for x in xs {
            assert_eq!(SimDuration::from_nanos_f64(x).0, (x + 0.5) as u64, "{x:e}");
        }
    }
}
