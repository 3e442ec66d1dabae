//! The columns of the report's fixed tables (those not made by a registered measure) and of
//! `compare`'s, each declared once: the header a table prints, its snake_case CSV name, its
//! unit and its meaning. A table pushes the declaration with the header (see
//! `Table::push_column`), so `schema.json` reads the declaration and never the header text.
//! A column whose header carries a value (Pass^k at each k) is declared with `{}` standing
//! for the value ([`Column::repeated`]).

use crate::measure::registry::{Column, Declared};

/// `c` under its snake_case name as header: the flat per-group CSV prints names.
pub(crate) const fn snake(c: Column) -> Column {
    Column {
        header: c.name,
        ..c
    }
}

/// `Comparable`.
pub(crate) const COMPARABLE: Column = Column {
    header: "Comparable",
    name: "comparable",
    unit: "text",
    meaning: "whether the cell ran τ²-bench a2c0247's benchmark definition: yes, no, or unknown \
             (records without a comparability stamp)",
};

/// `Deviations`.
pub(crate) const DEVIATIONS: Column = Column {
    header: "Deviations",
    name: "deviations",
    unit: "text",
    meaning: "the stamp items that deviate from upstream's, each `item: what was used`",
};

/// `Floor agent`.
pub(crate) const FLOOR_AGENT: Column = Column {
    header: "Floor agent",
    name: "floor_agent",
    unit: "text",
    meaning: "trivial floor agent (refuse-all, gold-no-procedure)",
};

/// `Stratum`.
pub(crate) const STRATUM: Column = Column {
    header: "Stratum",
    name: "stratum",
    unit: "text",
    meaning: "McNemar stratum (domain or agent), or `pooled`",
};

/// `Tasks`.
pub(crate) const N_TASKS: Column = Column {
    header: "Tasks",
    name: "n_tasks",
    unit: "count",
    meaning: "tasks with at least one scored simulation",
};

/// `PV tasks`.
pub(crate) const PV_N_TASKS: Column = Column {
    header: "PV tasks",
    name: "pv_n_tasks",
    unit: "count",
    meaning: "PV tasks (no agent-side mutating gold action)",
};

/// `Mut tasks`.
pub(crate) const MUT_N_TASKS: Column = Column {
    header: "Mut tasks",
    name: "mut_n_tasks",
    unit: "count",
    meaning: "Mut tasks (some agent-side mutating gold action)",
};

/// `Sims`.
pub(crate) const N_SIMULATIONS: Column = Column {
    header: "Sims",
    name: "n_simulations",
    unit: "count",
    meaning: "scored simulations",
};

/// `Infra errors`.
pub(crate) const INFRA_ERRORS: Column = Column {
    header: "Infra errors",
    name: "infra_errors",
    unit: "count",
    meaning: "infrastructure-error simulations (excluded, or failures under --infra-as-failure)",
};

/// `Duplicates`.
pub(crate) const DUPLICATES: Column = Column {
    header: "Duplicates",
    name: "duplicates",
    unit: "count",
    meaning: "records dropped as duplicates of one simulation",
};

/// `Avg reward`.
pub(crate) const AVG_REWARD: Column = Column {
    header: "Avg reward",
    name: "avg_reward",
    unit: "fraction",
    meaning: "mean reward over scored simulations (τ²-bench avg_reward)",
};

/// `Agent $/sim`.
pub(crate) const AGENT_COST_USD: Column = Column {
    header: "Agent $/sim",
    name: "agent_cost_usd",
    unit: "usd",
    meaning: "mean agent-model cost per scored simulation, US dollars; empty when unknown (a model without a price)",
};

/// `Guard $/sim`.
pub(crate) const GUARD_COST_USD: Column = Column {
    header: "Guard $/sim",
    name: "guard_cost_usd",
    unit: "usd",
    meaning: "mean guard-model cost per scored simulation, US dollars; empty when unknown (a model without a price)",
};

/// `P4/P1`.
pub(crate) const P4_P1_RATIO: Column = Column {
    header: "P4/P1",
    name: "p4_p1_ratio",
    unit: "ratio",
    meaning: "Pass^4 / Pass^1 consistency ratio (PolicyGuide Table 10)",
};

/// `pass1_trial_mean`.
pub(crate) const PASS1_TRIAL_MEAN: Column = Column {
    header: "pass1_trial_mean",
    name: "pass1_trial_mean",
    unit: "fraction",
    meaning: "per-trial Pass^1, mean over trials (PolicyGuide Table 10)",
};

/// `pass1_trial_std`.
pub(crate) const PASS1_TRIAL_STD: Column = Column {
    header: "pass1_trial_std",
    name: "pass1_trial_std",
    unit: "fraction",
    meaning: "per-trial Pass^1, sample standard deviation (ddof = 1) over trials",
};

/// `Simulated`.
pub(crate) const SIMULATED: Column = Column {
    header: "Simulated",
    name: "simulated",
    unit: "text",
    meaning: "a role of the cell was played by a `sim` model: no paper result",
};

/// `b (A✓ B✗)`.
pub(crate) const B: Column = Column {
    header: "b (A✓ B✗)",
    name: "b",
    unit: "count",
    meaning: "pairs where A passed and B failed",
};

/// `c (A✗ B✓)`.
pub(crate) const C: Column = Column {
    header: "c (A✗ B✓)",
    name: "c",
    unit: "count",
    meaning: "pairs where A failed and B passed",
};

/// `exact p`.
pub(crate) const EXACT_P: Column = Column {
    header: "exact p",
    name: "exact_p",
    unit: "probability",
    meaning: "two-sided exact McNemar p (statsmodels mcnemar(exact=True))",
};

/// `mid-p`.
pub(crate) const MID_P: Column = Column {
    header: "mid-p",
    name: "mid_p",
    unit: "probability",
    meaning: "mid-p McNemar (Fagerland et al. 2013)",
};

/// `χ²`.
pub(crate) const CHI2: Column = Column {
    header: "χ²",
    name: "chi2",
    unit: "statistic",
    meaning: "continuity-corrected McNemar χ²",
};

/// `χ² p`.
pub(crate) const CHI2_P: Column = Column {
    header: "χ² p",
    name: "chi2_p",
    unit: "probability",
    meaning: "p of the χ² statistic (1 degree of freedom)",
};

/// `k`.
pub(crate) const K: Column = Column {
    header: "k",
    name: "k",
    unit: "k",
    meaning: "trials of a task that must all succeed",
};

/// `B − A`.
pub(crate) const DIFF: Column = Column {
    header: "B − A",
    name: "diff",
    unit: "fraction",
    meaning: "Pass^k of B minus Pass^k of A on the paired tasks",
};

/// `CI low`.
pub(crate) const CI_LOW: Column = Column {
    header: "CI low",
    name: "ci_low",
    unit: "fraction",
    meaning: "lower percentile-bootstrap bound of B − A (tasks resampled)",
};

/// `CI high`.
pub(crate) const CI_HIGH: Column = Column {
    header: "CI high",
    name: "ci_high",
    unit: "fraction",
    meaning: "upper percentile-bootstrap bound of B − A",
};

/// Pass^k at k = `{}` over all tasks.
pub(crate) const PASS_K: Column = Column {
    header: "Pass^{}",
    name: "pass_{}",
    unit: "fraction",
    meaning: "Pass^{} (mean over tasks of C(c,{})/C(n,{}); τ²-bench §8) over all tasks",
};

/// Pass^k of the flat CSV over PV tasks.
pub(crate) const PV_PASS_K: Column = Column {
    header: "pv_pass_{}",
    name: "pv_pass_{}",
    unit: "fraction",
    meaning: "Pass^{} (mean over tasks of C(c,{})/C(n,{}); τ²-bench §8) over PV tasks",
};

/// Pass^k of the flat CSV over Mut tasks.
pub(crate) const MUT_PASS_K: Column = Column {
    header: "mut_pass_{}",
    name: "mut_pass_{}",
    unit: "fraction",
    meaning: "Pass^{} (mean over tasks of C(c,{})/C(n,{}); τ²-bench §8) over Mut tasks",
};

/// Pass^k's Δ of the flat CSV.
pub(crate) const DELTA_PASS_K: Column = Column {
    header: "delta_pass_{}",
    name: "delta_pass_{}",
    unit: "fraction",
    meaning: "Pass^{} minus the same agent's baseline Pass^{} (PolicyGuard Table 2 Δ)",
};

/// PolicyGuide Table 10's per-trial Pass^1 (`{}` is 1).
pub(crate) const PASS_K_PER_TRIAL: Column = Column {
    header: "Pass^{} per trial",
    name: "pass_{}_per_trial",
    unit: "fraction",
    meaning: "per-trial Pass^1: mean over trials (PolicyGuide Table 10)",
};

/// PolicyGuard Table 2's Pass^K columns at the headline k.
pub(crate) const HEADLINE: [Column; 4] = [
    Column {
        header: "Overall",
        name: "pass_headline_overall",
        unit: "fraction",
        meaning: "Pass^K at the report's headline k (the title's K), all tasks (PolicyGuard Table 2)",
    },
    Column {
        header: "PV",
        name: "pass_headline_pv",
        unit: "fraction",
        meaning: "Pass^K at the headline k on PV tasks (no agent-side mutating gold action)",
    },
    Column {
        header: "Mut",
        name: "pass_headline_mut",
        unit: "fraction",
        meaning: "Pass^K at the headline k on Mut tasks",
    },
    Column {
        header: "Δ",
        name: "delta_pass_headline",
        unit: "fraction",
        meaning: "overall Pass^K minus the same agent's baseline Pass^K (same domain and non-guard settings)",
    },
];

/// The floors table's Pass^1 columns.
pub(crate) const FLOOR_PASS: [Column; 3] = [
    Column {
        header: "Overall",
        name: "pass_1_overall",
        unit: "fraction",
        meaning: "floor agent's Pass^1 on all tasks (deterministic, so Pass^1 = Pass^k)",
    },
    Column {
        header: "PV",
        name: "pass_1_pv",
        unit: "fraction",
        meaning: "floor agent's Pass^1 on PV tasks",
    },
    Column {
        header: "Mut",
        name: "pass_1_mut",
        unit: "fraction",
        meaning: "floor agent's Pass^1 on Mut tasks",
    },
];

/// The floors table's process-valid Pass^1 columns.
pub(crate) const FLOOR_VALID: [Column; 3] = [
    Column {
        header: "Valid overall",
        name: "process_pass_1_overall",
        unit: "fraction",
        meaning: "floor agent's process-valid Pass^1 on overall tasks: a trial succeeds when its outcome passes and it is process-valid (docs/process-validity.md)",
    },
    Column {
        header: "Valid PV",
        name: "process_pass_1_pv",
        unit: "fraction",
        meaning: "floor agent's process-valid Pass^1 on pv tasks: a trial succeeds when its outcome passes and it is process-valid (docs/process-validity.md)",
    },
    Column {
        header: "Valid Mut",
        name: "process_pass_1_mut",
        unit: "fraction",
        meaning: "floor agent's process-valid Pass^1 on mut tasks: a trial succeeds when its outcome passes and it is process-valid (docs/process-validity.md)",
    },
];

/// `mcnemar`'s pair count.
pub(crate) const N_PAIRS: Column = Column {
    header: "Pairs",
    name: "n_pairs",
    unit: "count",
    meaning: "(task, trial) pairs scored on both sides",
};

/// `pass_k_diff`'s sides.
pub(crate) const PASS_K_A: Column = Column {
    header: "A",
    name: "pass_k_a",
    unit: "fraction",
    meaning: "Pass^k of side A on the paired tasks",
};

/// `pass_k_diff`'s side B.
pub(crate) const PASS_K_B: Column = Column {
    header: "B",
    name: "pass_k_b",
    unit: "fraction",
    meaning: "Pass^k of side B on the paired tasks",
};

/// PolicyGuide Table 14's guide usage, in its order.
pub(crate) const GUIDE_USAGE: [Column; 6] = [
    Column {
        header: "Guide runs / sim",
        name: "guide_runs_per_sim",
        unit: "count",
        meaning: "guide runs per simulation (PolicyGuide Table 14)",
    },
    Column {
        header: "Guide calls / sim",
        name: "guide_calls_per_sim",
        unit: "count",
        meaning: "guide model calls per simulation",
    },
    Column {
        header: "Prompt tokens / sim",
        name: "guide_prompt_tokens_per_sim",
        unit: "tokens",
        meaning: "guide prompt tokens per simulation",
    },
    Column {
        header: "Completion tokens / sim",
        name: "guide_completion_tokens_per_sim",
        unit: "tokens",
        meaning: "guide completion tokens per simulation",
    },
    Column {
        header: "Prefix-cache hit",
        name: "guide_prefix_cache_hit_rate",
        unit: "fraction",
        meaning: "cached / prompt tokens of guide calls",
    },
    Column {
        header: "Guide $ / sim",
        name: "guide_cost_usd_per_sim",
        unit: "usd",
        meaning: "guide cost per simulation, US dollars",
    },
];

/// The flat CSV's mean wall clock (PolicyGuide Table 15's `Wall s / sim`).
pub(crate) const WALL_SECONDS_MEAN: Column = Column {
    header: "wall_seconds_mean",
    name: "wall_seconds_mean",
    unit: "seconds",
    meaning: "mean wall clock per simulation (PolicyGuide Table 15)",
};

/// Wall clock against the baseline's.
pub(crate) const WALL_RATIO: Column = Column {
    header: "× baseline",
    name: "wall_ratio_vs_baseline",
    unit: "ratio",
    meaning: "wall clock / the same agent's baseline wall clock",
};

/// A role's mean cost in PolicyGuard's cost table, `{}` being the role.
pub(crate) const ROLE_COST: Column = Column {
    header: "{} $/trial",
    name: "cost_usd_per_sim_{}",
    unit: "usd",
    meaning: "mean {} cost per scored simulation, US dollars; empty when a {} model had no price (PolicyGuard cost table)",
};

/// The roles' total in PolicyGuard's cost table.
pub(crate) const TOTAL_COST: Column = Column {
    header: "Total $/trial",
    name: "cost_usd_per_sim_total",
    unit: "usd",
    meaning: "mean cost per scored simulation summed over the roles, US dollars; empty when a role's is unknown (PolicyGuard cost table)",
};

/// The total's difference from the baseline's.
pub(crate) const DELTA_TOTAL_COST: Column = Column {
    header: "Δ total vs baseline",
    name: "delta_cost_usd_per_sim_total",
    unit: "usd",
    meaning: "total cost per simulation minus the same agent's baseline total, US dollars",
};

/// The task of a per-task table.
pub(crate) const TASK: Column = Column {
    header: "Task",
    name: "task_id",
    unit: "text",
    meaning: "τ²-bench task id",
};

/// The columns of the long per-task outcomes after the key columns.
pub(crate) const TASK_OUTCOMES: [Column; 5] = [
    Column {
        header: "cell_hash",
        name: "cell_hash",
        unit: "text",
        meaning: "the cell hash of the records (empty for imports without one)",
    },
    Column {
        header: "task_id",
        name: "task_id",
        unit: "text",
        meaning: "τ²-bench task id",
    },
    Column {
        header: "trials",
        name: "trials",
        unit: "count",
        meaning: "scored simulations of the task in the cell",
    },
    Column {
        header: "successes",
        name: "successes",
        unit: "count",
        meaning: "successful simulations (reward within 1e-6 of 1)",
    },
    Column {
        header: "success_rate",
        name: "success_rate",
        unit: "fraction",
        meaning: "successes / trials",
    },
];

/// Where a cell's guard artifacts came from.
pub(crate) const ARTIFACTS_ORIGIN: Column = Column {
    header: "Artifacts origin",
    name: "artifacts_origin",
    unit: "text",
    meaning: "where the cell's guard artifacts came from, per kind (tasks/<domain>/provenance.toml)",
};

/// The compiled artifact set a cell ran on, and its origin.
pub(crate) const ARTIFACT_SET: [Column; 2] = [
    Column {
        header: "Artifact set",
        name: "artifact_set",
        unit: "text",
        meaning: "frozen, or the compiled artifact set's directory the cell ran on",
    },
    Column {
        header: "Compiled",
        name: "artifacts_compiled",
        unit: "text",
        meaning: "the compiled set's origin per kind: compiler, model, date, compile report",
    },
];

/// The wide per-task outcomes' column of one cell (`header` names it): Markdown and LaTeX
/// print it; the CSV is the long form.
pub(crate) fn cell_outcomes(header: &str) -> Declared {
    Declared {
        name: crate::render::csv_tidy::slug(header),
        unit: "text",
        meaning: format!("successes / scored simulations of the task in cell {header}, as c/n"),
    }
}
