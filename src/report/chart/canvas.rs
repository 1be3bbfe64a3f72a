//! The two drawing surfaces charts are drawn on, and the text both of them set.
//!
//! plotters draws shapes well, but not text: its `ab_glyph` font code (plotters 0.3.7,
//! `style/font/ab_glyph.rs`) places each glyph of a PNG at its *truncated* pen position and
//! copies the glyph's coverage from the left edge of the glyph's pixel box, dropping the
//! glyph's left side bearing. Narrow glyphs with wide bearings (`i`, `j`, `l`, `t`, `1`, `.`)
//! are pulled up to a pixel and a half towards their left neighbour and wide ones are not,
//! so PNG words look unevenly spaced ("no-j itter", "46 35 8"). Its SVG text, in turn, names
//! a generic `sans-serif` the viewer substitutes, at another size (`size / 1.24` px) than
//! the PNG's (`size` px for the font's ascent-to-descent height, 6% larger), so the two
//! formats differ and the layout, measured with one font, is drawn with another.
//!
//! [`PngCanvas`] and [`SvgCanvas`] wrap plotters' bitmap and SVG backends, pass every shape
//! through, and set text themselves from one layout ([`layout`]): the bundled DejaVu Sans at
//! `size / 1.24` px per em, kerned, each glyph at its exact sub-pixel pen position with its
//! side bearing. The PNG rasterises the glyph outlines with `ab_glyph`; the SVG draws the
//! same outlines as paths (defined once per glyph and chart, placed with `<use>`), with an
//! invisible `<text>` of the same extent on top so the words can still be selected and
//! searched. Text therefore looks the same in both formats and on every machine, and the
//! sizes charts measure to lay out labels are the sizes drawn.
//!
//! Bitmaps (the raster chart) pass through to the PNG; the SVG embeds them as a PNG image.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::rc::Rc;
use std::sync::OnceLock;

use ab_glyph::{Font, FontRef, GlyphId, OutlineCurve, PxScale, ScaleFont, point};
use plotters::prelude::*;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind, FontTransform,
};

/// The bundled font, parsed once.
fn face() -> &'static FontRef<'static> {
    static FACE: OnceLock<FontRef<'static>> = OnceLock::new();
    FACE.get_or_init(|| {
        FontRef::try_from_slice(super::FONT).expect("the bundled font is checked by ensure_font")
    })
}

/// Pixels per em for a plotters font size: plotters' own SVG backend writes
/// `font-size = size / 1.24`, and every chart's sizes were chosen with that in mind.
pub fn em(size: f64) -> f32 {
    (size / 1.24) as f32
}

/// Font units per em of the bundled font.
fn units_per_em() -> f32 {
    face().units_per_em().unwrap_or(2048.0)
}

/// The `ab_glyph` scale giving `em` pixels per em (`PxScale` is the ascent-to-descent height).
fn scale(em: f32) -> PxScale {
    PxScale::from(em * face().height_unscaled() / units_per_em())
}

/// A line of text set in the bundled font.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// Each glyph and its pen position from the start of the line, pixels.
    pub glyphs: Vec<(GlyphId, f32)>,
    /// Advance width of the whole line, pixels.
    pub width: f32,
}

/// Sets `text` at `em` pixels per em: advances and kerning, no rounding.
pub fn layout(text: &str, em: f32) -> Layout {
    let font = face().as_scaled(scale(em));
    let mut pen = 0.0f32;
    let mut prev: Option<GlyphId> = None;
    let mut glyphs = Vec::with_capacity(text.len());
    for c in text.chars() {
        let id = font.glyph_id(c);
        if let Some(p) = prev {
            pen += font.kern(p, id);
        }
        glyphs.push((id, pen));
        pen += font.h_advance(id);
        prev = Some(id);
    }
    Layout { glyphs, width: pen }
}

/// Width in pixels of `text` at plotters font size `size`.
pub fn text_width(text: &str, size: f64) -> f64 {
    layout(text, em(size)).width as f64
}

/// Where a line starts and where its baseline lies, relative to its anchor point, for an
/// anchor `(h, v)`: left edge at `-0`, `-w/2` or `-w`; baseline an ascent below a top
/// anchor, half a cap height below a centre anchor (digits and capitals centred on it), a
/// descent above a bottom anchor.
fn origin(h: HPos, v: VPos, width: f32, em: f32) -> (f32, f32) {
    let x = match h {
        HPos::Left => 0.0,
        HPos::Center => -width / 2.0,
        HPos::Right => -width,
    };
    let y = match v {
        VPos::Top => 0.78 * em,
        VPos::Center => 0.36 * em,
        VPos::Bottom => -0.24 * em,
    };
    (x, y)
}

/// The size plotters asks about when it lays out labels: the line's width and one em.
fn estimate(text: &str, size: f64) -> (u32, u32) {
    let em = em(size);
    (layout(text, em).width.ceil() as u32, em.round() as u32)
}

/// Delegates the shape-drawing methods of [`DrawingBackend`] to `self.inner`.
macro_rules! delegate_shapes {
    () => {
        fn get_size(&self) -> (u32, u32) {
            self.inner.get_size()
        }

        fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
            self.inner.ensure_prepared()
        }

        fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
            self.inner.present()
        }

        fn draw_pixel(
            &mut self,
            point: BackendCoord,
            color: BackendColor,
        ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
            self.inner.draw_pixel(point, color)
        }

        fn draw_line<S: BackendStyle>(
            &mut self,
            from: BackendCoord,
            to: BackendCoord,
            style: &S,
        ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
            self.inner.draw_line(from, to, style)
        }

        fn draw_rect<S: BackendStyle>(
            &mut self,
            upper_left: BackendCoord,
            bottom_right: BackendCoord,
            style: &S,
            fill: bool,
        ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
            self.inner.draw_rect(upper_left, bottom_right, style, fill)
        }

        fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
            &mut self,
            path: I,
            style: &S,
        ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
            self.inner.draw_path(path, style)
        }

        fn draw_circle<S: BackendStyle>(
            &mut self,
            center: BackendCoord,
            radius: u32,
            style: &S,
            fill: bool,
        ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
            self.inner.draw_circle(center, radius, style, fill)
        }

        fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
            &mut self,
            vert: I,
            style: &S,
        ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
            self.inner.fill_polygon(vert, style)
        }

        fn estimate_text_size<TStyle: BackendTextStyle>(
            &self,
            text: &str,
            style: &TStyle,
        ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
            Ok(estimate(text, style.size()))
        }
    };
}

/// plotters' bitmap backend, with text set by [`layout`] and rasterised at sub-pixel
/// positions.
pub struct PngCanvas<'a> {
    inner: BitMapBackend<'a>,
}

impl<'a> PngCanvas<'a> {
    /// Wraps `inner`.
    pub fn new(inner: BitMapBackend<'a>) -> Self {
        PngCanvas { inner }
    }
}

impl DrawingBackend for PngCanvas<'_> {
    type ErrorType = <BitMapBackend<'static> as DrawingBackend>::ErrorType;

    delegate_shapes!();

    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let color = style.color();
        if color.alpha == 0.0 || text.is_empty() {
            return Ok(());
        }
        let em = em(style.size());
        let line = layout(text, em);
        let anchor = style.anchor();
        let (x0, y0) = origin(anchor.h_pos, anchor.v_pos, line.width, em);
        let transform = style.transform();
        let (w, h) = self.inner.get_size();
        let font = face();
        let px = scale(em);
        for (id, offset) in &line.glyphs {
            let glyph = id.with_scale_and_position(px, point(x0 + offset, y0));
            let Some(outlined) = font.outline_glyph(glyph) else {
                continue; // a space
            };
            let bounds = outlined.px_bounds();
            let mut pixels = Vec::new();
            outlined.draw(|x, y, coverage| {
                if coverage > 0.0 {
                    pixels.push((
                        bounds.min.x as i32 + x as i32,
                        bounds.min.y as i32 + y as i32,
                        coverage,
                    ))
                }
            });
            for (x, y, coverage) in pixels {
                let (dx, dy) = transform.transform(x, y);
                let (x, y) = (pos.0 + dx, pos.1 + dy);
                if x >= 0 && y >= 0 && (x as u32) < w && (y as u32) < h {
                    self.inner.draw_pixel(
                        (x, y),
                        BackendColor {
                            alpha: color.alpha * coverage.min(1.0) as f64,
                            rgb: color.rgb,
                        },
                    )?;
                }
            }
        }
        Ok(())
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.blit_bitmap(pos, size, src)
    }
}

/// What the SVG canvas draws itself, spliced into plotters' document afterwards.
#[derive(Debug, Default)]
pub struct Fragments {
    /// The markup replacing each placeholder `<text>` element, by placeholder number.
    pub parts: Vec<String>,
    /// Glyphs used, by id, and their path data in font units (y down).
    pub glyphs: BTreeMap<u16, String>,
}

/// plotters' SVG backend, with text drawn as the bundled font's glyph outlines and bitmaps
/// embedded as PNG images.
///
/// plotters' SVG backend takes no raw markup, so each text or bitmap is written through it
/// as a placeholder `<text>` element whose content is its number; [`finish_svg`] replaces
/// the placeholders with the markup kept in [`Fragments`], in drawing order.
pub struct SvgCanvas<'a> {
    inner: SVGBackend<'a>,
    fragments: Rc<RefCell<Fragments>>,
}

impl<'a> SvgCanvas<'a> {
    /// Wraps `inner`; what it draws itself goes to `fragments`.
    pub fn new(inner: SVGBackend<'a>, fragments: Rc<RefCell<Fragments>>) -> Self {
        SvgCanvas { inner, fragments }
    }

    /// Writes a placeholder for `markup` at the current position of the document.
    fn place(&mut self, markup: String) -> Result<(), DrawingErrorKind<std::io::Error>> {
        let n = {
            let mut f = self.fragments.borrow_mut();
            f.parts.push(markup);
            f.parts.len() - 1
        };
        let style = TextStyle::from((super::FAMILY, 10.0).into_font()).color(&BLACK);
        self.inner
            .draw_text(&format!("{PLACEHOLDER}{n}"), &style, (0, 0))
    }
}

/// The content of a placeholder `<text>` element, before its number.
const PLACEHOLDER: &str = "herdsim-fragment-";

/// A number for SVG attributes: at most two decimals, trailing zeros trimmed.
fn num(v: f32) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

/// `#rrggbb` of a colour.
fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// The path data of glyph `id` in font units, y pointing down (SVG's way).
fn glyph_path(id: GlyphId) -> String {
    let Some(outline) = face().outline(id) else {
        return String::new();
    };
    let mut d = String::new();
    let mut at: Option<ab_glyph::Point> = None;
    let p = |q: ab_glyph::Point| format!("{} {}", num(q.x), num(-q.y));
    for curve in &outline.curves {
        let (start, end) = match curve {
            OutlineCurve::Line(a, b) => (*a, *b),
            OutlineCurve::Quad(a, _, c) => (*a, *c),
            OutlineCurve::Cubic(a, _, _, d) => (*a, *d),
        };
        if at != Some(start) {
            if at.is_some() {
                d.push('Z');
            }
            let _ = write!(d, "M{}", p(start));
        }
        match curve {
            OutlineCurve::Line(_, b) => {
                let _ = write!(d, "L{}", p(*b));
            }
            OutlineCurve::Quad(_, b, c) => {
                let _ = write!(d, "Q{} {}", p(*b), p(*c));
            }
            OutlineCurve::Cubic(_, b, c, e) => {
                let _ = write!(d, "C{} {} {}", p(*b), p(*c), p(*e));
            }
        }
        at = Some(end);
    }
    if at.is_some() {
        d.push('Z');
    }
    d
}

/// Escapes text for SVG content and attributes.
fn escape(text: &str) -> String {
    crate::report::html::escape(text)
}

impl DrawingBackend for SvgCanvas<'_> {
    type ErrorType = std::io::Error;

    delegate_shapes!();

    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let color = style.color();
        if color.alpha == 0.0 || text.is_empty() {
            return Ok(());
        }
        let em = em(style.size());
        let line = layout(text, em);
        let anchor = style.anchor();
        let (x0, y0) = origin(anchor.h_pos, anchor.v_pos, line.width, em);
        let rotate = match style.transform() {
            FontTransform::None => "",
            FontTransform::Rotate90 => " rotate(90)",
            FontTransform::Rotate180 => " rotate(180)",
            FontTransform::Rotate270 => " rotate(270)",
        };
        let k = em / units_per_em();
        let mut markup = format!(
            "<g transform=\"translate({} {}){rotate}\" fill=\"{}\"{}>",
            pos.0,
            pos.1,
            hex(color.rgb),
            if color.alpha < 1.0 {
                format!(" fill-opacity=\"{}\"", num(color.alpha as f32))
            } else {
                String::new()
            }
        );
        {
            let mut f = self.fragments.borrow_mut();
            for (id, offset) in &line.glyphs {
                let path = f.glyphs.entry(id.0).or_insert_with(|| glyph_path(*id));
                if path.is_empty() {
                    continue; // a space
                }
                let _ = write!(
                    markup,
                    "<use href=\"#{{G}}{}\" transform=\"matrix({k} 0 0 {k} {} {})\"/>",
                    id.0,
                    num(x0 + offset),
                    num(y0),
                    k = num_k(k),
                );
            }
        }
        // The words themselves, invisible, over the glyphs: selectable and searchable.
        let _ = write!(
            markup,
            "<text x=\"{}\" y=\"{}\" font-family=\"DejaVu Sans, Verdana, sans-serif\" \
             font-size=\"{}\" textLength=\"{}\" lengthAdjust=\"spacingAndGlyphs\" \
             fill-opacity=\"0\">{}</text></g>",
            num(x0),
            num(y0),
            num(em),
            num(line.width.max(0.01)),
            escape(text)
        );
        self.place(markup)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        (w, h): (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let png = encode_png(w, h, src).map_err(DrawingErrorKind::DrawingError)?;
        self.place(format!(
            "<image x=\"{}\" y=\"{}\" width=\"{w}\" height=\"{h}\" preserveAspectRatio=\"none\" \
             style=\"image-rendering:pixelated\" href=\"data:image/png;base64,{}\"/>",
            pos.0,
            pos.1,
            base64(&png)
        ))
    }
}

/// The glyph scale factor, with enough digits for a 2 000-unit glyph to land within a
/// hundredth of a pixel.
fn num_k(k: f32) -> String {
    let s = format!("{k:.7}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Encodes an RGB buffer as PNG.
fn encode_png(w: u32, h: u32, rgb: &[u8]) -> Result<Vec<u8>, std::io::Error> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, w, h);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(std::io::Error::other)?;
        writer
            .write_image_data(rgb)
            .map_err(std::io::Error::other)?;
    }
    Ok(out)
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Replaces the placeholders in `svg` (as plotters wrote it) by their markup, and defines
/// the glyphs used, with ids starting `prefix` (unique per chart, as a report inlines
/// several charts in one page).
pub fn finish_svg(svg: &str, fragments: &Fragments, prefix: &str) -> String {
    let mut out = String::with_capacity(svg.len() + 64 * fragments.parts.len());
    let mut rest = svg;
    while let Some(start) = rest.find("<text") {
        let Some(len) = rest[start..].find("</text>") else {
            break;
        };
        let element = &rest[start..start + len];
        let number = element
            .rsplit('>')
            .next()
            .map(str::trim)
            .and_then(|t| t.strip_prefix(PLACEHOLDER))
            .and_then(|n| n.parse::<usize>().ok());
        out.push_str(&rest[..start]);
        match number.and_then(|n| fragments.parts.get(n)) {
            Some(markup) => out.push_str(&markup.replace("{G}", prefix)),
            None => out.push_str(&rest[start..start + len + 7]),
        }
        rest = &rest[start + len + 7..];
    }
    out.push_str(rest);
    if !fragments.glyphs.is_empty() {
        let mut defs = String::from("<defs>");
        for (id, path) in &fragments.glyphs {
            if !path.is_empty() {
                let _ = write!(defs, "<path id=\"{prefix}{id}\" d=\"{path}\"/>");
            }
        }
        defs.push_str("</defs>\n");
        if let Some(open) = out
            .find("<svg")
            .and_then(|i| out[i..].find('>').map(|j| i + j + 1))
        {
            let head = if out[open..].starts_with('\n') {
                open + 1
            } else {
                open
            };
            out.insert_str(head, &defs);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_kerned_and_never_rounded_glyph_by_glyph() {
        let line = layout("no-jitter", 13.0);
        assert_eq!(line.glyphs.len(), 9);
        // Pen positions are the running sum of advances: fractional, increasing.
        assert!(line.glyphs.windows(2).all(|w| w[1].1 > w[0].1));
        assert!(line.glyphs.iter().any(|g| g.1.fract() != 0.0));
        // "AV" kerns closer than "A" then "V" set apart.
        let av = layout("AV", 13.0).width;
        let apart = layout("A", 13.0).width + layout("V", 13.0).width;
        assert!(av < apart, "{av} < {apart}");
        // Twice the size, twice the width.
        let w1 = layout("capacity", 10.0).width;
        let w2 = layout("capacity", 20.0).width;
        assert!((w2 / w1 - 2.0).abs() < 1e-4);
    }

    #[test]
    fn base64_matches_the_rfc_examples() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded);
        }
    }

    #[test]
    fn placeholders_are_replaced_in_order_and_glyphs_defined_once() {
        let mut f = Fragments::default();
        f.parts.push("<g>zero{G}</g>".into());
        f.parts.push("<g>one</g>".into());
        f.glyphs.insert(7, "M0 0Z".into());
        let svg = "<svg a=\"1\">\n<rect/><text x=\"0\">\nherdsim-fragment-1\n</text><line/>\
                   <text>\nherdsim-fragment-0\n</text></svg>";
        assert_eq!(
            finish_svg(svg, &f, "c-"),
            "<svg a=\"1\">\n<defs><path id=\"c-7\" d=\"M0 0Z\"/></defs>\n<rect/><g>one</g><line/>\
             <g>zeroc-</g></svg>"
        );
    }
}
