//! `tauguard report` and `tauguard compare`: paper tables, CSV, plots and McNemar blocks from
//! records (tauguard runs or upstream results.json files), read as per-simulation summaries —
//! from a run's fresh columnar sidecar when there is one.

use crate::exit::CliError;
use crate::output::Output;
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};
use tauguard_metrics::{
    BootstrapOptions, CompareOptions, Format, InfraPolicy, LabelOptions, LoadOptions, MetricsError,
    Oracle, OutputOptions, Parts, ReportOptions, Selector, Sources, Strata,
};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FormatArg {
    Md,
    Csv,
    Latex,
    Json,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Md => Format::Md,
            FormatArg::Csv => Format::Csv,
            FormatArg::Latex => Format::Latex,
            FormatArg::Json => Format::Json,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum OracleArg {
    Slice,
    Prerequisite,
    Both,
}

#[derive(Args, Debug)]
pub(crate) struct ReportArgs {
    /// Run directories, records.jsonl files or τ²-bench results.json files.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "md")]
    format: FormatArg,
    /// Also write every table as tidy CSV (with schema.json; and Markdown, LaTeX, JSON) plus
    /// figures (PNG, SVG, caption) here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// With --out: write only the figures.
    #[arg(long, requires = "out", conflicts_with = "tables_only")]
    figures_only: bool,
    /// With --out: write only the tables (Markdown, LaTeX, JSON, CSV, schema.json).
    #[arg(long, requires = "out")]
    tables_only: bool,
    /// Count infrastructure errors as failures instead of excluding them.
    #[arg(long)]
    infra_as_failure: bool,
    /// Violation oracle for calls without injected-fault labels.
    #[arg(long, value_enum, default_value = "slice")]
    oracle: OracleArg,
    /// Guard name of the no-guard configuration deltas are taken against (default
    /// `baseline`); a name no group of the inputs has is an error.
    #[arg(long)]
    baseline: Option<String>,
    /// Accept records of one run name written under different configurations (their cells
    /// are still reported apart; only the refusal is lifted).
    #[arg(long)]
    pool: bool,
    /// The largest k the tables report (Pass^k for k = 1..=N, N ≥ 1).
    #[arg(long, default_value_t = tauguard_metrics::DEFAULT_MAX_K,
          value_parser = clap::value_parser!(u32).range(1..))]
    max_k: u32,
    /// Judge of the process view's dialogue predicates as `PROVIDER/MODEL` (default: the
    /// offline stand-in; see docs/process-validity.md).
    #[arg(long)]
    process_judge: Option<String>,
    /// TOML file with an `[llm]`-shaped table (providers, prices, cache) for --process-judge.
    #[arg(long, requires = "process_judge")]
    llm_config: Option<PathBuf>,
    /// Leave out the refuse-all / gold-no-procedure floors (computed offline from the data).
    #[arg(long)]
    no_floors: bool,
    /// τ²-bench data directory for the floors (default: $TAUGUARD_DATA_DIR, then data/tau2).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Flag a cell (a warning above the tables) where more than this share (0 to 1) of guard
    /// verdicts or guide runs came from the fail mode instead of the model.
    #[arg(long, default_value_t = tauguard_metrics::DEFAULT_FAIL_MODE_THRESHOLD,
          value_parser = share)]
    fail_mode_threshold: f64,
}

/// A share in [0, 1].
pub(crate) fn share(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        Ok(x) => Err(format!("{x} is not a share between 0 and 1")),
        Err(e) => Err(e.to_string()),
    }
}

#[derive(Args, Debug)]
pub(crate) struct CompareArgs {
    /// Two inputs (A then B), or with --a/--b any number of inputs pooled and split by the
    /// selectors (run directories, records.jsonl or results.json files).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Side A as `key=value[,key=value…]` over record fields (domain, guard, agent, user,
    /// run, cell, task) or cell settings (verifier.model, guard.strict, …).
    #[arg(long = "a", requires = "side_b")]
    side_a: Option<String>,
    /// Side B, as --a.
    #[arg(long = "b", requires = "side_a")]
    side_b: Option<String>,
    #[arg(long, value_enum, default_value = "md")]
    format: FormatArg,
    #[arg(long)]
    infra_as_failure: bool,
    /// Strata of the pooled McNemar test.
    #[arg(long, value_enum, default_value = "domain")]
    strata: StrataArg,
    /// Bootstrap resamples for the Pass^k difference CIs.
    #[arg(long, default_value_t = 10_000)]
    resamples: usize,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Also write both tables as tidy CSV (with schema.json) and the forest plot of the Pass^k
    /// differences (PNG, SVG, caption) here.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum StrataArg {
    Domain,
    Agent,
}

fn infra(as_failure: bool) -> InfraPolicy {
    if as_failure {
        InfraPolicy::AsFailure
    } else {
        InfraPolicy::Exclude
    }
}

/// Inputs, `--out` and the records in them are the user's; only drawing a plot or encoding a
/// sidecar is ours.
pub(crate) fn metrics_error(e: MetricsError) -> CliError {
    match e {
        MetricsError::Io { .. }
        | MetricsError::BadRecord { .. }
        | MetricsError::BadResults { .. }
        | MetricsError::UnknownInput { .. }
        | MetricsError::BadDomainTable(_)
        | MetricsError::NoPairs(_)
        | MetricsError::BadSelector { .. }
        | MetricsError::DifferentDomains { .. }
        | MetricsError::AmbiguousSide { .. }
        | MetricsError::MixedConfigs { .. }
        | MetricsError::Csv { .. } => CliError::BadInput(e.into()),
        MetricsError::Plot { .. } | MetricsError::Sidecar { .. } => CliError::Internal(e.into()),
    }
}

/// The baseline guard name: `baseline` unless `--baseline` names another, which must be the
/// guard of some record — a typo would otherwise leave every Δ empty without a word.
pub(crate) fn baseline_of(
    named: Option<&str>,
    records: &[tauguard_metrics::SimSummary],
) -> Result<String, CliError> {
    let Some(name) = named else {
        return Ok("baseline".into());
    };
    let guards: std::collections::BTreeSet<&str> =
        records.iter().map(|r| r.cell.guard.as_str()).collect();
    if guards.contains(name) || records.is_empty() {
        return Ok(name.to_string());
    }
    Err(CliError::BadInput(anyhow::anyhow!(
        "--baseline `{name}`: no record of the inputs has that guard; they hold {}",
        guards.into_iter().collect::<Vec<_>>().join(", ")
    )))
}

pub(crate) fn report(args: ReportArgs, project: Option<&Path>) -> Result<(), CliError> {
    let mut records = tauguard_metrics::load_summaries(&args.inputs, &LoadOptions::default())
        .map_err(metrics_error)?;
    let mut process_warnings = Vec::new();
    let book = super::procedure::book_or_warn(project, &mut process_warnings)?;
    if !book.is_empty() {
        let judge =
            super::process_judge::build(args.process_judge.as_deref(), args.llm_config.as_deref())?;
        let index = tauguard_metrics::procedure::process_index(
            &args.inputs,
            &LoadOptions::default(),
            &book,
            judge.as_ref(),
        )
        .map_err(metrics_error)?;
        tauguard_metrics::procedure::attach(&mut records, &index);
    }
    if !args.pool {
        tauguard_metrics::check_single_config_summaries(&records).map_err(metrics_error)?;
    }
    let baseline_guard = baseline_of(args.baseline.as_deref(), &records)?;
    let opts = ReportOptions {
        infra: infra(args.infra_as_failure),
        labels: LabelOptions {
            oracle: match args.oracle {
                OracleArg::Slice => Oracle::Slice,
                OracleArg::Prerequisite => Oracle::Prerequisite,
                OracleArg::Both => Oracle::Both,
            },
            ..LabelOptions::default()
        },
        baseline_guard,
        max_k: args.max_k,
        fail_mode_threshold: args.fail_mode_threshold,
        ..ReportOptions::default()
    };
    let spending = tauguard_metrics::spending(&records, &args.inputs).map_err(metrics_error)?;
    let mut report = tauguard_metrics::report_summaries(&records, &opts)
        .with_spending(spending)
        .with_procedure_levels(&book);
    report.warnings.extend(process_warnings);
    if !args.no_floors {
        // The floors need the project's prompts; without a project they are skipped, never
        // the report.
        match crate::project::resolve(project) {
            Ok(project_dir) => {
                let (floors, warnings) =
                    super::floors::compute(&records, args.data_dir.as_deref(), &project_dir, &book);
                report = report.with_floors(floors);
                report.warnings.extend(warnings);
            }
            Err(e) => report.warnings.push(format!("floors skipped: {e:#}")),
        }
    }
    flag_incomplete_merges(&args.inputs, &mut report)?;
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    let mut out = Output::stdout();
    out.line(report.render(args.format.into()))?;
    out.finish()?;
    if let Some(dir) = args.out {
        let options = OutputOptions {
            parts: if args.figures_only {
                Parts::FiguresOnly
            } else if args.tables_only {
                Parts::TablesOnly
            } else {
                Parts::All
            },
            sources: Sources::from_summaries(&records),
        };
        let written =
            tauguard_metrics::write_outputs_with(&report, &dir, &options).map_err(metrics_error)?;
        for path in written {
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(())
}

/// An input that is a merge written with `--allow-incomplete`, and still lacking planned
/// simulations, gets a warning naming what is missing and a caveat in every table's title.
fn flag_incomplete_merges(
    inputs: &[PathBuf],
    report: &mut tauguard_metrics::Report,
) -> Result<(), CliError> {
    let mut caveats = Vec::new();
    for input in inputs {
        let dir = if input.is_dir() {
            input.as_path()
        } else {
            match input.parent() {
                Some(p) if input.file_name().is_some_and(|n| n == "records.jsonl") => p,
                _ => continue,
            }
        };
        let gaps =
            tauguard_orchestrator::open_gaps(dir).map_err(|e| CliError::BadInput(e.into()))?;
        if let Some(g) = gaps {
            report.warnings.push(format!(
                "`{}` is an incomplete merge: {}; `tauguard run CONFIG --resume --out {}` runs what is missing",
                dir.display(),
                g.describe(),
                dir.display()
            ));
            caveats.push(format!(
                "incomplete: {} of {} planned simulations missing",
                tauguard_orchestrator::thousands(g.missing),
                tauguard_orchestrator::thousands(g.planned)
            ));
        }
    }
    if !caveats.is_empty() {
        report.caveat = Some(caveats.join("; "));
    }
    Ok(())
}

pub(crate) fn compare(args: CompareArgs) -> Result<(), CliError> {
    let (a, b, label_a, label_b) = match (&args.side_a, &args.side_b) {
        (Some(sa), Some(sb)) => {
            let all = tauguard_metrics::load_summaries(&args.inputs, &LoadOptions::default())
                .map_err(metrics_error)?;
            let pick = |text: &str| -> Result<Vec<_>, CliError> {
                let sel = Selector::parse(text).map_err(metrics_error)?;
                let side = sel.select(&all).map_err(metrics_error)?;
                if side.is_empty() {
                    return Err(CliError::BadInput(anyhow::anyhow!(
                        "selector `{text}` matches no record of the inputs"
                    )));
                }
                Ok(side)
            };
            (pick(sa)?, pick(sb)?, sa.clone(), sb.clone())
        }
        _ => {
            let [pa, pb] = args.inputs.as_slice() else {
                return Err(CliError::BadInput(anyhow::anyhow!(
                    "compare takes two inputs (A then B), or --a and --b selectors over any inputs; got {} input(s)",
                    args.inputs.len()
                )));
            };
            let load = |p: &PathBuf| {
                tauguard_metrics::load_summaries(std::slice::from_ref(p), &LoadOptions::default())
                    .map_err(metrics_error)
            };
            (
                load(pa)?,
                load(pb)?,
                pa.display().to_string(),
                pb.display().to_string(),
            )
        }
    };
    let opts = CompareOptions {
        infra: infra(args.infra_as_failure),
        strata: match args.strata {
            StrataArg::Domain => Strata::Domain,
            StrataArg::Agent => Strata::Agent,
        },
        bootstrap: BootstrapOptions {
            resamples: args.resamples,
            seed: args.seed,
            ..BootstrapOptions::default()
        },
        label_a,
        label_b,
    };
    let cmp = tauguard_metrics::compare_summaries(&a, &b, &opts).map_err(metrics_error)?;
    let mut out = Output::stdout();
    out.line(cmp.render(args.format.into()))?;
    out.finish()?;
    if let Some(dir) = args.out {
        let (sa, sb) = (Sources::from_summaries(&a), Sources::from_summaries(&b));
        for path in cmp.write_outputs(&dir, &sa, &sb).map_err(metrics_error)? {
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(())
}
