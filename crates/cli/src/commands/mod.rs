//! One module per subcommand.

pub mod compile;
pub mod evaluate;
pub mod export;
pub mod export_table;
pub mod floors;
pub mod gold;
pub mod merge;
pub mod report;
pub mod run;
pub mod validate;
