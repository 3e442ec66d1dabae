//! End-to-end runs of the offline pipeline on the project's fixture domain (and on τ²-bench
//! airline when its data is present): completion, determinism, resume, fault labels, replay.

use crate::support::{fixture_dir, opts, parse, run_with};
use std::collections::HashSet;
use std::path::Path;
use tauguard_core::record::SimulationRecord;
use tauguard_env::{DataDir, DomainData};
use tauguard_orchestrator::RunConfig;
use tauguard_orchestrator::read_records;
use tauguard_orchestrator::{GoldCache, NlCheck, Trajectory, evaluate, evaluate_final};
use tauguard_testkit::SimConfig;

fn config(domain_dir: &Path, trials: u32, faults: &str) -> RunConfig {
    let builder = SimConfig::new("t", "airline", domain_dir)
        .trials(trials)
        .seed(300)
        .run_line("concurrency = 4")
        .faults(faults);
    parse("test.toml", &builder)
}

/// Records with every timing field blanked, for run-to-run comparison.
pub(crate) fn without_timings(mut recs: Vec<SimulationRecord>) -> Vec<serde_json::Value> {
    recs.sort_by(|a, b| (&a.task_id, a.trial).cmp(&(&b.task_id, b.trial)));
    recs.into_iter()
        .map(|r| {
            let mut v = serde_json::to_value(r).unwrap();
            v["wall_seconds"] = 0.into();
            v["started_at"] = "".into();
            for m in v["messages"].as_array_mut().unwrap() {
                m["timestamp"] = serde_json::Value::Null;
                if m.get("generation_time_seconds").is_some() {
                    m["generation_time_seconds"] = serde_json::Value::Null;
                }
            }
            v
        })
        .collect()
}

#[test]
fn compliant_sim_agent_passes_every_fixture_task() {
    let tmp = tempfile::tempdir().unwrap();
    let s = run_with(config(&fixture_dir(), 2, ""), opts(tmp.path())).unwrap();
    assert_eq!((s.planned, s.completed, s.infra_errors), (10, 10, 0));
    let recs = read_records(&tmp.path().join("records.jsonl")).unwrap();
    assert_eq!(recs.len(), 10);
    for r in &recs {
        assert_eq!(
            r.termination_reason.as_str(),
            "user_stop",
            "task {}",
            r.task_id
        );
        assert!(
            r.succeeded(),
            "task {} trial {}: {:?}",
            r.task_id,
            r.trial,
            r.reward
        );
        assert!(r.injected_faults.is_empty());
    }
    let slices: HashSet<(String, String)> = recs
        .iter()
        .map(|r| (r.task_id.clone(), r.slice.as_str().to_string()))
        .collect();
    assert!(
        slices.contains(&("f3".into(), "pv".into()))
            && slices.contains(&("f1".into(), "mut".into()))
    );
}

#[test]
fn same_seed_gives_identical_records_and_records_replay_to_their_rewards() {
    let faults = "skip_confirmation = 0.5\ncorrupt_argument = 0.5\nskip_identity = 0.3";
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    run_with(config(&fixture_dir(), 3, faults), opts(a.path())).unwrap();
    run_with(config(&fixture_dir(), 3, faults), opts(b.path())).unwrap();
    let ra = read_records(&a.path().join("records.jsonl")).unwrap();
    let rb = read_records(&b.path().join("records.jsonl")).unwrap();
    assert_eq!(without_timings(ra.clone()), without_timings(rb));
    let data =
        DomainData::load(&DataDir::resolve(Some(&fixture_dir())).unwrap(), "airline").unwrap();
    for r in &ra {
        let task = data.tasks.iter().find(|t| t.id == r.task_id).unwrap();
        let again = evaluate(&data, task, &r.messages, r.termination_reason, None).unwrap();
        assert_eq!(
            Some(again.reward),
            r.reward.as_ref().map(|x| x.reward),
            "task {}",
            r.task_id
        );
    }
}

#[test]
fn faults_lower_rewards_and_are_labelled() {
    let faults = "corrupt_argument = 1.0";
    let tmp = tempfile::tempdir().unwrap();
    run_with(config(&fixture_dir(), 2, faults), opts(tmp.path())).unwrap();
    let recs = read_records(&tmp.path().join("records.jsonl")).unwrap();
    let mut_recs: Vec<_> = recs.iter().filter(|r| r.slice.as_str() == "mut").collect();
    assert!(!mut_recs.is_empty());
    for r in &mut_recs {
        let f = r
            .injected_faults
            .iter()
            .find(|f| f.kind == "corrupt_argument")
            .expect("labelled");
        let attempt = r
            .call_attempts
            .iter()
            .find(|a| Some(&a.call_id) == f.call_id.as_ref())
            .expect("attached to a call");
        assert!(attempt.faults.contains(&"corrupt_argument".to_string()));
    }
    assert!(
        mut_recs.iter().any(|r| !r.succeeded()),
        "a corrupted argument must cost some reward"
    );
}

#[test]
fn killed_run_resumes_without_loss_or_duplicates() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(&fixture_dir(), 2, "skip_confirmation = 0.3");
    let mut o = opts(tmp.path());
    o.stop_after = Some(4);
    let s = run_with(cfg.clone(), o).unwrap();
    assert_eq!(s.completed, 4);
    // A kill mid-write leaves a torn line.
    let path = tmp.path().join("records.jsonl");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(b"{\"run_id\": \"t\", \"cell_");
    std::fs::write(&path, bytes).unwrap();
    // Without --resume the existing records are protected.
    assert!(run_with(cfg.clone(), opts(tmp.path())).is_err());
    let mut o = opts(tmp.path());
    o.resume = true;
    let s = run_with(cfg, o).unwrap();
    assert_eq!((s.skipped, s.completed), (4, 6));
    let recs = read_records(&path).unwrap();
    let keys: HashSet<(String, u32)> = recs.iter().map(|r| (r.task_id.clone(), r.trial)).collect();
    assert_eq!((recs.len(), keys.len()), (10, 10));
}

#[test]
fn bad_config_names_the_key() {
    let err = RunConfig::parse(Path::new("x.toml"), "[run]\nname='a'\ndomain='airline'\ntrails=3\n[models.agent]\nprovider='sim'\nmodel='sim-agent'\n[models.user]\nprovider='sim'\nmodel='sim-user'\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("x.toml") && err.contains("trails"), "{err}");
    let err = RunConfig::parse(Path::new("x.toml"), "[run]\nname='a'\ndomain='airline'\n[models.agent]\nprovider='sim'\nmodel='sim-agent'\n[models.agent.faults]\nskip_identity=2.0\n[models.user]\nprovider='sim'\nmodel='sim-user'\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("models.agent.faults") && err.contains("skip_identity"),
        "{err}"
    );
}

use tauguard_testkit::tau2_dir;

fn zero_fault_run(domain: &str) -> Vec<SimulationRecord> {
    tau2_run(domain, "")
}

fn tau2_run(domain: &str, faults: &str) -> Vec<SimulationRecord> {
    let Some(dir) = tau2_dir() else {
        return Vec::new();
    };
    let mut cfg = config(&dir, 1, faults);
    cfg.run.domain = domain.into();
    let tmp = tempfile::tempdir().unwrap();
    let s = run_with(cfg, opts(tmp.path())).unwrap();
    assert_eq!(s.infra_errors, 0);
    read_records(&tmp.path().join("records.jsonl")).unwrap()
}

/// With no faults the sim agent follows the gold procedure: every airline and telecom base
/// task passes. (Retail passes its DB check everywhere; its NL assertions need a real judge,
/// see `retail_zero_fault_db_checks_pass`.)
#[test]
fn zero_fault_sim_agent_passes_every_airline_and_telecom_task() {
    for domain in ["airline", "telecom"] {
        let recs = zero_fault_run(domain);
        let failed: Vec<&str> = recs
            .iter()
            .filter(|r| !r.succeeded())
            .map(|r| r.task_id.as_str())
            .collect();
        assert!(
            failed.is_empty(),
            "{domain}: tasks failed without faults: {failed:?}"
        );
        if !recs.is_empty() {
            assert_eq!(recs.len(), if domain == "airline" { 50 } else { 114 });
        }
        // Telecom records carry the ordered gold trace the compliance metrics read.
        assert!(
            recs.iter()
                .all(|r| r.gold_trace.is_some() == (domain == "telecom"))
        );
    }
}

#[test]
fn retail_zero_fault_db_checks_pass() {
    let recs = zero_fault_run("retail");
    for r in &recs {
        let db = &r.reward.as_ref().unwrap().breakdown["DB"];
        assert_eq!(
            db, 1.0,
            "retail task {}: DB check failed without faults",
            r.task_id
        );
    }
}

/// Runs evaluate from the environment each simulation ended with; re-evaluating the stored
/// trajectory by upstream's replay must give the same reward, breakdown and details, in every
/// domain and with faults producing failed calls, partial bookings and blocked states.
#[test]
fn evaluation_from_the_final_environment_equals_trajectory_replay() {
    let faults = "skip_identity = 0.3\nskip_prerequisite = 0.3\nskip_confirmation = 0.3\n\
                  comply_forbidden = 0.6\ncorrupt_argument = 0.4";
    for domain in ["airline", "retail", "telecom"] {
        let recs = tau2_run(domain, faults);
        let Some(dir) = tau2_dir() else { return };
        let data = DomainData::load(&DataDir::resolve(Some(&dir)).unwrap(), domain).unwrap();
        let gold = GoldCache::default();
        let mut failing = 0;
        for r in &recs {
            let stored = r.reward.as_ref().expect("no infrastructure errors offline");
            failing += usize::from(stored.reward < 1.0);
            let task = data.tasks.iter().find(|t| t.id == r.task_id).unwrap();
            let nl = stored.details.get("nl_assertions").map(|checks| {
                checks
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| NlCheck {
                        nl_assertion: c["nl_assertion"].as_str().unwrap().to_string(),
                        met: c["met"].as_bool().unwrap(),
                        justification: c["justification"].as_str().unwrap().to_string(),
                    })
                    .collect()
            });
            let sim = Trajectory {
                data: &data,
                task,
                messages: &r.messages,
                termination_reason: r.termination_reason,
                gold: &gold,
            };
            let replayed = evaluate_final(sim, nl, None).unwrap();
            assert_eq!(&replayed, stored, "{domain} task {}", r.task_id);
        }
        assert!(
            recs.is_empty() || failing > 0,
            "{domain}: the faults must make some simulations fail"
        );
    }
}

fn with_guards(mut cfg: RunConfig, guards: &[&str]) -> RunConfig {
    cfg.grid.guards = guards.iter().map(|g| (*g).into()).collect();
    cfg
}

#[test]
fn plan_holds_typed_cells_in_upstream_order() {
    use tauguard_guards::GuardName;
    use tauguard_orchestrator::{RunPlan, SimIndex};
    let cfg = with_guards(
        config(&fixture_dir(), 3, ""),
        &["baseline", "toolguard", "pg-checklist-strict", "hybrid"],
    );
    let tmp = tempfile::tempdir().unwrap();
    let plan = RunPlan::build(cfg, &opts(tmp.path())).unwrap();
    let names: Vec<&str> = plan.cells.iter().map(|c| c.guard_name.as_str()).collect();
    assert_eq!(
        names,
        ["baseline", "toolguard", "pg-checklist-strict", "hybrid"]
    );
    assert!(plan.cells[0].guard.is_none());
    assert!(plan.cells[1..].iter().all(|c| c.guard.is_some()));
    assert_eq!(plan.cells[2].id, "airline|sim-agent|pg-checklist-strict");
    assert!(matches!(
        plan.cells[2].guard_name,
        GuardName::PolicyGuard { strict: true, .. }
    ));
    assert_eq!(plan.planned(), 4 * 5 * 3);
    let sims: Vec<SimIndex> = plan.simulations().collect();
    assert_eq!(sims.len(), plan.planned());
    // Trial-major within a cell: all tasks of trial 0 before any task of trial 1.
    assert_eq!(
        &sims[4..7],
        &[
            SimIndex {
                cell: 0,
                task: 4,
                trial: 0
            },
            SimIndex {
                cell: 0,
                task: 0,
                trial: 1
            },
            SimIndex {
                cell: 0,
                task: 1,
                trial: 1
            },
        ]
    );
    assert_eq!(
        sims[15],
        SimIndex {
            cell: 1,
            task: 0,
            trial: 0
        }
    );
    // Nothing was written: building a plan does no work.
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

#[test]
fn unknown_or_ill_combined_guards_fail_before_any_work() {
    let text = |guards: &str, guard_section: &str| {
        format!(
            "[run]\nname='a'\ndomain='airline'\n[models.agent]\nprovider='sim'\nmodel='sim-agent'\n\
             [models.user]\nprovider='sim'\nmodel='sim-user'\n[grid]\nguards={guards}\n{guard_section}"
        )
    };
    let err = RunConfig::parse(Path::new("g.toml"), &text("['baseline', 'pg-rwa']", ""))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("g.toml")
            && err.contains("grid.guards[1]")
            && err.contains("`pg-rwa`")
            && err.contains("known: baseline, toolguard"),
        "{err}"
    );
    let err = RunConfig::parse(
        Path::new("g.toml"),
        &text("['pg-raw']", "[guard]\nfail_mode='ajar'"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("guard.fail_mode") && err.contains("ajar"),
        "{err}"
    );
    // Strict mode on a variant without a checklist is refused when the plan is built, naming
    // the grid entry, and leaves the output directory untouched.
    let mut cfg = with_guards(config(&fixture_dir(), 1, ""), &["baseline", "pg-raw"]);
    cfg.guard.strict = true;
    let tmp = tempfile::tempdir().unwrap();
    let err = run_with(cfg, opts(&tmp.path().join("out")))
        .expect_err("strict pg-raw is refused")
        .to_string();
    assert!(
        err.contains("grid.guards[1]") && err.contains("pg-raw"),
        "{err}"
    );
    assert!(!tmp.path().join("out").exists());
}

/// Guards are built by the library: a guarded grid runs end to end without the binary, on
/// the fixture domain and on every τ²-bench domain present.
#[test]
fn guarded_grid_runs_through_the_library_in_every_domain() {
    let faults = "skip_confirmation = 0.5\ncomply_forbidden = 1.0";
    let mut runs = vec![("fixture", config(&fixture_dir(), 2, faults))];
    if let Some(dir) = tau2_dir() {
        for domain in ["airline", "retail", "telecom"] {
            let mut cfg = config(&dir, 1, faults);
            cfg.run.domain = domain.into();
            cfg.run.num_tasks = Some(12);
            runs.push((domain, cfg));
        }
    }
    for (label, cfg) in runs {
        let cfg = with_guards(cfg, &["baseline", "toolguard", "pg-checklist"]);
        let tmp = tempfile::tempdir().unwrap();
        let s = run_with(cfg, opts(tmp.path())).unwrap();
        assert_eq!(s.infra_errors, 0, "{label}");
        let recs = read_records(&tmp.path().join("records.jsonl")).unwrap();
        assert_eq!(recs.len(), s.planned, "{label}");
        for r in &recs {
            assert!(r.cell_id.ends_with(&format!("|{}", r.guard)), "{label}");
            match r.guard.as_str() {
                "baseline" => assert!(r.guard_events.is_empty() && !r.usage.contains_key("guard")),
                _ => assert!(r.usage.contains_key("guard"), "{label}: {}", r.guard),
            }
        }
        for guard in ["toolguard", "pg-checklist"] {
            let events = recs
                .iter()
                .filter(|r| r.guard == guard)
                .flat_map(|r| &r.guard_events)
                .count();
            assert!(events > 0, "{label}: {guard} judged no call");
        }
    }
}

#[test]
fn resume_refuses_another_configuration_and_names_the_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let base = config(&fixture_dir(), 1, "");
    run_with(base.clone(), opts(&out)).unwrap();
    let resume = |cfg: RunConfig| {
        let mut o = opts(&out);
        o.resume = true;
        run_with(cfg, o)
    };
    let mut seed = base.clone();
    seed.run.seed = 301;
    let err = resume(seed).expect_err("another seed").to_string();
    assert!(
        err.contains("run.seed") && err.contains("another configuration"),
        "{err}"
    );
    let mut domain = base.clone();
    domain.run.domain = "retail".into();
    domain.run.data_dir = tau2_dir().or(Some(fixture_dir()));
    let err = resume(domain).expect_err("another domain").to_string();
    assert!(err.contains("run.domain"), "{err}");
    // The refused resumes wrote nothing.
    assert_eq!(
        read_records(&out.join("records.jsonl")).unwrap().len(),
        5,
        "records untouched"
    );
    // Concurrency cannot change a result: a resume with another value is accepted.
    let mut wider = base.clone();
    wider.run.concurrency = 1;
    let s = resume(wider).unwrap();
    assert_eq!((s.skipped, s.completed), (5, 0));
}

#[test]
fn a_second_run_on_a_locked_directory_is_refused() {
    use tauguard_orchestrator::RunDir;
    let tmp = tempfile::tempdir().unwrap();
    let cfg = config(&fixture_dir(), 1, "");
    let held = RunDir::open(tmp.path(), &cfg, &Default::default(), false, true, None).unwrap();
    let err = run_with(cfg.clone(), opts(tmp.path()))
        .expect_err("locked")
        .to_string();
    assert!(err.contains("in use by another tauguard run"), "{err}");
    drop(held);
    run_with(cfg, opts(tmp.path())).unwrap();
}

#[test]
fn records_carry_their_cell_identity() {
    let faults = "skip_confirmation = 0.2";
    let mk = |verifier: Option<&str>, strict: bool| {
        let mut cfg = with_guards(
            config(&fixture_dir(), 1, faults),
            &["baseline", "pg-checklist"],
        );
        cfg.guard.strict = strict;
        if let Some(v) = verifier {
            cfg.guard.verifier =
                Some(toml::from_str(&format!("provider = 'sim'\nmodel = '{v}'")).unwrap());
        }
        let tmp = tempfile::tempdir().unwrap();
        run_with(cfg, opts(tmp.path())).unwrap();
        read_records(&tmp.path().join("records.jsonl")).unwrap()
    };
    let hash = |recs: &[SimulationRecord], guard: &str| {
        let hs: HashSet<String> = recs
            .iter()
            .filter(|r| r.guard == guard)
            .map(|r| r.cell_hash.clone())
            .collect();
        assert_eq!(hs.len(), 1, "one hash per cell");
        hs.into_iter().next().unwrap()
    };
    let paired = mk(None, false);
    let explicit = mk(Some("sim-verifier"), false);
    let strict = mk(None, true);
    let pg = paired.iter().find(|r| r.guard == "pg-checklist").unwrap();
    assert_eq!(pg.cell["verifier.mode"], "paired");
    assert_eq!(pg.cell["agent.faults.skip_confirmation"], 0.2);
    assert_eq!(pg.cell["guard.strict"], false);
    assert!(pg.cell.contains_key("prompts") && pg.cell.contains_key("artifacts"));
    let base = paired.iter().find(|r| r.guard == "baseline").unwrap();
    assert!(!base.cell.contains_key("verifier.mode") && !base.cell.contains_key("guard.strict"));
    // Verifier mode and strictness change the guarded cell, not the baseline.
    assert_ne!(
        hash(&paired, "pg-checklist"),
        hash(&explicit, "pg-checklist")
    );
    assert_ne!(hash(&paired, "pg-checklist"), hash(&strict, "pg-checklist"));
    assert_eq!(hash(&paired, "baseline"), hash(&explicit, "baseline"));
    assert_eq!(hash(&paired, "baseline"), hash(&strict, "baseline"));
    assert_ne!(hash(&paired, "baseline"), hash(&paired, "pg-checklist"));
}

/// An attack task set replaces the domain's tasks; attack tasks carry their target, the sim
/// agent's tempting call is the target call, and a model user is prompted as an attacker.
#[test]
fn attack_task_sets_load_with_targets_and_the_attacker_prompt() {
    use tauguard_orchestrator::RunPlan;
    let Some(dir) = tau2_dir() else { return };
    let mut cfg = config(&dir, 1, "");
    cfg.run.task_set = Some("tasks/airline/attacks".into());
    cfg.run.split = "*".into();
    let tmp = tempfile::tempdir().unwrap();
    let plan = RunPlan::build(cfg, &opts(tmp.path())).unwrap();
    let d = &plan.domains[0];
    assert_eq!(d.tasks.len(), 20);
    assert_eq!(d.attacks.len(), 20);
    for (i, t) in d.tasks.iter().enumerate() {
        let a = &d.attacks[&t.id];
        assert_eq!(d.tempting[&t.id].tool, a.spec.tool);
        assert!(a.spec.matches(&a.call.tool, &a.call.arguments));
        let prompt = &d.user_system_prompts[i];
        assert!(prompt.contains("persuasion strategy"), "{prompt}");
        assert!(
            !prompt.contains("user_guidelines"),
            "attacker, not the plain guidelines"
        );
    }
}
