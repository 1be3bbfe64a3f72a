//! Legends and the marks shared by every chart: the legend band (laid out in rows that
//! wrap, measured before the plot area is split off), the strategy markers, and dashed
//! lines, which plotters does not draw itself (dashes are cut here, continuing across
//! corners, so a dashed polyline looks the same in SVG and PNG).

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::RGBColor;

use super::{Look, MARKERS, TICK, canvas, msg, text};

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
pub(crate) const LEGEND_LINE: i32 = 24;

/// Where each legend entry goes: (x, line), filling lines from `x0` and wrapping before `x1`.
/// Pure: text is measured with the bundled font, so a chart can size its legend band before
/// it draws.
fn legend_positions((x0, x1): (i32, i32), entries: &[(Swatch, String)]) -> Vec<(i32, i32)> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
