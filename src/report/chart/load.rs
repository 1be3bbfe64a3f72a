//! `load`: what each service sees. Attempts arriving per second over time, one row per
//! strategy (small multiples with shared axes), one column per service when the scenario
//! has several (each with its own value axis, so a small database under a large API stays
//! visible), outage windows shaded by kind and the capacity drawn as a step line from the
//! `concurrency` series. With one service, a second column shows what the server holds (in
//! service + queued) against its slots and queue. Value axes turn logarithmic where the data
//! span more than 100x.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::attempts::{bands, capacity_series};
use super::timeseries::{self, Area, Band, Level, Spec, YAxis, level_steps, steps};
use super::{INK, Swatch, draw_title, fmt_tick, legend, legend_band, stacked_rows, use_log};
use crate::model::Scenario;
use crate::report::verdict::bucket_label;
use crate::runner::PointResult;

/// Width of the chart, at least.
const MIN_WIDTH: u32 = 1400;
/// Width of one column, at least.
const COLUMN: u32 = 460;
/// Height of the title row.
const TITLE: u32 = 40;
/// Height of one strategy's row.
const ROW: u32 = 190;
/// Share of the width taken by the arrivals column of a single service.
const LEFT_SHARE: f64 = 0.62;
/// Width of the value-axis label area.
const Y_AREA: i32 = 84;
/// Dash pattern of the capacity and slots lines.
const CAPACITY_DASH: Option<(i32, i32)> = Some((8, 5));
/// Dash pattern of the rate-limit and queue lines.
const LIMIT_DASH: Option<(i32, i32)> = Some((3, 4));

/// One column: a service's arrivals, or (with one service) what the server holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// What the column shows, for each panel's caption (`arrivals at db`).
    pub what: String,
    /// Value-axis description.
    pub y_desc: String,
    /// Shared value axis.
    pub y: YAxis,
    /// Outage windows of the service.
    pub bands: Vec<Band>,
    /// Key entries, above the column.
    pub legend: Vec<(Swatch, String)>,
    /// Per strategy: the curve and its reference step lines.
    pub cells: Vec<Cell>,
}

/// One panel: a curve and its step lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Step curve, (seconds, value).
    pub curve: Vec<(f64, f64)>,
    /// Step lines: capacity or slots, queue, rate limit.
    pub levels: Vec<Level>,
}

/// The load chart's numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadData {
    /// Chart title.
    pub title: String,
    /// Right end of the shared time axis, seconds (> 0).
    pub t_end: f64,
    /// Strategy names, one row each.
    pub strategies: Vec<String>,
    /// Palette index of each strategy.
    pub colors: Vec<usize>,
    /// Columns, left to right.
    pub columns: Vec<Column>,
}

/// The largest size of the chart of `strategies` rows over `services` services whose
/// legend takes at most `legend` pixels, for the memory estimate (a column per service, or
/// two for one).
pub fn size_bound(strategies: u64, services: u64, legend: u64) -> (u64, u64) {
    let width = (MIN_WIDTH as u64).max((COLUMN as u64).saturating_mul(services + 1));
    let height = TITLE as u64 + legend + (ROW as u64).saturating_mul(strategies.max(1));
    (width, height + timeseries::X_DESC as u64)
}

impl LoadData {
    /// Width of the chart.
    fn width(&self) -> u32 {
        MIN_WIDTH.max(COLUMN * self.columns.len() as u32)
    }

    /// Left edge of each column, and the right edge of the last.
    fn edges(&self) -> Vec<i32> {
        let w = self.width() as f64;
        if self.columns.len() == 2 && self.columns[1].what.starts_with("held") {
            return vec![0, (w * LEFT_SHARE) as i32, w as i32];
        }
        let n = self.columns.len().max(1) as f64;
        (0..=self.columns.len())
            .map(|i| (w * i as f64 / n) as i32)
            .collect()
    }

    fn legend_height(&self) -> u32 {
        let e = self.edges();
        self.columns
            .iter()
            .enumerate()
            .map(|(i, c)| legend_band((e[i] + Y_AREA + 10, e[i + 1] - 10), &c.legend))
            .max()
            .unwrap_or(0)
    }

    /// Chart size: one row per strategy.
    pub fn size(&self) -> (u32, u32) {
        (
            self.width(),
            TITLE
                + self.legend_height()
                + ROW * self.strategies.len().max(1) as u32
                + timeseries::X_DESC,
        )
    }
}

/// Prepares the load chart of one point. `at` is appended to the title (the sweep point);
/// each curve keeps at most `max_points` points; `log_y` forces log value axes.
pub fn series(
    scenario: &Scenario,
    point: &PointResult,
    at: &str,
    max_points: usize,
    log_y: bool,
) -> LoadData {
    let bucket = scenario.bucket.as_secs_f64();
    let t_end = point
        .strategies
        .iter()
        .flat_map(|s| s.timelines.iter().map(|t| t.len() as f64 * bucket))
        .fold(0.0, f64::max)
        .max(bucket.max(1e-9));
    let per = bucket_label(scenario.bucket);
    let mut columns = Vec::new();
    for (k, spec) in scenario.services.iter().enumerate() {
        let server = &spec.server;
        let cells: Vec<Cell> = point
            .strategies
            .iter()
            .map(|s| {
                let tl = &s.timelines[k];
                let arrivals: Vec<(f64, f64)> =
                    tl.iter().map(|b| (b.t_s, b.arrivals() / bucket)).collect();
                let mut levels = Vec::new();
                if let Some(c) = capacity_series(scenario, k, tl, t_end) {
                    levels.push(Level {
                        points: c,
                        color: INK,
                        dash: CAPACITY_DASH,
                    });
                }
                if let Some(r) = server.rate_limit {
                    levels.push(Level {
                        points: vec![(0.0, r.rate), (t_end, r.rate)],
                        color: INK,
                        dash: LIMIT_DASH,
                    });
                }
                Cell {
                    curve: steps(&arrivals, bucket, max_points),
                    levels,
                }
            })
            .collect();
        let mut legend = vec![(
            Swatch::Fill(INK, 0.3),
            if scenario.services.len() > 1 {
                format!("arrivals at {}", spec.name)
            } else {
                "arrivals".to_string()
            },
        )];
        if cells
            .iter()
            .any(|c| c.levels.iter().any(|l| l.dash == CAPACITY_DASH))
        {
            legend.push((
                Swatch::Line(INK, CAPACITY_DASH),
                // Side by side, a column per service: the short form fits its width.
                super::attempts::capacity_label(spec, scenario.services.len() > 1),
            ));
        }
        if let Some(r) = server.rate_limit {
            legend.push((
                Swatch::Line(INK, LIMIT_DASH),
                format!("rate limit {} req/s", fmt_tick(r.rate)),
            ));
        }
        let bands = bands(scenario, k);
        let mut kinds: Vec<String> = Vec::new();
        for b in &bands {
            let label = b.label.clone().unwrap_or_default();
            if !kinds.contains(&label) {
                legend.push((Swatch::Fill(b.color, 0.3), format!("outage: {label}")));
                kinds.push(label);
            }
        }
        columns.push(column(
            if scenario.services.len() > 1 {
                format!("arrivals at {}", spec.name)
            } else {
                "arrivals".into()
            },
            "req/s".into(),
            bands,
            legend,
            cells,
            log_y,
            true,
        ));
    }
    if scenario.services.len() == 1 {
        let server = &scenario.entry().server;
        let cells: Vec<Cell> = point
            .strategies
            .iter()
            .map(|s| {
                let tl = s.timeline();
                let held: Vec<(f64, f64)> = tl
                    .iter()
                    .map(|b| (b.t_s, b.in_service() + b.queued()))
                    .collect();
                let (slots, line_end) = super::attempts::slots_series(scenario, 0, tl, t_end);
                let places: Vec<(f64, f64)> = slots
                    .iter()
                    .map(|&(t, c)| (t, c + server.queue as f64))
                    .collect();
                let mut levels = vec![Level {
                    points: level_steps(&slots, line_end),
                    color: INK,
                    dash: CAPACITY_DASH,
                }];
                if server.queue > 0 {
                    levels.push(Level {
                        points: level_steps(&places, line_end),
                        color: INK,
                        dash: LIMIT_DASH,
                    });
                }
                Cell {
                    curve: steps(&held, bucket, max_points),
                    levels,
                }
            })
            .collect();
        let mut legend = vec![
            (Swatch::Fill(INK, 0.3), "in service + queued".to_string()),
            (
                Swatch::Line(INK, CAPACITY_DASH),
                format!("slots ({} at the start)", server.concurrency),
            ),
        ];
        if server.queue > 0 {
            legend.push((
                Swatch::Line(INK, LIMIT_DASH),
                format!(
                    "slots + {} queue places ({} at the start)",
                    server.queue,
                    u64::from(server.concurrency) + u64::from(server.queue)
                ),
            ));
        }
        // Bounded by slots + queue: linear unless asked otherwise.
        columns.push(column(
            "held by the server".into(),
            "requests".into(),
            bands(scenario, 0),
            legend,
            cells,
            log_y,
            false,
        ));
    }
    LoadData {
        title: format!(
            "{}{at}: attempts per second reaching {} (per {per} bucket)",
            scenario.name,
            if scenario.services.len() > 1 {
                "each service"
            } else {
                "the server"
            }
        ),
        t_end,
        strategies: point
            .strategies
            .iter()
            .map(|s| s.summary.strategy.clone())
            .collect(),
        colors: (0..point.strategies.len()).collect(),
        columns,
    }
}

/// A column with its axis fitted to every cell: logarithmic when `log_y`, or (with `auto`)
/// when the curves span more than 100x.
///
/// With `auto` (a service's arrivals), the reference lines (capacity, rate limit) do not
/// decide whether the axis is logarithmic. A linear axis leaves out a kind of line that is
/// more than [`LEVEL_REACH`] times above the highest curve at every point of every panel,
/// and its key says so (the held column's slots too: `collapse` models an unbounded server
/// as a million slots). A graph's front service has the capacity of its own short work
/// (250 000 req/s in `three-tier`) far above the few hundred requests per second it
/// receives: counted in, that line made the arrivals, which vary 5x, a flat band on a log
/// axis of six decades, or a line on the floor of a linear one. A log axis (the curves span
/// 100x) keeps every line, as it can show them all.
fn column(
    what: String,
    y_desc: String,
    bands: Vec<Band>,
    mut legend: Vec<(Swatch, String)>,
    mut cells: Vec<Cell>,
    log_y: bool,
    auto: bool,
) -> Column {
    let curves = |cells: &[Cell]| -> Vec<f64> {
        cells
            .iter()
            .flat_map(|c| c.curve.iter().map(|p| p.1))
            .collect()
    };
    let levels = |cells: &[Cell]| -> Vec<f64> {
        cells
            .iter()
            .flat_map(|c| c.levels.iter().flat_map(|l| l.points.iter().map(|p| p.1)))
            .collect()
    };
    let all =
        |cells: &[Cell]| -> Vec<f64> { curves(cells).into_iter().chain(levels(cells)).collect() };
    let log = if auto {
        use_log(curves(&cells), log_y)
    } else {
        log_y && use_log(all(&cells), true)
    };
    let highest = curves(&cells).into_iter().fold(0.0, f64::max);
    if !log && highest > 0.0 {
        // Every point far above: a line that dips to the curves (a slow window, a capacity
        // step down) is what the chart is for, and stays.
        let off_scale = |l: &Level| l.points.iter().all(|p| p.1 > LEVEL_REACH * highest);
        // A kind of line (by its dash) goes only if it is far above in every panel: a
        // strategy that finished before a capacity step never sees the dip another's does.
        let lines = || cells.iter().flat_map(|c| c.levels.iter());
        let dropped: Vec<Option<(i32, i32)>> = lines()
            .map(|l| l.dash)
            .filter(|dash| lines().filter(|l| l.dash == *dash).all(off_scale))
            .collect();
        for cell in &mut cells {
            cell.levels.retain(|l| !dropped.contains(&l.dash));
        }
        for (swatch, label) in &mut legend {
            if matches!(swatch, Swatch::Line(_, dash) if dropped.contains(dash)) {
                label.push_str(", above the axis");
            }
        }
    }
    let values = all(&cells);
    Column {
        what,
        y_desc,
        y: YAxis::new(values.iter().copied(), log),
        bands,
        legend,
        cells,
    }
}

/// How far above the highest arrival curve a reference line may be and still set a linear
/// axis (see [`column`]): at a tenth of the capacity, arrivals still fill a tenth of the
/// panel, and the gap to the line is the point of the chart.
const LEVEL_REACH: f64 = 10.0;

/// Draws the chart on `root`: title, the columns' keys, then a row of panels per strategy.
pub fn draw<DB: DrawingBackend>(d: &LoadData, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
    let (head, body) = root.split_vertically(TITLE + d.legend_height());
    let (title_area, legend_area) = head.split_vertically(TITLE);
    draw_title(&title_area, &d.title)?;
    let edges = d.edges();
    for (i, c) in d.columns.iter().enumerate() {
        legend(
            &legend_area,
            (edges[i] + Y_AREA + 10, edges[i + 1] - 10),
            &c.legend,
        )?;
    }
    let n = d.strategies.len();
    let rows = stacked_rows(body, n, ROW);
    for (r, (strategy, row)) in d.strategies.iter().zip(rows).enumerate() {
        let last = r + 1 == n;
        let mut right = row;
        for (k, c) in d.columns.iter().enumerate() {
            let cell_area = if k + 1 == d.columns.len() {
                right.clone()
            } else {
                let (left, rr) = right.split_horizontally(edges[k + 1] - edges[k]);
                right = rr;
                left
            };
            let cell = &c.cells[r];
            let areas = [Area {
                points: cell.curve.clone(),
                color: super::color(d.colors[r]),
                alpha: 0.35,
                under: None,
            }];
            timeseries::panel(
                &cell_area,
                &Spec {
                    caption: &format!("{strategy}: {}", c.what),
                    y_desc: &c.y_desc,
                    y_area: Y_AREA,
                    x_labels: if d.columns.len() == 1 { 14 } else { 7 },
                    t_end: d.t_end,
                    y: &c.y,
                    bands: &c.bands,
                    areas: &areas,
                    levels: &cell.levels,
                    last,
                },
            )?;
        }
    }
    Ok(())
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
[[server.capacity]]
at = "1s"
concurrency = 2
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
    fn series_turns_buckets_into_rates_steps_and_a_capacity_step_line() {
        let file = load_str("t.toml", SRC).unwrap();
        let result = crate::runner::run_scenario(&file, Default::default(), &|| ()).unwrap();
        let point = &result.points[0];
        let d = series(file.first(), point, "", 10_000, false);
        assert_eq!(d.columns.len(), 2, "arrivals, then held");
        let arrivals = &d.columns[0];
        assert_eq!(arrivals.bands.len(), 1);
        assert_eq!((arrivals.bands[0].start, arrivals.bands[0].end), (0.0, 1.0));
        let timeline = point.strategies[0].timeline();
        assert_eq!(d.t_end, timeline.len() as f64 * 0.5);
        let curve = &arrivals.cells[0].curve;
        assert_eq!(curve.len(), 2 * timeline.len(), "two corners per bucket");
        let rate0 = timeline[0].arrivals() / 0.5;
        assert_eq!(&curve[..2], &[(0.0, rate0), (0.5, rate0)]);
        // Capacity: 4 slots / 20 ms = 200 req/s, then 2 slots from t = 1 s: 100 req/s.
        let capacity = &arrivals.cells[0].levels[0].points;
        assert_eq!(capacity.first(), Some(&(0.0, 200.0)));
        assert!(capacity.contains(&(1.0, 200.0)) && capacity.contains(&(1.0, 100.0)));
        assert_eq!(capacity.last().map(|p| p.1), Some(100.0));
        // The held column: slots step from 4 to 2, slots + queue from 6 to 4.
        let held = &d.columns[1].cells[0];
        assert_eq!(held.levels[0].points.first(), Some(&(0.0, 4.0)));
        assert_eq!(held.levels[1].points.last().map(|p| p.1), Some(4.0));

        // Down-sampled to two bins, the highest step still reaches the peak.
        let peak = timeline
            .iter()
            .map(|b| b.arrivals() / 0.5)
            .fold(0.0, f64::max);
        let small = series(file.first(), point, "", 4, false);
        let curve = &small.columns[0].cells[0].curve;
        assert_eq!(curve.len(), 4, "two bins, two corners each");
        assert_eq!(curve.iter().map(|p| p.1).fold(0.0, f64::max), peak);
        assert_eq!(curve.last().unwrap().0, d.t_end);
    }

    /// A strategy whose runs end before a capacity step still shows the step, in both
    /// columns: the server's schedule goes on after its last request (they drew the
    /// capacity and the slots flat at their last value to the end of the axis). An
    /// autoscaled server's lines stop at its end.
    #[test]
    fn a_strategy_that_ends_before_a_capacity_step_still_shows_the_step() {
        let src = format!(
            "{SRC}[[strategy]]\nname = \"once\"\nbase = \"100ms\"\ncap = \"1s\"\nmax_attempts = 1\n"
        );
        let file = load_str("t.toml", &src).unwrap();
        let result = crate::runner::run_scenario(&file, Default::default(), &|| ()).unwrap();
        let point = &result.points[0];
        let once = point.strategies[1].timeline();
        assert_eq!(once.len(), 1, "the 'once' runs end in the first bucket");
        let d = series(file.first(), point, "", 10_000, false);
        assert!(d.t_end > 1.5, "{}", d.t_end);
        let capacity = &d.columns[0].cells[1].levels[0].points;
        assert_eq!(
            capacity,
            &vec![(0.0, 200.0), (1.0, 200.0), (1.0, 100.0), (d.t_end, 100.0)]
        );
        // The held column's slots, and slots + 2 queue places, step with it.
        let held = &d.columns[1].cells[1].levels;
        assert_eq!(
            held[0].points,
            vec![(0.0, 4.0), (1.0, 4.0), (1.0, 2.0), (d.t_end, 2.0)]
        );
        assert_eq!(
            held[1].points,
            vec![(0.0, 6.0), (1.0, 6.0), (1.0, 4.0), (d.t_end, 4.0)]
        );

        let autoscaled = src
            .replace("[[server.capacity]]\nat = \"1s\"\nconcurrency = 2\n", "")
            .replace(
                "queue = 2\n",
                "queue = 2\nautoscale = { min = 2, max = 8, target = 0.5, interval = \"1s\" }\n",
            );
        assert_ne!(autoscaled, src);
        let file = load_str("t.toml", &autoscaled).unwrap();
        let result = crate::runner::run_scenario(&file, Default::default(), &|| ()).unwrap();
        let d = series(file.first(), &result.points[0], "", 10_000, false);
        let capacity = &d.columns[0].cells[1].levels[0].points;
        assert_eq!(capacity.last(), Some(&(0.5, 200.0)), "{capacity:?}");
        let held = &d.columns[1].cells[1].levels[0].points;
        assert_eq!(held.last(), Some(&(0.5, 4.0)), "{held:?}");
        assert!(d.t_end > 0.5);
    }

    /// A reference line far above the arrivals no longer decides their axis: linear over
    /// curves that vary 5x, the line left out and its key saying so; a line within 10x
    /// stays; curves spanning 100x get a log axis that keeps every line.
    #[test]
    fn a_capacity_far_above_the_arrivals_leaves_their_axis_linear() {
        let cell = |curve: &[f64], level: f64, dash| Cell {
            curve: curve
                .iter()
                .enumerate()
                .map(|(i, v)| (i as f64, *v))
                .collect(),
            levels: vec![Level {
                points: vec![(0.0, level), (9.0, level)],
                color: INK,
                dash,
            }],
        };
        let legend = |dash| {
            vec![
                (Swatch::Fill(INK, 0.3), "arrivals at api".to_string()),
                (Swatch::Line(INK, dash), "capacity".to_string()),
            ]
        };
        let make = |curve: &[f64], level: f64, log_y: bool| {
            column(
                "arrivals".into(),
                "req/s".into(),
                vec![],
                legend(CAPACITY_DASH),
                vec![cell(curve, level, CAPACITY_DASH)],
                log_y,
                true,
            )
        };
        let api = [200.0, 210.0, 1000.0, 800.0, 200.0];
        let far = make(&api, 250_000.0, false);
        assert!(!far.y.log);
        assert!(far.cells[0].levels.is_empty());
        assert_eq!(far.legend[1].1, "capacity, above the axis");
        assert!(far.y.range.end < 2000.0, "{:?}", far.y.range);
        let near = make(&api, 5_000.0, false);
        assert!(!near.y.log);
        assert_eq!(near.cells[0].levels.len(), 1);
        assert_eq!(near.legend[1].1, "capacity");
        assert!(near.y.range.end >= 5000.0);
        // The held column (linear unless --log-y): a million slots modelling an unbounded
        // server leave the 16 000 requests it holds visible.
        let held = column(
            "held".into(),
            "requests".into(),
            vec![],
            legend(CAPACITY_DASH),
            vec![cell(&[0.0, 16_000.0, 300.0], 1e6, CAPACITY_DASH)],
            false,
            false,
        );
        assert!(!held.y.log && held.cells[0].levels.is_empty());
        assert_eq!(held.legend[1].1, "capacity, above the axis");
        // A line far above but for a dip to the curves (capacity stepped down to 5 and back)
        // stays, on the linear axis.
        let mut dip = cell(&[4.0, 10.0, 6.0], 5000.0, CAPACITY_DASH);
        dip.levels[0].points = vec![
            (0.0, 5000.0),
            (3.0, 5000.0),
            (3.0, 5.0),
            (6.0, 5.0),
            (6.0, 5000.0),
        ];
        let dip = column(
            "held".into(),
            "requests".into(),
            vec![],
            legend(CAPACITY_DASH),
            vec![dip],
            false,
            false,
        );
        assert!(!dip.y.log);
        assert_eq!(dip.cells[0].levels.len(), 1);
        assert_eq!(dip.legend[1].1, "capacity");
        // The dip in one strategy's panel keeps the line in all: another that finished
        // before the step has it flat and far above.
        let mut slow = cell(&[4.0, 10.0, 6.0], 5000.0, CAPACITY_DASH);
        slow.levels[0].points = vec![(0.0, 5000.0), (3.0, 5000.0), (3.0, 5.0), (6.0, 5.0)];
        let quick = cell(&[4.0, 1.0], 5000.0, CAPACITY_DASH);
        let both = column(
            "held".into(),
            "requests".into(),
            vec![],
            legend(CAPACITY_DASH),
            vec![quick, slow],
            false,
            false,
        );
        assert!(both.cells.iter().all(|c| c.levels.len() == 1));
        assert_eq!(both.legend[1].1, "capacity");
        // --log-y, or curves that span 100x: every line on the log axis.
        for (curve, log_y) in [(&api[..], true), (&[1.0, 5.0, 100_000.0][..], false)] {
            let log = make(curve, 250_000.0, log_y);
            assert!(log.y.log);
            assert_eq!(log.cells[0].levels.len(), 1);
            assert_eq!(log.legend[1].1, "capacity");
        }
    }
}
