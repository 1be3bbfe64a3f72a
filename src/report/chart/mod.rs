//! Charts: the pictures of a run, drawn with plotters as SVG and PNG.
//!
//! This module owns what every chart shares: the chart list of a scenario ([`charts`]), the
//! colour palette and looks, the bundled font, titles and stacked panels, and the two
//! renderers ([`render_svg`], [`render_png`]); `axes.rs` has the value axes, tick and value
//! texts and the down-sampler, `legend.rs` the legend band, markers and dashed lines. Each chart kind lives in its own file
//! (criterion's `plot/plotters_backend/` layout) and is split in two: a pure `series(...)`
//! that turns results into plain numbers (unit-testable, no plotters types), and a
//! `draw(...)` generic over the plotters backend, so one drawing routine makes both formats.
//! Where the files go is decided by [`crate::report`]; nothing here panics on a plotters
//! failure: every drawing call's error becomes a message that the caller turns into
//! [`crate::Error::Chart`].

pub mod attempts;
mod axes;
pub mod canvas;
pub mod latency;
mod legend;
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

pub(crate) use axes::value_range;
pub use axes::{
    LOG_SPAN, MAX_DRAWN_POINTS, downsample_max, fmt_count, fmt_tick, fmt_value, log_range,
    log_ticks, use_log,
};
pub use legend::{Swatch, dash_segments};
pub(crate) use legend::{dashed, hollow_marker, legend, legend_band, legend_height, marker_shape};

use crate::model::Scenario;
use crate::model::service::OutageKind;
use crate::runner::ScenarioResult;
use crate::scenario::sweep::ScenarioFile;

/// DejaVu Sans 2.37 (Bitstream Vera licence, see `assets/fonts/LICENSE-DejaVu.txt`). Bundled
/// so that text renders the same on every machine: both formats draw its glyphs themselves
/// (see [`canvas`]) and never ask the system for a font.
pub(crate) static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

/// The family every chart asks plotters for; the bundled font is registered under it.
const FAMILY: &str = "sans-serif";

/// What the caller can change about the charts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChartOptions {
    /// A logarithmic value axis on every chart that has one (`--log-y`). Without it, an
    /// axis turns logarithmic by itself where its data span more than [`LOG_SPAN`] times.
    pub log_y: bool,
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

/// Marker shapes, in [`look`] order (see `marker_shape`).
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
/// purple (unreachable) and red (crash), brownouts pink (errors: orange was too close to the
/// attempts chart's retries) and yellow (slow).
pub fn outage_style(kind: &OutageKind) -> (RGBColor, String) {
    match kind {
        OutageKind::Down => (OUTAGE, "down".into()),
        OutageKind::Unreachable => (RGBColor(120, 90, 170), "unreachable".into()),
        OutageKind::Crash => (RGBColor(190, 40, 40), "crash".into()),
        OutageKind::Errors(rate) => (
            RGBColor(204, 121, 167),
            format!("errors ({}% served)", fmt_value(rate * 100.0)),
        ),
        OutageKind::Slow(f) => (RGBColor(240, 228, 66), format!("slow (x{})", fmt_value(*f))),
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
    /// The share of requests that succeeded against the first swept key.
    SweepSucceeded,
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
            ChartKind::SweepSucceeded => "sweep_succeeded",
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
            sweep::Metric::Succeeded,
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

/// Height left for a chart's legend in [`largest_png_bytes`] besides its outages: several
/// lines of the fixed entries (outcomes, capacity, limits).
const LEGEND_BOUND: u64 = 200;

/// Bytes of the RGB bitmap of the largest PNG chart of `scenario`: each is drawn on a
/// bitmap of its whole size, and the charts grow by a row per strategy. For the memory
/// estimate ([`crate::limits::Estimate::drawing_png_charts`]): an upper bound, as the
/// legend's height is known only once its entries are laid out; the time charts' legends
/// have an entry per distinct outage label, counted here as a line each (helper-107: 1 500
/// outages drew a 1400 x 8678 load chart against a bound of 200 pixels of legend).
pub fn largest_png_bytes(scenario: &Scenario) -> u64 {
    let strategies = scenario.strategies.len() as u64;
    let services = scenario.services.len() as u64;
    let groups = (scenario.populations.len() as u64).max(services);
    let outages: u64 = scenario
        .services
        .iter()
        .map(|s| s.server.outages.len() as u64)
        .sum();
    let legend = LEGEND_BOUND.saturating_add(outages.saturating_mul(legend::LEGEND_LINE as u64));
    let fixed = |(w, h): (u32, u32)| (w as u64, h as u64);
    [
        raster::size_bound(strategies, legend),
        attempts::size_bound(strategies, legend),
        load::size_bound(strategies, services, legend),
        rows::size_bound(strategies, groups, LEGEND_BOUND),
        fixed(latency::SIZE),
        fixed(sweep::SIZE),
    ]
    .into_iter()
    .map(|(w, h)| 3u64.saturating_mul(w).saturating_mul(h))
    .max()
    .unwrap_or(0)
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

#[cfg(test)]
mod tests {
    use super::*;

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

    /// The memory estimate's chart bound holds every chart drawn: a graph, a mixed fleet, a
    /// three-tier graph and 30 strategies (where the raster's rows set the height).
    #[test]
    fn largest_png_bytes_bounds_every_chart_of_a_run() {
        use crate::scenario::sweep::{Setting, load_with_settings};
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
        // The quickstart with 30 strategies in all.
        let many: String = (0..27)
            .map(|i| {
                format!(
                    "[[strategy]]\nname = \"s{i}\"\nbase = \"{}ms\"\ncap = \"2s\"\n",
                    10 + i
                )
            })
            .collect();
        let many = format!("{}\n{many}", crate::scenario::QUICKSTART);
        let files = [
            ("quickstart-graph", vec!["replications=1"]),
            (
                "mixed-fleet",
                vec![
                    "replications=1",
                    "clients.0.count=100",
                    "clients.1.count=100",
                ],
            ),
            ("three-tier", vec!["replications=1", "time_limit=20s"]),
        ];
        let mut sizes = Vec::new();
        for (name, set) in files {
            let src = std::fs::read_to_string(folder.join(format!("{name}.toml"))).unwrap();
            let set: Vec<Setting> = set.iter().map(|s| Setting::parse(s).unwrap()).collect();
            sizes.push((name.to_string(), src, set));
        }
        let few = ["replications=1", "clients.count=200"].map(|s| Setting::parse(s).unwrap());
        sizes.push(("many".into(), many, few.to_vec()));
        // 300 outages of distinct labels: a legend line each at most (helper-107: 1 500
        // drew a legend far taller than the 200 pixels allowed).
        let outages: String = (0..300)
            .map(|i| {
                format!(
                    "[[server.outages]]\nstart = \"{}ms\"\nend = \"{}ms\"\nkind = \"errors\"\nerror_rate = 0.{i:03}1\n",
                    6_000 + i,
                    6_001 + i
                )
            })
            .collect();
        let outages = crate::scenario::QUICKSTART.replace(
            "[[server.outages]]",
            &format!("{outages}[[server.outages]]"),
        );
        sizes.push(("outages".into(), outages, few.to_vec()));
        for (name, src, set) in sizes {
            let file = load_with_settings(&name, &src, &folder, &set).unwrap();
            let options = crate::runner::RunOptions {
                sample_attempts: Some(false),
                ..Default::default()
            };
            let result = crate::runner::run_scenario(&file, options, &|| ()).unwrap();
            let bound = largest_png_bytes(file.first());
            let drawn: Vec<(ChartKind, u64)> = charts(&file, &result, &ChartOptions::default())
                .iter()
                .map(|c| (c.kind(), 3 * c.size().0 as u64 * c.size().1 as u64))
                .collect();
            let largest = drawn.iter().map(|d| d.1).max().unwrap();
            assert!(largest <= bound, "{name}: {drawn:?} against {bound}");
            // Not far above: the legend's allowance is the slack (a line per outage is
            // room for several).
            let (num, den) = if name == "outages" { (4, 1) } else { (3, 2) };
            assert!(
                bound * den < largest * num,
                "{name}: {drawn:?} against {bound}"
            );
        }
    }

    #[test]
    fn the_bundled_font_registers() {
        assert_eq!(ensure_font(), Ok(()));
    }
}
