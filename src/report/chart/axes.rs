//! Value axes and numbers on charts: when an axis is logarithmic and its range and ticks,
//! the short tick and value texts, and the peak-keeping down-sampler that bounds the points
//! a series draws. Pure functions of numbers (no plotters types), unit-tested below.

/// Points kept per drawn series: about one per horizontal pixel of a panel, so down-sampling
/// is invisible while a million-bucket series still draws in milliseconds.
pub const MAX_DRAWN_POINTS: usize = 1200;

/// Ratio of the largest to the smallest positive value from which a value axis is
/// logarithmic, so that a recovery at 1% of a spike is still visible next to it.
pub const LOG_SPAN: f64 = 100.0;

/// Whether a value axis over `values` is logarithmic: when asked (`forced`), or when the
/// positive values span more than [`LOG_SPAN`] times, the lowest 5% of them left out (a
/// partial last bucket or the last drops of a draining queue should not decide the axis of
/// a whole chart; with fewer than 20 values, none is left out). Zeros and negative values
/// do not count (a log axis cannot show them; they are drawn at its floor), and an axis
/// without positive values is never logarithmic.
pub fn use_log(values: impl IntoIterator<Item = f64>, forced: bool) -> bool {
    let mut positive: Vec<f64> = values
        .into_iter()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    if positive.is_empty() {
        return false;
    }
    positive.sort_by(f64::total_cmp);
    let low = positive[positive.len() / 20];
    let high = positive[positive.len() - 1];
    forced || high / low > LOG_SPAN
}

/// The range of a logarithmic axis over the positive `values`: from the power of ten at or
/// below the smallest to the largest times `headroom`. `None` without positive values.
pub fn log_range(
    values: impl IntoIterator<Item = f64>,
    headroom: f64,
) -> Option<std::ops::Range<f64>> {
    let (lo, hi) = values
        .into_iter()
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        return None;
    }
    let floor = 10f64.powf(lo.log10().floor());
    let top = (hi * headroom).max(floor * 10.0);
    Some(floor..top)
}

/// Keeps at most `max_points` points of `points` (sorted by x) for drawing: splits them into
/// equal runs of consecutive points and keeps, per run, its first x and its highest y, so
/// every peak survives (shifted by less than one run, about a pixel when `max_points` is the
/// plot width). Series already short enough are returned unchanged. O(n).
pub fn downsample_max(points: &[(f64, f64)], max_points: usize) -> Vec<(f64, f64)> {
    if max_points == 0 || points.len() <= max_points {
        return points.to_vec();
    }
    let run = points.len().div_ceil(max_points);
    points
        .chunks(run)
        .map(|c| {
            let peak = c.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
            (c[0].0, peak)
        })
        .collect()
}

/// Axis tick text: `0`, `2.5`, `950`, `12k`, `1.5M`. Short, so ticks never collide.
pub fn fmt_tick(v: f64) -> String {
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    let a = v.abs();
    let s = if a >= 1e6 {
        format!("{}M", trim(format!("{:.2}", v / 1e6)))
    } else if a >= 1e4 {
        format!("{}k", trim(format!("{:.1}", v / 1e3)))
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        trim(format!("{v:.2}"))
    } else {
        trim(format!("{v:.3}"))
    };
    if s == "-0" { "0".to_string() } else { s }
}

/// A value for text on a chart or in the report: whole numbers and values above 100 without
/// decimals, others with three significant digits at most, thousands separated by a thin
/// space.
pub fn fmt_value(v: f64) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    let a = v.abs();
    let decimals = |a: f64| match a {
        a if a >= 100.0 => 0,
        a if a >= 10.0 => 1,
        a if a >= 1.0 => 2,
        _ => 3,
    };
    let mut d = if v.fract() == 0.0 && a < 1e15 {
        0
    } else {
        decimals(a)
    };
    // Rounding can carry into the next magnitude (0.9996 -> "1.000", 9.996 -> "10.00"):
    // then the digits of that magnitude, so "1.00 s" stands beside "1.03 s", not "1.000 s".
    // Halves round away from zero, as the console's tables round (Rust's formatting would
    // give 1026 for 1026.5 where the table says 1027).
    let half_up = |v: f64, d: usize| {
        let f = 10f64.powi(d as i32);
        (v * f).round() / f
    };
    let rounded = half_up(v, d);
    d = d.min(decimals(rounded.abs()));
    let v = half_up(v, d);
    let s = format!("{v:.d$}");
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i.to_string(), Some(f.to_string())),
        None => (s, None),
    };
    let (sign, digits) = match int.strip_prefix('-') {
        Some(d) => ("-", d.to_string()),
        None => ("", int),
    };
    let mut grouped = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 && digits.len() > 4 {
            grouped.push('\u{2009}');
        }
        grouped.push(ch);
    }
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

/// A count that is a mean over replications (calls, succeeded, gave up) for the report's
/// tables: rounded to one decimal as the console table rounds it, the trailing `.0`
/// dropped, thousands separated by a thin space: `195.4` beside `4.6`, which add up, where
/// [`fmt_value`]'s three significant digits gave `195` beside `4.60`.
pub fn fmt_count(v: f64) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    let tenths = (v * 10.0).round();
    let whole = fmt_value((tenths / 10.0).trunc());
    let digit = (tenths.abs() % 10.0) as u8;
    match (digit, tenths < 0.0 && tenths > -10.0) {
        (0, _) => whole,
        // -0.4: the whole part is "0" and loses its sign.
        (d, true) => format!("-0.{d}"),
        (d, false) => format!("{whole}.{d}"),
    }
}

/// Tick positions for a logarithmic axis over `range` (`start > 0`): 1, 2, 5 times each
/// power of ten inside it, thinned to 1 and 5, then to powers of ten alone, when that
/// gives more than `max` ticks. plotters' own log axis labels powers of ten only, which
/// leaves a one-decade axis with one or two labels.
pub fn log_ticks(range: &std::ops::Range<f64>, max: usize) -> Vec<f64> {
    let (lo, hi) = (range.start, range.end);
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return Vec::new();
    }
    let decades = (lo.log10().floor() as i32)..=(hi.log10().ceil() as i32);
    for mantissas in [&[1.0, 2.0, 5.0][..], &[1.0, 5.0], &[1.0]] {
        let ticks: Vec<f64> = decades
            .clone()
            .flat_map(|e| mantissas.iter().map(move |m| m * 10f64.powi(e)))
            .filter(|v| *v >= lo && *v <= hi)
            .collect();
        if ticks.len() <= max || mantissas.len() == 1 {
            return ticks;
        }
    }
    unreachable!("the last candidate always returns")
}

/// The `[0, top)` range of a value axis holding `max` with headroom; never empty.
pub(crate) fn value_range(max: f64) -> std::ops::Range<f64> {
    let top = if max.is_finite() && max > 0.0 {
        max * 1.12
    } else {
        1.0
    };
    0.0..top
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_that_are_means_keep_one_decimal_in_every_column() {
        // sweep-clients at 200 clients: 195.4 succeeded beside 4.6 gave up.
        assert_eq!(fmt_count(195.4), "195.4");
        assert_eq!(fmt_count(4.6), "4.6");
        assert_eq!(fmt_count(200.0), "200");
        assert_eq!(fmt_count(94_176.8), "94\u{2009}176.8");
        assert_eq!(fmt_count(10_000.0), "10\u{2009}000");
        assert_eq!(fmt_count(0.04), "0");
        assert_eq!(fmt_count(0.96), "1");
        assert_eq!(fmt_count(5.449), "5.4");
        assert_eq!(fmt_count(-0.4), "-0.4");
        assert_eq!(fmt_count(-12.3), "-12.3");
        assert_eq!(fmt_count(f64::NAN), "–");
    }

    #[test]
    fn downsampling_keeps_every_runs_maximum_at_its_place() {
        // A sawtooth of 10 000 points with one tall spike in the middle.
        let mut points: Vec<(f64, f64)> = (0..10_000).map(|i| (i as f64, (i % 7) as f64)).collect();
        points[5_003].1 = 1_000.0;
        let kept = downsample_max(&points, 100);
        assert_eq!(kept.len(), 100);
        assert!(
            kept.contains(&(5_000.0, 1_000.0)),
            "the spike survives in its run"
        );
        // Every run of 100 points still shows its maximum (6, or the spike), at its start.
        for (i, p) in kept.iter().enumerate() {
            let run = &points[i * 100..(i + 1) * 100];
            let max = run.iter().map(|p| p.1).fold(f64::MIN, f64::max);
            assert_eq!(*p, (run[0].0, max), "run {i}");
        }
        assert_eq!(
            kept.iter().map(|p| p.1).fold(f64::MIN, f64::max),
            1_000.0,
            "the global maximum is kept"
        );
    }

    #[test]
    fn downsampling_leaves_short_series_alone() {
        let points = vec![(0.0, 1.0), (1.0, 3.0), (2.0, 2.0)];
        assert_eq!(downsample_max(&points, 3), points);
        assert_eq!(downsample_max(&points, 0), points);
        assert_eq!(downsample_max(&points, 2), vec![(0.0, 3.0), (2.0, 2.0)]);
    }

    #[test]
    fn ticks_and_values_are_short_and_exact() {
        assert_eq!(fmt_tick(0.0), "0");
        assert_eq!(fmt_tick(2.5), "2.5");
        assert_eq!(fmt_tick(950.0), "950");
        assert_eq!(fmt_tick(12_000.0), "12k");
        assert_eq!(fmt_tick(100_000.0), "100k");
        assert_eq!(fmt_tick(1_500_000.0), "1.5M");
        assert_eq!(fmt_tick(0.005), "0.005");
        assert_eq!(fmt_value(94_197.0), "94\u{2009}197");
        assert_eq!(fmt_value(1234.0), "1234");
        assert_eq!(fmt_value(33.0821), "33.1");
        assert_eq!(fmt_value(0.0125), "0.013");
        assert_eq!(fmt_value(-12_345.0), "-12\u{2009}345");
        assert_eq!(fmt_value(0.0), "0");
        // Rounded into the next magnitude: that magnitude's digits ("1.000" beside "1.03").
        assert_eq!(fmt_value(0.99996), "1.00");
        assert_eq!(fmt_value(0.9994), "0.999");
        assert_eq!(fmt_value(9.996), "10.0");
        assert_eq!(fmt_value(99.96), "100");
        assert_eq!(fmt_value(-0.99996), "-1.00");
        // Halves away from zero, as the console's tables (not to even).
        assert_eq!(fmt_value(1026.5), "1027");
        assert_eq!(fmt_value(2.5), "2.50");
        assert_eq!(fmt_value(-1026.5), "-1027");
        assert_eq!(
            fmt_value(50.0),
            "50",
            "whole numbers print without decimals"
        );
    }

    #[test]
    fn log_ticks_step_one_two_five_and_thin_out_on_wide_ranges() {
        let shown = |r: std::ops::Range<f64>, max| -> Vec<String> {
            log_ticks(&r, max).into_iter().map(fmt_tick).collect()
        };
        assert_eq!(
            shown(0.015..15.0, 12),
            ["0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10"]
        );
        assert_eq!(
            shown(0.015..15.0, 6),
            ["0.05", "0.1", "0.5", "1", "5", "10"]
        );
        assert_eq!(
            shown(0.001..1000.0, 6),
            ["0.001", "0.01", "0.1", "1", "10", "100", "1000"]
        );
        assert!(log_ticks(&(0.0..1.0), 10).is_empty());
    }

    #[test]
    fn a_value_axis_turns_logarithmic_above_a_hundredfold_span_or_when_asked() {
        // The quickstart's no-jitter spike (100k req/s) beside a 3k req/s recovery: 33x.
        assert!(!use_log([100_000.0, 3_000.0, 0.0], false));
        // The budgets' calls: 80 671 beside the breaker's 208: 388x.
        assert!(use_log([80_671.0, 208.0, 10_000.0], false));
        // Exactly 100x is not more than 100x.
        assert!(!use_log([1.0, 100.0], false));
        // Zeros, negatives and non-finite values do not count.
        assert!(!use_log([0.0, -5.0, f64::NAN, 50.0, 60.0], false));
        // The lowest 5% do not either: a steady 300 req/s against a capacity of 2 000, with
        // a partial last bucket at 1 req/s, stays linear...
        let steady: Vec<f64> = (0..90).map(|_| 300.0).chain([1.0, 2_000.0]).collect();
        assert!(!use_log(steady.iter().copied(), false));
        // ... while a spike over a long low recovery turns logarithmic.
        let storm: Vec<f64> = (0..90)
            .map(|i| if i < 5 { 100_000.0 } else { 300.0 })
            .collect();
        assert!(use_log(storm.iter().copied(), false));
        // --log-y forces it, but only where there is something to put on it.
        assert!(use_log([2.0, 3.0], true));
        assert!(!use_log([0.0, 0.0], true));
        assert!(!use_log(std::iter::empty(), true));
        assert_eq!(log_range([0.0, 30.0, 8_000.0], 1.0), Some(10.0..8_000.0));
        assert_eq!(log_range([0.0], 1.0), None);
    }
}
