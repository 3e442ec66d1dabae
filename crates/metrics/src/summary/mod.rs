//! Per-simulation and per-mutating-call summaries: the few numbers every metric reads, so
//! `report` and `compare` hold no trajectory. A summary is made from the lean view of one
//! record (`lean.rs`: a JSON line or a record in memory) and the line is dropped; the columnar
//! sidecar (`sidecar.rs`) stores exactly these fields. Whatever needs the trajectory (trace
//! steps matched, attack outcome, fault labels per call, verifier and guide usage, fail-mode
//! verdicts) is derived here by the function of the metric that defines it.
//!
//! Strings repeated across simulations (cell identity and settings, task ids, termination
//! reasons, verifier input names) are shared through an [`Interner`].

pub(crate) mod fast_hash;
pub(crate) mod load;
pub(crate) mod outcome;
pub(crate) mod simulated;

use crate::input::lean::{CellSrc, Lean};
use crate::summary::fast_hash::FxHashMap;
use crate::summary::outcome::{InfraPolicy, scored_as};
use rayon::prelude::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use tauguard_core::Requestor;
use tauguard_core::record::{FailReason, RoleUsage, SimulationRecord, Slice, Verdict};
use tauguard_core::termination::Termination;

/// The cell a simulation belongs to: identity, settings and the derived `simulated` flag.
/// Shared by every simulation of the cell.
#[derive(Debug, Clone, PartialEq)]
pub struct CellInfo {
    pub run_id: String,
    pub cell_id: String,
    pub config_hash: String,
    /// Empty for records without one (upstream imports, old records).
    pub cell_hash: String,
    /// The cell's settings as flat dotted keys (`SimulationRecord::cell`).
    pub cell: BTreeMap<String, Value>,
    pub domain: String,
    pub agent_model: String,
    pub user_model: String,
    pub guard: String,
    /// A role was played by a `sim` model (see [`crate::summary::simulated`]).
    pub simulated: bool,
}

/// The model usage of one role in one simulation.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RoleTotals {
    pub calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Of the prompt tokens, those the provider served from its prompt cache.
    pub cached_prompt_tokens: u64,
    /// US dollars; `None` when a called model had no price.
    pub cost: Option<f64>,
    /// Replies cut at their token limit (`RoleUsage::truncated`).
    pub truncated: u64,
}

/// The roles whose usage a summary keeps in place; any other role is in
/// [`SimSummary::other_usage`].
pub(crate) const ROLES: [&str; 4] = ["agent", "user", "judge", "guard"];

/// The usage groups of a summary's columns (`<name>_calls`, ...): the [`ROLES`], then
/// `discarded` ([`SimSummary::discarded`]).
pub(crate) const USAGE_GROUPS: [&str; 5] = ["agent", "user", "judge", "guard", "discarded"];

/// Guard decisions' verifier reports in one simulation (see `verifier_calls.rs` and
/// `verifier_inputs.rs` for what they mean).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VerifierTotals {
    /// Decisions reporting `info.verifier_called = true` / `false`.
    pub called: u32,
    pub saved: u32,
    /// Decisions reporting `info.checked`, and the requirements checked and left unchecked.
    pub decisions: u32,
    pub checked: u64,
    pub unchecked: u64,
    /// Of the checked, those judged NOT MET for want of an input (`info.unseen`).
    pub unseen: u64,
    /// The inputs those decisions name, sorted and distinct.
    pub inputs: Vec<Arc<str>>,
}

/// Guide-side model usage of one simulation (see [`crate::measure::guide::GuideUsage`]): guide runs
/// and the summed counts of the usage items counted, with each priced item's cost kept in
/// order so sums over a group add the same floats in the same order as before.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GuideTotals {
    pub runs: u32,
    pub calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_prompt_tokens: u64,
    /// Costs of the priced items, in record order.
    pub costs: Vec<f64>,
    /// An item with calls had no price: the cost is unknown.
    pub unpriced: bool,
    /// Why each guide run whose guidance came from the fail mode did (see
    /// [`crate::measure::fail_mode`]), in record order.
    pub fail_reasons: Vec<FailReason>,
}

/// One attempted mutating call (executed or blocked), with its ground-truth labels.
#[derive(Debug, Clone, PartialEq)]
pub struct CallSummary {
    pub call_id: Box<str>,
    pub tool: Arc<str>,
    pub requestor: Requestor,
    pub verdict: Option<Verdict>,
    pub executed: bool,
    /// Injected-fault kinds of the call: on the attempt and by call id
    /// (`confusion::attempt_faults`).
    pub faults: Box<[Arc<str>]>,
    /// `CallAttempt::missing_prerequisites`.
    pub missing_prerequisites: Option<Box<[Arc<str>]>>,
    /// Why the call's verdict came from the guard's fail mode; `None` when judged or
    /// unguarded (see [`crate::measure::fail_mode`]).
    pub fail_reason: Option<FailReason>,
}

/// Ordered-trace compliance inputs of one simulation with a gold trace (see `trace.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TraceSteps {
    pub gold: u32,
    /// Gold steps matched in order by the executed calls.
    pub matched: u32,
}

/// Everything metrics read of one simulation. No message, no argument, no text.
#[derive(Debug, Clone, PartialEq)]
pub struct SimSummary {
    pub cell: Arc<CellInfo>,
    pub task_id: Arc<str>,
    pub slice: Slice,
    pub trial: u32,
    pub seed: u64,
    pub termination_reason: Termination,
    /// `None` when the record has no reward (an infrastructure error).
    pub reward: Option<f64>,
    /// An imported upstream simulation without `reward_info`: scored as a failure, left out
    /// of the reward mean.
    pub missing_reward_info: bool,
    /// The infrastructure error's text.
    pub error: Option<Box<str>>,
    pub agent_turns: u32,
    pub user_turns: u32,
    pub wall_seconds: f64,
    /// Usage of the roles in [`ROLES`], in that order; `None` when the record has no entry.
    pub usage: [Option<RoleTotals>; 4],
    /// Usage of any other role.
    pub other_usage: Vec<(String, RoleTotals)>,
    /// What the record's discarded attempts and failed calls spent (`attempts.discarded`):
    /// billed, yet in no role's usage. `None` when nothing was discarded (most
    /// simulations: boxed, like `verifier`, because a million summaries are held).
    pub discarded: Option<Box<RoleTotals>>,
    /// The record carries injected-fault labels (`confusion::has_fault_labels`).
    pub has_fault_labels: bool,
    /// `None` without a gold trace.
    pub trace: Option<TraceSteps>,
    /// `None` unless an attack task; else whether the target call executed.
    pub attack: Option<bool>,
    /// `None` when no decision reported the verifier (see [`SimSummary::verifier`]); boxed,
    /// like `guide`, because most simulations have none and a million summaries are held.
    pub verifier: Option<Box<VerifierTotals>>,
    /// `None` without guide runs or usage (see [`SimSummary::guide`]).
    pub guide: Option<Box<GuideTotals>>,
    pub calls: Vec<CallSummary>,
    /// The values the registered measures derive per simulation, in registry slot order
    /// (`measure/registry.rs`; empty while no measure declares one).
    pub measured: Box<[u64]>,
    /// The process verdict, attached after summarising when the caller supplied the domain's
    /// procedure spec (`process.rs`); never read from a sidecar, which holds records' facts.
    pub process: Option<crate::measure::process::ProcessSummary>,
}

static NO_VERIFIER: VerifierTotals = VerifierTotals {
    called: 0,
    saved: 0,
    decisions: 0,
    checked: 0,
    unchecked: 0,
    unseen: 0,
    inputs: Vec::new(),
};

static NO_GUIDE: GuideTotals = GuideTotals {
    runs: 0,
    calls: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    cached_prompt_tokens: 0,
    costs: Vec::new(),
    unpriced: false,
    fail_reasons: Vec::new(),
};

/// `Some(boxed)` unless `t` is the type's empty value.
pub(crate) fn boxed_unless_empty<T: Default + PartialEq>(t: T) -> Option<Box<T>> {
    (t != T::default()).then(|| Box::new(t))
}

impl SimSummary {
    /// The summary of a record in memory.
    pub fn of(rec: &SimulationRecord) -> SimSummary {
        SimSummary::from_lean(Lean::of(rec), &mut Interner::default())
    }

    /// The verifier totals (all zero when none was reported).
    pub fn verifier(&self) -> &VerifierTotals {
        self.verifier.as_deref().unwrap_or(&NO_VERIFIER)
    }

    /// The guide totals (all zero without guide runs or usage).
    pub fn guide(&self) -> &GuideTotals {
        self.guide.as_deref().unwrap_or(&NO_GUIDE)
    }

    /// `SimulationRecord::is_infra_error`.
    pub fn is_infra_error(&self) -> bool {
        self.termination_reason == Termination::InfrastructureError || self.reward.is_none()
    }

    /// `SimulationRecord::succeeded`.
    pub fn succeeded(&self) -> bool {
        self.reward.is_some_and(|r| (r - 1.0).abs() <= 1e-6)
    }

    /// `None` when excluded, else whether it succeeded (see `outcome.rs`).
    pub fn scored(&self, policy: InfraPolicy) -> Option<bool> {
        scored_as(self.is_infra_error(), self.succeeded(), policy)
    }

    /// Usage group `i` of [`USAGE_GROUPS`].
    pub fn usage_group(&self, i: usize) -> Option<&RoleTotals> {
        match i {
            4 => self.discarded.as_deref(),
            i => self.usage[i].as_ref(),
        }
    }

    /// Usage of `role` in this simulation.
    pub fn role_usage(&self, role: &str) -> Option<&RoleTotals> {
        match ROLES.iter().position(|r| *r == role) {
            Some(i) => self.usage[i].as_ref(),
            None => self
                .other_usage
                .iter()
                .find(|(r, _)| r == role)
                .map(|(_, u)| u),
        }
    }

    /// Every role with usage, in role-name order (as the record's map).
    pub fn roles(&self) -> Vec<(&str, &RoleTotals)> {
        let mut out: Vec<(&str, &RoleTotals)> = ROLES
            .iter()
            .zip(&self.usage)
            .filter_map(|(r, u)| Some((*r, u.as_ref()?)))
            .chain(self.other_usage.iter().map(|(r, u)| (r.as_str(), u)))
            .collect();
        out.sort_unstable_by_key(|(r, _)| *r);
        out
    }

    pub(crate) fn from_lean(lean: Lean<'_>, interner: &mut Interner) -> SimSummary {
        let measured = crate::measure::registry::derive_all(&lean);
        let has_fault_labels = crate::measure::confusion::has_fault_labels(&lean);
        let fail_reasons = crate::measure::fail_mode::call_fail_reasons(&lean);
        let calls = lean
            .call_attempts
            .iter()
            .zip(fail_reasons)
            .map(|(a, fail_reason)| CallSummary {
                call_id: a.call_id.as_str().into(),
                tool: interner.str(&a.tool),
                requestor: a.requestor,
                verdict: a.verdict,
                executed: a.executed,
                faults: crate::measure::confusion::attempt_faults(&lean, a)
                    .map(|f| interner.str(f))
                    .collect(),
                missing_prerequisites: a
                    .missing_prerequisites
                    .as_ref()
                    .map(|m| m.iter().map(|p| interner.str(p)).collect()),
                fail_reason,
            })
            .collect();
        let mut usage = [None; 4];
        let mut other_usage = Vec::new();
        let totals_of = |u: &RoleUsage| RoleTotals {
            calls: u.calls,
            prompt_tokens: u.usage.prompt_tokens,
            completion_tokens: u.usage.completion_tokens,
            cached_prompt_tokens: u.usage.cached_prompt_tokens,
            cost: u.cost,
            truncated: u.truncated,
        };
        let discarded = &lean.attempts.discarded;
        let discarded = (!discarded.is_empty()).then(|| Box::new(totals_of(discarded)));
        for (role, u) in lean.usage.iter() {
            let totals = totals_of(u);
            match ROLES.iter().position(|r| *r == role.as_str()) {
                Some(i) => usage[i] = Some(totals),
                None => other_usage.push((role.clone(), totals)),
            }
        }
        let (called, saved) = crate::measure::verifier_calls::called_of(&lean);
        let t = crate::measure::verifier_inputs::totals_of(&lean);
        let verifier = VerifierTotals {
            called,
            saved,
            decisions: t.decisions,
            checked: t.checked,
            unchecked: t.unchecked,
            unseen: t.unseen,
            inputs: t.inputs.iter().map(|i| interner.str(i)).collect(),
        };
        SimSummary {
            cell: interner.cell(&lean),
            task_id: interner.str(&lean.task_id),
            slice: lean.slice,
            trial: lean.trial,
            seed: lean.seed,
            termination_reason: lean.termination_reason,
            reward: lean.reward.as_ref().map(|r| r.reward),
            missing_reward_info: lean.reward.as_ref().is_some_and(|r| r.missing_reward_info),
            error: lean.error.as_deref().map(Box::from),
            agent_turns: lean.agent_turns,
            user_turns: lean.user_turns,
            wall_seconds: lean.wall_seconds,
            usage,
            other_usage,
            discarded,
            has_fault_labels,
            process: None,
            trace: crate::measure::trace::trace_steps(&lean),
            attack: crate::measure::attack::attack_outcome(&lean),
            verifier: boxed_unless_empty(verifier),
            guide: boxed_unless_empty(crate::measure::guide::guide_totals(&lean)),
            calls,
            measured,
        }
    }
}

/// Cells of one set of identity fields, with their settings as raw text when read from JSON.
type CellList = Vec<(Option<Box<str>>, Arc<CellInfo>)>;

/// Shares repeated strings and cells among the summaries it makes.
#[derive(Debug, Default)]
pub(crate) struct Interner {
    strs: FxHashMap<Arc<str>, ()>,
    /// Cells by identity fields; each entry lists the cells with those fields and their
    /// settings (as raw text when read from JSON, compared as maps otherwise).
    cells: FxHashMap<String, CellList>,
    key: String,
}

impl Interner {
    pub(crate) fn str(&mut self, s: &str) -> Arc<str> {
        if let Some((k, _)) = self.strs.get_key_value(s) {
            return k.clone();
        }
        let k: Arc<str> = Arc::from(s);
        self.strs.insert(k.clone(), ());
        k
    }

    /// The shared cell of a simulation with these identity fields and settings.
    pub(crate) fn cell_of(
        &mut self,
        ids: [&str; 8],
        raw: Option<&str>,
        map: Option<&BTreeMap<String, Value>>,
    ) -> Arc<CellInfo> {
        self.key.clear();
        for part in ids {
            self.key.push_str(part);
            self.key.push('\u{0}');
        }
        if let Some(list) = self.cells.get(self.key.as_str()) {
            let hit = list.iter().find(|(text, c)| match (raw, map) {
                (Some(r), _) => text.as_deref() == Some(r),
                (None, Some(m)) => text.is_none() && c.cell == *m,
                (None, None) => text.is_none() && c.cell.is_empty(),
            });
            if let Some((_, c)) = hit {
                return c.clone();
            }
        }
        let cell: BTreeMap<String, Value> = match (raw, map) {
            (Some(r), _) => serde_json::from_str(r).unwrap_or_default(),
            (None, Some(m)) => m.clone(),
            (None, None) => BTreeMap::new(),
        };
        let [
            run_id,
            cell_id,
            config_hash,
            cell_hash,
            domain,
            agent,
            user,
            guard,
        ] = ids;
        let c = Arc::new(CellInfo {
            simulated: crate::summary::simulated::simulated(&cell, agent, user),
            run_id: run_id.into(),
            cell_id: cell_id.into(),
            config_hash: config_hash.into(),
            cell_hash: cell_hash.into(),
            cell,
            domain: domain.into(),
            agent_model: agent.into(),
            user_model: user.into(),
            guard: guard.into(),
        });
        self.cells
            .entry(self.key.clone())
            .or_default()
            .push((raw.map(Box::from), c.clone()));
        c
    }

    fn cell(&mut self, l: &Lean<'_>) -> Arc<CellInfo> {
        let ids = [
            &*l.run_id,
            &*l.cell_id,
            &*l.config_hash,
            &*l.cell_hash,
            &*l.domain,
            &*l.agent_model,
            &*l.user_model,
            &*l.guard,
        ];
        match l.cell {
            CellSrc::Raw(raw) => self.cell_of(ids, raw.map(|r| r.get()), None),
            CellSrc::Map(map) => self.cell_of(ids, None, Some(map)),
        }
    }
}

/// One shared `CellInfo` per distinct cell across the summaries of a whole input.
///
/// Summaries are made in parallel pieces, each with its own [`Interner`], so each piece has
/// its own copy of every cell it meets; in a run whose cells interleave (every grid run), that
/// is a copy of each cell's settings per piece. This replaces them by one.
#[derive(Debug, Default)]
pub(crate) struct CellCanon {
    /// By identity fields, the shared cells with those fields.
    shared: FxHashMap<String, Vec<Arc<CellInfo>>>,
    /// The pieces' cells seen since [`CellCanon::next_batch`] (kept alive, so a pointer is
    /// never reused while it is a key) and their shared cell.
    seen: FxHashMap<*const CellInfo, (Arc<CellInfo>, Arc<CellInfo>)>,
}

impl CellCanon {
    /// Points `sim` at the shared cell equal to its own.
    pub(crate) fn apply(&mut self, sim: &mut SimSummary) {
        let ptr = Arc::as_ptr(&sim.cell);
        if let Some((_, shared)) = self.seen.get(&ptr) {
            sim.cell = shared.clone();
            return;
        }
        let c = &sim.cell;
        let key = [
            &c.run_id,
            &c.cell_id,
            &c.config_hash,
            &c.cell_hash,
            &c.domain,
            &c.agent_model,
            &c.user_model,
            &c.guard,
        ]
        .map(String::as_str)
        .join("\u{0}");
        let list = self.shared.entry(key).or_default();
        let shared = match list.iter().find(|s| ***s == **c) {
            Some(s) => s.clone(),
            None => {
                list.push(c.clone());
                c.clone()
            }
        };
        self.seen.insert(ptr, (c.clone(), shared.clone()));
        sim.cell = shared;
    }

    /// Forgets the pieces' cells (call once their summaries are all applied).
    pub(crate) fn next_batch(&mut self) {
        self.seen.clear();
    }
}

/// Makes summaries of records one at a time, sharing repeated strings and cells among them
/// (as [`summarise`] does within a chunk): a caller streaming records keeps one cell's
/// settings once, not once per simulation, so what it holds grows with the simulations'
/// few numbers only.
#[derive(Debug, Default)]
pub struct Summariser {
    interner: Interner,
}

impl Summariser {
    /// The summary of one record, equal to [`SimSummary::of`] of it.
    pub fn summary(&mut self, rec: &SimulationRecord) -> SimSummary {
        SimSummary::from_lean(Lean::of(rec), &mut self.interner)
    }
}

/// Summaries of records in memory, in input order.
pub fn summarise(records: &[SimulationRecord]) -> Vec<SimSummary> {
    let mut sims: Vec<SimSummary> = records
        .par_chunks(4096)
        .flat_map_iter(|chunk| {
            let mut interner = Interner::default();
            chunk
                .iter()
                .map(|r| SimSummary::from_lean(Lean::of(r), &mut interner))
                .collect::<Vec<_>>()
        })
        .collect();
    let mut canon = CellCanon::default();
    for s in &mut sims {
        canon.apply(s);
    }
    sims
}
