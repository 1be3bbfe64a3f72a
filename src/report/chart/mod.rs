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

pub mod attempts;
pub mod canvas;
pub mod latency;
pub mod load;
pub mod raster;
pub mod rows;
pub mod summary;
pub mod sweep;
pub mod timeseries;

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{FontStyle, RGBColor, register_font};

use crate::model::service::OutageKind;
use crate::runner::ScenarioResult;
use crate::scenario::sweep::ScenarioFile;

/// DejaVu Sans 2.37 (Bitstream Vera licence, see `assets/fonts/LICENSE-DejaVu.txt`). Bundled
/// so that text renders the same on every machine: both formats draw its glyphs themselves
/// (see [`canvas`]) and never ask the system for a font.
pub(crate) static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

/// The family every chart asks plotters for; the bundled font is registered under it.
const FAMILY: &str = "sans-serif";

/// Points kept per drawn series: about one per horizontal pixel of a panel, so down-sampling
/// is invisible while a million-bucket series still draws in milliseconds.
pub const MAX_DRAWN_POINTS: usize = 1200;

/// What the caller can change about the charts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChartOptions {
    /// A logarithmic value axis on every chart that has one (`--log-y`). Without it, an
    /// axis turns logarithmic by itself where its data span more than [`LOG_SPAN`] times.
    pub log_y: bool,
}

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

/// The Okabe-Ito palette without its yellow (weak on white), then three of Paul Tol's
/// colours: ten colours; with the markers and dashes of [`look`], strategies stay apart
/// well beyond ten.
pub const PALETTE: [RGBColor; 10] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(40, 40, 40),    // near black
    RGBColor(136, 34, 85),   // wine
    RGBColor(153, 153, 51),  // olive
    RGBColor(51, 34, 136),   // indigo
];

/// Marker shapes, in [`look`] order (see [`marker_shape`]).
pub const MARKERS: usize = 7;

/// Dash patterns (dash, gap) in pixels, in [`look`] order; `None` is solid.
pub const DASHES: [Option<(i32, i32)>; 4] = [None, Some((10, 5)), Some((3, 4)), Some((18, 6))];

/// How one strategy is drawn, the same in every chart: colour, marker and dash.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Look {
    /// Line and fill colour.
    pub color: RGBColor,
    /// Marker shape index.
    pub marker: usize,
    /// Line dash pattern.
    pub dash: Option<(i32, i32)>,
}

/// The look of the strategy at `index` (scenario order). Colours cycle every 10, markers
/// every 7 and dashes every 4, so no two of the first 70 strategies share both colour and
/// marker, and two that share a colour (10 apart) also differ in dash unless 20 apart.
pub fn look(index: usize) -> Look {
    Look {
        color: PALETTE[index % PALETTE.len()],
        marker: index % MARKERS,
        dash: DASHES[index % DASHES.len()],
    }
}

/// The colour of the strategy at `index` (scenario order), the same in every chart.
pub fn color(index: usize) -> RGBColor {
    look(index).color
}

/// Font size of tick labels, legends and values on bars (plotters units: 1.24 per pixel).
pub(crate) const TICK: f64 = 16.0;
/// Font size of axis descriptions.
pub(crate) const DESC: f64 = 17.0;

/// Ink for text, axes and reference lines.
pub(crate) const INK: RGBColor = RGBColor(40, 40, 40);
/// Fill of outage windows.
pub(crate) const OUTAGE: RGBColor = RGBColor(120, 120, 120);

/// The shade and the words for an outage window of each kind: hard failures grey (down),
/// purple (unreachable) and red (crash), brownouts orange (errors) and yellow (slow).
pub fn outage_style(kind: &OutageKind) -> (RGBColor, String) {
    match kind {
        OutageKind::Down => (OUTAGE, "down".into()),
        OutageKind::Unreachable => (RGBColor(120, 90, 170), "unreachable".into()),
        OutageKind::Crash => (RGBColor(190, 40, 40), "crash".into()),
        OutageKind::Errors(rate) => (
            RGBColor(230, 120, 0),
            format!("errors ({}% served)", fmt_value(rate * 100.0)),
        ),
        OutageKind::Slow(f) => (RGBColor(200, 170, 0), format!("slow (x{})", fmt_value(*f))),
    }
}

/// A chart kind; each gives one file stem (`load.png`, `load.svg`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartKind {
    /// The strategies side by side: work, completion, peaks, requests lost.
    Summary,
    /// First attempts and retries per bucket, capacity and outages: the storm.
    Attempts,
    /// Arrivals at each service over time, one panel per strategy.
    Load,
    /// Every attempt of the sampled clients, coloured by outcome.
    Raster,
    /// Latency CDF per strategy.
    Latency,
    /// Requests, calls and outcomes per population.
    Populations,
    /// Calls and peaks per service.
    Services,
    /// Paired differences from the first strategy, with their intervals (forest plot).
    Paired,
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
            ChartKind::Summary => "summary",
            ChartKind::Attempts => "attempts",
            ChartKind::Load => "load",
            ChartKind::Raster => "raster",
            ChartKind::Latency => "latency",
            ChartKind::Populations => "populations",
            ChartKind::Services => "services",
            ChartKind::Paired => "paired",
            ChartKind::SweepCalls => "sweep_calls",
            ChartKind::SweepCompletion => "sweep_completion",
            ChartKind::SweepPeak => "sweep_peak",
        }
    }
}

/// One chart, prepared for drawing: plain numbers and labels, no plotters state.
#[derive(Debug, Clone, PartialEq)]
pub enum Chart {
    /// See [`rows`]: the summary, populations, services and paired charts.
    Rows(ChartKind, rows::RowsData),
    /// See [`attempts`].
    Attempts(attempts::AttemptsData),
    /// See [`load`].
    Load(load::LoadData),
    /// See [`raster`].
    Raster(raster::RasterData),
    /// See [`latency`].
    Latency(latency::LatencyData),
    /// See [`sweep`].
    Sweep(sweep::SweepData),
}

impl Chart {
    /// Which chart this is.
    pub fn kind(&self) -> ChartKind {
        match self {
            Chart::Rows(k, _) => *k,
            Chart::Attempts(_) => ChartKind::Attempts,
            Chart::Load(_) => ChartKind::Load,
            Chart::Raster(_) => ChartKind::Raster,
            Chart::Latency(_) => ChartKind::Latency,
            Chart::Sweep(d) => d.kind,
        }
    }

    /// Size in pixels (PNG) or user units (SVG).
    pub fn size(&self) -> (u32, u32) {
        match self {
            Chart::Rows(_, d) => d.size(),
            Chart::Attempts(d) => d.size(),
            Chart::Load(d) => d.size(),
            Chart::Raster(d) => d.size(),
            Chart::Latency(_) => latency::SIZE,
            Chart::Sweep(_) => sweep::SIZE,
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        root.fill(&WHITE).map_err(msg)?;
        match self {
            Chart::Rows(_, d) => rows::draw(d, root),
            Chart::Attempts(d) => attempts::draw(d, root),
            Chart::Load(d) => load::draw(d, root),
            Chart::Raster(d) => raster::draw(d, root),
            Chart::Latency(d) => latency::draw(d, root),
            Chart::Sweep(d) => sweep::draw(d, root),
        }?;
        root.present().map_err(msg)
    }
}

/// Every chart of a scenario file, in report order: summary, attempts, load, raster (when an
/// attempt sample was recorded), latency, populations (with several), services (with
/// several), paired (with two strategies and two replications or more), all of the last
/// sweep point (the heaviest in a typical sweep); then the sweep charts when there are swept
/// keys. Pure: the same results give the same charts.
pub fn charts(file: &ScenarioFile, result: &ScenarioResult, options: &ChartOptions) -> Vec<Chart> {
    let Some((index, point)) = result.points.iter().enumerate().next_back() else {
        return Vec::new();
    };
    let scenario = &file.points[index].scenario;
    let at = point_label(file, index);
    let log = options.log_y;
    let mut out = vec![
        Chart::Rows(
            ChartKind::Summary,
            summary::series(scenario, point, &at, log),
        ),
        Chart::Attempts(attempts::series(
            scenario,
            point,
            &at,
            MAX_DRAWN_POINTS,
            log,
        )),
        Chart::Load(load::series(scenario, point, &at, MAX_DRAWN_POINTS, log)),
    ];
    if let Some(r) = raster::series(scenario, point, &at) {
        out.push(Chart::Raster(r));
    }
    out.push(Chart::Latency(latency::series(&scenario.name, point, &at)));
    if scenario.populations.len() > 1 {
        out.push(Chart::Rows(
            ChartKind::Populations,
            summary::populations(scenario, point, &at, log),
        ));
    }
    if scenario.services.len() > 1 {
        out.push(Chart::Rows(
            ChartKind::Services,
            summary::services(scenario, point, &at, log),
        ));
    }
    if scenario.strategies.len() > 1 && scenario.replications > 1 {
        out.push(Chart::Rows(
            ChartKind::Paired,
            summary::paired(scenario, point, &at),
        ));
    }
    if !file.axes.is_empty() {
        for metric in [
            sweep::Metric::Calls,
            sweep::Metric::Completion,
            sweep::Metric::Peak,
        ] {
            out.push(Chart::Sweep(sweep::series(file, result, metric, log)));
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
pub enum Swatch {
    /// A filled square (areas, bars, shaded windows).
    Fill(RGBColor, f64),
    /// A line; `dash` = (dash, gap) in pixels, `None` for solid.
    Line(RGBColor, Option<(i32, i32)>),
    /// A strategy's line: its colour, dash and marker.
    Look(Look),
    /// A marker alone.
    Dot(RGBColor, usize),
}

/// Height of one line of legend entries.
const LEGEND_LINE: i32 = 24;

/// Where each legend entry goes: (x, line), filling lines from `x0` and wrapping before `x1`.
/// Pure: text is measured with the bundled font, so a chart can size its legend band before
/// it draws.
pub(crate) fn legend_positions(
    (x0, x1): (i32, i32),
    entries: &[(Swatch, String)],
) -> Vec<(i32, i32)> {
    let mut out = Vec::with_capacity(entries.len());
    let (mut x, mut line) = (x0, 0);
    for (_, label) in entries {
        let width = 28 + canvas::text_width(label, TICK).ceil() as i32;
        if x > x0 && x + width > x1 {
            (x, line) = (x0, line + 1);
        }
        out.push((x, line));
        x += width + 22;
    }
    out
}

/// Height in pixels of a legend of `entries` between `x0` and `x1` (0 without entries).
pub(crate) fn legend_band(span: (i32, i32), entries: &[(Swatch, String)]) -> u32 {
    let lines = legend_positions(span, entries)
        .iter()
        .map(|p| p.1 + 1)
        .max()
        .unwrap_or(0);
    (lines * LEGEND_LINE) as u32
}

fn legend_layout<DB: DrawingBackend>(
    _area: &DrawingArea<DB, Shift>,
    span: (i32, i32),
    entries: &[(Swatch, String)],
) -> Result<Vec<(i32, i32)>, String> {
    Ok(legend_positions(span, entries))
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
            Swatch::Look(l) => {
                dashed(area, &[(x, y), (x + 22, y)], l.color, l.dash, 2)?;
                area.draw(&(EmptyElement::at((x + 11, y)) + marker_shape(l.marker, l.color)))
                    .map_err(msg)?;
            }
            Swatch::Dot(c, marker) => {
                area.draw(&(EmptyElement::at((x + 11, y)) + marker_shape(marker, c)))
                    .map_err(msg)?;
            }
        }
        area.draw(&Text::new(label.clone(), (x + 28, y), style.clone()))
            .map_err(msg)?;
    }
    Ok(())
}

/// A marker centred on its anchor: circle, triangle, square, diamond, inverted triangle,
/// plus, cross, in turn ([`MARKERS`] shapes).
pub(crate) fn marker_shape<DB: DrawingBackend>(
    marker: usize,
    c: RGBColor,
) -> DynElement<'static, DB, (i32, i32)> {
    let style = c.filled();
    match marker % MARKERS {
        0 => Circle::new((0, 0), 5, style).into_dyn(),
        1 => Polygon::new(vec![(0, -6), (6, 5), (-6, 5)], style).into_dyn(),
        2 => Rectangle::new([(-5, -5), (5, 5)], style).into_dyn(),
        3 => Polygon::new(vec![(0, -7), (7, 0), (0, 7), (-7, 0)], style).into_dyn(),
        4 => Polygon::new(vec![(0, 6), (6, -5), (-6, -5)], style).into_dyn(),
        5 => Polygon::new(
            vec![
                (-2, -7),
                (2, -7),
                (2, -2),
                (7, -2),
                (7, 2),
                (2, 2),
                (2, 7),
                (-2, 7),
                (-2, 2),
                (-7, 2),
                (-7, -2),
                (-2, -2),
            ],
            style,
        )
        .into_dyn(),
        _ => Polygon::new(
            vec![
                (-6, -4),
                (-4, -6),
                (0, -2),
                (4, -6),
                (6, -4),
                (2, 0),
                (6, 4),
                (4, 6),
                (0, 2),
                (-4, 6),
                (-6, 4),
                (-2, 0),
            ],
            style,
        )
        .into_dyn(),
    }
}

/// A hollow marker: the shape's outline (for differences that are not significant).
pub(crate) fn hollow_marker<DB: DrawingBackend>(
    marker: usize,
    c: RGBColor,
) -> DynElement<'static, DB, (i32, i32)> {
    let style = c.stroke_width(2);
    match marker % MARKERS {
        0 => Circle::new((0, 0), 5, style).into_dyn(),
        2 => Rectangle::new([(-5, -5), (5, 5)], style).into_dyn(),
        1 => PathElement::new(vec![(0, -6), (6, 5), (-6, 5), (0, -6)], style).into_dyn(),
        4 => PathElement::new(vec![(0, 6), (6, -5), (-6, -5), (0, 6)], style).into_dyn(),
        _ => PathElement::new(vec![(0, -7), (7, 0), (0, 7), (-7, 0), (0, -7)], style).into_dyn(),
    }
}

/// Draws the polyline `points` (pixels of `area`) in colour `c`, solid or dashed with
/// pattern `dash` = (dash, gap), `width` pixels wide. The pattern runs on along the whole
/// line, across its corners.
pub(crate) fn dashed<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    points: &[(i32, i32)],
    c: RGBColor,
    dash: Option<(i32, i32)>,
    width: u32,
) -> Result<(), String> {
    let style = c.stroke_width(width);
    let Some((on, off)) = dash else {
        return area
            .draw(&PathElement::new(points.to_vec(), style))
            .map_err(msg);
    };
    for seg in dash_segments(points, on as f64, off as f64) {
        area.draw(&PathElement::new(seg, style)).map_err(msg)?;
    }
    Ok(())
}

/// The dashes of a polyline: pieces `on` long separated by gaps `off` long, the pattern
/// carried across corners.
pub fn dash_segments(points: &[(i32, i32)], on: f64, off: f64) -> Vec<Vec<(i32, i32)>> {
    let mut out = Vec::new();
    let mut current: Vec<(i32, i32)> = Vec::new();
    // Position within the pattern: [0, on) draws, [on, on + off) skips.
    let mut phase = 0.0;
    let period = on + off;
    if period <= 0.0 {
        return vec![points.to_vec()];
    }
    for w in points.windows(2) {
        let (a, b) = (w[0], w[1]);
        let (dx, dy) = ((b.0 - a.0) as f64, (b.1 - a.1) as f64);
        let len = (dx * dx + dy * dy).sqrt();
        let mut t = 0.0;
        let at = |t: f64| {
            let f = if len > 0.0 { t / len } else { 0.0 };
            (
                (a.0 as f64 + dx * f).round() as i32,
                (a.1 as f64 + dy * f).round() as i32,
            )
        };
        while t < len {
            let drawing = phase < on;
            let left = if drawing { on - phase } else { period - phase };
            let step = left.min(len - t);
            if drawing {
                if current.is_empty() {
                    current.push(at(t));
                }
                current.push(at(t + step));
            }
            t += step;
            phase += step;
            if phase >= period {
                phase -= period;
            }
            if phase >= on && !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
        }
    }
    if current.len() > 1 {
        out.push(current);
    }
    out
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

/// Splits `body` into `n` rows stacked from the top, `row` pixels each but the last, which
/// takes what is left (so rounding never leaves a strip unused).
pub(crate) fn stacked_rows<DB: DrawingBackend>(
    body: DrawingArea<DB, Shift>,
    n: usize,
    row: u32,
) -> Vec<DrawingArea<DB, Shift>> {
    let mut rows = Vec::with_capacity(n);
    let mut rest = body;
    for _ in 1..n {
        let (top, below) = rest.split_vertically(row);
        rows.push(top);
        rest = below;
    }
    if n > 0 {
        rows.push(rest);
    }
    rows
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

    #[test]
    fn at_least_twelve_strategies_look_different() {
        // No two of the first 70 share colour and marker; two sharing a colour (10 apart)
        // differ in marker, and within 12 strategies in dash too.
        for n in [12, 24, 70] {
            for i in 0..n {
                for j in i + 1..n {
                    let (a, b) = (look(i), look(j));
                    assert!(
                        a.color != b.color || a.marker != b.marker,
                        "{i} and {j} of {n}"
                    );
                    if n <= 12 && a.color == b.color {
                        assert_ne!(a.dash, b.dash, "{i} and {j}");
                    }
                }
            }
        }
        // Neighbours differ in all three.
        for i in 0..69 {
            let (a, b) = (look(i), look(i + 1));
            assert!(a.color != b.color && a.marker != b.marker && a.dash != b.dash);
        }
        // Every colour is distinct from the others and from white.
        for (i, a) in PALETTE.iter().enumerate() {
            assert_ne!(*a, RGBColor(255, 255, 255));
            assert!(PALETTE[..i].iter().all(|b| b != a));
        }
    }

    #[test]
    fn dashes_follow_the_pattern_across_corners() {
        // A 30 px line in 10-on, 5-off dashes: on 0-10, off 10-15, on 15-25, off 25-30.
        let d = dash_segments(&[(0, 0), (30, 0)], 10.0, 5.0);
        assert_eq!(d, vec![vec![(0, 0), (10, 0)], vec![(15, 0), (25, 0)]]);
        // Around a corner at 12 px the second dash starts 3 px after it.
        let d = dash_segments(&[(0, 0), (12, 0), (12, 20)], 10.0, 5.0);
        assert_eq!(
            d,
            vec![
                vec![(0, 0), (10, 0)],
                vec![(12, 3), (12, 13)],
                vec![(12, 18), (12, 20)]
            ]
        );
    }

    #[test]
    fn the_bundled_font_registers() {
        assert_eq!(ensure_font(), Ok(()));
    }
}
