//! What the headers every table shares mean, by group (the grid's axes, outcomes, guard
//! decisions, process validity, attacks and verifiers). `csv_tidy::describe` asks them after
//! the table-specific headers; snake_case columns are `csv_schema::describe_more`'s.

use crate::render::csv_tidy::{Meaning, d, pass_meaning};

/// Name, unit and meaning of a shared header; `None` when no group knows it.
pub(crate) fn shared(h: &str, kk: &str) -> Option<Meaning> {
    identity(h, kk)
        .or_else(|| outcomes(h, kk))
        .or_else(|| guard_decisions(h, kk))
        .or_else(|| artifacts(h, kk))
}

/// The grid's axes and what a row counts.
fn identity(h: &str, _kk: &str) -> Option<Meaning> {
    Some(match h {
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
        _ => return None,
    })
}

/// Task counts, rewards, costs and Pass^k.
fn outcomes(h: &str, kk: &str) -> Option<Meaning> {
    let pass = |what: &str| pass_meaning(kk, what);
    Some(match h {
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
        _ => return None,
    })
}

/// A guard's decisions on mutating calls and what they cost.
fn guard_decisions(h: &str, _kk: &str) -> Option<Meaning> {
    Some(match h {
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
        _ => return None,
    })
}

/// Artifact sets.
fn artifacts(h: &str, _kk: &str) -> Option<Meaning> {
    Some(match h {
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
        _ => return None,
    })
}
