//! `tauguard diff-artifacts A B --domain D`: how two artifact sets differ (the comparison
//! itself is `tauguard_guards::ChecklistDiff` and `WorkflowDiff`). Each side is a domain's artifact folder
//! (`tasks/airline`, a compiled set's `DIR/airline`), a set's root holding `<domain>/`
//! (`tasks`, `DIR`), a checklist directory, a workflow directory or a `bundle.json`; the parts
//! both sides hold are compared, and each side's origin is printed beside it.

use crate::commands::validate::origin_line;
use crate::exit::{Classify, CliError};
use crate::output::Output;
use anyhow::anyhow;
use clap::{Args, ValueEnum};
use serde_json::json;
use std::path::{Path, PathBuf};
use tauguard_guards::{
    BUNDLE_FILE, Bundle, CHECKLIST_DIR, ChecklistDiff, GENERAL_RULES_FILE, ToolCatalog,
    WORKFLOW_DIR, WorkflowDiff, load_domain_checklists,
};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Args, Debug)]
pub(crate) struct DiffArgs {
    /// The first set (e.g. tasks/airline, the frozen one).
    a: PathBuf,
    /// The second set (e.g. sets/gpt-5.4/airline, a compiled one).
    b: PathBuf,
    /// The domain whose tools the checklists are loaded against.
    #[arg(long)]
    domain: String,
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

/// What one side holds.
struct Side {
    path: PathBuf,
    checklist: Option<PathBuf>,
    bundle: Option<PathBuf>,
}

impl Side {
    fn find(path: &Path, domain: &str) -> Result<Side, CliError> {
        let mut side = Side {
            path: path.to_path_buf(),
            checklist: None,
            bundle: None,
        };
        if path.is_file() {
            side.bundle = Some(path.to_path_buf());
            return Ok(side);
        }
        if !path.is_dir() {
            return Err(CliError::BadInput(anyhow!(
                "`{}`: no such file or directory",
                path.display()
            )));
        }
        let root = if path.join(domain).is_dir() && !path.join(CHECKLIST_DIR).is_dir() {
            path.join(domain)
        } else {
            path.to_path_buf()
        };
        if root.join(CHECKLIST_DIR).is_dir() {
            side.checklist = Some(root.join(CHECKLIST_DIR));
        } else if root.join(GENERAL_RULES_FILE).is_file() {
            side.checklist = Some(root.clone());
        }
        for file in [
            root.join(WORKFLOW_DIR).join(BUNDLE_FILE),
            root.join(BUNDLE_FILE),
        ] {
            if side.bundle.is_none() && file.is_file() {
                side.bundle = Some(file);
            }
        }
        if side.checklist.is_none() && side.bundle.is_none() {
            return Err(CliError::BadInput(anyhow!(
                "`{}` holds no artifact set of `{domain}`: expected `{CHECKLIST_DIR}/` or `{WORKFLOW_DIR}/{BUNDLE_FILE}` (in it or in its `{domain}/`), a checklist directory with `{GENERAL_RULES_FILE}`, or a bundle file",
                path.display()
            )));
        }
        Ok(side)
    }
}

pub(crate) fn run(args: DiffArgs) -> Result<(), CliError> {
    let catalog = ToolCatalog::builtin(&args.domain)
        .ok_or_else(|| anyhow!("--domain: unknown domain `{}`", args.domain))
        .bad_input()?;
    let (a, b) = (
        Side::find(&args.a, &args.domain)?,
        Side::find(&args.b, &args.domain)?,
    );
    let checklists = match (&a.checklist, &b.checklist) {
        (Some(x), Some(y)) => {
            let load = |d: &Path| load_domain_checklists(d, &catalog).bad_input();
            Some(ChecklistDiff::of(&load(x)?, &load(y)?))
        }
        _ => None,
    };
    let workflow = match (&a.bundle, &b.bundle) {
        (Some(x), Some(y)) => {
            let load = |f: &Path| Bundle::load(f).bad_input();
            Some(WorkflowDiff::of(&load(x)?, &load(y)?))
        }
        _ => None,
    };
    if checklists.is_none() && workflow.is_none() {
        return Err(CliError::BadInput(anyhow!(
            "A and B share no part to compare: A holds {}, B holds {}",
            parts(&a),
            parts(&b)
        )));
    }
    let origins = |s: &Side| -> Result<serde_json::Value, CliError> {
        let one = |p: &Option<PathBuf>, file: &str| -> Result<Option<String>, CliError> {
            p.as_ref()
                .map(|p| {
                    let f = if p.is_dir() { p.join(file) } else { p.clone() };
                    origin_line(&f, &args.domain)
                })
                .transpose()
        };
        let first_checklist = s.checklist.as_ref().and_then(|d| first_yaml(d));
        Ok(json!({
            "path": s.path.display().to_string(),
            "checklists": s.checklist.as_ref().map(|p| p.display().to_string()),
            "workflow": s.bundle.as_ref().map(|p| p.display().to_string()),
            "checklists_origin": one(&s.checklist, first_checklist.as_deref().unwrap_or(GENERAL_RULES_FILE))?,
            "workflow_origin": one(&s.bundle, BUNDLE_FILE)?,
        }))
    };
    let (oa, ob) = (origins(&a)?, origins(&b)?);
    let mut out = Output::stdout();
    match args.format {
        Format::Json => {
            let doc = json!({
                "domain": args.domain,
                "a": oa,
                "b": ob,
                "checklists": checklists.as_ref().map(|d| json!({"same": d.is_same(), "diff": d})),
                "workflow": workflow.as_ref().map(|d| json!({"same_shape": d.is_same_shape(), "diff": d})),
            });
            out.line(serde_json::to_string_pretty(&doc).expect("serialises"))?;
        }
        Format::Text => {
            for (name, o) in [("A", &oa), ("B", &ob)] {
                out.line(format!(
                    "{name}: {}",
                    o["path"].as_str().unwrap_or_default()
                ))?;
                for key in ["checklists_origin", "workflow_origin"] {
                    if let Some(line) = o[key].as_str() {
                        let part = key.trim_end_matches("_origin");
                        out.line(format!("  {part} {line}"))?;
                    }
                }
            }
            let held = (parts(&a), parts(&b));
            let checklists = checklists.as_ref().map(|d| (d.is_same(), d.lines()));
            part_text(&mut out, "checklists", "the same", checklists, held)?;
            let workflow = workflow.as_ref().map(|d| (d.is_same_shape(), d.lines()));
            part_text(&mut out, "workflow", "the same shape", workflow, held)?;
        }
    }
    out.finish()
}

/// One part's comparison as text: a blank line, whether the sides are `same` or the
/// differences (A → B) indented, or, when one side lacks the part, what each side `held`.
fn part_text(
    out: &mut Output,
    part: &str,
    same: &str,
    diff: Option<(bool, Vec<String>)>,
    held: (&str, &str),
) -> Result<(), CliError> {
    let Some((is_same, lines)) = diff else {
        return out.line(format!(
            "{part}: not compared (A holds {}, B holds {})",
            held.0, held.1
        ));
    };
    out.line("")?;
    out.line(if is_same {
        format!("{part}: {same}")
    } else {
        format!("{part} (A → B):")
    })?;
    for l in lines {
        out.line(format!("  {l}"))?;
    }
    Ok(())
}

fn parts(s: &Side) -> &'static str {
    match (s.checklist.is_some(), s.bundle.is_some()) {
        (true, true) => "checklists and a workflow",
        (true, false) => "checklists only",
        (false, true) => "a workflow only",
        (false, false) => "nothing",
    }
}

/// A checklist file of `dir` other than the general rules, for its origin line.
fn first_yaml(dir: &Path) -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".yaml") && n != GENERAL_RULES_FILE)
        .collect();
    names.sort();
    names.into_iter().next()
}
