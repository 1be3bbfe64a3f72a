//! `latency`: the distribution of request latency (end minus when the request began,
//! success or give-up) as one CDF curve per strategy, drawn from the 201 pooled quantiles of
//! [`StrategySummary::latency_quantiles`](crate::metrics::summary::StrategySummary). The time
//! axis turns logarithmic when the latencies span two decades or more.

use std::ops::Range;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

use super::{
    DESC, INK, Swatch, TICK, dash_segments, fmt_tick, header, log_ticks, look, marker_shape, msg,
    text,
};
use crate::runner::PointResult;

/// Chart size.
pub const SIZE: (u32, u32) = (1100, 560);

/// Ratio of the largest to the smallest latency from which the time axis is logarithmic.
const LOG_FROM_RATIO: f64 = 100.0;

/// One strategy's CDF.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// Strategy name.
    pub strategy: String,
    /// Index into the palette.
    pub color: usize,
    /// (latency in seconds, percent of requests finished within it), non-decreasing.
    pub points: Vec<(f64, f64)>,
}

/// The latency chart's numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyData {
    /// Chart title.
    pub title: String,
    /// The time axis, seconds (`start < end`; `start > 0` when logarithmic).
    pub x: Range<f64>,
    /// Whether the time axis is logarithmic.
    pub log_x: bool,
    /// One curve per strategy, in scenario order.
    pub curves: Vec<Curve>,
}

/// Prepares the latency chart of one point; `at` is appended to the title.
pub fn series(name: &str, point: &PointResult, at: &str) -> LatencyData {
    let curves: Vec<Curve> = point
        .strategies
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let q = &s.summary.latency_quantiles;
            let last = q.len().saturating_sub(1).max(1) as f64;
            Curve {
                strategy: s.summary.strategy.clone(),
                color: i,
                points: q
                    .iter()
                    .enumerate()
                    .map(|(k, v)| (*v, 100.0 * k as f64 / last))
                    .collect(),
            }
        })
        .collect();
    let all = || curves.iter().flat_map(|c| c.points.iter().map(|p| p.0));
    let hi = all().fold(0.0, f64::max);
    let lo_pos = all().filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
    let log_x = lo_pos.is_finite() && hi / lo_pos >= LOG_FROM_RATIO;
    let x = if log_x {
        lo_pos * 0.8..hi * 1.25
    } else if hi > 0.0 {
        0.0..hi * 1.05
    } else {
        0.0..1.0
    };
    LatencyData {
        title: format!("{name}{at}: latency of every request, success or give-up"),
        x,
        log_x,
        curves,
    }
}

/// Draws the chart on `root`.
pub fn draw<DB: DrawingBackend>(
    d: &LatencyData,
    root: &DrawingArea<DB, Shift>,
) -> Result<(), String> {
    if d.log_x {
        let ticks = log_ticks(&d.x, 12);
        draw_on(
            d,
            root,
            d.x.clone().log_scale().with_key_points(ticks),
            "latency (s) (log)",
        )
    } else {
        draw_on(d, root, d.x.clone(), "latency (s)")
    }
}

/// The drawing, generic over a linear or logarithmic time axis.
fn draw_on<DB, X>(
    d: &LatencyData,
    root: &DrawingArea<DB, Shift>,
    x: X,
    x_desc: &str,
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let entries: Vec<(Swatch, String)> = d
        .curves
        .iter()
        .map(|c| (Swatch::Look(look(c.color)), c.strategy.clone()))
        .chain(std::iter::once((
            Swatch::Dot(INK, 0),
            "markers at p50, p90 and p99".to_string(),
        )))
        .collect();
    let body = header(root, &d.title, 16 + 80, &entries)?;
    let mut chart = ChartBuilder::on(&body)
        .margin(16)
        .margin_top(8)
        .margin_right(30)
        .x_label_area_size(55)
        .y_label_area_size(80)
        .build_cartesian_2d(x, 0.0..100.0)
        .map_err(msg)?;
    chart
        .configure_mesh()
        .x_labels(12)
        .y_labels(11)
        .x_label_formatter(&|v| fmt_tick(*v))
        .y_label_formatter(&|v| format!("{v:.0}%"))
        .label_style(text(TICK))
        .axis_desc_style(text(DESC))
        .x_desc(x_desc)
        .y_desc("requests finished within (%)")
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(INK.mix(0.08))
        .draw()
        .map_err(msg)?;
    let floor = d.x.start;
    let plot = chart.plotting_area();
    let (ox, oy) = plot.get_base_pixel();
    let shift = plot.strip_coord_spec();
    for curve in &d.curves {
        let l = look(curve.color);
        // On a log axis a zero latency has no place: it is drawn at the left edge.
        let px: Vec<(i32, i32)> = curve
            .points
            .iter()
            .map(|(t, p)| {
                let (x, y) = plot.map_coordinate(&(t.max(floor), *p));
                (x - ox, y - oy)
            })
            .collect();
        let pieces = match l.dash {
            None => vec![px.clone()],
            Some((on, off)) => dash_segments(&px, on as f64, off as f64),
        };
        for piece in pieces {
            shift
                .draw(&PathElement::new(piece, l.color.stroke_width(2)))
                .map_err(msg)?;
        }
        // The strategy's marker at p50, p90 and p99.
        let last = curve.points.len().saturating_sub(1);
        for q in [0.5, 0.9, 0.99] {
            let k = ((q * last as f64).round() as usize).min(last);
            if let Some(&p) = px.get(k) {
                shift
                    .draw(&(EmptyElement::at(p) + marker_shape(l.marker, l.color)))
                    .map_err(msg)?;
            }
        }
    }
    Ok(())
}
