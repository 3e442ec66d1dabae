//! Rendering: the table model and its formats (Markdown, tidy CSV with `schema.json`, LaTeX,
//! JSON), the papers' table layouts built from a report, the files `report` and `compare`
//! write, and the figures (`plots/`).

pub mod compare_output;
mod compare_tables;
pub(crate) mod csv_meanings;
pub mod csv_schema;
pub mod csv_tidy;
pub mod output;
pub mod plots;
pub mod sources;
pub mod table;
pub mod tables;
pub mod tables_comparability;
pub mod tables_extra;
pub mod tables_policyguide;
pub mod tables_process;
