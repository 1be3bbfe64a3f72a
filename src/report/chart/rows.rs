//! Horizontal bars in rows: the layout of the `summary`, `populations`, `services` and
//! `paired` charts.
//!
//! One row per strategy (optionally in groups, one per population or service), its name
//! written in full in a left column sized to the longest name, so names are never cut
//! however many strategies there are; then panels side by side, one per metric, each with
//! its own value axis (linear, logarithmic or a 0-100% share) and every value written at the
//! end of its bar, in a room the axis range leaves for it, so labels never overlap a bar, a
//! neighbour or the panel's edge. Drawn with pixel arithmetic rather than plotters' charts:
//! every position is known before anything is drawn.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::canvas::text_width;
use super::{
    DESC, INK, Swatch, TICK, dashed, draw_title, fmt_tick, hollow_marker, legend, legend_band,
    log_ticks, marker_shape, msg, text,
};

/// Height of the title band.
const TITLE: u32 = 40;
/// Height of a panel's caption band (caption, then its reference line's key).
const CAPTION: u32 = 52;
/// Height of a group heading.
const GROUP: u32 = 28;
/// Height of one bar.
const ITEM: u32 = 18;
/// Space between two bars of a row.
const ITEM_GAP: u32 = 3;
/// Space around a row's bars.
const ROW_PAD: u32 = 12;
/// Height of the value axis: ticks, their labels and the description (two lines at most).
const AXIS: u32 = 72;
/// Space after a value, before the next thing.
const LABEL_GAP: i32 = 6;
/// Width of the whole chart, at least.
const MIN_WIDTH: u32 = 1400;
/// Width of one panel, at least.
const MIN_PANEL: u32 = 280;

/// How a panel's values sit on its axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Linear from 0.
    Linear,
    /// Logarithmic (values above 100x apart); zeros are written, not drawn.
    Log,
    /// A share from 0 to 100%.
    Share,
    /// Linear through 0, for differences (a line marks 0).
    Diverging,
}

/// One mark in a row of a panel.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// A bar from the axis origin, with a 95% whisker when `ci > 0`.
    Bar {
        /// Where the bar ends.
        value: f64,
        /// 95% half-width (0: no whisker).
        ci: f64,
        /// Fill.
        color: RGBColor,
        /// Fill opacity.
        alpha: f64,
        /// Written after the bar.
        label: String,
    },
    /// Segments stacked from 0: (value, colour, opacity).
    Stack {
        /// Segments, left to right.
        parts: Vec<(f64, RGBColor, f64)>,
        /// Written after the bar.
        label: String,
    },
    /// A point with an interval: filled when significant, hollow when not.
    Dot {
        /// The point.
        value: f64,
        /// Low end of the interval.
        lo: f64,
        /// High end of the interval.
        hi: f64,
        /// Filled (significant) or hollow.
        filled: bool,
        /// Marker colour.
        color: RGBColor,
        /// Marker shape.
        marker: usize,
        /// Written after the interval.
        label: String,
    },
}

impl Item {
    fn label(&self) -> &str {
        match self {
            Item::Bar { label, .. } | Item::Stack { label, .. } | Item::Dot { label, .. } => label,
        }
    }

    /// The value the label follows (the end of the bar, whisker or stack).
    fn end(&self) -> f64 {
        match self {
            Item::Bar { value, ci, .. } => value + ci.max(0.0),
            Item::Stack { parts, .. } => parts.iter().map(|p| p.0).sum(),
            Item::Dot { hi, value, .. } => hi.max(*value),
        }
    }

    /// Every value the axis must hold.
    fn extent(&self) -> Vec<f64> {
        match self {
            Item::Bar { value, ci, .. } => vec![*value, value - ci, value + ci],
            Item::Stack { parts, .. } => vec![parts.iter().map(|p| p.0).sum()],
            Item::Dot { value, lo, hi, .. } => vec![*value, *lo, *hi],
        }
    }
}

/// One panel: a metric over every row.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// Caption above the panel.
    pub caption: String,
    /// Description under the value axis.
    pub axis: String,
    /// Suffix of tick labels (`%`, `x`).
    pub unit: String,
    /// How values sit on the axis.
    pub scale: Scale,
    /// A dashed reference line across the rows, and its key.
    pub reference: Option<(f64, String)>,
    /// The marks of each row (over every group, in order).
    pub items: Vec<Vec<Item>>,
}

impl Panel {
    /// The description under the value axis, marked `(log)` on a logarithmic one: ticks of
    /// 100, 1000 and 10k read as a linear axis to anyone not told, and bars of 50 000 and
    /// 80 000 look alike on it.
    pub fn axis_desc(&self) -> String {
        if self.scale == Scale::Log {
            format!("{} (log)", self.axis)
        } else {
            self.axis.clone()
        }
    }
}

/// A row's name, and the strategy whose colour its swatch shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Written in full.
    pub label: String,
    /// Strategy index (scenario order) for the swatch.
    pub look: Option<usize>,
}

/// Rows under an optional heading.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// Heading (a population or a service), or none.
    pub label: Option<String>,
    /// The rows.
    pub rows: Vec<Row>,
}

/// A chart of rows.
#[derive(Debug, Clone, PartialEq)]
pub struct RowsData {
    /// Title.
    pub title: String,
    /// Key entries above the panels.
    pub legend: Vec<(Swatch, String)>,
    /// Row groups.
    pub groups: Vec<Group>,
    /// Panels, left to right.
    pub panels: Vec<Panel>,
}

impl RowsData {
    /// Width of the row-name column.
    fn names_width(&self) -> u32 {
        let names = self
            .groups
            .iter()
            .flat_map(|g| g.rows.iter())
            .map(|r| text_width(&r.label, TICK) + 24.0)
            .chain(
                self.groups
                    .iter()
                    .filter_map(|g| g.label.as_ref())
                    .map(|l| text_width(l, DESC) * 0.5),
            )
            .fold(60.0, f64::max);
        names.ceil() as u32 + 30
    }

    /// Chart width: room for the names and every panel.
    fn width(&self) -> u32 {
        MIN_WIDTH.max(self.names_width() + MIN_PANEL * self.panels.len().max(1) as u32 + 20)
    }

    fn legend_height(&self) -> u32 {
        legend_band((20, self.width() as i32 - 20), &self.legend)
    }

    /// Number of marks per row (the largest over panels).
    fn items_in_row(&self, row: usize) -> u32 {
        self.panels
            .iter()
            .map(|p| p.items.get(row).map_or(1, |i| i.len().max(1)))
            .max()
            .unwrap_or(1) as u32
    }

    fn row_height(&self, row: usize) -> u32 {
        let n = self.items_in_row(row);
        2 * ROW_PAD + n * ITEM + (n - 1) * ITEM_GAP
    }

    /// Height of the rows and group headings.
    fn body_height(&self) -> u32 {
        let mut h = 0;
        let mut row = 0;
        for g in &self.groups {
            if g.label.is_some() {
                h += GROUP;
            }
            for _ in &g.rows {
                h += self.row_height(row);
                row += 1;
            }
        }
        h.max(ROW_PAD)
    }

    /// Chart size.
    pub fn size(&self) -> (u32, u32) {
        (
            self.width(),
            TITLE + self.legend_height() + CAPTION + self.body_height() + AXIS + 8,
        )
    }
}

/// A value axis: the pixel span it maps to and how.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Axis {
    /// Lowest value.
    pub lo: f64,
    /// Highest value.
    pub hi: f64,
    /// Logarithmic.
    pub log: bool,
    /// Left pixel.
    pub x0: f64,
    /// Right pixel.
    pub x1: f64,
}

impl Axis {
    fn t(&self, v: f64) -> f64 {
        if self.log { v.max(self.lo).ln() } else { v }
    }

    /// The pixel of value `v` (clamped to the axis).
    pub fn px(&self, v: f64) -> i32 {
        let span = self.t(self.hi) - self.t(self.lo);
        let f = if span > 0.0 {
            ((self.t(v) - self.t(self.lo)) / span).clamp(0.0, 1.0)
        } else {
            0.0
        };
        (self.x0 + f * (self.x1 - self.x0)).round() as i32
    }
}

/// The axis of `panel` over pixels `[x0, x1]`: its range holds every value and the
/// reference (with a little headroom); then its right end is pulled in until every mark's
/// label fits after the mark's end (`LABEL_GAP` + the label's width) before `x1`.
pub fn fit_axis(panel: &Panel, x0: f64, x1: f64) -> Axis {
    let items = || panel.items.iter().flatten();
    let values: Vec<f64> = items()
        .flat_map(Item::extent)
        .chain(panel.reference.as_ref().map(|r| r.0))
        .filter(|v| v.is_finite())
        .collect();
    let mut axis = match panel.scale {
        Scale::Share => Axis {
            lo: 0.0,
            hi: 100.0,
            log: false,
            x0,
            x1,
        },
        Scale::Log => {
            let range = super::log_range(values.iter().copied(), 1.15).unwrap_or(1.0..10.0);
            Axis {
                lo: range.start,
                hi: range.end,
                log: true,
                x0,
                x1,
            }
        }
        Scale::Linear | Scale::Diverging => {
            let min = values.iter().copied().fold(0.0, f64::min);
            let max = values.iter().copied().fold(0.0, f64::max);
            let pad = (max - min).max(f64::MIN_POSITIVE) * 0.04;
            let lo = if min < 0.0 { min - pad } else { 0.0 };
            let hi = if max > 0.0 { max + pad } else { pad };
            let hi = if hi - lo > 1e-12 { hi } else { lo + 1.0 };
            Axis {
                lo,
                hi,
                log: false,
                x0,
                x1,
            }
        }
    };
    // Position of each label's start as a fraction f of the axis: x0 + f (x1' - x0) + gap +
    // width <= x1, so x1' <= x0 + (x1 - x0 - gap - width) / f.
    let mut right = x1;
    for i in items() {
        let f = (axis.px(i.end()) as f64 - x0) / (x1 - x0).max(1.0);
        let room = x1 - x0 - LABEL_GAP as f64 - text_width(i.label(), TICK) - 2.0;
        if f > 0.0 {
            right = right.min(x0 + room / f);
        } else {
            right = right.min(x1);
        }
    }
    axis.x1 = right.max(x0 + (x1 - x0) * 0.35);
    axis
}

/// Up to about `max` round tick values (1, 2 or 5 times a power of ten apart) in `[lo, hi]`.
pub fn nice_ticks(lo: f64, hi: f64, max: usize) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) || max == 0 {
        return vec![lo];
    }
    let raw = (hi - lo) / max.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| (hi - lo) / s <= max as f64)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// Draws the chart on `root`.
pub fn draw<DB: DrawingBackend>(d: &RowsData, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
    let (width, _) = root.dim_in_pixel();
    let legend_h = d.legend_height();
    let (title_area, rest) = root.split_vertically(TITLE);
    draw_title(&title_area, &d.title)?;
    if !d.legend.is_empty() {
        let (legend_area, _) = rest.split_vertically(legend_h);
        legend(&legend_area, (20, width as i32 - 20), &d.legend)?;
    }
    let top = (TITLE + legend_h) as i32;
    let body_top = top + CAPTION as i32;
    let body_bottom = body_top + d.body_height() as i32;
    let names = d.names_width() as i32;

    // Row positions: (top of the first bar) per row; group headings.
    let mut rows_y = Vec::new();
    let mut headings = Vec::new();
    let mut y = body_top;
    let mut row = 0;
    for g in &d.groups {
        if let Some(label) = &g.label {
            headings.push((y, label.clone()));
            y += GROUP as i32;
        }
        for r in &g.rows {
            rows_y.push((y, r));
            y += d.row_height(row) as i32;
            row += 1;
        }
    }

    // Row names, swatches and group headings.
    let name_style = text(TICK).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, (y, r)) in rows_y.iter().enumerate() {
        let mid = y + d.row_height(i) as i32 / 2;
        let mut x = 16;
        if let Some(l) = r.look {
            let c = super::color(l);
            root.draw(&Rectangle::new(
                [(x, mid - 6), (x + 12, mid + 6)],
                c.mix(0.9).filled(),
            ))
            .map_err(msg)?;
            x += 18;
        }
        root.draw(&Text::new(r.label.clone(), (x, mid), name_style.clone()))
            .map_err(msg)?;
    }
    // Panels.
    let n = d.panels.len().max(1) as i32;
    let panel_w = (width as i32 - names - 10) / n;
    for (p, panel) in d.panels.iter().enumerate() {
        let left = names + p as i32 * panel_w;
        let x0 = (left + 14) as f64;
        let x1 = (left + panel_w - 22) as f64;
        let axis = fit_axis(panel, x0, x1);
        draw_panel(
            root,
            panel,
            &axis,
            x1 as i32,
            (top, body_top, body_bottom),
            &rows_y,
            d,
        )?;
    }
    for (y, label) in &headings {
        root.draw(&PathElement::new(
            [(10, *y + 2), (width as i32 - 10, *y + 2)],
            INK.mix(0.25).stroke_width(1),
        ))
        .map_err(msg)?;
        let mid = *y + GROUP as i32 / 2 + 2;
        let w = text_width(label, DESC).ceil() as i32;
        root.draw(&Rectangle::new(
            [(12, mid - 10), (16 + w + 4, mid + 10)],
            WHITE.filled(),
        ))
        .map_err(msg)?;
        root.draw(&Text::new(
            label.clone(),
            (14, mid),
            text(DESC).pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(msg)?;
    }
    Ok(())
}

fn draw_panel<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    panel: &Panel,
    axis: &Axis,
    right: i32,
    (top, body_top, body_bottom): (i32, i32, i32),
    rows_y: &[(i32, &Row)],
    d: &RowsData,
) -> Result<(), String> {
    let (x0, x1) = (axis.x0 as i32, axis.x1 as i32);
    let centre = (x0 + right) / 2;
    root.draw(&Text::new(
        panel.caption.clone(),
        (centre, top + 12),
        text(18.0).pos(Pos::new(HPos::Center, VPos::Center)),
    ))
    .map_err(msg)?;
    if let Some((_, key)) = &panel.reference {
        let y = top + 36;
        dashed(root, &[(x0, y), (x0 + 22, y)], INK, Some((8, 5)), 2)?;
        root.draw(&Text::new(
            key.clone(),
            (x0 + 28, y),
            text(TICK).pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(msg)?;
    }

    // Grid and ticks.
    let max_ticks = ((x1 - x0) / 70).max(2) as usize;
    let ticks: Vec<f64> = match panel.scale {
        Scale::Log => log_ticks(&(axis.lo..axis.hi), max_ticks),
        Scale::Share if x1 - x0 < 240 => vec![0.0, 50.0, 100.0],
        Scale::Share => vec![0.0, 25.0, 50.0, 75.0, 100.0],
        Scale::Linear | Scale::Diverging => nice_ticks(axis.lo, axis.hi, max_ticks),
    };
    for t in &ticks {
        let x = axis.px(*t);
        root.draw(&PathElement::new(
            [(x, body_top), (x, body_bottom)],
            INK.mix(0.08).stroke_width(1),
        ))
        .map_err(msg)?;
        root.draw(&PathElement::new(
            [(x, body_bottom), (x, body_bottom + 5)],
            INK.stroke_width(1),
        ))
        .map_err(msg)?;
        root.draw(&Text::new(
            format!("{}{}", fmt_tick(*t), panel.unit),
            (x, body_bottom + 8),
            text(TICK).pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(msg)?;
    }
    root.draw(&PathElement::new(
        [(x0, body_bottom), (x1, body_bottom)],
        INK.stroke_width(1),
    ))
    .map_err(msg)?;
    for (k, line) in wrap(&panel.axis_desc(), DESC, (right - x0 + 30) as f64)
        .iter()
        .enumerate()
    {
        root.draw(&Text::new(
            line.clone(),
            (centre, body_bottom + 32 + 18 * k as i32),
            text(DESC).pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(msg)?;
    }
    let origin = match panel.scale {
        Scale::Log => axis.x0 as i32,
        _ => axis.px(0.0),
    };
    if panel.scale == Scale::Diverging {
        root.draw(&PathElement::new(
            [(origin, body_top), (origin, body_bottom)],
            INK.stroke_width(1),
        ))
        .map_err(msg)?;
    } else {
        root.draw(&PathElement::new(
            [(origin, body_top), (origin, body_bottom)],
            INK.mix(0.6).stroke_width(1),
        ))
        .map_err(msg)?;
    }

    if let Some((level, _)) = &panel.reference {
        let x = axis.px(*level);
        dashed(
            root,
            &[(x, body_top), (x, body_bottom)],
            INK,
            Some((8, 5)),
            2,
        )?;
    }

    // Marks.
    let label_style = text(TICK).pos(Pos::new(HPos::Left, VPos::Center));
    for (r, (y, _)) in rows_y.iter().enumerate() {
        let Some(items) = panel.items.get(r) else {
            continue;
        };
        let n = items.len().max(1) as i32;
        let room = d.row_height(r) as i32 - 2 * ROW_PAD as i32;
        let used = n * ITEM as i32 + (n - 1) * ITEM_GAP as i32;
        let mut top = y + ROW_PAD as i32 + (room - used) / 2;
        for item in items {
            let mid = top + ITEM as i32 / 2;
            let end = match item {
                Item::Bar {
                    value,
                    ci,
                    color,
                    alpha,
                    ..
                } => {
                    let x = axis.px(*value);
                    if !(axis.log && *value <= 0.0) && x != origin {
                        root.draw(&Rectangle::new(
                            [(origin.min(x), top), (origin.max(x), top + ITEM as i32)],
                            color.mix(*alpha).filled(),
                        ))
                        .map_err(msg)?;
                    }
                    let mut end = x;
                    if *ci > 0.0 {
                        let lo =
                            axis.px((value - ci).max(if axis.log { axis.lo } else { f64::MIN }));
                        let hi = axis.px(value + ci);
                        whisker(root, lo, hi, mid)?;
                        end = end.max(hi);
                    }
                    end
                }
                Item::Stack { parts, .. } => {
                    let mut from = 0.0;
                    for (v, c, alpha) in parts {
                        let (a, b) = (axis.px(from), axis.px(from + v));
                        if b > a {
                            root.draw(&Rectangle::new(
                                [(a, top), (b, top + ITEM as i32)],
                                c.mix(*alpha).filled(),
                            ))
                            .map_err(msg)?;
                        }
                        from += v;
                    }
                    axis.px(from)
                }
                Item::Dot {
                    value,
                    lo,
                    hi,
                    filled,
                    color,
                    marker,
                    ..
                } => {
                    let (a, b) = (axis.px(*lo), axis.px(*hi));
                    if b > a {
                        whisker(root, a, b, mid)?;
                    }
                    let at = EmptyElement::at((axis.px(*value), mid));
                    if *filled {
                        root.draw(&(at + marker_shape(*marker, *color)))
                            .map_err(msg)?;
                    } else {
                        root.draw(&(at + hollow_marker(*marker, *color)))
                            .map_err(msg)?;
                    }
                    b.max(axis.px(*value) + 7)
                }
            };
            // On a white box, so a reference line behind never crosses the text.
            let w = text_width(item.label(), TICK).ceil() as i32;
            root.draw(&Rectangle::new(
                [
                    (end + LABEL_GAP - 2, mid - 8),
                    (end + LABEL_GAP + w + 2, mid + 8),
                ],
                WHITE.filled(),
            ))
            .map_err(msg)?;
            root.draw(&Text::new(
                item.label().to_string(),
                (end + LABEL_GAP, mid),
                label_style.clone(),
            ))
            .map_err(msg)?;
            top += (ITEM + ITEM_GAP) as i32;
        }
    }
    Ok(())
}

/// `text` on one line when it fits `width` pixels at `size`, else on two, split at the space
/// nearest the middle.
pub fn wrap(text: &str, size: f64, width: f64) -> Vec<String> {
    if text_width(text, size) <= width {
        return vec![text.to_string()];
    }
    let middle = text.len() / 2;
    match text
        .match_indices(' ')
        .map(|(i, _)| i)
        .min_by_key(|i| i.abs_diff(middle))
    {
        Some(i) => vec![text[..i].to_string(), text[i + 1..].to_string()],
        None => vec![text.to_string()],
    }
}

/// A 95% whisker from pixel `a` to `b` at height `y`, with caps.
fn whisker<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    a: i32,
    b: i32,
    y: i32,
) -> Result<(), String> {
    root.draw(&PathElement::new([(a, y), (b, y)], INK.stroke_width(2)))
        .map_err(msg)?;
    for x in [a, b] {
        root.draw(&PathElement::new(
            [(x, y - 5), (x, y + 5)],
            INK.stroke_width(2),
        ))
        .map_err(msg)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(value: f64, label: &str) -> Item {
        Item::Bar {
            value,
            ci: 0.0,
            color: INK,
            alpha: 1.0,
            label: label.into(),
        }
    }

    #[test]
    fn a_log_axis_says_so_under_it_and_a_linear_one_does_not() {
        let mut panel = Panel {
            caption: String::new(),
            axis: "calls per run".into(),
            unit: String::new(),
            scale: Scale::Log,
            reference: None,
            items: Vec::new(),
        };
        assert_eq!(panel.axis_desc(), "calls per run (log)");
        for scale in [Scale::Linear, Scale::Share, Scale::Diverging] {
            panel.scale = scale;
            assert_eq!(panel.axis_desc(), "calls per run");
        }
    }

    #[test]
    fn the_axis_leaves_room_for_every_label_after_its_bar() {
        let panel = Panel {
            caption: String::new(),
            axis: String::new(),
            unit: String::new(),
            scale: Scale::Linear,
            reference: None,
            items: vec![
                vec![bar(80_671.0, "80 671 = 8.07x")],
                vec![bar(208.0, "208 = 0.02x")],
                vec![bar(50_000.0, "50 000 = 5.00x")],
            ],
        };
        let axis = fit_axis(&panel, 100.0, 400.0);
        for item in panel.items.iter().flatten() {
            let end =
                axis.px(item.end()) as f64 + LABEL_GAP as f64 + text_width(item.label(), TICK);
            assert!(end <= 401.0, "{}: ends at {end}", item.label());
        }
        // The same on a log axis, which starts at the power of ten below the least value.
        let log = Panel {
            scale: Scale::Log,
            ..panel.clone()
        };
        let axis = fit_axis(&log, 100.0, 400.0);
        assert!(axis.log && axis.lo == 100.0, "{axis:?}");
        assert!(axis.hi < 100_000.0, "{axis:?}");
        for item in log.items.iter().flatten() {
            let end =
                axis.px(item.end()) as f64 + LABEL_GAP as f64 + text_width(item.label(), TICK);
            assert!(end <= 401.0, "{}: ends at {end}", item.label());
        }
    }

    #[test]
    fn ticks_are_round_and_inside() {
        assert_eq!(
            nice_ticks(0.0, 100.0, 5),
            [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        assert_eq!(nice_ticks(0.0, 9.0, 4), [0.0, 5.0]);
        assert_eq!(nice_ticks(0.0, 9.0, 5), [0.0, 2.0, 4.0, 6.0, 8.0]);
        assert_eq!(nice_ticks(-30.0, 12.0, 5), [-30.0, -20.0, -10.0, 0.0, 10.0]);
    }
}
