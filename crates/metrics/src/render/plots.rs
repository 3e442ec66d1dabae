//! The figures of a `Report`, each written as PNG (300 dpi, 7 in wide) and SVG with plotters,
//! with a caption file naming the records and cells that produced it:
//! - `pass_k`: Pass^k against k per domain, one curve per cell (PolicyGuide Figure 4);
//! - `telecom_intent` / `telecom_persona`: the same per telecom intent and per user persona,
//!   read from the task ids (`[mobile_data_issue]…[PERSONA:Hard]`; PolicyGuide Figure 5);
//! - `pass_by_slice`: Pass^K overall / PV / Mut per cell (PolicyGuard Table 2);
//! - `block_vs_recall`: Block rate against PV recall in the verdict view, one point per cell
//!   with violating attempts (PolicyGuard Table 7);
//! - `attack_success`: attack success per trial and per task (PolicyGuide Figure 6), when any;
//! - `process_view`: outcome beside process-valid Pass^K and each trigger schedule's coverage
//!   of first deviations, per cell with a process view (`crate::measure::process`);
//! - `forest` (from `compare`, see `compare_output.rs`): Pass^k differences with bootstrap CIs.
//!
//! A cell looks the same in every figure (`plots/style.rs`); legends sit outside the panels
//! and coinciding series stay visible (`plots/draw.rs`). PNG text is rasterised by
//! `plots/text.rs` from DejaVu Sans embedded in the binary (`assets/DejaVuSans.ttf`,
//! Bitstream Vera licence in `assets/DejaVuSans-LICENSE.txt`); no system font is looked up.
//! SVG files name the family `sans-serif`. A report with a simulated group labels every
//! figure title (see [`crate::summary::simulated`]). No PDF: no maintained crate draws plotters'
//! output to PDF without system fonts short of an SVG renderer stack (`svg2pdf` + `usvg`);
//! convert the SVG (`rsvg-convert -f pdf`, Inkscape) where a PDF is needed.

mod draw;
mod figures;
mod shapes;
pub(crate) mod style;
mod text;

use crate::error::{MetricsError, PlotCause};
use crate::measure::pass_k::{TaskTally, pass_k_curve};
use crate::render::sources::Sources;
use crate::report::{GroupReport, Report};
use crate::summary::simulated::titled;
pub(crate) use draw::{BarSeries, Figure, ForestRow, Key, LegendEntry, Panel, PanelKind, Series};
pub(crate) use figures::figures;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Once;
pub(crate) use style::hex;
use style::{Identity, Styles};

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Used by the SVG backend to estimate text extents.
        let _ = plotters::style::register_font(draw::FAMILY, FontStyle::Normal, text::FONT);
    });
}

/// A figure with the groups it was drawn from.
pub(crate) struct Drawn {
    pub stem: &'static str,
    pub figure: Figure,
    pub groups: Vec<usize>,
}

/// The identities of `report`'s cells.
fn styles(r: &Report) -> Styles {
    Styles::new(
        r.groups
            .iter()
            .map(|g| g.guard_label())
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str),
        r.groups.iter().map(|g| g.agent_model.as_str()),
        &r.options.baseline_guard,
    )
}

fn label(s: &Styles, g: &GroupReport) -> String {
    if s.several_agents() {
        format!("{} · {}", g.agent_model, g.guard_label())
    } else {
        g.guard_label()
    }
}

fn identity(s: &Styles, g: &GroupReport) -> Identity {
    s.of(&g.guard_label(), &g.agent_model)
}

/// Legend entries of `groups`, first appearance order, one per label.
fn legend(r: &Report, s: &Styles, groups: &[usize], key: Key) -> Vec<LegendEntry> {
    let mut out: Vec<LegendEntry> = Vec::new();
    for &i in groups {
        let g = &r.groups[i];
        let e = LegendEntry {
            label: label(s, g),
            id: identity(s, g),
            key,
        };
        if !out.iter().any(|x| x.label == e.label) {
            out.push(e);
        }
    }
    out
}

/// Group indices per domain, domains sorted.
fn by_domain(r: &Report, keep: impl Fn(&GroupReport) -> bool) -> BTreeMap<&str, Vec<usize>> {
    let mut m: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, g) in r.groups.iter().enumerate().filter(|(_, g)| keep(g)) {
        m.entry(g.domain.as_str()).or_default().push(i);
    }
    m
}

/// Notes naming series of a panel with identical values.
fn coinciding(panel: &str, series: &[Series], what: &str) -> Option<String> {
    let key = |s: &Series| -> Vec<i64> {
        s.points
            .iter()
            .flat_map(|(x, y)| [(x * 1e6).round() as i64, (y * 1e6).round() as i64])
            .collect()
    };
    let mut by: BTreeMap<Vec<i64>, Vec<&str>> = BTreeMap::new();
    for s in series {
        by.entry(key(s)).or_default().push(&s.label);
    }
    let sets: Vec<String> = by
        .into_values()
        .filter(|v| v.len() > 1)
        .map(|v| v.join(" = "))
        .collect();
    (!sets.is_empty()).then(|| format!("{panel}: identical {what}: {}.", sets.join("; ")))
}

/// The curves of one panel: (group index, points).
type Curves = Vec<(usize, Vec<(f64, f64)>)>;

/// Pass^k curve of a subset of a group's tasks (k up to the fewest trials of a task there,
/// capped at the report's `max_k`).
fn curve(tallies: &[TaskTally], max_k: u32) -> Vec<(f64, f64)> {
    let k = tallies.iter().map(|t| t.n).min().unwrap_or(0).min(max_k);
    pass_k_curve(tallies, k)
        .into_iter()
        .enumerate()
        .map(|(i, v)| (i as f64 + 1.0, v))
        .collect()
}

const PASS_K_Y: &str = "Pass^k (mean over tasks)";
const K_X: &str = "k (trials of a task that must all succeed)";
const DODGE_NOTE: &str = "Curves are offset horizontally by a few hundredths of k per cell so that \
     coinciding ones stay visible; values are at integer k.";

/// One panel of curves per key of `panels` (title → group index → tallies).
fn curve_figure(r: &Report, s: &Styles, title: String, panels: Vec<(String, Curves)>) -> Figure {
    let mut notes = vec![DODGE_NOTE.to_string()];
    let mut used: Vec<usize> = Vec::new();
    let panels = panels
        .into_iter()
        .map(|(name, curves)| {
            let series: Vec<Series> = curves
                .into_iter()
                .map(|(i, points)| {
                    used.push(i);
                    Series {
                        label: label(s, &r.groups[i]),
                        id: identity(s, &r.groups[i]),
                        points,
                    }
                })
                .collect();
            notes.extend(coinciding(&name, &series, "curves"));
            let x_max = series.iter().map(|x| x.points.len()).max().unwrap_or(1) as u32;
            Panel {
                title: name,
                x_desc: K_X.into(),
                y_desc: PASS_K_Y.into(),
                kind: PanelKind::Lines { x_max, series },
            }
        })
        .collect();
    used.sort_unstable();
    used.dedup();
    Figure {
        title,
        legend: legend(r, s, &used, Key::Line),
        panels,
        notes,
    }
}

/// Telecom task ids carry the intent first (`[mobile_data_issue]…`) and the persona last
/// (`…[PERSONA:Hard]`).
pub(crate) fn telecom_intent(task_id: &str) -> Option<&str> {
    let rest = task_id.strip_prefix('[')?;
    rest.split_once(']')
        .map(|(i, _)| i)
        .filter(|i| !i.is_empty())
}

pub(crate) fn telecom_persona(task_id: &str) -> Option<&str> {
    let (_, rest) = task_id.rsplit_once("[PERSONA:")?;
    rest.strip_suffix(']').filter(|p| !p.is_empty())
}

/// The groups whose task ids carry `facet` (telecom's, whose ids name intent and persona):
/// read off the ids, so no domain is named here.
pub(crate) fn faceted(r: &Report, facet: fn(&str) -> Option<&str>) -> Vec<usize> {
    (0..r.groups.len())
        .filter(|&i| {
            r.groups[i]
                .task_tallies
                .iter()
                .any(|(t, _)| facet(t).is_some())
        })
        .collect()
}

/// PolicyGuide Figure 5: telecom curves per value of `facet` (intent or persona).
fn telecom_figure(
    r: &Report,
    s: &Styles,
    title: &str,
    facet: fn(&str) -> Option<&str>,
) -> Option<Figure> {
    let groups = faceted(r, facet);
    let mut panels: BTreeMap<String, Curves> = BTreeMap::new();
    for &i in &groups {
        let mut parts: BTreeMap<&str, Vec<TaskTally>> = BTreeMap::new();
        for (task, t) in &r.groups[i].task_tallies {
            if let Some(f) = facet(task) {
                parts.entry(f).or_default().push(*t);
            }
        }
        for (f, tallies) in parts {
            let points = curve(&tallies, r.options.max_k);
            if !points.is_empty() {
                panels.entry(f.to_string()).or_default().push((i, points));
            }
        }
    }
    if panels.is_empty() {
        return None;
    }
    let named = panels.into_iter().collect();
    Some(curve_figure(r, s, titled(title, r.simulated()), named))
}

/// Each cell's legend label and colour (`#RRGGBB`), in report order: the identity every
/// figure of the report draws the cell with.
pub fn cell_colors(r: &Report) -> Vec<(String, String)> {
    let s = styles(r);
    r.groups
        .iter()
        .map(|g| (label(&s, g), hex(identity(&s, g).color)))
        .collect()
}

/// Writes `<dir>/<stem>.png` and `<dir>/<stem>.svg`.
pub(crate) fn write_figure(
    dir: &Path,
    stem: &str,
    fig: &Figure,
) -> Result<Vec<PathBuf>, MetricsError> {
    register_font();
    let size = fig.size();
    let png = dir.join(format!("{stem}.png"));
    {
        let root = text::Png::new(&png, size).into_drawing_area();
        draw::draw_figure(&root, fig).map_err(|e| MetricsError::Plot {
            path: png.clone(),
            cause: PlotCause::Png(e),
        })?;
    }
    let svg = dir.join(format!("{stem}.svg"));
    {
        let root = SVGBackend::new(&svg, size).into_drawing_area();
        draw::draw_figure(&root, fig).map_err(|e| MetricsError::Plot {
            path: svg.clone(),
            cause: PlotCause::Svg(e),
        })?;
    }
    Ok(vec![png, svg])
}

/// The caption of a drawn figure: title, what produced it, its notes.
pub(crate) fn caption(r: &Report, d: &Drawn, sources: &Sources) -> String {
    let mut s = format!("{}\n", d.figure.title);
    s.push_str(&format!(
        "Figure `{}` drawn from {} cell(s):\n",
        d.stem,
        d.groups.len()
    ));
    for &i in &d.groups {
        s.push_str(&format!("- {}\n", sources.describe(&r.groups[i])));
    }
    for n in &d.figure.notes {
        s.push_str(n);
        s.push('\n');
    }
    s
}

/// Writes every figure of `report` into `dir` (which must exist) with its caption naming the
/// runs and configs of `sources`; returns the files written.
pub(crate) fn write_plots_with(
    report: &Report,
    dir: &Path,
    sources: &Sources,
) -> Result<Vec<PathBuf>, MetricsError> {
    let mut out = Vec::new();
    for d in figures(report) {
        out.extend(write_figure(dir, d.stem, &d.figure)?);
        let path = dir.join(format!("{}.caption.txt", d.stem));
        std::fs::write(&path, caption(report, &d, sources))
            .map_err(|e| MetricsError::io(&path, e))?;
        out.push(path);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn telecom_ids_give_intent_and_persona() {
        let id = "[mobile_data_issue]airplane_mode_on|data_mode_off[PERSONA:Hard]";
        assert_eq!(telecom_intent(id), Some("mobile_data_issue"));
        assert_eq!(telecom_persona(id), Some("Hard"));
        assert_eq!(telecom_intent("0"), None);
        assert_eq!(telecom_persona("[x]y"), None);
    }
}
