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
//!   of first deviations, per cell with a process view (`crate::process`);
//! - `forest` (from `compare`, see `compare_output.rs`): Pass^k differences with bootstrap CIs.
//!
//! A cell looks the same in every figure (`plots/style.rs`); legends sit outside the panels
//! and coinciding series stay visible (`plots/draw.rs`). PNG text is rasterised by
//! `plots/text.rs` from DejaVu Sans embedded in the binary (`assets/DejaVuSans.ttf`,
//! Bitstream Vera licence in `assets/DejaVuSans-LICENSE.txt`); no system font is looked up.
//! SVG files name the family `sans-serif`. A report with a simulated group labels every
//! figure title (see [`crate::simulated`]). No PDF: no maintained crate draws plotters'
//! output to PDF without system fonts short of an SVG renderer stack (`svg2pdf` + `usvg`);
//! convert the SVG (`rsvg-convert -f pdf`, Inkscape) where a PDF is needed.

mod draw;
mod shapes;
pub(crate) mod style;
mod text;

use crate::error::MetricsError;
use crate::pass_k::{TaskTally, pass_k_curve};
use crate::report::{GroupReport, Report};
use crate::simulated::titled;
use crate::sources::Sources;
pub(crate) use draw::{BarSeries, Figure, ForestRow, Key, LegendEntry, Panel, PanelKind, Series};
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Once;
pub use style::hex;
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
fn faceted(r: &Report, facet: fn(&str) -> Option<&str>) -> Vec<usize> {
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

/// Every figure of the report with the groups each was drawn from.
pub(crate) fn figures(r: &Report) -> Vec<Drawn> {
    let mut out = Vec::new();
    if r.groups.is_empty() {
        return out;
    }
    let s = styles(r);
    let k = r.headline_k;
    let title = |t: &str| titled(t, r.simulated());
    let domains = by_domain(r, |_| true);

    let panels = domains
        .iter()
        .map(|(d, gs)| {
            let curves = gs
                .iter()
                .map(|&i| {
                    let v = &r.groups[i].overall.pass_k.0;
                    (
                        i,
                        v.iter()
                            .enumerate()
                            .map(|(j, y)| (j as f64 + 1.0, *y))
                            .collect(),
                    )
                })
                .collect();
            (d.to_string(), curves)
        })
        .collect();
    let fig = curve_figure(
        r,
        &s,
        title("PolicyGuide Figure 4: Pass^k vs k per domain"),
        panels,
    );
    out.push(Drawn {
        stem: "pass_k",
        groups: (0..r.groups.len()).collect(),
        figure: fig,
    });

    for (stem, t, facet) in [
        (
            "telecom_intent",
            "PolicyGuide Figure 5: telecom Pass^k vs k per intent",
            telecom_intent as fn(&str) -> Option<&str>,
        ),
        (
            "telecom_persona",
            "PolicyGuide Figure 5: telecom Pass^k vs k per persona",
            telecom_persona,
        ),
    ] {
        if let Some(figure) = telecom_figure(r, &s, t, facet) {
            let groups = faceted(r, facet);
            out.push(Drawn {
                stem,
                figure,
                groups,
            });
        }
    }

    let slice_panels: Vec<Panel> = domains
        .iter()
        .map(|(d, gs)| Panel {
            title: d.to_string(),
            x_desc: "task slice".into(),
            y_desc: format!("Pass^{k} (mean over tasks)"),
            kind: PanelKind::Bars {
                categories: vec!["overall".into(), "PV".into(), "Mut".into()],
                series: gs
                    .iter()
                    .map(|&i| {
                        let g = &r.groups[i];
                        BarSeries {
                            id: identity(&s, g),
                            values: vec![
                                g.overall.pass_k.get(k),
                                g.pv.pass_k.get(k),
                                g.mut_.pass_k.get(k),
                            ],
                        }
                    })
                    .collect(),
            },
        })
        .collect();
    let all: Vec<usize> = (0..r.groups.len()).collect();
    out.push(Drawn {
        stem: "pass_by_slice",
        figure: Figure {
            title: title(&format!(
                "PolicyGuard Table 2 as a figure: Pass^{k} by task slice"
            )),
            panels: slice_panels,
            legend: legend(r, &s, &all, Key::Box),
            notes: vec![format!(
                "PV: tasks whose gold actions hold no agent-side mutating call; Mut: the others. \
                 n/a: the cell has fewer than {k} scored trials for some task of the slice, or no \
                 task in it. Bar fill tells agents apart (solid, light, outline)."
            )],
        },
        groups: all,
    });

    let with_process = by_domain(r, |g| g.process.is_some());
    if !with_process.is_empty() {
        let mut used = Vec::new();
        let cover = |g: &GroupReport, i: usize| {
            g.process
                .as_ref()
                .and_then(|p| p.coverage.get(i))
                .and_then(|c| c.share)
        };
        let panels = with_process
            .iter()
            .map(|(d, gs)| {
                used.extend(gs.iter().copied());
                let series = gs
                    .iter()
                    .map(|&i| {
                        let g = &r.groups[i];
                        let pp = g.overall.process_pass_k.as_ref();
                        BarSeries {
                            id: identity(&s, g),
                            values: vec![
                                g.overall.pass_k.get(k),
                                pp.and_then(|p| p.get(k)),
                                cover(g, 0),
                                cover(g, 1),
                            ],
                        }
                    })
                    .collect();
                Panel {
                    title: d.to_string(),
                    x_desc: "view".into(),
                    y_desc: "rate".into(),
                    kind: PanelKind::Bars {
                        categories: vec![
                            format!("Pass^{k}"),
                            format!("valid Pass^{k}"),
                            "cov. mutating calls".into(),
                            "cov. turns+intercepts".into(),
                        ],
                        series,
                    },
                }
            })
            .collect();
        out.push(Drawn {
            stem: "process_view",
            figure: Figure {
                title: title(&format!(
                    "Outcome vs process-valid Pass^{k}, and intervention coverage of first deviations"
                )),
                panels,
                legend: legend(r, &s, &used, Key::Box),
                notes: vec![
                    "valid Pass^k: outcome passes and the trajectory is process-valid by the \
                     domain's procedure spec. Coverage: share of first deviations the trigger \
                     schedule (guarded mutating calls; user turns plus interceptions) could see \
                     (PolicyGuide Theorem 1)."
                        .into(),
                ],
            },
            groups: used,
        });
    }

    let points = |g: &GroupReport| {
        let v = &g.confusion.verdict;
        Some((v.block_rate()?, v.pv_recall()?))
    };
    let with_points = by_domain(r, |g| points(g).is_some());
    if !with_points.is_empty() {
        let mut notes =
            vec!["Points sharing a position are spread on a small circle around it.".to_string()];
        let mut used = Vec::new();
        let panels = with_points
            .iter()
            .map(|(d, gs)| {
                used.extend(gs.iter().copied());
                let series: Vec<Series> = gs
                    .iter()
                    .map(|&i| Series {
                        label: label(&s, &r.groups[i]),
                        id: identity(&s, &r.groups[i]),
                        points: points(&r.groups[i]).into_iter().collect(),
                    })
                    .collect();
                notes.extend(coinciding(d, &series, "points"));
                Panel {
                    title: d.to_string(),
                    x_desc: "Block rate (% of mutating-call attempts blocked)".into(),
                    y_desc: "PV recall (% of violating attempts blocked)".into(),
                    kind: PanelKind::Scatter { series },
                }
            })
            .collect();
        out.push(Drawn {
            stem: "block_vs_recall",
            figure: Figure {
                title: title(
                    "PolicyGuard Table 7 as a figure: Block rate vs PV recall, verdict view",
                ),
                panels,
                legend: legend(r, &s, &used, Key::Marker),
                notes,
            },
            groups: used,
        });
    }

    let attacked = by_domain(r, |g| g.attack.is_some());
    if !attacked.is_empty() {
        let mut used = Vec::new();
        let panels = attacked
            .iter()
            .map(|(d, gs)| {
                used.extend(gs.iter().copied());
                Panel {
                    title: d.to_string(),
                    x_desc: "unit the rate is taken over".into(),
                    y_desc: "attack success rate (fraction)".into(),
                    kind: PanelKind::Bars {
                        categories: vec!["per trial".into(), "per task".into()],
                        series: gs
                            .iter()
                            .map(|&i| {
                                let g = &r.groups[i];
                                let a = g.attack;
                                BarSeries {
                                    id: identity(&s, g),
                                    values: vec![
                                        a.and_then(|a| a.asr()),
                                        a.and_then(|a| a.asr_per_task()),
                                    ],
                                }
                            })
                            .collect(),
                    },
                }
            })
            .collect();
        out.push(Drawn {
            stem: "attack_success",
            figure: Figure {
                title: title("PolicyGuide Figure 6: attack success rate"),
                panels,
                legend: legend(r, &s, &used, Key::Box),
                notes: vec!["Per trial: attack simulations whose target call executed; per task: attack tasks breached in any trial.".into()],
            },
            groups: used,
        });
    }
    out
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
        draw::draw_figure(&root, fig).map_err(|message| MetricsError::Plot {
            path: png.clone(),
            message,
        })?;
    }
    let svg = dir.join(format!("{stem}.svg"));
    {
        let root = SVGBackend::new(&svg, size).into_drawing_area();
        draw::draw_figure(&root, fig).map_err(|message| MetricsError::Plot {
            path: svg.clone(),
            message,
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

/// Writes every figure of `report` into `dir` (which must exist) with its caption; returns
/// the files written.
pub fn write_plots(report: &Report, dir: &Path) -> Result<Vec<PathBuf>, MetricsError> {
    write_plots_with(report, dir, &Sources::default())
}

/// As [`write_plots`], captions naming the runs and configs of `sources`.
pub fn write_plots_with(
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
