//! The process view through the binary: `report --format json` carries `process_pass_k`
//! shaped like `pass_k` in every group and slice and process-valid floors; on airline the
//! gold-no-procedure floor keeps outcome Pass^1 1.000 and falls to process-valid Pass^1 ≤ 0.05
//! while refuse-all's PV slice is unchanged; `report --out` writes the tables and the figure;
//! `evaluate --format json` on an upstream `results.json` lists first deviations per
//! simulation; a spec that does not parse is refused naming its file; and a domain gets the
//! process view by adding its spec alone (the toy domain, in a copy of the project).

use crate::support::{
    assert_contains_all, report_json, s, tauguard_ok, tauguard_status as tauguard, toy_requirement,
    toy_spec,
};
use serde_json::Value;
use std::path::Path;
use tauguard_testkit::{SimConfig, tau2_dir};

fn keys(v: &Value) -> Vec<String> {
    v.as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

fn run(cfg: &Path, out: &Path, project: &Path) {
    tauguard_ok(&["--project-dir", s(project), "run", s(cfg), "--out", s(out)]);
}

#[test]
fn airline_report_and_evaluate_show_the_process_view() {
    let Some(data) = tau2_dir() else { return };
    let root = tauguard_testkit::workspace_root();
    let tmp = tempfile::tempdir().unwrap();
    let cfg = SimConfig::new("pv", "airline", &data)
        .trials(2)
        .faults("skip_identity = 0.2\nskip_confirmation = 0.3\ncomply_forbidden = 0.5")
        .write(&tmp.path().join("c.toml"));
    let out = tmp.path().join("run");
    run(&cfg, &out, &root);
    let data_arg = s(&data);
    let groups = report_json(&out, &["--data-dir", data_arg]);
    for g in groups.as_array().unwrap() {
        for block in [g, &g["pv"], &g["mut"]] {
            assert_eq!(
                keys(&block["process_pass_k"]),
                keys(&block["pass_k"]),
                "{block}"
            );
            for (k, v) in block["process_pass_k"].as_object().unwrap() {
                // Process-valid success implies outcome success.
                assert!(v.as_f64().unwrap() <= block["pass_k"][k].as_f64().unwrap() + 1e-9);
            }
        }
        let p = &g["process"];
        assert_eq!(p["simulations"], 100);
        assert!(
            p["deviated"].as_u64().unwrap() > 0,
            "the faults deviate: {p}"
        );
        assert_eq!(p["coverage"].as_array().unwrap().len(), 2);
        for f in g["floors"].as_object().unwrap().values() {
            for key in ["process_overall", "process_pv", "process_mut"] {
                assert!(f[key].is_number(), "{f}");
            }
        }
        let gold = &g["floors"]["gold-no-procedure"];
        assert_eq!(gold["overall"].as_f64(), Some(1.0), "{gold}");
        assert!(gold["process_overall"].as_f64().unwrap() <= 0.05, "{gold}");
        let refuse = &g["floors"]["refuse-all"];
        assert_eq!(refuse["process_pv"], refuse["pv"], "{refuse}");
    }

    let dir = tmp.path().join("report");
    tauguard_ok(&["report", s(&out), "--out", s(&dir), "--data-dir", data_arg]);
    for f in [
        "process_pass_k.csv",
        "first_deviations.csv",
        "process_view.png",
        "process_view.svg",
        "process_view.caption.txt",
    ] {
        assert!(dir.join(f).is_file(), "{f} not written");
    }
    let csv = std::fs::read_to_string(dir.join("first_deviations.csv")).unwrap();
    assert!(csv.starts_with("domain,agent_model,guard,n_simulations,deviated,first_level_a"));
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        md.contains("Process-valid Pass^2 beside outcome Pass^2"),
        "{md}"
    );
    // The spec's level shares beside the papers' partition, counted from the spec itself.
    let spec = std::fs::read_to_string(root.join("tasks/airline/procedure.toml")).unwrap();
    let level = |l: &str| spec.matches(&format!("level = \"{l}\"")).count();
    let (a, p, w) = (level("A"), level("P"), level("W"));
    let levels = std::fs::read_to_string(dir.join("procedure_levels.csv")).unwrap();
    let mut lines = levels.lines();
    assert_eq!(
        lines.next().unwrap(),
        "domain,requirements,level_a,level_p,level_w,process_share,workflow_share,\
         published_requirements,published_a,published_process_share,published_w_share,source"
    );
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let n = a + p + w;
    assert_eq!(
        row[..5],
        [
            "airline",
            &n.to_string(),
            &a.to_string(),
            &p.to_string(),
            &w.to_string()
        ]
    );
    let share: f64 = row[5].parse().unwrap();
    assert!((share - (p + w) as f64 / n as f64).abs() < 1e-3, "{levels}");
    assert_eq!(row[7..11], ["43", "14", "67.4%", "4.7%"], "{levels}");
    assert!(row[11].contains("PolicyGuard Table 11"), "{levels}");
    assert!(
        md.contains("Requirement levels of the procedure specs beside the papers'"),
        "{md}"
    );

    let results = tmp.path().join("results.json");
    tauguard_ok(&[
        "export-tau2",
        s(&out),
        "--out",
        s(&results),
        "--data-dir",
        data_arg,
    ]);
    let json = tauguard_ok(&[
        "evaluate",
        s(&results),
        "--format",
        "json",
        "--data-dir",
        data_arg,
    ]);
    let v: Value = serde_json::from_str(&json).unwrap();
    let sims = v["simulations"].as_array().unwrap();
    assert_eq!(sims.len(), 100);
    let deviated: Vec<&Value> = sims
        .iter()
        .filter(|s| s["process_valid"] == false)
        .collect();
    assert_eq!(
        deviated.len() as u64,
        groups[0]["process"]["deviated"].as_u64().unwrap()
    );
    for s in &deviated {
        for key in ["cell_id", "task_id", "trial", "violations"] {
            assert!(!s[key].is_null(), "{s}");
        }
        let d = &s["first_deviation"];
        assert!(
            d["message_index"].is_u64() && d["requirement"].is_string(),
            "{s}"
        );
        assert!(
            ["A", "P", "W"].contains(&d["level"].as_str().unwrap()),
            "{s}"
        );
        assert_eq!(d["position"], s["violations"][0]["position"], "{s}");
    }
}

/// A copy of the project whose `tasks/` links every folder of the real one, plus `extra`.
fn project_copy(tmp: &Path, extra: &[(&str, &str)]) -> std::path::PathBuf {
    let root = tauguard_testkit::workspace_root();
    let project = tmp.join("project");
    std::fs::create_dir_all(project.join("tasks")).unwrap();
    std::os::unix::fs::symlink(root.join("configs"), project.join("configs")).unwrap();
    for e in std::fs::read_dir(root.join("tasks")).unwrap() {
        let p = e.unwrap().path();
        std::os::unix::fs::symlink(&p, project.join("tasks").join(p.file_name().unwrap())).unwrap();
    }
    for (rel, text) in extra {
        let path = project.join("tasks").join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    project
}

/// The toy domain's spec: identity first, an explicit yes before every mutation.
fn toy_procedure() -> String {
    let requirements = [
        toy_requirement(
            "member_looked_up",
            "P",
            "obtain their library card id and look the member up",
            "{ kind = \"identity_before\", tools = [\"*\"] }",
        ),
        toy_requirement(
            "explicit_yes",
            "P",
            "obtain an explicit",
            "{ kind = \"confirm_before\", tools = [\"*\"] }",
        ),
    ];
    toy_spec("reads = [\"get_book_details\"]\n", &requirements)
}

#[test]
fn a_domain_gets_the_process_view_from_its_spec_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let fixtures = tauguard_testkit::fixtures_dir();
    let cfg = SimConfig::new("toy", "toy", &fixtures)
        .faults("skip_confirmation = 1.0")
        .write(&tmp.path().join("toy.toml"));
    let out = tmp.path().join("run");
    let root = tauguard_testkit::workspace_root();
    run(&cfg, &out, &root);
    let report = |project: &Path| {
        let json = tauguard_ok(&[
            "--project-dir",
            s(project),
            "report",
            s(&out),
            "--format",
            "json",
            "--no-floors",
        ]);
        serde_json::from_str::<Value>(&json).unwrap()
    };
    // Without a spec the toy domain has no process view.
    assert!(report(&root)[0]["process"].is_null());
    let project = project_copy(
        tmp.path(),
        &[("toy/procedure.toml", toy_procedure().as_str())],
    );
    let g = report(&project)[0].clone();
    let p = &g["process"];
    assert!(p["simulations"].as_u64().unwrap() > 0, "{g}");
    // Every mutation skips its confirmation: every simulation with one deviates there.
    assert!(
        p["by_position"]["inside_guarded_call"].as_u64().unwrap() > 0,
        "{p}"
    );
    assert!(g["process_pass_k"]["1"].as_f64().unwrap() < g["pass_k"]["1"].as_f64().unwrap());

    let bad = project_copy(
        &tmp.path().join("bad"),
        &[("toy/procedure.toml", "schema = \"tauguard.procedure/1\"\n")],
    );
    let (code, _, err) = tauguard(&["--project-dir", s(&bad), "report", s(&out), "--no-floors"]);
    assert_eq!(code, 2, "{err}");
    assert_contains_all(&err, &["toy/procedure.toml", "domain"]);
}
