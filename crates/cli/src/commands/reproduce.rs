//! `tauguard reproduce NAME`: run every config of one of the papers' headline experiments
//! (`configs/repro/<NAME>/`) through the same code path as `tauguard run`, report the runs
//! together (`<out>/report/`, as `tauguard report --out` writes it), and print the
//! experiment's table beside the published numbers with ours − published per cell; the table
//! is also written as `table.md`, `table.csv` (tidy) and `table.json`. `--offline` runs each
//! config's `sim` twin (see `RunConfig::offline`) and labels everything simulated.

use crate::exit::{Classify, CliError};
use crate::output::Output;
use crate::repro::{ConfigRun, Experiment, names};
use anyhow::anyhow;
use clap::Args;
use std::path::{Path, PathBuf};
use tauguard_metrics::{ReportOptions, load_inputs};
use tauguard_orchestrator::{RunOptions, Workload, build_runtime, format_cost, run as run_config};

#[derive(Args, Debug)]
pub(crate) struct ReproduceArgs {
    /// Experiment name (a directory of configs/repro/ holding manifest.toml).
    name: Option<String>,
    /// Run every config's offline twin: `sim` agent (the manifest's fault profile), user,
    /// judge and verifier. No key, no network; the output is labelled simulated.
    #[arg(long)]
    offline: bool,
    /// Output directory (default: results/<NAME> offline, results/<NAME>-real otherwise;
    /// with --num-tasks, the same name ending in `-quick`).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Continue interrupted runs: keep their complete records, redo the rest.
    #[arg(long)]
    resume: bool,
    /// List the experiments and exit.
    #[arg(long)]
    list: bool,
    /// Keep only the first N tasks of every config: a quick look (and the tests' way to keep
    /// offline reproductions short), not the paper's task set — the title says so.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(usize))]
    num_tasks: Option<usize>,
    /// τ²-bench data directory (default: run.data_dir, then $TAUGUARD_DATA_DIR, then data/tau2).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Bypass the on-disk response cache.
    #[arg(long)]
    no_cache: bool,
}

pub(crate) fn run(args: ReproduceArgs, project: Option<&Path>) -> Result<(), CliError> {
    let project_dir = crate::project::resolve(project).bad_input()?;
    let known = names(&project_dir).bad_input()?;
    let mut out = Output::stdout();
    if args.list {
        for name in &known {
            let exp = Experiment::load(&project_dir, name).bad_input()?;
            out.line(format_args!("{name}\t{}", exp.title()))?;
        }
        return out.finish();
    }
    let name = match args.name.clone() {
        Some(n) if known.contains(&n) => n,
        Some(n) => {
            return Err(CliError::BadInput(anyhow!(
                "unknown experiment `{n}`; known experiments: {}",
                known.join(", ")
            )));
        }
        None => {
            return Err(CliError::BadInput(anyhow!(
                "name an experiment (or pass --list); known experiments: {}",
                known.join(", ")
            )));
        }
    };
    let exp = Experiment::load(&project_dir, &name).bad_input()?;
    // A quick look (`--num-tasks`) never lands where the committed reproduction lives: it
    // would overwrite its tables, and the full run would then refuse the directory.
    let out_dir = args.out.clone().unwrap_or_else(|| {
        let mut dir = if args.offline {
            name.clone()
        } else {
            format!("{name}-real")
        };
        if args.num_tasks.is_some() {
            dir.push_str("-quick");
        }
        PathBuf::from("results").join(dir)
    });
    let (run_dirs, infra) = run_each_config(&args, &exp, &out_dir, &project_dir)?;
    let opts = ReportOptions::default();
    let mut runs = Vec::new();
    let mut all = Vec::new();
    for dir in &run_dirs {
        let records =
            load_inputs(std::slice::from_ref(dir)).map_err(super::report::metrics_error)?;
        runs.push(ConfigRun {
            report: tauguard_metrics::report(&records, &opts),
            summaries: tauguard_metrics::summarise(&records),
        });
        all.extend(records);
    }
    // The floors as `report` computes them, on the domains and tasks the runs played.
    let summaries: Vec<_> = runs.iter().flat_map(|r| r.summaries.clone()).collect();
    let book = super::procedure::load_book(&project_dir)?;
    let task_sets = exp
        .configs
        .iter()
        .filter_map(|(_, _, cfg)| Some((cfg.run.domain.clone(), cfg.run.task_set.clone()?)))
        .collect();
    let (floors, warnings) = super::floors::compute_in_task_sets(
        &summaries,
        args.data_dir.as_deref(),
        &project_dir,
        &book,
        &task_sets,
    );
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    let together = tauguard_metrics::report(&all, &opts).with_floors(floors.clone());
    let simulated = args.offline || together.simulated();
    tauguard_metrics::write_outputs(&together, &out_dir.join("report"))
        .map_err(super::report::metrics_error)?;
    let mut title = exp.title();
    if let Some(n) = args.num_tasks {
        title.push_str(&format!(
            " — first {n} tasks of each config only, not the paper's task set"
        ));
    }
    let table = exp.table_titled(&title, &runs, &floors, simulated);
    let md = write_tables(&table, &out_dir)?;
    out.line(md)?;
    out.finish()?;
    if infra == 0 {
        Ok(())
    } else {
        Err(CliError::Failures(anyhow!(
            "{infra} simulations ended in an infrastructure error; their records under `{}` say why",
            out_dir.join("runs").display()
        )))
    }
}

/// Runs each config of `exp` into `<out_dir>/runs/<stem>`, resuming as `args` say; the run
/// directories and how many simulations ended in an infrastructure error.
fn run_each_config(
    args: &ReproduceArgs,
    exp: &Experiment,
    out_dir: &Path,
    project_dir: &Path,
) -> Result<(Vec<PathBuf>, usize), CliError> {
    let mut run_dirs = Vec::new();
    let mut infra = 0;
    for (entry, stem, mut cfg) in exp.run_configs(args.offline) {
        if let Some(n) = args.num_tasks {
            cfg.run.num_tasks = Some(cfg.run.num_tasks.map_or(n, |m| m.min(n)));
        }
        super::run::apply_catalog(&mut cfg, &entry.file, None, project_dir)?;
        let dir = out_dir.join("runs").join(&stem);
        let rt = build_runtime(Workload::of(&cfg)).internal()?;
        let opts = RunOptions {
            out_dir: Some(dir.clone()),
            data_dir: args.data_dir.clone(),
            resume: args.resume,
            no_cache: args.no_cache,
            project_dir: Some(project_dir.to_path_buf()),
            progress: Some(crate::progress::on_stderr()),
            ..Default::default()
        };
        let s = rt
            .block_on(run_config(cfg, opts))
            .map_err(super::run::run_error)?;
        eprintln!(
            "{stem} ({}): {} simulations ({} already complete), {} succeeded, {} infrastructure errors, cost {}",
            entry.agent,
            s.planned,
            s.skipped,
            s.successes,
            s.infra_errors,
            format_cost(s.cost)
        );
        infra += s.infra_errors;
        super::run::write_sidecar(&dir.join("records.jsonl"));
        run_dirs.push(dir);
    }
    Ok((run_dirs, infra))
}

/// Writes the table as `table.md`, `table.csv` and `table.json` under `out_dir`; the Markdown.
fn write_tables(
    table: &tauguard_metrics::repro::ReproTable,
    out_dir: &Path,
) -> Result<String, CliError> {
    let md = table.to_markdown();
    for (file, text) in [
        ("table.md", md.as_str()),
        ("table.csv", &table.to_csv()),
        ("table.json", &table.to_json()),
    ] {
        let path = out_dir.join(file);
        std::fs::write(&path, text)
            .map_err(|e| anyhow!("cannot write `{}`: {e}", path.display()))
            .bad_input()?;
        eprintln!("wrote {}", path.display());
    }
    Ok(md)
}
