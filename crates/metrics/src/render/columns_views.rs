//! The columns of the PolicyGuide tables (`tables_policyguide.rs`) and of the process view's
//! (`tables_process.rs`), declared as `columns.rs` declares the others: `{}` stands for the
//! k of a Pass^k column or a trigger schedule's name.

use crate::measure::registry::{Column, Declared};

/// PolicyGuide Table 1's Pass^k at k = `{}`, over all, PV and Mut tasks.
pub(crate) const TABLE1: [Column; 3] = [
    Column {
        header: "Pass^{} All",
        name: "pass_{}_all",
        unit: "fraction",
        meaning: "Pass^{} (mean over tasks of C(c,{})/C(n,{}); τ²-bench §8) over all tasks (PolicyGuide Table 1)",
    },
    Column {
        header: "Pass^{} PV",
        name: "pass_{}_pv",
        unit: "fraction",
        meaning: "Pass^{} (mean over tasks of C(c,{})/C(n,{}); τ²-bench §8) over PV tasks (PolicyGuide Table 1)",
    },
    Column {
        header: "Pass^{} Mut",
        name: "pass_{}_mut",
        unit: "fraction",
        meaning: "Pass^{} (mean over tasks of C(c,{})/C(n,{}); τ²-bench §8) over Mut tasks (PolicyGuide Table 1)",
    },
];

/// PolicyGuide Table 2's configuration.
pub(crate) const CONFIGURATION: Column = Column {
    header: "Configuration",
    name: "configuration",
    unit: "text",
    meaning: "the paper's name of the configuration (ReAct, RAW, SELF, PolicyGuide)",
};

/// PolicyGuide Table 3's matched cell and task counts.
pub(crate) const TABLE3_TASKS: [Column; 4] = [
    Column {
        header: "PolicyGuide",
        name: "policyguide_cell",
        unit: "text",
        meaning: "the PolicyGuide cell matched with the FlowAgent cell",
    },
    Column {
        header: "FlowAgent tasks",
        name: "flowagent_tasks",
        unit: "count",
        meaning: "tasks FlowAgent ran",
    },
    Column {
        header: "PolicyGuide tasks",
        name: "policyguide_tasks",
        unit: "count",
        meaning: "tasks PolicyGuide ran",
    },
    Column {
        header: "Shared tasks",
        name: "shared_tasks",
        unit: "count",
        meaning: "tasks both ran (PolicyGuide Table 3)",
    },
];

/// PolicyGuide Table 3's Pass^k at k = `{}` of both sides and their difference.
pub(crate) const TABLE3_PASS: [Column; 3] = [
    Column {
        header: "FlowAgent Pass^{}",
        name: "flowagent_pass_{}",
        unit: "fraction",
        meaning: "Pass^{} (mean over tasks of C(c,{})/C(n,{}); τ²-bench §8) of FlowAgent on shared tasks",
    },
    Column {
        header: "PolicyGuide Pass^{}",
        name: "policyguide_pass_{}",
        unit: "fraction",
        meaning: "Pass^{} (mean over tasks of C(c,{})/C(n,{}); τ²-bench §8) of PolicyGuide on shared tasks",
    },
    Column {
        header: "Δ Pass^{}",
        name: "delta_pass_{}",
        unit: "fraction",
        meaning: "PolicyGuide − FlowAgent Pass^{} (PolicyGuide Table 3)",
    },
];

/// PolicyGuide Table 14's fail-mode guide runs.
pub(crate) const TABLE14_FAIL_MODE: [Column; 2] = [
    Column {
        header: "Fail-mode",
        name: "guide_fail_mode_runs",
        unit: "count",
        meaning: "guide runs whose guidance the fail mode gave, not the model (records' verdict_source = fail_mode; see fail_mode.rs)",
    },
    Column {
        header: "Fail-mode%",
        name: "guide_fail_mode_rate",
        unit: "fraction",
        meaning: "fail-mode guide runs / guide runs",
    },
];

/// PolicyGuide Table 15's mean wall clock.
pub(crate) const WALL_SECONDS: Column = Column {
    header: "Wall s / sim",
    name: "wall_seconds_per_sim",
    unit: "seconds",
    meaning: "mean wall clock per simulation (PolicyGuide Table 15)",
};

/// Outcome and process-valid Pass^k at k = `{}`, per slice.
pub(crate) const PROCESS_PASS: [Column; 6] = [
    Column {
        header: "Overall Pass^{}",
        name: "pass_{}_overall",
        unit: "fraction",
        meaning: "outcome Pass^{} on overall tasks (τ²-bench §8)",
    },
    Column {
        header: "Overall valid Pass^{}",
        name: "process_pass_{}_overall",
        unit: "fraction",
        meaning: "process-valid Pass^{} on overall tasks: a trial succeeds when its outcome passes and it is process-valid (docs/process-validity.md)",
    },
    Column {
        header: "PV Pass^{}",
        name: "pass_{}_pv",
        unit: "fraction",
        meaning: "outcome Pass^{} on pv tasks (τ²-bench §8)",
    },
    Column {
        header: "PV valid Pass^{}",
        name: "process_pass_{}_pv",
        unit: "fraction",
        meaning: "process-valid Pass^{} on pv tasks: a trial succeeds when its outcome passes and it is process-valid (docs/process-validity.md)",
    },
    Column {
        header: "Mut Pass^{}",
        name: "pass_{}_mut",
        unit: "fraction",
        meaning: "outcome Pass^{} on mut tasks (τ²-bench §8)",
    },
    Column {
        header: "Mut valid Pass^{}",
        name: "process_pass_{}_mut",
        unit: "fraction",
        meaning: "process-valid Pass^{} on mut tasks: a trial succeeds when its outcome passes and it is process-valid (docs/process-validity.md)",
    },
];

/// Process-valid share.
pub(crate) const PROCESS_VALID_RATE: Column = Column {
    header: "Process-valid sims",
    name: "process_valid_rate",
    unit: "fraction",
    meaning: "process-valid simulations / process-evaluated simulations",
};

/// First deviations by level and position, after `Sims`.
pub(crate) const FIRST_DEVIATIONS: [Column; 7] = [
    Column {
        header: "Deviated",
        name: "deviated",
        unit: "count",
        meaning: "simulations with a first deviation (not process-valid)",
    },
    Column {
        header: "A",
        name: "first_level_a",
        unit: "count",
        meaning: "first deviations breaking a level-A requirement (A argument, P process, W workflow)",
    },
    Column {
        header: "P",
        name: "first_level_p",
        unit: "count",
        meaning: "first deviations breaking a level-P requirement (A argument, P process, W workflow)",
    },
    Column {
        header: "W",
        name: "first_level_w",
        unit: "count",
        meaning: "first deviations breaking a level-W requirement (A argument, P process, W workflow)",
    },
    Column {
        header: "Inside guarded call",
        name: "first_inside_guarded_call",
        unit: "count",
        meaning: "first deviations at a guarded (mutating) call",
    },
    Column {
        header: "Before first guarded call",
        name: "first_before_guarded_call",
        unit: "count",
        meaning: "first deviations before the trajectory's first guarded call",
    },
    Column {
        header: "Outside guarded calls",
        name: "first_outside_guarded_calls",
        unit: "count",
        meaning: "first deviations after the first guarded call but not at one, or without one",
    },
];

/// A trigger schedule's coverage, `{}` being its name.
pub(crate) const COVERAGE: Column = Column {
    header: "Coverage: {}",
    name: "coverage_{}",
    unit: "fraction",
    meaning: "share of first deviations the `{}` trigger schedule could see (PolicyGuide Theorem 1)",
};

/// The procedure specs' levels beside the papers', after `Domain`.
pub(crate) const PROCEDURE_LEVELS: [Column; 11] = [
    Column {
        header: "Requirements",
        name: "requirements",
        unit: "count",
        meaning: "atomic requirements of the domain's procedure spec",
    },
    Column {
        header: "A",
        name: "level_a",
        unit: "count",
        meaning: "requirements of level A (A argument, P process, W workflow)",
    },
    Column {
        header: "P",
        name: "level_p",
        unit: "count",
        meaning: "requirements of level P (A argument, P process, W workflow)",
    },
    Column {
        header: "W",
        name: "level_w",
        unit: "count",
        meaning: "requirements of level W (A argument, P process, W workflow)",
    },
    Column {
        header: "P+W share",
        name: "process_share",
        unit: "fraction",
        meaning: "share of requirements at level P or W (the papers' process-level class)",
    },
    Column {
        header: "W share",
        name: "workflow_share",
        unit: "fraction",
        meaning: "share of requirements at level W",
    },
    Column {
        header: "Published requirements",
        name: "published_requirements",
        unit: "text",
        meaning: "the papers' requirements (PolicyGuard Table 11, PolicyGuide Table 6)",
    },
    Column {
        header: "Published A",
        name: "published_a",
        unit: "text",
        meaning: "the papers' A (PolicyGuard Table 11, PolicyGuide Table 6)",
    },
    Column {
        header: "Published P+W share",
        name: "published_process_share",
        unit: "text",
        meaning: "the papers' P+W share (PolicyGuard Table 11, PolicyGuide Table 6)",
    },
    Column {
        header: "Published W share",
        name: "published_w_share",
        unit: "text",
        meaning: "the papers' W share (PolicyGuard Table 11, PolicyGuide Table 6)",
    },
    Column {
        header: "Source",
        name: "source",
        unit: "text",
        meaning: "the paper tables the published figures come from",
    },
];

/// PolicyGuide Table 2's Pass^k at `k` in `domain`: a column made for two values.
pub(crate) fn domain_pass(domain: &str, k: u32) -> Declared {
    Declared {
        name: format!("{}_pass_{k}", crate::render::csv_tidy::slug(domain)),
        unit: "fraction",
        meaning: format!(
            "Pass^{k} (mean over tasks of C(c,{k})/C(n,{k}); τ²-bench §8) in domain {domain} \
             (PolicyGuide Table 2)"
        ),
    }
}
