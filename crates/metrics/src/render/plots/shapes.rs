//! The marks of a figure: marker outlines, bar fills per agent, dashed polylines, and the
//! offsets that keep coinciding series apart (a horizontal dodge per curve, a small circle
//! around a shared scatter position). Split from `draw.rs`, which lays the figure out.

use super::draw::DrawResult;
use super::style::{Identity, Marker, px};
use plotters::coord::Shift;
use plotters::prelude::*;

/// Draws a bar (or legend box) between two corners in the cell's fill: solid for the first
/// agent, light with a solid edge for the second, outline only after that.
pub(super) fn bar<X: Clone, Y: Clone>(rect: [(X, Y); 2], id: &Identity) -> Vec<Rectangle<(X, Y)>> {
    let edge = id.color.stroke_width(px(0.8).max(1) as u32);
    match id.agent {
        0 => vec![Rectangle::new(rect, id.color.filled())],
        1 => vec![
            Rectangle::new(rect.clone(), id.color.mix(0.4).filled()),
            Rectangle::new(rect, edge),
        ],
        _ => vec![
            Rectangle::new(rect.clone(), WHITE.filled()),
            Rectangle::new(rect, edge),
        ],
    }
}

pub(super) fn stroke(id: &Identity, pt: f64) -> ShapeStyle {
    ShapeStyle {
        color: id.color.to_rgba(),
        filled: false,
        stroke_width: px(pt).max(1) as u32,
    }
}

/// The outline of a marker around (0, 0), radius `r` pixels.
pub(super) fn marker_shape(m: Marker, r: i32) -> Vec<(i32, i32)> {
    let rf = f64::from(r);
    let poly = |pts: &[(f64, f64)]| {
        pts.iter()
            .map(|(x, y)| ((x * rf).round() as i32, (y * rf).round() as i32))
            .collect()
    };
    match m {
        Marker::Circle => (0..20)
            .map(|i| {
                let a = f64::from(i) * std::f64::consts::TAU / 20.0;
                ((rf * a.cos()).round() as i32, (rf * a.sin()).round() as i32)
            })
            .collect(),
        Marker::Square => poly(&[(-0.85, -0.85), (0.85, -0.85), (0.85, 0.85), (-0.85, 0.85)]),
        Marker::Triangle => poly(&[(0.0, -1.1), (1.0, 0.75), (-1.0, 0.75)]),
        Marker::TriangleDown => poly(&[(0.0, 1.1), (1.0, -0.75), (-1.0, -0.75)]),
        Marker::Diamond => poly(&[(0.0, -1.2), (1.0, 0.0), (0.0, 1.2), (-1.0, 0.0)]),
        Marker::Cross => {
            let (a, b) = (0.35, 1.0);
            poly(&[
                (-b, -b + a),
                (-b + a, -b),
                (0.0, -a),
                (b - a, -b),
                (b, -b + a),
                (a, 0.0),
                (b, b - a),
                (b - a, b),
                (0.0, a),
                (-b + a, b),
                (-b, b - a),
                (-a, 0.0),
            ])
        }
    }
}

/// A polyline in pixel coordinates with the identity's dash pattern.
pub(super) fn draw_dashed<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    pts: &[(i32, i32)],
    id: &Identity,
) -> DrawResult<DB> {
    let style = stroke(id, 1.2);
    let Some((dash, gap)) = id.dash else {
        return area.draw(&PathElement::new(pts.to_vec(), style));
    };
    let (dash, gap) = (f64::from(px(dash)), f64::from(px(gap)));
    for seg in pts.windows(2) {
        let (a, b) = (seg[0], seg[1]);
        let (dx, dy) = (f64::from(b.0 - a.0), f64::from(b.1 - a.1));
        let len = dx.hypot(dy);
        if len == 0.0 {
            continue;
        }
        let mut t = 0.0;
        while t < len {
            let e = (t + dash).min(len);
            let p = |s: f64| {
                (
                    a.0 + (dx * s / len).round() as i32,
                    a.1 + (dy * s / len).round() as i32,
                )
            };
            area.draw(&PathElement::new(vec![p(t), p(e)], style))?;
            t = e + gap;
        }
    }
    Ok(())
}

/// Horizontal offset of series `i` of `m` so coinciding curves stay apart.
pub(super) fn dodge(i: usize, m: usize) -> f64 {
    let step = (0.36 / m.max(1) as f64).min(0.07);
    (i as f64 - (m as f64 - 1.0) / 2.0) * step
}

/// Scatter positions: points sharing a position are spread on a small circle around it.
pub(crate) fn spread(points: &[(f64, f64)], radius: f64) -> Vec<(f64, f64)> {
    let key = |p: &(f64, f64)| ((p.0 * 1e6).round() as i64, (p.1 * 1e6).round() as i64);
    points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let same: Vec<usize> = (0..points.len())
                .filter(|&j| key(&points[j]) == key(p))
                .collect();
            if same.len() < 2 {
                return *p;
            }
            let j = same.iter().position(|&x| x == i).unwrap_or(0);
            let a = std::f64::consts::TAU * j as f64 / same.len() as f64;
            (p.0 + radius * a.cos(), p.1 + radius * a.sin())
        })
        .collect()
}
