//! `load`: the sawtooth. Attempts reaching the server per second over time, one row per
//! strategy with shared axes (small multiples), outage windows shaded and the server's
//! capacity drawn as a dashed line; beside each, what the server holds (in service + queued)
//! against its slots and queue.

use std::ops::Range;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    DESC, INK, OUTAGE, Swatch, TICK, color, downsample_max, draw_title, fmt_tick, legend, msg,
    text, value_range,
};
use crate::model::Scenario;
use crate::runner::PointResult;

/// Width of the chart.
const WIDTH: u32 = 1400;
/// Height of the title row.
const TITLE: u32 = 40;
/// Height of one line of the legend band.
const LEGEND_LINE: u32 = 24;
/// Height of one strategy's row.
const ROW: u32 = 190;
/// Extra height of the last row, for the time-axis description.
const X_DESC: u32 = 24;
/// Share of the width taken by the arrivals column.
const LEFT_SHARE: f64 = 0.62;
/// Width of the arrivals panels' y label area (tick labels and description).
const LEFT_Y_AREA: i32 = 78;
/// Width of the occupancy panels' y label area.
const RIGHT_Y_AREA: i32 = 62;
/// Dash pattern (dash, gap) of the capacity and slots lines.
const CAPACITY_DASH: (i32, i32) = (8, 5);
/// Dash pattern of the rate-limit and queue lines.
const LIMIT_DASH: (i32, i32) = (3, 4);

/// The load chart's numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadData {
    /// Chart title.
    pub title: String,
    /// Right end of the shared time axis, seconds (> 0).
    pub t_end: f64,
    /// `concurrency / mean service time`, requests per second; `None` when service is
    /// instantaneous (no finite capacity to draw).
    pub capacity_rps: Option<f64>,
    /// How `capacity_rps` was derived, for the legend.
    pub capacity_note: String,
    /// The rate limiter's rate, requests per second, when there is one.
    pub rate_limit_rps: Option<f64>,
    /// Server slots (`concurrency`).
    pub slots: f64,
    /// Slots plus queue places: the most the server can hold.
    pub places: f64,
    /// Outage windows `[start, end)`, seconds.
    pub outages: Vec<(f64, f64)>,
    /// One row per strategy, in scenario order.
    pub panels: Vec<LoadPanel>,
}

/// One strategy's row of the load chart.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadPanel {
    /// Strategy name.
    pub strategy: String,
    /// Index into the palette.
    pub color: usize,
    /// Arrivals per second as a step curve (each bucket, or bin of buckets when
    /// down-sampled keeping maxima, drawn flat over its width).
    pub arrivals_rps: Vec<(f64, f64)>,
    /// In service + queued (largest in each bucket), as a step curve, down-sampled.
    pub occupancy: Vec<(f64, f64)>,
}

impl LoadData {
    /// Chart size: a fixed width, one row per strategy.
    pub fn size(&self) -> (u32, u32) {
        (
            WIDTH,
            TITLE + self.legend_height() + ROW * self.panels.len().max(1) as u32 + X_DESC,
        )
    }

    /// The legend band: two lines, as the occupancy column's three entries do not fit its
    /// width on one (the band is sized before drawing, when text cannot be measured yet).
    fn legend_height(&self) -> u32 {
        2 * LEGEND_LINE
    }
}

/// Prepares the load chart of one point. `at` is appended to the title (the sweep point);
/// each curve keeps at most `max_points` points.
pub fn series(scenario: &Scenario, point: &PointResult, at: &str, max_points: usize) -> LoadData {
    let bucket = scenario.bucket.as_secs_f64();
    let server = &scenario.entry().server;
    let service = server.service.mean().as_secs_f64();
    let capacity_rps = (service > 0.0).then(|| server.concurrency as f64 / service);
    // Bin first (keeping each bin's maximum), then draw each bin flat over its width, so a
    // one-bucket spike stays a flat-topped spike at any zoom instead of a thin triangle.
    let step = |values: &mut dyn Iterator<Item = (f64, f64)>| -> Vec<(f64, f64)> {
        let points: Vec<(f64, f64)> = values.collect();
        let bins = downsample_max(&points, max_points / 2);
        let mut out = Vec::with_capacity(2 * bins.len());
        for (i, (t, v)) in bins.iter().enumerate() {
            let end = bins
                .get(i + 1)
                .map(|b| b.0)
                .unwrap_or_else(|| points.last().map(|p| p.0).unwrap_or(*t) + bucket);
            out.push((*t, *v));
            out.push((end, *v));
        }
        out
    };
    let panels: Vec<LoadPanel> = point
        .strategies
        .iter()
        .enumerate()
        .map(|(i, s)| LoadPanel {
            strategy: s.summary.strategy.clone(),
            color: i,
            arrivals_rps: step(&mut s.timeline().iter().map(|b| (b.t_s, b.arrivals() / bucket))),
            occupancy: step(
                &mut s
                    .timeline()
                    .iter()
                    .map(|b| (b.t_s, b.in_service() + b.queued())),
            ),
        })
        .collect();
    let t_end = point
        .strategies
        .iter()
        .map(|s| s.timeline().len() as f64 * bucket)
        .fold(0.0, f64::max);
    LoadData {
        title: format!(
            "{}: attempts reaching the server over time{at}",
            scenario.name
        ),
        t_end: if t_end > 0.0 { t_end } else { bucket.max(1e-9) },
        capacity_rps,
        capacity_note: format!(
            "{} slots / {} service",
            server.concurrency,
            server.service.mean()
        ),
        rate_limit_rps: server.rate_limit.map(|r| r.rate),
        slots: server.concurrency as f64,
        places: server.concurrency as f64 + server.queue as f64,
        outages: server
            .outages
            .iter()
            .map(|o| (o.start.as_secs_f64(), o.end.as_secs_f64()))
            .collect(),
        panels,
    }
}

/// Draws the chart on `root`: title, one legend row, then a row of two panels per strategy.
pub fn draw<DB: DrawingBackend>(d: &LoadData, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
    let (head, body) = root.split_vertically(TITLE + d.legend_height());
    let (title_area, legend_area) = head.split_vertically(TITLE);
    draw_title(&title_area, &d.title)?;

    let (width, _) = root.dim_in_pixel();
    let split = (width as f64 * LEFT_SHARE) as i32;
    // Both legends in the header row, above their column, where they cannot hide a peak.
    let mut left_legend = vec![
        (Swatch::Fill(OUTAGE, 0.3), "outage".to_string()),
        (Swatch::Fill(INK, 0.3), "arrivals per second".to_string()),
    ];
    if let Some(cap) = d.capacity_rps {
        left_legend.push((
            Swatch::Line(INK, Some(CAPACITY_DASH)),
            format!("capacity {} req/s = {}", fmt_tick(cap), d.capacity_note),
        ));
    }
    if let Some(rate) = d.rate_limit_rps {
        left_legend.push((
            Swatch::Line(INK, Some(LIMIT_DASH)),
            format!("rate limit {} req/s", fmt_tick(rate)),
        ));
    }
    let left_x = LEFT_Y_AREA + 10;
    legend(&legend_area, (left_x, split - 10), &left_legend)?;
    let mut right_legend = vec![
        (Swatch::Fill(INK, 0.3), "in service + queued".to_string()),
        (
            Swatch::Line(INK, Some(CAPACITY_DASH)),
            format!("slots ({})", fmt_tick(d.slots)),
        ),
    ];
    if d.places > d.slots {
        right_legend.push((
            Swatch::Line(INK, Some(LIMIT_DASH)),
            format!("slots + queue ({})", fmt_tick(d.places)),
        ));
    }
    let right_x = split + RIGHT_Y_AREA + 10;
    legend(&legend_area, (right_x, width as i32 - 10), &right_legend)?;

    let rps_max = d
        .panels
        .iter()
        .flat_map(|p| p.arrivals_rps.iter().map(|v| v.1))
        .chain(d.capacity_rps)
        .chain(d.rate_limit_rps)
        .fold(0.0, f64::max);
    let held_max = d
        .panels
        .iter()
        .flat_map(|p| p.occupancy.iter().map(|v| v.1))
        .fold(d.places, f64::max);
    let rps_lines: Vec<(f64, (i32, i32))> = d
        .capacity_rps
        .map(|c| (c, CAPACITY_DASH))
        .into_iter()
        .chain(d.rate_limit_rps.map(|r| (r, LIMIT_DASH)))
        .collect();
    let mut held_lines = vec![(d.slots, CAPACITY_DASH)];
    if d.places > d.slots {
        held_lines.push((d.places, LIMIT_DASH));
    }

    let mut rest = body;
    let n = d.panels.len();
    for (i, panel) in d.panels.iter().enumerate() {
        let last = i + 1 == n;
        let row = if last {
            rest.clone()
        } else {
            let (row, below) = rest.split_vertically(ROW);
            rest = below;
            row
        };
        let (left, right) = row.split_horizontally(split);
        let frame = Frame {
            t_end: d.t_end,
            outages: &d.outages,
            last,
        };
        frame.panel(
            &left,
            &format!("{}: arrivals at the server", panel.strategy),
            ("req/s", LEFT_Y_AREA, 14),
            value_range(rps_max),
            (&panel.arrivals_rps, color(panel.color)),
            &rps_lines,
        )?;
        frame.panel(
            &right,
            &format!("{}: held by the server", panel.strategy),
            ("requests", RIGHT_Y_AREA, 7),
            value_range(held_max),
            (&panel.occupancy, color(panel.color)),
            &held_lines,
        )?;
    }
    Ok(())
}

/// What every panel of the chart shares.
struct Frame<'a> {
    t_end: f64,
    outages: &'a [(f64, f64)],
    last: bool,
}

impl Frame<'_> {
    /// One panel: shaded outages, the curve as a filled step area, dashed reference levels.
    /// `axis` is (y description, y label area width, number of x labels).
    fn panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        caption: &str,
        axis: (&str, i32, usize),
        y: Range<f64>,
        (curve, c): (&[(f64, f64)], RGBColor),
        levels: &[(f64, (i32, i32))],
    ) -> Result<(), String> {
        let (y_desc, y_area, x_labels) = axis;
        let mut chart = ChartBuilder::on(area)
            .caption(caption, text(18.0))
            .margin_left(10)
            .margin_right(20)
            .margin_top(2)
            .x_label_area_size(if self.last { 24 + X_DESC } else { 24 })
            .y_label_area_size(y_area)
            .build_cartesian_2d(0.0..self.t_end, y.clone())
            .map_err(msg)?;
        let mut mesh = chart.configure_mesh();
        mesh.x_labels(x_labels)
            .y_labels(4)
            .x_label_formatter(&|v| fmt_tick(*v))
            .y_label_formatter(&|v| fmt_tick(*v))
            .label_style(text(TICK))
            .axis_desc_style(text(DESC))
            .y_desc(y_desc)
            .light_line_style(WHITE.mix(0.0))
            .bold_line_style(INK.mix(0.08));
        if self.last {
            mesh.x_desc("time since start (s)");
        }
        mesh.draw().map_err(msg)?;
        let outages = self
            .outages
            .iter()
            .filter(|(s, _)| *s < self.t_end)
            .map(|(s, e)| {
                Rectangle::new(
                    [(*s, 0.0), (e.min(self.t_end), y.end)],
                    OUTAGE.mix(0.18).filled(),
                )
            });
        chart.draw_series(outages).map_err(msg)?;
        // The outline is 1 px wide: plotters' bitmap backend draws wider lines as polygons
        // that leak stray vertical strokes across panels on curves with vertical edges.
        chart
            .draw_series(AreaSeries::new(curve.iter().copied(), 0.0, c.mix(0.35)))
            .map_err(msg)?;
        chart
            .draw_series(LineSeries::new(curve.iter().copied(), c.stroke_width(1)))
            .map_err(msg)?;
        for (level, (dash, gap)) in levels {
            chart
                .draw_series(DashedLineSeries::new(
                    [(0.0, *level), (self.t_end, *level)],
                    *dash,
                    *gap,
                    INK.stroke_width(2),
                ))
                .map_err(msg)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::sweep::load_str;

    const SRC: &str = r#"
name = "t"
[clients]
count = 10
[network]
latency = { dist = "constant", value = "1ms" }
[server]
concurrency = 4
queue = 2
service = { dist = "constant", value = "20ms" }
[[server.outages]]
start = "0s"
end = "1s"
[retry]
max_attempts = 6
[metrics]
bucket = "500ms"
[[strategy]]
name = "a"
base = "100ms"
cap = "1s"
"#;

    #[test]
    fn series_turns_buckets_into_rates_steps_and_capacity() {
        let file = load_str("t.toml", SRC).unwrap();
        let result = crate::runner::run_scenario(&file, Default::default(), &|| ()).unwrap();
        let point = &result.points[0];
        let d = series(file.first(), point, "", 10_000);
        assert_eq!(d.capacity_rps, Some(200.0), "4 slots / 20 ms");
        assert_eq!((d.slots, d.places), (4.0, 6.0));
        assert_eq!(d.outages, vec![(0.0, 1.0)]);
        let timeline = point.strategies[0].timeline();
        assert_eq!(d.t_end, timeline.len() as f64 * 0.5);
        let arrivals = &d.panels[0].arrivals_rps;
        assert_eq!(arrivals.len(), 2 * timeline.len(), "two corners per bucket");
        // Arrivals per bucket become rates: a count in 0.5 s is twice that per second,
        // drawn flat over the bucket.
        let rate0 = timeline[0].arrivals() / 0.5;
        assert!(
            rate0 >= 20.0,
            "at least every first attempt lands in bucket 0"
        );
        assert_eq!(&arrivals[..2], &[(0.0, rate0), (0.5, rate0)]);
        let peak = timeline
            .iter()
            .map(|b| b.arrivals() / 0.5)
            .fold(0.0, f64::max);
        assert!(
            timeline.len() >= 4,
            "retries spread over {} buckets",
            timeline.len()
        );

        // Down-sampled to two bins, the highest step still reaches the peak, and the steps
        // still cover the whole time axis.
        let small = series(file.first(), point, "", 4);
        let curve = &small.panels[0].arrivals_rps;
        assert_eq!(curve.len(), 4, "two bins, two corners each");
        assert_eq!(curve.iter().map(|p| p.1).fold(0.0, f64::max), peak);
        assert_eq!(curve[0].0, 0.0);
        assert_eq!(curve.last().unwrap().0, d.t_end);
    }
}
