//! `tauguard validate workflow FILE --domain D`: check a workflow bundle before a guide uses it;
//! `tauguard validate workflow --all [--format md|json]`: PolicyGuide Table 16 ("programmatic
//! validation rerun on the frozen workflow graphs"), which comes from the bundles, not from
//! records, so it lives here and not in metrics (metrics may not import guards).
//!
//! A bundle that fails validation is bad input (exit 2), like any malformed artifact: the
//! report lists every problem, one line each, so an author fixes them all in one pass. On
//! success the bundle's sizes are printed (nodes and authorization nodes across the main graph
//! and its subflows), which is what the README compares with the paper's. `--all` validates
//! `tasks/<domain>/workflow/bundle.json` of the project for every registered domain that has
//! one and prints one row per domain beside the paper's sizes; any failing bundle makes it
//! exit 2, its problems listed after the table. Both print each bundle's origin from its
//! domain's `provenance.toml` (hand-written or compiled, by whom, when, from what), or from
//! the `provenance.toml` a compile wrote beside it. `validate checklist` is in
//! `validate_checklist.rs`.

use crate::exit::{Classify, CliError};
use crate::output::Output;
use anyhow::anyhow;
use clap::{Args, Subcommand, ValueEnum};
use serde_json::json;
use std::path::{Path, PathBuf};
use tauguard_guards::{Bundle, PROVENANCE_FILE, Provenance, Report, Rule, ToolCatalog, validate};
use tauguard_metrics::{Cell, Table};

#[derive(Subcommand, Debug)]
pub(crate) enum ValidateCommand {
    /// Validate a PolicyGuide workflow bundle (JSON) against a domain's tools, or with --all
    /// every domain's frozen bundle (PolicyGuide Table 16).
    Workflow(WorkflowArgs),
    /// Validate a checklist directory against a domain's tools, or with --all every domain's
    /// frozen checklists; prints each one's origin.
    Checklist(crate::commands::validate_checklist::ChecklistArgs),
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum TableFormat {
    Md,
    Json,
}

#[derive(Args, Debug)]
pub(crate) struct WorkflowArgs {
    /// The bundle file, e.g. tasks/airline/workflow/bundle.json.
    #[arg(
        required_unless_present = "all",
        conflicts_with = "all",
        requires = "domain"
    )]
    file: Option<PathBuf>,
    /// Domain whose agent tools the bundle must use and cover.
    #[arg(long, conflicts_with = "all")]
    domain: Option<String>,
    #[command(flatten)]
    every: EveryDomain,
}

/// `--all` and its output, the same for every `validate` subcommand: one row per registered
/// domain that has the artifact frozen under `tasks/<domain>/`.
#[derive(Args, Debug)]
pub(crate) struct EveryDomain {
    /// Validate the frozen artifact (tasks/<domain>/workflow/bundle.json, beside the paper's
    /// sizes, PolicyGuide Table 16; tasks/<domain>/checklist/) of every registered domain
    /// that has one, one row per domain.
    #[arg(long)]
    pub(crate) all: bool,
    /// Output of --all: a Markdown table (default) or JSON.
    #[arg(long, value_enum)]
    pub(crate) format: Option<TableFormat>,
}

pub(crate) fn run(cmd: ValidateCommand, project: Option<&Path>) -> Result<(), CliError> {
    match cmd {
        ValidateCommand::Workflow(args) if args.every.all => {
            workflow_all(args.every.format.unwrap_or(TableFormat::Md), project)
        }
        ValidateCommand::Workflow(args) => workflow(args),
        ValidateCommand::Checklist(args) => crate::commands::validate_checklist::run(args, project),
    }
}

fn workflow(args: WorkflowArgs) -> Result<(), CliError> {
    // Checked here: clap's `requires` counts a flag's `false` default as present.
    if args.every.format.is_some() {
        return Err(CliError::BadInput(anyhow!(
            "--format applies to --all; one bundle prints its problems or its sizes"
        )));
    }
    let (Some(file), Some(domain)) = (args.file, args.domain) else {
        // clap requires both without --all.
        return Err(CliError::BadInput(anyhow!(
            "FILE and --domain are required"
        )));
    };
    let catalog = ToolCatalog::builtin(&domain)
        .ok_or_else(|| anyhow!("unknown domain `{domain}`"))
        .bad_input()?;
    let bundle = Bundle::load(&file).bad_input()?;
    let report = validate(&bundle, &catalog);
    let mut out = Output::stdout();
    for problem in &report.problems {
        out.line(problem.to_string())?;
    }
    if report.is_valid() {
        out.line(format!(
            "{}: valid workflow bundle for domain `{domain}`: {}",
            file.display(),
            report.sizes
        ))?;
    }
    out.line(origin_line(&file, &domain)?)?;
    out.finish()?;
    if report.is_valid() {
        Ok(())
    } else {
        Err(CliError::BadInput(anyhow!(
            "workflow bundle {} has {} problem(s) (listed above)",
            file.display(),
            report.problems.len()
        )))
    }
}

/// `origin: …` of a file from the `provenance.toml` beside it (what `tauguard compile`
/// writes) or of the `tasks/<domain>/` it lies in, or a line saying none states it.
pub(crate) fn origin_line(file: &Path, domain: &str) -> Result<String, CliError> {
    let file = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    if let Some(dir) = file.parent()
        && dir.join(PROVENANCE_FILE).is_file()
    {
        let p = Provenance::load_file(&dir.join(PROVENANCE_FILE), domain).bad_input()?;
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        return Ok(match p.entry_of(&name) {
            Some(e) => format!("origin ({}): {}", e.kind, e.origin),
            None => format!(
                "origin: none stated ({} beside it lists no `{name}`)",
                PROVENANCE_FILE
            ),
        });
    }
    for dir in file.ancestors().skip(1) {
        if dir.file_name().is_some_and(|n| n == domain)
            && let Some(tasks) = dir.parent()
            && let Some(p) = Provenance::load_domain(tasks, domain).bad_input()?
        {
            let rel = file.strip_prefix(dir).unwrap_or(&file);
            let rel = rel.to_string_lossy().replace('\\', "/");
            return Ok(match p.entry_of(&rel) {
                Some(e) => format!("origin ({}): {}", e.kind, e.origin),
                None => format!("origin: none stated ({} lists no `{rel}`)", PROVENANCE_FILE),
            });
        }
    }
    Ok(format!(
        "origin: none stated (no tasks/{domain}/{PROVENANCE_FILE} above the file)"
    ))
}

/// The paper's frozen graph sizes, nodes and authorization nodes (PolicyGuide, offline
/// artifact: "airline 158 nodes / 11 authorization nodes, retail 104 / 7, telecom 127 / 5").
const PAPER_SIZES: [(&str, usize, usize); 3] = [
    ("airline", 158, 11),
    ("retail", 104, 7),
    ("telecom", 127, 5),
];

/// One domain's frozen bundle and what the validator says of it.
struct Row {
    domain: &'static str,
    file: PathBuf,
    report: Report,
}

impl Row {
    /// Rules (the validator's checks) with no problem.
    fn passed(&self) -> usize {
        Rule::ALL
            .iter()
            .filter(|r| !self.report.problems.iter().any(|p| p.rule == **r))
            .count()
    }

    fn paper(&self) -> Option<(usize, usize)> {
        PAPER_SIZES
            .iter()
            .find(|(d, ..)| *d == self.domain)
            .map(|&(_, n, a)| (n, a))
    }

    fn json(&self) -> serde_json::Value {
        let s = &self.report.sizes;
        let failed: Vec<&str> = Rule::ALL
            .iter()
            .filter(|r| self.report.problems.iter().any(|p| p.rule == **r))
            .map(|r| r.as_str())
            .collect();
        json!({
            "domain": self.domain,
            "file": self.file.display().to_string(),
            "valid": self.report.is_valid(),
            "nodes": s.nodes,
            "authorization_nodes": s.authorization_nodes,
            "edges": s.edges,
            "subflows": s.graphs.saturating_sub(1),
            "checks_passed": self.passed(),
            "checks_total": Rule::ALL.len(),
            "failed_checks": failed,
            "problems": self.report.problems.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "paper": self.paper().map(|(n, a)| json!({"nodes": n, "authorization_nodes": a})),
        })
    }
}

fn table(rows: &[Row]) -> Table {
    let mut t = Table::new(
        "policyguide_table16",
        "PolicyGuide Table 16: programmatic validation of the frozen workflow graphs",
        &[
            "Domain",
            "Nodes",
            "Authorization nodes",
            "Edges",
            "Subflows",
            "Checks passed",
            "Paper nodes",
            "Paper authorization nodes",
        ],
    );
    for row in rows {
        let s = &row.report.sizes;
        let paper = row.paper();
        t.rows.push(vec![
            Cell::Text(row.domain.to_string()),
            Cell::Int(s.nodes as u64),
            Cell::Int(s.authorization_nodes as u64),
            Cell::Int(s.edges as u64),
            Cell::Int(s.graphs.saturating_sub(1) as u64),
            Cell::Text(format!("{}/{}", row.passed(), Rule::ALL.len())),
            paper.map_or(Cell::Missing, |(n, _)| Cell::Int(n as u64)),
            paper.map_or(Cell::Missing, |(_, a)| Cell::Int(a as u64)),
        ]);
    }
    let rules: Vec<&str> = Rule::ALL.iter().map(|r| r.as_str()).collect();
    t.notes.push(format!(
        "Checks: the validator's {} rules ({}); a check passes when it reports no problem. \
         Sizes count the main graph and every subflow.",
        rules.len(),
        rules.join(", ")
    ));
    t
}

fn workflow_all(format: TableFormat, project: Option<&Path>) -> Result<(), CliError> {
    let dir = crate::project::resolve(project).bad_input()?;
    let mut rows = Vec::new();
    for domain in tauguard_env::registry::DOMAINS {
        let file = dir
            .join("tasks")
            .join(domain.name())
            .join("workflow/bundle.json");
        if !file.is_file() {
            continue;
        }
        let bundle = Bundle::load(&file).bad_input()?;
        let report = validate(&bundle, &ToolCatalog::of(*domain));
        rows.push(Row {
            domain: domain.name(),
            file,
            report,
        });
    }
    if rows.is_empty() {
        return Err(CliError::BadInput(anyhow!(
            "no registered domain ({}) has tasks/<domain>/workflow/bundle.json under {}",
            tauguard_env::registry::known_names(),
            dir.display()
        )));
    }
    let mut out = Output::stdout();
    match format {
        TableFormat::Md => {
            out.line(table(&rows).to_markdown().trim_end())?;
            let failing: Vec<&Row> = rows.iter().filter(|r| !r.report.is_valid()).collect();
            if !failing.is_empty() {
                out.line("")?;
            }
            for row in failing {
                for problem in &row.report.problems {
                    out.line(format!("{}: {problem}", row.domain))?;
                }
            }
            out.line("")?;
            for row in &rows {
                out.line(format!(
                    "{}: {}",
                    row.domain,
                    origin_line(&row.file, row.domain)?
                ))?;
            }
        }
        TableFormat::Json => {
            let mut all = Vec::new();
            for row in &rows {
                let mut j = row.json();
                j["origin"] = json!(origin_line(&row.file, row.domain)?);
                all.push(j);
            }
            out.line(serde_json::to_string_pretty(&all).expect("JSON values serialise"))?;
        }
    }
    out.finish()?;
    let failing: Vec<&str> = rows
        .iter()
        .filter(|r| !r.report.is_valid())
        .map(|r| r.domain)
        .collect();
    if failing.is_empty() {
        Ok(())
    } else {
        Err(CliError::BadInput(anyhow!(
            "workflow bundle(s) of {} fail validation (problems listed above)",
            failing.join(", ")
        )))
    }
}
