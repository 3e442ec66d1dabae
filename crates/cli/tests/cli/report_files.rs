//! `report --out` halves (`--tables-only`, `--figures-only`) with figure captions naming the
//! run, and `compare` as one complete CSV and as files with the forest plot.

use crate::support::{assert_contains_all, s, written};
use std::path::PathBuf;
use std::process::Command;

fn tauguard(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tauguard"))
        .current_dir(tauguard_testkit::workspace_root())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "tauguard {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn names(dir: &PathBuf) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn report_halves_captions_and_compare_outputs() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = written(
        tmp.path(),
        "c.toml",
        format!(
            "[run]\nname = \"figs\"\ndomain = \"airline\"\ntrials = 2\ndata_dir = \"{}\"\n\
             [grid]\nguards = [\"baseline\", \"toolguard\"]\n\
             [models.agent]\nprovider = \"sim\"\nmodel = \"sim-agent\"\n\
             [models.agent.faults]\ncomply_forbidden = 0.4\n\
             [models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n",
            tauguard_testkit::fixtures_dir().display()
        ),
    );
    let run = tmp.path().join("run");
    let run_s = s(&run);
    tauguard(&["run", s(&cfg), "--out", run_s]);

    let figs = tmp.path().join("figs");
    tauguard(&[
        "report",
        run_s,
        "--no-floors",
        "--out",
        s(&figs),
        "--figures-only",
    ]);
    let got = names(&figs);
    assert!(
        got.iter()
            .all(|n| n.ends_with(".png") || n.ends_with(".svg") || n.ends_with(".caption.txt")),
        "{got:?}"
    );
    assert!(got.contains(&"pass_k.png".to_string()) && !got.contains(&"report.md".to_string()));
    let caption = std::fs::read_to_string(figs.join("pass_k.caption.txt")).unwrap();
    assert!(caption.contains("runs figs"), "{caption}");
    assert!(
        caption.contains("config hashes ") && !caption.contains("config hashes (none)"),
        "{caption}"
    );
    assert!(
        caption.contains("airline / sim-agent / toolguard: cell "),
        "{caption}"
    );

    let tables = tmp.path().join("tables");
    tauguard(&[
        "report",
        run_s,
        "--no-floors",
        "--out",
        s(&tables),
        "--tables-only",
    ]);
    let got = names(&tables);
    assert!(got.contains(&"schema.json".to_string()) && got.contains(&"report.tex".to_string()));
    assert!(
        !got.iter()
            .any(|n| n.ends_with(".png") || n.ends_with(".svg")),
        "{got:?}"
    );

    let cmp = tmp.path().join("cmp");
    let csv = tauguard(&[
        "compare",
        run_s,
        "--a",
        "guard=baseline",
        "--b",
        "guard=toolguard",
        "--format",
        "csv",
        "--resamples",
        "200",
        "--out",
        s(&cmp),
    ]);
    let mut rdr = csv::Reader::from_reader(csv.as_bytes());
    let header: Vec<String> = rdr.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(header[0], "table");
    let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert!(rows.iter().any(|r| &r[0] == "mcnemar") && rows.iter().any(|r| &r[0] == "pass_k_diff"));
    for r in &rows {
        for name in ["exact_p", "mid_p", "chi2_p", "diff", "ci_low", "ci_high"] {
            let v = &r[col(name)];
            assert!(
                !v.contains('e') && (v.is_empty() || v.parse::<f64>().is_ok()),
                "{name} = {v}"
            );
        }
    }
    let got = names(&cmp);
    for want in [
        "forest.png",
        "forest.svg",
        "forest.caption.txt",
        "mcnemar.csv",
        "pass_k_diff.csv",
        "schema.json",
    ] {
        assert!(got.contains(&want.to_string()), "{want}: {got:?}");
    }
    let caption = std::fs::read_to_string(cmp.join("forest.caption.txt")).unwrap();
    assert_contains_all(&caption, &["A = guard=baseline", "runs figs"]);
}
