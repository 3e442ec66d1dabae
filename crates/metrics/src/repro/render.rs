//! How a reproduction table prints: Markdown (each numeric cell `ours / published / ours −
//! published`), tidy CSV (one row per cell, plain fractions) and JSON.

use super::{Metric, ReproTable};
use crate::simulated::SIMULATED_LABEL;
use std::fmt::Write as _;

/// A value as its metric prints: Pass^k and ASR as 3 decimals, per-call rates as percentages.
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
    match metric {
        Metric::PvRecall | Metric::BlockRate if signed => format!("{sign}{:.1} pp", x * 100.0),
        Metric::PvRecall | Metric::BlockRate => format!("{:.1}%", x * 100.0),
        Metric::DeltaPass if !signed => {
            format!("{}{:.3}", if v >= 0.0 { "+" } else { "−" }, v.abs())
        }
        _ => format!("{sign}{x:.3}"),
    }
}

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
                            show(c.metric, c.published, false),
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
        let _ = writeln!(s, "\nPublished numbers: {}", self.source);
        for n in &self.notes {
            let _ = writeln!(s, "\n{n}");
        }
        if self.simulated {
            let _ = writeln!(
                s,
                "\nOurs: {SIMULATED_LABEL}. The published numbers are printed for the layout only."
            );
        }
        s
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
                self.simulated.to_string(),
            ]);
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
