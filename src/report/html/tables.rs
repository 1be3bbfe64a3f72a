//! The tables of `report.html` below the verdict: the summary table (one row per sweep
//! point and strategy, the best value of each column highlighted among the strategies that
//! lose the fewest requests), then the per-population, per-service and paired-comparison
//! tables when the scenario has them.

use std::fmt::Write as _;

use super::{escape, heading};
use crate::metrics::summary::{Stat, StrategySummary};
use crate::report::chart::{fmt_count, fmt_value};
use crate::report::verdict::verdict;
use crate::runner::ScenarioResult;
use crate::scenario::sweep::ScenarioFile;

/// Which way a column improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Better {
    Lower,
    Higher,
}

/// One numeric column of the summary table, named as in `summary.csv`.
struct Column {
    head: &'static str,
    better: Better,
    value: fn(&StrategySummary) -> Stat,
    /// A count that is a mean over replications: written by [`fmt_count`], one rule for
    /// all of them, so that `succeeded` and `gave_up` add up.
    count: bool,
    /// Shown only when some strategy sent attempts to a fallback server.
    fallback: bool,
}

impl Column {
    /// Whether the column is a peak, measured per bucket.
    fn is_peak(&self) -> bool {
        self.head.contains("peak")
    }
}

fn plain(v: f64) -> Stat {
    Stat { mean: v, ci95: 0.0 }
}

const COLUMNS: &[Column] = &[
    Column {
        head: "calls",
        better: Better::Lower,
        value: |s| s.calls,
        count: true,
        fallback: false,
    },
    Column {
        head: "completion_s",
        better: Better::Lower,
        value: |s| s.completion_s,
        count: false,
        fallback: false,
    },
    Column {
        head: "peak_rps",
        better: Better::Lower,
        value: |s| s.peak_rps,
        count: false,
        fallback: false,
    },
    Column {
        head: "recovery_peak_rps",
        better: Better::Lower,
        value: |s| s.recovery_peak_rps,
        count: false,
        fallback: false,
    },
    Column {
        head: "succeeded",
        better: Better::Higher,
        value: |s| plain(s.succeeded),
        count: true,
        fallback: false,
    },
    Column {
        head: "gave_up",
        better: Better::Lower,
        value: |s| Stat {
            mean: s.gave_up,
            ci95: s.gave_up_ci95,
        },
        count: true,
        fallback: false,
    },
    Column {
        head: "amplification",
        better: Better::Lower,
        value: |s| plain(s.amplification.unwrap_or(f64::NAN)),
        count: false,
        fallback: false,
    },
    Column {
        head: "latency_p50_s",
        better: Better::Lower,
        value: |s| plain(s.latency_s.map_or(f64::NAN, |l| l[0])),
        count: false,
        fallback: false,
    },
    Column {
        head: "latency_p99_s",
        better: Better::Lower,
        value: |s| plain(s.latency_s.map_or(f64::NAN, |l| l[2])),
        count: false,
        fallback: false,
    },
    Column {
        head: "wasted",
        better: Better::Lower,
        value: |s| plain(s.wasted),
        count: true,
        fallback: false,
    },
    // The load a fallback server absorbed: `calls` counts the primary's only.
    Column {
        head: "fallback_calls",
        better: Better::Lower,
        value: |s| plain(s.fallback_calls),
        count: true,
        fallback: true,
    },
    Column {
        head: "fallback_succeeded",
        better: Better::Higher,
        value: |s| plain(s.fallback_succeeded),
        count: true,
        fallback: true,
    },
];

/// The summary table: one row per (sweep point, strategy), one `<tbody>` per point, columns
/// named as in `summary.csv`. Within a point, the best value of each column among the
/// verdict's leading group (the strategies that lose more requests than no other) is
/// highlighted (`td.best`), so a strategy that loses more is never shown as best; with a
/// leading group of one strategy there is nothing to compare and nothing is highlighted.
pub(super) fn summary_table(h: &mut String, file: &ScenarioFile, result: &ScenarioResult) {
    // A sweep may vary both: intervals where some point has them, the bucket as its range.
    let ci = file.points.iter().any(|p| p.scenario.replications > 1);
    let bucket = crate::report::console::bucket(file);
    let fallback = result
        .points
        .iter()
        .flat_map(|p| &p.strategies)
        .any(|s| s.summary.fallback_calls > 0.0);
    let columns: Vec<&Column> = COLUMNS.iter().filter(|c| fallback || !c.fallback).collect();
    // The caption says what is highlighted only when something is: it is known once the
    // table is written.
    let caption_at = h.len();
    let mut highlighted = false;
    // The wrapper scrolls sideways on a narrow screen instead of squeezing the numbers.
    h.push_str("<div class=\"scroll\">\n<table class=\"summary\">\n<thead><tr>");
    for a in &file.axes {
        let _ = write!(h, "<th class=\"name\">{}</th>", heading(&a.path));
    }
    h.push_str("<th class=\"name\">strategy</th><th>rank</th>");
    for c in &columns {
        if c.is_peak() {
            let _ = write!(
                h,
                "<th>{}<br><span class=\"unit\">per {bucket}</span></th>",
                heading(c.head)
            );
        } else {
            let _ = write!(h, "<th>{}</th>", heading(c.head));
        }
    }
    // As in the console's table: with a trigger to recover from (an outage, a burst).
    let recovery = file.first().trigger().is_some();
    if recovery {
        let _ = write!(h, "<th>{}</th>", heading("recovered_s"));
    }
    h.push_str("</tr></thead>\n");
    for (p, point) in result.points.iter().enumerate() {
        let v = verdict(point, &file.points[p].scenario);
        let leading = v.leading();
        let unseen = crate::metrics::recovery::unseen(&file.points[p].scenario);
        // The quickest recovery of the leading group, when its strategies differ in it (a
        // strategy that never recovered is slower than any that did).
        let times: Vec<Option<f64>> = leading
            .iter()
            .map(|&i| point.strategies[i].summary.recovered_s)
            .collect();
        let quickest = times
            .iter()
            .flatten()
            .copied()
            .reduce(f64::min)
            .filter(|_| times.iter().any(|t| *t != times[0]));
        h.push_str("<tbody>\n");
        let best: Vec<Option<f64>> = columns
            .iter()
            .map(|c| {
                if leading.len() < 2 {
                    return None; // nothing to compare against
                }
                let values = leading
                    .iter()
                    .map(|&i| (c.value)(&point.strategies[i].summary).mean);
                let lo = values.clone().fold(f64::INFINITY, f64::min);
                let hi = values.fold(f64::NEG_INFINITY, f64::max);
                if lo == hi {
                    return None; // all equal: no strategy is better here
                }
                Some(match c.better {
                    Better::Lower => lo,
                    Better::Higher => hi,
                })
            })
            .collect();
        for (i, s) in point.strategies.iter().enumerate() {
            h.push_str("<tr>");
            for label in &point.labels {
                let _ = write!(h, "<td class=\"name\">{}</td>", escape(label));
            }
            let rgb = crate::report::chart::color(i);
            let _ = write!(
                h,
                "<td class=\"name\"><span class=\"swatch\" style=\"background:#{:02x}{:02x}{:02x}\"></span>{}</td><td>{}</td>",
                rgb.0,
                rgb.1,
                rgb.2,
                escape(&s.summary.strategy),
                v.rank_of(i).map(|r| r.to_string()).unwrap_or_default()
            );
            let eligible = leading.contains(&i);
            for (c, b) in columns.iter().zip(&best) {
                let v = (c.value)(&s.summary);
                let class = if eligible && *b == Some(v.mean) {
                    highlighted = true;
                    " class=\"best\""
                } else {
                    ""
                };
                let fmt = if c.count { fmt_count } else { fmt_value };
                let _ = write!(h, "<td{class}>{}", fmt(v.mean));
                if ci && v.ci95 > 0.0 {
                    let _ = write!(
                        h,
                        " <span class=\"ci\">± {}</span>",
                        half_width(c.count, v.ci95)
                    );
                }
                h.push_str("</td>");
            }
            if recovery {
                let m = &s.summary;
                let class = if eligible && quickest.is_some() && m.recovered_s == quickest {
                    highlighted = true;
                    " class=\"best\""
                } else {
                    ""
                };
                let cell = crate::report::console::recovered_cell(m, unseen);
                let _ = write!(h, "<td{class}>{}</td>", escape(&cell));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</tbody>\n");
    }
    h.push_str("</table>\n</div>\n");
    let mut caption = String::from("<h2 id=\"summary\">Summary</h2>\n");
    let _ = writeln!(
        caption,
        "<p>Means per run{}; columns as in summary.csv, peaks per {bucket} bucket. \
         {}rank: the verdict's.</p>",
        if ci {
            ", ± 95% confidence interval"
        } else {
            ""
        },
        if highlighted {
            format!(
                "<span class=\"swatch\" style=\"background:#cde9f7\"></span>Highlighted: \
                 the best value of each column{} among the strategies that lose the fewest \
                 requests (within the 95% interval): a strategy that loses more is never \
                 highlighted. ",
                if file.axes.is_empty() {
                    ""
                } else {
                    " within each sweep point"
                }
            )
        } else {
            // One strategy loses fewer requests than every other (at every point): the
            // others are not compared with it, so no value is best among equals.
            String::new()
        }
    );
    h.insert_str(caption_at, &caption);
}

/// The per-population and per-service tables (when there is more than one), and the paired
/// comparisons against the first strategy (when there are several strategies and
/// replications).
pub(super) fn breakdowns(h: &mut String, file: &ScenarioFile, result: &ScenarioResult) {
    let s = file.first();
    let axes: Vec<String> = file.axes.iter().map(|a| a.path.clone()).collect();
    let table = |h: &mut String,
                 id: &str,
                 title: &str,
                 lead: &str,
                 head: &[&str],
                 rows: Vec<Vec<String>>| {
        let _ = writeln!(h, "<h2 id=\"{id}\">{title}</h2>\n<p>{lead}</p>");
        h.push_str("<div class=\"scroll\">\n<table class=\"summary\">\n<thead><tr>");
        for (i, c) in axes
            .iter()
            .map(String::as_str)
            .chain(head.iter().copied())
            .enumerate()
        {
            let class = if i < axes.len() + 2 {
                " class=\"name\""
            } else {
                ""
            };
            let _ = write!(h, "<th{class}>{}</th>", heading(c));
        }
        h.push_str("</tr></thead>\n<tbody>\n");
        for row in rows {
            h.push_str("<tr>");
            for (i, cell) in row.iter().enumerate() {
                let class = if i < axes.len() + 2 {
                    " class=\"name\""
                } else {
                    ""
                };
                let _ = write!(h, "<td{class}>{}</td>", escape(cell));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</tbody>\n</table>\n</div>\n");
    };
    if s.populations.len() > 1 {
        let mut rows = Vec::new();
        for point in &result.points {
            for st in &point.strategies {
                for p in &st.populations {
                    let mut row = point.labels.clone();
                    row.extend([
                        st.summary.strategy.clone(),
                        p.population.clone(),
                        fmt_count(p.requests),
                        fmt_count(p.calls),
                        fmt_value(p.amplification.unwrap_or(f64::NAN)),
                        fmt_count(p.succeeded),
                        fmt_count(p.gave_up),
                        fmt_value(p.latency_p50_s.unwrap_or(f64::NAN)),
                        fmt_value(p.latency_p99_s.unwrap_or(f64::NAN)),
                    ]);
                    rows.push(row);
                }
            }
        }
        table(
            h,
            "populations",
            "Populations",
            "Means per run of each population's requests, columns as in populations.csv; latencies pooled over runs.",
            &[
                "strategy",
                "population",
                "requests",
                "calls",
                "amplification",
                "succeeded",
                "gave_up",
                "latency_p50_s",
                "latency_p99_s",
            ],
            rows,
        );
    }
    if s.services.len() > 1 {
        let mut rows = Vec::new();
        for point in &result.points {
            for st in &point.strategies {
                for v in &st.services {
                    let mut row = point.labels.clone();
                    row.extend([
                        st.summary.strategy.clone(),
                        v.service.clone(),
                        fmt_count(v.calls),
                        fmt_value(v.amplification.unwrap_or(f64::NAN)),
                        fmt_count(v.rejected),
                        fmt_count(v.shed),
                        fmt_count(v.wasted),
                        fmt_count(v.gave_up),
                        fmt_value(v.peak_rps),
                    ]);
                    rows.push(row);
                }
            }
        }
        table(
            h,
            "services",
            "Services",
            &format!(
                "Means per run at each service, columns as in services.csv. amplification: calls at the service per client request; gave_up: the service's own requests (calls to it) that gave up; peak_rps: per {} bucket.",
                crate::report::verdict::bucket_label(s.bucket)
            ),
            &[
                "strategy",
                "service",
                "calls",
                "amplification",
                "rejected",
                "shed",
                "wasted",
                "gave_up",
                "peak_rps",
            ],
            rows,
        );
    }
    if s.strategies.len() > 1 && s.replications > 1 {
        let mut rows = Vec::new();
        for point in &result.points {
            for r in &point.paired {
                let mut row = point.labels.clone();
                row.extend([
                    r.strategy.clone(),
                    r.metric.to_string(),
                    format!("{} ± {}", fmt_value(r.mean_diff), half_width(false, r.ci95)),
                    r.ratio.map(fmt_value).unwrap_or_default(),
                    if r.significant() { "yes" } else { "no" }.to_string(),
                ]);
                rows.push(row);
            }
        }
        let baseline = s.strategies[0].name.as_str();
        table(
            h,
            "paired",
            "Paired comparisons",
            &format!(
                "Each strategy minus {}, replication by replication (every strategy of a replication faces the same workload), with the 95% interval of the paired differences; significant when the interval excludes 0.",
                escape(baseline)
            ),
            &[
                "strategy",
                "metric",
                "mean_diff ± ci95",
                "ratio",
                "significant",
            ],
            rows,
        );
    }
}

/// A 95% half-width as the table writes it: like its column's means, except that an
/// interval the column's rounding would write as zero ("± 0" for a count below 0.05,
/// "± 0.000" for anything below 0.0005, as if there were none) keeps two significant digits.
pub(super) fn half_width(count: bool, ci95: f64) -> String {
    if ci95 > 0.0 && ci95 < 0.0005 {
        let decimals = (1.0 - ci95.log10().floor()) as usize;
        return format!("{ci95:.decimals$}");
    }
    match (count, ci95 < 0.05) {
        (true, false) => fmt_count(ci95),
        _ => fmt_value(ci95),
    }
}

#[cfg(test)]
mod tests {
    use super::half_width;

    #[test]
    fn a_small_interval_of_a_count_never_reads_zero() {
        assert_eq!(half_width(true, 0.03), "0.030");
        assert_eq!(half_width(true, 0.26), "0.3");
        assert_eq!(half_width(true, 12.34), "12.3");
        assert_eq!(half_width(false, 0.03), "0.030");
        assert_eq!(half_width(true, 0.0003), "0.00030");
        assert_eq!(half_width(false, 0.000_012_3), "0.000012");
    }
}
