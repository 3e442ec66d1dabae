//! Plots of a `Report`, each written as PNG and SVG with plotters:
//! - `pass_k`: Pass^k against k, one line per group (PolicyGuide Figures 4/5);
//! - `pass_by_slice`: grouped horizontal bars of Pass^K overall / PV / Mut per group
//!   (PolicyGuard Table 2);
//! - `block_vs_recall`: Block% against PV recall in the verdict view, one point per guarded
//!   group with violating attempts (PolicyGuard Table 7);
//! - `attack_success`: attack success per trial per group (PolicyGuide Figure 6), when any.
//!
//! A report with a simulated group labels every plot title (see [`crate::simulated`]).
//!
//! Text uses DejaVu Sans embedded in the binary (`assets/DejaVuSans.ttf`, Bitstream Vera
//! licence in `assets/DejaVuSans-LICENSE.txt`), registered with plotters' `ab_glyph` backend:
//! no system font is looked up at run time. SVG files name the family `sans-serif`.

use crate::error::MetricsError;
use crate::report::Report;
use crate::simulated::titled;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};
use std::sync::Once;

const FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
const FAMILY: &str = "sans-serif";

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The embedded file is a valid TrueType font; a failure would show as missing text.
        let _ = plotters::style::register_font(FAMILY, FontStyle::Normal, FONT);
    });
}

type DrawResult = Result<(), String>;

/// Bar colours (Tableau 10: blue, green, orange, red, purple).
const SERIES_COLORS: [RGBColor; 5] = [
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
];

fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// Tick label for whole numbers only (axes whose ticks are categories or k).
fn integer_only(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-6 {
        format!("{}", v.round() as i64)
    } else {
        String::new()
    }
}

/// One line of the Pass^k plot.
struct Curve {
    label: String,
    values: Vec<f64>,
}

/// One bar row: label and values (NaN = missing).
struct Bars {
    label: String,
    values: Vec<f64>,
}

/// One point of the Block% / recall scatter.
struct Point {
    label: String,
    block: f64,
    recall: f64,
}

fn short_label(r: &Report, i: usize) -> String {
    let g = &r.groups[i];
    let domains = r
        .groups
        .iter()
        .map(|g| &g.domain)
        .collect::<std::collections::BTreeSet<_>>();
    if domains.len() > 1 {
        format!("{} / {} / {}", g.domain, g.agent_model, g.guard_label())
    } else {
        format!("{} / {}", g.agent_model, g.guard_label())
    }
}

fn draw_pass_k<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    curves: &[Curve],
) -> DrawResult {
    root.fill(&WHITE).map_err(err)?;
    let max_k = curves
        .iter()
        .map(|c| c.values.len())
        .max()
        .unwrap_or(1)
        .max(1);
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FAMILY, 24))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(56)
        .build_cartesian_2d(0.8f64..max_k as f64 + 0.2, 0f64..1.0)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("k")
        .y_desc("Pass^k")
        .x_labels(max_k.min(12) + 1)
        .x_label_formatter(&integer_only)
        .y_label_formatter(&|v| format!("{v:.1}"))
        .max_light_lines(1)
        .label_style((FAMILY, 14))
        .axis_desc_style((FAMILY, 16))
        .draw()
        .map_err(err)?;
    for (i, c) in curves.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let pts: Vec<(f64, f64)> = c
            .values
            .iter()
            .enumerate()
            .map(|(k, v)| (k as f64 + 1.0, *v))
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(err)?
            .label(c.label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 4, color.filled())))
            .map_err(err)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FAMILY, 13))
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

/// Horizontal grouped bars: one row per entry, one bar per series.
fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_desc: &str,
    series: &[&str],
    rows: &[Bars],
) -> DrawResult {
    root.fill(&WHITE).map_err(err)?;
    let n = rows.len().max(1);
    let longest = rows
        .iter()
        .map(|r| r.label.chars().count())
        .max()
        .unwrap_or(8);
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FAMILY, 24))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size((longest as u32 * 8 + 16).clamp(60, 420))
        // Headroom past 1.0 so the value labels of full bars stay inside the plot.
        .build_cartesian_2d(0f64..1.1, -0.5f64..n as f64 - 0.5)
        .map_err(err)?;
    let labels: Vec<String> = rows.iter().map(|r| r.label.clone()).collect();
    let label_of = move |v: &f64| {
        if (v - v.round()).abs() > 1e-6 {
            return String::new();
        }
        let i = v.round() as i64;
        usize::try_from(n as i64 - 1 - i)
            .ok()
            .and_then(|j| labels.get(j).cloned())
            .unwrap_or_default()
    };
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_labels(n)
        .y_label_formatter(&label_of)
        .x_label_formatter(&|v| format!("{v:.1}"))
        .max_light_lines(1)
        .label_style((FAMILY, 13))
        .axis_desc_style((FAMILY, 16))
        .disable_y_mesh()
        .draw()
        .map_err(err)?;
    let m = series.len().max(1) as f64;
    let band = 0.8 / m;
    for (s, name) in series.iter().enumerate() {
        let color = SERIES_COLORS[s % SERIES_COLORS.len()].to_rgba();
        let rects: Vec<Rectangle<(f64, f64)>> = rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let v = *r.values.get(s)?;
                if v.is_nan() {
                    return None;
                }
                let center = (n - 1 - i) as f64;
                let top = center + 0.4 - band * s as f64;
                Some(Rectangle::new(
                    [(0.0, top - band * 0.9), (v, top)],
                    color.filled(),
                ))
            })
            .collect();
        let series_elem = chart.draw_series(rects).map_err(err)?;
        if series.len() > 1 {
            series_elem.label(*name).legend(move |(x, y)| {
                Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled())
            });
        }
        // Value at the end of each bar; "n/a" where the value is missing (too few trials).
        let labels: Vec<Text<'_, (f64, f64), String>> = rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let v = *r.values.get(s)?;
                let center = (n - 1 - i) as f64;
                let mid = center + 0.4 - band * s as f64 - band * 0.45;
                let text = if v.is_nan() {
                    "n/a".to_string()
                } else {
                    format!("{v:.3}")
                };
                let x = if v.is_nan() { 0.0 } else { v };
                Some(Text::new(
                    text,
                    (x + 0.005, mid),
                    (FAMILY, 11)
                        .into_font()
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Left, VPos::Center)),
                ))
            })
            .collect();
        chart.draw_series(labels).map_err(err)?;
    }
    if series.len() > 1 {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font((FAMILY, 13))
            .draw()
            .map_err(err)?;
    }
    root.present().map_err(err)
}

fn draw_scatter<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    points: &[Point],
) -> DrawResult {
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FAMILY, 24))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(56)
        .build_cartesian_2d(0f64..100.0, 0f64..105.0)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("Block% (blocked / attempts)")
        .y_desc("PV recall (%)")
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .max_light_lines(1)
        .label_style((FAMILY, 14))
        .axis_desc_style((FAMILY, 16))
        .draw()
        .map_err(err)?;
    for (i, p) in points.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(std::iter::once(Circle::new(
                (p.block, p.recall),
                7,
                color.filled(),
            )))
            .map_err(err)?
            .label(p.label.clone())
            .legend(move |(x, y)| Circle::new((x + 8, y), 5, color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FAMILY, 13))
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

/// Draws with both backends: `<dir>/<stem>.png` and `<dir>/<stem>.svg`.
macro_rules! both {
    ($dir:expr, $stem:expr, $size:expr, $out:expr, |$root:ident| $draw:expr) => {{
        let png = $dir.join(format!("{}.png", $stem));
        {
            let $root = BitMapBackend::new(&png, $size).into_drawing_area();
            $draw.map_err(|message| MetricsError::Plot {
                path: png.clone(),
                message,
            })?;
        }
        $out.push(png);
        let svg = $dir.join(format!("{}.svg", $stem));
        {
            let $root = SVGBackend::new(&svg, $size).into_drawing_area();
            $draw.map_err(|message| MetricsError::Plot {
                path: svg.clone(),
                message,
            })?;
        }
        $out.push(svg);
    }};
}

/// Writes every plot of `report` into `dir` (which must exist); returns the files written.
pub fn write_plots(report: &Report, dir: &Path) -> Result<Vec<PathBuf>, MetricsError> {
    register_font();
    let mut out = Vec::new();
    if report.groups.is_empty() {
        return Ok(out);
    }
    let n = report.groups.len();
    let k = report.headline_k;
    let title = |t: &str| titled(t, report.simulated());

    let curves: Vec<Curve> = (0..n)
        .map(|i| Curve {
            label: short_label(report, i),
            values: report.groups[i].overall.pass_k.0.clone(),
        })
        .collect();
    let pass_k_title = title("Pass^k by k");
    both!(dir, "pass_k", (1000, 640), out, |root| draw_pass_k(
        &root,
        &pass_k_title,
        &curves
    ));

    let rows: Vec<Bars> = (0..n)
        .map(|i| {
            let g = &report.groups[i];
            let at = |s: &crate::slices::SliceMetrics| s.pass_k.get(k).unwrap_or(f64::NAN);
            Bars {
                label: short_label(report, i),
                values: vec![at(&g.overall), at(&g.pv), at(&g.mut_)],
            }
        })
        .collect();
    let height = (140 + 60 * n as u32).clamp(360, 4000);
    let slice_title = title(&format!("Pass^{k} by slice"));
    both!(dir, "pass_by_slice", (1000, height), out, |root| draw_bars(
        &root,
        &slice_title,
        &format!("Pass^{k}"),
        &["overall", "PV", "Mut"],
        &rows
    ));

    let points: Vec<Point> = (0..n)
        .filter_map(|i| {
            let v = &report.groups[i].confusion.verdict;
            Some(Point {
                label: short_label(report, i),
                block: v.block_rate()? * 100.0,
                recall: v.pv_recall()? * 100.0,
            })
        })
        .collect();
    if !points.is_empty() {
        let scatter_title = title("Block% vs PV recall, verdict view");
        both!(dir, "block_vs_recall", (1000, 640), out, |root| {
            draw_scatter(&root, &scatter_title, &points)
        });
    }

    let attacks: Vec<Bars> = (0..n)
        .filter_map(|i| {
            let a = report.groups[i].attack?;
            Some(Bars {
                label: short_label(report, i),
                values: vec![a.asr()?],
            })
        })
        .collect();
    if !attacks.is_empty() {
        let height = (140 + 40 * attacks.len() as u32).clamp(300, 4000);
        let attack_title = title("Attack success rate per trial");
        both!(
            dir,
            "attack_success",
            (1000, height),
            out,
            |root| draw_bars(&root, &attack_title, "ASR", &["ASR"], &attacks)
        );
    }
    Ok(out)
}
