//! Drawing of one figure: a title, a grid of panels (line charts, grouped bars, scatters or a
//! forest plot), one legend for all panels to the right of them — outside every data area —
//! and notes under the panels (coinciding series, what an offset means). Sizes are in points
//! at 300 dpi (see `style.rs`); the same drawing runs on the PNG and the SVG backend.
//!
//! Coinciding series stay visible: lines are dodged horizontally by a fixed step per series
//! of a panel, scatter points sharing a position are spread on a small circle around it, and
//! the figure's notes name the series that coincide.

use super::shapes::{bar, dodge, draw_dashed, marker_shape, spread};
use super::style::{Identity, Marker, px};
use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub(crate) const FAMILY: &str = "sans-serif";

/// What drawing on a backend gives: plotters' own error, kept for `MetricsError::Plot`.
pub(crate) type DrawResult<DB> =
    Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// A labelled series of points with its cell's identity.
#[derive(Debug, Clone)]
pub(crate) struct Series {
    pub label: String,
    pub id: Identity,
    pub points: Vec<(f64, f64)>,
}

/// One bar per category (`None`: not available).
#[derive(Debug, Clone)]
pub(crate) struct BarSeries {
    pub id: Identity,
    pub values: Vec<Option<f64>>,
}

/// One forest row: label, estimate and interval.
#[derive(Debug, Clone)]
pub(crate) struct ForestRow {
    pub label: String,
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

#[derive(Debug, Clone)]
pub(crate) enum PanelKind {
    /// Curves over integer x (k); y in [0, 1].
    Lines { x_max: u32, series: Vec<Series> },
    /// Points in [0, 1]²; axes shown in percent.
    Scatter { series: Vec<Series> },
    /// Vertical grouped bars, y in [0, 1].
    Bars {
        categories: Vec<String>,
        series: Vec<BarSeries>,
    },
    /// Horizontal intervals around estimates, a reference line at 0.
    Forest { rows: Vec<ForestRow> },
}

#[derive(Debug, Clone)]
pub(crate) struct Panel {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub kind: PanelKind,
}

/// How a legend entry is drawn: as the figure draws its cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Key {
    /// A line with a marker (curves).
    Line,
    /// A marker alone (scatter points).
    Marker,
    /// A box with the bar fill (bars).
    Box,
}

/// A legend entry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LegendEntry {
    pub label: String,
    pub id: Identity,
    pub key: Key,
}

#[derive(Debug, Clone)]
pub(crate) struct Figure {
    pub title: String,
    pub panels: Vec<Panel>,
    pub legend: Vec<LegendEntry>,
    pub notes: Vec<String>,
}

/// Figure width: a two-column-wide 7 in figure.
const WIDTH_PT: f64 = 504.0;
const PANEL_H_PT: f64 = 190.0;
const TITLE_PT: f64 = 11.0;
const LABEL_PT: f64 = 8.0;
const TICK_PT: f64 = 7.0;
const LEGEND_PT: f64 = 7.5;
const NOTE_PT: f64 = 7.0;

/// Panels per row.
fn columns(n: usize) -> usize {
    n.clamp(1, 3)
}

/// Notes wrapped to lines of at most this many characters.
const NOTE_CHARS: usize = 150;

/// Title lines of at most this many characters.
const TITLE_CHARS: usize = 72;

fn wrap(text: &str) -> Vec<String> {
    wrap_at(text, NOTE_CHARS)
}

fn wrap_at(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split(' ') {
        let cur = lines.last_mut().expect("never empty");
        if !cur.is_empty() && cur.chars().count() + word.chars().count() + 1 > width {
            lines.push(word.to_string());
        } else {
            if !cur.is_empty() {
                cur.push(' ');
            }
            cur.push_str(word);
        }
    }
    lines
}

impl Figure {
    /// The title wrapped; the simulated label, when present, on a line of its own so it
    /// stays one searchable string.
    fn title_lines(&self) -> Vec<String> {
        let label = format!(" ({})", crate::summary::simulated::SIMULATED_LABEL);
        match self.title.strip_suffix(&label) {
            Some(main) if self.title.chars().count() > TITLE_CHARS => {
                let mut lines = wrap_at(main, TITLE_CHARS);
                lines.push(label.trim().to_string());
                lines
            }
            _ => wrap_at(&self.title, TITLE_CHARS),
        }
    }

    /// Height of the title band in points.
    fn title_pt(&self) -> f64 {
        TITLE_PT * (1.35 * self.title_lines().len() as f64 + 1.25)
    }

    fn note_lines(&self) -> Vec<String> {
        self.notes.iter().flat_map(|n| wrap(n)).collect()
    }

    /// Pixel size of the figure (PNG and SVG alike).
    pub(crate) fn size(&self) -> (u32, u32) {
        let rows = self
            .panels
            .len()
            .div_ceil(columns(self.panels.len()))
            .max(1);
        let rows_for_legend = (self.legend.len() as f64 * LEGEND_PT * 1.6) / PANEL_H_PT;
        let body = (rows as f64).max(rows_for_legend.ceil()) * PANEL_H_PT;
        let notes = self.note_lines().len() as f64 * NOTE_PT * 1.45;
        let h = self.title_pt() + body + notes + 8.0;
        (px(WIDTH_PT) as u32, px(h) as u32)
    }
}

/// Draws the figure on `root`.
pub(crate) fn draw_figure<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    fig: &Figure,
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let (w, h) = root.dim_in_pixel();
    let title_h = px(fig.title_pt());
    let notes = fig.note_lines();
    let notes_h = (notes.len() as f64 * NOTE_PT * 1.45).ceil();
    let (head, rest) = root.split_vertically(title_h);
    let line_h = px(TITLE_PT * 1.35);
    let top = (title_h - line_h * fig.title_lines().len() as i32) / 2;
    for (i, line) in fig.title_lines().into_iter().enumerate() {
        head.draw(&Text::new(
            line,
            (w as i32 / 2, top + line_h * i as i32 + line_h / 2),
            (FAMILY, px(TITLE_PT))
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Center)),
        ))?;
    }
    let body_h = h as i32 - title_h - px(notes_h) - px(4.0);
    let (body, foot) = rest.split_vertically(body_h);
    let longest = fig
        .legend
        .iter()
        .map(|e| e.label.chars().count())
        .max()
        .unwrap_or(0) as f64;
    let legend_w = px((longest * LEGEND_PT * 0.56 + 30.0).clamp(60.0, WIDTH_PT * 0.42));
    let (plots, legend) = body.split_horizontally(w as i32 - legend_w);
    let cols = columns(fig.panels.len());
    let rows = fig.panels.len().div_ceil(cols).max(1);
    let panel_h = (px(PANEL_H_PT)).min(body_h / rows as i32);
    let (grid, _) = plots.split_vertically(panel_h * rows as i32);
    for (area, panel) in grid.split_evenly((rows, cols)).iter().zip(&fig.panels) {
        draw_panel(area, panel)?;
    }
    draw_legend(&legend, &fig.legend)?;
    for (i, line) in notes.iter().enumerate() {
        foot.draw(&Text::new(
            line.clone(),
            (px(8.0), px(NOTE_PT * 1.45) * i as i32),
            (FAMILY, px(NOTE_PT)).into_font().color(&BLACK),
        ))?;
    }
    root.present()
}

fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[LegendEntry],
) -> DrawResult<DB> {
    let step = px(LEGEND_PT * 1.6);
    let x0 = px(8.0);
    let y0 = px(TITLE_PT);
    for (i, e) in entries.iter().enumerate() {
        let y = y0 + step * i as i32;
        if e.key == Key::Box {
            for r in bar::<i32, i32>([(x0, y - px(3.0)), (x0 + px(12.0), y + px(3.0))], &e.id) {
                area.draw(&r)?;
            }
        } else {
            if e.key == Key::Line {
                draw_dashed(area, &[(x0, y), (x0 + px(20.0), y)], &e.id)?;
            }
            area.draw(
                &(EmptyElement::at((x0 + px(10.0), y))
                    + Polygon::new(marker_shape(e.id.marker, px(2.6)), e.id.color.filled())),
            )?;
        }
        area.draw(&Text::new(
            e.label.clone(),
            (x0 + px(25.0), y),
            (FAMILY, px(LEGEND_PT))
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }
    Ok(())
}

fn draw_panel<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, p: &Panel) -> DrawResult<DB> {
    let margin = px(6.0);
    let mut b = ChartBuilder::on(area);
    b.caption(&p.title, (FAMILY, px(LABEL_PT + 1.0)))
        .margin(margin)
        .x_label_area_size(px(21.0))
        .y_label_area_size(px(34.0));
    match &p.kind {
        PanelKind::Lines { x_max, series } => draw_lines(&mut b, p, *x_max, series),
        PanelKind::Scatter { series } => draw_scatter(&mut b, p, series),
        PanelKind::Bars { categories, series } => draw_bars(&mut b, p, categories, series),
        PanelKind::Forest { rows } => draw_forest(&mut b, p, rows),
    }
}

/// The mesh styles every panel kind shares: tick and axis-description fonts, the axis and
/// the light grid lines.
struct Mesh {
    label_style: (&'static str, i32),
    desc_style: (&'static str, i32),
    axis: ShapeStyle,
    light: ShapeStyle,
}

impl Mesh {
    fn new() -> Mesh {
        Mesh {
            label_style: (FAMILY, px(TICK_PT)),
            desc_style: (FAMILY, px(LABEL_PT)),
            axis: BLACK.stroke_width(px(0.6) as u32),
            light: RGBColor(225, 225, 225).stroke_width(px(0.3).max(1) as u32),
        }
    }

    /// `mesh` with these styles and the panel's axis descriptions; each panel kind adds its
    /// ticks.
    fn apply<'m, 'a, 'b, X: Ranged, Y: Ranged, DB: DrawingBackend>(
        self,
        mesh: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
        p: &Panel,
    ) -> &'m mut MeshStyle<'a, 'b, X, Y, DB> {
        mesh.x_desc(&p.x_desc)
            .y_desc(&p.y_desc)
            .label_style(self.label_style)
            .axis_desc_style(self.desc_style)
            .axis_style(self.axis)
            .bold_line_style(self.light)
            .light_line_style(TRANSPARENT)
    }
}

/// The category at tick `v` of a category axis: its ticks fall at and between the
/// categories, and only those at one are labelled.
fn category_at(v: f64) -> Option<usize> {
    ((v - v.round()).abs() <= 1e-6 && v >= 0.0).then(|| v.round() as usize)
}

/// Pass^k curves: one dashed line with markers per series, dodged apart.
fn draw_lines<DB: DrawingBackend>(
    b: &mut ChartBuilder<'_, '_, DB>,
    p: &Panel,
    x_max: u32,
    series: &[Series],
) -> DrawResult<DB> {
    let marker_r = px(2.6);
    let x_max = f64::from(x_max.max(1));
    let mut chart = b.build_cartesian_2d(0.6f64..x_max + 0.4, -0.03f64..1.03)?;
    Mesh::new()
        .apply(&mut chart.configure_mesh(), p)
        .x_labels((x_max as usize).min(16) + 1)
        .x_label_formatter(&|v| {
            if (v - v.round()).abs() < 1e-6 && *v >= 1.0 {
                format!("{}", v.round() as i64)
            } else {
                String::new()
            }
        })
        .y_labels(6)
        .y_label_formatter(&|v| format!("{v:.1}"))
        .draw()?;
    let m = series.len();
    for (i, s) in series.iter().enumerate() {
        let off = dodge(i, m);
        let pts: Vec<(f64, f64)> = s.points.iter().map(|(x, y)| (x + off, *y)).collect();
        let pixels: Vec<(i32, i32)> = pts.iter().map(|&c| chart.backend_coord(&c)).collect();
        let plot = chart.plotting_area().strip_coord_spec();
        let (ox, oy) = chart.plotting_area().get_base_pixel();
        let local: Vec<(i32, i32)> = pixels.iter().map(|(x, y)| (x - ox, y - oy)).collect();
        draw_dashed(&plot, &local, &s.id)?;
        chart.draw_series(pts.iter().map(|&c| {
            EmptyElement::at(c)
                + Polygon::new(marker_shape(s.id.marker, marker_r), s.id.color.filled())
        }))?;
    }
    Ok(())
}

/// Points in [0, 1]², coinciding ones spread apart.
fn draw_scatter<DB: DrawingBackend>(
    b: &mut ChartBuilder<'_, '_, DB>,
    p: &Panel,
    series: &[Series],
) -> DrawResult<DB> {
    let mut chart = b.build_cartesian_2d(-0.03f64..1.03, -0.03f64..1.06)?;
    Mesh::new()
        .apply(&mut chart.configure_mesh(), p)
        .x_label_formatter(&|v| format!("{:.0}", v * 100.0))
        .y_label_formatter(&|v| format!("{:.0}", v * 100.0))
        .draw()?;
    let all: Vec<(f64, f64)> = series.iter().flat_map(|s| s.points.clone()).collect();
    let moved = spread(&all, 0.018);
    let mut at = 0;
    for s in series {
        let pts = &moved[at..at + s.points.len()];
        at += s.points.len();
        chart.draw_series(pts.iter().map(|&c| {
            EmptyElement::at(c)
                + Polygon::new(marker_shape(s.id.marker, px(3.2)), s.id.color.filled())
        }))?;
    }
    Ok(())
}

/// Grouped bars per category, labelled with their values when there is room.
fn draw_bars<DB: DrawingBackend>(
    b: &mut ChartBuilder<'_, '_, DB>,
    p: &Panel,
    categories: &[String],
    series: &[BarSeries],
) -> DrawResult<DB> {
    let n = categories.len().max(1);
    let mut chart = b.build_cartesian_2d(-0.5f64..n as f64 - 0.5, 0f64..1.12)?;
    let cats = categories.to_vec();
    Mesh::new()
        .apply(&mut chart.configure_mesh(), p)
        .x_labels(n * 2 + 1)
        .x_label_formatter(&move |v| {
            (category_at(*v).and_then(|c| cats.get(c)).cloned()).unwrap_or_default()
        })
        .y_labels(6)
        .y_label_formatter(&|v| format!("{v:.1}"))
        .disable_x_mesh()
        .draw()?;
    let m = series.len().max(1) as f64;
    let band = 0.8 / m;
    for (s, bs) in series.iter().enumerate() {
        let left = |c: usize| c as f64 - 0.4 + band * s as f64;
        chart.draw_series(
            bs.values
                .iter()
                .enumerate()
                .filter_map(|(c, v)| {
                    let v = (*v)?;
                    Some(bar::<f64, f64>(
                        [(left(c) + band * 0.05, 0.0), (left(c) + band * 0.95, v)],
                        &bs.id,
                    ))
                })
                .flatten(),
        )?;
        if series.len() > 4 {
            // Too narrow for labels; the CSV has the values.
            continue;
        }
        let value_font = (FAMILY, px(TICK_PT - 1.5).max(8))
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Bottom));
        chart.draw_series(bs.values.iter().enumerate().map(|(c, v)| {
            let text = v.map_or("n/a".to_string(), |v| format!("{v:.2}"));
            Text::new(
                text,
                (left(c) + band / 2.0, v.unwrap_or(0.0) + 0.01),
                value_font.clone(),
            )
        }))?;
    }
    Ok(())
}

/// A forest plot: each row's estimate and interval around zero.
fn draw_forest<DB: DrawingBackend>(
    b: &mut ChartBuilder<'_, '_, DB>,
    p: &Panel,
    rows: &[ForestRow],
) -> DrawResult<DB> {
    let n = rows.len().max(1);
    let lo = rows.iter().map(|r| r.low).fold(0.0f64, f64::min);
    let hi = rows.iter().map(|r| r.high).fold(0.0f64, f64::max);
    let pad = ((hi - lo) * 0.08).max(0.02);
    let labels: Vec<String> = rows.iter().map(|r| r.label.clone()).collect();
    let mut chart = b.build_cartesian_2d(lo - pad..hi + pad, -0.6f64..n as f64 - 0.4)?;
    Mesh::new()
        .apply(&mut chart.configure_mesh(), p)
        .y_labels(n * 2 + 1)
        .y_label_formatter(&move |v| {
            (category_at(*v)
                .and_then(|c| labels.get(n - 1 - c.min(n - 1)))
                .cloned())
            .unwrap_or_default()
        })
        .x_label_formatter(&|v| format!("{v:+.2}"))
        .disable_y_mesh()
        .draw()?;
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(0.0, -0.6), (0.0, n as f64 - 0.4)],
        RGBColor(120, 120, 120).stroke_width(px(0.6) as u32),
    )))?;
    let ink = super::style::OKABE_ITO[5];
    for (i, r) in rows.iter().enumerate() {
        let y = (n - 1 - i) as f64;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(r.low, y), (r.high, y)],
            ink.stroke_width(px(1.2) as u32),
        )))?;
        for x in [r.low, r.high] {
            chart.draw_series(std::iter::once(
                EmptyElement::at((x, y))
                    + PathElement::new(
                        vec![(0, -px(3.0)), (0, px(3.0))],
                        ink.stroke_width(px(1.2) as u32),
                    ),
            ))?;
        }
        chart.draw_series(std::iter::once(
            EmptyElement::at((r.estimate, y))
                + Polygon::new(marker_shape(Marker::Square, px(3.0)), ink.filled()),
        ))?;
    }
    Ok(())
}
