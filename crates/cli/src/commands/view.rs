//! `tauguard view`: builds the static viewer site of one or more runs (`tauguard_view`), with
//! the report's numbers and — like `report` — the floors and the process view beside them
//! (`--process-judge` as in `report`), then optionally serves it on loopback.

use crate::exit::CliError;
use crate::output::Output;
use clap::Args;
use std::path::{Path, PathBuf};
use tauguard_core::count;
use tauguard_metrics::ReportOptions;
use tauguard_view::ViewError;

#[derive(Args, Debug)]
pub(crate) struct ViewArgs {
    /// Run directories, records.jsonl files or τ²-bench results.json files.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Site directory (created; an earlier site there is replaced, anything else refused).
    #[arg(long, default_value = "tauguard-view")]
    out: PathBuf,
    /// Serve the site on 127.0.0.1 after building it, until interrupted.
    #[arg(long)]
    serve: bool,
    /// Port for --serve (0 = any free port; the URL is printed).
    #[arg(long, default_value_t = 8765, requires = "serve")]
    port: u16,
    /// Guard name of the no-guard configuration deltas are taken against.
    #[arg(long)]
    baseline: Option<String>,
    /// Leave out the refuse-all / gold-no-procedure floors.
    #[arg(long)]
    no_floors: bool,
    /// τ²-bench data directory for the floors (default: $TAUGUARD_DATA_DIR, then data/tau2).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Flag a cell where more than this share (0 to 1) of guard verdicts or guide runs came
    /// from the fail mode, as `report --fail-mode-threshold`.
    #[arg(long, default_value_t = tauguard_metrics::DEFAULT_FAIL_MODE_THRESHOLD,
          value_parser = super::report::share)]
    fail_mode_threshold: f64,
    /// Judge of the process view's dialogue predicates as `PROVIDER/MODEL` (default: the
    /// offline stand-in; see docs/process-validity.md), as `report --process-judge`.
    #[arg(long)]
    process_judge: Option<String>,
    /// TOML file with an `[llm]`-shaped table (providers, prices, cache) for --process-judge.
    #[arg(long, requires = "process_judge")]
    llm_config: Option<PathBuf>,
}

/// Inputs and `--out` are the user's; a port in use is the user's choice too.
fn view_error(e: ViewError) -> CliError {
    match e {
        ViewError::Io { .. }
        | ViewError::BadRecord { .. }
        | ViewError::Input(_)
        | ViewError::OutNotASite { .. }
        | ViewError::Empty { .. }
        | ViewError::Listen { .. } => CliError::BadInput(e.into()),
    }
}

pub(crate) fn run(args: ViewArgs, project: Option<&Path>) -> Result<(), CliError> {
    let mut warnings = Vec::new();
    let book = super::procedure::book_or_warn(project, &mut warnings)?;
    let judge =
        super::process_judge::build(args.process_judge.as_deref(), args.llm_config.as_deref())?;
    let process = (!book.is_empty()).then_some(tauguard_view::ProcessView {
        book: &book,
        judge: judge.as_ref(),
    });
    let scan = tauguard_view::scan(&args.inputs, &args.out, process).map_err(view_error)?;
    let floors = if args.no_floors {
        None
    } else {
        match crate::project::resolve(project) {
            Ok(project_dir) => {
                let (floors, w) = super::floors::compute(
                    scan.summaries(),
                    args.data_dir.as_deref(),
                    &project_dir,
                    &book,
                );
                warnings.extend(w);
                Some(floors)
            }
            Err(e) => {
                warnings.push(format!("floors skipped: {e:#}"));
                None
            }
        }
    };
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    let opts = ReportOptions {
        baseline_guard: super::report::baseline_of(args.baseline.as_deref(), scan.summaries())?,
        fail_mode_threshold: args.fail_mode_threshold,
        ..ReportOptions::default()
    };
    let built = scan.finish(&opts, floors, warnings).map_err(view_error)?;
    let index = built.dir.join("index.html");
    let mut out = Output::stdout();
    out.line(format!(
        "wrote {} ({} in {}; {} bytes of simulation data, index {} bytes)",
        index.display(),
        count(built.simulations, "simulation"),
        count(built.cells, "cell"),
        built.data_bytes,
        built.index_bytes
    ))?;
    if !args.serve {
        return out.finish();
    }
    let server = tauguard_view::Server::bind(&built.dir, args.port).map_err(view_error)?;
    out.line(format!(
        "serving http://127.0.0.1:{}/ (Ctrl-C stops)",
        server.port()
    ))?;
    out.finish()?;
    tauguard_view::serve_forever(server)
}
