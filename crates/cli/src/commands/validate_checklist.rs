//! `tauguard validate checklist DIR --domain D` and `validate checklist --all`: load a
//! checklist directory with the guards' own loader (every mutating tool covered, every file
//! valid against the domain's tools) and print its size and its origin — from the
//! `provenance.toml` a compile wrote beside it, or the domain's `tasks/<domain>/provenance.toml`
//! — so a frozen and a compiled set are told apart before a run uses either. `--all` does so
//! for every registered domain's frozen `tasks/<domain>/checklist/`; any failing directory
//! makes it exit 2, its problem listed after the table.

use crate::commands::validate::{EveryDomain, TableFormat, origin_line};
use crate::exit::{Classify, CliError};
use crate::output::Output;
use anyhow::anyhow;
use clap::Args;
use serde_json::json;
use std::path::{Path, PathBuf};
use tauguard_guards::{
    ArtifactError, DomainChecklists, GENERAL_RULES_FILE, ToolCatalog, load_domain_checklists,
};
use tauguard_metrics::{Cell, Table};

#[derive(Args, Debug)]
pub(crate) struct ChecklistArgs {
    /// The checklist directory, e.g. tasks/airline/checklist.
    #[arg(
        required_unless_present = "all",
        conflicts_with = "all",
        requires = "domain"
    )]
    dir: Option<PathBuf>,
    /// Domain whose mutating tools the checklists must cover.
    #[arg(long, conflicts_with = "all")]
    domain: Option<String>,
    #[command(flatten)]
    every: EveryDomain,
}

/// One checklist directory and what loading it gave.
struct Row {
    domain: String,
    dir: PathBuf,
    loaded: Result<DomainChecklists, ArtifactError>,
    /// The origin line of the per-tool checklists, and of the general rules.
    origins: [String; 2],
}

impl Row {
    fn load(domain: &str, dir: &Path) -> Result<Row, CliError> {
        let catalog = ToolCatalog::builtin(domain)
            .ok_or_else(|| anyhow!("--domain: unknown domain `{domain}`"))
            .bad_input()?;
        let loaded = load_domain_checklists(dir, &catalog);
        let tool_file = catalog
            .mutating
            .iter()
            .map(|t| dir.join(format!("{t}.yaml")))
            .find(|f| f.is_file())
            .unwrap_or_else(|| dir.join("checklist.yaml"));
        Ok(Row {
            domain: domain.to_string(),
            dir: dir.to_path_buf(),
            loaded,
            origins: [
                origin_line(&tool_file, domain)?,
                origin_line(&dir.join(GENERAL_RULES_FILE), domain)?,
            ],
        })
    }

    /// Why the directory failed to load, with every cause, as one line.
    fn problem(&self) -> Option<String> {
        self.loaded
            .as_ref()
            .err()
            .map(|e| tauguard_core::chain_text(e))
    }

    fn json(&self) -> serde_json::Value {
        let ok = self.loaded.as_ref().ok();
        json!({
            "domain": self.domain,
            "dir": self.dir.display().to_string(),
            "valid": ok.is_some(),
            "tools": ok.map(|c| c.tools.len()),
            "requirements": ok.map(|c| c.requirement_count()),
            "constraints": ok.map(|c| c.constraint_count()),
            "general_rules": ok.map(|c| c.general.len()),
            "problem": self.problem(),
            "checklists_origin": self.origins[0],
            "general_rules_origin": self.origins[1],
        })
    }
}

pub(crate) fn run(args: ChecklistArgs, project: Option<&Path>) -> Result<(), CliError> {
    let format = args.every.format.unwrap_or(TableFormat::Md);
    let rows = if args.every.all {
        let root = crate::project::resolve(project).bad_input()?;
        let mut rows = Vec::new();
        for d in tauguard_env::registry::DOMAINS {
            let dir = root.join("tasks").join(d.name()).join("checklist");
            if dir.is_dir() {
                rows.push(Row::load(d.name(), &dir)?);
            }
        }
        if rows.is_empty() {
            return Err(CliError::BadInput(anyhow!(
                "no registered domain ({}) has tasks/<domain>/checklist/ under {}",
                tauguard_env::registry::known_names(),
                root.display()
            )));
        }
        rows
    } else {
        let (Some(dir), Some(domain)) = (args.dir, args.domain) else {
            return Err(CliError::BadInput(anyhow!("DIR and --domain are required")));
        };
        if !dir.is_dir() {
            return Err(CliError::BadInput(anyhow!(
                "`{}`: no such directory",
                dir.display()
            )));
        }
        vec![Row::load(&domain, &dir)?]
    };
    let mut out = Output::stdout();
    match format {
        TableFormat::Md => {
            let mut t = Table::new(
                "checklists",
                "Checklists: size and origin",
                &[
                    "Domain",
                    "Tools",
                    "Requirements",
                    "Constraints",
                    "General rules",
                    "Valid",
                ],
            );
            for r in &rows {
                let ok = r.loaded.as_ref().ok();
                let n = |f: fn(&DomainChecklists) -> usize| {
                    ok.map_or(Cell::Missing, |c| Cell::Int(f(c) as u64))
                };
                t.rows.push(vec![
                    Cell::Text(r.domain.clone()),
                    n(|c| c.tools.len()),
                    n(DomainChecklists::requirement_count),
                    n(DomainChecklists::constraint_count),
                    n(|c| c.general.len()),
                    Cell::Text(if ok.is_some() { "yes" } else { "no" }.into()),
                ]);
            }
            out.line(t.to_markdown().trim_end())?;
            out.line("")?;
            for r in &rows {
                if let Some(problem) = r.problem() {
                    out.line(format!("{}: {problem}", r.domain))?;
                }
            }
            for r in &rows {
                out.line(format!("{} ({}):", r.domain, r.dir.display()))?;
                out.line(format!("  checklists {}", r.origins[0]))?;
                out.line(format!("  general rules {}", r.origins[1]))?;
            }
        }
        TableFormat::Json => {
            let all: Vec<serde_json::Value> = rows.iter().map(Row::json).collect();
            out.line(serde_json::to_string_pretty(&all).expect("JSON values serialise"))?;
        }
    }
    out.finish()?;
    let failing: Vec<&str> = rows
        .iter()
        .filter(|r| r.loaded.is_err())
        .map(|r| r.domain.as_str())
        .collect();
    if failing.is_empty() {
        Ok(())
    } else {
        Err(CliError::BadInput(anyhow!(
            "checklists of {} fail validation (problem listed above)",
            failing.join(", ")
        )))
    }
}
