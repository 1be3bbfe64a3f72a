//! `raster`: every attempt of the sampled client requests, one row per request (for a
//! closed population with one request per client, per client) and one mark per attempt at
//! the time it was sent, coloured by what happened to it (served, rejected, timed
//! out, shed). Rows are sorted by the time of the client's first failure, so clients that
//! retry in lockstep line up and their waves show as vertical bands; a well-jittered herd
//! shows as a spray. The sample is the attempt sample of the first replication
//! (at most 2 000 client requests, taken deterministically by the engine).
//!
//! The marks are rasterised here, one pixel column per time step, into a bitmap the size of
//! the plot (in the SVG, an embedded PNG): tens of thousands of marks stay a small file.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::attempts::bands;
use super::timeseries::Band;
use super::{
    DESC, INK, Swatch, TICK, draw_title, fmt_tick, legend, legend_band, msg, stacked_rows, text,
};
use crate::metrics::{AttemptOutcome, AttemptRecord};
use crate::model::Scenario;
use crate::runner::PointResult;

/// Width of the chart.
const WIDTH: u32 = 1400;
/// Height of the title row.
const TITLE: u32 = 40;
/// Height of one strategy's panel.
const ROW: u32 = 260;
/// Extra height of the last panel, for the time-axis description.
const X_DESC: u32 = 24;
/// Width of the value-axis label area.
const Y_AREA: i32 = 84;

/// The colour of each outcome: served green, rejected vermillion, timed out blue, shed
/// purple, cut short by the time limit grey.
pub fn outcome_color(o: AttemptOutcome) -> RGBColor {
    match o {
        AttemptOutcome::Served => RGBColor(0, 158, 115),
        AttemptOutcome::Rejected => RGBColor(213, 94, 0),
        AttemptOutcome::TimedOut => RGBColor(0, 114, 178),
        AttemptOutcome::Shed => RGBColor(204, 121, 167),
        AttemptOutcome::CutShort => RGBColor(153, 153, 153),
    }
}

/// One client request of the sample: its attempts, in time order.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientRow {
    /// Population index.
    pub population: u16,
    /// Client id within it.
    pub client: u32,
    /// The client's request number (closed) or the arrival number (open, trace).
    pub request: u32,
    /// When its first attempt that was not served was sent, seconds.
    pub first_failure: Option<f64>,
    /// (send time in seconds, outcome), by time.
    pub marks: Vec<(f64, AttemptOutcome)>,
}

/// The client requests of an attempt sample, one row each (a closed client's successive
/// requests, an open population's arrivals, each on its own row), sorted by first failure
/// (requests that never failed last, by first attempt), then by first success, then by
/// population, client and request.
pub fn client_rows(attempts: &[AttemptRecord]) -> Vec<ClientRow> {
    type Key = (u16, u32, u32);
    let mut rows: std::collections::BTreeMap<Key, Vec<(f64, AttemptOutcome)>> =
        std::collections::BTreeMap::new();
    for a in attempts {
        rows.entry((a.population, a.client, a.request))
            .or_default()
            .push((a.sent.as_secs_f64(), a.outcome));
    }
    let mut out: Vec<ClientRow> = rows
        .into_iter()
        .map(|((population, client, request), mut marks)| {
            marks.sort_by(|a, b| a.0.total_cmp(&b.0));
            let first_failure = marks
                .iter()
                .find(|m| m.1 != AttemptOutcome::Served)
                .map(|m| m.0);
            ClientRow {
                population,
                client,
                request,
                first_failure,
                marks,
            }
        })
        .collect();
    // By first failure; then by first success, so that the clients served by one wave of a
    // lockstep herd sit together; then by identity.
    let key = |r: &ClientRow| {
        let success = r
            .marks
            .iter()
            .find(|m| m.1 == AttemptOutcome::Served)
            .map_or(f64::INFINITY, |m| m.0);
        (
            r.first_failure.is_none(),
            r.first_failure
                .or(r.marks.first().map(|m| m.0))
                .unwrap_or(f64::INFINITY),
            success,
        )
    };
    out.sort_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        ka.0.cmp(&kb.0)
            .then(ka.1.total_cmp(&kb.1))
            .then(ka.2.total_cmp(&kb.2))
            .then((a.population, a.client, a.request).cmp(&(b.population, b.client, b.request)))
    });
    out
}

/// One strategy's panel.
#[derive(Debug, Clone, PartialEq)]
pub struct RasterPanel {
    /// Strategy name.
    pub strategy: String,
    /// Client requests, sorted.
    pub rows: Vec<ClientRow>,
}

/// The raster chart's numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct RasterData {
    /// Title.
    pub title: String,
    /// Right end of the time axis, seconds.
    pub t_end: f64,
    /// Outage windows, shaded behind the marks.
    pub bands: Vec<Band>,
    /// Key.
    pub legend: Vec<(Swatch, String)>,
    /// One panel per strategy.
    pub panels: Vec<RasterPanel>,
}

/// The largest size of the chart of `strategies` panels whose legend takes at most
/// `legend` pixels, for the memory estimate.
pub fn size_bound(strategies: u64, legend: u64) -> (u64, u64) {
    let height = TITLE as u64 + legend + (ROW as u64).saturating_mul(strategies.max(1));
    (WIDTH as u64, height + X_DESC as u64)
}

impl RasterData {
    fn legend_height(&self) -> u32 {
        legend_band((Y_AREA + 10, WIDTH as i32 - 20), &self.legend)
    }

    /// Chart size.
    pub fn size(&self) -> (u32, u32) {
        (
            WIDTH,
            TITLE + self.legend_height() + ROW * self.panels.len().max(1) as u32 + X_DESC,
        )
    }
}

/// Whether the entry service is an OCC server without outages, a rate limit or 400s: every
/// failed attempt there is a 409 (a write that lost).
fn occ_only(scenario: &Scenario) -> bool {
    let server = &scenario.entry().server;
    server.is_occ()
        && server.outages.is_empty()
        && server.rate_limit.is_none()
        && server.client_error_rate <= 0.0
}

/// Prepares the raster chart of one point; `None` when no attempt sample was recorded.
pub fn series(scenario: &Scenario, point: &PointResult, at: &str) -> Option<RasterData> {
    let sample = |s: &crate::metrics::summary::StrategyResult| -> Option<Vec<AttemptRecord>> {
        s.attempts.first().filter(|a| !a.is_empty()).cloned()
    };
    if point.strategies.iter().all(|s| sample(s).is_none()) {
        return None;
    }
    let bucket = scenario.bucket.as_secs_f64();
    let panels: Vec<RasterPanel> = point
        .strategies
        .iter()
        .map(|s| RasterPanel {
            strategy: s.summary.strategy.clone(),
            rows: client_rows(&sample(s).unwrap_or_default()),
        })
        .collect();
    let last_send = panels
        .iter()
        .flat_map(|p| p.rows.iter().flat_map(|r| r.marks.iter().map(|m| m.0)))
        .fold(0.0, f64::max);
    let t_end = point
        .strategies
        .iter()
        .map(|s| s.timeline().len() as f64 * bucket)
        .fold(last_send, f64::max)
        .max(bucket);
    let clients = panels.iter().map(|p| p.rows.len()).max().unwrap_or(0);
    let mut legend: Vec<(Swatch, String)> = [
        (AttemptOutcome::Served, "served"),
        (
            AttemptOutcome::Rejected,
            // An OCC server with nothing else to refuse with fails only lost writes.
            if occ_only(scenario) {
                "conflict (409: another write won)"
            } else if scenario.entry().server.is_occ() {
                "rejected (409 conflict, 503, ...)"
            } else {
                "rejected (503, 429, 500, ...)"
            },
        ),
        (AttemptOutcome::TimedOut, "timed out or unreachable"),
        (AttemptOutcome::Shed, "shed from the queue"),
        (AttemptOutcome::CutShort, "in flight at the time limit"),
    ]
    .into_iter()
    // The time limit's marks are listed only when a run was cut short.
    .filter(|(o, _)| {
        *o != AttemptOutcome::CutShort
            || panels
                .iter()
                .any(|p| p.rows.iter().any(|r| r.marks.iter().any(|m| m.1 == *o)))
    })
    .map(|(o, l)| (Swatch::Fill(outcome_color(o), 1.0), l.to_string()))
    .collect();
    let bands = bands(scenario, 0);
    for b in &bands {
        let label = format!("outage: {}", b.label.clone().unwrap_or_default());
        if !legend.iter().any(|e| e.1 == label) {
            legend.push((Swatch::Fill(b.color, 0.3), label));
        }
    }
    Some(RasterData {
        title: format!(
            "{}{at}: every attempt of {clients} sampled client requests (run 1), by first failure",
            scenario.name
        ),
        t_end,
        bands,
        legend,
        panels,
    })
}

/// The bitmap of one panel, `w` x `h` RGB pixels: shaded windows, then one mark per attempt
/// (2 px wide, at least 1 px tall); where marks share a pixel, the most frequent outcome
/// shows, failures winning ties.
pub fn rasterise(panel: &RasterPanel, bands: &[Band], t_end: f64, w: u32, h: u32) -> Vec<u8> {
    let (w, h) = (w as usize, h as usize);
    let mut buf = vec![255u8; w * h * 3];
    if w == 0 || h == 0 {
        return buf;
    }
    let col = |t: f64| ((t / t_end) * w as f64).floor().clamp(0.0, (w - 1) as f64) as usize;
    for b in bands {
        if b.start >= t_end {
            continue;
        }
        let shade = [b.color.0, b.color.1, b.color.2];
        for x in col(b.start)..=col(b.end.min(t_end)) {
            for y in 0..h {
                let p = 3 * (y * w + x);
                for (k, v) in shade.iter().enumerate() {
                    buf[p + k] = (buf[p + k] as f64 * 0.8 + *v as f64 * 0.2).round() as u8;
                }
            }
        }
    }
    let n = panel.rows.len().max(1);
    // Counts per pixel of each outcome.
    let mut counts = vec![[0u16; 5]; w * h];
    let index = |o: AttemptOutcome| match o {
        AttemptOutcome::Served => 0,
        AttemptOutcome::Rejected => 1,
        AttemptOutcome::TimedOut => 2,
        AttemptOutcome::Shed => 3,
        AttemptOutcome::CutShort => 4,
    };
    for (r, row) in panel.rows.iter().enumerate() {
        let y0 = r * h / n;
        let y1 = ((r + 1) * h / n).max(y0 + 1).min(h);
        for &(t, o) in &row.marks {
            let x0 = col(t);
            for x in x0..(x0 + 2).min(w) {
                for y in y0..y1 {
                    let c = &mut counts[y * w + x][index(o)];
                    *c = c.saturating_add(1);
                }
            }
        }
    }
    let outcomes = [
        AttemptOutcome::Served,
        AttemptOutcome::Rejected,
        AttemptOutcome::TimedOut,
        AttemptOutcome::Shed,
        AttemptOutcome::CutShort,
    ];
    for (i, c) in counts.iter().enumerate() {
        if c.iter().all(|v| *v == 0) {
            continue;
        }
        // Most frequent; on a tie the later (a failure) wins.
        let k = (0..outcomes.len()).max_by_key(|&k| (c[k], k)).unwrap_or(0);
        let color = outcome_color(outcomes[k]);
        buf[3 * i] = color.0;
        buf[3 * i + 1] = color.1;
        buf[3 * i + 2] = color.2;
    }
    buf
}

/// Draws the chart on `root`.
pub fn draw<DB: DrawingBackend>(
    d: &RasterData,
    root: &DrawingArea<DB, Shift>,
) -> Result<(), String> {
    let (head, body) = root.split_vertically(TITLE + d.legend_height());
    let (title_area, legend_area) = head.split_vertically(TITLE);
    draw_title(&title_area, &d.title)?;
    legend(&legend_area, (Y_AREA + 10, WIDTH as i32 - 20), &d.legend)?;
    let count = d.panels.len();
    let rows = stacked_rows(body, count, ROW);
    for (i, (p, area)) in d.panels.iter().zip(rows).enumerate() {
        let last = i + 1 == count;
        let n = p.rows.len().max(1) as i32;
        let mut chart = ChartBuilder::on(&area)
            .caption(
                format!(
                    "{}: {} requests that sent an attempt",
                    p.strategy,
                    p.rows.len()
                ),
                text(18.0),
            )
            .margin_left(10)
            .margin_right(20)
            .margin_top(2)
            .x_label_area_size(if last { 24 + X_DESC } else { 24 })
            .y_label_area_size(Y_AREA)
            .build_cartesian_2d(
                0.0..d.t_end,
                // Row k is drawn at n - k (row 0 on top): ticks at round row numbers.
                (0..n).with_key_points(
                    super::rows::nice_ticks(0.0, n as f64, 5)
                        .into_iter()
                        .map(|k| n - k as i32)
                        .collect(),
                ),
            )
            .map_err(msg)?;
        let plot = chart.plotting_area();
        let (w, h) = plot.dim_in_pixel();
        let bitmap = rasterise(p, &d.bands, d.t_end, w, h);
        let element = BitMapElement::with_owned_buffer((0.0, n), (w, h), bitmap)
            .ok_or_else(|| "raster bitmap of the wrong size".to_string())?;
        plot.draw(&element).map_err(msg)?;
        // Row 0 (the earliest failure) is at the top.
        let rows_label = |v: &i32| fmt_tick((n - v).max(0) as f64);
        let mut mesh = chart.configure_mesh();
        mesh.disable_x_mesh()
            .disable_y_mesh()
            .x_labels(14)
            .x_label_formatter(&|v| fmt_tick(*v))
            .y_label_formatter(&rows_label)
            .label_style(text(TICK))
            .axis_desc_style(text(DESC))
            .y_desc("requests, by first failure")
            .axis_style(INK);
        if last {
            mesh.x_desc("time since start (s)");
        }
        mesh.draw().map_err(msg)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{SimDuration, SimTime};

    fn at(client: u32, attempt: u32, ms: u64, outcome: AttemptOutcome) -> AttemptRecord {
        AttemptRecord {
            population: 0,
            client,
            request: 0,
            attempt,
            sent: SimTime(SimDuration::from_millis(ms).0),
            outcome,
        }
    }

    #[test]
    fn clients_sort_by_first_failure_and_the_never_failed_go_last() {
        use AttemptOutcome::*;
        let sample = vec![
            at(0, 1, 0, Served),
            at(1, 1, 0, Rejected),
            at(1, 2, 500, Served),
            at(2, 1, 100, Served),
            at(2, 2, 50, TimedOut), // recorded out of order: sorted by time
            at(3, 1, 10, Shed),
            at(4, 1, 5, Rejected),
            at(5, 1, 0, Served),
        ];
        let rows = client_rows(&sample);
        let order: Vec<u32> = rows.iter().map(|r| r.client).collect();
        // Failures at 0 (1), 5 (4), 10 (3), 50 (2); never failed: 0 and 5, by when they began.
        assert_eq!(order, [1, 4, 3, 2, 0, 5]);
        assert_eq!(rows[3].marks, [(0.05, TimedOut), (0.1, Served)]);
        assert_eq!(rows[3].first_failure, Some(0.05));
        assert_eq!(rows[4].first_failure, None);
    }

    #[test]
    fn marks_land_in_their_row_and_column_and_failures_win_ties() {
        use AttemptOutcome::*;
        let panel = RasterPanel {
            strategy: "s".into(),
            rows: client_rows(&[
                at(0, 1, 0, Rejected),
                at(0, 2, 500, Served),
                at(1, 1, 0, Served),
            ]),
        };
        let (w, h) = (10, 4);
        let buf = rasterise(&panel, &[], 1.0, w, h);
        let px = |x: usize, y: usize| {
            let p = 3 * (y * w as usize + x);
            RGBColor(buf[p], buf[p + 1], buf[p + 2])
        };
        // Client 0 failed first: rows 0-1; its retry at 0.5 s in column 5.
        assert_eq!(px(0, 0), outcome_color(Rejected));
        assert_eq!(px(5, 1), outcome_color(Served));
        // Client 1 below it; empty pixels stay white.
        assert_eq!(px(0, 3), outcome_color(Served));
        assert_eq!(px(8, 0), RGBColor(255, 255, 255));
    }
}
