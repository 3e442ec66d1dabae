//! Text for the PNG backend, laid out and rasterised here with `ab_glyph` instead of plotters'
//! own `ab_glyph` glue. That glue (plotters 0.3.7, `style/font/ab_glyph.rs`) places each glyph's
//! coverage at the pen position without the glyph's left side bearing and truncates the pen to
//! whole pixels per glyph, so narrow letters drift left and wide ones crowd the next: "pg-raw"
//! rendered as "p g-raw". Here every glyph is positioned at its exact pen position (advance
//! widths plus kerning, in floating point) and its outline bounds already include the bearing.
//!
//! [`Png`] wraps the bitmap backend and overrides only `draw_text` and `estimate_text_size`;
//! the SVG backend writes `<text>` elements that the viewer lays out, so it needs no fix.

use ab_glyph::{Font, FontRef, PxScale, ScaleFont, point};
use plotters::prelude::*;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind, FontTransform,
};

/// The embedded font (DejaVu Sans, Bitstream Vera licence).
pub(crate) const FONT: &[u8] = include_bytes!("../../../assets/DejaVuSans.ttf");

fn font() -> FontRef<'static> {
    // The embedded file is a valid TrueType font (checked by the tests below).
    FontRef::try_from_slice(FONT).expect("embedded DejaVu Sans parses")
}

/// Width and height in pixels of `text` at `size` pixels per em, and the ascent.
fn layout(f: &FontRef<'static>, size: f64, text: &str) -> (f32, f32, f32) {
    let s = f.as_scaled(PxScale::from(size as f32));
    let mut w = 0f32;
    let mut prev = None;
    for c in text.chars() {
        let id = s.glyph_id(c);
        if let Some(p) = prev {
            w += s.kern(p, id);
        }
        w += s.h_advance(id);
        prev = Some(id);
    }
    (w, s.ascent() - s.descent(), s.ascent())
}

/// The bitmap backend with correct glyph placement.
pub(crate) struct Png<'a> {
    inner: BitMapBackend<'a>,
    font: FontRef<'static>,
}

impl<'a> Png<'a> {
    pub(super) fn new(path: &'a std::path::Path, size: (u32, u32)) -> Png<'a> {
        Png {
            inner: BitMapBackend::new(path, size),
            font: font(),
        }
    }
}

impl DrawingBackend for Png<'_> {
    type ErrorType = <BitMapBackend<'static> as DrawingBackend>::ErrorType;

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
        ul: BackendCoord,
        br: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_rect(ul, br, style, fill)
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

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        let (w, h, _) = layout(&self.font, style.size(), text);
        Ok((w.ceil() as u32, h.ceil() as u32))
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let size = style.size();
        let (w, h, ascent) = layout(&self.font, size, text);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0.0,
            HPos::Right => -w,
            HPos::Center => -w / 2.0,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0.0,
            VPos::Center => -h / 2.0,
            VPos::Bottom => -h,
        };
        let trans = style.transform();
        let font = self.font.clone();
        let s = font.as_scaled(PxScale::from(size as f32));
        let (width, height) = self.get_size();
        let mut pen = dx;
        let mut prev = None;
        let mut pixels: Vec<(i32, i32, f32)> = Vec::new();
        for c in text.chars() {
            let id = s.glyph_id(c);
            if let Some(p) = prev {
                pen += s.kern(p, id);
            }
            prev = Some(id);
            let glyph = id.with_scale_and_position(s.scale(), point(pen, dy + ascent));
            pen += s.h_advance(id);
            let Some(outline) = font.outline_glyph(glyph) else {
                continue;
            };
            let b = outline.px_bounds();
            outline.draw(|x, y, cov| {
                if cov > 0.0 {
                    pixels.push((b.min.x as i32 + x as i32, b.min.y as i32 + y as i32, cov));
                }
            });
        }
        for (x, y, cov) in pixels {
            let (x, y) = match trans {
                FontTransform::None => (x, y),
                _ => trans.transform(x, y),
            };
            let (x, y) = (pos.0 + x, pos.1 + y);
            if x >= 0 && y >= 0 && (x as u32) < width && (y as u32) < height {
                self.inner.draw_pixel(
                    (x, y),
                    BackendColor {
                        alpha: color.alpha * f64::from(cov.min(1.0)),
                        rgb: color.rgb,
                    },
                )?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advances_follow_the_font() {
        let f = font();
        // Proportional font: "ii" is narrower than "mm"; a word is the sum of its letters
        // (DejaVu Sans has no kerning between these pairs).
        let (ii, _, _) = layout(&f, 40.0, "ii");
        let (mm, _, _) = layout(&f, 40.0, "mm");
        assert!(ii * 2.0 < mm, "{ii} vs {mm}");
        let (p, _, _) = layout(&f, 40.0, "p");
        let (g, _, _) = layout(&f, 40.0, "g");
        let (pg, _, _) = layout(&f, 40.0, "pg");
        assert!((pg - (p + g)).abs() < 0.01);
    }
}
