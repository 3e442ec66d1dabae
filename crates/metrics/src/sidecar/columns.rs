//! The two tables of the columnar sidecar, defined once for Parquet and CSV: summaries to Arrow
//! record batches ([`simulations_batch`], [`calls_batch`]), batches back to summaries
//! (`columns_read.rs`), and a batch as CSV rows ([`write_csv`]).
//!
//! `simulations` has one row per simulation, in records order, with the columns of
//! [`SIMULATION_COLUMNS`], then one `UInt64` column per registered measure's per-simulation
//! column, named by its declaration (`measure/registry.rs`); `calls` has one row per attempted mutating call, its `sim` column
//! the 0-based row of its simulation, with the columns of [`CALL_COLUMNS`]. Per-role usage is
//! spread over `<role>_calls`, `<role>_prompt_tokens`, `<role>_cached_prompt_tokens`,
//! `<role>_completion_tokens`, `<role>_cost` and `<role>_truncated` (replies cut at the token
//! limit) for `agent`, `user`, `judge` and `guard` (`<role>_calls` null = no usage entry),
//! and likewise `discarded_*` for the usage of discarded attempts and failed calls; other
//! roles are JSON in `other_usage`. List columns (`verifier_inputs`,
//! `guide_costs`, `guide_fail_reasons`, `faults`, `missing_prerequisites`) are Parquet lists,
//! and JSON arrays in CSV. Fail reasons (`fail_reason`, `guide_fail_reasons`) are the records'
//! names (`parse_failure`, `context_overflow`, …).

use crate::summary::{SimSummary, USAGE_GROUPS};
use arrow_array::builder::{Float64Builder, ListBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, UInt32Type, UInt64Type};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Float64Array, RecordBatch, StringArray, UInt32Array, UInt64Array,
};
use arrow_schema::{ArrowError, DataType};
use serde_json::{Value, json};
use std::sync::Arc;
use tauguard_core::Requestor;
use tauguard_core::record::Verdict;

/// Columns of `simulations` (the usage columns expand `<role>_*` for each of [`USAGE_GROUPS`]).
#[cfg(test)]
pub(crate) const SIMULATION_COLUMNS: &[&str] = &[
    "run_id",
    "cell_id",
    "config_hash",
    "cell_hash",
    "cell",
    "domain",
    "agent_model",
    "user_model",
    "guard",
    "simulated",
    "task_id",
    "slice",
    "trial",
    "seed",
    "termination_reason",
    "reward",
    "success",
    "infra_error",
    "missing_reward_info",
    "error",
    "agent_turns",
    "user_turns",
    "wall_seconds",
    "<role>_calls",
    "<role>_prompt_tokens",
    "<role>_cached_prompt_tokens",
    "<role>_completion_tokens",
    "<role>_cost",
    "<role>_truncated",
    "other_usage",
    "has_fault_labels",
    "trace_gold_steps",
    "trace_matched_steps",
    "attack_success",
    "verifier_called",
    "verifier_saved",
    "verifier_decisions",
    "verifier_checked",
    "verifier_unchecked",
    "verifier_unseen",
    "verifier_inputs",
    "guide_runs",
    "guide_calls",
    "guide_prompt_tokens",
    "guide_completion_tokens",
    "guide_cached_prompt_tokens",
    "guide_costs",
    "guide_unpriced",
    "guide_fail_reasons",
];

/// Columns of `calls`.
#[cfg(test)]
pub(crate) const CALL_COLUMNS: &[&str] = &[
    "sim",
    "run_id",
    "task_id",
    "trial",
    "call_id",
    "tool",
    "requestor",
    "verdict",
    "executed",
    "faults",
    "missing_prerequisites",
    "fail_reason",
];

fn strs<'a>(it: impl Iterator<Item = &'a str>) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(it))
}

fn opt_strs<'a>(it: impl Iterator<Item = Option<&'a str>>) -> ArrayRef {
    Arc::new(it.collect::<StringArray>())
}

fn u32s(it: impl Iterator<Item = Option<u32>>) -> ArrayRef {
    Arc::new(it.collect::<UInt32Array>())
}

fn u64s(it: impl Iterator<Item = Option<u64>>) -> ArrayRef {
    Arc::new(it.collect::<UInt64Array>())
}

fn f64s(it: impl Iterator<Item = Option<f64>>) -> ArrayRef {
    Arc::new(it.collect::<Float64Array>())
}

fn bools(it: impl Iterator<Item = Option<bool>>) -> ArrayRef {
    Arc::new(it.collect::<BooleanArray>())
}

fn str_lists<'a, I: IntoIterator<Item = &'a str>>(it: impl Iterator<Item = Option<I>>) -> ArrayRef {
    let mut b = ListBuilder::new(StringBuilder::new());
    for list in it {
        match list {
            Some(items) => {
                for s in items {
                    b.values().append_value(s);
                }
                b.append(true);
            }
            None => b.append(false),
        }
    }
    Arc::new(b.finish())
}

fn f64_lists<'a>(it: impl Iterator<Item = &'a [f64]>) -> ArrayRef {
    let mut b = ListBuilder::new(Float64Builder::new());
    for items in it {
        b.values().append_slice(items);
        b.append(true);
    }
    Arc::new(b.finish())
}

/// The `simulations` table of `sims`.
pub(crate) fn simulations_batch(sims: &[SimSummary]) -> Result<RecordBatch, ArrowError> {
    let mut cols = outcome_columns(sims);
    cols.extend(usage_columns(sims));
    cols.extend(guard_columns(sims));
    // The registered measures' own columns, written from their declarations.
    for (j, c) in crate::measure::registry::sim_columns().enumerate() {
        cols.push((
            c.name.into(),
            u64s(sims.iter().map(|s| Some(s.measured[j]))),
        ));
    }
    RecordBatch::try_from_iter(cols)
}

/// The simulation's place in the run and its outcome.
fn outcome_columns(sims: &[SimSummary]) -> Vec<(String, ArrayRef)> {
    let c = |f: fn(&SimSummary) -> &str| strs(sims.iter().map(f));
    vec![
        ("run_id".into(), c(|s| &s.cell.run_id)),
        ("cell_id".into(), c(|s| &s.cell.cell_id)),
        ("config_hash".into(), c(|s| &s.cell.config_hash)),
        ("cell_hash".into(), c(|s| &s.cell.cell_hash)),
        ("cell".into(), {
            let (texts, idx) = cell_texts(sims);
            strs(idx.iter().map(|&i| texts[i].as_str()))
        }),
        ("domain".into(), c(|s| &s.cell.domain)),
        ("agent_model".into(), c(|s| &s.cell.agent_model)),
        ("user_model".into(), c(|s| &s.cell.user_model)),
        ("guard".into(), c(|s| &s.cell.guard)),
        (
            "simulated".into(),
            bools(sims.iter().map(|s| Some(s.cell.simulated))),
        ),
        ("task_id".into(), c(|s| &s.task_id)),
        ("slice".into(), c(|s| s.slice.as_str())),
        ("trial".into(), u32s(sims.iter().map(|s| Some(s.trial)))),
        ("seed".into(), u64s(sims.iter().map(|s| Some(s.seed)))),
        (
            "termination_reason".into(),
            c(|s| s.termination_reason.as_str()),
        ),
        ("reward".into(), f64s(sims.iter().map(|s| s.reward))),
        (
            "success".into(),
            bools(sims.iter().map(|s| Some(s.succeeded()))),
        ),
        (
            "infra_error".into(),
            bools(sims.iter().map(|s| Some(s.is_infra_error()))),
        ),
        (
            "missing_reward_info".into(),
            bools(sims.iter().map(|s| Some(s.missing_reward_info))),
        ),
        (
            "error".into(),
            opt_strs(sims.iter().map(|s| s.error.as_deref())),
        ),
        (
            "agent_turns".into(),
            u32s(sims.iter().map(|s| Some(s.agent_turns))),
        ),
        (
            "user_turns".into(),
            u32s(sims.iter().map(|s| Some(s.user_turns))),
        ),
        (
            "wall_seconds".into(),
            f64s(sims.iter().map(|s| Some(s.wall_seconds))),
        ),
    ]
}

/// Usage per role group, then the other roles' as one JSON text.
fn usage_columns(sims: &[SimSummary]) -> Vec<(String, ArrayRef)> {
    let mut cols: Vec<(String, ArrayRef)> = Vec::new();
    for (i, role) in USAGE_GROUPS.iter().enumerate() {
        let u = |f: fn(&crate::summary::RoleTotals) -> u64| {
            u64s(sims.iter().map(move |s| s.usage_group(i).map(f)))
        };
        cols.push((format!("{role}_calls"), u(|u| u.calls)));
        cols.push((format!("{role}_prompt_tokens"), u(|u| u.prompt_tokens)));
        cols.push((
            format!("{role}_cached_prompt_tokens"),
            u(|u| u.cached_prompt_tokens),
        ));
        cols.push((
            format!("{role}_completion_tokens"),
            u(|u| u.completion_tokens),
        ));
        cols.push((
            format!("{role}_cost"),
            f64s(sims.iter().map(|s| s.usage_group(i).and_then(|u| u.cost))),
        ));
        cols.push((format!("{role}_truncated"), u(|u| u.truncated)));
    }
    let other: Vec<Option<String>> = sims
        .iter()
        .map(|s| {
            (!s.other_usage.is_empty()).then(|| {
                let m: serde_json::Map<String, Value> = s
                    .other_usage
                    .iter()
                    .map(|(r, u)| {
                        let v = json!({"calls": u.calls, "prompt_tokens": u.prompt_tokens,
                            "cached_prompt_tokens": u.cached_prompt_tokens,
                            "completion_tokens": u.completion_tokens, "cost": u.cost,
                            "truncated": u.truncated});
                        (r.clone(), v)
                    })
                    .collect();
                Value::Object(m).to_string()
            })
        })
        .collect();
    cols.push((
        "other_usage".into(),
        opt_strs(other.iter().map(|o| o.as_deref())),
    ));
    cols
}

/// Fault labels, trace and attack outcomes, and what the verifier and the guide did.
fn guard_columns(sims: &[SimSummary]) -> Vec<(String, ArrayRef)> {
    let v = |f: fn(&SimSummary) -> u32| u32s(sims.iter().map(|s| Some(f(s))));
    let w = |f: fn(&SimSummary) -> u64| u64s(sims.iter().map(|s| Some(f(s))));
    vec![
        (
            "has_fault_labels".into(),
            bools(sims.iter().map(|s| Some(s.has_fault_labels))),
        ),
        (
            "trace_gold_steps".into(),
            u32s(sims.iter().map(|s| s.trace.map(|t| t.gold))),
        ),
        (
            "trace_matched_steps".into(),
            u32s(sims.iter().map(|s| s.trace.map(|t| t.matched))),
        ),
        (
            "attack_success".into(),
            bools(sims.iter().map(|s| s.attack)),
        ),
        ("verifier_called".into(), v(|s| s.verifier().called)),
        ("verifier_saved".into(), v(|s| s.verifier().saved)),
        ("verifier_decisions".into(), v(|s| s.verifier().decisions)),
        ("verifier_checked".into(), w(|s| s.verifier().checked)),
        ("verifier_unchecked".into(), w(|s| s.verifier().unchecked)),
        ("verifier_unseen".into(), w(|s| s.verifier().unseen)),
        (
            "verifier_inputs".into(),
            str_lists(
                sims.iter()
                    .map(|s| Some(s.verifier().inputs.iter().map(|i| &**i))),
            ),
        ),
        ("guide_runs".into(), v(|s| s.guide().runs)),
        ("guide_calls".into(), w(|s| s.guide().calls)),
        ("guide_prompt_tokens".into(), w(|s| s.guide().prompt_tokens)),
        (
            "guide_completion_tokens".into(),
            w(|s| s.guide().completion_tokens),
        ),
        (
            "guide_cached_prompt_tokens".into(),
            w(|s| s.guide().cached_prompt_tokens),
        ),
        (
            "guide_costs".into(),
            f64_lists(sims.iter().map(|s| &*s.guide().costs)),
        ),
        (
            "guide_unpriced".into(),
            bools(sims.iter().map(|s| Some(s.guide().unpriced))),
        ),
        (
            "guide_fail_reasons".into(),
            str_lists(
                sims.iter()
                    .map(|s| Some(s.guide().fail_reasons.iter().map(|r| r.as_str()))),
            ),
        ),
    ]
}

/// The distinct settings texts (one JSON text per cell) and each simulation's index into them.
fn cell_texts(sims: &[SimSummary]) -> (Vec<String>, Vec<usize>) {
    let mut texts: Vec<String> = Vec::new();
    let mut seen: std::collections::HashMap<*const crate::summary::CellInfo, usize> =
        std::collections::HashMap::new();
    let idx = sims
        .iter()
        .map(|s| {
            *seen.entry(Arc::as_ptr(&s.cell)).or_insert_with(|| {
                texts.push(serde_json::to_string(&s.cell.cell).unwrap_or_default());
                texts.len() - 1
            })
        })
        .collect();
    (texts, idx)
}

/// The `calls` table of `sims`.
pub(crate) fn calls_batch(sims: &[SimSummary]) -> Result<RecordBatch, ArrowError> {
    let calls: Vec<(usize, &SimSummary, &crate::summary::CallSummary)> = sims
        .iter()
        .enumerate()
        .flat_map(|(i, s)| s.calls.iter().map(move |c| (i, s, c)))
        .collect();
    let cols: Vec<(&str, ArrayRef)> = vec![
        ("sim", u64s(calls.iter().map(|(i, _, _)| Some(*i as u64)))),
        (
            "run_id",
            strs(calls.iter().map(|(_, s, _)| s.cell.run_id.as_str())),
        ),
        ("task_id", strs(calls.iter().map(|(_, s, _)| &*s.task_id))),
        ("trial", u32s(calls.iter().map(|(_, s, _)| Some(s.trial)))),
        ("call_id", strs(calls.iter().map(|(_, _, c)| &*c.call_id))),
        ("tool", strs(calls.iter().map(|(_, _, c)| &*c.tool))),
        (
            "requestor",
            strs(calls.iter().map(|(_, _, c)| c.requestor.as_str())),
        ),
        (
            "verdict",
            opt_strs(calls.iter().map(|(_, _, c)| c.verdict.map(verdict_str))),
        ),
        (
            "executed",
            bools(calls.iter().map(|(_, _, c)| Some(c.executed))),
        ),
        (
            "faults",
            str_lists(
                calls
                    .iter()
                    .map(|(_, _, c)| Some(c.faults.iter().map(|f| &**f))),
            ),
        ),
        (
            "missing_prerequisites",
            str_lists(calls.iter().map(|(_, _, c)| {
                c.missing_prerequisites
                    .as_ref()
                    .map(|m| m.iter().map(|p| &**p))
            })),
        ),
        (
            "fail_reason",
            opt_strs(
                calls
                    .iter()
                    .map(|(_, _, c)| c.fail_reason.map(|r| r.as_str())),
            ),
        ),
    ];
    RecordBatch::try_from_iter(cols)
}

pub(crate) fn verdict_str(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Block => "block",
    }
}

pub(crate) fn requestor_of(s: &str) -> Option<Requestor> {
    match s {
        "assistant" => Some(Requestor::Assistant),
        "user" => Some(Requestor::User),
        _ => None,
    }
}

/// One cell of a batch as CSV text: empty for null, lists as JSON arrays.
fn cell_text(col: &ArrayRef, i: usize) -> String {
    if col.is_null(i) {
        return String::new();
    }
    match col.data_type() {
        DataType::Utf8 => col.as_string::<i32>().value(i).to_string(),
        DataType::UInt32 => col.as_primitive::<UInt32Type>().value(i).to_string(),
        DataType::UInt64 => col.as_primitive::<UInt64Type>().value(i).to_string(),
        DataType::Float64 => col.as_primitive::<Float64Type>().value(i).to_string(),
        DataType::Boolean => col.as_boolean().value(i).to_string(),
        DataType::List(_) => {
            let items = col.as_list::<i32>().value(i);
            let values: Vec<Value> = (0..items.len())
                .map(|j| match items.data_type() {
                    DataType::Float64 => json!(items.as_primitive::<Float64Type>().value(j)),
                    _ => json!(items.as_string::<i32>().value(j)),
                })
                .collect();
            Value::Array(values).to_string()
        }
        other => format!("<{other}>"),
    }
}

/// Writes a batch as CSV: a header of column names, then one row per batch row.
pub(crate) fn write_csv<W: std::io::Write>(
    batch: &RecordBatch,
    w: &mut csv::Writer<W>,
) -> Result<(), csv::Error> {
    let schema = batch.schema();
    w.write_record(schema.fields().iter().map(|f| f.name().as_str()))?;
    let cols = batch.columns();
    let mut row: Vec<String> = Vec::with_capacity(cols.len());
    for i in 0..batch.num_rows() {
        row.clear();
        row.extend(cols.iter().map(|c| cell_text(c, i)));
        w.write_record(&row)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calls_table_has_the_documented_columns_in_order() {
        let batch = calls_batch(&[]).unwrap();
        let names: Vec<&str> = batch
            .schema_ref()
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        assert_eq!(names, CALL_COLUMNS);
    }
}
