//! The process evaluator against exact ground truth, on every registered domain with a
//! procedure spec: the offline sim agent injects one fault type at a time and labels each
//! fault with the message of its call; the evaluator must find it there (recall) and its
//! violations of that type's check kinds must sit on injected faults (precision), both
//! ≥ 0.95 per type. A fault-free sim agent must be process-valid in ≥ 99% of simulations, by
//! every requirement of every level: it follows the domain's troubleshooting workflow
//! (diagnose, fix, verify) around the gold fixes, which τ²-bench's gold actions hold alone.
//!
//! A fault counts only at a call some requirement of its type's check kinds constrains: a
//! skipped step the policy does not ask before that call is no violation (banking_knowledge
//! verifies only for customer data, so a skipped identity ask before giving a self-service
//! tool breaks nothing). A fault type a domain's policy asks no step of is named in
//! [`NOT_IN_POLICY`], and the spec is checked to have no requirement of its kinds.

use std::path::Path;
use tauguard_core::record::SimulationRecord;
use tauguard_env::registry::DOMAINS;
use tauguard_metrics::procedure::{FAULT_CHECKS, FaultValidation};
use tauguard_metrics::procedure::{ProcedureSpec, StandInJudge, evaluate};
use tauguard_orchestrator::{RunConfig, RunOptions, run};
use tauguard_testkit::SimConfig;

fn run_offline(domain: &str, data: &Path, faults: &str, trials: u32) -> Vec<SimulationRecord> {
    let text = SimConfig::new("pv", domain, data)
        .trials(trials)
        .seed(11)
        .run_line("split = \"base\"")
        .faults(faults)
        .toml();
    let cfg = RunConfig::parse(Path::new("pv.toml"), &text).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let opts = RunOptions {
        out_dir: Some(tmp.path().to_path_buf()),
        project_dir: Some(tauguard_testkit::workspace_root()),
        ..Default::default()
    };
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(run(cfg, opts))
        .unwrap();
    tauguard_metrics::load_inputs(&[tmp.path()]).unwrap()
}

/// Fault types whose step the domain's policy never asks for, with the reason: injected by the
/// sim agent (which confirms and reads by habit), never a violation of the spec.
const NOT_IN_POLICY: &[(&str, &str, &str)] = &[
    (
        "banking_knowledge",
        "skip_confirmation",
        "the policy asks for no confirmation before an action",
    ),
    (
        "banking_knowledge",
        "skip_prerequisite",
        "the policy names no read before an action",
    ),
];

/// The record with only the injected faults at calls a requirement of the fault type's
/// check kinds constrains (by tool name; `*`, or a check naming no tool, for every tool).
fn covered_faults(r: &SimulationRecord, spec: &ProcedureSpec) -> SimulationRecord {
    let mut r = r.clone();
    r.injected_faults.retain(|f| {
        let (Some((_, kinds)), Some(tool)) =
            (FAULT_CHECKS.iter().find(|(k, _)| *k == f.kind), &f.tool)
        else {
            return true;
        };
        spec.requirements
            .iter()
            .filter(|q| kinds.contains(&q.check.kind()))
            .any(|q| {
                // A check naming no tool (`no_guarded_call`) constrains every call.
                let tools = q.check.tools();
                tools.is_empty() || tools.iter().any(|t| *t == "*" || t == tool)
            })
    });
    r
}

fn spec_of(domain: &str) -> Option<ProcedureSpec> {
    let path = tauguard_testkit::workspace_root()
        .join("tasks")
        .join(domain)
        .join("procedure.toml");
    let text = std::fs::read_to_string(&path).ok()?;
    Some(ProcedureSpec::from_toml(&text, &path.display().to_string()).unwrap())
}

#[test]
fn evaluator_finds_every_injected_fault_and_passes_the_fault_free_agent() {
    let Some(data) = tauguard_testkit::tau2_dir() else {
        return;
    };
    let mut domains = 0;
    for d in DOMAINS {
        let Some(spec) = spec_of(d.name()) else {
            continue;
        };
        domains += 1;
        let kind_of = |id: &str| {
            spec.requirements
                .iter()
                .find(|r| r.id == id)
                .map(|r| r.check.kind())
        };
        // Fault-free: process-valid by every requirement, W included.
        let clean = run_offline(d.name(), &data, "", 2);
        let mut valid = 0;
        let mut broken = Vec::new();
        for r in &clean {
            let v = evaluate(r, &spec, &StandInJudge);
            valid += usize::from(v.process_valid);
            if let Some(x) = v.first_deviation {
                broken.push(format!("{} `{}`: {}", r.task_id, x.requirement, x.detail));
            }
        }
        let share = valid as f64 / clean.len() as f64;
        eprintln!(
            "{}: fault-free process-valid {valid}/{}",
            d.name(),
            clean.len()
        );
        assert!(
            share >= 0.99,
            "{}: fault-free process-valid share {share:.3}; first deviations:\n{}",
            d.name(),
            broken.join("\n")
        );

        for (fault, _) in FAULT_CHECKS {
            let p = if *fault == "comply_forbidden" {
                1.0
            } else {
                0.5
            };
            let recs = run_offline(d.name(), &data, &format!("{fault} = {p}"), 1);
            let mut val = FaultValidation::default();
            let mut uncovered = 0;
            for r in &recs {
                let v = evaluate(r, &spec, &StandInJudge);
                let covered = covered_faults(r, &spec);
                uncovered += r.injected_faults.len() - covered.injected_faults.len();
                val.add(&covered, &v, kind_of);
            }
            eprintln!(
                "{} {fault}: {uncovered} faults at calls no check of the type constrains",
                d.name()
            );
            let s = &val.by_fault[*fault];
            let kinds = FAULT_CHECKS.iter().find(|(k, _)| k == fault).unwrap().1;
            if let Some((_, _, why)) = NOT_IN_POLICY
                .iter()
                .find(|(d2, f, _)| *d2 == d.name() && f == fault)
            {
                eprintln!("{} {fault}: not scored ({why})", d.name());
                let checked: Vec<&str> = spec
                    .requirements
                    .iter()
                    .filter(|q| kinds.contains(&q.check.kind()))
                    .map(|q| q.id.as_str())
                    .collect();
                assert!(
                    checked.is_empty() && s.faults == 0 && s.violations == 0,
                    "{} {fault}: listed as not in the policy, but the spec checks it: {checked:?} ({s:?})",
                    d.name()
                );
                continue;
            }
            eprintln!(
                "{} {fault}: {} faults, recall {:?}, precision {:?}",
                d.name(),
                s.faults,
                s.recall(),
                s.precision()
            );
            // Every fault type is injected, but refusal compliance where the domain annotates
            // no tempting forbidden call (`tasks/<domain>/pv_annotations.json`).
            let tempting = tauguard_testkit::workspace_root()
                .join("tasks")
                .join(d.name())
                .join("pv_annotations.json")
                .is_file();
            assert!(
                s.faults > 0 || (*fault == "comply_forbidden" && !tempting),
                "{} {fault}: no fault injected ({s:?})",
                d.name()
            );
            if let Some(recall) = s.recall() {
                assert!(
                    recall >= 0.95,
                    "{} {fault}: recall {recall:.3} ({s:?})",
                    d.name()
                );
            }
            if let Some(precision) = s.precision() {
                assert!(
                    precision >= 0.95,
                    "{} {fault}: precision {precision:.3} ({s:?})",
                    d.name()
                );
            }
        }
    }
    assert!(
        domains >= 4,
        "procedure specs for the four τ²-bench domains expected"
    );
}
