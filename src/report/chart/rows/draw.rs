//! Drawing a [`RowsData`]: the title, legend, group headings and row names, then each
//! panel's axis, bars, whiskers, markers and value labels at the positions
//! [`fit_axis`] leaves room for.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::super::canvas::text_width;
use super::super::{
    DESC, INK, TICK, dashed, draw_title, fmt_tick, hollow_marker, legend, log_ticks, marker_shape,
    msg, text,
};
use super::*;

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
            let c = super::super::color(l);
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
