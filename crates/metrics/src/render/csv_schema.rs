//! `schema.json`: every column of every CSV a command writes — name, type, unit, meaning —
//! and the descriptions of the snake_case columns of the flat per-group CSV and of the tidy
//! per-task and cost tables, which `csv_tidy::describe` defers to.

use crate::render::csv_tidy::{ColumnDoc, TidyCsv};
use serde_json::{Value, json};

fn d(name: &str, unit: &'static str, meaning: &str) -> Option<(String, &'static str, String)> {
    Some((name.to_string(), unit, meaning.to_string()))
}

/// `pass_4` → 4 after `prefix`.
fn k_after(name: &str, prefix: &str) -> Option<u32> {
    name.strip_prefix(prefix)?.parse().ok()
}

/// Snake_case columns (the per-group CSV, per-task outcomes, cost) and pattern headers.
pub(crate) fn describe_more(h: &str, k: &str) -> Option<(String, &'static str, String)> {
    pattern_header(h)
        .or_else(|| describe_pg_and_compare(h, k))
        .or_else(|| outcome_column(h))
        .or_else(|| guard_column(h))
}

/// Headers named by a pattern: Pass^k and its Δ, per-role cost.
fn pattern_header(h: &str) -> Option<(String, &'static str, String)> {
    for (prefix, what) in [
        ("pass_", "over all tasks"),
        ("pv_pass_", "over PV tasks"),
        ("mut_pass_", "over Mut tasks"),
    ] {
        if let Some(k) = k_after(h, prefix) {
            return d(
                h,
                "fraction",
                &format!("Pass^{k} (mean over tasks of C(c,{k})/C(n,{k}); τ²-bench §8) {what}"),
            );
        }
    }
    if let Some(k) = k_after(h, "delta_pass_") {
        return d(
            h,
            "fraction",
            &format!("Pass^{k} minus the same agent's baseline Pass^{k} (PolicyGuard Table 2 Δ)"),
        );
    }
    if let Some(role) = h.strip_suffix(" $/trial") {
        if role == "Total" {
            return d(
                "cost_usd_per_sim_total",
                "usd",
                "mean cost per scored simulation summed over the roles, US dollars; empty when a role's is unknown (PolicyGuard cost table)",
            );
        }
        return d(
            &format!("cost_usd_per_sim_{role}"),
            "usd",
            &format!(
                "mean {role} cost per scored simulation, US dollars; empty when a {role} model had no price (PolicyGuard cost table)"
            ),
        );
    }
    None
}

/// Snake_case columns of outcomes, costs and their deltas.
fn outcome_column(h: &str) -> Option<(String, &'static str, String)> {
    match h {
        "Δ total vs baseline" => d(
            "delta_cost_usd_per_sim_total",
            "usd",
            "total cost per simulation minus the same agent's baseline total, US dollars",
        ),
        "× baseline total" => d(
            "cost_ratio_vs_baseline",
            "ratio",
            "total cost per simulation / the same agent's baseline total",
        ),
        "cell_hash" => d(
            h,
            "",
            "the cell hash of the records (empty for imports without one)",
        ),
        "task_id" => d(h, "", "τ²-bench task id"),
        "trials" => d(h, "count", "scored simulations of the task in the cell"),
        "successes" => d(
            h,
            "count",
            "successful simulations (reward within 1e-6 of 1)",
        ),
        "success_rate" => d(h, "fraction", "successes / trials"),
        "p4_p1_ratio" => d(
            h,
            "ratio",
            "Pass^4 / Pass^1 consistency ratio (PolicyGuide Table 10)",
        ),
        "pass1_trial_mean" => d(
            h,
            "fraction",
            "per-trial Pass^1, mean over trials (PolicyGuide Table 10)",
        ),
        "pass1_trial_std" => d(
            h,
            "fraction",
            "per-trial Pass^1, sample standard deviation (ddof = 1) over trials",
        ),
        _ => None,
    }
}

/// Snake_case columns of guard decisions, the verifier and the guide.
fn guard_column(h: &str) -> Option<(String, &'static str, String)> {
    match h {
        "verdict_tp" | "runtime_tp" => d(
            h,
            "count",
            "violating calls blocked (PolicyGuard Table 7; view in the prefix)",
        ),
        "verdict_fn" | "runtime_fn" => d(h, "count", "violating calls passed"),
        "verdict_fp" | "runtime_fp" => d(h, "count", "compliant calls blocked"),
        "verdict_tn" | "runtime_tn" => d(h, "count", "compliant calls passed"),
        "verdict_pv_recall" | "runtime_pv_recall" => {
            d(h, "fraction", "TP / (TP + FN) (PolicyGuard Table 7)")
        }
        "verdict_block_rate" | "runtime_block_rate" => {
            d(h, "fraction", "blocked / attempts (PolicyGuard Table 7)")
        }
        "guide_runs_per_sim" => d(
            h,
            "count",
            "guide runs per simulation (PolicyGuide Table 14)",
        ),
        "guide_calls_per_sim" => d(h, "count", "guide model calls per simulation"),
        "guide_prompt_tokens_per_sim" => d(h, "tokens", "guide prompt tokens per simulation"),
        "guide_completion_tokens_per_sim" => {
            d(h, "tokens", "guide completion tokens per simulation")
        }
        "guide_prefix_cache_hit_rate" => d(h, "fraction", "cached / prompt tokens of guide calls"),
        "guide_cost_usd_per_sim" => d(h, "usd", "guide cost per simulation, US dollars"),
        "fail_mode_decisions" => d(
            h,
            "count",
            "guard decisions on agent-side mutating calls of scored simulations",
        ),
        "fail_mode_verdicts" => d(
            h,
            "count",
            "of those, verdicts the guard's fail mode gave, not the verifier (see fail_mode.rs)",
        ),
        "fail_mode_rate" => d(h, "fraction", "fail-mode verdicts / guard decisions"),
        "guide_fail_mode_runs" => d(
            h,
            "count",
            "guide runs whose guidance the fail mode gave, not the model",
        ),
        "guide_fail_mode_rate" => d(h, "fraction", "fail-mode guide runs / guide runs"),
        "wall_seconds_mean" => d(
            h,
            "seconds",
            "mean wall clock per simulation (PolicyGuide Table 15)",
        ),
        "wall_ratio_vs_baseline" => d(
            h,
            "ratio",
            "wall clock / the same agent's baseline wall clock",
        ),
        "label_a" => d(h, "", "name of side A"),
        "label_b" => d(h, "", "name of side B"),
        _ => None,
    }
}

/// `schema.json`: `{"files": {"<file>.csv": {"columns": [...]}}}` in file order.
pub(crate) fn schema_json(tables: &[TidyCsv]) -> Value {
    let files: serde_json::Map<String, Value> = tables
        .iter()
        .map(|t| {
            let cols: Vec<&ColumnDoc> = t.columns.iter().collect();
            (format!("{}.csv", t.id), json!({ "columns": cols }))
        })
        .collect();
    json!({
        "description": "Columns of every CSV file beside this one. Numbers are plain decimals; \
                        unit `fraction` is a value in [0, 1] (never percent); an empty field is a \
                        missing value (undefined rate, too few trials).",
        "files": files,
    })
}

fn pass_of(k: &str, what: &str) -> String {
    format!("Pass^{k} (mean over tasks of C(c,{k})/C(n,{k}); τ²-bench §8) {what}")
}

/// PolicyGuide Tables 3, 14 and 15 and the `compare` tables.
fn describe_pg_and_compare(h: &str, kk: &str) -> Option<(String, &'static str, String)> {
    let d = |name: &str, unit: &'static str, meaning: &str| {
        (name.to_string(), unit, meaning.to_string())
    };
    let found = match h {
        "PolicyGuide" => d(
            "policyguide_cell",
            "",
            "the PolicyGuide cell matched with the FlowAgent cell",
        ),
        "FlowAgent tasks" => d("flowagent_tasks", "count", "tasks FlowAgent ran"),
        "PolicyGuide tasks" => d("policyguide_tasks", "count", "tasks PolicyGuide ran"),
        "Shared tasks" => d(
            "shared_tasks",
            "count",
            "tasks both ran (PolicyGuide Table 3)",
        ),
        "FlowAgent Pass^k" => (
            format!("flowagent_pass_{kk}"),
            "fraction",
            pass_of(kk, "of FlowAgent on shared tasks"),
        ),
        "PolicyGuide Pass^k" => (
            format!("policyguide_pass_{kk}"),
            "fraction",
            pass_of(kk, "of PolicyGuide on shared tasks"),
        ),
        "Δ Pass^k" => (
            format!("delta_pass_{kk}"),
            "fraction",
            format!("PolicyGuide − FlowAgent Pass^{kk} (PolicyGuide Table 3)"),
        ),
        "Guide runs / sim" => d(
            "guide_runs_per_sim",
            "count",
            "guide runs per simulation (PolicyGuide Table 14)",
        ),
        "Guide calls / sim" => d(
            "guide_calls_per_sim",
            "count",
            "guide model calls per simulation",
        ),
        "Prompt tokens / sim" => d(
            "guide_prompt_tokens_per_sim",
            "tokens",
            "guide prompt tokens per simulation",
        ),
        "Completion tokens / sim" => d(
            "guide_completion_tokens_per_sim",
            "tokens",
            "guide completion tokens per simulation",
        ),
        "Prefix-cache hit" => d(
            "guide_prefix_cache_hit_rate",
            "fraction",
            "cached / prompt tokens of guide calls",
        ),
        "Guide $ / sim" => d(
            "guide_cost_usd_per_sim",
            "usd",
            "guide cost per simulation, US dollars",
        ),
        "Wall s / sim" => d(
            "wall_seconds_per_sim",
            "seconds",
            "mean wall clock per simulation (PolicyGuide Table 15)",
        ),
        "× baseline" => d(
            "wall_ratio_vs_baseline",
            "ratio",
            "wall clock / the same agent's baseline wall clock",
        ),
        "Simulated" | "simulated" => d(
            "simulated",
            "",
            "a role of the cell was played by a `sim` model: no paper result",
        ),
        "b (A✓ B✗)" => d("b", "count", "pairs where A passed and B failed"),
        "c (A✗ B✓)" => d("c", "count", "pairs where A failed and B passed"),
        "exact p" => d(
            "exact_p",
            "probability",
            "two-sided exact McNemar p (statsmodels mcnemar(exact=True))",
        ),
        "mid-p" => d(
            "mid_p",
            "probability",
            "mid-p McNemar (Fagerland et al. 2013)",
        ),
        "χ²" => d("chi2", "statistic", "continuity-corrected McNemar χ²"),
        "χ² p" => d(
            "chi2_p",
            "probability",
            "p of the χ² statistic (1 degree of freedom)",
        ),
        "k" => d("k", "k", "trials of a task that must all succeed"),
        "B − A" => d(
            "diff",
            "fraction",
            "Pass^k of B minus Pass^k of A on the paired tasks",
        ),
        "CI low" => d(
            "ci_low",
            "fraction",
            "lower percentile-bootstrap bound of B − A (tasks resampled)",
        ),
        "CI high" => d(
            "ci_high",
            "fraction",
            "upper percentile-bootstrap bound of B − A",
        ),
        _ => return None,
    };
    Some(found)
}
