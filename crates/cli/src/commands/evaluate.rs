//! `tauguard evaluate INPUT`: re-score an upstream `results.json` or tauguard records with
//! tauguard's evaluator and report the simulations whose stored reward disagrees (upstream's
//! `evaluate-trajs` counterpart), with each simulation's process view (`evaluate_process.rs`).
//! Exit 1 when any reward disagrees.

use super::evaluate_process::SimulationProcess;
use crate::exit::{Classify, CliError};
use crate::output::Output;
use anyhow::{Context, anyhow};
use clap::{Args, ValueEnum};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tauguard_core::record::SimulationRecord;
use tauguard_core::{Task, count};
use tauguard_env::{DataDir, DomainData};
use tauguard_llm::{ModelFactory, ModelSpec, RoleModel};
use tauguard_metrics::LoadOptions;
use tauguard_orchestrator::{EvaluationReport, Judge, Replay, rescore};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FormatArg {
    Text,
    Json,
}

#[derive(Args, Debug)]
pub(crate) struct EvaluateArgs {
    /// A run directory, a records.jsonl file or a τ²-bench results.json file.
    input: PathBuf,
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
    /// Skip (and count) simulations whose reward depends on NL assertions instead of judging.
    #[arg(long)]
    skip_nl: bool,
    /// NL-assertion judge as `PROVIDER/MODEL` (default: `sim/sim-judge`, a run's default).
    #[arg(long, default_value = "sim/sim-judge", conflicts_with = "skip_nl")]
    judge: String,
    /// TOML file with an `[llm]`-shaped table (providers, prices, cache) for the judges.
    #[arg(long)]
    llm_config: Option<PathBuf>,
    /// Judge of the process view's dialogue predicates as `PROVIDER/MODEL` (default: the
    /// offline stand-in; see docs/process-validity.md).
    #[arg(long)]
    process_judge: Option<String>,
    /// τ²-bench data directory (databases; default $TAUGUARD_DATA_DIR, then data/tau2).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Refuse a trajectory whose replayed mutating call returns other content than the stored
    /// tool message (upstream's live evaluation). Default: replay leniently, as upstream's
    /// `evaluate-trajs` does — keep the mutation, list the drift, score.
    #[arg(long)]
    strict_replay: bool,
    /// Score a results.json against the data directory's current task definitions instead of
    /// the ones embedded in the file (upstream's `--fresh-tasks`); tasks the data directory
    /// lacks keep their embedded definition.
    #[arg(long)]
    fresh_tasks: bool,
}

pub(crate) fn run(args: EvaluateArgs, project: Option<&Path>) -> Result<(), CliError> {
    let judge = judge(&args)?;
    let file = input_file(&args.input)?;
    let records = tauguard_metrics::load_input(&file, &LoadOptions::default())
        .map_err(|e| CliError::BadInput(e.into()))?;
    let results_file = file.extension().is_some_and(|e| e == "json");
    let file_tasks = if results_file {
        results_tasks(&file)?
    } else {
        HashMap::new()
    };
    let replay = if args.strict_replay {
        Replay::Strict
    } else {
        Replay::Lenient
    };
    let mut by_domain: Vec<(String, Vec<SimulationRecord>)> = Vec::new();
    for r in records {
        match by_domain.iter_mut().find(|(d, _)| *d == r.domain) {
            Some((_, v)) => v.push(r),
            None => by_domain.push((r.domain.clone(), vec![r])),
        }
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
        .internal()?;
    let mut report = EvaluationReport {
        replay: if args.strict_replay {
            "strict"
        } else {
            "lenient"
        }
        .into(),
        tasks: match (results_file, args.fresh_tasks) {
            (true, false) => {
                "the tasks embedded in the results file (as upstream's evaluate-trajs)"
            }
            (true, true) => {
                "the data directory's current tasks (--fresh-tasks); tasks it lacks keep the file's"
            }
            (false, _) => "the data directory's current tasks (records do not embed their tasks)",
        }
        .into(),
        ..Default::default()
    };
    let mut kept_embedded = 0;
    let mut data_dir = None;
    for (domain, records) in &by_domain {
        if tauguard_env::registry::get(domain).is_none() {
            report.skip_unknown_domain(domain, records.len());
            continue;
        }
        if data_dir.is_none() {
            data_dir = Some(DataDir::resolve(args.data_dir.as_deref()).bad_input()?);
        }
        let data =
            DomainData::load(data_dir.as_ref().expect("resolved above"), domain).bad_input()?;
        let current = data.tasks.iter().map(|t| (t.id.clone(), t.clone()));
        let tasks: HashMap<String, Task> = if args.fresh_tasks {
            let mut tasks = file_tasks.clone();
            kept_embedded += tasks
                .keys()
                .filter(|id| !data.tasks.iter().any(|t| &t.id == *id))
                .count();
            tasks.extend(current);
            tasks
        } else {
            let mut tasks: HashMap<String, Task> = current.collect();
            tasks.extend(file_tasks.clone());
            tasks
        };
        rt.block_on(rescore(records, &data, &tasks, &judge, replay, &mut report));
    }
    if kept_embedded > 0 {
        report.tasks.push_str(&format!(
            " ({kept_embedded} not in the data directory kept their embedded definition)"
        ));
    }
    let mut warnings = Vec::new();
    let book = super::procedure::book_or_warn(project, &mut warnings)?;
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    let process_judge =
        super::process_judge::build(args.process_judge.as_deref(), args.llm_config.as_deref())?;
    let process: Vec<SimulationProcess> = by_domain
        .iter()
        .flat_map(|(_, rs)| super::evaluate_process::simulations(rs, &book, process_judge.as_ref()))
        .collect();
    print(&report, &process, args.format)?;
    if report.disagree == 0 {
        Ok(())
    } else {
        Err(CliError::Failures(anyhow!(
            "{} of {} {} with the rewards stored in `{}`",
            report.disagree,
            count(report.evaluated, "re-scored simulation"),
            if report.disagree == 1 {
                "disagrees"
            } else {
                "disagree"
            },
            file.display()
        )))
    }
}

fn judge(args: &EvaluateArgs) -> Result<Judge, CliError> {
    if args.skip_nl {
        return Ok(Judge::Skip);
    }
    let (provider, model) = super::compile::model_arg("--judge", &args.judge)?;
    let llm = super::compile::llm_config(args.llm_config.as_deref())?;
    let judge = ModelFactory::new(llm)
        .bad_input()?
        .role_model(&ModelSpec::new(provider, model))
        .with_context(|| format!("--judge `{}`", args.judge))
        .bad_input()?;
    Ok(match judge {
        RoleModel::Sim => Judge::Sim,
        RoleModel::Built(chat) => Judge::Model(chat),
    })
}

/// The file an INPUT names, as `report` resolves it.
fn input_file(input: &Path) -> Result<PathBuf, CliError> {
    if !input.is_dir() {
        return Ok(input.to_path_buf());
    }
    ["records.jsonl", "results.json"]
        .iter()
        .map(|n| input.join(n))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            CliError::BadInput(anyhow!(
                "`{}` holds neither records.jsonl nor results.json",
                input.display()
            ))
        })
}

/// The task objects an upstream results file carries: what its simulations were scored on.
fn results_tasks(file: &Path) -> Result<HashMap<String, Task>, CliError> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("cannot read `{}`", file.display()))
        .bad_input()?;
    let doc: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("`{}`", file.display()))
        .bad_input()?;
    let mut out = HashMap::new();
    for (i, t) in doc["tasks"].as_array().into_iter().flatten().enumerate() {
        let task: Task = serde_json::from_value(t.clone())
            .with_context(|| format!("`{}`: tasks[{i}]", file.display()))
            .bad_input()?;
        out.insert(task.id.clone(), task);
    }
    Ok(out)
}

fn print(
    report: &EvaluationReport,
    process: &[SimulationProcess],
    format: FormatArg,
) -> Result<(), CliError> {
    let mut out = Output::stdout();
    match format {
        FormatArg::Json => {
            let mut v = serde_json::to_value(report).internal()?;
            v["simulations"] = serde_json::to_value(process).internal()?;
            out.line(serde_json::to_string_pretty(&v).internal()?)?
        }
        FormatArg::Text => {
            if !process.is_empty() {
                out.line(format_args!(
                    "process view: {} of {} process-valid by their domain's procedure spec \
                     (first deviations: --format json)",
                    process.iter().filter(|p| p.process_valid).count(),
                    count(process.len(), "evaluated simulation")
                ))?;
            }
            let skipped: Vec<String> = report
                .skipped_by
                .iter()
                .map(|(reason, n)| {
                    format!("{n} {}", serde_json::json!(reason).as_str().unwrap_or("?"))
                })
                .collect();
            out.line(format_args!(
                "{}: {} evaluated, {} agree, {} disagree, {} skipped{}",
                count(report.n_simulations, "simulation"),
                report.evaluated,
                report.agree,
                report.disagree,
                report.skipped,
                if skipped.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", skipped.join(", "))
                }
            ))?;
            out.line(format_args!(
                "replay: {}{}; tasks: {}",
                report.replay,
                if report.replay == "lenient" {
                    " (as upstream's evaluate-trajs: a drifted call keeps its mutation; --strict-replay refuses it)"
                } else {
                    ""
                },
                report.tasks
            ))?;
            if report.drifted_simulations > 0 {
                out.line(format_args!(
                    "{} replayed with drift ({}):",
                    count(report.drifted_simulations, "simulation"),
                    count(report.drifts.len(), "call")
                ))?;
            }
            for d in &report.drifts {
                let (recorded, replayed) = clip_pair(&d.recorded, &d.replayed);
                out.line(format_args!(
                    "drift: task {} trial {} ({}): `{}` ({}) stored {} | replayed {}",
                    d.task_id, d.trial, d.guard, d.tool, d.call_id, recorded, replayed
                ))?;
            }
            if !report.unknown_domains.is_empty() {
                out.line(format_args!(
                    "unknown domains (not re-scored): {}",
                    report.unknown_domains.join(", ")
                ))?;
            }
            for d in &report.disagreements {
                out.line(format_args!(
                    "disagree: task {} trial {} ({}): stored {}, recomputed {}; breakdown {}{}",
                    d.task_id,
                    d.trial,
                    d.guard,
                    d.stored,
                    d.recomputed
                        .map_or_else(|| "none".to_string(), |r| r.to_string()),
                    d.breakdown,
                    d.error
                        .as_deref()
                        .map(|e| format!("; error: {e}"))
                        .unwrap_or_default()
                ))?;
            }
        }
    }
    out.finish()
}

/// Characters shown of a drifted tool output, and of the common text before the first
/// difference when that lies past them.
const CLIP: usize = 160;
const CONTEXT: usize = 40;

/// A drift's recorded and replayed outputs on one line each, at most [`CLIP`] characters. When
/// they first differ past what that shows (a long message whose end changed, say a pydantic
/// error's documentation link), both start [`CONTEXT`] characters before the difference, after
/// an ellipsis, so the line shows what drifted.
fn clip_pair(recorded: &str, replayed: &str) -> (String, String) {
    let (a, b) = (recorded.replace('\n', " "), replayed.replace('\n', " "));
    let same = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let skip = if same + CONTEXT / 2 >= CLIP {
        same - CONTEXT
    } else {
        0
    };
    (clip_from(&a, skip), clip_from(&b, skip))
}

fn clip_from(text: &str, skip: usize) -> String {
    let lead = if skip > 0 { "…" } else { "" };
    let rest = match text.char_indices().nth(skip) {
        Some((i, _)) => &text[i..],
        None => "",
    };
    match rest.char_indices().nth(CLIP) {
        Some((i, _)) => format!("{lead}{}…", &rest[..i]),
        None => format!("{lead}{rest}"),
    }
}

#[cfg(test)]
mod tests {
    use super::clip_pair;

    #[test]
    fn drift_lines_show_the_first_difference() {
        assert_eq!(
            clip_pair("a\nb", "a\nc"),
            ("a b".to_string(), "a c".to_string())
        );
        let head = "x".repeat(200);
        let (a, b) = clip_pair(&format!("{head}2.10/v"), &format!("{head}2.12/v"));
        assert_eq!(a, format!("…{}2.10/v", "x".repeat(37)));
        assert_eq!(b, format!("…{}2.12/v", "x".repeat(37)));
        let (a, _) = clip_pair(&"y".repeat(300), "z");
        assert_eq!(a.chars().count(), 161, "{a}");
    }
}
