//! Metrics of tauguard, computed from simulation records only: Pass^k overall and per PV / Mut
//! slice, per-call guard confusion, call-NMR, turn inflation, ordered-trace compliance, attack
//! success, guide-side usage and wall clock, McNemar tests and bootstrap intervals, rendered as
//! the papers' tables (Markdown, CSV, LaTeX, JSON) and plots (PNG, SVG).
//!
//! Inputs are tauguard `records.jsonl` files (or run directories holding one) and upstream
//! τ²-bench `results.json` files, which `upstream.rs` imports as records. Metrics run on
//! per-simulation summaries (`summary.rs`), read from records line by line or from a run's
//! columnar sidecar (`sidecar.rs`); `report(&records, …)` summarises records in memory first. This crate imports
//! only `tauguard-core`; the `tauguard report` / `tauguard compare` commands in `crates/cli`
//! are thin wrappers over the API below.
//!
//! ```no_run
//! use tauguard_metrics::{Format, ReportOptions, load_inputs, report, write_outputs};
//! let records = load_inputs(&["results/run1"])?;
//! let rep = report(&records, &ReportOptions::default());
//! print!("{}", rep.render(Format::Md));
//! write_outputs(&rep, std::path::Path::new("out"))?;
//! # Ok::<(), tauguard_metrics::MetricsError>(())
//! ```
//!
//! # JSON shapes
//!
//! `report --format json` prints a list with one object per (domain, agent model, guard)
//! group. Rates are numbers in [0, 1] or `null` when undefined (zero denominator):
//!
//! ```text
//! [{
//!   "domain": "airline", "agent_model": "gpt-5.4", "guard": "pg-checklist",
//!   "simulated": false,                // a role played by a `sim` model (see `simulated.rs`)
//!   "n_tasks": 50, "n_simulations": 200, "infra_errors": 0,
//!   "pass_k": {"1": 0.71, "2": 0.64, "3": 0.6, "4": 0.58},     // k = 1..K, K = min trials per task
//!   "p4_p1": 0.817,                                            // null when K < 4
//!   "pass1_per_trial": {"values": {"0": 0.7, "1": 0.72, ...}, "mean": 0.71, "std": 0.01},
//!   "pv":  {"n_tasks": 24, "n_simulations": 96, "infra_errors": 0, "pass_k": {...},
//!           "p4_p1": ..., "pass1_per_trial": {...}},
//!   "mut": {same shape as "pv"},
//!   "duplicates": 0,
//!   "delta_vs_baseline": {"1": 0.05, ..., "4": 0.12},          // null for the baseline
//!   "avg_reward": 0.71,
//!   "cost_per_simulation": {"agent": 0.41, "guard": 0.52, "user": 0.08},  // null: a model
//!                                                      // of the role had no price (unknown)
//!   "truncated_replies": {"agent": {"calls": 73, "truncated": 29}, ...},   // per role with
//!                                            // usage: replies cut at the token limit
//!                                            // (see `truncation.rs`), infra errors included
//!   "confusion": {
//!     "verdict": {"tp": 24, "fn": 0, "fp": 10, "tn": 40, "attempts": 74, "blocked": 34,
//!                 "pv_recall": 1.0, "block_rate": 0.459},
//!     "runtime": {same keys},
//!     "labelled_by_faults": 0, "labelled_by_oracle": 74},
//!   "call_nmr": {"all":     {"calls": 60, "lacking": 9, "unknown": 0, "rate": 0.15},
//!                "passing": {"calls": 20, "lacking": 1, "unknown": 0, "rate": 0.05}},
//!   "turns": {"mut_simulations": 104, "mean_turns": 21.3, "delta_vs_baseline": 2.1},
//!   "trace": null | {"traces", "passing", "gold_steps", "matched_steps", "compliant",
//!                    "step_tcr", "trace_tcr", "process_valid_rate"},
//!   "process_pass_k": {"1": 0.43, ...} | null,   // shaped like pass_k, also in "pv" / "mut":
//!                    // outcome passes AND process-valid (`process.rs`); null without a spec
//!   "process": null | {"simulations", "process_valid", "deviated", "by_level", "by_position",
//!                      "coverage": [{"schedule", "covered", "share"}]},   // `process.rs`
//!   "attack": null | {"simulations": 80, "successes": 7, "asr": 0.0875},
//!   "verifier_calls": null | {"decisions": 256, "called": 216, "saved": 40},  // hybrid guards
//!   "fail_mode": {"decisions": 74, "fail_mode": 74, "share": 1.0,        // groups with guard
//!                 "by_reason": {"parse_failure": 74}, "flagged": true,   // decisions (see
//!                 "executed": 40, "executed_fail_mode": 0},              // `fail_mode.rs`)
//!   // Present only with PolicyGuide records (see `guide.rs`):
//!   "guide_usage": {"simulations", "runs", "calls", "prompt_tokens", "completion_tokens",
//!                   "cached_prompt_tokens", "cost", "calls_per_simulation",
//!                   "prefix_cache_hit_rate", "cost_per_simulation"},   // groups with guide events
//!   "guide_fail_mode": {"decisions", "fail_mode", "share", "by_reason", "flagged"},
//!                                                      // guide runs, groups with guide events
//!   "wall_clock": {"simulations": 200, "mean_seconds": 247.6, "ratio_vs_baseline": 5.44},
//!   "matched_policyguide": [{"policyguide", "flowagent_tasks", "policyguide_tasks",
//!                            "shared_tasks", "flowagent_pass_k", "policyguide_pass_k"}]
//!                                                                     // flowagent groups
//! }, ...]
//! ```
//!
//! `compare A B --format json` prints one object:
//!
//! ```text
//! {
//!   "label_a": "A", "label_b": "B",
//!   "pair_by": ["domain", "agent_model"],       // identity fields used besides task + trial
//!   "n_pairs": 600, "b": 12, "c": 51,           // b = A pass & B fail, c = A fail & B pass
//!   "exact_p": 1.2e-7, "mid_p": 8.1e-8, "chi2": 23.5, "chi2_p": 1.2e-6,   // pooled over strata
//!   "infra_dropped": 0, "unpaired_a": 0, "unpaired_b": 0,
//!   "strata_by": "domain",
//!   "strata": [{"stratum": "airline", "n_pairs": 200, "b": 4, "c": 20, "exact_p": ...,
//!               "mid_p": ..., "chi2": ..., "chi2_p": ...}, ...],
//!   "n_tasks": 150,
//!   "pass_k_diff": [{"k": 1, "a": 0.61, "b": 0.7, "diff": 0.09, "ci_low": 0.03,
//!                    "ci_high": 0.15}, ...],
//!   "bootstrap": {"resamples": 10000, "seed": 1952544103, "level": 0.95},
//!   "simulated": false                          // a side's record had a `sim` model role
//! }
//! ```

// The stages are private; what other crates, the tests, the benches and the docs use is the
// `pub use` list below, grouped by stage, so a `pub` item elsewhere is one that list reaches.
mod error;
mod input;
mod measure;
mod render;
mod report;
mod sidecar;
mod stats;
mod summary;

/// Paper reproductions: experiments' numbers beside the published ones. A module of its own
/// (with its own `pub use` front in `repro/mod.rs`) because its vocabulary — `Column`,
/// `Metric`, `Layout`, `Note`, `Published` — is a reproduction table's and would read as the
/// report's at the crate root.
pub mod repro;

/// The process view: a domain's procedure spec, the evaluator of a record's trajectory, the
/// judge of dialogue predicates, the evaluator's validation against fault labels, and the
/// verdicts over records attached to their summaries. A namespace because its words
/// (`evaluate`, `Level`, `Position`, `Violation`, `verdicts`, `attach`) are the process view's
/// and would be ambiguous at the crate root.
pub mod procedure {
    pub use crate::measure::procedure::spec::{LevelShares, Predicate};
    pub use crate::measure::procedure::validation::{FAULT_CHECKS, FaultValidation};
    pub use crate::measure::procedure::{
        Check, DialogueJudge, JudgeKind, Judgement, Level, Position, ProcedureBook, ProcedureSpec,
        ProcessVerdict, Requirement, SpecError, SpecProblem, StandInJudge, Violation, evaluate,
    };
    pub use crate::measure::process::{
        ProcessIndex, ProcessSummary, attach, process_index, verdicts,
    };
}

pub use error::{
    DomainTableCause, MetricsError, PlotCause, RecordCause, ResultsCause, SelectorFinding,
    ShapeFinding, SidecarCause, Unpaired,
};

// Inputs: records, run directories and upstream `results.json` files.
pub use input::domains::DomainTable;
pub use input::{LoadOptions, for_each_imported, load_input, load_inputs, parse_records_jsonl};

// Per-simulation summaries.
pub use summary::load::summarise_jsonl;
pub use summary::outcome::InfraPolicy;
pub use summary::simulated::SIMULATED_LABEL;
pub use summary::{CallSummary, CellInfo, SimSummary, Summariser, summarise};

// The columnar sidecar of a run directory.
pub use sidecar::load::load_summaries;
pub use sidecar::{
    MANIFEST_FILE, SIDECAR_SCHEMA_VERSION, SIMULATIONS_FILE, TableFormat, export_tables,
    fresh_manifest, read_fresh, write_sidecar,
};

// Measures.
pub use measure::attack::attack_succeeded;
pub use measure::confusion::{Confusion, ConfusionViews, LabelOptions, Oracle, policyguard_table7};
pub use measure::fail_mode::{DEFAULT_FAIL_MODE_THRESHOLD, FailModeCounts};
pub use measure::floors::{Floor, floors, floors_with_process};
pub use measure::nmr::CallNmrViews;
pub use measure::pass_k::{TaskTally, pass_hat_k, pass_k_curve};
pub use measure::registry::{sidecar_column_names, trailing_group_columns, trailing_table_ids};
pub use measure::spending::spending;
pub use measure::truncation::RoleReplies;
pub use measure::turns::TurnStats;

// Statistics: `compare`, McNemar, bootstrap intervals, side selectors.
pub use stats::bootstrap::BootstrapOptions;
pub use stats::compare::{CompareOptions, Comparison, Strata, compare, compare_summaries};
pub use stats::mcnemar::{McNemar, mcnemar};
pub use stats::select::{Selectable, Selector};

// Reports: groups and every metric per group.
pub use report::cells::{check_single_config, check_single_config_summaries};
pub use report::{DEFAULT_MAX_K, GroupReport, Report, ReportOptions, report, report_summaries};

// Rendering: the table model, the papers' tables, output files, figures.
pub use render::output::{OutputOptions, Parts, write_outputs, write_outputs_with};
pub use render::plots::cell_colors;
pub use render::sources::Sources;
pub use render::table::{Cell, Format, Table};
pub use render::tables::{
    ablation_table, controller_table, guide_usage_table, pass_k_table, policyguide_table1,
    wall_clock_table,
};
