//! The charts drawn as rows (see [`super::rows`]): `summary` (the verdict as bars: work,
//! completion, the peaks and the requests lost, strategies in rank order), `populations`
//! and `services` (the same strategies, grouped by population or service) and `paired`
//! (a forest plot of the paired differences from the first strategy).

use crate::text::counted;
use plotters::style::RGBColor;

use super::rows::{Group, Item, Panel, Row, RowsData, Scale};
use super::{INK, Swatch, color, fmt_value, look, use_log};
use crate::metrics::paired::METRICS;
use crate::metrics::summary::Stat;
use crate::model::Scenario;
use crate::report::verdict::{self, percent, times};
use crate::runner::PointResult;

/// Fill of the requests given up, in every chart.
pub const GAVE_UP: RGBColor = RGBColor(190, 190, 190);
/// Opacity of a strategy's bars.
const BAR: f64 = 0.85;
/// Opacity of the whole-run peak, drawn beside the recovery peak.
const OVERALL: f64 = 0.3;

/// `(mean of 5 runs, whiskers: 95% CI)` or `(1 run)`.
/// One row per strategy of `point` from the `from`-th on, labelled with its name and drawn
/// in its colour and mark.
fn strategy_rows(point: &PointResult, from: usize) -> Vec<Row> {
    point
        .strategies
        .iter()
        .enumerate()
        .skip(from)
        .map(|(i, s)| Row {
            label: s.summary.strategy.clone(),
            look: Some(i),
        })
        .collect()
}

fn runs_note(replications: u32) -> String {
    if replications > 1 {
        format!(" (mean of {replications} runs, whiskers: 95% CI)")
    } else {
        " (1 run)".to_string()
    }
}

/// `(mean of 5 runs)` or `(1 run)`, for charts without whiskers.
fn runs(replications: u32) -> String {
    if replications > 1 {
        format!(" (mean of {replications} runs)")
    } else {
        " (1 run)".to_string()
    }
}

/// The scale of a panel over `values`.
fn scale(values: impl IntoIterator<Item = f64>, log_y: bool) -> Scale {
    if use_log(values, log_y) {
        Scale::Log
    } else {
        Scale::Linear
    }
}

/// The stacked bar of succeeded and gave up, as shares of `requests`.
fn outcome(index: usize, succeeded: f64, gave_up: f64, requests: f64) -> Item {
    let share = |v: f64| {
        if requests > 0.0 {
            100.0 * v / requests
        } else {
            0.0
        }
    };
    Item::Stack {
        parts: vec![
            (share(succeeded), color(index), BAR),
            (share(gave_up), GAVE_UP, 1.0),
        ],
        label: if gave_up > 0.0 && requests > 0.0 {
            format!("{} gave up", percent(gave_up / requests))
        } else {
            "none gave up".into()
        },
    }
}

/// The `summary` chart of one point: one row per strategy in the verdict's rank order; panels
/// for calls (with one call per request, not a minimum: breakers and budgets end requests
/// without one), completion, the recovery peak beside
/// the whole run's peak (per bucket, with the capacity), and succeeded vs gave up.
pub fn series(scenario: &Scenario, point: &PointResult, at: &str, log_y: bool) -> RowsData {
    let v = verdict::verdict(point, scenario);
    let order: Vec<usize> = v.lines.iter().map(|l| l.index).collect();
    let s = |i: usize| &point.strategies[i].summary;
    let bar = |i: usize, stat: Stat, alpha: f64, label: String| Item::Bar {
        value: stat.mean,
        ci: stat.ci95,
        color: color(i),
        alpha,
        label,
    };
    let requests = point.strategies.first().map_or(0.0, |x| x.summary.requests);
    let calls: Vec<Vec<Item>> = order
        .iter()
        .map(|&i| {
            let st = s(i);
            let label = if st.requests > 0.0 {
                format!(
                    "{} = {}",
                    fmt_value(st.calls.mean),
                    times(st.calls.mean / st.requests)
                )
            } else {
                fmt_value(st.calls.mean)
            };
            vec![bar(i, st.calls, BAR, label)]
        })
        .collect();
    let completion: Vec<Vec<Item>> = order
        .iter()
        .map(|&i| {
            let st = s(i);
            vec![bar(
                i,
                st.completion_s,
                BAR,
                format!("{} s", fmt_value(st.completion_s.mean)),
            )]
        })
        .collect();
    let versus_capacity = |peak: f64| match v.capacity_rps {
        Some(_) if peak == 0.0 => "0".into(),
        Some(c) => format!("{} = {}", fmt_value(peak), times(peak / c)),
        None => fmt_value(peak),
    };
    let peaks: Vec<Vec<Item>> = order
        .iter()
        .map(|&i| {
            let st = s(i);
            if v.outage {
                vec![
                    bar(i, st.peak_rps, OVERALL, fmt_value(st.peak_rps.mean)),
                    bar(
                        i,
                        st.recovery_peak_rps,
                        BAR,
                        versus_capacity(st.recovery_peak_rps.mean),
                    ),
                ]
            } else {
                // Nothing to recover from: the "recovery peak" would be this same bar
                // again, under a name that claims an outage.
                vec![bar(i, st.peak_rps, BAR, versus_capacity(st.peak_rps.mean))]
            }
        })
        .collect();
    let outcomes: Vec<Vec<Item>> = order
        .iter()
        .map(|&i| {
            let st = s(i);
            vec![outcome(i, st.succeeded, st.gave_up, st.requests)]
        })
        .collect();
    let calls_values = order.iter().map(|&i| s(i).calls.mean).chain([requests]);
    let completion_values = order.iter().map(|&i| s(i).completion_s.mean);
    let peak_values = order
        .iter()
        .flat_map(|&i| [s(i).peak_rps.mean, s(i).recovery_peak_rps.mean])
        .chain(v.capacity_rps);
    let rows = order
        .iter()
        .zip(&v.lines)
        .map(|(&i, l)| Row {
            label: format!(
                "{}. {}{}",
                l.rank,
                s(i).strategy,
                if l.loses_more { " (loses more)" } else { "" }
            ),
            look: Some(i),
        })
        .collect();
    let grey = INK;
    RowsData {
        title: format!(
            "{}{at}: strategies ranked, fewest requests lost first{}",
            scenario.name,
            runs_note(scenario.replications)
        ),
        legend: if v.outage {
            vec![
                (
                    Swatch::Fill(grey, OVERALL),
                    format!("pale: peak_rps, busiest {} of the whole run", v.bucket),
                ),
                (
                    Swatch::Fill(grey, BAR),
                    format!(
                        "solid: recovery_peak_rps, busiest {} after the last outage",
                        v.bucket
                    ),
                ),
            ]
        } else {
            vec![(
                Swatch::Fill(grey, BAR),
                format!(
                    "peak_rps: busiest {} of the run ({}: no recovery peak)",
                    v.bucket,
                    if v.outage_outlasts_run {
                        "the outage outlasts the run"
                    } else {
                        "no outage"
                    }
                ),
            )]
        }
        .into_iter()
        .chain([
            (
                Swatch::Fill(grey, BAR),
                "succeeded: solid, in the strategy's colour".into(),
            ),
            (Swatch::Fill(GAVE_UP, 1.0), "gave up: grey".into()),
        ])
        .collect(),
        groups: vec![Group { label: None, rows }],
        panels: vec![
            Panel {
                caption: "work: calls".into(),
                axis: "calls per run (label: x per request)".into(),
                unit: String::new(),
                scale: scale(calls_values, log_y),
                reference: Some((
                    requests,
                    format!("one call per request ({})", fmt_value(requests)),
                )),
                items: calls,
            },
            Panel {
                caption: "completion_s".into(),
                axis: "time until the last request ended (s)".into(),
                unit: String::new(),
                scale: scale(completion_values, log_y),
                reference: None,
                items: completion,
            },
            Panel {
                caption: format!(
                    "{} per {} bucket",
                    if v.outage { "peaks" } else { "peak" },
                    v.bucket
                ),
                axis: if v.capacity_rps.is_some() {
                    "arrivals per second (label: x capacity)".into()
                } else {
                    "arrivals per second".into()
                },
                unit: String::new(),
                scale: scale(peak_values, log_y),
                reference: v
                    .capacity_rps
                    .map(|c| (c, format!("capacity ({} req/s)", fmt_value(c)))),
                items: peaks,
            },
            Panel {
                caption: "succeeded vs gave up".into(),
                axis: "share of logical requests (%)".into(),
                unit: "%".into(),
                scale: Scale::Share,
                reference: None,
                items: outcomes,
            },
        ],
    }
}

/// The `populations` chart: per population (a group), one row per strategy: calls per
/// request, and succeeded vs gave up.
pub fn populations(scenario: &Scenario, point: &PointResult, at: &str, log_y: bool) -> RowsData {
    let mut groups = Vec::new();
    let mut work = Vec::new();
    let mut outcomes = Vec::new();
    for (p, spec) in scenario.populations.iter().enumerate() {
        let requests = point
            .strategies
            .first()
            .and_then(|s| s.populations.get(p))
            .map_or(0.0, |x| x.requests);
        groups.push(Group {
            label: Some(format!(
                "{}: {} requests per run",
                spec.name,
                fmt_value(requests)
            )),
            rows: strategy_rows(point, 0),
        });
        for (i, s) in point.strategies.iter().enumerate() {
            let pop = &s.populations[p];
            work.push(vec![Item::Bar {
                value: pop.amplification.unwrap_or(0.0),
                ci: 0.0,
                color: color(i),
                alpha: BAR,
                label: format!(
                    "{} ({} calls)",
                    times(pop.amplification.unwrap_or(f64::NAN)),
                    fmt_value(pop.calls)
                ),
            }]);
            outcomes.push(vec![outcome(i, pop.succeeded, pop.gave_up, pop.requests)]);
        }
    }
    let values = work.iter().flatten().map(|i| match i {
        Item::Bar { value, .. } => *value,
        _ => 0.0,
    });
    RowsData {
        title: format!(
            "{}{at}: each population's calls per request and requests lost{}",
            scenario.name,
            runs(scenario.replications)
        ),
        legend: vec![
            (Swatch::Fill(INK, BAR), "succeeded".into()),
            (Swatch::Fill(GAVE_UP, 1.0), "gave up".into()),
        ],
        groups,
        panels: vec![
            Panel {
                caption: "calls per request (amplification)".into(),
                axis: "calls at the entry service per logical request".into(),
                unit: "x".into(),
                scale: scale(values.chain([1.0]), log_y),
                reference: Some((1.0, "one call per request".into())),
                items: work,
            },
            Panel {
                caption: "succeeded vs gave up".into(),
                axis: "share of the population's requests (%)".into(),
                unit: "%".into(),
                scale: Scale::Share,
                reference: None,
                items: outcomes,
            },
        ],
    }
}

/// The `services` chart: per service (a group), one row per strategy: calls per client
/// request, and the service's peak arrivals as a multiple of its capacity.
pub fn services(scenario: &Scenario, point: &PointResult, at: &str, log_y: bool) -> RowsData {
    let bucket = verdict::bucket_label(scenario.bucket);
    let mut groups = Vec::new();
    let mut calls = Vec::new();
    let mut peaks = Vec::new();
    for (k, spec) in scenario.services.iter().enumerate() {
        let server = &spec.server;
        let service = server.service.mean();
        let capacity = (!server.is_occ() && !service.is_zero())
            .then(|| server.concurrency as f64 / service.as_secs_f64());
        groups.push(Group {
            label: Some(match capacity {
                Some(c) => format!(
                    "{}: {} / {} mean service = {} req/s",
                    spec.name,
                    counted(server.concurrency, "slot", "slots"),
                    service.short(),
                    fmt_value(c)
                ),
                None => format!("{}: capacity n/a", spec.name),
            }),
            rows: strategy_rows(point, 0),
        });
        for (i, s) in point.strategies.iter().enumerate() {
            let v = &s.services[k];
            calls.push(vec![Item::Bar {
                value: v.amplification.unwrap_or(0.0),
                ci: 0.0,
                color: color(i),
                alpha: BAR,
                label: format!(
                    "{} ({} calls)",
                    times(v.amplification.unwrap_or(f64::NAN)),
                    fmt_value(v.calls)
                ),
            }]);
            let x = capacity.map_or(f64::NAN, |c| v.peak_rps / c);
            peaks.push(vec![Item::Bar {
                value: if x.is_finite() { x } else { 0.0 },
                ci: 0.0,
                color: color(i),
                alpha: BAR,
                label: if x.is_finite() {
                    format!("{} ({} req/s)", times(x), fmt_value(v.peak_rps))
                } else {
                    format!("{} req/s", fmt_value(v.peak_rps))
                },
            }]);
        }
    }
    let bar_values = |items: &Vec<Vec<Item>>| -> Vec<f64> {
        items
            .iter()
            .flatten()
            .map(|i| match i {
                Item::Bar { value, .. } => *value,
                _ => 0.0,
            })
            .collect()
    };
    let calls_scale = scale(bar_values(&calls).into_iter().chain([1.0]), log_y);
    let peaks_scale = scale(bar_values(&peaks).into_iter().chain([1.0]), log_y);
    RowsData {
        title: format!(
            "{}{at}: calls and peak load at each service{}",
            scenario.name,
            runs(scenario.replications)
        ),
        legend: Vec::new(),
        groups,
        panels: vec![
            Panel {
                caption: "calls per client request (amplification)".into(),
                axis: "calls at the service per logical client request".into(),
                unit: "x".into(),
                scale: calls_scale,
                reference: Some((1.0, "one call per client request".into())),
                items: calls,
            },
            Panel {
                caption: format!("peak arrivals per {bucket} bucket"),
                axis: "as a multiple of the service's capacity".into(),
                unit: "x".into(),
                scale: peaks_scale,
                reference: Some((1.0, "capacity".into())),
                items: peaks,
            },
        ],
    }
}

/// The `paired` chart (a forest plot): per metric of `paired.csv`, each strategy's paired
/// difference from the first as a percentage of the first's mean, with its 95% interval;
/// filled when the interval excludes 0 (significant), hollow when not.
pub fn paired(scenario: &Scenario, point: &PointResult, at: &str) -> RowsData {
    let baseline = point.strategies.first();
    let base_name = baseline.map_or("", |b| b.summary.strategy.as_str());
    let mut panels = Vec::new();
    for (metric, _) in METRICS {
        let base = point
            .paired
            .iter()
            .find(|r| r.metric == metric)
            .map_or(0.0, |r| r.baseline_mean);
        let relative = base != 0.0;
        let scale = |v: f64| if relative { 100.0 * v / base } else { v };
        let items = point
            .strategies
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, s)| {
                let row = point
                    .paired
                    .iter()
                    .find(|r| r.metric == metric && r.strategy == s.summary.strategy);
                match row {
                    Some(r) => {
                        let (d, ci) = (scale(r.mean_diff), scale(r.ci95).abs());
                        vec![Item::Dot {
                            value: d,
                            lo: d - ci,
                            hi: d + ci,
                            filled: r.significant(),
                            color: color(i),
                            marker: look(i).marker,
                            label: format!(
                                "{}{} ± {}{}",
                                if d > 0.0 { "+" } else { "" },
                                fmt_value(d),
                                fmt_value(ci),
                                if relative { "%" } else { "" }
                            ),
                        }]
                    }
                    None => Vec::new(),
                }
            })
            .collect();
        panels.push(Panel {
            // Without an outage the recovery peak is the whole run's: say so, under the
            // column's name.
            caption: if metric == "recovery_peak_rps" && scenario.recovery_from().is_none() {
                "recovery_peak_rps (= peak_rps: no outage)".to_string()
            } else if metric == "recovery_peak_rps" && scenario.outage_outlasts_run() {
                "recovery_peak_rps (0: the outage outlasts the run)".to_string()
            } else {
                metric.to_string()
            },
            axis: if relative {
                format!("difference vs {base_name} (% of its mean)")
            } else {
                format!("difference vs {base_name}")
            },
            unit: if relative { "%".into() } else { String::new() },
            scale: Scale::Diverging,
            reference: None,
            items,
        });
    }
    RowsData {
        title: format!(
            "{}{at}: paired differences from {base_name}, 95% intervals over {} replications",
            scenario.name, scenario.replications
        ),
        legend: vec![
            (
                Swatch::Dot(INK, 0),
                "significant (the interval excludes 0)".into(),
            ),
            (
                Swatch::Line(INK, None),
                "95% interval of the paired differences; hollow: not significant".into(),
            ),
        ],
        groups: vec![Group {
            label: None,
            rows: strategy_rows(point, 1),
        }],
        panels,
    }
}
