//! The reproduction tables' contents, over every experiment the registry lists: each published
//! number cited to a paper table of a seed that states it, the floors in every table (and in
//! the committed `results/`), and the tables of the experiments for PolicyGuard Table 7 and
//! PolicyGuide Table 12 offline.

use crate::reproduce::{cell, csv_rows, num, repro_dir, reproduce_offline};
use crate::support::{assert_contains_all, tauguard_ok};
use tauguard_metrics::repro::{Cite, Published, quote_digits, quote_value};
use tauguard_testkit::{skip, tau2_candidate, tau2_dir, workspace_root};

/// The experiments as the binary's registry lists them (`reproduce --list`).
fn registry() -> Vec<String> {
    let out = tauguard_ok(&["reproduce", "--list"]);
    out.lines()
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect()
}

/// The numbers a text states (`0.35`, `24`), as a cited note is checked against its seed.
fn numbers_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for ch in text.chars().chain([' ']) {
        if ch.is_ascii_digit() || (ch == '.' && !cur.is_empty()) {
            cur.push(ch);
        } else if !cur.is_empty() {
            out.push(cur.trim_end_matches('.').to_string());
            cur.clear();
        }
    }
    out
}

/// Every published number of every experiment in the registry is cited to a paper table (or,
/// where the seed names none, a section) of a seed, and the seed states it: the quote's
/// digits and the table's name are both in the cited seed file. Notes with numbers are held
/// to the same rule.
#[test]
fn every_published_number_is_cited_to_a_seed_table() {
    let seeds = tau2_candidate().parent().map(|p| p.join("seeds")).unwrap();
    if !seeds.is_dir() {
        skip(&format!("the seeds are not at {}", seeds.display()));
        return;
    }
    let seed_text = |seed: &str, at: &str| -> String {
        std::fs::read_to_string(seeds.join(seed))
            .unwrap_or_else(|e| panic!("{at}: cited seed `{seed}` cannot be read: {e}"))
    };
    let check_cite = |c: &Cite, at: &str| -> String {
        let text = seed_text(&c.seed, at);
        assert!(
            c.table.is_some() || c.section.is_some(),
            "{at}: cites no table"
        );
        for place in c.table.iter().chain(&c.section) {
            assert!(
                text.contains(place.as_str()),
                "{at}: `{place}` is not in seed {}",
                c.seed
            );
        }
        text
    };
    let names = registry();
    assert!(names.len() >= 17, "{names:?}");
    let mut checked = 0;
    for name in &names {
        let path = repro_dir().join("published").join(format!("{name}.toml"));
        let raw = std::fs::read_to_string(&path).unwrap();
        assert!(
            !raw.contains("papers.md") && !raw.contains("digest"),
            "{}: cites the digest, not the papers' tables",
            path.display()
        );
        let published: Published =
            toml::from_str(&raw).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        published
            .validate()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for c in &published.cells {
            let at = format!(
                "{}: {} / {} / {} `{}`",
                path.display(),
                c.domain,
                c.agent,
                c.guard,
                c.quote
            );
            let text = check_cite(&c.cite, &at);
            let digits = quote_digits(&c.quote);
            assert!(
                text.contains(&digits),
                "{at}: `{digits}` is not in seed {}",
                c.cite.seed
            );
            assert_eq!(quote_value(&c.quote), Some(c.value), "{at}");
            checked += 1;
        }
        for n in &published.notes {
            let at = format!("{}: note `{}`", path.display(), n.text);
            let text = check_cite(&n.cite, &at);
            for x in numbers_in(&n.text) {
                assert!(
                    text.contains(&x),
                    "{at}: {x} is not in seed {}",
                    n.cite.seed
                );
            }
        }
    }
    assert!(checked >= 80, "only {checked} published cells");
}

/// Every experiment in the registry, offline on its first task: its table has the floors of
/// its domains and carries every published cell with its citation, and the committed
/// `results/<name>/table.md` shows the floors and names the same source tables.
#[test]
fn every_experiment_renders_floors_and_its_published_numbers() {
    if tau2_dir().is_none() {
        return;
    }
    for name in registry() {
        let Some((md, tmp)) = reproduce_offline(&name, "1") else {
            return;
        };
        assert!(md.contains("Floor Pass^1 — trivial agents"), "{name}: {md}");
        assert!(md.contains("| refuse-all |"), "{name}: {md}");
        assert!(md.contains("| gold-no-procedure |"), "{name}: {md}");
        let path = repro_dir().join("published").join(format!("{name}.toml"));
        let published: Published =
            toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(tmp.path().join("out/table.json")).unwrap(),
        )
        .unwrap();
        let with_published: Vec<&serde_json::Value> = json["cells"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| !c["published"].is_null())
            .collect();
        assert_eq!(
            with_published.len(),
            published.cells.len(),
            "{name}: every published cell has its place"
        );
        assert!(
            with_published.iter().all(|c| c["cite"].is_string()),
            "{name}"
        );
        assert!(!json["floors"].as_array().unwrap().is_empty(), "{name}");
        let committed = workspace_root()
            .join("results")
            .join(&name)
            .join("table.md");
        let committed = std::fs::read_to_string(&committed)
            .unwrap_or_else(|e| panic!("{}: {e}", committed.display()));
        assert!(
            committed.contains("Floor Pass^1 — trivial agents"),
            "results/{name}/table.md has no floors"
        );
        for (cite, _) in published.cited() {
            assert!(md.contains(&cite), "{name}: {cite} not named");
            assert!(
                committed.contains(&cite),
                "results/{name}/table.md does not name {cite}: regenerate it"
            );
        }
    }
}

/// PolicyGuard Table 7 offline: the per-call figures in both views, row by guard, beside the
/// published verdict-view numbers (which left the Table 2 rows), with the floors under it.
#[test]
fn policyguard_per_call_offline_shows_both_views_beside_table_7() {
    let Some((md, tmp)) = reproduce_offline("policyguard-per-call", "4") else {
        return;
    };
    assert!(
        md.starts_with("### PolicyGuard Table 7: Per-call verdict confusion"),
        "{md}"
    );
    assert!(
        md.contains("| Domain | Agent (row; played by sim-agent) | Guard | PV rec | Block% | Runtime PV rec | Runtime Block% |"),
        "{md}"
    );
    for shown in ["/ 100.0% /", "/ 94.7% /", "/ 44.1% /", "/ 59.0% /"] {
        assert!(md.contains(shown), "{shown} missing: {md}");
    }
    assert_contains_all(
        &md,
        &[
            "- PolicyGuard Table 7 (seed 000_183cb6c87febe71a.txt): 7 cells",
            "| airline | refuse-all | 4 |",
        ],
    );
    let rows = csv_rows(tmp.path());
    let pg = cell(
        &rows,
        &[
            ("agent", "Gemini 2.5 Pro"),
            ("guard", "pg-checklist"),
            ("metric", "pv_recall"),
        ],
    );
    assert_eq!(pg["published"], "0.947000");
    assert!(!pg["ours"].is_empty(), "{pg:?}");
    let runtime = cell(
        &rows,
        &[
            ("agent", "GPT 5.4"),
            ("guard", "toolguard"),
            ("metric", "runtime_block_rate"),
        ],
    );
    assert!(!runtime["ours"].is_empty(), "{runtime:?}");
    assert_eq!(runtime["published"], "");
    // The floors are rows of the tidy CSV too, one per domain, floor agent and slice.
    let floors: Vec<_> = rows.iter().filter(|r| r["guard"] == "floor").collect();
    assert_eq!(floors.len(), 6, "{floors:?}");
}

/// PolicyGuide Table 12 offline: McNemar p per domain and pooled over the three domains; the
/// published upper bounds sit in the pooled row and are never subtracted.
#[test]
fn policyguide_significance_offline_pools_mcnemar_over_domains() {
    let Some((md, tmp)) = reproduce_offline("policyguide-significance", "3") else {
        return;
    };
    assert_contains_all(&md, &["/ p<10^{-8} / — |", "/ p<10^{-12} / — |"]);
    let rows = csv_rows(tmp.path());
    let pooled = cell(
        &rows,
        &[
            ("domain", "pooled"),
            ("guard", "policyguide"),
            ("column", "McNemar p vs ReAct"),
        ],
    );
    let p = num(&pooled["ours"]);
    assert!((0.0..=1.0).contains(&p), "{pooled:?}");
    assert_eq!(
        (pooled["quote"].as_str(), pooled["diff"].as_str()),
        ("p<10^{-8}", "")
    );
    // A guard against itself has no test.
    let own = cell(
        &rows,
        &[
            ("domain", "airline"),
            ("guard", "baseline"),
            ("column", "McNemar p vs ReAct"),
        ],
    );
    assert_eq!(own["ours"], "");
    for d in ["airline", "retail", "telecom"] {
        let c = cell(
            &rows,
            &[
                ("domain", d),
                ("guard", "policyguide"),
                ("column", "McNemar p vs ReAct"),
            ],
        );
        assert!((0.0..=1.0).contains(&num(&c["ours"])), "{c:?}");
    }
}
