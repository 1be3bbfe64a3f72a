//! `paired.csv`: every strategy against the first one, replication by replication.
//!
//! Under common random numbers, replication *r* of every strategy faces the same arrivals,
//! start offsets and 400s, so the difference of two strategies within a replication has far
//! less noise than the difference of their means. For each metric, `mean_diff` is the mean
//! over replications of (strategy − baseline), `ci95` is `1.96 · sd / √R` of those paired
//! differences (0 when R = 1), and `ratio` is strategy mean / baseline mean (`None` when the
//! baseline mean is 0).

use super::summary::{Replicate, Stat, StrategyResult};

/// How to read a metric from one replication.
pub type Read = fn(&Replicate) -> f64;

/// The metrics compared, with how to read each from a replication.
pub const METRICS: [(&str, Read); 5] = [
    ("calls", |r| r.calls),
    ("completion_s", |r| r.completion_s),
    ("recovery_peak_rps", |r| r.recovery_peak_rps),
    ("succeeded", |r| r.succeeded),
    ("latency_p99_s", |r| r.latency_p99_s.unwrap_or(f64::NAN)),
];

/// One row of `paired.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedRow {
    /// The strategy compared.
    pub strategy: String,
    /// The first strategy of the scenario.
    pub baseline: String,
    /// The metric's column name.
    pub metric: &'static str,
    /// Mean over replications of strategy − baseline.
    pub mean_diff: f64,
    /// 95% half-width of the paired differences.
    pub ci95: f64,
    /// Strategy mean / baseline mean; `None` when the baseline mean is 0.
    pub ratio: Option<f64>,
    /// The baseline's mean of the metric (the `paired` chart's 100%).
    pub baseline_mean: f64,
}

impl PairedRow {
    /// Whether the difference is significant: its 95% interval excludes 0.
    pub fn significant(&self) -> bool {
        self.mean_diff.abs() > self.ci95
    }
}

/// The rows comparing every strategy after the first with the first, metric by metric
/// (`strategies` in scenario order; each must still hold its replicates).
pub fn paired<'a>(strategies: impl IntoIterator<Item = &'a StrategyResult>) -> Vec<PairedRow> {
    let mut strategies = strategies.into_iter();
    let Some(baseline) = strategies.next() else {
        return Vec::new();
    };
    let mut rows = Vec::new();
    for s in strategies {
        for (metric, value) in METRICS {
            let diffs: Vec<f64> = s
                .replicates
                .iter()
                .zip(&baseline.replicates)
                .map(|(a, b)| value(a) - value(b))
                .collect();
            let d = Stat::of(&diffs);
            let mean = |r: &StrategyResult| {
                Stat::of(&r.replicates.iter().map(value).collect::<Vec<_>>()).mean
            };
            let base = mean(baseline);
            rows.push(PairedRow {
                strategy: s.summary.strategy.clone(),
                baseline: baseline.summary.strategy.clone(),
                metric,
                mean_diff: d.mean,
                ci95: d.ci95,
                ratio: (base != 0.0).then(|| mean(s) / base),
                baseline_mean: base,
            });
        }
    }
    rows
}

/// A sweep point's comparisons of its strategies, made while they still hold their
/// replicates.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comparisons {
    /// Every strategy after the first against the first: [`paired`].
    pub rows: Vec<PairedRow>,
    /// Which strategy loses more requests than which: [`loses_more`].
    pub loses_more: Vec<Vec<bool>>,
}

/// Both comparisons of `strategies` (in scenario order, holding their replicates).
pub fn compare(strategies: &[&StrategyResult]) -> Comparisons {
    Comparisons {
        rows: paired(strategies.iter().copied()),
        loses_more: loses_more(strategies.iter().copied()),
    }
}

/// Which strategy loses more client requests than which, beyond the noise, judged as the
/// paired rows judge: `more[a][b]` when the give-ups of `a` less those of `b`, replication
/// by replication, have a mean above their 95% half-width (with one replication, any
/// difference counts). Under common random numbers this sees differences that the two
/// strategies' own intervals hide, and it agrees with the paired rows' `succeeded` (every
/// client request either succeeds or gives up). Strategies in scenario order; each must
/// still hold its replicates.
pub fn loses_more<'a>(strategies: impl IntoIterator<Item = &'a StrategyResult>) -> Vec<Vec<bool>> {
    let strategies: Vec<&StrategyResult> = strategies.into_iter().collect();
    strategies
        .iter()
        .map(|a| {
            strategies
                .iter()
                .map(|b| {
                    let diffs: Vec<f64> = a
                        .replicates
                        .iter()
                        .zip(&b.replicates)
                        .map(|(a, b)| a.gave_up - b.gave_up)
                        .collect();
                    let d = Stat::of(&diffs);
                    // Give-ups are whole numbers: a mean difference is exact to far better
                    // than this, and a zero-width interval at 0 is no difference.
                    d.mean - d.ci95 > 1e-9 * a.summary.gave_up.abs().max(1.0)
                })
                .collect()
        })
        .collect()
}
