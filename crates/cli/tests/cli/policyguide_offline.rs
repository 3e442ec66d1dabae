//! The PolicyGuide family offline, through the binary, on all three domains: the guide, its
//! RAW and SELF ablations and FlowAgent beside the baseline and PolicyGuard run from a config
//! each, and one report over the three runs holds the PolicyGuide tables.

use crate::support::{records, s, tauguard_ok, tauguard_status as tauguard};
use serde_json::Value;
use tauguard_testkit::{SimConfig, tau2_dir};

const GUARDS: [&str; 6] = [
    "baseline",
    "pg-checklist",
    "policyguide",
    "policyguide-raw",
    "policyguide-self",
    "flowagent",
];

#[test]
fn the_guide_family_runs_offline_on_three_domains_and_reports_its_tables() {
    let Some(data) = tau2_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut outs = Vec::new();
    // Whether the graph guide named a missing step before the agent acted, in some domain
    // (a domain whose users' words name no classifier branch opens requests only at calls).
    let mut guided = false;
    for domain in ["airline", "retail", "telecom"] {
        let cfg = SimConfig::new(&format!("pg-{domain}"), domain, &data)
            .trials(4)
            .run_line("num_tasks = 10")
            .faults("skip_identity = 0.2\nskip_prerequisite = 0.2\nskip_confirmation = 0.3\ncomply_forbidden = 0.3")
            .guards(&GUARDS)
            .write(&tmp.path().join(format!("{domain}.toml")));
        let out = tmp.path().join(domain);
        let (code, _, err) = tauguard(&["run", s(&cfg), "--out", s(&out)]);
        assert_eq!(code, 0, "{domain}: {err}");
        let recs = records(&out);
        assert_eq!(recs.len(), 10 * 4 * GUARDS.len(), "{domain}");
        let of =
            |guard: &str| -> Vec<&Value> { recs.iter().filter(|r| r["guard"] == guard).collect() };
        // The guide ran before every agent reply to a user turn and recorded its state.
        let guide = of("policyguide");
        assert!(
            guide
                .iter()
                .all(|r| r["guide_events"].as_array().is_some_and(|e| !e.is_empty()))
        );
        let event = &guide[0]["guide_events"][0];
        assert_eq!(event["trigger"], "user_turn");
        assert!(event["enabled_tools"].is_array() && event["requests"].is_array());
        // SELF gives the graph to the agent only: no verdicts, no guide runs; the sim agent
        // does not read its prompt, so its outcomes are the baseline's, under its own cell.
        let selfg = of("policyguide-self");
        let base = of("baseline");
        assert_eq!(selfg.len(), base.len());
        for s in &selfg {
            let b = base
                .iter()
                .find(|b| b["task_id"] == s["task_id"] && b["trial"] == s["trial"])
                .expect("the same simulation under the baseline");
            assert!(s["guard_events"].as_array().unwrap().is_empty());
            assert!(s.get("guide_events").is_none());
            assert_eq!(s["reward"]["reward"], b["reward"]["reward"]);
            assert_ne!(s["cell_hash"], b["cell_hash"]);
        }
        // FlowAgent's controller speaks before every reply and judges by dependencies only.
        for r in of("flowagent") {
            for e in r["guard_events"].as_array().unwrap() {
                assert_eq!(e["requirements"][0]["name"], "dependencies");
            }
        }
        // The raw-policy guide has no procedure to walk: it never names a missing step before
        // the agent acts, where the graph guide does.
        let says = |rs: &[&Value]| {
            rs.iter().any(|r| {
                r["guide_events"].as_array().into_iter().flatten().any(|e| {
                    e["trigger"] == "user_turn"
                        && e["guidance"].as_str().is_some_and(|g| g.contains("before"))
                })
            })
        };
        guided |= says(&guide);
        assert!(!says(&of("policyguide-raw")), "{domain}");
        outs.push(out);
    }
    assert!(
        guided,
        "the graph guide never guided before the agent acted"
    );
    let args: Vec<&str> = std::iter::once("report")
        .chain(outs.iter().map(|p| s(p)))
        .chain(["--no-floors"])
        .collect();
    let md = tauguard_ok(&args);
    for table in [
        "PolicyGuide Table 1",
        "unweighted mean over 3 domains",
        "PolicyGuide Table 2",
        "PolicyGuide Table 3",
        "PolicyGuide Table 5",
        "PolicyGuide Table 14",
        "PolicyGuide Table 15",
    ] {
        assert!(md.contains(table), "missing {table}:\n{md}");
    }
}
