//! Grids from config files, through the library: every axis (domain, agent, guard with its
//! options, verifier, seed, and an override's setting) gives cells of their own hash and id;
//! the one-value shorthand and the same grid written out explicitly give the same cells;
//! task selection per domain; each validation error names the file, the key and what is
//! allowed; model aliases resolve from a catalog, and an unknown one lists the known ones.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use tauguard_env::LoadError;
use tauguard_orchestrator::{ConfigError, ModelCatalog, RunConfig, RunError, RunOptions, RunPlan};

fn root() -> PathBuf {
    tauguard_testkit::workspace_root()
}

fn fixtures() -> PathBuf {
    tauguard_testkit::fixtures_dir()
}

fn opts() -> RunOptions {
    RunOptions {
        project_dir: Some(root()),
        ..Default::default()
    }
}

/// Two sim agents told apart by their fault profile and name.
const TWO_AGENTS: &str = r#"
[[grid.agents]]
name = "careful"
provider = "sim"
model = "sim-agent"
[[grid.agents]]
name = "sloppy"
provider = "sim"
model = "sim-agent"
[grid.agents.faults]
skip_confirmation = 0.5
"#;

fn parse(text: &str) -> RunConfig {
    RunConfig::parse(Path::new("grid.toml"), text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn head(grid: &str) -> String {
    format!(
        "[run]\nname = \"g\"\ndata_dir = \"{}\"\n[models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n[grid]\n{grid}\n",
        fixtures().display()
    )
}

#[test]
fn every_axis_gives_cells_of_their_own_hash_and_id() {
    // Domains (the fixture airline and the toy domain) × agents × seeds with guards every
    // domain has artifacts for; then, on airline, guard options × verifiers × an override.
    let across_domains = parse(&format!(
        "{}{TWO_AGENTS}",
        head(
            "domains = [\"airline\", \"toy\"]\nguards = [\"baseline\", \"block-all\"]\nseeds = [300, 301]"
        )
    ));
    let on_airline = parse(&format!(
        "{}{TWO_AGENTS}\n\
         [[grid.override]]\nmatch = {{ guard = \"pg-open\", agent = \"sloppy\" }}\nmax_steps = 60\n",
        head(
            "domains = [\"airline\"]\nseeds = [300, 301]\n\
             guards = [\"baseline\", \"pg-checklist\",\
               { name = \"pg-strict\", guard = \"pg-checklist\", strict = true },\
               { name = \"pg-open\", guard = \"pg-checklist\", fail_mode = \"open\" }]\n\
             verifiers = [\"paired\", { provider = \"sim\", model = \"sim-verifier\" }]"
        )
    ));
    let a = RunPlan::build(across_domains, &opts()).unwrap();
    let b = RunPlan::build(on_airline, &opts()).unwrap();
    assert_eq!(a.cells.len(), 2 * 2 * 2 * 2);
    // baseline: one cell per agent × seed; three verifier guards × two verifiers.
    assert_eq!(b.cells.len(), 2 * 2 * (1 + 3 * 2));
    let mut by_id: BTreeMap<String, String> = BTreeMap::new();
    for c in a.cells.iter().chain(&b.cells) {
        // A cell in both plans is the same cell: same settings, same hash.
        if let Some(h) = by_id.insert(c.id.clone(), c.hash.clone()) {
            assert_eq!(h, c.hash, "{}", c.id);
        }
    }
    let hashes: BTreeSet<&String> = by_id.values().collect();
    assert_eq!(
        hashes.len(),
        by_id.len(),
        "two cells share a hash: {by_id:#?}"
    );
    assert!(
        by_id.contains_key("toy|sloppy|block-all|seed=301"),
        "{by_id:#?}"
    );
    assert!(by_id.contains_key("airline|careful|pg-strict|verifier=sim-verifier|seed=300"));
    assert!(by_id.contains_key("airline|careful|baseline|seed=300"));
    // The override reached its cells only.
    for c in &b.cells {
        let overridden = c.guard_label == "pg-open" && c.id.contains("|sloppy|");
        assert_eq!(c.max_steps, if overridden { 60 } else { 200 }, "{}", c.id);
        assert_eq!(c.spec["max_steps"], c.max_steps);
    }
    let strict = b
        .cells
        .iter()
        .find(|c| c.guard_label == "pg-strict")
        .unwrap();
    assert_eq!(strict.spec["guard.strict"], true);
    assert_eq!(strict.spec["guard.name"], "pg-strict");
    assert_eq!(strict.spec["guard"], "pg-checklist");
    // Each cell's models: the sloppy agent's faults are in its cells only.
    for c in &a.cells {
        let sloppy = c.id.contains("|sloppy|");
        assert_eq!(
            c.spec.contains_key("agent.faults.skip_confirmation"),
            sloppy,
            "{}",
            c.id
        );
        assert_eq!(
            a.agents[c.agent].label,
            if sloppy { "sloppy" } else { "careful" }
        );
    }
}

#[test]
fn the_shorthand_and_the_explicit_grid_give_the_same_cells() {
    let shorthand = format!(
        "[run]\nname = \"s\"\ndomain = \"airline\"\ntrials = 2\nseed = 300\ndata_dir = \"{}\"\n\
         [models.agent]\nprovider = \"sim\"\nmodel = \"sim-agent\"\n[models.agent.faults]\ncomply_forbidden = 0.3\n\
         [models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n\
         [grid]\nguards = [\"baseline\", \"toolguard\", \"pg-checklist\"]\n[guard]\nstrict = false\nfail_mode = \"closed\"\n",
        fixtures().display()
    );
    let explicit = format!(
        "[run]\nname = \"s\"\ntrials = 1\ndata_dir = \"{}\"\n\
         [models.user]\nprovider = \"sim\"\nmodel = \"sim-user\"\n\
         [grid]\ndomains = [\"airline\"]\ntrials = 2\nseeds = [300]\nverifiers = [\"paired\"]\n\
         guards = [\"baseline\", \"toolguard\", {{ name = \"pg-checklist\", guard = \"pg-checklist\", fail_mode = \"closed\" }}]\n\
         [[grid.agents]]\nprovider = \"sim\"\nmodel = \"sim-agent\"\n[grid.agents.faults]\ncomply_forbidden = 0.3\n\
         [grid.tasks.airline]\nsplit = \"base\"\n",
        fixtures().display()
    );
    let a = RunPlan::build(parse(&shorthand), &opts()).unwrap();
    let b = RunPlan::build(parse(&explicit), &opts()).unwrap();
    let cells = |p: &RunPlan| -> Vec<(String, String, u32, Vec<u64>)> {
        p.cells
            .iter()
            .map(|c| (c.id.clone(), c.hash.clone(), c.trials, c.seeds.clone()))
            .collect()
    };
    assert_eq!(cells(&a), cells(&b));
    assert_eq!(a.cells[0].id, "airline|sim-agent|baseline");
    assert_eq!(a.planned(), b.planned());
}

#[test]
fn task_selection_is_per_domain_and_overrides_change_trials() {
    let text = format!(
        "{}[models.agent]\nprovider = \"sim\"\nmodel = \"sim-agent\"\n\
         [grid.tasks.airline]\nnum_tasks = 2\n[grid.tasks.toy]\ntask_ids = [\"y2\"]\n\
         [[grid.override]]\nmatch = {{ domain = \"toy\" }}\ntrials = 3\n",
        head("domains = [\"airline\", \"toy\"]\ntrials = 2")
    );
    let plan = RunPlan::build(parse(&text), &opts()).unwrap();
    let ids: Vec<Vec<&str>> = plan
        .domains
        .iter()
        .map(|d| d.tasks.iter().map(|t| t.id.as_str()).collect())
        .collect();
    assert_eq!(ids, [vec!["f1", "f2"], vec!["y2"]]);
    assert_eq!(plan.planned(), 2 * 2 + 3);
    let keys: BTreeSet<_> = plan.simulations().map(|s| plan.key(s)).collect();
    assert_eq!(keys.len(), plan.planned());
}

/// A split the data directory lacks is an error at the key that asked for it, keeping the
/// data directory's error as its typed cause; printed with its cause it reads as one line.
#[test]
fn an_unknown_split_is_a_config_error_at_its_key_with_the_load_error_as_cause() {
    let text = format!(
        "{}[models.agent]\nprovider = \"sim\"\nmodel = \"sim-agent\"\n\
         [grid.tasks.airline]\nsplit = \"bogus\"\n",
        head("domains = [\"airline\"]")
    );
    let err = RunPlan::build(parse(&text), &opts()).unwrap_err();
    let RunError::Config(ConfigError::Data(at)) = &err else {
        panic!("expected a config error at a key, got {err:?}");
    };
    assert_eq!(at.key, "grid.tasks.airline.split");
    assert!(
        matches!(at.cause, LoadError::UnknownSplit { .. }),
        "{:?}",
        at.cause
    );
    let source = std::error::Error::source(&err).expect("a cause");
    assert!(source.downcast_ref::<LoadError>().is_some(), "{source:?}");
    assert_eq!(
        tauguard_core::chain_text(&err),
        format!(
            "config `grid.toml`: at `grid.tasks.airline.split`: {}",
            at.cause
        )
    );
}

/// Each validation error names the file, the key path and what is allowed.
#[test]
fn grid_errors_name_the_file_the_key_and_the_allowed_values() {
    let agent = "[models.agent]\nprovider = \"sim\"\nmodel = \"sim-agent\"\n";
    let cases: &[(String, &[&str])] = &[
        (
            format!("{}{agent}", head("domains = [\"airline\", \"airlne\"]")),
            &[
                "`grid.domains[1]`",
                "`airlne`",
                "known: airline, banking_knowledge, retail, telecom",
            ],
        ),
        (
            format!(
                "{}{agent}",
                head("domains = [\"airline\"]\nguards = [\"baseline\", \"pg-cheklist\"]")
            ),
            &[
                "`grid.guards[1]`",
                "`pg-cheklist`",
                "known: baseline, toolguard",
            ],
        ),
        (
            format!(
                "{}{agent}[[grid.guards]]\nname = \"x\"\nguard = \"polcyguide\"\n",
                head("domains = [\"airline\"]")
            ),
            &["`grid.guards[0].guard`", "`polcyguide`", "policyguide-raw"],
        ),
        (
            format!("{}{agent}", head("domains = [\"airline\"]\ntrials = 0")),
            &["`grid.trials`", "at least 1"],
        ),
        (
            format!(
                "{}{agent}[grid.tasks.retail]\nnum_tasks = 3\n",
                head("domains = [\"airline\"]")
            ),
            &["`grid.tasks.retail`", "domains: airline"],
        ),
        (
            format!(
                "{}[[grid.agents]]\nprovider = \"opnai\"\nmodel = \"gpt-5.4\"\n",
                head("domains = [\"airline\"]")
            ),
            &[
                "`grid.agents[0].provider`",
                "`opnai`",
                "built-in: openai, anthropic, gemini",
            ],
        ),
        (
            format!(
                "{}{agent}[[grid.override]]\nmatch = {{ guard = \"pg-raw\" }}\ntrials = 2\n",
                head("domains = [\"airline\"]")
            ),
            &[
                "`grid.override[0].match.guard`",
                "`pg-raw`",
                "allowed: baseline",
            ],
        ),
        (
            format!(
                "{}{agent}",
                head("domains = [\"airline\"]\nverifer = [\"paired\"]")
            ),
            &["grid", "`verifer`", "verifiers"],
        ),
    ];
    for (text, needles) in cases {
        let err = RunConfig::parse(Path::new("runs/bad.toml"), text)
            .expect_err(needles[0])
            .to_string();
        assert!(err.contains("runs/bad.toml"), "{err}");
        for n in *needles {
            assert!(err.contains(n), "`{n}` missing in: {err}");
        }
    }
}

#[test]
fn aliases_resolve_from_the_catalog_with_their_prices() {
    let text = head(
        "domains = [\"airline\"]\nagents = [\"gpt-5.4\", \"claude-sonnet-4.6\"]\nguards = [\"baseline\", \"pg-checklist\"]",
    );
    let mut cfg = parse(&text);
    assert!(cfg.has_aliases() && cfg.uses_network());
    let catalog = ModelCatalog::load(&root().join("configs/models.toml")).unwrap();
    cfg.resolve_aliases(Path::new("grid.toml"), &catalog)
        .unwrap();
    assert!(!cfg.has_aliases());
    let sections = cfg.model_sections();
    let agents: Vec<(&str, &str, Option<&str>)> = sections
        .iter()
        .filter(|(k, _, _)| k.starts_with("grid.agents"))
        .map(|(_, _, m)| (m.provider.as_str(), m.model.as_str(), m.name.as_deref()))
        .collect();
    assert_eq!(
        agents,
        [
            ("openai", "gpt-5.4", Some("gpt-5.4")),
            ("anthropic", "claude-sonnet-4-6", Some("claude-sonnet-4.6"))
        ]
    );
    let price = cfg.llm.prices.get("claude-sonnet-4-6").unwrap();
    assert_eq!((price.input_per_mtok, price.output_per_mtok), (3.0, 15.0));
    assert!(cfg.llm.capabilities.contains_key("gpt-5.4"));

    // Models named by provider and id are priced from the catalog too, unless the config
    // prices them; sim models and unknown ids are left alone.
    let by_id = |extra: &str| {
        parse(&format!(
            "[run]\nname = \"g\"\ndomain = \"airline\"\ndata_dir = \"{}\"\n[models.agent]\nprovider = \"anthropic\"\n\
             model = \"claude-sonnet-4-6\"\n[models.user]\nprovider = \"openai\"\n\
             model = \"gpt-4.1-2025-04-14\"\n[models.judge]\nprovider = \"openai\"\n\
             model = \"gpt-4.1-nano\"\n{extra}",
            fixtures().display()
        ))
    };
    let mut plain = by_id("");
    assert!(plain.llm.prices.get("claude-sonnet-4-6").is_none());
    let mut priced = plain.adopt_catalog_prices(&catalog);
    priced.sort();
    assert_eq!(priced, ["claude-sonnet-4-6", "gpt-4.1-2025-04-14"]);
    let p = plain.llm.prices.get("claude-sonnet-4-6").unwrap();
    assert_eq!((p.input_per_mtok, p.output_per_mtok), (3.0, 15.0));
    assert!(plain.llm.prices.get("gpt-4.1-nano").is_none());
    let mut own =
        by_id("[llm.prices.\"claude-sonnet-4-6\"]\ninput_per_mtok = 7.0\noutput_per_mtok = 9.0\n");
    assert_eq!(own.adopt_catalog_prices(&catalog), ["gpt-4.1-2025-04-14"]);
    let p = own.llm.prices.get("claude-sonnet-4-6").unwrap();
    assert_eq!((p.input_per_mtok, p.output_per_mtok), (7.0, 9.0));
    let mut sim = parse(&format!("{}{TWO_AGENTS}", head("domains = [\"airline\"]")));
    assert!(sim.adopt_catalog_prices(&catalog).is_empty());

    let mut bad = parse(&head("domains = [\"airline\"]\nagents = [\"gpt-9\"]"));
    let err = bad
        .resolve_aliases(Path::new("runs/alias.toml"), &catalog)
        .unwrap_err()
        .to_string();
    for needle in [
        "runs/alias.toml",
        "`grid.agents[0]`",
        "`gpt-9`",
        "gpt-5.4, gpt-5.4-mini",
        "models.toml",
    ] {
        assert!(err.contains(needle), "`{needle}` missing in: {err}");
    }
    // A plan never runs on an unresolved alias.
    let err = RunPlan::build(
        parse(&head("domains = [\"airline\"]\nagents = [\"gpt-5.4\"]")),
        &opts(),
    )
    .expect_err("unresolved alias")
    .to_string();
    assert!(
        err.contains("`grid.agents[0]`") && err.contains("not resolved"),
        "{err}"
    );
}
