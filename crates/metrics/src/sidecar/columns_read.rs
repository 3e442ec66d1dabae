//! Reading the sidecar's tables (`columns.rs` defines them) back into summaries: every
//! column a summary holds is read by name and type; a missing or mistyped column is an error
//! naming it, so a sidecar of another layout is never misread.
//!
//! The repeated strings (cell identity and settings, task ids, tools…: [`DICTIONARY_COLUMNS`])
//! are read as Arrow dictionaries, as Parquet stores them: each distinct value is decoded and
//! interned once per batch, and a simulation's cell is found by its columns' dictionary keys.
//! Materialising them row by row (a cell's settings text is about a kilobyte) dominated the
//! read.
//!
//! A batch is checked whole when it is read ([`SimColumns::new`], [`CallColumns::new`]): every
//! column present with its type, no null where none may be, every slice, verdict, requestor,
//! fail reason and `other_usage` text valid. Its rows are then made one at a time, infallibly,
//! so the reader (`sidecar_read.rs`) can write each summary straight into its place.

use crate::error::ShapeFinding;
use crate::sidecar::columns::requestor_of;
use crate::summary::fast_hash::FxHashMap;
use crate::summary::{
    CallSummary, CellInfo, GuideTotals, Interner, RoleTotals, SimSummary, TraceSteps, USAGE_GROUPS,
    VerifierTotals, boxed_unless_empty,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type};
use arrow_array::{
    Array, BooleanArray, Float64Array, ListArray, PrimitiveArray, RecordBatch, StringArray,
    UInt32Array, UInt64Array,
};
use arrow_schema::{DataType, Field, Schema};
use serde_json::Value;
use std::sync::Arc;
use tauguard_core::Requestor;
use tauguard_core::record::{FailReason, Slice, Verdict};
use tauguard_core::termination::Termination;

/// String columns of either table read as dictionaries (see the module docs), besides the
/// cell's ([`CELL_COLUMNS`]).
const DICTIONARY_COLUMNS: &[&str] = &[
    "task_id",
    "slice",
    "termination_reason",
    "tool",
    "requestor",
    "verdict",
    "fail_reason",
];

/// `schema` with the plain string columns of [`CELL_COLUMNS`] and [`DICTIONARY_COLUMNS`]
/// read as dictionaries.
pub(crate) fn dictionary_schema(schema: &Schema) -> Schema {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| {
            let name = f.name().as_str();
            let dictionary = CELL_COLUMNS.contains(&name) || DICTIONARY_COLUMNS.contains(&name);
            if *f.data_type() == DataType::Utf8 && dictionary {
                let dict =
                    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
                f.as_ref().clone().with_data_type(dict)
            } else {
                f.as_ref().clone()
            }
        })
        .collect();
    Schema::new_with_metadata(fields, schema.metadata().clone())
}

/// A dictionary string column of one batch: its keys, and its distinct values interned.
struct Dict {
    keys: PrimitiveArray<Int32Type>,
    values: Vec<Arc<str>>,
    raw: StringArray,
}

impl Dict {
    fn key(&self, i: usize) -> Option<usize> {
        (!self.keys.is_null(i)).then(|| self.keys.value(i) as usize)
    }

    /// The key of a row checked non-null in [`Cols::dict`].
    fn key_of(&self, i: usize) -> usize {
        self.keys.value(i) as usize
    }

    fn at(&self, i: usize) -> &Arc<str> {
        &self.values[self.key_of(i)]
    }

    /// Each distinct value mapped by `f`, indexed by key; an error when a row's value does not
    /// map. Values no row uses are left unchecked (Parquet's dictionaries may hold a
    /// placeholder for nulls), their slot filled with `unused`.
    fn each<T: Copy>(
        &self,
        unused: T,
        f: impl Fn(&str) -> Result<T, ShapeFinding>,
    ) -> Result<Vec<T>, ShapeFinding> {
        let mapped: Vec<Result<T, ShapeFinding>> =
            (0..self.raw.len()).map(|k| f(self.raw.value(k))).collect();
        let mut used = vec![false; mapped.len()];
        for k in self.keys.iter().flatten() {
            used[k as usize] = true;
        }
        mapped
            .into_iter()
            .zip(used)
            .map(|(m, used)| if used { m } else { Ok(m.unwrap_or(unused)) })
            .collect()
    }
}

/// The columns of one batch, looked up by name and type.
struct Cols<'a>(&'a RecordBatch);

impl Cols<'_> {
    fn get(&self, name: &str) -> Result<&dyn Array, ShapeFinding> {
        self.0
            .column_by_name(name)
            .map(|c| c.as_ref())
            .ok_or_else(|| ShapeFinding::NoColumn(name.to_string()))
    }

    fn bad(name: &str) -> ShapeFinding {
        ShapeFinding::UnexpectedType(name.to_string())
    }

    /// A dictionary string column; `nullable` false makes a null an error naming the column.
    fn dict(
        &self,
        name: &str,
        nullable: bool,
        interner: &mut Interner,
    ) -> Result<Dict, ShapeFinding> {
        let col = self
            .get(name)?
            .as_dictionary_opt::<Int32Type>()
            .ok_or_else(|| Self::bad(name))?;
        let raw = col
            .values()
            .as_string_opt::<i32>()
            .ok_or_else(|| Self::bad(name))?
            .clone();
        if !nullable && col.keys().null_count() > 0 {
            return Err(ShapeFinding::Null(name.to_string()));
        }
        let values = (0..raw.len()).map(|k| interner.str(raw.value(k))).collect();
        Ok(Dict {
            keys: col.keys().clone(),
            values,
            raw,
        })
    }

    /// Column `name` as an `A` (an error when of another type): every typed getter's reading.
    fn typed<A: Array + Clone + 'static>(&self, name: &str) -> Result<A, ShapeFinding> {
        let a = self.get(name)?.as_any().downcast_ref::<A>();
        a.cloned().ok_or_else(|| Self::bad(name))
    }

    fn str(&self, name: &str) -> Result<StringArray, ShapeFinding> {
        self.typed(name)
    }

    fn u32(&self, name: &str) -> Result<UInt32Array, ShapeFinding> {
        self.typed(name)
    }

    fn u64(&self, name: &str) -> Result<UInt64Array, ShapeFinding> {
        self.typed(name)
    }

    fn f64(&self, name: &str) -> Result<Float64Array, ShapeFinding> {
        self.typed(name)
    }

    fn bool(&self, name: &str) -> Result<BooleanArray, ShapeFinding> {
        self.typed(name)
    }

    /// A column that may hold no null (a required field of every row).
    fn required<A: Array>(&self, name: &str, a: A) -> Result<A, ShapeFinding> {
        match a.null_count() {
            0 => Ok(a),
            _ => Err(ShapeFinding::Null(name.to_string())),
        }
    }

    fn list(&self, name: &str) -> Result<ListArray, ShapeFinding> {
        self.typed(name)
    }
}

fn opt<A: Array, T>(a: &A, i: usize, v: impl FnOnce() -> T) -> Option<T> {
    (!a.is_null(i)).then(v)
}

/// A list-of-strings column, its items interned by index (each distinct item once per batch).
struct StrLists {
    list: ListArray,
    items: Vec<Arc<str>>,
}

impl StrLists {
    fn new(list: ListArray, name: &str, interner: &mut Interner) -> Result<Self, ShapeFinding> {
        let values = list
            .values()
            .as_string_opt::<i32>()
            .ok_or_else(|| ShapeFinding::NoStrings(name.to_string()))?;
        let mut seen: FxHashMap<&str, Arc<str>> = FxHashMap::default();
        let items = (0..values.len())
            .map(|j| {
                let v = values.value(j);
                seen.entry(v).or_insert_with(|| interner.str(v)).clone()
            })
            .collect();
        Ok(StrLists { list, items })
    }

    fn row(&self, i: usize) -> Option<&[Arc<str>]> {
        if self.list.is_null(i) {
            return None;
        }
        let o = self.list.value_offsets();
        Some(&self.items[o[i] as usize..o[i + 1] as usize])
    }
}

fn fail_reason_of(s: &str) -> Result<FailReason, ShapeFinding> {
    FailReason::from_name(s).ok_or_else(|| ShapeFinding::unknown("fail reason", s))
}

/// A list-of-fail-reasons column, every item checked when the batch is read.
struct ReasonLists {
    list: ListArray,
    items: Vec<FailReason>,
}

impl ReasonLists {
    fn new(list: ListArray, name: &str) -> Result<Self, ShapeFinding> {
        let values = list
            .values()
            .as_string_opt::<i32>()
            .ok_or_else(|| ShapeFinding::NoStrings(name.to_string()))?;
        let items = (0..values.len())
            .map(|j| {
                let v = values.value(j);
                FailReason::from_name(v).ok_or_else(|| ShapeFinding::UnknownItem {
                    column: name.to_string(),
                    what: "fail reason",
                    value: v.to_string(),
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(ReasonLists { list, items })
    }

    fn row(&self, i: usize) -> &[FailReason] {
        let o = self.list.value_offsets();
        &self.items[o[i] as usize..o[i + 1] as usize]
    }
}

fn slice_of(s: &str) -> Result<Slice, ShapeFinding> {
    match s {
        "pv" => Ok(Slice::Pv),
        "mut" => Ok(Slice::Mut),
        "unknown" => Ok(Slice::Unknown),
        other => Err(ShapeFinding::unknown("slice", other)),
    }
}

/// The identity columns of a simulation's cell, in `Interner::cell_of` order, then `cell`.
const CELL_COLUMNS: [&str; 9] = [
    "run_id",
    "cell_id",
    "config_hash",
    "cell_hash",
    "domain",
    "agent_model",
    "user_model",
    "guard",
    "cell",
];

/// The usage columns of one role: calls, prompt, cached prompt and completion tokens, cost,
/// cut replies.
type RoleCols = (
    UInt64Array,
    UInt64Array,
    UInt64Array,
    UInt64Array,
    Float64Array,
    UInt64Array,
);

/// One checked `simulations` batch (see the module docs).
pub(crate) struct SimColumns {
    rows: usize,
    ids: Vec<Dict>,
    /// Cells met in this batch, by their columns' keys.
    cells: FxHashMap<[usize; 9], Arc<CellInfo>>,
    task: Dict,
    term: Dict,
    terms: Vec<Termination>,
    slice: Dict,
    slices: Vec<Slice>,
    trial: UInt32Array,
    seed: UInt64Array,
    reward: Float64Array,
    missing: BooleanArray,
    error: StringArray,
    turns: (UInt32Array, UInt32Array),
    wall: Float64Array,
    roles: Vec<RoleCols>,
    /// Rows with other roles' usage, parsed.
    other: FxHashMap<usize, Vec<(String, RoleTotals)>>,
    faults: BooleanArray,
    trace: (UInt32Array, UInt32Array),
    attack: BooleanArray,
    verifier: (
        UInt32Array,
        UInt32Array,
        UInt32Array,
        UInt64Array,
        UInt64Array,
        UInt64Array,
    ),
    inputs: StrLists,
    guide: (
        UInt32Array,
        UInt64Array,
        UInt64Array,
        UInt64Array,
        UInt64Array,
    ),
    guide_costs: ListArray,
    guide_cost_values: Float64Array,
    unpriced: BooleanArray,
    guide_fail: ReasonLists,
    /// The registered measures' columns, in slot order.
    measured: Vec<UInt64Array>,
}

impl SimColumns {
    pub(crate) fn new(batch: &RecordBatch, interner: &mut Interner) -> Result<Self, ShapeFinding> {
        let c = Cols(batch);
        let ids = CELL_COLUMNS
            .iter()
            .map(|n| c.dict(n, false, interner))
            .collect::<Result<Vec<_>, _>>()?;
        let slice = c.dict("slice", false, interner)?;
        let slices = slice.each(Slice::Unknown, slice_of)?;
        let term = c.dict("termination_reason", false, interner)?;
        let mut roles = Vec::new();
        for r in USAGE_GROUPS {
            roles.push((
                c.u64(&format!("{r}_calls"))?,
                c.u64(&format!("{r}_prompt_tokens"))?,
                c.u64(&format!("{r}_cached_prompt_tokens"))?,
                c.u64(&format!("{r}_completion_tokens"))?,
                c.f64(&format!("{r}_cost"))?,
                c.u64(&format!("{r}_truncated"))?,
            ));
        }
        let other_col = c.str("other_usage")?;
        let mut other = FxHashMap::default();
        for i in (0..batch.num_rows()).filter(|&i| !other_col.is_null(i)) {
            other.insert(i, other_roles(other_col.value(i))?);
        }
        let guide_costs = c.list("guide_costs")?;
        let guide_cost_values = guide_costs
            .values()
            .as_primitive_opt::<Float64Type>()
            .ok_or(ShapeFinding::NoNumbers("guide_costs"))?
            .clone();
        let req_u32 = |n: &str| c.required(n, c.u32(n)?);
        let req_u64 = |n: &str| c.required(n, c.u64(n)?);
        let req_bool = |n: &str| c.required(n, c.bool(n)?);
        Ok(SimColumns {
            rows: batch.num_rows(),
            ids,
            cells: FxHashMap::default(),
            task: c.dict("task_id", false, interner)?,
            terms: term.each(Termination::UnexpectedError, |s| {
                (s.parse()).map_err(|_| ShapeFinding::UnknownTermination(s.to_string()))
            })?,
            term,
            slice,
            slices,
            trial: req_u32("trial")?,
            seed: req_u64("seed")?,
            reward: c.f64("reward")?,
            missing: req_bool("missing_reward_info")?,
            error: c.str("error")?,
            turns: (req_u32("agent_turns")?, req_u32("user_turns")?),
            wall: c.required("wall_seconds", c.f64("wall_seconds")?)?,
            roles,
            other,
            faults: req_bool("has_fault_labels")?,
            trace: (c.u32("trace_gold_steps")?, c.u32("trace_matched_steps")?),
            attack: c.bool("attack_success")?,
            verifier: (
                req_u32("verifier_called")?,
                req_u32("verifier_saved")?,
                req_u32("verifier_decisions")?,
                req_u64("verifier_checked")?,
                req_u64("verifier_unchecked")?,
                req_u64("verifier_unseen")?,
            ),
            inputs: StrLists::new(c.list("verifier_inputs")?, "verifier_inputs", interner)?,
            guide: (
                req_u32("guide_runs")?,
                req_u64("guide_calls")?,
                req_u64("guide_prompt_tokens")?,
                req_u64("guide_completion_tokens")?,
                req_u64("guide_cached_prompt_tokens")?,
            ),
            guide_costs,
            guide_cost_values,
            unpriced: req_bool("guide_unpriced")?,
            guide_fail: ReasonLists::new(c.list("guide_fail_reasons")?, "guide_fail_reasons")?,
            measured: (crate::measure::registry::sim_columns().map(|col| req_u64(col.name)))
                .collect::<Result<_, _>>()?,
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.rows
    }

    /// The summary of row `i` (without its calls).
    pub(crate) fn row(&mut self, i: usize, interner: &mut Interner) -> SimSummary {
        let keys: [usize; 9] = std::array::from_fn(|k| self.ids[k].key_of(i));
        let ids = &self.ids;
        let cell = self
            .cells
            .entry(keys)
            .or_insert_with(|| {
                let t = |k: usize| ids[k].raw.value(keys[k]);
                let id = [t(0), t(1), t(2), t(3), t(4), t(5), t(6), t(7)];
                interner.cell_of(id, Some(t(8)), None)
            })
            .clone();
        let mut usage = [None; 5];
        for (slot, (calls, prompt, cached, completion, cost, cut)) in
            usage.iter_mut().zip(&self.roles)
        {
            // A role's counts are null exactly where it has no usage entry (`calls` null).
            *slot = opt(calls, i, || RoleTotals {
                calls: calls.value(i),
                prompt_tokens: prompt.value(i),
                cached_prompt_tokens: cached.value(i),
                completion_tokens: completion.value(i),
                cost: opt(cost, i, || cost.value(i)),
                truncated: cut.value(i),
            });
        }
        let (gold, matched) = &self.trace;
        let (vc, vs, vd, vk, vu, vn) = &self.verifier;
        let (gr, gc, gp, gcp, gca) = &self.guide;
        let o = self.guide_costs.value_offsets();
        let costs = &self.guide_cost_values.values()[o[i] as usize..o[i + 1] as usize];
        SimSummary {
            cell,
            task_id: self.task.at(i).clone(),
            slice: self.slices[self.slice.key_of(i)],
            trial: self.trial.value(i),
            seed: self.seed.value(i),
            termination_reason: self.terms[self.term.key_of(i)],
            reward: opt(&self.reward, i, || self.reward.value(i)),
            missing_reward_info: self.missing.value(i),
            error: opt(&self.error, i, || Box::from(self.error.value(i))),
            agent_turns: self.turns.0.value(i),
            user_turns: self.turns.1.value(i),
            wall_seconds: self.wall.value(i),
            usage: [usage[0], usage[1], usage[2], usage[3]],
            other_usage: self.other.get(&i).cloned().unwrap_or_default(),
            discarded: usage[4].map(Box::new),
            has_fault_labels: self.faults.value(i),
            process: None,
            trace: opt(gold, i, || TraceSteps {
                gold: gold.value(i),
                matched: matched.value(i),
            }),
            attack: opt(&self.attack, i, || self.attack.value(i)),
            verifier: boxed_unless_empty(VerifierTotals {
                called: vc.value(i),
                saved: vs.value(i),
                decisions: vd.value(i),
                checked: vk.value(i),
                unchecked: vu.value(i),
                unseen: vn.value(i),
                inputs: self.inputs.row(i).unwrap_or_default().into(),
            }),
            guide: boxed_unless_empty(GuideTotals {
                runs: gr.value(i),
                calls: gc.value(i),
                prompt_tokens: gp.value(i),
                completion_tokens: gcp.value(i),
                cached_prompt_tokens: gca.value(i),
                costs: costs.into(),
                unpriced: self.unpriced.value(i),
                fail_reasons: self.guide_fail.row(i).into(),
            }),
            calls: Vec::new(),
            measured: self.measured.iter().map(|a| a.value(i)).collect(),
        }
    }
}

fn other_roles(text: &str) -> Result<Vec<(String, RoleTotals)>, ShapeFinding> {
    let map: serde_json::Map<String, Value> =
        serde_json::from_str(text).map_err(ShapeFinding::OtherUsage)?;
    Ok(map
        .into_iter()
        .map(|(role, v)| {
            let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
            let totals = RoleTotals {
                calls: n("calls"),
                prompt_tokens: n("prompt_tokens"),
                cached_prompt_tokens: n("cached_prompt_tokens"),
                completion_tokens: n("completion_tokens"),
                cost: v.get("cost").and_then(Value::as_f64),
                truncated: n("truncated"),
            };
            (role, totals)
        })
        .collect())
}

/// One checked `calls` batch (see the module docs).
pub(crate) struct CallColumns {
    sim: UInt64Array,
    id: StringArray,
    tool: Dict,
    requestor: Dict,
    requestors: Vec<Requestor>,
    verdict: Dict,
    verdicts: Vec<Verdict>,
    executed: BooleanArray,
    faults: StrLists,
    missing: StrLists,
    fail: Dict,
    fail_reasons: Vec<FailReason>,
}

impl CallColumns {
    pub(crate) fn new(batch: &RecordBatch, interner: &mut Interner) -> Result<Self, ShapeFinding> {
        let c = Cols(batch);
        let requestor = c.dict("requestor", false, interner)?;
        let requestors = requestor.each(Requestor::Assistant, |s| {
            requestor_of(s).ok_or_else(|| ShapeFinding::unknown("requestor", s))
        })?;
        let verdict = c.dict("verdict", true, interner)?;
        let verdicts = verdict.each(Verdict::Pass, |s| match s {
            "pass" => Ok(Verdict::Pass),
            "block" => Ok(Verdict::Block),
            other => Err(ShapeFinding::unknown("verdict", other)),
        })?;
        let fail = c.dict("fail_reason", true, interner)?;
        let fail_reasons = fail.each(FailReason::ModelError, fail_reason_of)?;
        Ok(CallColumns {
            sim: c.required("sim", c.u64("sim")?)?,
            id: c.required("call_id", c.str("call_id")?)?,
            tool: c.dict("tool", false, interner)?,
            requestor,
            requestors,
            verdict,
            verdicts,
            executed: c.required("executed", c.bool("executed")?)?,
            faults: StrLists::new(c.list("faults")?, "faults", interner)?,
            missing: StrLists::new(
                c.list("missing_prerequisites")?,
                "missing_prerequisites",
                interner,
            )?,
            fail,
            fail_reasons,
        })
    }

    /// Every call of the batch, with its simulation's row, in order.
    pub(crate) fn rows(&self) -> Vec<(u64, CallSummary)> {
        (0..self.sim.len())
            .map(|i| {
                let call = CallSummary {
                    call_id: self.id.value(i).into(),
                    tool: self.tool.at(i).clone(),
                    requestor: self.requestors[self.requestor.key_of(i)],
                    verdict: self.verdict.key(i).map(|k| self.verdicts[k]),
                    executed: self.executed.value(i),
                    faults: self.faults.row(i).unwrap_or_default().into(),
                    missing_prerequisites: self.missing.row(i).map(Into::into),
                    fail_reason: self.fail.key(i).map(|k| self.fail_reasons[k]),
                };
                (self.sim.value(i), call)
            })
            .collect()
    }
}
