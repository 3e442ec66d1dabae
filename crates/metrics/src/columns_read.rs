//! Reading the sidecar's tables (`columns.rs` defines them) back into summaries: every
//! column a summary holds is read by name and type; a missing or mistyped column is an error
//! naming it, so a sidecar of another layout is never misread.

use crate::columns::requestor_of;
use crate::summary::{
    CallSummary, GuideTotals, Interner, ROLES, RoleTotals, SimSummary, TraceSteps, VerifierTotals,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, UInt32Type, UInt64Type};
use arrow_array::{
    Array, BooleanArray, Float64Array, ListArray, RecordBatch, StringArray, UInt32Array,
    UInt64Array,
};
use serde_json::Value;
use tauguard_core::record::{Slice, Verdict};

/// The typed columns of one batch, looked up by name.
struct Cols<'a>(&'a RecordBatch);

impl<'a> Cols<'a> {
    fn get(&self, name: &str) -> Result<&'a dyn Array, String> {
        self.0
            .column_by_name(name)
            .map(|c| c.as_ref())
            .ok_or_else(|| format!("no column `{name}`"))
    }

    fn bad(name: &str) -> String {
        format!("column `{name}` has an unexpected type")
    }

    fn str(&self, name: &str) -> Result<&'a StringArray, String> {
        self.get(name)?
            .as_string_opt::<i32>()
            .ok_or_else(|| Self::bad(name))
    }

    fn u32(&self, name: &str) -> Result<&'a UInt32Array, String> {
        self.get(name)?
            .as_primitive_opt::<UInt32Type>()
            .ok_or_else(|| Self::bad(name))
    }

    fn u64(&self, name: &str) -> Result<&'a UInt64Array, String> {
        self.get(name)?
            .as_primitive_opt::<UInt64Type>()
            .ok_or_else(|| Self::bad(name))
    }

    fn f64(&self, name: &str) -> Result<&'a Float64Array, String> {
        self.get(name)?
            .as_primitive_opt::<Float64Type>()
            .ok_or_else(|| Self::bad(name))
    }

    fn bool(&self, name: &str) -> Result<&'a BooleanArray, String> {
        self.get(name)?
            .as_boolean_opt()
            .ok_or_else(|| Self::bad(name))
    }

    fn list(&self, name: &str) -> Result<&'a ListArray, String> {
        self.get(name)?
            .as_list_opt::<i32>()
            .ok_or_else(|| Self::bad(name))
    }
}

fn opt<A: Array, T>(a: &A, i: usize, v: impl FnOnce() -> T) -> Option<T> {
    (!a.is_null(i)).then(v)
}

fn str_list(l: &ListArray, i: usize) -> Result<Option<Vec<String>>, String> {
    if l.is_null(i) {
        return Ok(None);
    }
    let items = l.value(i);
    let s = items
        .as_string_opt::<i32>()
        .ok_or("a list column holds no strings")?;
    Ok(Some((0..s.len()).map(|j| s.value(j).to_string()).collect()))
}

fn slice_of(s: &str) -> Result<Slice, String> {
    match s {
        "pv" => Ok(Slice::Pv),
        "mut" => Ok(Slice::Mut),
        "unknown" => Ok(Slice::Unknown),
        other => Err(format!("unknown slice `{other}`")),
    }
}

/// The simulations of one `simulations` batch (without their calls).
pub(crate) fn sims_from_batch(
    batch: &RecordBatch,
    interner: &mut Interner,
) -> Result<Vec<SimSummary>, String> {
    let c = Cols(batch);
    let ids = [
        "run_id",
        "cell_id",
        "config_hash",
        "cell_hash",
        "domain",
        "agent_model",
        "user_model",
        "guard",
    ]
    .map(|n| c.str(n));
    let ids: Vec<&StringArray> = ids.into_iter().collect::<Result<_, _>>()?;
    let (cell, task, slice) = (c.str("cell")?, c.str("task_id")?, c.str("slice")?);
    let (trial, seed, term) = (
        c.u32("trial")?,
        c.u64("seed")?,
        c.str("termination_reason")?,
    );
    let (reward, missing, error) = (
        c.f64("reward")?,
        c.bool("missing_reward_info")?,
        c.str("error")?,
    );
    let (at, ut, wall) = (
        c.u32("agent_turns")?,
        c.u32("user_turns")?,
        c.f64("wall_seconds")?,
    );
    let mut roles = Vec::new();
    for r in ROLES {
        roles.push((
            c.u64(&format!("{r}_calls"))?,
            c.u64(&format!("{r}_prompt_tokens"))?,
            c.u64(&format!("{r}_completion_tokens"))?,
            c.f64(&format!("{r}_cost"))?,
        ));
    }
    let other = c.str("other_usage")?;
    let faults = c.bool("has_fault_labels")?;
    let (gold, matched, attack) = (
        c.u32("trace_gold_steps")?,
        c.u32("trace_matched_steps")?,
        c.bool("attack_success")?,
    );
    let (vc, vs, vd) = (
        c.u32("verifier_called")?,
        c.u32("verifier_saved")?,
        c.u32("verifier_decisions")?,
    );
    let (vk, vu, vi) = (
        c.u64("verifier_checked")?,
        c.u64("verifier_unchecked")?,
        c.list("verifier_inputs")?,
    );
    let (gr, gc, gp) = (
        c.u32("guide_runs")?,
        c.u64("guide_calls")?,
        c.u64("guide_prompt_tokens")?,
    );
    let (gcp, gca) = (
        c.u64("guide_completion_tokens")?,
        c.u64("guide_cached_prompt_tokens")?,
    );
    let (gcost, gun) = (c.list("guide_costs")?, c.bool("guide_unpriced")?);
    let mut out = Vec::with_capacity(batch.num_rows());
    for i in 0..batch.num_rows() {
        let id = |k: usize| ids[k].value(i);
        let cell = interner.cell_of(
            [id(0), id(1), id(2), id(3), id(4), id(5), id(6), id(7)],
            Some(cell.value(i)),
            None,
        );
        let mut usage = [None; 4];
        for (slot, (calls, prompt, completion, cost)) in usage.iter_mut().zip(&roles) {
            *slot = opt(*calls, i, || RoleTotals {
                calls: calls.value(i),
                prompt_tokens: prompt.value(i),
                completion_tokens: completion.value(i),
                cost: opt(*cost, i, || cost.value(i)),
            });
        }
        let other_usage = match opt(other, i, || other.value(i)) {
            None => Vec::new(),
            Some(text) => other_roles(text)?,
        };
        let costs = gcost.value(i);
        let costs = costs
            .as_primitive_opt::<Float64Type>()
            .ok_or("column `guide_costs` holds no numbers")?;
        out.push(SimSummary {
            cell,
            task_id: interner.str(task.value(i)),
            slice: slice_of(slice.value(i))?,
            trial: trial.value(i),
            seed: seed.value(i),
            termination_reason: interner.str(term.value(i)),
            reward: opt(reward, i, || reward.value(i)),
            missing_reward_info: missing.value(i),
            error: opt(error, i, || Box::from(error.value(i))),
            agent_turns: at.value(i),
            user_turns: ut.value(i),
            wall_seconds: wall.value(i),
            usage,
            other_usage,
            has_fault_labels: faults.value(i),
            trace: opt(gold, i, || TraceSteps {
                gold: gold.value(i),
                matched: matched.value(i),
            }),
            attack: opt(attack, i, || attack.value(i)),
            verifier: VerifierTotals {
                called: vc.value(i),
                saved: vs.value(i),
                decisions: vd.value(i),
                checked: vk.value(i),
                unchecked: vu.value(i),
                inputs: str_list(vi, i)?
                    .unwrap_or_default()
                    .iter()
                    .map(|s| interner.str(s))
                    .collect(),
            },
            guide: GuideTotals {
                runs: gr.value(i),
                calls: gc.value(i),
                prompt_tokens: gp.value(i),
                completion_tokens: gcp.value(i),
                cached_prompt_tokens: gca.value(i),
                costs: costs.values().iter().copied().collect(),
                unpriced: gun.value(i),
            },
            calls: Vec::new(),
        });
    }
    Ok(out)
}

fn other_roles(text: &str) -> Result<Vec<(String, RoleTotals)>, String> {
    let map: serde_json::Map<String, Value> =
        serde_json::from_str(text).map_err(|e| format!("column `other_usage`: {e}"))?;
    Ok(map
        .into_iter()
        .map(|(role, v)| {
            let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
            let totals = RoleTotals {
                calls: n("calls"),
                prompt_tokens: n("prompt_tokens"),
                completion_tokens: n("completion_tokens"),
                cost: v.get("cost").and_then(Value::as_f64),
            };
            (role, totals)
        })
        .collect())
}

/// The calls of one `calls` batch, each with its simulation's row.
pub(crate) fn calls_from_batch(
    batch: &RecordBatch,
    interner: &mut Interner,
) -> Result<Vec<(u64, CallSummary)>, String> {
    let c = Cols(batch);
    let (sim, id, tool) = (c.u64("sim")?, c.str("call_id")?, c.str("tool")?);
    let (req, verdict, executed) = (c.str("requestor")?, c.str("verdict")?, c.bool("executed")?);
    let (faults, missing) = (c.list("faults")?, c.list("missing_prerequisites")?);
    let mut out = Vec::with_capacity(batch.num_rows());
    for i in 0..batch.num_rows() {
        let verdict = match opt(verdict, i, || verdict.value(i)) {
            None => None,
            Some("pass") => Some(Verdict::Pass),
            Some("block") => Some(Verdict::Block),
            Some(other) => return Err(format!("unknown verdict `{other}`")),
        };
        let requestor = requestor_of(req.value(i))
            .ok_or_else(|| format!("unknown requestor `{}`", req.value(i)))?;
        let call = CallSummary {
            call_id: id.value(i).to_string(),
            tool: interner.str(tool.value(i)),
            requestor,
            verdict,
            executed: executed.value(i),
            faults: str_list(faults, i)?
                .unwrap_or_default()
                .iter()
                .map(|f| interner.str(f))
                .collect(),
            missing_prerequisites: str_list(missing, i)?
                .map(|m| m.iter().map(|p| interner.str(p)).collect()),
        };
        out.push((sim.value(i), call));
    }
    Ok(out)
}
