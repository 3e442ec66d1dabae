//! The metrics integration tests as one binary: report, compare, inputs, properties, slices on
//! the real data and parity with upstream's Pass^k.

mod compare;
mod figures;
mod input_errors;
mod policyguide_tables;
mod properties;
mod report_outputs;
mod slices_data;
mod upstream_parity;
