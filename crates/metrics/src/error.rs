//! The one error type of this crate. Every variant that comes from an input names the file
//! (and the line, where there is one), so a malformed record is found without a debugger.
//! A cause that is an error keeps it as its `#[source]`: the message names what failed and
//! where, and the binary's `{err:#}` (or `tauguard_core::Chain`) adds the cause once.

use plotters::drawing::DrawingAreaErrorKind;
use plotters::prelude::{BitMapBackend, DrawingBackend, SVGBackend};
use std::path::PathBuf;
use tauguard_core::termination::Termination;

/// Anything that stops loading inputs, computing a comparison or writing outputs.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    /// A file or directory could not be read or written.
    #[error("{}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        cause: std::io::Error,
    },
    /// A line of a `records.jsonl` is not a valid simulation record.
    #[error("{}:{line}: not a simulation record", path.display())]
    BadRecord {
        path: PathBuf,
        line: usize,
        #[source]
        cause: RecordCause,
    },
    /// A τ²-bench `results.json` does not have upstream's layout.
    /// `location` is `line L column C` for JSON syntax and shape errors, or a path such as
    /// `simulations[3].messages[5]`.
    #[error("{}: {location}: not a τ²-bench results file", path.display())]
    BadResults {
        path: PathBuf,
        location: String,
        #[source]
        cause: ResultsCause,
    },
    /// An input path is neither a run directory, a `.jsonl` nor a `.json` file.
    #[error("{}: not a run directory, a records `.jsonl` or a τ²-bench `results.json`\nhint: a run directory holds `records.jsonl` (or `results.json`)", path.display())]
    UnknownInput { path: PathBuf },
    /// A domain table (`domains.json` shape) is malformed.
    #[error("domain table")]
    BadDomainTable(#[source] DomainTableCause),
    /// `compare` found no (task, trial) present in both inputs.
    #[error("no paired simulations: {0}")]
    NoPairs(Unpaired),
    /// Writing a CSV table failed.
    #[error("{}", path.display())]
    Csv {
        path: PathBuf,
        #[source]
        cause: csv::Error,
    },
    /// A `compare` selector is malformed or names a key no record has.
    #[error("selector `{selector}`")]
    BadSelector {
        selector: String,
        #[source]
        finding: SelectorFinding,
    },
    /// The two sides of `compare` share no domain.
    #[error("cannot compare {a} ({a_domains}) with {b} ({b_domains}): they share no domain")]
    DifferentDomains {
        a: String,
        b: String,
        a_domains: String,
        b_domains: String,
    },
    /// A side of `compare` holds several configurations that would be paired with one.
    #[error(
        "{side} holds {n} configurations for {group}: {cells}\nhint: select one side per configuration, e.g. --a guard=baseline --b guard=pg-checklist"
    )]
    AmbiguousSide {
        side: String,
        group: String,
        n: usize,
        cells: String,
    },
    /// Records of one run name come from different configurations.
    #[error(
        "run `{run}` holds records of two configurations (config hashes {a} and {b}); they would be pooled\nhint: report them separately, or pass --pool to pool them deliberately"
    )]
    MixedConfigs { run: String, a: String, b: String },
    /// A columnar sidecar could not be written (or read back when asked for explicitly).
    #[error("{}: sidecar", path.display())]
    Sidecar {
        path: PathBuf,
        #[source]
        cause: SidecarCause,
    },
    /// Drawing a plot failed.
    #[error("{}: cannot draw plot", path.display())]
    Plot {
        path: PathBuf,
        #[source]
        cause: PlotCause,
    },
}

/// The two sides of a comparison that pairs nothing, with their scored simulations.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{a} and {b} share no scored (task, trial); {scored_a} vs {scored_b} scored simulations")]
pub struct Unpaired {
    pub a: String,
    pub b: String,
    pub scored_a: u64,
    pub scored_b: u64,
}

/// Why a file is not a τ²-bench results file.
#[derive(Debug, thiserror::Error)]
pub enum ResultsCause {
    /// Its JSON does not parse, or a value does not have upstream's shape.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// The file does not open with a JSON object.
    #[error("expected an object with `info`, `tasks` and `simulations`")]
    NotAnObject,
    /// The top-level object lacks one of upstream's keys.
    #[error("missing field `{0}`")]
    MissingField(&'static str),
    /// A simulation names a task the file does not define.
    #[error("task `{0}` is not in `tasks`")]
    UnknownTask(String),
}

/// Why a domain table is malformed: its JSON, or one domain's entry (named).
#[derive(Debug, thiserror::Error)]
pub enum DomainTableCause {
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error("domain `{domain}`")]
    Domain {
        domain: String,
        #[source]
        cause: serde_json::Error,
    },
}

/// What is wrong with a `compare` selector: findings about its text, with no error beneath.
#[derive(Debug, thiserror::Error)]
pub enum SelectorFinding {
    /// A comma-separated part without `=`.
    #[error("`{0}` is not `key=value`")]
    NotKeyValue(String),
    #[error("no condition")]
    Empty,
    /// A key no record has; `fields` lists the ones every record has.
    #[error("no record has `{key}` (fields: {fields}, or a cell setting such as verifier.model)")]
    UnknownKey { key: String, fields: String },
}

/// Why a line is not a simulation record.
#[derive(Debug, thiserror::Error)]
pub enum RecordCause {
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Utf8(#[from] std::str::Utf8Error),
    /// A line of a run's `interrupted.jsonl`.
    #[error("not an interrupted-simulation line")]
    Interrupted(#[source] serde_json::Error),
}

/// Why a sidecar table could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum SidecarCause {
    #[error(transparent)]
    Parquet(#[from] parquet::errors::ParquetError),
    #[error(transparent)]
    Arrow(#[from] arrow_schema::ArrowError),
    /// A row group's row count does not fit in memory's index type.
    #[error(transparent)]
    RowCount(#[from] std::num::TryFromIntError),
    /// A table that is not shaped as the sidecar's (a column missing, of another type, holding
    /// a value no summary has, another schema version).
    #[error(transparent)]
    Shape(#[from] ShapeFinding),
}

/// How a sidecar table differs from the sidecar's shape: a finding, with no error beneath it
/// but for a column of JSON that does not parse.
#[derive(Debug, thiserror::Error)]
pub enum ShapeFinding {
    /// A column a batch is read by is absent.
    #[error("no column `{0}`")]
    NoColumn(String),
    /// A column a table's metadata is read by is absent.
    #[error("no `{0}` column")]
    NoTableColumn(String),
    #[error("column `{0}` has an unexpected type")]
    UnexpectedType(String),
    #[error("column `{0}` has a null")]
    Null(String),
    #[error("column `{0}` holds no strings")]
    NoStrings(String),
    #[error("column `{0}` holds no numbers")]
    NoNumbers(&'static str),
    /// A termination reason outside [`Termination::ALL`], which the text lists.
    #[error(
        "unknown termination reason `{0}` (known: {known})",
        known = Termination::ALL.map(|t| t.as_str()).join(", ")
    )]
    UnknownTermination(String),
    /// A value no summary has: `what` names its kind (`slice`, `verdict`).
    #[error("unknown {what} `{value}`")]
    Unknown { what: &'static str, value: String },
    /// A list column holding a value no summary has.
    #[error("column `{column}`: unknown {what} `{value}`")]
    UnknownItem {
        column: String,
        what: &'static str,
        value: String,
    },
    #[error("column `other_usage`")]
    OtherUsage(#[source] serde_json::Error),
    #[error("no or another sidecar schema version")]
    SchemaVersion,
    /// A row the manifest places in a row group the table does not hold.
    #[error("no row {0}")]
    NoRow(usize),
    #[error("the tables do not match the manifest")]
    NotTheManifest,
    #[error("a call names no simulation")]
    OrphanCall,
    #[error("a simulation was not read")]
    SimulationNotRead,
}

/// plotters' error from the backend a figure was drawn on.
#[derive(Debug, thiserror::Error)]
pub enum PlotCause {
    #[error(transparent)]
    Png(DrawingAreaErrorKind<<BitMapBackend<'static> as DrawingBackend>::ErrorType>),
    #[error(transparent)]
    Svg(DrawingAreaErrorKind<<SVGBackend<'static> as DrawingBackend>::ErrorType>),
}

impl ShapeFinding {
    /// A `what` (`slice`, `verdict`) whose value no summary has.
    pub(crate) fn unknown(what: &'static str, value: &str) -> ShapeFinding {
        ShapeFinding::Unknown {
            what,
            value: value.to_string(),
        }
    }
}

impl MetricsError {
    pub(crate) fn io(path: impl Into<PathBuf>, cause: std::io::Error) -> Self {
        MetricsError::Io {
            path: path.into(),
            cause,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sidecar's finding reads as the parse error of the core type it stands for.
    #[test]
    fn unknown_termination_reads_as_the_core_parse_error() {
        let core = "fork".parse::<Termination>().unwrap_err();
        let finding = ShapeFinding::UnknownTermination("fork".into()).to_string();
        assert_eq!(finding, core);
    }
}
