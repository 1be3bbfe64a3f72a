//! `sweep_calls`, `sweep_completion`, `sweep_peak`: how a metric scales with the first swept
//! key (Brooker's "work and completion time versus number of clients"). One line per
//! strategy, in its palette colour, with 95% confidence whiskers when there is more than one
//! replication. With further swept keys, each combination of their values is its own line:
//! same colour per strategy, a different marker per combination.

use std::ops::Range;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

use super::{
    ChartKind, DASHES, DESC, INK, Swatch, TICK, color, dash_segments, fmt_tick, header, log_range,
    log_ticks, look, marker_shape, msg, text, use_log, value_range,
};
use crate::metrics::summary::{Stat, StrategySummary};
use crate::runner::ScenarioResult;
use crate::scenario::sweep::ScenarioFile;
use crate::time::parse_duration;

/// Colour of the "no retries" baseline: grey, so it reads as a reference, not a strategy.
const BASELINE: RGBColor = RGBColor(110, 110, 110);

/// Chart size.
pub const SIZE: (u32, u32) = (1100, 600);

/// The metric a sweep chart plots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// `calls`.
    Calls,
    /// `completion_s`.
    Completion,
    /// `peak_rps`.
    Peak,
    /// `succeeded` as a share of the logical requests, in percent: what Brooker's 2022
    /// charts plot against the failure rate.
    Succeeded,
}

impl Metric {
    fn kind(self) -> ChartKind {
        match self {
            Metric::Calls => ChartKind::SweepCalls,
            Metric::Completion => ChartKind::SweepCompletion,
            Metric::Peak => ChartKind::SweepPeak,
            Metric::Succeeded => ChartKind::SweepSucceeded,
        }
    }

    fn stat(self, s: &StrategySummary) -> Stat {
        match self {
            Metric::Calls => s.calls,
            Metric::Completion => s.completion_s,
            Metric::Peak => s.peak_rps,
            // A mean share: the per-replication shares a sweep point's interval would need
            // are not kept, so no whisker.
            Metric::Succeeded => Stat {
                mean: if s.requests > 0.0 {
                    100.0 * s.succeeded / s.requests
                } else {
                    f64::NAN
                },
                ci95: 0.0,
            },
        }
    }

    /// The title's words and the value axis's, for an entry service called `entry` ("the
    /// server", or a graph's first service by name: calls and peaks are the entry service's,
    /// and a graph may have another service named `server`).
    fn describe(self, entry: &str) -> (String, String) {
        match self {
            Metric::Calls => (
                format!("calls {entry} absorbed"),
                format!("calls (attempts reaching {entry})"),
            ),
            Metric::Completion => (
                "time until the last request ended".into(),
                "completion time (s)".into(),
            ),
            Metric::Peak => (
                format!("peak load at {entry}"),
                format!("peak arrivals at {entry} (req/s)"),
            ),
            Metric::Succeeded => (
                "share of requests that succeeded".into(),
                "succeeded (% of logical requests)".into(),
            ),
        }
    }
}

/// How the swept values sit on the x axis.
#[derive(Debug, Clone, PartialEq)]
pub enum XAxis {
    /// Numbers (durations in seconds), linear axis.
    Linear,
    /// Numbers spanning two decades or more, logarithmic axis.
    Log,
    /// Values that are not numbers, at positions 0, 1, ... in sweep order.
    Categories(Vec<String>),
}

/// One line: a strategy (and a combination of the other swept keys).
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Legend text.
    pub label: String,
    /// Index into the palette (the strategy's).
    pub color: usize,
    /// Marker shape index: the combination of the other swept keys, or the strategy when
    /// only one key is swept.
    pub marker: usize,
    /// Dash pattern: the strategy's when only one key is swept, else the combination's.
    pub dash: Option<(i32, i32)>,
    /// (x, metric) in increasing x.
    pub points: Vec<(f64, Stat)>,
}

/// A sweep chart's numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepData {
    /// Which sweep chart.
    pub kind: ChartKind,
    /// Chart title.
    pub title: String,
    /// x-axis description, with its unit.
    pub x_desc: String,
    /// y-axis description, with its unit.
    pub y_desc: String,
    /// How x values are placed.
    pub axis: XAxis,
    /// x range (`start > 0` on a log axis).
    pub x: Range<f64>,
    /// Lines, strategy-major.
    pub lines: Vec<Line>,
    /// A dashed reference: the logical requests at each x (calls chart only).
    pub baseline: Vec<(f64, f64)>,
    /// Whether to draw whiskers (replications > 1).
    pub whiskers: bool,
    /// Whether the value axis is logarithmic.
    pub log_y: bool,
}

/// Parses a swept value label as a number: numbers as TOML writes them (`1_000`, `0x10`,
/// `2.5e3`: labels keep the text of the file), durations in seconds. `None` for anything
/// else. The flag says whether it was a duration.
fn numeric(label: &str) -> Option<(f64, bool)> {
    let text = label.trim().replace('_', "");
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(digits) = text.strip_prefix(prefix) {
            return i64::from_str_radix(digits, radix)
                .ok()
                .map(|v| (v as f64, false));
        }
    }
    if let Ok(v) = text.parse::<f64>() {
        return v.is_finite().then_some((v, false));
    }
    parse_duration(label).ok().map(|d| (d.as_secs_f64(), true))
}

/// A linear x axis over swept values from `lo` to `hi`, padded by 4%. It starts at 0 for
/// positive values (Brooker's charts do), so slopes read true; but not when the values sit
/// far from 0 (35 s .. 45 s), where the axis would be mostly empty and the transition
/// squashed into its last quarter.
fn linear_range(lo: f64, hi: f64) -> std::ops::Range<f64> {
    let pad = if hi > lo {
        (hi - lo) * 0.04
    } else {
        hi.abs().max(1.0) * 0.1
    };
    let start = if lo > 0.0 && lo <= hi * 0.5 {
        0.0
    } else {
        lo - pad
    };
    start..hi + pad
}

/// Prepares one sweep chart. `file` must have at least one swept key.
pub fn series(
    file: &ScenarioFile,
    result: &ScenarioResult,
    metric: Metric,
    log_y: bool,
) -> SweepData {
    let axis0 = &file.axes[0];
    let parsed: Option<Vec<(f64, bool)>> = axis0.labels.iter().map(|l| numeric(l)).collect();
    let (axis, unit) = match parsed {
        Some(values) => {
            let seconds = values.iter().any(|v| v.1);
            let lo = values.iter().map(|v| v.0).fold(f64::INFINITY, f64::min);
            let hi = values.iter().map(|v| v.0).fold(f64::NEG_INFINITY, f64::max);
            let log = lo > 0.0 && hi / lo >= 100.0;
            (
                if log { XAxis::Log } else { XAxis::Linear },
                if seconds { " (s)" } else { "" },
            )
        }
        None => (XAxis::Categories(axis0.labels.clone()), ""),
    };
    let x_of = |label: &str| -> f64 {
        match &axis {
            XAxis::Categories(c) => c.iter().position(|p| p == label).map(|i| i as f64),
            XAxis::Linear | XAxis::Log => numeric(label).map(|v| v.0),
        }
        .unwrap_or(f64::NAN)
    };

    // Lines keyed by (strategy, labels of the other swept keys), in first-seen order.
    let mut combos: Vec<Vec<String>> = Vec::new();
    let mut lines: Vec<Line> = Vec::new();
    let mut baseline = Vec::new();
    for point in &result.points {
        let rest = point.labels.get(1..).unwrap_or_default().to_vec();
        let combo = match combos.iter().position(|c| *c == rest) {
            Some(k) => k,
            None => {
                combos.push(rest.clone());
                combos.len() - 1
            }
        };
        let x = x_of(point.labels.first().map(String::as_str).unwrap_or(""));
        if combo == 0 {
            let requests = point.strategies.first().map_or(0.0, |s| s.summary.requests);
            baseline.push((x, requests));
        }
        let suffix: String = file.axes[1..]
            .iter()
            .zip(&rest)
            .map(|(a, v)| format!(", {} = {v}", a.path))
            .collect();
        for (s, strategy) in point.strategies.iter().enumerate() {
            let label = format!("{}{suffix}", strategy.summary.strategy);
            let stat = metric.stat(&strategy.summary);
            match lines.iter_mut().find(|l| l.label == label) {
                Some(line) => line.points.push((x, stat)),
                None => lines.push(Line {
                    label,
                    color: s,
                    marker: combo,
                    dash: DASHES[combo % DASHES.len()],
                    points: vec![(x, stat)],
                }),
            }
        }
    }
    for line in &mut lines {
        line.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    // Strategy-major, so the legend groups a strategy's lines together.
    lines.sort_by_key(|l| (l.color, l.marker));
    if combos.len() == 1 {
        // One line per strategy: give each its own marker too, so lines that coincide or
        // colours a reader cannot tell apart are still told apart by shape.
        for line in &mut lines {
            let l = look(line.color);
            line.marker = l.marker;
            line.dash = l.dash;
        }
    }
    baseline.sort_by(|a, b| a.0.total_cmp(&b.0));

    let xs = || lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
    let lo = xs().fold(f64::INFINITY, f64::min);
    let hi = xs().fold(f64::NEG_INFINITY, f64::max);
    let x = match &axis {
        XAxis::Log => lo / 1.3..hi * 1.3,
        XAxis::Categories(c) => -0.5..c.len() as f64 - 0.5,
        XAxis::Linear => linear_range(lo, hi),
    };
    let first = file.first();
    let entry = if first.services.len() > 1 {
        first.entry().name.clone()
    } else {
        "the server".to_string()
    };
    let (what, y_desc) = metric.describe(&entry);
    let y_desc = if metric == Metric::Peak {
        format!(
            "peak arrivals at {entry} per {} bucket (req/s)",
            crate::report::console::bucket(file)
        )
    } else {
        y_desc
    };
    let name = &file.first().name;
    // A sweep may vary the replications: their range, whiskers where some point has them.
    let replications = crate::report::console::replications(file);
    let runs = file.points.iter().any(|p| p.scenario.replications > 1);
    let whiskers = runs && metric != Metric::Succeeded;
    SweepData {
        kind: metric.kind(),
        title: format!(
            "{name}: {what} vs {}{}",
            axis0.path,
            if whiskers {
                format!(" (mean of {replications} runs, whiskers: 95% CI)")
            } else if runs {
                format!(" (mean of {replications} runs)")
            } else {
                String::new()
            }
        ),
        x_desc: format!(
            "{}{unit}{}",
            axis0.path,
            if axis == XAxis::Log { " (log)" } else { "" }
        ),
        y_desc,
        axis,
        x,
        lines,
        baseline: if metric == Metric::Calls {
            baseline
        } else {
            Vec::new()
        },
        whiskers,
        log_y: false,
    }
    // A share reads on a linear axis from 0 to 100%, whatever its span.
    .with_log(log_y)
    .with_share_axis(metric == Metric::Succeeded && !log_y)
}

impl SweepData {
    /// Keeps a share's value axis linear (a success share from 0.2% to 100% would otherwise
    /// turn it logarithmic).
    fn with_share_axis(mut self, share: bool) -> Self {
        if share && self.log_y {
            self.log_y = false;
            self.y_desc = self.y_desc.trim_end_matches(" (log)").to_string();
        }
        self
    }

    /// Turns the value axis logarithmic when asked or when the values span more than 100x.
    fn with_log(mut self, forced: bool) -> Self {
        let values = self
            .lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.1.mean))
            .chain(self.baseline.iter().map(|b| b.1));
        self.log_y = use_log(values, forced);
        if self.log_y {
            self.y_desc.push_str(" (log)");
        }
        self
    }
}

/// Draws the chart on `root`.
pub fn draw<DB: DrawingBackend>(
    d: &SweepData,
    root: &DrawingArea<DB, Shift>,
) -> Result<(), String> {
    match &d.axis {
        XAxis::Log => {
            // A few swept values spread over decades (1 s, 10 s, 60 s, 1 h): tick each of
            // them, so every point has its label; 1-2-5 ticks would leave 3 600 unmarked.
            let mut swept: Vec<f64> = d
                .lines
                .iter()
                .flat_map(|l| &l.points)
                .map(|p| p.0)
                .collect();
            swept.sort_by(f64::total_cmp);
            swept.dedup();
            // Only when they are far enough apart for their labels (neighbours at least 1.5x
            // apart): 10, 11, .. 20 and 2000 would print as one run of digits.
            let apart = swept.windows(2).all(|w| w[1] >= w[0] * 1.5);
            let ticks = if swept.len() <= 12 && apart {
                swept
            } else {
                log_ticks(&d.x, 12)
            };
            draw_on(
                d,
                root,
                d.x.clone().log_scale().with_key_points(ticks),
                &|v| fmt_tick(*v),
            )
        }
        XAxis::Linear => draw_on(d, root, d.x.clone(), &|v| fmt_tick(*v)),
        XAxis::Categories(c) => draw_on(d, root, d.x.clone(), &|v| {
            let i = v.round();
            if (v - i).abs() < 1e-9 && i >= 0.0 {
                c.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        }),
    }
}

fn draw_on<DB, X>(
    d: &SweepData,
    root: &DrawingArea<DB, Shift>,
    x: X,
    x_label: &dyn Fn(&f64) -> String,
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let values = || {
        d.lines
            .iter()
            .flat_map(|l| l.points.iter())
            .flat_map(|(_, s)| {
                let ci = if d.whiskers { s.ci95 } else { 0.0 };
                [s.mean, s.mean - ci, s.mean + ci]
            })
            .chain(d.baseline.iter().map(|b| b.1))
    };
    if d.log_y
        && let Some(range) = log_range(values(), 1.3)
    {
        let ticks = log_ticks(&range, 10);
        let floor = range.start;
        return draw_xy(
            d,
            root,
            x,
            range.log_scale().with_key_points(ticks),
            x_label,
            floor,
        );
    }
    let top = values().fold(0.0, f64::max);
    draw_xy(d, root, x, value_range(top), x_label, 0.0)
}

fn draw_xy<DB, X, Y>(
    d: &SweepData,
    root: &DrawingArea<DB, Shift>,
    x: X,
    y: Y,
    x_label: &dyn Fn(&f64) -> String,
    floor: f64,
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut entries: Vec<(Swatch, String)> = Vec::new();
    if !d.baseline.is_empty() {
        entries.push((
            Swatch::Line(BASELINE, Some((8, 5))),
            "logical requests (no retries)".to_string(),
        ));
    }
    entries.extend(d.lines.iter().map(|l| {
        (
            Swatch::Look(super::Look {
                color: color(l.color),
                marker: l.marker,
                dash: l.dash,
            }),
            l.label.clone(),
        )
    }));
    let body = header(root, &d.title, 16 + 85, &entries)?;
    let mut chart = ChartBuilder::on(&body)
        .margin(16)
        .margin_top(8)
        .margin_right(30)
        .x_label_area_size(55)
        .y_label_area_size(85)
        .build_cartesian_2d(x, y)
        .map_err(msg)?;
    let categories = match &d.axis {
        XAxis::Categories(c) => c.len(),
        // Whole swept values (`server.concurrency = [2, 3, 4]`) get whole ticks: no more
        // ticks than whole numbers in the range, so the step is never below 1 (it read
        // 0, 0.5, 1, ... 4 for three slot counts).
        XAxis::Linear
            if d.lines
                .iter()
                .flat_map(|l| &l.points)
                .all(|p| p.0.fract() == 0.0) =>
        {
            12.min((d.x.end - d.x.start).floor().max(1.0) as usize + 1)
        }
        _ => 12,
    };
    chart
        .configure_mesh()
        .x_labels(categories)
        .y_labels(8)
        .x_label_formatter(x_label)
        .y_label_formatter(&|v| fmt_tick(*v))
        .label_style(text(TICK))
        .axis_desc_style(text(DESC))
        .x_desc(d.x_desc.as_str())
        .y_desc(d.y_desc.as_str())
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(INK.mix(0.08))
        .draw()
        .map_err(msg)?;
    if !d.baseline.is_empty() {
        chart
            .draw_series(DashedLineSeries::new(
                d.baseline.iter().copied(),
                8,
                5,
                BASELINE.stroke_width(2),
            ))
            .map_err(msg)?;
    }
    let plot = chart.plotting_area();
    let (ox, oy) = plot.get_base_pixel();
    let shift = plot.strip_coord_spec();
    for line in &d.lines {
        let c = color(line.color);
        let marker = line.marker;
        let px: Vec<(i32, i32)> = line
            .points
            .iter()
            .map(|(x, s)| {
                let (a, b) = plot.map_coordinate(&(*x, s.mean.max(floor)));
                (a - ox, b - oy)
            })
            .collect();
        let pieces = match line.dash {
            None => vec![px],
            Some((on, off)) => dash_segments(&px, on as f64, off as f64),
        };
        for piece in pieces {
            shift
                .draw(&PathElement::new(piece, c.stroke_width(3)))
                .map_err(msg)?;
        }
        if d.whiskers {
            for (x, s) in &line.points {
                let (lo, hi) = ((s.mean - s.ci95).max(floor), s.mean + s.ci95);
                plot.draw(&PathElement::new([(*x, lo), (*x, hi)], c.stroke_width(2)))
                    .map_err(msg)?;
                for v in [lo, hi] {
                    plot.draw(
                        &(EmptyElement::at((*x, v))
                            + PathElement::new([(-6, 0), (6, 0)], c.stroke_width(2))),
                    )
                    .map_err(msg)?;
                }
            }
        }
        for (x, s) in &line.points {
            plot.draw(&(EmptyElement::at((*x, s.mean.max(floor))) + marker_shape(marker, c)))
                .map_err(msg)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
