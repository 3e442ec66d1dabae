//! One module per subcommand.

pub mod export;
pub mod gold;
pub mod run;
