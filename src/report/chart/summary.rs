//! `summary`: the strategy comparison. Three bar panels side by side (calls the server
//! absorbed, completion time, peak load), one bar per strategy in its palette colour, the
//! value printed on each bar, and 95% confidence whiskers when there is more than one
//! replication.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    DESC, INK, Swatch, TICK, color, draw_title, fmt_tick, fmt_value, legend, msg, text, value_range,
};
use crate::metrics::summary::Stat;
use crate::model::Scenario;
use crate::runner::PointResult;

/// Chart size.
pub const SIZE: (u32, u32) = (1400, 520);

/// One bar.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// Strategy name.
    pub strategy: String,
    /// Index into the palette.
    pub color: usize,
    /// Mean and 95% CI half-width over replications.
    pub value: Stat,
}

/// One panel: a metric over every strategy.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// Panel caption.
    pub caption: String,
    /// Value-axis description, with its unit.
    pub unit: String,
    /// One bar per strategy, in scenario order.
    pub bars: Vec<Bar>,
    /// A dashed reference line and its label (the capacity, on the peak panel).
    pub reference: Option<(f64, String)>,
}

/// The summary chart's numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryData {
    /// Chart title.
    pub title: String,
    /// Calls, completion time, peak load.
    pub panels: Vec<Panel>,
    /// Whether the whiskers mean anything (replications > 1).
    pub whiskers: bool,
}

/// Prepares the summary chart of one point; `at` is appended to the title.
pub fn series(scenario: &Scenario, point: &PointResult, at: &str) -> SummaryData {
    let bars = |f: &dyn Fn(&crate::metrics::summary::StrategySummary) -> Stat| -> Vec<Bar> {
        point
            .strategies
            .iter()
            .enumerate()
            .map(|(i, s)| Bar {
                strategy: s.summary.strategy.clone(),
                color: i,
                value: f(&s.summary),
            })
            .collect()
    };
    let server = &scenario.entry().server;
    let service = server.service.mean().as_secs_f64();
    let capacity = (service > 0.0).then(|| server.concurrency as f64 / service);
    let requests = point.strategies.first().map_or(0.0, |s| s.summary.requests);
    let r = scenario.replications;
    SummaryData {
        title: format!(
            "{}: work, completion time and peak load per strategy{at}",
            scenario.name
        ),
        panels: vec![
            Panel {
                caption: "calls the server absorbed".into(),
                unit: "attempts reaching the server".into(),
                bars: bars(&|s| s.calls),
                reference: Some((
                    requests,
                    format!("logical requests ({})", fmt_value(requests)),
                )),
            },
            Panel {
                caption: "time until the last request ended".into(),
                unit: "completion time (s)".into(),
                bars: bars(&|s| s.completion_s),
                reference: None,
            },
            Panel {
                caption: "highest load in any bucket".into(),
                unit: "peak arrivals (req/s)".into(),
                bars: bars(&|s| s.peak_rps),
                reference: capacity.map(|c| (c, format!("capacity ({} req/s)", fmt_tick(c)))),
            },
        ],
        whiskers: r > 1,
    }
    .with_subtitle(r)
}

impl SummaryData {
    fn with_subtitle(mut self, replications: u32) -> Self {
        self.title.push_str(&if replications > 1 {
            format!(" (mean of {replications} runs, whiskers: 95% CI)")
        } else {
            " (1 run)".to_string()
        });
        self
    }
}

/// Draws the chart on `root`.
pub fn draw<DB: DrawingBackend>(
    d: &SummaryData,
    root: &DrawingArea<DB, Shift>,
) -> Result<(), String> {
    let (title_area, area) = root.split_vertically(40);
    draw_title(&title_area, &d.title)?;
    let cells = area.split_evenly((1, d.panels.len().max(1)));
    for (panel, cell) in d.panels.iter().zip(&cells) {
        draw_panel(panel, d.whiskers, cell)?;
    }
    Ok(())
}

fn draw_panel<DB: DrawingBackend>(
    p: &Panel,
    whiskers: bool,
    area: &DrawingArea<DB, Shift>,
) -> Result<(), String> {
    let n = p.bars.len();
    let top = p
        .bars
        .iter()
        .map(|b| b.value.mean + if whiskers { b.value.ci95 } else { 0.0 })
        .chain(p.reference.as_ref().map(|r| r.0))
        .fold(0.0, f64::max);
    // Extra headroom for the value printed above the tallest bar.
    let y = value_range(top * 1.06);
    // Caption, then a one-line band for the reference line's legend (empty when there is
    // none, so the three plots stay aligned), then the plot.
    let (caption_area, rest) = area.split_vertically(30);
    let (legend_area, plot_area) = rest.split_vertically(24);
    draw_title_sized(&caption_area, &p.caption)?;
    if let Some((_, label)) = &p.reference {
        legend(
            &legend_area,
            (Y_AREA + 14, legend_area.dim_in_pixel().0 as i32),
            &[(Swatch::Line(INK, Some((8, 5))), label.clone())],
        )?;
    }
    let (w, _) = plot_area.dim_in_pixel();
    let slot = (w as i32 - Y_AREA - 24) / n.max(1) as i32;
    let names = fit_names(&plot_area, &p.bars, slot - 2)?;
    let mut chart = ChartBuilder::on(&plot_area)
        .margin(12)
        .margin_top(4)
        .x_label_area_size(30)
        .y_label_area_size(Y_AREA)
        // Bar i is centred on x = i · SLOT; ticks only there, where the names go. (Integer
        // units, as plotters' key-point axes need a default-formatted coordinate.)
        .build_cartesian_2d(
            (-SLOT / 2..n as i32 * SLOT - SLOT / 2)
                .with_key_points((0..n as i32).map(|i| i * SLOT).collect()),
            y.clone(),
        )
        .map_err(msg)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_labels(6)
        .x_label_formatter(&|v| {
            if v % SLOT == 0 && *v >= 0 {
                names.get((v / SLOT) as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_label_formatter(&|v| fmt_tick(*v))
        .label_style(text(TICK))
        .axis_desc_style(text(DESC))
        .y_desc(p.unit.as_str())
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(INK.mix(0.08))
        .draw()
        .map_err(msg)?;
    chart
        .draw_series(p.bars.iter().enumerate().map(|(i, b)| {
            let x = i as i32 * SLOT;
            Rectangle::new(
                [(x - BAR, 0.0), (x + BAR, b.value.mean)],
                color(b.color).mix(0.85).filled(),
            )
        }))
        .map_err(msg)?;
    if whiskers {
        for (i, b) in p.bars.iter().enumerate() {
            let x = i as i32 * SLOT;
            let (lo, hi) = (b.value.mean - b.value.ci95, b.value.mean + b.value.ci95);
            chart
                .draw_series(std::iter::once(PathElement::new(
                    [(x, lo.max(0.0)), (x, hi)],
                    INK.stroke_width(2),
                )))
                .map_err(msg)?;
            // Caps: short horizontal ticks, in pixels, so they look the same on every scale.
            for v in [lo.max(0.0), hi] {
                chart
                    .draw_series(std::iter::once(
                        EmptyElement::at((x, v))
                            + PathElement::new([(-7, 0), (7, 0)], INK.stroke_width(2)),
                    ))
                    .map_err(msg)?;
            }
        }
    }
    let above = text(TICK).pos(Pos::new(HPos::Center, VPos::Bottom));
    chart
        .draw_series(p.bars.iter().enumerate().map(|(i, b)| {
            let hi = b.value.mean + if whiskers { b.value.ci95 } else { 0.0 };
            // A few pixels above the bar or whisker cap, so the text never touches it.
            EmptyElement::at((i as i32 * SLOT, hi))
                + Text::new(fmt_value(b.value.mean), (0, -5), above.clone())
        }))
        .map_err(msg)?;
    if let Some((level, _)) = &p.reference {
        chart
            .draw_series(DashedLineSeries::new(
                [(-SLOT / 2, *level), (n as i32 * SLOT - SLOT / 2, *level)],
                8,
                5,
                INK.stroke_width(2),
            ))
            .map_err(msg)?;
    }
    Ok(())
}

/// Width of the y label area.
const Y_AREA: i32 = 82;
/// Width of one strategy's slot on the x axis, in axis units.
const SLOT: i32 = 100;
/// Half the width of a bar, in axis units.
const BAR: i32 = 34;

fn draw_title_sized<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    caption: &str,
) -> Result<(), String> {
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    let (w, h) = area.dim_in_pixel();
    area.draw(&Text::new(
        caption.to_string(),
        (w as i32 / 2, h as i32 / 2),
        text(19.0).pos(Pos::new(HPos::Center, VPos::Center)),
    ))
    .map_err(msg)
}

/// The bar labels, each shortened with an ellipsis until it fits `slot` pixels, so
/// neighbouring names never overlap.
fn fit_names<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    bars: &[Bar],
    slot: i32,
) -> Result<Vec<String>, String> {
    let style = text(TICK);
    bars.iter()
        .map(|b| {
            let mut chars = b.strategy.chars().count();
            loop {
                let name = ellipsize(&b.strategy, chars);
                let (w, _) = area.estimate_text_size(&name, &style).map_err(msg)?;
                if w as i32 <= slot || chars <= 2 {
                    return Ok(name);
                }
                chars -= 1;
            }
        })
        .collect()
}

/// `name` cut to `max` characters with an ellipsis.
fn ellipsize(name: &str, max: usize) -> String {
    if name.chars().count() <= max {
        name.to_string()
    } else {
        let mut s: String = name.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_shortened_with_an_ellipsis() {
        assert_eq!(ellipsize("full", 6), "full");
        assert_eq!(ellipsize("decorrelated", 6), "decor…");
    }
}
