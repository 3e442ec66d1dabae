//! Tidy CSV: every table as numbers a script can read without parsing text — one row per
//! observation, numeric columns holding plain decimals (fractions as fractions, never
//! percent; p-values never in scientific notation), a mean ± std as two columns, snake_case
//! names carrying their unit when it is no fraction (`cost_usd`, `turns`, `seconds`) — and
//! the description of every column (name, type, unit, meaning) that `schema.json` collects.
//!
//! Column names and meanings come from [`describe`], one entry per table header; a header it
//! does not know gets a slug name and an empty meaning, which the schema test refuses.

use crate::table::{Cell, Table};
use serde::Serialize;

/// One documented CSV column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ColumnDoc {
    pub name: String,
    /// `string`, `integer`, `number` or `boolean`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `fraction`, `count`, `usd`, `turns`, `seconds`, `tokens`, `ratio`, `probability`,
    /// `statistic`, `k` or `` (text).
    pub unit: &'static str,
    pub meaning: String,
}

/// A table in tidy form.
#[derive(Debug, Clone, PartialEq)]
pub struct TidyCsv {
    pub id: String,
    pub columns: Vec<ColumnDoc>,
    pub rows: Vec<Vec<String>>,
}

impl TidyCsv {
    pub fn to_csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        // Writing to a Vec cannot fail.
        let _ = w.write_record(self.columns.iter().map(|c| c.name.as_str()));
        for row in &self.rows {
            let _ = w.write_record(row);
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}

/// `Pass^4 PV` → (`Pass^k PV`, Some(4)).
fn generalise(header: &str) -> (String, Option<u32>) {
    let Some(at) = header.find("Pass^") else {
        return (header.to_string(), None);
    };
    let rest = &header[at + 5..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    match digits.parse() {
        Ok(k) => (
            format!("{}Pass^k{}", &header[..at], &rest[digits.len()..]),
            Some(k),
        ),
        Err(_) => (header.to_string(), None),
    }
}

fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.replace('Δ', "delta ").to_lowercase().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_string()
}

/// Name, unit and meaning of a table column. Metrics are defined where they are computed; the
/// meanings here say which one a column holds.
pub fn describe(table: &str, header: &str) -> (String, &'static str, String) {
    let (h, k) = generalise(header);
    let kk = k.map(|k| k.to_string()).unwrap_or_default();
    let pass = |what: &str| {
        format!("Pass^{kk} (mean over tasks of C(c,{kk})/C(n,{kk}); τ²-bench §8) {what}")
    };
    let d = |name: &str, unit: &'static str, meaning: &str| {
        (name.to_string(), unit, meaning.to_string())
    };
    if let Some(x) = crate::tables_process::describe(table, &h, &kk) {
        return x;
    }
    // Table-specific headers first.
    match (table, h.as_str()) {
        ("policyguard_table2", "Overall") => {
            return d(
                "pass_headline_overall",
                "fraction",
                "Pass^K at the report's headline k (the title's K), all tasks (PolicyGuard Table 2)",
            );
        }
        ("policyguard_table2", "PV") => {
            return d(
                "pass_headline_pv",
                "fraction",
                "Pass^K at the headline k on PV tasks (no agent-side mutating gold action)",
            );
        }
        ("policyguard_table2", "Mut") => {
            return d(
                "pass_headline_mut",
                "fraction",
                "Pass^K at the headline k on Mut tasks",
            );
        }
        ("policyguard_table2", "Δ") => {
            return d(
                "delta_pass_headline",
                "fraction",
                "overall Pass^K minus the same agent's baseline Pass^K (same domain and non-guard settings)",
            );
        }
        ("floors", "Overall") => {
            return d(
                "pass_1_overall",
                "fraction",
                "floor agent's Pass^1 on all tasks (deterministic, so Pass^1 = Pass^k)",
            );
        }
        ("floors", "PV") => return d("pass_1_pv", "fraction", "floor agent's Pass^1 on PV tasks"),
        ("floors", "Mut") => {
            return d(
                "pass_1_mut",
                "fraction",
                "floor agent's Pass^1 on Mut tasks",
            );
        }
        ("policyguide_table2", x) if x.ends_with(" Pass^k") => {
            let dom = x.trim_end_matches(" Pass^k");
            return (
                format!("{}_pass_{kk}", slug(dom)),
                "fraction",
                pass(&format!("in domain {dom} (PolicyGuide Table 2)")),
            );
        }
        ("policyguide_table14", "Fail-mode") => {
            return d(
                "guide_fail_mode_runs",
                "count",
                "guide runs whose guidance the fail mode gave, not the model (records' \
                 verdict_source = fail_mode; see fail_mode.rs)",
            );
        }
        ("policyguide_table14", "Fail-mode%") => {
            return d(
                "guide_fail_mode_rate",
                "fraction",
                "fail-mode guide runs / guide runs",
            );
        }
        ("mcnemar", "Pairs") => {
            return d(
                "n_pairs",
                "count",
                "(task, trial) pairs scored on both sides",
            );
        }
        ("pass_k_diff", "A") => {
            return d(
                "pass_k_a",
                "fraction",
                "Pass^k of side A on the paired tasks",
            );
        }
        ("pass_k_diff", "B") => {
            return d(
                "pass_k_b",
                "fraction",
                "Pass^k of side B on the paired tasks",
            );
        }
        _ => {}
    }
    match h.as_str() {
        "Domain" | "domain" => d(
            "domain",
            "",
            "τ²-bench domain (or the mean row's description)",
        ),
        "Agent" | "agent_model" => d("agent_model", "", "agent model"),
        "Guard" | "guard" => d(
            "guard",
            "",
            "guard configuration, with the settings that tell apart cells sharing the name",
        ),
        "Task" => d("task_id", "", "τ²-bench task id"),
        "Configuration" => d(
            "configuration",
            "",
            "the paper's name of the configuration (ReAct, RAW, SELF, PolicyGuide)",
        ),
        "Comparable" => d(
            "comparable",
            "",
            "whether the cell ran τ²-bench a2c0247's benchmark definition: yes, no, or unknown \
             (records without a comparability stamp)",
        ),
        "Deviations" => d(
            "deviations",
            "",
            "the stamp items that deviate from upstream's, each `item: what was used`",
        ),
        "Floor agent" => d(
            "floor_agent",
            "",
            "trivial floor agent (refuse-all, gold-no-procedure)",
        ),
        "View" => d(
            "view",
            "",
            "confusion view: verdict (every guard decision, blocked = BLOCK) or runtime (every \
             attempt, blocked = did not execute)",
        ),
        "Stratum" => d(
            "stratum",
            "",
            "McNemar stratum (domain or agent), or `pooled`",
        ),
        "Role" => d("role", "", "the role whose model usage is costed"),
        "Tasks" | "n_tasks" => d(
            "n_tasks",
            "count",
            "tasks with at least one scored simulation",
        ),
        "PV tasks" | "pv_n_tasks" => d(
            "pv_n_tasks",
            "count",
            "PV tasks (no agent-side mutating gold action)",
        ),
        "Mut tasks" | "mut_n_tasks" => d(
            "mut_n_tasks",
            "count",
            "Mut tasks (some agent-side mutating gold action)",
        ),
        "Sims" | "n_simulations" => d("n_simulations", "count", "scored simulations"),
        "Infra errors" | "infra_errors" => d(
            "infra_errors",
            "count",
            "infrastructure-error simulations (excluded, or failures under --infra-as-failure)",
        ),
        "Duplicates" | "duplicates" => d(
            "duplicates",
            "count",
            "records dropped as duplicates of one simulation",
        ),
        "Avg reward" | "avg_reward" => d(
            "avg_reward",
            "fraction",
            "mean reward over scored simulations (τ²-bench avg_reward)",
        ),
        "Agent $/sim" | "agent_cost_usd" => d(
            "agent_cost_usd",
            "usd",
            "mean agent-model cost per scored simulation, US dollars; empty when unknown (a model without a price)",
        ),
        "Guard $/sim" | "guard_cost_usd" => d(
            "guard_cost_usd",
            "usd",
            "mean guard-model cost per scored simulation, US dollars; empty when unknown (a model without a price)",
        ),
        "Pass^k" => (format!("pass_{kk}"), "fraction", pass("over all tasks")),
        "Pass^k All" => (
            format!("pass_{kk}_all"),
            "fraction",
            pass("over all tasks (PolicyGuide Table 1)"),
        ),
        "Pass^k PV" => (
            format!("pass_{kk}_pv"),
            "fraction",
            pass("over PV tasks (PolicyGuide Table 1)"),
        ),
        "Pass^k Mut" => (
            format!("pass_{kk}_mut"),
            "fraction",
            pass("over Mut tasks (PolicyGuide Table 1)"),
        ),
        "P4/P1" | "p4_p1_ratio" => d(
            "p4_p1_ratio",
            "ratio",
            "Pass^4 / Pass^1 consistency ratio (PolicyGuide Table 10)",
        ),
        "Pass^k per trial" => (
            format!("pass_{kk}_per_trial"),
            "fraction",
            "per-trial Pass^1: mean over trials (PolicyGuide Table 10)".into(),
        ),
        "Attempts" => d(
            "attempts",
            "count",
            "mutating-call attempts judged by the guard",
        ),
        "TP" => d(
            "tp",
            "count",
            "violating calls blocked (PolicyGuard Table 7)",
        ),
        "FN" => d("fn", "count", "violating calls passed"),
        "FP" => d("fp", "count", "compliant calls blocked"),
        "TN" => d("tn", "count", "compliant calls passed"),
        "PV rec" => d(
            "pv_recall",
            "fraction",
            "TP / (TP + FN) (PolicyGuard Table 7)",
        ),
        "Block%" => d(
            "block_rate",
            "fraction",
            "blocked / attempts (PolicyGuard Table 7)",
        ),
        "Fail-mode" => d(
            "fail_mode",
            "count",
            "verdicts the guard's fail mode gave, not the verifier (records' verdict_source = \
             fail_mode): of the decisions (verdict view) or the executed calls a fail-open \
             verdict let through (runtime view)",
        ),
        "Fail-mode%" => d(
            "fail_mode_rate",
            "fraction",
            "fail-mode verdicts / the view's attempts (PolicyGuard Table 7; see fail_mode.rs)",
        ),
        "Mut sims" => d(
            "mut_simulations",
            "count",
            "Mut-task simulations (PolicyGuard Table 8)",
        ),
        "Turns / sim" => d(
            "turns_per_sim",
            "turns",
            "mean agent + user turns per Mut simulation (PolicyGuard Table 8)",
        ),
        "Δ vs baseline" => d(
            "turns_delta_vs_baseline",
            "turns",
            "turns per Mut simulation minus the same agent's baseline",
        ),
        "Calls" => d(
            "nmr_calls",
            "count",
            "executed agent-side mutating calls with known prerequisite status (PolicyGuard Table 9)",
        ),
        "Lacking" => d(
            "nmr_lacking",
            "count",
            "of those, calls lacking a prerequisite read",
        ),
        "Call-NMR" => d(
            "call_nmr",
            "fraction",
            "lacking / calls (PolicyGuard Table 9)",
        ),
        "Calls (passing)" => d(
            "nmr_passing_calls",
            "count",
            "calls of outcome-passing simulations (PolicyGuide Table 17)",
        ),
        "Lacking (passing)" => d(
            "nmr_passing_lacking",
            "count",
            "of those, calls lacking a prerequisite read",
        ),
        "Call-NMR (passing)" => d(
            "call_nmr_passing",
            "fraction",
            "call-NMR of outcome-passing simulations (PolicyGuide Table 17)",
        ),
        "Unknown" => d(
            "nmr_unknown",
            "count",
            "calls whose prerequisite status is unknown",
        ),
        "Traces" => d(
            "traces",
            "count",
            "simulations with a gold trace (PolicyGuide Table 5)",
        ),
        "Passing" => d("passing", "count", "outcome-passing traces"),
        "Step-TCR" => d(
            "step_tcr",
            "fraction",
            "gold steps matched in order / gold steps, passing traces (PolicyGuide Table 5)",
        ),
        "Trace-TCR" => d(
            "trace_tcr",
            "fraction",
            "fully compliant / passing traces (PolicyGuide Table 5)",
        ),
        "Process-valid" => d(
            "process_valid_rate",
            "fraction",
            "passing and compliant / all traces (PolicyGuide Table 5)",
        ),
        "Attack sims" => d("attack_simulations", "count", "attack-task simulations"),
        "Successes" => d(
            "attack_successes",
            "count",
            "attacks whose target call executed",
        ),
        "ASR / trial" => d(
            "asr_per_trial",
            "fraction",
            "successes / attack simulations (PolicyGuide Figure 6)",
        ),
        "Attack tasks" => d("attack_tasks", "count", "attack tasks"),
        "Breached" => d(
            "attack_tasks_breached",
            "count",
            "attack tasks breached in any trial",
        ),
        "ASR / task" => d("asr_per_task", "fraction", "breached / attack tasks"),
        "Refusal Pass^k" => (
            format!("refusal_pass_{kk}"),
            "fraction",
            pass("on attack tasks, where success is the database left unchanged"),
        ),
        "Decisions" => d("decisions", "count", "offline verifier decisions"),
        "Stated / decision" => d(
            "checked_per_decision",
            "count",
            "requirements a given input states, judged, per decision (mean)",
        ),
        "Unseen (NOT MET) / decision" => d(
            "unseen_per_decision",
            "count",
            "of those, NOT MET for want of the input their evidence lies in, per decision (mean)",
        ),
        "Unchecked / decision" => d(
            "unchecked_per_decision",
            "count",
            "requirements left unchecked per decision (mean)",
        ),
        "Inputs" => d("inputs", "", "the inputs the verifier variant is given"),
        "Artifacts origin" => d(
            "artifacts_origin",
            "",
            "where the cell's guard artifacts came from, per kind (tasks/<domain>/provenance.toml)",
        ),
        "Artifact set" => d(
            "artifact_set",
            "",
            "frozen, or the compiled artifact set's directory the cell ran on",
        ),
        "Compiled" => d(
            "artifacts_compiled",
            "",
            "the compiled set's origin per kind: compiler, model, date, compile report",
        ),
        _ => crate::csv_schema::describe_more(&h, &kk)
            .unwrap_or_else(|| (slug(&h), "", String::new())),
    }
}

/// Type of a column from its cells.
fn kind_of(cells: &[&Cell], name: &str) -> &'static str {
    if name == "simulated" {
        return "boolean";
    }
    if cells
        .iter()
        .all(|c| matches!(c, Cell::Int(_) | Cell::Missing | Cell::Unknown))
        && cells.iter().any(|c| matches!(c, Cell::Int(_)))
    {
        return "integer";
    }
    if cells.iter().any(|c| matches!(c, Cell::Text(_)))
        || cells.iter().all(|c| matches!(c, Cell::Missing))
    {
        return "string";
    }
    "number"
}

/// The tidy form of a table.
pub fn tidy(t: &Table) -> TidyCsv {
    let mut columns = Vec::new();
    // Per source column: expands into mean and std; holds yes/no as a boolean.
    let mut split = Vec::new();
    let mut boolean = Vec::new();
    for (j, header) in t.headers.iter().enumerate() {
        let cells: Vec<&Cell> = t.rows.iter().filter_map(|r| r.get(j)).collect();
        let (name, unit, meaning) = describe(t.id, header);
        let two = cells.iter().any(|c| matches!(c, Cell::MeanStd(..)));
        let kind = if two {
            "number"
        } else {
            kind_of(&cells, &name)
        };
        let unit = if kind == "string" || kind == "boolean" {
            ""
        } else {
            unit
        };
        split.push(two);
        boolean.push(kind == "boolean");
        if two {
            columns.push(ColumnDoc {
                name: format!("{name}_std"),
                kind,
                unit,
                meaning: format!(
                    "sample standard deviation (ddof = 1) over trials of the per-trial value; {meaning}"
                ),
            });
            columns.insert(
                columns.len() - 1,
                ColumnDoc {
                    name: format!("{name}_mean"),
                    kind,
                    unit,
                    meaning,
                },
            );
        } else {
            columns.push(ColumnDoc {
                name,
                kind,
                unit,
                meaning,
            });
        }
    }
    let rows = t
        .rows
        .iter()
        .map(|row| {
            let mut out = Vec::new();
            for (j, c) in row.iter().enumerate() {
                match c {
                    Cell::MeanStd(m, s) => {
                        out.push(format!("{m:.6}"));
                        out.push(s.map(|s| format!("{s:.6}")).unwrap_or_default());
                    }
                    Cell::Text(x) if boolean[j] => {
                        out.push((x == "yes" || x == "true").to_string());
                    }
                    Cell::Missing if split[j] => {
                        out.push(String::new());
                        out.push(String::new());
                    }
                    other => out.push(other.raw()),
                }
            }
            out
        })
        .collect();
    TidyCsv {
        id: t.id.to_string(),
        columns,
        rows,
    }
}
