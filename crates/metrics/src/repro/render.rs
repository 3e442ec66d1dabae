//! How a reproduction table prints: Markdown (each numeric cell `ours / published / ours −
//! published`), tidy CSV (one row per cell, plain fractions) and JSON.

use super::quantity::Unit;
use super::{Metric, ReproCell, ReproTable};
use crate::summary::simulated::SIMULATED_LABEL;
use std::fmt::Write as _;

/// A value as its metric prints (see `Metric::unit`); `signed` for differences.
fn show(metric: Metric, v: Option<f64>, signed: bool) -> String {
    let Some(v) = v else { return "—".into() };
    let sign = if !signed {
        ""
    } else if v >= 0.0 {
        "+"
    } else {
        "−"
    };
    let x = if signed { v.abs() } else { v };
    match metric.unit() {
        Unit::Percent if signed => format!("{sign}{:.1} pp", x * 100.0),
        Unit::Percent => format!("{:.1}%", x * 100.0),
        _ if !signed && metric.is_difference() => show(metric, Some(v), true),
        Unit::Fraction => format!("{sign}{x:.3}"),
        Unit::Turns => format!("{sign}{x:.2}"),
        Unit::Count => format!("{sign}{x:.1}"),
        Unit::Dollars => format!("{sign}${x:.3}"),
        Unit::Seconds => format!("{sign}{x:.1} s"),
        Unit::Times => format!("{sign}{x:.2}×"),
        Unit::P if x >= 1e-3 => format!("{sign}{x:.3}"),
        Unit::P => format!("{sign}{x:.1e}"),
    }
}

/// The published side of a cell: a bound as the source writes it, a value as its metric
/// prints.
fn show_published(c: &ReproCell) -> String {
    match &c.quote {
        Some(q) if q.trim().starts_with('<') || q.trim().starts_with("p<") => q.clone(),
        _ => show(c.metric, c.published, false),
    }
}

fn rate(v: Option<f64>) -> String {
    v.map_or("—".into(), |x| format!("{x:.3}"))
}

/// The floors' label, in Markdown and as their CSV `column`.
pub(super) const FLOOR_COLUMN: &str = "Floor Pass^1";

fn raw(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| format!("{x:.6}"))
}

impl ReproTable {
    /// Markdown: each numeric cell is `ours / published / ours − published`.
    pub fn to_markdown(&self) -> String {
        let mut s = format!("### {}\n\n", self.title);
        // Offline, every agent row was played by the sim agent: the header says so, so a row
        // labelled with a paper's model cannot be read as that model's result.
        let headers: Vec<String> = self
            .headers
            .iter()
            .map(|h| match (self.simulated, h.as_str()) {
                (true, "Agent") => "Agent (row; played by sim-agent)".to_string(),
                _ => h.clone(),
            })
            .collect();
        let _ = writeln!(s, "| {} |", headers.join(" | "));
        let n_text = self.rows.first().map_or(self.headers.len(), |r| r.0.len());
        let aligns: Vec<&str> = (0..self.headers.len())
            .map(|i| if i < n_text { ":---" } else { "---:" })
            .collect();
        let _ = writeln!(s, "|{}|", aligns.join("|"));
        for (lead, idx) in &self.rows {
            let mut cells: Vec<String> = lead.clone();
            cells.resize(n_text, String::new());
            for i in idx {
                cells.push(match i {
                    None => "".into(),
                    Some(i) => {
                        let c = &self.cells[*i];
                        format!(
                            "{} / {} / {}",
                            show(c.metric, c.ours, false),
                            show_published(c),
                            show(c.metric, c.diff, true)
                        )
                    }
                });
            }
            let _ = writeln!(s, "| {} |", cells.join(" | "));
        }
        let _ = writeln!(
            s,
            "\nEach cell: ours / published / ours − published; — where the source states no number or a run has none."
        );
        self.floors_markdown(&mut s);
        let _ = writeln!(
            s,
            "\nPublished numbers, by the paper table they are cited to:"
        );
        if self.cited.is_empty() {
            let _ = writeln!(
                s,
                "\n- none: the seeds state no number for this table's cells."
            );
        }
        for (cite, n) in &self.cited {
            let cells = if *n == 1 { "cell" } else { "cells" };
            let _ = writeln!(s, "\n- {cite}: {n} {cells}");
        }
        for n in &self.notes {
            let _ = writeln!(s, "\n{} — {}", n.text, n.cite.label());
        }
        for r in &self.remarks {
            let _ = writeln!(s, "\nNote (tauguard): {r}");
        }
        for m in &self.not_measured {
            let _ = writeln!(s, "\nNot measured by tauguard: {m}");
        }
        if self.simulated {
            let _ = writeln!(
                s,
                "\nOurs: {SIMULATED_LABEL}. The published numbers are printed for the layout only."
            );
        }
        s
    }

    /// The floors block: each domain's trivial agents, as `report` prints them.
    fn floors_markdown(&self, s: &mut String) {
        if self.floors.is_empty() {
            return;
        }
        let _ = writeln!(
            s,
            "\n{FLOOR_COLUMN} — trivial agents on the same tasks (deterministic, so Pass^1 = Pass^k for every k):\n"
        );
        let _ = writeln!(s, "| Domain | Floor agent | Tasks | Overall | PV | Mut |");
        let _ = writeln!(s, "|:---|:---|---:|---:|---:|---:|");
        for f in &self.floors {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} |",
                f.domain,
                f.agent,
                f.n_tasks,
                rate(f.overall),
                rate(f.pv),
                rate(f.mut_)
            );
        }
        let _ = writeln!(
            s,
            "\nrefuse-all never mutates; gold-no-procedure performs the gold mutations with no identity check, reads or confirmation. A PV score at or below refuse-all's is what blocking alone gives."
        );
    }

    /// Tidy CSV: one row per cell, numbers as plain fractions, empty when missing.
    pub fn to_csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let _ = w.write_record([
            "domain",
            "agent",
            "guard",
            "column",
            "metric",
            "slice",
            "k",
            "ours",
            "published",
            "diff",
            "quote",
            "cite",
            "simulated",
        ]);
        for c in &self.cells {
            let metric = serde_json::to_value(c.metric).unwrap_or_default();
            let slice = serde_json::to_value(c.slice).unwrap_or_default();
            let _ = w.write_record([
                c.domain.clone(),
                c.agent.clone(),
                c.guard.clone(),
                c.column.clone(),
                metric.as_str().unwrap_or_default().to_string(),
                slice.as_str().unwrap_or_default().to_string(),
                c.k.map_or(String::new(), |k| k.to_string()),
                raw(c.ours),
                raw(c.published),
                raw(c.diff),
                c.quote.clone().unwrap_or_default(),
                c.cite.clone().unwrap_or_default(),
                self.simulated.to_string(),
            ]);
        }
        // The floors, as rows of their own: the floor agent in `agent`, `floor` in `guard`.
        for f in &self.floors {
            for (slice, v) in [("all", f.overall), ("pv", f.pv), ("mut", f.mut_)] {
                let _ = w.write_record([
                    f.domain.clone(),
                    f.agent.clone(),
                    "floor".into(),
                    FLOOR_COLUMN.into(),
                    "pass".into(),
                    slice.into(),
                    "1".into(),
                    raw(v),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    self.simulated.to_string(),
                ]);
            }
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }

    /// Pretty JSON of the whole table.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("tables serialise");
        s.push('\n');
        s
    }
}
