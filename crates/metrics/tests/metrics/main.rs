//! The metrics integration tests as one binary: report, compare, inputs, properties, slices on
//! the real data, parity with upstream's Pass^k, fail-mode verdicts per cell, and summaries
//! with the columnar sidecar, and the order of the crate's stages.

mod compare;
mod fail_mode;
mod figures;
mod input_errors;
mod policyguide_tables;
mod procedure_eval;
mod procedure_specs;
mod properties;
mod report_outputs;
mod sidecar;
mod slices_data;
mod stages;
mod upstream_parity;
