//! The viewer's process view, on the offline airline site of `view.rs` (faults on, baseline
//! and pg-checklist): every simulation's row says whether it is process-valid, its process
//! file holds the verdict `tauguard evaluate --format json` gives for the same simulation
//! (first deviation and violations), each cell's report group carries process-valid Pass^k
//! beside Pass^k and the first-deviation counts with intervention coverage, and the pages
//! render them (`overview.js`, `sim.js`).

use crate::support::{s, tauguard_ok};
use crate::view::{decode_data_file, fixture, index};
use serde_json::Value;
use std::collections::HashMap;

#[test]
fn each_simulation_shows_its_first_deviation_and_violations_as_evaluate_gives_them() {
    let Some(f) = fixture() else { return };
    let tau2 = tauguard_testkit::tau2_dir().unwrap();
    let out = tauguard_ok(&[
        "evaluate",
        f.run.to_str().unwrap(),
        "--format",
        "json",
        "--data-dir",
        s(&tau2),
    ]);
    let evaluated: Value = serde_json::from_str(&out).unwrap();
    let by_sim: HashMap<(String, String, u64), &Value> = evaluated["simulations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let key = (
                s["cell_id"].as_str().unwrap().to_string(),
                s["task_id"].as_str().unwrap().to_string(),
                s["trial"].as_u64().unwrap(),
            );
            (key, s)
        })
        .collect();
    let index = index(&f.site);
    let rows = index["sims"].as_array().unwrap();
    let (mut valid, mut deviated) = (0, 0);
    for (i, (row, rec)) in rows.iter().zip(&f.records).enumerate() {
        let key = (
            rec["cell_id"].as_str().unwrap().to_string(),
            rec["task_id"].as_str().unwrap().to_string(),
            rec["trial"].as_u64().unwrap(),
        );
        let want = by_sim[&key];
        let shown = decode_data_file(&f.site.join(tauguard_view::process_file(i)));
        assert_eq!(row[9], want["process_valid"], "sim {i}: the index row");
        assert_eq!(shown["process_valid"], want["process_valid"], "sim {i}");
        assert_eq!(shown["violations"], want["violations"], "sim {i}");
        let (d, w) = (&shown["first_deviation"], &want["first_deviation"]);
        for field in ["message_index", "requirement", "level", "position"] {
            assert_eq!(d[field], w[field], "sim {i}: first deviation {field}");
        }
        let n = rec["messages"].as_array().unwrap().len() as u64;
        for v in shown["violations"].as_array().unwrap() {
            assert!(v["message_index"].as_u64().unwrap() < n, "sim {i}: {v}");
        }
        if shown["process_valid"] == true {
            valid += 1;
        } else {
            deviated += 1;
        }
    }
    assert!(
        valid > 0 && deviated > 0,
        "faults make some simulations deviate, not all: {valid} valid, {deviated} not"
    );
}

#[test]
fn each_cell_carries_process_valid_pass_k_and_its_first_deviations() {
    let Some(f) = fixture() else { return };
    let index = index(&f.site);
    let rows = index["sims"].as_array().unwrap();
    for (ci, cell) in index["cells"].as_array().unwrap().iter().enumerate() {
        let r = &cell["report"];
        for block in [r, &r["pv"], &r["mut"]] {
            let (pass, process) = (&block["pass_k"], &block["process_pass_k"]);
            if pass.as_object().is_none_or(|o| o.is_empty()) {
                assert!(
                    process.is_null(),
                    "cell {ci}: a slice without tasks: {block}"
                );
                continue;
            }
            assert_eq!(
                pass.as_object().unwrap().len(),
                process.as_object().unwrap().len(),
                "cell {ci}: process-valid Pass^k beside every Pass^k"
            );
            for (k, p) in process.as_object().unwrap() {
                assert!(
                    p.as_f64().unwrap() <= pass[k].as_f64().unwrap() + 1e-12,
                    "cell {ci}: process-valid Pass^{k} above outcome Pass^{k}"
                );
            }
        }
        let p = &r["process"];
        let mine: Vec<&Value> = rows.iter().filter(|s| s[0] == ci).collect();
        let invalid = mine.iter().filter(|s| s[9] == false).count() as u64;
        assert_eq!(p["deviated"].as_u64().unwrap(), invalid, "cell {ci}");
        let levels: u64 = ["A", "P", "W"]
            .iter()
            .map(|l| p["by_level"][l].as_u64().unwrap())
            .sum();
        assert_eq!(
            levels, invalid,
            "cell {ci}: every first deviation has a level"
        );
        let positions: u64 = p["by_position"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(positions, invalid, "cell {ci}: and a position");
        let schedules: Vec<&str> = p["coverage"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["schedule"].as_str().unwrap())
            .collect();
        assert_eq!(
            schedules,
            ["mutating_calls", "user_turns_and_interceptions"]
        );
    }
}

#[test]
fn the_pages_render_the_process_view() {
    let Some(f) = fixture() else { return };
    let overview = std::fs::read_to_string(f.site.join("assets/overview.js")).unwrap();
    let sim = std::fs::read_to_string(f.site.join("assets/sim.js")).unwrap();
    let app = std::fs::read_to_string(f.site.join("assets/app.js")).unwrap();
    for (file, text, needles) in [
        (
            "overview.js",
            &overview,
            &[
                "renderProcess(main, idx)",
                "Process-valid Pass^",
                "Coverage: ",
            ][..],
        ),
        (
            "sim.js",
            &sim,
            &["processSection(TG.processOf(i))", "First deviation: "][..],
        ),
        (
            "app.js",
            &app,
            &["window.__tg_process", "data/process/"][..],
        ),
    ] {
        for n in needles {
            assert!(text.contains(n), "{file} lacks {n:?}");
        }
    }
}
