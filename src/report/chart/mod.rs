//! Charts: the pictures of a run, drawn with plotters as SVG and PNG.
//!
//! This module owns what every chart shares: the chart list of a scenario ([`charts`]), the
//! colour palette, the bundled font, number formatting on axes, the down-sampler, and
//! the two renderers ([`render_svg`], [`render_png`]). Each chart kind lives in its own file
//! (criterion's `plot/plotters_backend/` layout) and is split in two: a pure `series(...)`
//! that turns results into plain numbers (unit-testable, no plotters types), and a
//! `draw(...)` generic over the plotters backend, so one drawing routine makes both formats.
//! Where the files go is decided by [`crate::report`]; nothing here panics on a plotters
//! failure: every drawing call's error becomes a message that the caller turns into
//! [`crate::Error::Chart`].

pub mod canvas;
pub mod latency;
pub mod load;
pub mod summary;
pub mod sweep;

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{FontStyle, RGBColor, register_font};

use crate::runner::ScenarioResult;
use crate::scenario::sweep::ScenarioFile;

/// DejaVu Sans 2.37 (Bitstream Vera licence, see `assets/fonts/LICENSE-DejaVu.txt`). Bundled
/// so that PNG text renders on a machine with no system fonts: plotters' `ab_glyph` backend
/// reads only fonts registered from memory and never asks fontconfig.
pub(crate) static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

/// The family every chart asks for. Registering the bundled font under this name makes PNG
/// text use it, while SVG `<text>` elements say `font-family="sans-serif"` and let the
/// browser pick its own sans-serif.
const FAMILY: &str = "sans-serif";

/// Points kept per drawn series: about one per horizontal pixel of a panel, so down-sampling
/// is invisible while a million-bucket series still draws in milliseconds.
pub const MAX_DRAWN_POINTS: usize = 1200;

/// The Okabe-Ito palette, reordered so the first four are the most distinct on white and for
/// the common colour-vision deficiencies (yellow, weak on white, comes last).
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
    RGBColor(240, 228, 66),  // yellow
];

/// The colour of the strategy at `index` (scenario order), the same in every chart.
pub fn color(index: usize) -> RGBColor {
    PALETTE[index % PALETTE.len()]
}

/// Font size of tick labels, legends and values on bars (plotters units: 1.24 per pixel).
pub(crate) const TICK: f64 = 16.0;
/// Font size of axis descriptions.
pub(crate) const DESC: f64 = 17.0;

/// Ink for text, axes and reference lines.
pub(crate) const INK: RGBColor = RGBColor(40, 40, 40);
/// Fill of outage windows.
pub(crate) const OUTAGE: RGBColor = RGBColor(120, 120, 120);

/// A chart kind; each gives one file stem (`load.png`, `load.svg`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartKind {
    /// Server arrivals per second over time, one panel per strategy.
    Load,
    /// Calls, completion time and peak load per strategy.
    Summary,
    /// Latency CDF per strategy.
    Latency,
    /// Calls against the first swept key.
    SweepCalls,
    /// Completion time against the first swept key.
    SweepCompletion,
    /// Peak load against the first swept key.
    SweepPeak,
}

impl ChartKind {
    /// The file stem.
    pub fn stem(self) -> &'static str {
        match self {
            ChartKind::Load => "load",
            ChartKind::Summary => "summary",
            ChartKind::Latency => "latency",
            ChartKind::SweepCalls => "sweep_calls",
            ChartKind::SweepCompletion => "sweep_completion",
            ChartKind::SweepPeak => "sweep_peak",
        }
    }
}

/// One chart, prepared for drawing: plain numbers and labels, no plotters state.
#[derive(Debug, Clone, PartialEq)]
pub enum Chart {
    /// See [`load`].
    Load(load::LoadData),
    /// See [`summary`].
    Summary(summary::SummaryData),
    /// See [`latency`].
    Latency(latency::LatencyData),
    /// See [`sweep`].
    Sweep(sweep::SweepData),
}

impl Chart {
    /// Which chart this is.
    pub fn kind(&self) -> ChartKind {
        match self {
            Chart::Load(_) => ChartKind::Load,
            Chart::Summary(_) => ChartKind::Summary,
            Chart::Latency(_) => ChartKind::Latency,
            Chart::Sweep(d) => d.kind,
        }
    }

    /// Size in pixels (PNG) or user units (SVG).
    pub fn size(&self) -> (u32, u32) {
        match self {
            Chart::Load(d) => d.size(),
            Chart::Summary(_) => summary::SIZE,
            Chart::Latency(_) => latency::SIZE,
            Chart::Sweep(_) => sweep::SIZE,
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        root.fill(&WHITE).map_err(msg)?;
        match self {
            Chart::Load(d) => load::draw(d, root),
            Chart::Summary(d) => summary::draw(d, root),
            Chart::Latency(d) => latency::draw(d, root),
            Chart::Sweep(d) => sweep::draw(d, root),
        }?;
        root.present().map_err(msg)
    }
}

/// Every chart of a scenario file, in report order: load, summary and latency (of the last
/// sweep point, the heaviest in a typical sweep), then the sweep charts when there are swept
/// keys. Pure: the same results give the same charts.
pub fn charts(file: &ScenarioFile, result: &ScenarioResult) -> Vec<Chart> {
    let Some((index, point)) = result.points.iter().enumerate().next_back() else {
        return Vec::new();
    };
    let scenario = &file.points[index].scenario;
    let at = point_label(file, index);
    let mut out = vec![
        Chart::Load(load::series(scenario, point, &at, MAX_DRAWN_POINTS)),
        Chart::Summary(summary::series(scenario, point, &at)),
        Chart::Latency(latency::series(&scenario.name, point, &at)),
    ];
    if !file.axes.is_empty() {
        for metric in [
            sweep::Metric::Calls,
            sweep::Metric::Completion,
            sweep::Metric::Peak,
        ] {
            out.push(Chart::Sweep(sweep::series(file, result, metric)));
        }
    }
    out
}

/// ` at clients.count = 200, ...` for a sweep point; empty without a sweep.
pub fn point_label(file: &ScenarioFile, index: usize) -> String {
    if file.axes.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = file
        .axes
        .iter()
        .zip(&file.points[index].labels)
        .map(|(a, l)| format!("{} = {l}", a.path))
        .collect();
    format!(" at {}", parts.join(", "))
}

/// Registers the bundled font once per process; later calls return the first outcome.
fn ensure_font() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            register_font(FAMILY, FontStyle::Normal, FONT)
                .map_err(|_| "the bundled font DejaVuSans.ttf is not a valid font".to_string())
        })
        .clone()
}

/// Draws `chart` as an SVG document, in memory.
pub fn render_svg(chart: &Chart) -> Result<String, String> {
    ensure_font()?;
    let mut svg = String::new();
    let fragments = Rc::new(RefCell::new(canvas::Fragments::default()));
    {
        let backend = SVGBackend::with_string(&mut svg, chart.size());
        let root = canvas::SvgCanvas::new(backend, fragments.clone()).into_drawing_area();
        chart.draw(&root)?;
    }
    let prefix = format!("{}-g", chart.kind().stem());
    Ok(canvas::finish_svg(&svg, &fragments.borrow(), &prefix))
}

/// Draws `chart` as a PNG file at `path`. The encoder picks the format from the extension,
/// so `path` must end in `.png`; callers pass a temporary name and rename it into place.
pub fn render_png(chart: &Chart, path: &Path) -> Result<(), String> {
    ensure_font()?;
    let root = canvas::PngCanvas::new(BitMapBackend::new(path, chart.size())).into_drawing_area();
    chart.draw(&root)
}

/// Turns a plotters error into the message of [`crate::Error::Chart`].
pub(crate) fn msg<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// A text style in the chart family.
pub(crate) fn text(size: f64) -> TextStyle<'static> {
    TextStyle::from((FAMILY, size).into_font()).color(&INK)
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
    let s = if a >= 100.0 || (v.fract() == 0.0 && a < 1e15) {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
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

/// The mark drawn before a legend entry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Swatch {
    /// A filled square (areas, bars, shaded windows).
    Fill(RGBColor, f64),
    /// A line; `dash` = (dash, gap) in pixels, `None` for solid.
    Line(RGBColor, Option<(i32, i32)>),
    /// A solid line with a marker (see [`marker_shape`]).
    Marker(RGBColor, usize),
}

/// Height of one line of legend entries.
const LEGEND_LINE: i32 = 24;

/// Where each legend entry goes: (x, line), filling lines from `x0` and wrapping before `x1`.
fn legend_layout<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x0, x1): (i32, i32),
    entries: &[(Swatch, String)],
) -> Result<Vec<(i32, i32)>, String> {
    let style = text(TICK);
    let mut out = Vec::with_capacity(entries.len());
    let (mut x, mut line) = (x0, 0);
    for (_, label) in entries {
        let (w, _) = area.estimate_text_size(label, &style).map_err(msg)?;
        let width = 28 + w as i32;
        if x > x0 && x + width > x1 {
            (x, line) = (x0, line + 1);
        }
        out.push((x, line));
        x += width + 22;
    }
    Ok(out)
}

/// Height a legend of `entries` needs between `x0` and `x1` (0 without entries).
pub(crate) fn legend_height<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    span: (i32, i32),
    entries: &[(Swatch, String)],
) -> Result<u32, String> {
    let lines = legend_layout(area, span, entries)?
        .iter()
        .map(|p| p.1 + 1)
        .max()
        .unwrap_or(0);
    Ok((lines * LEGEND_LINE) as u32)
}

/// Draws legend entries from `x0`, wrapping before `x1`, from the top of `area`.
/// A legend in its own band never hides data, which an in-plot legend box can.
pub(crate) fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    span: (i32, i32),
    entries: &[(Swatch, String)],
) -> Result<(), String> {
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    let style = text(TICK).pos(Pos::new(HPos::Left, VPos::Center));
    let positions = legend_layout(area, span, entries)?;
    for ((swatch, label), (x, line)) in entries.iter().zip(positions) {
        let y = line * LEGEND_LINE + LEGEND_LINE / 2;
        match *swatch {
            Swatch::Fill(c, alpha) => area
                .draw(&Rectangle::new(
                    [(x, y - 7), (x + 22, y + 7)],
                    c.mix(alpha).filled(),
                ))
                .map_err(msg)?,
            Swatch::Line(c, None) => area
                .draw(&PathElement::new([(x, y), (x + 22, y)], c.stroke_width(3)))
                .map_err(msg)?,
            Swatch::Line(c, Some((dash, gap))) => {
                let mut from = x;
                while from < x + 22 {
                    let to = (from + dash).min(x + 22);
                    area.draw(&PathElement::new([(from, y), (to, y)], c.stroke_width(2)))
                        .map_err(msg)?;
                    from = to + gap;
                }
            }
            Swatch::Marker(c, marker) => {
                area.draw(&PathElement::new([(x, y), (x + 22, y)], c.stroke_width(3)))
                    .map_err(msg)?;
                area.draw(&(EmptyElement::at((x + 11, y)) + marker_shape(marker, c)))
                    .map_err(msg)?;
            }
        }
        area.draw(&Text::new(label.clone(), (x + 28, y), style.clone()))
            .map_err(msg)?;
    }
    Ok(())
}

/// A marker centred on its anchor: circle, triangle, square, diamond, in turn.
pub(crate) fn marker_shape<DB: DrawingBackend>(
    marker: usize,
    c: RGBColor,
) -> DynElement<'static, DB, (i32, i32)> {
    let style = c.filled();
    match marker % 4 {
        0 => Circle::new((0, 0), 5, style).into_dyn(),
        1 => Polygon::new(vec![(0, -6), (6, 5), (-6, 5)], style).into_dyn(),
        2 => Rectangle::new([(-5, -5), (5, 5)], style).into_dyn(),
        _ => Polygon::new(vec![(0, -7), (7, 0), (0, 7), (-7, 0)], style).into_dyn(),
    }
}

/// Height of the title band.
const TITLE_HEIGHT: u32 = 40;

/// Draws `title` and a legend band below it (entries from `x0` on), and returns the area
/// left for the plot.
pub(crate) fn header<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x0: i32,
    entries: &[(Swatch, String)],
) -> Result<DrawingArea<DB, Shift>, String> {
    let (w, _) = root.dim_in_pixel();
    let span = (x0, w as i32 - 20);
    let legend_h = legend_height(root, span, entries)?;
    let (head, body) = root.split_vertically(TITLE_HEIGHT + legend_h);
    let (title_area, legend_area) = head.split_vertically(TITLE_HEIGHT);
    draw_title(&title_area, title)?;
    legend(&legend_area, span, entries)?;
    Ok(body)
}

/// Draws `title` centred in `area`: at full size when it fits, else smaller, else on two
/// lines split at the space nearest the middle (long sweep-point titles).
pub(crate) fn draw_title<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
) -> Result<(), String> {
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    let (w, h) = area.dim_in_pixel();
    let room = w.saturating_sub(24);
    let centred = |size: f64| text(size).pos(Pos::new(HPos::Center, VPos::Center));
    for size in [25.0, 21.0] {
        let (tw, _) = area
            .estimate_text_size(title, &centred(size))
            .map_err(msg)?;
        if tw <= room {
            return area
                .draw(&Text::new(
                    title.to_string(),
                    (w as i32 / 2, h as i32 / 2),
                    centred(size),
                ))
                .map_err(msg);
        }
    }
    let middle = title.len() / 2;
    let split = title
        .match_indices(' ')
        .map(|(i, _)| i)
        .min_by_key(|i| i.abs_diff(middle))
        .unwrap_or(title.len());
    let (first, second) = title.split_at(split);
    let quarter = h as i32 / 4;
    for (line, y) in [(first.trim(), quarter), (second.trim(), 3 * quarter)] {
        area.draw(&Text::new(
            line.to_string(),
            (w as i32 / 2, y + 1),
            centred(18.0),
        ))
        .map_err(msg)?;
    }
    Ok(())
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
    fn the_bundled_font_registers() {
        assert_eq!(ensure_font(), Ok(()));
    }
}
