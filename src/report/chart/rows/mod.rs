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

use plotters::prelude::*;

use super::canvas::text_width;
use super::{DESC, Swatch, TICK, legend_band};

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

/// The largest size of a chart of `groups` groups of `strategies` one-bar rows whose legend
/// takes at most `legend` pixels (the populations' and services' charts), for the memory
/// estimate. The width is that of names of ordinary length.
pub fn size_bound(strategies: u64, groups: u64, legend: u64) -> (u64, u64) {
    let row = (2 * ROW_PAD + ITEM) as u64;
    let group = (GROUP as u64).saturating_add(row.saturating_mul(strategies.max(1)));
    let body = group.saturating_mul(groups.max(1));
    let height = (TITLE + CAPTION + AXIS + 8) as u64 + legend;
    (MIN_WIDTH as u64, height.saturating_add(body))
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

mod draw;
pub use draw::{draw, wrap};

#[cfg(test)]
mod tests;
