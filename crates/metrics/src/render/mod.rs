//! Rendering: the table model and its formats (Markdown, tidy CSV with `schema.json`, LaTeX,
//! JSON), the papers' table layouts built from a report, the files `report` and `compare`
//! write, and the figures (`plots/`).

pub(crate) mod columns;
pub(crate) mod columns_views;
pub(crate) mod compare_output;
mod compare_tables;
pub(crate) mod csv_schema;
pub(crate) mod csv_tidy;
pub(crate) mod output;
pub(crate) mod plots;
#[cfg(test)]
mod schema_tests;
pub(crate) mod sources;
pub(crate) mod table;
pub(crate) mod tables;
pub(crate) mod tables_comparability;
pub(crate) mod tables_extra;
pub(crate) mod tables_policyguide;
pub(crate) mod tables_process;
