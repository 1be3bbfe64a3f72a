//! What the time-series charts (`attempts`, `load`) share: one panel over time with shaded
//! windows labelled by kind, filled step areas, and step lines (capacity, limits), on a
//! linear or logarithmic value axis.

use std::ops::Range;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::canvas::text_width;
use super::{
    DESC, INK, TICK, dash_segments, downsample_max, fmt_tick, log_range, log_ticks, msg, text,
    value_range,
};

/// A shaded window `[start, end)` (an outage), with its label.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    /// Start, seconds.
    pub start: f64,
    /// End, seconds.
    pub end: f64,
    /// Shade.
    pub color: RGBColor,
    /// Written at the top of the window, when given.
    pub label: Option<String>,
}

/// A filled step area up to `points`, from the axis floor or from another step curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Area {
    /// Step corners, (seconds, value): pairs of corners, one pair per bin.
    pub points: Vec<(f64, f64)>,
    /// Fill and outline colour.
    pub color: RGBColor,
    /// Fill opacity.
    pub alpha: f64,
    /// The curve the area stands on (same corners as `points`), for a stacked layer;
    /// `None` fills from the axis floor.
    pub under: Option<Vec<(f64, f64)>>,
}

/// A step line (capacity, slots, a rate limit).
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    /// Step corners, (seconds, value).
    pub points: Vec<(f64, f64)>,
    /// Colour.
    pub color: RGBColor,
    /// Dash pattern, `None` for solid.
    pub dash: Option<(i32, i32)>,
}

/// A value axis.
#[derive(Debug, Clone, PartialEq)]
pub struct YAxis {
    /// Logarithmic.
    pub log: bool,
    /// Range (`start > 0` when logarithmic).
    pub range: Range<f64>,
}

impl YAxis {
    /// The axis for `values`: logarithmic when `log` (from the power of ten below the
    /// smallest positive value), else linear from 0; with headroom.
    pub fn new(values: impl IntoIterator<Item = f64> + Clone, log: bool) -> YAxis {
        if log && let Some(range) = log_range(values.clone(), 3.0) {
            return YAxis { log: true, range };
        }
        let max = values
            .into_iter()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        YAxis {
            log: false,
            range: value_range(max),
        }
    }
}

/// Buckets `(t, value)` as a step curve: binned to at most `max_points / 2` bins (keeping
/// each bin's maximum, so a one-bucket spike survives), each bin drawn flat over its width.
pub fn steps(values: &[(f64, f64)], bucket: f64, max_points: usize) -> Vec<(f64, f64)> {
    let bins = downsample_max(values, max_points / 2);
    let mut out = Vec::with_capacity(2 * bins.len());
    for (i, (t, v)) in bins.iter().enumerate() {
        let end = bins
            .get(i + 1)
            .map(|b| b.0)
            .unwrap_or_else(|| values.last().map(|p| p.0).unwrap_or(*t) + bucket);
        out.push((*t, *v));
        out.push((end, *v));
    }
    out
}

/// A gauge sampled per bucket `(t, value)` as a step line: one corner pair per change,
/// running on to `t_end`.
pub fn level_steps(values: &[(f64, f64)], t_end: f64) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    for &(t, v) in values {
        match out.last() {
            Some(&(_, last)) if last == v => {}
            Some(_) => {
                out.push((t, out.last().map(|p| p.1).unwrap_or(v)));
                out.push((t, v));
            }
            None => out.push((t, v)),
        }
    }
    if let Some(&(_, v)) = out.last() {
        out.push((t_end, v));
    }
    out
}

/// One panel, and how to draw it.
pub struct Spec<'a> {
    /// Caption above the panel.
    pub caption: &'a str,
    /// Value-axis description.
    pub y_desc: &'a str,
    /// Width of the value-axis label area.
    pub y_area: i32,
    /// Number of time labels.
    pub x_labels: usize,
    /// Right end of the time axis, seconds.
    pub t_end: f64,
    /// The value axis.
    pub y: &'a YAxis,
    /// Shaded windows.
    pub bands: &'a [Band],
    /// Filled areas, drawn in order.
    pub areas: &'a [Area],
    /// Step lines, drawn over the areas.
    pub levels: &'a [Level],
    /// Whether this is the bottom panel (it names the time axis).
    pub last: bool,
}

/// Height of the time-axis description under the bottom panel.
pub const X_DESC: u32 = 24;

/// Draws one panel on `area`.
pub fn panel<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, s: &Spec) -> Result<(), String> {
    if s.y.log {
        let r = s.y.range.clone();
        let ticks = log_ticks(&r, 5);
        panel_on(area, s, r.log_scale().with_key_points(ticks))
    } else {
        panel_on(area, s, s.y.range.clone())
    }
}

fn panel_on<DB, Y>(area: &DrawingArea<DB, Shift>, s: &Spec, y: Y) -> Result<(), String>
where
    DB: DrawingBackend,
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let floor = s.y.range.start;
    let top = s.y.range.end;
    // The caption at the largest size that fits the panel (long names in narrow columns).
    let (width, _) = area.dim_in_pixel();
    let size = [18.0, 16.0, 14.0, 12.0]
        .into_iter()
        .find(|size| text_width(s.caption, *size) <= width as f64 - 16.0)
        .unwrap_or(11.0);
    let mut chart = ChartBuilder::on(area)
        .caption(s.caption, text(size))
        .margin_left(10)
        .margin_right(20)
        .margin_top(2)
        .x_label_area_size(if s.last { 24 + X_DESC } else { 24 })
        .y_label_area_size(s.y_area)
        .build_cartesian_2d(0.0..s.t_end, y)
        .map_err(msg)?;
    let y_desc = if s.y.log {
        format!("{} (log)", s.y_desc)
    } else {
        s.y_desc.to_string()
    };
    let mut mesh = chart.configure_mesh();
    mesh.x_labels(s.x_labels)
        .y_labels(4)
        .x_label_formatter(&|v| fmt_tick(*v))
        .y_label_formatter(&|v| fmt_tick(*v))
        .label_style(text(TICK))
        .axis_desc_style(text(DESC))
        .y_desc(y_desc)
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(INK.mix(0.08));
    if s.last {
        mesh.x_desc("time since start (s)");
    }
    mesh.draw().map_err(msg)?;
    for b in s.bands.iter().filter(|b| b.start < s.t_end) {
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(b.start, floor), (b.end.min(s.t_end), top)],
                b.color.mix(0.2).filled(),
            )))
            .map_err(msg)?;
    }
    for a in s.areas {
        let points: Vec<(f64, f64)> = a.points.iter().map(|&(t, v)| (t, v.max(floor))).collect();
        match &a.under {
            None => {
                chart
                    .draw_series(AreaSeries::new(
                        points.iter().copied(),
                        floor,
                        a.color.mix(a.alpha),
                    ))
                    .map_err(msg)?;
            }
            Some(under) => {
                // One band per bin, between the two curves.
                let bins = points.chunks_exact(2).zip(under.chunks_exact(2));
                chart
                    .draw_series(
                        bins.filter(|(p, u)| p[0].1 > u[0].1.max(floor))
                            .map(|(p, u)| {
                                Rectangle::new(
                                    [(p[0].0, u[0].1.max(floor)), (p[1].0, p[0].1)],
                                    a.color.mix(a.alpha).filled(),
                                )
                            }),
                    )
                    .map_err(msg)?;
            }
        }
        // The outline is 1 px wide: plotters' bitmap backend draws wider lines as polygons
        // that leak stray vertical strokes across panels on curves with vertical edges.
        chart
            .draw_series(LineSeries::new(points, a.color.stroke_width(1)))
            .map_err(msg)?;
    }
    let plot = chart.plotting_area();
    let (ox, oy) = plot.get_base_pixel();
    let shift = plot.strip_coord_spec();
    for l in s.levels {
        let px: Vec<(i32, i32)> = l
            .points
            .iter()
            .map(|&(t, v)| {
                let (x, y) = plot.map_coordinate(&(t.min(s.t_end), v.clamp(floor, top)));
                (x - ox, y - oy)
            })
            .collect();
        match l.dash {
            None => shift
                .draw(&PathElement::new(px, l.color.stroke_width(2)))
                .map_err(msg)?,
            Some((on, off)) => {
                for seg in dash_segments(&px, on as f64, off as f64) {
                    shift
                        .draw(&PathElement::new(seg, l.color.stroke_width(2)))
                        .map_err(msg)?;
                }
            }
        }
    }
    let style = text(TICK).pos(Pos::new(HPos::Left, VPos::Top));
    let windows: Vec<(i32, i32, i32, &String)> = s
        .bands
        .iter()
        .filter(|b| b.start < s.t_end)
        .filter_map(|b| {
            let label = b.label.as_ref()?;
            let (start, _) = plot.map_coordinate(&(b.start, top));
            let (end, _) = plot.map_coordinate(&(b.end.min(s.t_end), top));
            let w = text_width(label, TICK).ceil() as i32;
            Some((start - ox, end - ox, w, label))
        })
        .collect();
    let spots = label_spots(windows.iter().map(|&(start, end, w, _)| (start, end, w)));
    for (&(_, _, w, label), spot) in windows.iter().zip(spots) {
        let Some((x, line)) = spot else { continue };
        let y = 3 + 17 * line as i32;
        // On a light box, so a capacity line near the top does not cross the words.
        shift
            .draw(&Rectangle::new(
                [(x - 2, y - 1), (x + w + 2, y + 15)],
                WHITE.mix(0.75).filled(),
            ))
            .map_err(msg)?;
        shift
            .draw(&Text::new(label.clone(), (x, y), style.clone()))
            .map_err(msg)?;
    }
    Ok(())
}

/// Where each band's label goes, from its window's pixel span `(start, end)` and the
/// label's width: `(x, line)`, or `None` when three lines are taken. A label sits at the
/// right end of its window, since the trouble's first wave stands at its start (a herd at
/// t = 0), where a label's box would cover it; it starts at the window's start when the
/// window is narrower, and moves a line down when it would overlap one already placed.
fn label_spots(windows: impl Iterator<Item = (i32, i32, i32)>) -> Vec<Option<(i32, usize)>> {
    let mut placed: Vec<Vec<(i32, i32)>> = Vec::new();
    windows
        .map(|(start, end, w)| {
            let x = (end - 3 - w).max(start + 3);
            let span = (x - 4, x + w + 4);
            let free = |line: &Vec<(i32, i32)>| line.iter().all(|&(a, z)| z < span.0 || a > span.1);
            let line = (0..3).find(|&l| placed.get(l).is_none_or(free))?;
            if placed.len() <= line {
                placed.push(Vec::new());
            }
            placed[line].push(span);
            Some((x, line))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_stand_at_the_right_end_of_their_window_clear_of_the_first_wave() {
        let spots = label_spots(
            [
                // A 5 s window from pixel 0 to 200, label 40 wide: at its right end, clear
                // of the bar at its start.
                (0, 200, 40),
                // A window narrower than its label: from its start, on the next line, since
                // it overlaps the first.
                (150, 160, 40),
                // Far to the right: the first line again.
                (400, 600, 40),
                // Overlapping everything on three lines: not drawn.
                (150, 200, 40),
                (150, 200, 40),
            ]
            .into_iter(),
        );
        assert_eq!(
            spots,
            [
                Some((157, 0)),
                Some((153, 1)),
                Some((557, 0)),
                Some((157, 2)),
                None
            ]
        );
    }

    #[test]
    fn a_gauge_becomes_one_step_per_change() {
        let g = [
            (0.0, 200.0),
            (1.0, 200.0),
            (2.0, 50.0),
            (3.0, 50.0),
            (4.0, 200.0),
        ];
        assert_eq!(
            level_steps(&g, 5.0),
            [
                (0.0, 200.0),
                (2.0, 200.0),
                (2.0, 50.0),
                (4.0, 50.0),
                (4.0, 200.0),
                (5.0, 200.0)
            ]
        );
    }

    #[test]
    fn a_log_axis_starts_at_the_power_of_ten_below_the_smallest_value() {
        let y = YAxis::new([0.0, 30.0, 100_000.0], true);
        assert!(y.log);
        assert_eq!(y.range.start, 10.0);
        assert!(y.range.end >= 100_000.0);
        let y = YAxis::new([0.0, 30.0, 100_000.0], false);
        assert!(!y.log && y.range.start == 0.0);
    }
}
