//! The report's figures, one function each: Pass^k vs k per domain, telecom's per intent and
//! persona, Pass^k by task slice, the process view, block rate vs PV recall, and attack
//! success; each with the groups it was drawn from.

use super::style::Styles;
use super::{
    BarSeries, Drawn, Figure, Key, Panel, PanelKind, Series, by_domain, coinciding, curve_figure,
    faceted, identity, label, legend, styles, telecom_figure, telecom_intent, telecom_persona,
};
use crate::measure::attack::Attack;
use crate::measure::confusion::ConfusionMeasure;
use crate::report::{GroupReport, Report};
use crate::summary::simulated::titled;
use std::collections::BTreeMap;

/// Every figure of the report with the groups each was drawn from.
pub(crate) fn figures(r: &Report) -> Vec<Drawn> {
    let mut out = Vec::new();
    if r.groups.is_empty() {
        return out;
    }
    let s = styles(r);
    let domains = by_domain(r, |_| true);
    out.push(pass_k_figure(r, &s, &domains));
    telecom_figures(r, &s, &mut out);
    out.push(slice_figure(r, &s, &domains));
    out.extend(process_figure(r, &s));
    out.extend(block_recall_figure(r, &s));
    out.extend(attack_figure(r, &s));
    out
}

/// PolicyGuide Figure 4: Pass^k vs k per domain.
fn pass_k_figure(r: &Report, s: &Styles, domains: &BTreeMap<&str, Vec<usize>>) -> Drawn {
    let title = |t: &str| titled(t, r.simulated());
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
        s,
        title("PolicyGuide Figure 4: Pass^k vs k per domain"),
        panels,
    );
    Drawn {
        stem: "pass_k",
        groups: (0..r.groups.len()).collect(),
        figure: fig,
    }
}

/// PolicyGuide Figure 5: telecom Pass^k vs k per intent and per persona, where telecom has
/// groups.
fn telecom_figures(r: &Report, s: &Styles, out: &mut Vec<Drawn>) {
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
        if let Some(figure) = telecom_figure(r, s, t, facet) {
            let groups = faceted(r, facet);
            out.push(Drawn {
                stem,
                figure,
                groups,
            });
        }
    }
}

/// PolicyGuard Table 2 as a figure: Pass^k by task slice.
fn slice_figure(r: &Report, s: &Styles, domains: &BTreeMap<&str, Vec<usize>>) -> Drawn {
    let k = r.headline_k;
    let title = |t: &str| titled(t, r.simulated());
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
                            id: identity(s, g),
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
    Drawn {
        stem: "pass_by_slice",
        figure: Figure {
            title: title(&format!(
                "PolicyGuard Table 2 as a figure: Pass^{k} by task slice"
            )),
            panels: slice_panels,
            legend: legend(r, s, &all, Key::Box),
            notes: vec![format!(
                "PV: tasks whose gold actions hold no agent-side mutating call; Mut: the others. \
                 n/a: the cell has fewer than {k} scored trials for some task of the slice, or no \
                 task in it. Bar fill tells agents apart (solid, light, outline)."
            )],
        },
        groups: all,
    }
}

/// Outcome vs process-valid Pass^k, and intervention coverage of first deviations, where
/// groups have a process view.
fn process_figure(r: &Report, s: &Styles) -> Option<Drawn> {
    let k = r.headline_k;
    let title = |t: &str| titled(t, r.simulated());
    let with_process = by_domain(r, |g| g.process.is_some());
    if with_process.is_empty() {
        return None;
    }
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
                        id: identity(s, g),
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
    Some(Drawn {
        stem: "process_view",
        figure: Figure {
            title: title(&format!(
                "Outcome vs process-valid Pass^{k}, and intervention coverage of first deviations"
            )),
            panels,
            legend: legend(r, s, &used, Key::Box),
            notes: vec![
                "valid Pass^k: outcome passes and the trajectory is process-valid by the \
                 domain's procedure spec. Coverage: share of first deviations the trigger \
                 schedule (guarded mutating calls; user turns plus interceptions) could see \
                 (PolicyGuide Theorem 1)."
                    .into(),
            ],
        },
        groups: used,
    })
}

/// PolicyGuard Table 7 as a figure: block rate vs PV recall (verdict view).
fn block_recall_figure(r: &Report, s: &Styles) -> Option<Drawn> {
    let title = |t: &str| titled(t, r.simulated());
    let points = |g: &GroupReport| {
        let v = g.measures.get::<ConfusionMeasure>()?.verdict;
        Some((v.block_rate()?, v.pv_recall()?))
    };
    let with_points = by_domain(r, |g| points(g).is_some());
    if with_points.is_empty() {
        return None;
    }
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
                    label: label(s, &r.groups[i]),
                    id: identity(s, &r.groups[i]),
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
    Some(Drawn {
        stem: "block_vs_recall",
        figure: Figure {
            title: title("PolicyGuard Table 7 as a figure: Block rate vs PV recall, verdict view"),
            panels,
            legend: legend(r, s, &used, Key::Marker),
            notes,
        },
        groups: used,
    })
}

/// PolicyGuide Figure 6: attack success rate, where groups ran attack tasks.
fn attack_figure(r: &Report, s: &Styles) -> Option<Drawn> {
    let title = |t: &str| titled(t, r.simulated());
    let attacked = by_domain(r, |g| g.measures.get::<Attack>().flatten().is_some());
    if attacked.is_empty() {
        return None;
    }
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
                            let a = g.measures.get::<Attack>().flatten();
                            BarSeries {
                                id: identity(s, g),
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
    Some(Drawn {
        stem: "attack_success",
        figure: Figure {
            title: title("PolicyGuide Figure 6: attack success rate"),
            panels,
            legend: legend(r, s, &used, Key::Box),
            notes: vec!["Per trial: attack simulations whose target call executed; per task: attack tasks breached in any trial.".into()],
        },
        groups: used,
    })
}
