//! Paper-ready outputs of `write_outputs` on a telecom grid where three guards coincide:
//! every figure keeps all series visible with their legend entries and one colour per cell
//! across figures; every CSV parses into numbers where its schema says so and `schema.json`
//! lists every column; the LaTeX compiles under the README's preamble when `pdflatex` exists.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tauguard_core::record::{SimulationRecord, Slice, Verdict};
use tauguard_metrics::cell_colors;
use tauguard_metrics::{Format, Report, ReportOptions, report, write_outputs};
use tauguard_testkit::synthetic::{attempt, record, usage};

const COINCIDING: [&str; 3] = ["pg-raw", "pg-checklist", "toolguard"];

const TASKS: [(&str, Slice); 4] = [
    (
        "[mobile_data_issue]airplane_mode_on[PERSONA:None]",
        Slice::Mut,
    ),
    ("[mobile_data_issue]data_mode_off[PERSONA:Hard]", Slice::Pv),
    ("[service_issue]sim_locked[PERSONA:Easy]", Slice::Mut),
    ("[mms_issue]bad_apn[PERSONA:None]", Slice::Pv),
];

/// Telecom, 4 tasks × 4 trials: a baseline, three guards with identical outcomes, blocks and
/// costs, and an attack task.
fn grid() -> Vec<SimulationRecord> {
    let mut out = Vec::new();
    for guard in ["baseline"].iter().chain(COINCIDING.iter()) {
        for (ti, (task, slice)) in TASKS.iter().enumerate() {
            for trial in 0..4u32 {
                let ok = if *guard == "baseline" {
                    trial < 2
                } else {
                    !(ti + trial as usize).is_multiple_of(4)
                };
                let mut r = record(task, *slice, trial, if ok { 1.0 } else { 0.0 });
                r.domain = "telecom".into();
                r.guard = guard.to_string();
                r.cell_hash = format!("hash-{guard}");
                r.config_hash = "config-1".into();
                r.run_id = "grid-run".into();
                r.usage
                    .insert("agent".into(), usage(3, 100, 0, 20, Some(0.01)));
                if *guard != "baseline" {
                    r.usage
                        .insert("guard".into(), usage(1, 50, 0, 5, Some(0.002)));
                    let verdict = if *slice == Slice::Pv {
                        Verdict::Block
                    } else {
                        Verdict::Pass
                    };
                    r.call_attempts = vec![attempt("c", Some(verdict), verdict == Verdict::Pass)];
                } else {
                    r.call_attempts = vec![attempt("c", None, true)];
                }
                if ti == 3 {
                    r.attack_target = Some("book_reservation".into());
                }
                out.push(r);
            }
        }
    }
    out
}

fn outputs(name: &str) -> (Report, PathBuf, Vec<PathBuf>) {
    let rep = report(&grid(), &ReportOptions::default());
    let dir = std::env::temp_dir().join(format!("tauguard-figures-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let files = write_outputs(&rep, &dir).unwrap();
    (rep, dir, files)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

/// `attr="value"` of an SVG element's text.
fn attr<'a>(element: &'a str, name: &str) -> Option<&'a str> {
    let at = element.find(&format!(" {name}=\""))? + name.len() + 3;
    element[at..].split('"').next()
}

/// The elements `<tag …/>` of an SVG.
fn elements<'a>(svg: &'a str, tag: &str) -> Vec<&'a str> {
    svg.match_indices(&format!("<{tag} "))
        .map(|(i, _)| &svg[i..i + svg[i..].find('>').unwrap_or(0)])
        .collect()
}

/// The fill colour of the last filled shape before the `<text>` holding exactly `label`:
/// the legend marker (or box) of that entry.
fn legend_colour(svg: &str, label: &str) -> Option<String> {
    let at = svg.match_indices("<text").map(|(i, _)| i).find(|&i| {
        let body = &svg[i..];
        let open = body.find('>').unwrap_or(0) + 1;
        let close = body.find("</text>").unwrap_or(open);
        body[open..close].trim() == label
    })?;
    let before = &svg[..at];
    let shape = before
        .rfind("<polygon")
        .into_iter()
        .chain(before.rfind("<rect"))
        .max()?;
    attr(&before[shape..], "fill").map(str::to_string)
}

#[test]
fn every_figure_keeps_coinciding_guards_visible_with_one_colour_per_cell() {
    let (rep, dir, files) = outputs("visible");
    let colours: BTreeMap<String, String> = cell_colors(&rep).into_iter().collect();
    assert_eq!(colours.len(), 4);
    let distinct: std::collections::BTreeSet<&String> = colours.values().collect();
    assert_eq!(distinct.len(), 4, "one colour per guard: {colours:?}");
    let svgs: Vec<&PathBuf> = files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "svg"))
        .collect();
    let stems: Vec<String> = svgs
        .iter()
        .map(|f| f.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    for want in [
        "pass_k",
        "telecom_intent",
        "telecom_persona",
        "pass_by_slice",
        "block_vs_recall",
        "attack_success",
    ] {
        assert!(
            stems.iter().any(|s| s == want),
            "{want} missing from {stems:?}"
        );
    }
    for svg_path in &svgs {
        let svg = read(svg_path);
        let name = svg_path.display();
        for guard in COINCIDING {
            let Some(found) = legend_colour(&svg, guard) else {
                // block_vs_recall and attack_success draw only cells that have such data;
                // the three coinciding guards have both.
                panic!("{name}: no legend entry for {guard}");
            };
            assert_eq!(
                found, colours[guard],
                "{name}: {guard} drawn in another colour"
            );
            // Drawn in the data area too, not only in the legend.
            let filled = elements(&svg, "polygon")
                .into_iter()
                .chain(elements(&svg, "rect"))
                .filter(|e| attr(e, "fill") == Some(colours[guard].as_str()))
                .count();
            assert!(
                filled >= 2,
                "{name}: {guard} has {filled} shape(s) in its colour"
            );
        }
        assert!(!svg.contains("Pass^4 by slice</text>") || svg.contains("overall"));
    }
    // Pass^k: the three identical curves are three distinct polylines, offset, and named.
    let svg = read(&dir.join("pass_k.svg"));
    let lines: Vec<Vec<&str>> = COINCIDING
        .iter()
        .map(|g| {
            elements(&svg, "polyline")
                .into_iter()
                .filter(|e| attr(e, "stroke") == Some(colours[*g].as_str()))
                .filter_map(|e| attr(e, "points"))
                .collect()
        })
        .collect();
    for (g, l) in COINCIDING.iter().zip(&lines) {
        assert!(
            l.len() >= 2,
            "{g}: data line and legend line expected, got {l:?}"
        );
    }
    // The longest polyline of each colour is its data line; no two are the same.
    let data: Vec<&str> = lines
        .iter()
        .map(|l| *l.iter().max_by_key(|p| p.len()).unwrap())
        .collect();
    assert!(
        data[0] != data[1] && data[1] != data[2] && data[0] != data[2],
        "{data:?}"
    );
    let caption = read(&dir.join("pass_k.caption.txt"));
    assert!(caption.contains("identical curves"), "{caption}");
    for g in COINCIDING {
        assert!(caption.contains(g));
    }
    assert!(read(&dir.join("block_vs_recall.caption.txt")).contains("identical points"));
    if std::env::var_os("TAUGUARD_KEEP_PLOTS").is_none() {
        let _ = std::fs::remove_dir_all(dir);
    } else {
        eprintln!("plots kept in {}", dir.display());
    }
}

#[test]
fn csv_files_are_numeric_where_the_schema_says_and_the_schema_is_complete() {
    let (_, dir, files) = outputs("csv");
    assert_tidy_csvs(&dir, &files);
    // The mean ± std of Table 10 is two numeric columns.
    let pk = read(&dir.join("pass_k.csv"));
    assert!(
        pk.lines()
            .next()
            .unwrap()
            .contains("pass_1_per_trial_mean,pass_1_per_trial_std")
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// Every CSV among `files` parses with the csv crate, holds numbers wherever `schema.json`
/// says so (fractions within [−1, 1]), no percent signs, ± or comment lines, and its columns
/// are exactly the schema's, each with a meaning.
pub(crate) fn assert_tidy_csvs(dir: &Path, files: &[PathBuf]) {
    let schema: serde_json::Value = serde_json::from_str(&read(&dir.join("schema.json"))).unwrap();
    let csvs: Vec<&PathBuf> = files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "csv"))
        .collect();
    assert!(csvs.len() >= 8, "{csvs:?}");
    assert_eq!(schema["files"].as_object().unwrap().len(), csvs.len());
    for path in csvs {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = read(path);
        assert!(
            !text.contains('%') && !text.contains('±') && !text.lines().any(|l| l.starts_with('#')),
            "{file}"
        );
        let cols = schema["files"][&file]["columns"]
            .as_array()
            .unwrap_or_else(|| panic!("{file} not in schema"));
        let mut rdr = csv::Reader::from_reader(text.as_bytes());
        let header: Vec<String> = rdr.headers().unwrap().iter().map(str::to_string).collect();
        let names: Vec<&str> = cols.iter().map(|c| c["name"].as_str().unwrap()).collect();
        assert_eq!(header, names, "{file}");
        for c in cols {
            assert!(
                !c["meaning"].as_str().unwrap().is_empty(),
                "{file}: {} undocumented",
                c["name"]
            );
            assert!(c["unit"].is_string() && c["type"].is_string());
        }
        let mut rows = 0;
        for row in rdr.records() {
            let row = row.unwrap();
            rows += 1;
            for (v, c) in row.iter().zip(cols) {
                if v.is_empty() {
                    continue;
                }
                match c["type"].as_str().unwrap() {
                    "integer" => assert!(v.parse::<i64>().is_ok(), "{file}: {} = {v}", c["name"]),
                    "number" => assert!(v.parse::<f64>().is_ok(), "{file}: {} = {v}", c["name"]),
                    "boolean" => assert!(v == "true" || v == "false", "{file}: {v}"),
                    _ => {}
                }
                if c["unit"] == "fraction" {
                    let x: f64 = v.parse().unwrap();
                    assert!(
                        (-1.0..=1.0).contains(&x),
                        "{file}: {} = {x} is no fraction",
                        c["name"]
                    );
                }
            }
        }
        assert!(rows > 0, "{file} is empty");
    }
}

/// The README's preamble, between its `latex-preamble` markers.
fn readme_preamble() -> String {
    let readme = read(&tauguard_testkit::workspace_root().join("README.md"));
    let start = readme
        .find("% latex-preamble-begin")
        .expect("README states the preamble");
    let end = readme.find("% latex-preamble-end").unwrap();
    readme[start..end].to_string()
}

#[test]
fn latex_compiles_with_the_readme_preamble() {
    let rep = report(&grid(), &ReportOptions::default());
    let tex = rep.render(Format::Latex);
    assert!(
        tex.is_ascii(),
        "LaTeX output must be ASCII: {}",
        tex.chars().filter(|c| !c.is_ascii()).collect::<String>()
    );
    let preamble = readme_preamble();
    assert!(preamble.contains("booktabs") && preamble.contains("longtable"));
    let have = std::process::Command::new("pdflatex")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        tauguard_testkit::skip(
            "pdflatex not found: report.tex not compiled (ASCII and preamble checked)",
        );
        return;
    }
    let dir = std::env::temp_dir().join(format!("tauguard-latex-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("report.tex"), &tex).unwrap();
    std::fs::write(
        dir.join("main.tex"),
        format!("\\documentclass{{article}}\n{preamble}\n\\begin{{document}}\n\\input{{report.tex}}\n\\end{{document}}\n"),
    )
    .unwrap();
    let out = std::process::Command::new("pdflatex")
        .args(["-interaction=nonstopmode", "-halt-on-error", "main.tex"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let _ = std::fs::remove_dir_all(dir);
}
