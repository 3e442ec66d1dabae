//! One module per subcommand.

pub(crate) mod compile;
pub(crate) mod diff_artifacts;
pub(crate) mod dry_run;
pub(crate) mod evaluate;
pub(crate) mod evaluate_process;
pub(crate) mod export;
pub(crate) mod export_table;
pub(crate) mod floors;
pub(crate) mod gold;
pub(crate) mod guard_check;
pub(crate) mod merge;
pub(crate) mod procedure;
pub(crate) mod process_judge;
pub(crate) mod report;
pub(crate) mod reproduce;
pub(crate) mod run;
pub(crate) mod validate;
pub(crate) mod validate_checklist;
pub(crate) mod view;
