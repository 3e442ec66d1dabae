//! One module per subcommand.

pub mod compile;
pub mod diff_artifacts;
pub mod dry_run;
pub mod evaluate;
pub mod evaluate_process;
pub mod export;
pub mod export_table;
pub mod floors;
pub mod gold;
pub mod guard_check;
pub mod merge;
pub mod procedure;
pub mod process_judge;
pub mod report;
pub mod reproduce;
pub mod run;
pub mod validate;
pub mod validate_checklist;
pub mod view;
