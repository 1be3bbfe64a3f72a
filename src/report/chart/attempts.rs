//! `attempts`: the sawtooth picture of a storm. Per strategy, the client attempts sent to
//! the entry service per second, first attempts and retries stacked in the bucket in which
//! they were sent (`timeseries.csv`'s `first_attempts` and `retries` count at the send), so
//! the chart says "sent", not "reaching": arrivals come a network delay later (a herd that
//! straddles a bucket edge is split differently) and an unreachable server gets none of
//! them; the `load` chart plots the arrivals. Drawn against the capacity as a step line
//! drawn from the `concurrency` series (capacity steps, autoscaling and crashes show), and
//! the outage windows shaded and labelled by kind.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::timeseries::{self, Area, Band, Level, Spec, YAxis, level_steps, steps};
use super::{
    INK, Swatch, draw_title, fmt_tick, legend, legend_band, outage_style, stacked_rows, use_log,
};
use crate::model::Scenario;
use crate::model::service::{Outage, OutageKind};
use crate::report::verdict::bucket_label;
use crate::runner::PointResult;
use crate::time::{SimDuration, SimTime};

/// Width of the chart.
const WIDTH: u32 = 1400;
/// Height of the title row.
const TITLE: u32 = 40;
/// Height of one strategy's row.
const ROW: u32 = 200;
/// Width of the value-axis label area.
const Y_AREA: i32 = 84;
/// Fill of first attempts: blue, apart from the grey of a `down` window, which a grey
/// first wave at t = 0 was lost in.
pub const FIRST: RGBColor = RGBColor(0, 114, 178);
/// Fill of retries.
pub const RETRY: RGBColor = RGBColor(213, 94, 0);
/// Dash of the capacity line.
const CAPACITY_DASH: Option<(i32, i32)> = Some((8, 5));
/// Dash of the rate-limit line.
const LIMIT_DASH: Option<(i32, i32)> = Some((3, 4));

/// One strategy's row.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptsPanel {
    /// Strategy name.
    pub strategy: String,
    /// First attempts plus retries per second, as a step curve (the top of the stack).
    pub total: Vec<(f64, f64)>,
    /// First attempts per second, as a step curve.
    pub first: Vec<(f64, f64)>,
    /// Capacity in requests per second over time (`None`: not defined).
    pub capacity: Option<Vec<(f64, f64)>>,
}

/// The attempts chart's numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptsData {
    /// Title.
    pub title: String,
    /// Value-axis description.
    pub y_desc: String,
    /// Right end of the time axis, seconds.
    pub t_end: f64,
    /// The value axis, shared by every row.
    pub y: YAxis,
    /// Outage windows.
    pub bands: Vec<Band>,
    /// The rate limiter's rate, when there is one.
    pub rate_limit: Option<f64>,
    /// Key entries.
    pub legend: Vec<(Swatch, String)>,
    /// One row per strategy.
    pub panels: Vec<AttemptsPanel>,
}

/// The largest size of the chart of `strategies` rows whose legend takes at most `legend`
/// pixels, for the memory estimate.
pub fn size_bound(strategies: u64, legend: u64) -> (u64, u64) {
    let height = TITLE as u64 + legend + (ROW as u64).saturating_mul(strategies.max(1));
    (WIDTH as u64, height + timeseries::X_DESC as u64)
}

impl AttemptsData {
    fn legend_height(&self) -> u32 {
        legend_band((Y_AREA + 10, WIDTH as i32 - 20), &self.legend)
    }

    /// Chart size: one row per strategy.
    pub fn size(&self) -> (u32, u32) {
        (
            WIDTH,
            TITLE
                + self.legend_height()
                + ROW * self.panels.len().max(1) as u32
                + timeseries::X_DESC,
        )
    }
}

/// The outage windows of service `service`, shaded and labelled by kind.
pub fn bands(scenario: &Scenario, service: usize) -> Vec<Band> {
    scenario.services[service]
        .server
        .outages
        .iter()
        .map(|o| {
            let (color, label) = outage_style(&o.kind);
            Band {
                start: o.start.as_secs_f64(),
                end: o.end.as_secs_f64(),
                color,
                label: Some(label),
            }
        })
        .collect()
}

/// The outage windows of every service, labelled by kind, and by service when there are
/// several (`db: down`): a downstream outage is what the clients retry against.
pub fn all_bands(scenario: &Scenario) -> Vec<Band> {
    let many = scenario.services.len() > 1;
    (0..scenario.services.len())
        .flat_map(|k| {
            bands(scenario, k).into_iter().map(move |mut b| {
                if many {
                    b.label = b
                        .label
                        .map(|l| format!("{}: {l}", scenario.services[k].name));
                }
                b
            })
        })
        .collect()
}

/// The legend of a capacity line: its value when the slots never change (`capacity 10 000
/// req/s: 200 slots / 20ms mean service`), else how it is computed from the slots plotted;
/// `compact` (a column of several) leaves out how the value is made. For a service that
/// calls others, the line counts its own work only (as the verdict's capacity says): its
/// slots are also held through its calls, so it refuses work well below the line.
pub fn capacity_label(service: &crate::model::service::ServiceSpec, compact: bool) -> String {
    let server = &service.server;
    let mean = server.service.mean();
    let shown = mean.short();
    let constant = server.capacity.is_empty() && server.autoscale.is_none() && !mean.is_zero();
    let mut label = if constant {
        let rps = f64::from(server.concurrency) / mean.as_secs_f64();
        let mut label = format!("capacity {} req/s", super::fmt_value(rps));
        if !compact {
            let slots = crate::text::counted(server.concurrency, "slot", "slots");
            label.push_str(&format!(": {slots} / {shown} mean service"));
        }
        label
    } else {
        format!("capacity: slots / {shown} mean service")
    };
    if !service.calls.is_empty() {
        label.push_str(if compact {
            ", own work only"
        } else {
            ", its own work only (slots are also held through its calls)"
        });
    }
    label
}

/// The share of the nominal service rate left over `[from, to)` seconds by the `slow`
/// windows of `outages`: 1 outside them, 1 / factor inside, time-weighted across a window's
/// edge (a 5x slowdown over half a bucket leaves 0.6 of it).
fn slow_share(outages: &[Outage], from: f64, to: f64) -> f64 {
    let width = to - from;
    if width <= 0.0 {
        return 1.0;
    }
    let lost: f64 = outages
        .iter()
        .filter_map(|o| match o.kind {
            OutageKind::Slow(factor) => {
                let start = SimDuration(o.start.0).as_secs_f64().max(from);
                let end = SimDuration(o.end.0).as_secs_f64().min(to);
                (end > start).then(|| (end - start) / width * (1.0 - 1.0 / factor))
            }
            _ => None,
        })
        .sum();
    1.0 - lost
}

/// The slots of service `service` in one strategy's mean series, `(t, slots)` per bucket,
/// and the time their line runs to.
///
/// A strategy whose runs ended before `t_end` (the longest strategy's end) has no measured
/// slots after its end. The server's schedule goes on without it: its capacity steps are
/// drawn on to `t_end` as the scenario sets them, each in the bucket where it happens (as
/// the `concurrency` column records it), so that every panel shows the same step. An
/// autoscaled server's size after the end is not known (the decisions stop with the runs),
/// so its line stops at the strategy's end.
pub fn slots_series(
    scenario: &Scenario,
    service: usize,
    timeline: &[crate::metrics::summary::MeanBucket],
    t_end: f64,
) -> (Vec<(f64, f64)>, f64) {
    let server = &scenario.services[service].server;
    let bucket = scenario.bucket.as_secs_f64();
    let mut slots: Vec<(f64, f64)> = timeline.iter().map(|b| (b.t_s, b.concurrency())).collect();
    let width = scenario.bucket.as_nanos().max(1);
    for k in timeline.len() as u64.. {
        let t_s = k as f64 * bucket;
        if t_s >= t_end {
            break;
        }
        let ends = SimTime((k + 1).saturating_mul(width).min(scenario.time_limit.0));
        let Some(scheduled) = server.scheduled_slots_before(ends) else {
            return (slots, (timeline.len() as f64 * bucket).min(t_end));
        };
        slots.push((t_s, f64::from(scheduled)));
    }
    (slots, t_end)
}

/// Capacity over time of service `service` in one strategy's mean series: slots (see
/// [`slots_series`]) / mean service time, divided by the slowdown in a `slow` window;
/// `None` for an OCC server or zero service.
pub fn capacity_series(
    scenario: &Scenario,
    service: usize,
    timeline: &[crate::metrics::summary::MeanBucket],
    t_end: f64,
) -> Option<Vec<(f64, f64)>> {
    let server = &scenario.services[service].server;
    let mean = server.service.mean();
    if server.is_occ() || mean.is_zero() {
        return None;
    }
    let per_slot = 1.0 / mean.as_secs_f64();
    let bucket = scenario.bucket.as_secs_f64();
    let (slots, line_end) = slots_series(scenario, service, timeline, t_end);
    // A slow window multiplies service times: the same slots serve that much less.
    let gauge: Vec<(f64, f64)> = slots
        .iter()
        .map(|&(t_s, slots)| {
            let share = slow_share(&server.outages, t_s, t_s + bucket);
            (t_s, slots * per_slot * share)
        })
        .collect();
    Some(level_steps(&gauge, line_end))
}

/// Prepares the attempts chart of one point. `at` is appended to the title; each curve
/// keeps at most `max_points` points; `log_y` forces a log value axis.
pub fn series(
    scenario: &Scenario,
    point: &PointResult,
    at: &str,
    max_points: usize,
    log_y: bool,
) -> AttemptsData {
    let bucket = scenario.bucket.as_secs_f64();
    let t_end = point
        .strategies
        .iter()
        .map(|s| s.timeline().len() as f64 * bucket)
        .fold(0.0, f64::max)
        .max(bucket);
    let panels: Vec<AttemptsPanel> = point
        .strategies
        .iter()
        .map(|s| {
            let tl = s.timeline();
            let first: Vec<(f64, f64)> = tl
                .iter()
                .map(|b| (b.t_s, b.first_attempts() / bucket))
                .collect();
            let total: Vec<(f64, f64)> = tl
                .iter()
                .map(|b| (b.t_s, (b.first_attempts() + b.retries()) / bucket))
                .collect();
            AttemptsPanel {
                strategy: s.summary.strategy.clone(),
                total: steps(&total, bucket, max_points),
                first: steps(&first, bucket, max_points),
                capacity: capacity_series(scenario, 0, tl, t_end),
            }
        })
        .collect();
    let server = &scenario.entry().server;
    let rate_limit = server.rate_limit.map(|r| r.rate);
    let values: Vec<f64> = panels
        .iter()
        .flat_map(|p| {
            p.total
                .iter()
                .map(|v| v.1)
                .chain(p.capacity.iter().flatten().map(|v| v.1))
        })
        .chain(rate_limit)
        .collect();
    let log = use_log(values.iter().copied(), log_y);
    let bands = all_bands(scenario);
    let mut legend = vec![
        (Swatch::Fill(FIRST, 0.45), "first attempts".to_string()),
        (
            Swatch::Fill(RETRY, 0.6),
            "retries (stacked on top)".to_string(),
        ),
    ];
    if panels.iter().any(|p| p.capacity.is_some()) {
        legend.push((
            Swatch::Line(INK, CAPACITY_DASH),
            capacity_label(scenario.entry(), false),
        ));
    }
    if let Some(r) = rate_limit {
        legend.push((
            Swatch::Line(INK, LIMIT_DASH),
            format!("rate limit {} req/s", fmt_tick(r)),
        ));
    }
    let mut kinds: Vec<String> = Vec::new();
    for b in &bands {
        let label = b.label.clone().unwrap_or_default();
        if !kinds.contains(&label) {
            legend.push((Swatch::Fill(b.color, 0.3), format!("outage: {label}")));
            kinds.push(label);
        }
    }
    let name = if scenario.services.len() > 1 {
        scenario.entry().name.clone()
    } else {
        "the server".to_string()
    };
    AttemptsData {
        title: format!(
            "{}{at}: client attempts sent to {name} per second, by send time, per {} bucket",
            scenario.name,
            bucket_label(scenario.bucket)
        ),
        y_desc: "attempts sent/s".into(),
        t_end,
        y: YAxis::new(values.iter().copied(), log),
        bands,
        rate_limit,
        legend,
        panels,
    }
}

/// Draws the chart on `root`.
pub fn draw<DB: DrawingBackend>(
    d: &AttemptsData,
    root: &DrawingArea<DB, Shift>,
) -> Result<(), String> {
    let (head, body) = root.split_vertically(TITLE + d.legend_height());
    let (title_area, legend_area) = head.split_vertically(TITLE);
    draw_title(&title_area, &d.title)?;
    legend(&legend_area, (Y_AREA + 10, WIDTH as i32 - 20), &d.legend)?;
    let n = d.panels.len();
    let rows = stacked_rows(body, n, ROW);
    for (i, (p, row)) in d.panels.iter().zip(rows).enumerate() {
        let last = i + 1 == n;
        let areas = [
            Area {
                points: p.first.clone(),
                color: FIRST,
                alpha: 0.45,
                under: None,
            },
            Area {
                points: p.total.clone(),
                color: RETRY,
                alpha: 0.6,
                under: Some(p.first.clone()),
            },
        ];
        let mut levels = Vec::new();
        if let Some(c) = &p.capacity {
            levels.push(Level {
                points: c.clone(),
                color: INK,
                dash: CAPACITY_DASH,
            });
        }
        if let Some(r) = d.rate_limit {
            levels.push(Level {
                points: vec![(0.0, r), (d.t_end, r)],
                color: INK,
                dash: LIMIT_DASH,
            });
        }
        timeseries::panel(
            &row,
            &Spec {
                caption: &p.strategy,
                y_desc: &d.y_desc,
                y_area: Y_AREA,
                x_labels: 14,
                t_end: d.t_end,
                y: &d.y,
                bands: &d.bands,
                areas: &areas,
                levels: &levels,
                last,
            },
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{FIRST, RETRY, slow_share};
    use crate::model::service::{Hint, Outage, OutageKind};
    use crate::time::{SimDuration, SimTime};

    #[test]
    fn a_slow_window_divides_the_capacity_by_its_factor_time_weighted() {
        let s = |ms: u64| SimTime(ms * 1_000_000);
        let slow = Outage {
            start: s(1_000),
            end: s(2_000),
            kind: OutageKind::Slow(5.0),
            retry_after: Hint::Auto,
        };
        let down = Outage {
            start: s(3_000),
            end: s(4_000),
            kind: OutageKind::Down,
            retry_after: Hint::Auto,
        };
        let outages = [slow, down];
        assert_eq!(slow_share(&outages, 0.0, 1.0), 1.0);
        assert!((slow_share(&outages, 1.0, 2.0) - 0.2).abs() < 1e-12);
        // Half a bucket at 1/5: 0.5 + 0.5 / 5.
        assert!((slow_share(&outages, 1.5, 2.5) - 0.6).abs() < 1e-12);
        // Other kinds leave the service rate as it is.
        assert_eq!(slow_share(&outages, 3.0, 4.0), 1.0);
    }

    #[test]
    fn attempts_stand_apart_from_every_outage_shade() {
        // A grey first wave was lost in the grey of a `down` window it stands in, and orange
        // retries in an orange `errors` window.
        let kinds = [
            OutageKind::Down,
            OutageKind::Unreachable,
            OutageKind::Crash,
            OutageKind::Errors(0.5),
            OutageKind::Slow(5.0),
        ];
        for kind in kinds {
            let (shade, _) = super::super::outage_style(&kind);
            for (name, fill) in [("first attempts", FIRST), ("retries", RETRY)] {
                let distance: i32 = [(fill.0, shade.0), (fill.1, shade.1), (fill.2, shade.2)]
                    .iter()
                    .map(|&(a, b)| (i32::from(a) - i32::from(b)).abs())
                    .sum();
                assert!(distance > 100, "{name} against {kind:?}: {distance}");
            }
        }
    }

    #[test]
    fn legend_durations_are_whole_units_or_three_significant_digits() {
        let shown: Vec<String> = [
            20_000_000,
            1_000_000_000,
            2_266_297,
            1_500_000_000,
            999,
            90_000_000_000,
            999_600,
        ]
        .into_iter()
        .map(|ns| SimDuration::from_nanos(ns).short())
        .collect();
        assert_eq!(
            shown,
            ["20ms", "1s", "2.27ms", "1.5s", "999ns", "1.5m", "1ms"]
        );
    }
}
